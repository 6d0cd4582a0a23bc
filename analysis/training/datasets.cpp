// Dataset readers (datasets.hpp). Files are read whole and parsed from memory: Fashion-MNIST's
// training images are 47 MB uncompressed, and per-byte gzread or per-line iostream calls would
// cost seconds where a buffered pass costs a fraction of one.
#include "analysis/training/datasets.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <system_error>

#include "fpemu/random.hpp"
#include "fpemu/text.hpp"

namespace fpemu::training {

namespace {

constexpr std::uint32_t kIdxImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr std::uint32_t kIdxLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension

// Larger dense matrices are refused: one stray index like 2000000000:1 in a LIBSVM file must
// give an error, not an attempt to allocate gigabytes. 2^28 binary32 values are 1 GiB (2 GiB
// once CA-SGD widens them to binary64, the bound of its synthetic data).
constexpr std::uint64_t kMaxDenseElements = std::uint64_t{1} << 28;

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

std::string shortest(float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Saturating: IDX dimensions are 32-bit each, and their product can exceed 64 bits.
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// The whole (decompressed) content of a plain or gzip file. Growing the buffer geometrically
// bounds the allocation by the real content, never by a size claimed in a header.
expected<std::vector<unsigned char>> read_all_gz(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return error{path + ": cannot open: no such file"};
  if (std::filesystem::is_directory(path, ec)) return error{path + ": cannot read: is a directory"};
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return error{path + ": cannot open: " + (errno != 0 ? std::strerror(errno) : "out of memory")};
  }
  gzbuffer(f, 1u << 18);
  std::vector<unsigned char> buf;
  std::size_t size = 0, chunk = std::size_t{1} << 20;
  for (;;) {
    buf.resize(size + chunk);
    const int n = gzread(f, buf.data() + size, static_cast<unsigned>(chunk));
    if (n > 0) size += static_cast<std::size_t>(n);
    if (n < static_cast<int>(chunk)) break;  // end of data, or an error checked below
    chunk = std::min<std::size_t>(chunk * 2, std::size_t{1} << 30);
  }
  buf.resize(size);
  // A truncated gzip stream is no gzread failure (it returns what it has), only a gzerror state.
  int err = Z_OK;
  const char* msg = gzerror(f, &err);
  std::string message = err != Z_OK ? std::string(msg != nullptr ? msg : "read error") : std::string();
  if (message.starts_with(path + ": ")) message.erase(0, path.size() + 2);  // zlib prefixes the path
  if (err == Z_ERRNO) message = std::strerror(errno);
  const int close = gzclose(f);
  if (err == Z_OK && close != Z_OK) message = close == Z_BUF_ERROR ? "unexpected end of file" : "read error";
  if (!message.empty()) return error{path + ": cannot read: " + message};
  return buf;
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

// The dimensions of an IDX file of unsigned bytes after checking its header and size; the data
// start at byte 4 + 4 * dims.
expected<std::vector<std::uint32_t>> idx_dims(const std::vector<unsigned char>& bytes, const std::string& path,
                                              std::uint32_t magic, std::string_view what) {
  const std::size_t ndims = magic & 0xffu;
  const std::size_t header = 4 + 4 * ndims;
  const std::string kind =
      std::string("IDX ") + std::string(what) + ": unsigned bytes, " + std::to_string(ndims) + " dimension" + (ndims == 1 ? "" : "s");
  if (bytes.size() < 4) {
    return error{path + ": truncated: an IDX header needs " + std::to_string(header) + " bytes, found " + std::to_string(bytes.size())};
  }
  const std::uint32_t found = be32(bytes.data());
  if (found != magic) {
    std::string hint;
    if (found == kIdxImagesMagic) hint = "; this looks like an images file";
    if (found == kIdxLabelsMagic) hint = "; this looks like a labels file";
    return error{path + ": bad magic " + hex32(found) + ", expected " + hex32(magic) + " (" + kind + ")" + hint};
  }
  if (bytes.size() < header) {
    return error{path + ": truncated: the IDX header needs " + std::to_string(header) + " bytes, found " + std::to_string(bytes.size())};
  }
  std::vector<std::uint32_t> dims(ndims);
  std::uint64_t need = 1;
  std::string shape;
  for (std::size_t i = 0; i < ndims; ++i) {
    dims[i] = be32(bytes.data() + 4 + 4 * i);
    need = mul_sat(need, dims[i]);
    shape += (i ? " x " : "") + std::to_string(dims[i]);
  }
  const std::uint64_t have = bytes.size() - header;
  if (have < need) {
    const std::string need_text = need == std::numeric_limits<std::uint64_t>::max() ? "more than 2^64" : std::to_string(need);
    return error{path + ": truncated: " + shape + " " + std::string(what) + " need " + need_text + " bytes of data, found " + std::to_string(have)};
  }
  if (have > need) {
    return error{path + ": " + std::to_string(have - need) + " unexpected bytes after the data (" + shape + " " + std::string(what) +
                 " need " + std::to_string(need) + " bytes, found " + std::to_string(have) + ")"};
  }
  return dims;
}

enum class num { ok, not_number, not_finite };

// A whole token as a binary32, correctly rounded. from_chars takes no leading '+', which LIBSVM
// labels use ("+1"); it reports underflow to zero as a range error, which here is the value 0.
num parse_float(std::string_view s, float& out) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) return num::not_number;
  }
  if (s.empty()) return num::not_number;
  const char* end = s.data() + s.size();
  float v = 0;
  const auto r = std::from_chars(s.data(), end, v);
  if (r.ptr != end) return num::not_number;
  if (r.ec == std::errc::result_out_of_range) {
    long double wide = 0;
    const auto w = std::from_chars(s.data(), end, wide);
    if (w.ec != std::errc() || w.ptr != end) return num::not_finite;
    if (std::fabs(wide) > static_cast<long double>(std::numeric_limits<float>::max())) return num::not_finite;
    out = std::signbit(wide) ? -0.0f : 0.0f;
    return num::ok;
  }
  if (r.ec != std::errc()) return num::not_number;
  if (!std::isfinite(v)) return num::not_finite;
  out = v;
  return num::ok;
}

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

