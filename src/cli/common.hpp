// Shared pieces of the fpemu command: the error channel, option parsing helpers and the
// registration functions of the subcommands (one .cpp file each).
//
// Error channel (docs/architecture.md, house rule 7): the library returns fpemu::expected for bad external
// input; the command turns every such error, and every bad argument, into a cli::usage_error.
// main() catches it, prints ONE line "fpemu: <message>" to stderr and exits with status 2.
// Commands that stream (round from stdin, op) print each result as soon as it is computed, so
// on the first bad line the command stops and the lines before it have already been printed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fpemu/compare.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace CLI {
class App;
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

// The rounding options shared by round and op, as text so that every message is ours.
struct rounding_options {
  std::string mode = "rne";
  std::string overflow = "ieee";
  std::string sr_bits = "16";
  std::string seed = "0";
  std::string stream = "0";
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

}  // namespace fpemu::cli
