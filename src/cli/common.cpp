// Helpers shared by the subcommands of the fpemu command (see common.hpp).
#include "common.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#ifdef _WIN32
#include <io.h>
#define FPEMU_ISATTY(fd) _isatty(fd)
#else
#include <unistd.h>
#define FPEMU_ISATTY(fd) isatty(fd)
#endif

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
  app.add_option("--rounding,-r", o.mode, "Rounding mode")
      ->transform(choice_check({"rne", "rna", "rz", "ru", "rd", "rto", "sr", "sr-exact"}))
      ->capture_default_str()
      ->type_name("MODE");
  app.add_option("--overflow", o.overflow, "Overflow policy")
      ->transform(choice_check({"ieee", "saturate", "nan"}))
      ->capture_default_str()
      ->type_name("POLICY");
  app.add_option("--sr-bits", o.sr_bits, "Random bits of stochastic rounding (--rounding sr)")
      ->transform(integer_check(1, 32))
      ->capture_default_str()
      ->type_name("K");
  add_seed_option(app, o.seed, "Philox seed of the stochastic modes");
  app.add_option("--stream", o.stream, "Philox stream of the stochastic modes")
      ->transform(unsigned_check(0xFFFFFFFFu))
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
  s.r.sr_bits = o.sr_bits;
  if (auto problem = check(f, s.r)) fail(*problem);
  s.seed = o.seed;
  s.stream = o.stream;
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

// ---- Typed options --------------------------------------------------------------------------------

namespace {
std::string range_text(std::int64_t lo, std::int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

// A number without the blanks, signs and bases that strto* would accept silently.
bool plain_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}
}  // namespace

CLI::Validator integer_check(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& in) -> std::string {
        const std::string valid = "valid " + range_text(lo, hi);
        std::string_view digits = in;
        const bool negative = digits.starts_with('-');
        if (negative) digits.remove_prefix(1);
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
        if (!plain_digits(digits) || ptr != in.data() + in.size()) return quote(in) + " is not an integer: " + valid;
        if (ec == std::errc::result_out_of_range || v < lo || v > hi) return quote(in) + " is out of range: " + valid;
        in = std::to_string(v);
        return {};
      },
      "in " + range_text(lo, hi));
}

CLI::Validator unsigned_check(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& in) -> std::string {
        std::string_view digits = in;
        int base = 10;
        if (digits.starts_with("0x") || digits.starts_with("0X")) {
          digits.remove_prefix(2);
          base = 16;
        }
        std::uint64_t v = 0;
        const char* end = digits.data() + digits.size();
        const auto [ptr, ec] = std::from_chars(digits.data(), end, v, base);
        const bool digits_ok = base == 16 ? !digits.empty() && digits.find_first_not_of("0123456789abcdefABCDEF") ==
                                                                   std::string_view::npos
                                          : plain_digits(digits);
        if (!digits_ok || ec != std::errc{} || ptr != end || v > max)
          return quote(in) + " is not valid: expected an integer in 0.." + std::to_string(max) + " (decimal or 0x hex)";
        in = std::to_string(v);
        return {};
      },
      "in 0.." + std::to_string(max));
}

CLI::Validator real_check(double lo, double hi, bool lo_open, bool hi_open) {
  const std::string valid = std::isinf(lo) && std::isinf(hi) ? std::string("finite") :
                            (lo_open ? "> " + exact_num(lo) : ">= " + exact_num(lo)) +
                            (std::isinf(hi) ? std::string(" and finite") : (hi_open ? " and < " : " and <= ") + exact_num(hi));
  return CLI::Validator(
      [lo, hi, lo_open, hi_open, valid](std::string& in) -> std::string {
        const char* begin = in.c_str();
        char* end = nullptr;
        const bool blank = in.empty() || std::isspace(static_cast<unsigned char>(in.front()));
        const double v = blank ? 0.0 : std::strtod(begin, &end);
        if (blank || end != begin + in.size())
          return quote(in) + " is not a number: expected a finite decimal such as 0.5 or 1e-3, " + valid;
        if (!std::isfinite(v))
          return quote(in) + " is not finite: " + (std::isinf(lo) && std::isinf(hi) ? "expected a finite number" : "valid " + valid);
        if (v < lo || (lo_open && v == lo) || v > hi || (hi_open && v == hi))
          return quote(in) + " is out of range: valid " + valid;
        in = exact_num(v);
        return {};
      },
      valid);
}

