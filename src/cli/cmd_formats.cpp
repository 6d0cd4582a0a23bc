// fpemu formats [--csv FILE] [--json FILE]: the named formats (spec.hpp) and their derived quantities (format.hpp).
//
// The JSON numbers are binary64 values printed with %.17g, so they parse back to the same
// double; every validated format's values are binary64 values, so these are the exact values.
// The same quantities also appear as exact decimal strings under "exact".
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "common.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "fpemu/unpacked.hpp"

namespace fpemu::cli {
namespace {

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
std::string g6(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The exact decimal of sig * 2^exp.
std::string exact(std::uint64_t sig, int exp) { return to_decimal(make_finite(false, sig, exp)); }

void print_json(std::ostream& out) {
  out << "[\n";
  bool first = true;
  for (const named_format& n : named_formats()) {
    const format& f = n.fmt;
    out << (first ? "" : ",\n") << "  {";
    first = false;
    out << "\"name\": " << json_string(n.name) << ", \"description\": " << json_string(n.description)
        << ", \"citation\": " << json_string(n.citation)
        << ", \"width\": " << width(f) << ", \"exp_bits\": " << f.exp_bits << ", \"frac_bits\": " << f.frac_bits
        << ", \"bias\": " << f.bias << ", \"subnormals\": " << (f.subnormals ? "true" : "false")
        << ", \"encoding\": " << json_string(to_string(f.encoding))
        << ", \"signed\": " << (f.is_signed ? "true" : "false") << ", \"has_zero\": " << (f.has_zero ? "true" : "false")
        << ", \"has_inf\": " << (has_inf(f) ? "true" : "false") << ", \"has_nan\": " << (has_nan(f) ? "true" : "false")
        << ", \"precision\": " << precision(f) << ", \"emin\": " << emin(f) << ", \"emax\": " << emax(f)
        << ", \"max_finite\": " << g17(max_finite(f)) << ", \"min_normal\": " << g17(min_normal(f))
        << ", \"min_positive\": " << g17(min_positive(f)) << ", \"unit_roundoff\": " << g17(unit_roundoff(f))
        << ", \"machine_epsilon\": " << g17(machine_epsilon(f)) << ", \"finite_codes\": " << finite_count(f);
    const int min_pos_exp = f.subnormals && f.has_zero ? emin(f) - f.frac_bits : emin(f);
    out << ", \"exact\": {\"max_finite\": " << json_string(exact(max_significand(f), emax(f) - f.frac_bits))
        << ", \"min_normal\": " << json_string(exact(1, emin(f)))
        << ", \"min_positive\": " << json_string(exact(1, min_pos_exp))
        << ", \"unit_roundoff\": " << json_string(exact(1, -precision(f)))
        << ", \"machine_epsilon\": " << json_string(exact(1, 1 - precision(f))) << "}}";
  }
  out << "\n]\n";
}

}  // namespace

// The human table; `compact` drops the columns that the demo does not need.
void print_format_table(std::ostream& out, bool compact) {
  char line[256];
  if (compact) {
    std::snprintf(line, sizeof line, "%-9s %4s %3s %4s %4s %-6s %-13s %-12s %-12s %s\n", "format", "bits", "exp",
                  "frac", "bias", "enc", "max finite", "min normal", "min positive", "u");
  } else {
    std::snprintf(line, sizeof line, "%-9s %4s %3s %4s %4s %3s %-6s %3s %-13s %-12s %-12s %-12s %-12s %s\n",
                  "format", "bits", "exp", "frac", "bias", "sub", "enc", "sgn", "max finite", "min normal",
                  "min positive", "u", "epsilon", "finite codes");
  }
  out << line;
  for (const named_format& n : named_formats()) {
    const format& f = n.fmt;
    const std::string name(n.name);
    if (compact) {
      std::snprintf(line, sizeof line, "%-9s %4d %3d %4d %4d %-6s %-13s %-12s %-12s %s\n", name.c_str(), width(f),
                    f.exp_bits, f.frac_bits, f.bias, std::string(to_string(f.encoding)).c_str(),
                    g6(max_finite(f)).c_str(), g6(min_normal(f)).c_str(), g6(min_positive(f)).c_str(),
                    g6(unit_roundoff(f)).c_str());
    } else {
      std::snprintf(line, sizeof line, "%-9s %4d %3d %4d %4d %3s %-6s %3s %-13s %-12s %-12s %-12s %-12s %llu\n",
                    name.c_str(), width(f), f.exp_bits, f.frac_bits, f.bias, f.subnormals ? "yes" : "no",
                    std::string(to_string(f.encoding)).c_str(), f.is_signed ? "yes" : "no",
                    g6(max_finite(f)).c_str(), g6(min_normal(f)).c_str(), g6(min_positive(f)).c_str(),
                    g6(unit_roundoff(f)).c_str(), g6(machine_epsilon(f)).c_str(),
                    static_cast<unsigned long long>(finite_count(f)));
    }
    out << line;
  }
}

command add_formats(CLI::App& parent) {
  auto o = std::make_shared<output_options>();
  CLI::App* app = parent.add_subcommand("formats", "List the named formats and their derived quantities");
  add_output_options(*app, *o);
  app->footer("--json: an array of objects, the exact values also as decimal strings under \"exact\".");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("formats", rest);
            output_sinks sinks(*o);
            if (std::ostream* json = sinks.json()) print_json(*json);
            if (sinks.csv()) {
              table_writer table(sinks, {"name", "width", "exp_bits", "frac_bits", "bias", "subnormals", "encoding",
                                         "signed", "precision", "emin", "emax", "max_finite", "min_normal",
                                         "min_positive", "unit_roundoff", "machine_epsilon", "finite_codes"},
                                 false);
              for (const named_format& n : named_formats()) {
                const format& f = n.fmt;
                table.row({std::string(n.name), width(f), f.exp_bits, f.frac_bits, f.bias, f.subnormals,
                           std::string(to_string(f.encoding)), f.is_signed, precision(f), emin(f), emax(f),
                           max_finite(f), min_normal(f), min_positive(f), unit_roundoff(f), machine_epsilon(f),
                           finite_count(f)});
              }
            }
            if (sinks.text()) {
              print_format_table(std::cout, false);
              std::cout << "u = unit roundoff 2^-p, epsilon = 2^(1-p); enc: ieee (inf, NaN), fn (NaN only, "
                           "all-ones), fnuz (NaN = 0x80, no -0), finite (neither)\n";
            }
            sinks.commit();
          }};
}

}  // namespace fpemu::cli