expected<std::string> read_text(const std::string& path, std::string_view hint) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return error{path + ": cannot open: no such file" + std::string(hint)};
  if (std::filesystem::is_directory(path, ec)) return error{path + ": cannot read: is a directory"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{path + ": cannot open: " + std::strerror(errno)};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return error{path + ": read error"};
  return text;
}

// Calls f(line_number, line) for each line, without its '\n'.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  int line = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    ++line;
    if (!f(line, text.substr(0, nl))) return;
    if (nl == std::string_view::npos) return;
    text.remove_prefix(nl + 1);
  }
}

std::string at(const std::string& path, int line) { return path + ":" + std::to_string(line) + ": "; }

// A token for a message: about 40 characters at most (printable()).
std::string quoted(std::string_view s) { return "'" + printable(s, 40) + "'"; }

}  // namespace

expected<dataset> read_idx(const std::string& images_path, const std::string& labels_path) {
  expected<std::vector<unsigned char>> images = read_all_gz(images_path);
  if (!images) return error{images.message()};
  expected<std::vector<std::uint32_t>> idims = idx_dims(*images, images_path, kIdxImagesMagic, "images");
  if (!idims) return error{idims.message()};
  expected<std::vector<unsigned char>> labels = read_all_gz(labels_path);
  if (!labels) return error{labels.message()};
  expected<std::vector<std::uint32_t>> ldims = idx_dims(*labels, labels_path, kIdxLabelsMagic, "labels");
  if (!ldims) return error{ldims.message()};

  const std::uint32_t n = (*idims)[0];
  const std::uint64_t pixels = std::uint64_t{(*idims)[1]} * (*idims)[2];
  if ((*ldims)[0] != n) {
    return error{images_path + " has " + std::to_string(n) + " images but " + labels_path + " has " + std::to_string((*ldims)[0]) +
                 " labels"};
  }
  if (n > static_cast<std::uint32_t>(std::numeric_limits<int>::max()) ||
      pixels > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    return error{images_path + ": " + std::to_string(n) + " images of " + std::to_string(pixels) + " pixels are too many for a dataset"};
  }

  dataset d;
  d.rows = static_cast<int>(n);
  d.cols = static_cast<int>(pixels);
  d.source = images_path + ", " + labels_path;
  std::array<float, 256> scale{};
  for (int v = 0; v < 256; ++v) scale[static_cast<std::size_t>(v)] = static_cast<float>(v) / 255.0f;
  const std::size_t image_header = 16, label_header = 8;
  d.x.resize(static_cast<std::size_t>(n) * pixels);
  std::transform(images->begin() + image_header, images->end(), d.x.begin(), [&](unsigned char p) { return scale[p]; });
  d.y.resize(n);
  std::transform(labels->begin() + label_header, labels->end(), d.y.begin(), [](unsigned char c) { return static_cast<float>(c); });
  return d;
}