CLI::Validator choice_check(std::vector<std::string> valid) {
  std::string all;
  for (const std::string& v : valid) all += (all.empty() ? "" : "|") + v;
  return CLI::Validator(
      [valid, all](std::string& in) -> std::string {
        if (std::find(valid.begin(), valid.end(), in) != valid.end()) return {};
        return quote(in) + " is not valid: expected " + all;
      },
      all);
}

CLI::Validator list_check(const CLI::Validator& item) {
  return CLI::Validator(
      [item](std::string& in) -> std::string {
        std::size_t start = 0;
        while (true) {
          const std::size_t comma = in.find(',', start);
          std::string one(trim(std::string_view(in).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
          if (one.empty()) return quote(in) + " has an empty item: expected a comma-separated list";
          if (std::string why = item(one); !why.empty()) return why;  // the message names the item
          if (comma == std::string::npos) return {};
          start = comma + 1;
        }
      },
      item.get_description().empty() ? std::string("comma-separated") : "comma-separated, each " + item.get_description());
}

CLI::Validator parser_check(std::function<std::string(const std::string&)> problem, std::string description) {
  return CLI::Validator([problem](std::string& in) { return problem(in); }, std::move(description));
}

CLI::Validator format_check() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        const expected<format> f = parse_format(in);
        return f ? std::string{} : f.message();
      },
      "a name or eXmY[:options]");
}

CLI::Option* add_format_option(CLI::App& app, std::string& spec, const std::string& help) {
  return app.add_option("--format,-f", spec, help)->check(format_check())->type_name("FMT");
}

CLI::Option* add_seed_option(CLI::App& app, std::uint64_t& seed, const std::string& help) {
  return app.add_option("--seed", seed, help)
      ->transform(unsigned_check(~std::uint64_t{0}))
      ->capture_default_str()
      ->type_name("S");
}

CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& help) {
  return app.add_option("--threads", threads, help + "; 0: every hardware thread; results do not depend on it")
      ->transform(integer_check(0, 1024))
      ->capture_default_str()
      ->type_name("N");
}

CLI::Option* add_samples_option(CLI::App& app, std::uint64_t& samples, const std::string& help) {
  return app.add_option("--samples", samples, help)
      ->transform(integer_check(1, 1000000))
      ->capture_default_str()
      ->type_name("N");
}

// ---- Tables ------------------------------------------------------------------------------------------

void add_output_options(CLI::App& app, output_options& o) {
  const CLI::Validator path(
      [](std::string& in) -> std::string {
        if (in.empty()) return "expected a file name, or - for standard output";
        std::error_code ec;
        if (in != "-" && std::filesystem::is_directory(in, ec)) return quote(in) + " is a directory: expected a file name";
        return {};
      },
      "FILE or -");
  app.add_option("--csv", o.csv, "Write the table as CSV to FILE (- : standard output, instead of the report)")
      ->check(path)
      ->type_name("FILE")
      ->group("Output");
  app.add_option("--json", o.json, "Write the table as JSON to FILE (- : standard output, instead of the report)")
      ->check(path)
      ->type_name("FILE")
      ->group("Output");
}

output_sinks::output_sinks(const output_options& o) {
  if (o.csv == "-" && o.json == "-") fail("--csv - and --json - both ask for standard output: give one of them a FILE");
  if (!o.csv.empty() && o.csv == o.json) fail("--csv and --json name the same file " + quote(o.csv));
  if (o.csv == "-") {
    csv_ = &std::cout;
    text_ = false;
  } else if (!o.csv.empty()) {
    csv_file_ = std::make_unique<atomic_file>("--csv", o.csv);
    csv_ = &csv_file_->out;
  }
  if (o.json == "-") {
    json_ = &std::cout;
    text_ = false;
  } else if (!o.json.empty()) {
    json_file_ = std::make_unique<atomic_file>("--json", o.json);
    json_ = &json_file_->out;
  }
}

