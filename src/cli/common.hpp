// Shared pieces of the fpemu command: the error channel, option parsing helpers and the
// registration functions of the subcommands (one .cpp file each).
//
// Error channel (docs/architecture.md, house rule 7): the library returns fpemu::expected for bad external
// input; the command turns every such error, and every bad argument, into a cli::usage_error.
// main() catches it, prints ONE line "fpemu: <message>" to stderr and exits with status 2.
// Commands that stream (round from stdin, op) print each result as soon as it is computed, so
// on the first bad line the command stops and the lines before it have already been printed.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fpemu/compare.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace CLI {
class App;
class Option;
class Validator;
}

namespace fpemu::cli {

// Bad input from the user; what() is the whole message, without the "fpemu: " prefix.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws usage_error(one_line(message)).
[[noreturn]] void fail(const std::string& message);

// The message as one printable line: line breaks (CLI11's messages span lines) become spaces and
// other control bytes, which a message quoting bad input may carry, \xNN: a NUL would otherwise
// end the message early (what() is a C string).
std::string one_line(std::string_view message);

// A command that finished with a status other than 0 or 2 (gpu-check: 1 for a mismatch, 77 when
// there is no GPU) after printing its own report; main() flushes the output and returns it.
struct exit_status {
  int code = 0;
};

template <class T>
T value_or_fail(expected<T> e, const std::string& context = {}) {
  if (!e) fail(context.empty() ? e.message() : context + ": " + e.message());
  return std::move(e).value();
}

std::string quote(std::string_view s);
// s as a JSON string: quotes and backslashes escaped, control bytes as \u00XX.
std::string json_string(std::string_view s);

// printf-style formatting into std::cout (main() unsyncs stdio, so printf would interleave).
template <class... Args>
void print(const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  std::cout << buf;
}

// A registered subcommand: its CLI11 node and what to run when it was selected. main() takes
// the arguments after a "--" away from CLI11 and passes them to `run`: only round accepts them
// (values such as "-inf" that CLI11 would read as options); the others call no_trailing().
struct command {
  CLI::App* app = nullptr;
  std::function<void(const std::vector<std::string>& after_dashes)> run;
};
void no_trailing(std::string_view subcommand, const std::vector<std::string>& after_dashes);

command add_formats(CLI::App& parent);
command add_round(CLI::App& parent);
command add_decode(CLI::App& parent);
command add_op(CLI::App& parent);
command add_demo(CLI::App& parent);

// The format table of `fpemu formats`; compact drops columns (for the demo).
void print_format_table(std::ostream& out, bool compact);

// ---- Formats, codes, rounding options ------------------------------------------------------

format require_format(std::string_view spec);

// The code in hex with 0x, zero-padded to ceil(width / 4) digits: 0x7e, 0x3dcd, 0x00001 (tf32).
std::string hex_code(const format& f, std::uint32_t code);

// A code in hex ("7e" or "0x7e"); fails unless it fits the format's width. `where` prefixes the
// message ("line 3") when not empty.
std::uint32_t parse_code(const format& f, std::string_view text, const std::string& where = {});

// Unsigned integers in decimal or 0x-hex, e.g. for --seed; fails naming the option.
std::uint64_t parse_unsigned(std::string_view text, std::string_view option, std::uint64_t max);

// The rounding options shared by round and op: --rounding, --overflow, --sr-bits, --seed, --stream.
struct rounding_options {
  std::string mode = "rne";
  std::string overflow = "ieee";
  int sr_bits = 16;
  std::uint64_t seed = 0;
  std::uint32_t stream = 0;
};
void add_rounding_options(CLI::App& app, rounding_options& o);

// A validated rounding plus the Philox key of the stochastic modes.
struct rounding_setup {
  rounding r;
  std::uint64_t seed = 0;
  std::uint32_t stream = 0;

  bool stochastic() const { return is_stochastic(r.mode); }
  // Random bits for element `index` (0 in the deterministic modes).
  std::uint64_t random(std::uint64_t index) const;
};
rounding_setup resolve_rounding(const format& f, const rounding_options& o);

// Removes leading and trailing whitespace (and a trailing '\r' from Windows line ends).
std::string_view trim(std::string_view s);

// "a,b,c" cut at its commas, each item trimmed; an empty item fails naming the option.
std::vector<std::string> split_list(const std::string& s, std::string_view option);

// An output file written to PATH.tmp and renamed to PATH by commit(), so that a run that stops
// early leaves no half-written file (an uncommitted PATH.tmp is removed). Errors name the option.
class atomic_file {
 public:
  atomic_file(std::string option, std::string path);
  ~atomic_file();
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  std::ofstream out;
  void commit();

