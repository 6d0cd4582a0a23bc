// Helpers shared by the subcommands of the fpemu command (see common.hpp).
#include "common.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace fpemu::cli {

void fail(const std::string& message) { throw usage_error(one_line(message)); }

std::string one_line(std::string_view message) {
  std::string s(message);
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  s = printable(s);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void no_trailing(std::string_view subcommand, const std::vector<std::string>& after_dashes) {
  if (!after_dashes.empty())
    fail(std::string(subcommand) + " takes no arguments after '--': got " + quote(after_dashes.front()));
}

format require_format(std::string_view spec) { return value_or_fail(parse_format(spec)); }

namespace {
int hex_digits(const format& f) { return (width(f) + 3) / 4; }

std::string to_hex(std::uint64_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0 && v != 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = kHex[v & 15];
  return s;
}
}  // namespace

std::string hex_code(const format& f, std::uint32_t code) { return "0x" + to_hex(code, hex_digits(f)); }

std::uint32_t parse_code(const format& f, std::string_view text, const std::string& where) {
  const std::string prefix = where.empty() ? "" : where + ": ";
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  const bool all_hex = !digits.empty() && digits.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  if (!all_hex)
    fail(prefix + "cannot parse code " + quote(text) + " as hex: expected hex digits with an optional 0x, e.g. 0x7e");
  // Leading zeros are allowed; more than 8 significant digits cannot fit 32 bits.
  const std::size_t first = digits.find_first_not_of('0');
  const std::string_view significant = first == std::string_view::npos ? "0" : digits.substr(first);
  std::uint64_t v = 0;
  if (significant.size() <= 8) std::from_chars(significant.data(), significant.data() + significant.size(), v, 16);
  if (significant.size() > 8 || v > code_mask(f))
    fail(prefix + "code " + quote(text) + " does not fit " + to_string(f) + "'s " + std::to_string(width(f)) +
         " bits: valid " + hex_code(f, 0) + ".." + hex_code(f, code_mask(f)));
  return static_cast<std::uint32_t>(v);
}

std::uint64_t parse_unsigned(std::string_view text, std::string_view option, std::uint64_t max) {
  std::string_view digits = text;
  int base = 10;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
    base = 16;
  }
  std::uint64_t v = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, v, base);
  if (digits.empty() || ec != std::errc{} || ptr != end || v > max)
    fail(std::string(option) + " " + quote(text) + " is not valid: expected an integer in 0.." +
         std::to_string(max) + " (decimal or 0x hex)");
  return v;
}

void add_rounding_options(CLI::App& app, rounding_options& o) {
  app.add_option("--mode,-m", o.mode, "Rounding mode: rne|rna|rz|ru|rd|rto|sr|sr-exact")
      ->capture_default_str()
      ->type_name("MODE");
  app.add_option("--overflow", o.overflow, "Overflow policy: ieee|saturate|nan")
      ->capture_default_str()
      ->type_name("POLICY");
  app.add_option("--sr-bits", o.sr_bits, "Random bits of stochastic rounding (mode sr), 1..32")
      ->capture_default_str()
      ->type_name("K");
  app.add_option("--seed", o.seed, "Philox seed of the stochastic modes (decimal or 0x hex)")
      ->capture_default_str()
      ->type_name("S");
  app.add_option("--stream", o.stream, "Philox stream of the stochastic modes, 0..2^32-1")
      ->capture_default_str()
      ->type_name("N");
}

std::uint64_t rounding_setup::random(std::uint64_t index) const {
  return stochastic() ? keystream_bits(seed, stream, index, array_random_width(r)) : 0;
}

rounding_setup resolve_rounding(const format& f, const rounding_options& o) {
  rounding_setup s;
  s.r.mode = value_or_fail(parse_round_mode(o.mode));
  s.r.overflow = value_or_fail(parse_overflow_policy(o.overflow));
  // --sr-bits is checked in every mode: a bad value is a mistake even where it is unused.
  std::int64_t k = 0;
  const char* end = o.sr_bits.data() + o.sr_bits.size();
  const auto [ptr, ec] = std::from_chars(o.sr_bits.data(), end, k);
  if (o.sr_bits.empty() || ec != std::errc{} || ptr != end)
    fail("--sr-bits " + quote(o.sr_bits) + " is not an integer: valid 1..32");
  if (k < 1 || k > 32) fail("--sr-bits " + quote(o.sr_bits) + " out of range: valid 1..32");
  s.r.sr_bits = static_cast<int>(k);
  if (auto problem = check(f, s.r)) fail(*problem);
  s.seed = parse_unsigned(o.seed, "--seed", ~std::uint64_t{0});
  s.stream = static_cast<std::uint32_t>(parse_unsigned(o.stream, "--stream", 0xFFFFFFFFu));
  return s;
}

std::string_view trim(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t\r\n\v\f");
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(" \t\r\n\v\f");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_list(const std::string& s, std::string_view option) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    const std::string item(trim(std::string_view(s).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (item.empty()) fail(std::string(option) + " " + quote(s) + " has an empty item: expected a comma-separated list");
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

atomic_file::atomic_file(std::string option, std::string path)
    : option_(std::move(option)), path_(std::move(path)), tmp_(path_ + ".tmp") {
  // A directory would only be refused by the rename, after the whole run.
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    fail(option_ + " " + quote(path_) + ": is a directory: expected a file name");
  errno = 0;
  out.open(tmp_);
  if (!out) {
    const std::string why = errno != 0 ? ": " + std::string(std::strerror(errno)) : "";
    fail(option_ + " " + quote(path_) + ": cannot write " + quote(tmp_) + why);
  }
}

atomic_file::~atomic_file() {
  if (committed_) return;
  out.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void atomic_file::commit() {
  out.close();
  if (!out) fail(option_ + " " + quote(path_) + ": cannot finish writing " + quote(tmp_));
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) fail(option_ + " " + quote(path_) + ": cannot rename " + quote(tmp_) + ": " + ec.message());
  committed_ = true;
}

}  // namespace fpemu::cli