output_sinks::~output_sinks() = default;

void output_sinks::commit() {
  if (csv_file_) csv_file_->commit();
  if (json_file_) json_file_->commit();
}

std::string num(double x, int digits) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string exact_num(double x) {
  if (!std::isfinite(x)) return num(x);
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc{} ? std::string(buf, ptr) : num(x, 17);
}

std::string json_number(double x) { return std::isfinite(x) ? exact_num(x) : "null"; }

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (const char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

table_writer::table_writer(output_sinks& sinks, std::vector<std::string> columns, bool json)
    : sinks_(sinks), columns_(std::move(columns)), json_(json ? sinks.json() : nullptr) {
  if (std::ostream* out = sinks_.csv()) {
    for (std::size_t i = 0; i < columns_.size(); ++i) *out << (i ? "," : "") << csv_field(columns_[i]);
    *out << '\n';
  }
  if (std::ostream* out = json_) *out << '[';
}

void table_writer::row(const std::vector<cell>& cells) {
  if (std::ostream* out = sinks_.csv()) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const cell& c = cells[i];
      *out << (i ? "," : "") << (c.k == cell::kind::real ? exact_num(c.real) : c.k == cell::kind::text ? csv_field(c.text) : c.text);  // none: empty
    }
    *out << '\n';
  }
  if (std::ostream* out = json_) {
    *out << (first_ ? "\n" : ",\n") << "  {";
    for (std::size_t i = 0; i < cells.size() && i < columns_.size(); ++i) {
      const cell& c = cells[i];
      *out << (i ? ", " : "") << json_string(columns_[i]) << ": "
           << (c.k == cell::kind::real   ? json_number(c.real)
               : c.k == cell::kind::text ? json_string(c.text)
               : c.k == cell::kind::none ? std::string("null")
                                         : c.text);
    }
    *out << '}';
  }
  first_ = false;
}

void table_writer::finish() {
  if (finished_) return;
  finished_ = true;
  if (std::ostream* out = json_) *out << (first_ ? "]\n" : "\n]\n");
}

// ---- Progress ---------------------------------------------------------------------------------------

progress::progress(std::string label, std::uint64_t total)
    : label_(std::move(label)), total_(std::max<std::uint64_t>(total, 1)), start_(std::chrono::steady_clock::now()),
      last_(start_) {
  on_ = FPEMU_ISATTY(2) != 0;
}

void progress::set(std::uint64_t done) {
  done_ = std::min(done, total_);
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  // At most ten lines a second; the first after 0.2 s, so that quick runs show none.
  if (now - last_ < std::chrono::milliseconds(100) || now - start_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double fraction = static_cast<double>(done_) / static_cast<double>(total_);
  std::string eta = "--:--";
  if (done_ > 0) {
    const auto left = static_cast<long long>(elapsed * (1 - fraction) / fraction + 0.5);
    char buf[32];
    if (left >= 3600)
      std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", left / 3600, left / 60 % 60, left % 60);
    else
      std::snprintf(buf, sizeof buf, "%lld:%02lld", left / 60, left % 60);
    eta = buf;
  }
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(fraction * 100));
  std::string line = label_ + "  " + pct + " ETA " + eta;
  const std::size_t len = line.size();
  if (len < width_) line.append(width_ - len, ' ');
  width_ = std::max(width_, len);
  std::fputs(("\r" + line).c_str(), stderr);
  std::fflush(stderr);
}

void progress::finish() {
  if (width_ == 0) return;
  std::fputs(("\r" + std::string(width_, ' ') + "\r").c_str(), stderr);
  std::fflush(stderr);
  width_ = 0;
}

}  // namespace fpemu::cli
