// Readers of the user's data files (see data_file.hpp).
#include "data_file.hpp"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "common.hpp"
#include "fpemu/text.hpp"

namespace fpemu::cli {
namespace {

constexpr std::string_view kMagic{"\x93NUMPY", 6};
// Far above any data set these commands can hold; keeps a corrupt shape from overflowing.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 32;

std::string bytes_of(const std::string& option, const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string why = errno != 0 ? std::strerror(errno) : "cannot open";
    fail(option + " " + quote(path) + ": " + why);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---- .npy --------------------------------------------------------------------------------------

struct npy_header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

// A tiny reader of the one dict literal NumPy writes: string keys, and values that are a string,
// True/False, or a tuple of integers.
class dict_reader {
 public:
  dict_reader(std::string_view text, std::string where) : s_(text), where_(std::move(where)) {}

  npy_header read() {
    npy_header h;
    bool descr = false, order = false, shape = false;
    expect('{');
    while (true) {
      blanks();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      blanks();
      if (key == "descr") {
        h.descr = string_literal();
        descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        shape = true;
      } else {
        bad("unknown key " + quote(key) + ": expected 'descr', 'fortran_order' and 'shape'");
      }
      blanks();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      blanks();
      if (peek() != '}') bad("expected ',' or '}' after the value of " + quote(key));
    }
    if (!descr || !order || !shape)
      bad(std::string("the header lacks '") + (!descr ? "descr" : !order ? "fortran_order" : "shape") +
          "': expected 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const { fail(where_ + ": header: " + what); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void blanks() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  void expect(char c) {
    blanks();
    if (peek() != c) bad(std::string("expected '") + c + "' at byte " + std::to_string(pos_) + " of the dict");
    ++pos_;
  }
  std::string string_literal() {
    blanks();
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string at byte " + std::to_string(pos_) + " of the dict");
    const std::size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.substr(pos_).starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_).starts_with("False")) {
      pos_ += 5;
      return false;
    }
    bad("'fortran_order' is not True or False");
  }
  std::vector<std::uint64_t> tuple() {
    std::vector<std::uint64_t> out;
    expect('(');
    while (true) {
      blanks();
      if (peek() == ')') {
        ++pos_;
        return out;
      }
      const std::size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (b == pos_ || pos_ - b > 12) bad("'shape' holds " + quote(s_.substr(b, 12)) + ": expected a tuple of sizes");
      out.push_back(std::stoull(std::string(s_.substr(b, pos_ - b))));
      blanks();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') bad("'shape' is not a tuple of sizes");
    }
  }

  std::string_view s_;
  std::string where_;
  std::size_t pos_ = 0;
};

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

data_array read_npy(const std::string& where, const std::string& bytes, int dims) {
  if (bytes.size() < 10) fail(where + ": truncated .npy file: " + std::to_string(bytes.size()) + " bytes, shorter than its preamble");
  const auto major = static_cast<unsigned char>(bytes[6]);
  const auto minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(where + ": .npy version " + std::to_string(major) + "." + std::to_string(minor) +
         " is not supported: expected 1.0, 2.0 or 3.0");
  std::size_t header_len = 0, start = 0;
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
    start = 10;
  } else {
    if (bytes.size() < 12) fail(where + ": truncated .npy file: shorter than its preamble");
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    start = 12;
  }
  if (bytes.size() < start + header_len)
    fail(where + ": truncated .npy file: the header claims " + std::to_string(header_len) + " bytes, the file has " +
         std::to_string(bytes.size() - start));
  const npy_header h = dict_reader(std::string_view(bytes).substr(start, header_len), where).read();

