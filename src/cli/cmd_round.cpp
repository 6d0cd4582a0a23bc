// fpemu round --format FMT [options] [VALUE...]: rounds exact decimal / hex-float values into a format.
//
// Each VALUE is parsed exactly by fpemu::from_string (never through a double) and rounded once.
// Output, one line per value:  0xCODE DECIMAL FLAGS  (exact decimal of the result; flags or -).
// Without VALUEs the values are read from stdin, one per line, blank lines skipped. In the
// stochastic modes the k-th value (0-based, counting values, not blank lines) takes its random
// bits from keystream_bits(seed, stream, k, width) (the bits round_array gives element k), so a
// run is reproducible and independent of batching.
//
// The VALUEs are collected as CLI11 "extras" rather than as a positional option: CLI11 reads
// "-inf" or "-.5" as unknown short options, and extras keep them, in order, as values. Values
// after a "--" (which main() keeps from CLI11) come after them. Because extras also catch a
// mistyped option ("--jsn"), every VALUE of the command line is rounded before the first line is
// printed: a bad argument anywhere leaves stdout empty.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "common.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace fpemu::cli {
namespace {

struct round_options {
  std::string format;
  rounding_options rounding;
};

std::string round_one(const format& f, const rounding_setup& s, std::string_view text, std::uint64_t index,
                      const std::string& where) {
  const expected<rounded> r = from_string(f, text, s.r, s.random(index));
  if (!r) {
    if (where.empty() && text.starts_with("--"))
      fail("round: unknown option " + quote(text) + " (see fpemu round --help)");
    fail(where.empty() ? r.message() : where + ": " + r.message());
  }
  return hex_code(f, r->code) + ' ' + to_decimal(f, r->code) + ' ' + flags_to_string(r->flags) + '\n';
}

void run_round(const round_options& o, const std::vector<std::string>& values) {
  const format f = require_format(o.format);
  const rounding_setup s = resolve_rounding(f, o.rounding);
  std::uint64_t index = 0;
  if (!values.empty()) {
    std::string out;
    for (const std::string& v : values) out += round_one(f, s, v, index++, {});
    std::cout << out;
    return;
  }
  std::string line;
  for (std::uint64_t number = 1; std::getline(std::cin, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    std::cout << round_one(f, s, text, index++, "stdin line " + std::to_string(number));
  }
}

}  // namespace

command add_round(CLI::App& parent) {
  auto o = std::make_shared<round_options>();
  CLI::App* app = parent.add_subcommand("round", "Round decimal or hex-float values into a format, exactly");
  add_format_option(*app, o->format, "Target format: a name (e4m3fn, bf16, fp16, ...) or eXmY[:options]")->required();
  add_rounding_options(*app, o->rounding);
  app->allow_extras();
  app->footer(
      "Usage: fpemu round --format FMT [OPTIONS] [VALUE...]\n"
      "VALUE: decimal (0.1, -1.5e-3), C99 hex float (0x1.8p-3), inf, -inf or nan, parsed exactly;\n"
      "values may also follow '--'.\n"
      "Without VALUEs, reads one value per line from stdin (blank lines skipped).\n"
      "Prints one line per value: 0xCODE EXACT-DECIMAL FLAGS (flags comma-separated, or -).\n"
      "Stochastic modes: value k (0-based) uses keystream_bits(seed, stream, k, width), the bits\n"
      "round_array gives element k (width 16, 32 or 64 by --sr-bits and mode).\n"
      "A bad VALUE on the command line prints nothing; from stdin, the command stops with status 2\n"
      "at the first bad line, and the lines before it are already printed.");
  return {app, [o, app](const std::vector<std::string>& rest) {
            std::vector<std::string> values = app->remaining();
            values.insert(values.end(), rest.begin(), rest.end());
            run_round(*o, values);
          }};
}

}  // namespace fpemu::cli