std::string default_fashion_mnist_dir() {
  const char* env = std::getenv("FPEMU_FASHION_MNIST_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("/usr/share/datasets/fashion-mnist");
}

expected<dataset> read_fashion_mnist(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  const std::filesystem::path base(dir);
  const std::string images = (base / (prefix + "-images-idx3-ubyte.gz")).string();
  const std::string labels = (base / (prefix + "-labels-idx1-ubyte.gz")).string();
  for (const std::string& p : {images, labels}) {
    if (!file_exists(p)) {
      return error{"Fashion-MNIST file " + p +
                   " not found; Debian's dataset-fashion-mnist package provides it (in /usr/share/datasets/fashion-mnist), "
                   "and FPEMU_FASHION_MNIST_DIR selects another directory"};
    }
  }
  return read_idx(images, labels);
}

std::string default_heart_scale_path() {
  const char* env = std::getenv("FPEMU_HEART_SCALE");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("/usr/share/doc/liblinear-tools/examples/heart_scale");
}

expected<dataset> read_libsvm(const std::string& path, int min_cols) {
  const bool heart = std::filesystem::path(path).filename() == "heart_scale";
  const expected<std::string> text = read_text(
      path, heart ? " (Debian's liblinear-tools package provides heart_scale in /usr/share/doc/liblinear-tools/examples; "
                    "FPEMU_HEART_SCALE selects another copy)"
                  : "");
  if (!text) return error{text.message()};

  struct entry {
    int row, col;  // col 0-based
    float value;
  };
  std::vector<entry> entries;
  std::vector<float> labels;
  std::vector<int> lines;
  int max_index = 0, max_line = 0;
  std::string problem;
  for_each_line(*text, [&](int line, std::string_view s) {
    if (const std::size_t hash = s.find('#'); hash != std::string_view::npos) s = s.substr(0, hash);
    const auto next_token = [&s]() {
      s = trim(s);
      std::size_t end = 0;
      while (end < s.size() && s[end] != ' ' && s[end] != '\t' && s[end] != '\r' && s[end] != '\v' && s[end] != '\f') ++end;
      const std::string_view tok = s.substr(0, end);
      s.remove_prefix(end);
      return tok;
    };
    std::string_view tok = next_token();
    if (tok.empty()) return true;
    float label = 0;
    switch (parse_float(tok, label)) {
      case num::ok: break;
      case num::not_number:
        problem = at(path, line) + "label " + quoted(tok) + " is not a number";
        return false;
      case num::not_finite:
        problem = at(path, line) + "label " + quoted(tok) + " is not a finite binary32 value";
        return false;
    }
    const int row = static_cast<int>(labels.size());
    labels.push_back(label);
    lines.push_back(line);
    int previous = 0;
    for (tok = next_token(); !tok.empty(); tok = next_token()) {
      const std::size_t colon = tok.find(':');
      if (colon == std::string_view::npos || colon == 0 || colon + 1 == tok.size()) {
        problem = at(path, line) + "malformed token " + quoted(tok) + ", expected index:value";
        return false;
      }
      const std::string_view itext = tok.substr(0, colon), vtext = tok.substr(colon + 1);
      long long index = 0;
      const auto r = std::from_chars(itext.data(), itext.data() + itext.size(), index);
      if (r.ptr != itext.data() + itext.size() || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range)) {
        problem = at(path, line) + "malformed token " + quoted(tok) + ", the index is not an integer";
        return false;
      }
      if (r.ec == std::errc::result_out_of_range || index > std::numeric_limits<int>::max()) {
        problem = at(path, line) + "index in " + quoted(tok) + " is too large";
        return false;
      }
      if (index < 1) {
        problem = at(path, line) + "index " + std::to_string(index) + " in " + quoted(tok) + " is not >= 1 (LIBSVM indices are 1-based)";
        return false;
      }
      if (index <= previous) {
        problem = at(path, line) + "index " + std::to_string(index) + " in " + quoted(tok) + " does not increase on the previous index " +
                  std::to_string(previous) + " (indices must be strictly increasing)";
        return false;
      }
      float value = 0;
      switch (parse_float(vtext, value)) {
        case num::ok: break;
        case num::not_number:
          problem = at(path, line) + "value in " + quoted(tok) + " is not a number";
          return false;
        case num::not_finite:
          problem = at(path, line) + "value in " + quoted(tok) + " is not a finite binary32 value";
          return false;
      }
      previous = static_cast<int>(index);
      if (previous > max_index) max_index = previous, max_line = line;
      entries.push_back({row, previous - 1, value});
    }
    return true;
  });
  if (!problem.empty()) return error{problem};
  if (labels.empty()) return error{path + ": no data rows"};

  dataset d;
  d.rows = static_cast<int>(labels.size());
  d.cols = std::max(max_index, min_cols);
  d.lines = std::move(lines);
  if (mul_sat(static_cast<std::uint64_t>(d.rows), static_cast<std::uint64_t>(d.cols)) > kMaxDenseElements) {
    return error{path + ": " + std::to_string(d.rows) + " rows x " + std::to_string(d.cols) + " columns (largest index on line " +
                 std::to_string(max_line) + ") is too large for a dense matrix"};
  }
  d.x.assign(static_cast<std::size_t>(d.rows) * static_cast<std::size_t>(d.cols), 0.0f);
  for (const entry& e : entries) {
    d.x[static_cast<std::size_t>(e.row) * static_cast<std::size_t>(d.cols) + static_cast<std::size_t>(e.col)] = e.value;
  }
  d.y = std::move(labels);
  d.source = path;
  return d;
}