  std::size_t item = 0;
  if (h.descr == "<f4") item = 4;
  else if (h.descr == "<f8") item = 8;
  else
    fail(where + ": descr " + quote(h.descr) +
         " is not supported: expected '<f4' or '<f8' (little-endian float32 or float64)");
  if (h.fortran_order)
    fail(where + ": fortran_order True is not supported: expected C order (fortran_order False; numpy.ascontiguousarray)");
  if (static_cast<int>(h.shape.size()) != dims)
    fail(where + ": shape " + shape_text(h.shape) + " is not supported: expected " +
         (dims == 1 ? "a 1-D array, shape (n,)" : "a 2-D array, shape (rows, cols)"));
  std::uint64_t count = 1;
  for (const std::uint64_t d : h.shape) {
    if (d == 0) fail(where + ": shape " + shape_text(h.shape) + " is empty: expected at least one element");
    count *= d;
    if (count > kMaxElements) fail(where + ": shape " + shape_text(h.shape) + " is too large: at most 2^32 elements");
  }
  const std::size_t have = bytes.size() - start - header_len;
  if (have != count * item)
    fail(where + ": shape " + shape_text(h.shape) + " of " + h.descr + " needs " + std::to_string(count * item) +
         " bytes of data, the file has " + std::to_string(have));

  data_array a;
  a.rows = dims == 1 ? 1 : h.shape[0];
  a.cols = dims == 1 ? h.shape[0] : h.shape[1];
  a.values.resize(count);
  const char* p = bytes.data() + start + header_len;
  for (std::size_t i = 0; i < count; ++i, p += item) {
    // Assembled from bytes, so that the reading does not depend on the host's byte order.
    std::uint64_t bits = 0;
    for (std::size_t b = 0; b < item; ++b) bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[b])) << (8 * b);
    const double v = item == 4 ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)))
                               : std::bit_cast<double>(bits);
    if (!std::isfinite(v))
      fail(where + ": element " + std::to_string(i) + " (row-major, 0-based) is " + exact_num(v) + ": expected finite values");
    a.values[i] = v;
  }
  return a;
}

// ---- Plain text ----------------------------------------------------------------------------------

data_array read_text(const std::string& where, const std::string& bytes, int dims) {
  data_array a;
  std::istringstream in(bytes);
  std::string line;
  std::size_t first_line = 0;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    std::size_t count = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      const std::size_t b = text.find_first_not_of(" \t\r\v\f,", pos);
      if (b == std::string_view::npos) break;
      const std::size_t e = std::min(text.find_first_of(" \t\r\v\f,", b), text.size());
      const std::string word(text.substr(b, e - b));
      char* end = nullptr;
      const double v = std::strtod(word.c_str(), &end);
      if (end != word.c_str() + word.size())
        fail(where + ": line " + std::to_string(number) + ": " + quote(printable(word, 40)) +
             " is not a number: expected decimal or hex-float values separated by blanks");
      if (!std::isfinite(v))
        fail(where + ": line " + std::to_string(number) + ": " + quote(word) + " is not finite: expected finite values");
      a.values.push_back(v);
      ++count;
      pos = e;
    }
    if (dims == 2) {
      if (a.rows == 0) {
        a.cols = count;
        first_line = number;
      } else if (count != a.cols) {
        fail(where + ": line " + std::to_string(number) + " has " + std::to_string(count) + " number" +
             (count == 1 ? "" : "s") + ", line " + std::to_string(first_line) + " has " + std::to_string(a.cols) +
             ": a matrix needs one row per line, every row of the same length");
      }
      ++a.rows;
    }
  }
  if (a.values.empty()) fail(where + ": no numbers: expected " + (dims == 1 ? "a vector" : "a matrix, one row per line"));
  if (dims == 1) {
    a.rows = 1;
    a.cols = a.values.size();
  }
  return a;
}

data_array read_any(const std::string& option, const std::string& path, int dims) {
  const std::string bytes = bytes_of(option, path);
  const std::string where = option + " " + quote(path);
  if (std::string_view(bytes).starts_with(kMagic)) return read_npy(where, bytes, dims);
  if (path.ends_with(".npy"))
    fail(where + ": not a NumPy .npy file (it does not start with the magic \\x93NUMPY): expected a file written "
                 "by numpy.save, or plain text under another name");
  return read_text(where, bytes, dims);
}

}  // namespace

data_array read_vector(const std::string& option, const std::string& path) { return read_any(option, path, 1); }
data_array read_matrix(const std::string& option, const std::string& path) { return read_any(option, path, 2); }

}  // namespace fpemu::cli
