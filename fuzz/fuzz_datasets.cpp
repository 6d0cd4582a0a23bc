// libFuzzer harness: the dataset readers (analysis/training/datasets.hpp) on arbitrary files. The first
// byte picks the reader, the next ones its argument, the rest is the file content:
//   LIBSVM  min_cols (a signed byte), then the text;
//   CSV     label_column (a signed byte: negative is the last column), then the text;
//   IDX     which of the two files to gzip (zlib reads both forms), a 16-bit split point, then
//           the images file and the labels file.
// Each read must either give a dataset of consistent shape (rows x cols values, one label per
// row, finite values; text formats: at least one row, each with its line, in order; LIBSVM: at
// least min_cols columns; IDX: the header's shape and exactly the file's pixels / 255 and labels)
// or refuse with a message naming the file. Sizes claimed by a header or an index must not be
// allocated before the data are there: libFuzzer stops a run on a malloc over its limit.
#include <zlib.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <system_error>

#include "analysis/training/datasets.hpp"
#include "fuzz_input.hpp"

namespace {

using fpemu::training::dataset;

// A folder of this process's files, removed at exit.
struct scratch_dir {
  std::filesystem::path path;
  scratch_dir()
      : path(std::filesystem::temp_directory_path() / ("fpemu-fuzz-datasets-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const char* name) const { return (path / name).string(); }
};

const scratch_dir& scratch() {
  static const scratch_dir dir;
  return dir;
}

void write_file(const std::string& path, std::span<const std::uint8_t> bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (f == nullptr) __builtin_trap();
    if (!bytes.empty() && gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == 0) __builtin_trap();
    if (gzclose(f) != Z_OK) __builtin_trap();
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) __builtin_trap();
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "FAILED: %s\n", what);
  __builtin_trap();
}

void check_shape(const dataset& d) {
  if (d.rows < 0 || d.cols < 0) fail("negative shape");
  if (d.x.size() != static_cast<std::size_t>(d.rows) * static_cast<std::size_t>(d.cols)) fail("x is not rows x cols");
  if (d.y.size() != static_cast<std::size_t>(d.rows)) fail("not one label per row");
  if (!std::all_of(d.x.begin(), d.x.end(), [](float v) { return std::isfinite(v); })) fail("a value is not finite");
  if (!std::all_of(d.y.begin(), d.y.end(), [](float v) { return std::isfinite(v); })) fail("a label is not finite");
  if (d.source.empty()) fail("no source");
}

// Text formats: at least one row, each with its 1-based line, increasing, within the text.
void check_text_rows(const dataset& d, std::span<const std::uint8_t> text) {
  if (d.rows < 1) fail("a text dataset without rows");
  if (d.lines.size() != static_cast<std::size_t>(d.rows)) fail("not one line number per row");
  const auto line_count = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (std::size_t i = 0; i < d.lines.size(); ++i) {
    if (d.lines[i] < 1 || d.lines[i] > line_count) fail("a row's line is outside the text");
    if (i > 0 && d.lines[i] <= d.lines[i - 1]) fail("row lines do not increase");
  }
}

template <class T>
void check_refusal(const fpemu::expected<T>& r, const std::string& path, const std::string& other_path = "") {
  const std::string& m = r.message();
  if (m.find(path) == std::string::npos && (other_path.empty() || m.find(other_path) == std::string::npos))
    fail("a refusal that names no file");
}

std::uint32_t be32(std::span<const std::uint8_t> b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) |
         std::uint32_t{b[at + 3]};
}

// A file written as is that starts with the gzip magic is decompressed by the reader: its
// content is then not these bytes.
bool read_back_as_written(std::span<const std::uint8_t> bytes, bool gzipped) {
  return gzipped || bytes.size() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b;
}

void fuzz_idx(fuzz_input::byte_reader& in) {
  const std::uint8_t options = in.byte();
  const std::size_t split = in.u16();
  const std::span<const std::uint8_t> rest = in.rest();
  const std::span<const std::uint8_t> images = rest.first(std::min(split, rest.size()));
  const std::span<const std::uint8_t> labels = rest.subspan(images.size());
  const bool gz_images = options & 1, gz_labels = options & 2;
  const std::string images_path = scratch().file(gz_images ? "images.gz" : "images");
  const std::string labels_path = scratch().file(gz_labels ? "labels.gz" : "labels");
  write_file(images_path, images, gz_images);
  write_file(labels_path, labels, gz_labels);
  const auto r = fpemu::training::read_idx(images_path, labels_path);
  if (!r) return check_refusal(r, images_path, labels_path);
  check_shape(*r);
  if (!read_back_as_written(images, gz_images) || !read_back_as_written(labels, gz_labels)) return;
  // The contract: 16- and 8-byte headers, the shape they give, pixels p / 255, labels as bytes.
  if (images.size() < 16 || labels.size() < 8) fail("a dataset from files shorter than their headers");
  if (static_cast<std::uint32_t>(r->rows) != be32(images, 4)) fail("rows differ from the images header");
  if (static_cast<std::uint64_t>(r->cols) != std::uint64_t{be32(images, 8)} * be32(images, 12))
    fail("cols differ from the images header");
  if (r->x.size() != images.size() - 16 || r->y.size() != labels.size() - 8) fail("not exactly the files' data");
  for (std::size_t i = 0; i < r->x.size(); ++i)
    if (r->x[i] != static_cast<float>(images[16 + i]) / 255.0f) fail("a pixel is not its byte / 255");
  for (std::size_t i = 0; i < r->y.size(); ++i)
    if (r->y[i] != static_cast<float>(labels[8 + i])) fail("a label is not its byte");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz_input::byte_reader in(data, size);
  switch (in.byte() % 3) {
    case 0: {
      const int min_cols = static_cast<std::int8_t>(in.byte());
      const std::span<const std::uint8_t> text = in.rest();
      const std::string path = scratch().file("data.svm");
      write_file(path, text, false);
      const auto r = fpemu::training::read_libsvm(path, min_cols);
      if (!r) {
        check_refusal(r, path);
        break;
      }
      check_shape(*r);
      check_text_rows(*r, text);
      if (r->cols < min_cols) fail("fewer columns than min_cols");
      const auto nonzero = std::count_if(r->x.begin(), r->x.end(), [](float v) { return v != 0; });
      if (nonzero > std::count(text.begin(), text.end(), ':')) fail("more values than index:value tokens");
      break;
    }
    case 1: {
      const int label_column = static_cast<std::int8_t>(in.byte());
      const std::span<const std::uint8_t> text = in.rest();
      const std::string path = scratch().file("data.csv");
      write_file(path, text, false);
      const auto r = fpemu::training::read_csv(path, label_column);
      if (!r) {
        check_refusal(r, path);
        break;
      }
      check_shape(*r);
      check_text_rows(*r, text);
      break;
    }
    default: fuzz_idx(in); break;
  }
  return 0;
}