expected<dataset> read_csv(const std::string& path, int label_column) {
  const expected<std::string> text = read_text(path, "");
  if (!text) return error{text.message()};

  std::vector<std::string_view> fields;
  const auto split_fields = [&fields](std::string_view s) {
    fields.clear();
    for (;;) {
      const std::size_t comma = s.find(',');
      fields.push_back(trim(s.substr(0, comma)));
      if (comma == std::string_view::npos) return;
      s.remove_prefix(comma + 1);
    }
  };

  dataset d;
  d.source = path;
  std::size_t width = 0;  // fields per row, fixed by the first non-blank line
  int width_line = 0;
  bool header = false;
  std::size_t label = 0;
  std::string problem;
  for_each_line(*text, [&](int line, std::string_view s) {
    if (trim(s).empty()) return true;
    split_fields(s);
    if (width == 0) {
      width = fields.size();
      width_line = line;
      float ignored = 0;
      header = std::any_of(fields.begin(), fields.end(), [&](std::string_view f) { return parse_float(f, ignored) == num::not_number; });
      const long long column = label_column < 0 ? static_cast<long long>(width) - 1 : label_column;
      if (column >= static_cast<long long>(width)) {
        problem = at(path, line) + "label_column " + std::to_string(label_column) + " is out of range: the rows have " +
                  std::to_string(width) + " fields (columns 0.." + std::to_string(width - 1) + "; negative means the last)";
        return false;
      }
      label = static_cast<std::size_t>(column);
      d.cols = static_cast<int>(width) - 1;
      if (header) return true;
    }
    if (fields.size() != width) {
      problem = at(path, line) + "found " + std::to_string(fields.size()) + " fields, expected " + std::to_string(width) + " (as " +
                (header ? "in the header on" : "on") + " line " + std::to_string(width_line) + ")";
      return false;
    }
    for (std::size_t i = 0; i < width; ++i) {
      float v = 0;
      const num status = parse_float(fields[i], v);
      if (status != num::ok) {
        problem = at(path, line) + "field " + std::to_string(i + 1) + " " + quoted(fields[i]) +
                  (fields[i].empty() ? " is empty" : status == num::not_number ? " is not a number" : " is not a finite binary32 value");
        return false;
      }
      (i == label ? d.y : d.x).push_back(v);
    }
    d.lines.push_back(line);
    ++d.rows;
    return true;
  });
  if (!problem.empty()) return error{problem};
  if (d.rows == 0) return error{path + ": no data rows" + (header ? " after the header" : "")};
  return d;
}