 private:
  std::string option_, path_, tmp_;
  bool committed_ = false;
};

// ---- One spelling per idea: the options every command registers the same way --------------------
//
// Every option is typed and checked while CLI11 parses, before a command writes anything: a bad
// value fails as a CLI11 validation error ("--epochs: ...") that main() prints as the one line
// "fpemu: ..." with exit status 2. The checks are transforms: they accept the spellings that
// the messages promise (decimal, 0x hex for unsigned integers), refuse the ones C's strto*
// would take silently (leading blanks, "-1" as an unsigned, a leading 0 as octal) and hand
// CLI11 the canonical decimal.

// An integer in lo..hi, decimal. The message names the value and the range.
CLI::Validator integer_check(std::int64_t lo, std::int64_t hi);
// An unsigned integer in 0..max, decimal or 0x hex (seeds, Philox streams).
CLI::Validator unsigned_check(std::uint64_t max);
// A finite real in [lo, hi], decimal or C99 hex float; lo_open / hi_open leave the bound out.
CLI::Validator real_check(double lo, double hi, bool lo_open = false, bool hi_open = false);
// One of `valid`; the message lists them.
CLI::Validator choice_check(std::vector<std::string> valid);
// A comma-separated list whose every item passes `item` (a choice_check, integer_check, ...);
// the message names the bad item.
CLI::Validator list_check(const CLI::Validator& item);
// A value that `problem` accepts (returns an empty string) or refuses with a message naming it
// and the valid set (e.g. a library parser: parse_policy, parse_recipe).
CLI::Validator parser_check(std::function<std::string(const std::string&)> problem, std::string description);
// A library parser (returning expected<T>) as parser_check's problem: "" when it accepts the
// text, else its message.
template <class Parse>
auto problem_of(Parse parse) {
  return [parse](const std::string& in) {
    const auto parsed = parse(in);
    return parsed ? std::string{} : parsed.message();
  };
}
// A format spec that parse_format accepts; the message is parse_format's.
CLI::Validator format_check();

// --format,-f FMT: the one format of a command (commands with two operand formats use
// --a-format and --b-format instead).
CLI::Option* add_format_option(CLI::App& app, std::string& spec, const std::string& help);
// --seed S: unsigned 64-bit, decimal or 0x hex.
CLI::Option* add_seed_option(CLI::App& app, std::uint64_t& seed, const std::string& help);
// --threads N: 0..1024, 0 = every hardware thread; results never depend on it.
CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& help);
// --samples N: 1..1000000.
CLI::Option* add_samples_option(CLI::App& app, std::uint64_t& samples, const std::string& help);

// ---- Tables: --csv FILE and --json FILE ('-' = standard output) --------------------------------

struct output_options {
  std::string csv;   // empty: not given; "-": standard output
  std::string json;  // likewise
};
// Registers --csv FILE and --json FILE (group "Output"). A FILE is written to FILE.tmp and
// renamed when complete (atomic_file); '-' writes to standard output, and then the human report
// is left out so that stdout holds nothing but the CSV or JSON.
void add_output_options(CLI::App& app, output_options& o);

// The destinations of one run's table. Opening checks every path (and refuses both on '-')
// before anything is written.
class output_sinks {
 public:
  explicit output_sinks(const output_options& o);
  ~output_sinks();
  output_sinks(const output_sinks&) = delete;
  output_sinks& operator=(const output_sinks&) = delete;
  bool text() const { return text_; }  // print the human report on stdout?
  std::ostream* csv() { return csv_; }  // null when not asked for
  std::ostream* json() { return json_; }
  void commit();  // renames the files into place

 private:
  std::unique_ptr<atomic_file> csv_file_, json_file_;
  std::ostream* csv_ = nullptr;
  std::ostream* json_ = nullptr;
  bool text_ = true;
};

// One cell of a table row: text, an integer, a double (written exactly, as the shortest decimal
// that reads back as the same double), a boolean, or nothing (cell(): empty in CSV, null in JSON).
struct cell {
  enum class kind : std::uint8_t { none, text, integer, real, boolean } k;
  std::string text;
  double real = 0;
  cell() : k(kind::none) {}
  cell(std::string s) : k(kind::text), text(std::move(s)) {}
  cell(const char* s) : k(kind::text), text(s) {}
  cell(double x) : k(kind::real), real(x) {}
  cell(bool b) : k(kind::boolean), text(b ? "true" : "false") {}
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  cell(I i) : k(kind::integer), text(std::to_string(i)) {}
};

// A table written both ways from the same rows: CSV (a header, then one line per row; inf and
// nan spelled as Python's float() reads them) and JSON (an array of objects keyed by column;
// non-finite numbers are null). A command whose JSON holds more than the table (formats, optim)
// writes its own and passes json = false.
class table_writer {
 public:
  table_writer(output_sinks& sinks, std::vector<std::string> columns, bool json = true);
  void row(const std::vector<cell>& cells);
  void finish();  // closes the JSON array; commit() the sinks after it

 private:
  output_sinks& sinks_;
  std::vector<std::string> columns_;
  std::ostream* json_ = nullptr;
  bool first_ = true, finished_ = false;
};

// %.*g, with inf and nan spelled as Python's float() reads them.
std::string num(double x, int digits = 6);
// The shortest decimal that reads back as exactly x (std::to_chars), inf and nan as above.
std::string exact_num(double x);
// x as a JSON number, null when not finite.
std::string json_number(double x);
// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(std::string_view s);

// ---- Progress on a terminal -------------------------------------------------------------------

// "label  42% ETA 0:13" on stderr, rewritten in place at most ten times a second and cleared by
// finish() (or the destructor), so that it never stays between lines of the report. Only when
// stderr is a terminal: under a pipe or in a log file nothing at all is written.
class progress {
 public:
  progress(std::string label, std::uint64_t total);
  ~progress() { finish(); }
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;
  void set(std::uint64_t done);  // done of total units finished
  void step() { set(done_ + 1); }
  void relabel(std::string label) { label_ = std::move(label); }
  void finish();

 private:
  std::string label_;
  std::uint64_t total_ = 1, done_ = 0;
  bool on_ = false;
  std::size_t width_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace fpemu::cli