std::optional<std::string> check_labels(const dataset& d, std::span<const float> allowed, std::string_view task) {
  for (std::size_t r = 0; r < d.y.size(); ++r) {
    const float v = d.y[r];
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) continue;
    std::string list;
    for (const float a : allowed) list += (list.empty() ? "" : ", ") + shortest(a);
    const std::string where = r < d.lines.size() ? "line " + std::to_string(d.lines[r]) : "row " + std::to_string(r) + " (0-based)";
    return d.source + ": label " + shortest(v) + " on " + where + " is not valid for " + std::string(task) +
           " (allowed: " + list + ")";
  }
  return std::nullopt;
}

void map_labels(dataset& d, float from, float to) { std::replace(d.y.begin(), d.y.end(), from, to); }

std::pair<dataset, dataset> split(const dataset& d, double test_fraction, std::uint64_t seed) {
  constexpr std::uint32_t kSplitStream = 0x73706c74;  // "splt": apart from rounding streams
  const int n = d.rows;
  std::vector<int> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  // j = bits mod (i + 1) is biased by at most (i + 1) / 2^64: invisible for any data set size.
  for (int i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(random_bits(seed, kSplitStream, static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(i + 1));
    std::swap(perm[static_cast<std::size_t>(i)], perm[j]);
  }
  const double f = std::isnan(test_fraction) ? 0.0 : std::clamp(test_fraction, 0.0, 1.0);
  const int n_test = static_cast<int>(std::llround(f * n));
  const auto take = [&](int first, int count, const char* part) {
    dataset out;
    out.rows = count;
    out.cols = d.cols;
    out.source = d.source + " (" + part + " split, seed " + std::to_string(seed) + ")";
    const auto cols = static_cast<std::size_t>(d.cols);
    out.x.reserve(static_cast<std::size_t>(count) * cols);
    out.y.reserve(static_cast<std::size_t>(count));
    for (int k = first; k < first + count; ++k) {
      const auto r = static_cast<std::size_t>(perm[static_cast<std::size_t>(k)]);
      out.x.insert(out.x.end(), d.x.begin() + static_cast<std::ptrdiff_t>(r * cols), d.x.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols));
      out.y.push_back(d.y[r]);
      if (r < d.lines.size()) out.lines.push_back(d.lines[r]);
    }
    return out;
  };
  return {take(0, n - n_test, "train"), take(n - n_test, n_test, "test")};
}

void l2_normalise_rows(dataset& d) {
  const auto cols = static_cast<std::size_t>(d.cols);
  for (std::size_t r = 0; r < static_cast<std::size_t>(d.rows); ++r) {
    float* row = d.x.data() + r * cols;
    double sum = 0;  // no overflow: 2^256 * cols stays far below the double range
    for (std::size_t c = 0; c < cols; ++c) sum += static_cast<double>(row[c]) * row[c];
    if (sum == 0) continue;
    const double norm = std::sqrt(sum);
    for (std::size_t c = 0; c < cols; ++c) row[c] = static_cast<float>(row[c] / norm);
  }
}

}  // namespace fpemu::training
