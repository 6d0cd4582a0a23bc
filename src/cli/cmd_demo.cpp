// fpemu demo: a short, deterministic tour of the library.
//
//  (1) the named formats;
//  (2) one value rounded in every mode and under every overflow policy, with code, exact value,
//      flags and direction, plus an underflow;
//  (3) rounding errors of N(0,1) samples in round-to-nearest-even and stochastic rounding, next
//      to the unit roundoff u, and a running sum that stagnates under RNE but not under SR;
//  (4) double rounding: a decimal string parsed exactly and rounded once, versus the same
//      string read by strtof/strtod first;
//  (5) the FP8 accumulation experiment of the DeepSeek-V3 chapter with faithful tensor-core
//      models: K = 4096 dot products, then a sweep over K, measured error next to the bounds.
//
// Every random number comes from fpemu::random_bits (Philox) with a fixed seed, so the output is
// the same on every run; the N(0,1) samples use the host's log/cos (Box-Muller), which the demo
// only needs to be repeatable on one machine.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "analysis/reference/accumulation_experiment.hpp"
#include "common.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace fpemu::cli {
namespace {

constexpr std::uint64_t kSeed = 2025;

std::string fmt(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string pad(std::string s, std::size_t n) {
  if (s.size() < n) s.append(n - s.size(), ' ');
  return s;
}

std::string direction(int d) { return d > 0 ? "+1" : (d < 0 ? "-1" : " 0"); }

// Rounds text into f (the CLI path: exact parse, one rounding); the text is a literal of the demo.
rounded round_text(const format& f, std::string_view text, const rounding& r, std::uint64_t random = 0) {
  return value_or_fail(from_string(f, text, r, random));
}

std::string describe(const format& f, const rounded& r) {
  return pad(hex_code(f, r.code), 7) + pad(to_decimal(f, r.code), 22) + pad(flags_to_string(r.flags), 24) +
         direction(r.direction);
}

constexpr round_mode kModes[] = {round_mode::nearest_even,    round_mode::nearest_away, round_mode::toward_zero,
                                 round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd,
                                 round_mode::stochastic,      round_mode::stochastic_exact};

void every_mode(std::ostream& out, const format& f, std::string_view text) {
  out << "  \"" << text << "\" into " << to_string(f) << ":\n";
  out << "    mode      code   exact value           flags                   dir\n";
  for (const round_mode m : kModes) {
    const rounding r{m};
    const rounded x = round_text(f, text, r, random_bits(kSeed, 0, 0));
    out << "    " << pad(std::string(to_string(m)), 10) << describe(f, x) << '\n';
  }
  // Stochastic rounding goes up with probability equal to the distance to the value below, in
  // units of the gap. Count it over many elements of one stream.
  const rounded down = round_text(f, text, rounding{round_mode::toward_zero});
  const rounded up = round_text(f, text, rounding{round_mode::toward_positive});
  const double lo = to_double(f, down.code), hi = to_double(f, up.code);
  const double x = std::strtod(std::string(text).c_str(), nullptr);  // display only
  constexpr int kDraws = 10000;
  int ups = 0;
  for (int i = 0; i < kDraws; ++i)
    ups += round_text(f, text, rounding{round_mode::stochastic}, random_bits(kSeed, 0, i)).code == up.code;
  out << "    sr over " << kDraws << " elements: P(up) = " << fmt("%.4f", static_cast<double>(ups) / kDraws)
      << ", distance (x - down) / (up - down) = " << fmt("%.4f", (x - lo) / (hi - lo)) << '\n';
}

void part_modes(std::ostream& out) {
  out << "(2) One value in every rounding mode (parsed exactly, rounded once; dir = sign of result - x;\n"
         "    sr and sr-exact use random_bits(seed "
      << kSeed << ", stream 0, element 0))\n";
  every_mode(out, formats::e4m3fn, "0.1");
  every_mode(out, formats::bf16, "0.1");

  out << "  \"500\" into e4m3fn (max finite 448) under each overflow policy:\n";
  out << "    mode/policy    code   exact value           flags                   dir\n";
  for (const round_mode m : {round_mode::nearest_even, round_mode::toward_zero}) {
    for (const overflow_policy p : {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan}) {
      const rounded x = round_text(formats::e4m3fn, "500", rounding{m, p});
      out << "    " << pad(std::string(to_string(m)) + "/" + std::string(to_string(p)), 15)
          << describe(formats::e4m3fn, x) << '\n';
    }
  }
  out << "  \"1e-3\" into e4m3fn (min normal 2^-6, min subnormal 2^-9), rne:\n";
  out << "                   " << describe(formats::e4m3fn, round_text(formats::e4m3fn, "1e-3", rounding{})) << '\n';
}

// A standard normal sample for element i: Box-Muller on two Philox words.
double normal_sample(std::uint64_t i) {
  const double u1 = static_cast<double>((random_bits(kSeed, 1, i) >> 11) + 1) * 0x1p-53;  // (0, 1]
  const double u2 = static_cast<double>(random_bits(kSeed, 2, i) >> 11) * 0x1p-53;        // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

void part_errors(std::ostream& out) {
  constexpr int kSamples = 100000;
  out << "(3) Relative error of " << kSamples << " N(0,1) samples (Box-Muller on Philox, seed " << kSeed
      << "),\n    over the samples with |x| >= min normal; u = 2^-p is the unit roundoff:\n";
  out << "    format  u           mode  max |err|/u  mean |err|/u  mean signed err/u\n";
  const format list[] = {formats::e4m3fn, formats::e5m2, formats::bf16, formats::fp16, formats::tf32};
  for (const format& f : list) {
    for (const round_mode m : {round_mode::nearest_even, round_mode::stochastic}) {
      const rounding r{m};
      double max_rel = 0, sum_abs = 0, sum_signed = 0;
      int n = 0;
      for (int i = 0; i < kSamples; ++i) {
        const double x = normal_sample(i);
        if (std::fabs(x) < min_normal(f)) continue;
        const rounded y = from(f, x, r, random_bits(kSeed, 3, i));
        const double rel = (to_double(f, y.code) - x) / x;  // numerator exact (Sterbenz)
        max_rel = std::max(max_rel, std::fabs(rel));
        sum_abs += std::fabs(rel);
        sum_signed += rel;
        ++n;
      }
      const double u = unit_roundoff(f);
      out << "    " << pad(m == round_mode::nearest_even ? to_string(f) : "", 8)
          << pad(m == round_mode::nearest_even ? fmt("%.6g", u) : "", 12) << pad(std::string(to_string(m)), 6)
          << pad(fmt("%.4f", max_rel / u), 13) << pad(fmt("%.4f", sum_abs / n / u), 14)
          << fmt("%+.5f", sum_signed / n / u) << '\n';
    }
  }
  out << "    (rne: |err| <= u, a small bias; sr: |err| < 2u, E[err] = 0 for each x, so the signed\n"
         "     mean is 0 up to sampling noise, about 0.002u here; fp16 ~ tf32: both have p = 11)\n";

  // Stagnation: adding a small increment to a large running sum.
  constexpr int kTerms = 10000;
  out << "  Summing " << kTerms << " copies of 0.001 (rounded into the format) in the format itself:\n";
  for (const format& f : {formats::bf16, formats::fp16}) {
    const rounded step = round_text(f, "0.001", rounding{});
    out << "    " << pad(to_string(f), 6) << "exact " << pad(fmt("%.6g", kTerms * to_double(f, step.code)), 10);
    for (const round_mode m : {round_mode::nearest_even, round_mode::stochastic}) {
      std::uint32_t sum = 0;
      for (int i = 0; i < kTerms; ++i) sum = add(f, sum, step.code, rounding{m}, random_bits(kSeed, 4, i)).code;
      out << to_string(m) << " " << pad(fmt("%.6g", to_double(f, sum)), 10);
    }
    out << '\n';
  }
}

void part_double_rounding(std::ostream& out) {
  const format& f = formats::e4m3fn;
  // 0.09765625 is the midpoint of the e4m3fn neighbours 0.09375 (even) and 0.1015625; these
  // strings lie just above it, so the correct result is 0.1015625. A scratch search over
  // midpoint + 10^-k found the shortest strings that float (resp. double) rounding moves exactly
  // onto the midpoint: k = 9 (1e-9 < 2^-28, half a float ulp there) and k = 18 (1e-18 < 2^-57,
  // half a double ulp); the tie then goes to even, 0.09375.
  const char* via_float = "0.097656251";            // midpoint + 1e-9
  const char* via_double = "0.097656250000000001";  // midpoint + 1e-18
  const rounding r{};
  const auto row = [&](const std::string& text, const char* path, const rounded& x, const std::string& note) {
    out << "    " << pad(text, 23) << pad(path, 28) << pad(hex_code(f, x.code), 6) << pad(to_decimal(f, x.code), 11)
        << pad(flags_to_string(x.flags), 8) << note << '\n';
  };
  out << "(4) Double rounding into e4m3fn, rne. The midpoint of 0.09375 (even) and 0.1015625 is 0.09765625:\n";
  out << "    " << pad("text", 23) << pad("path", 28) << pad("code", 6) << pad("value", 11) << "flags\n";
  const double d1 = std::strtod(via_float, nullptr);
  const float f1 = static_cast<float>(d1);
  row(std::string("\"") + via_float + "\"", "exact parse, one rounding", round_text(f, via_float, r), "");
  row("", "strtod -> float -> e4m3fn", from(f, f1, r), "  float = " + fmt("%.9g", f1));
  const double d2 = std::strtod(via_double, nullptr);
  row(std::string("\"") + via_double + "\"", "exact parse, one rounding", round_text(f, via_double, r), "");
  row("", "strtod -> e4m3fn", from(f, d2, r), "  double = " + fmt("%.17g", d2));
}

void part_accumulation(std::ostream& out) {
  constexpr int kSamples = 100;
  const std::vector<int> ks{128, 512, 2048, 4096, 16384, 65536};
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto rows = analysis::accumulation_experiment(ks, kSamples, kSeed, [&](int done, int total) {
    if (tty) std::cerr << "\r  accumulation experiment: sample " << done << "/" << total << std::flush;
  });
  if (tty) std::cerr << "\r" << std::string(60, ' ') << "\r";
  auto bound = [](double b) { return std::isnan(b) ? std::string("-") : std::isinf(b) ? "invalid" : fmt("%.2e", b); };
  out << "(5) FP8 dot products, e4m3fn inputs from N(0, 0.5^2), " << kSamples
      << " samples per K, against the exact sum.\n"
         "    rel = |computed - exact| / |exact| (median, 95th percentile, mean, max: a few samples whose\n"
         "    exact sum nearly cancels make the mean); norm = |computed - exact| / sum|a_i b_i|, which the\n"
         "    bounds (coefficients of sum|a_i b_i|; prob: lambda = 6, probability >= 1 - 2K e^-18) are stated for.\n";
  auto header = [&] {
    out << "    " << pad("accumulator", 36) << pad("med rel", 10) << pad("p95 rel", 10) << pad("mean rel", 10)
        << pad("max rel", 10) << pad("max norm", 10) << pad("bound", 10) << "prob bound\n";
  };
  auto line = [&](const analysis::accumulation_row& r) {
    out << "    " << pad(r.method, 36) << pad(fmt("%.2e", r.median_relative_error), 10)
        << pad(fmt("%.2e", r.p95_relative_error), 10) << pad(fmt("%.2e", r.mean_relative_error), 10)
        << pad(fmt("%.2e", r.max_relative_error), 10) << pad(fmt("%.2e", r.max_normalised_error), 10)
        << pad(bound(r.deterministic_bound), 10) << bound(r.probabilistic_bound) << '\n';
  };
  out << "  K = 4096:\n";
  header();
  for (const auto& r : rows)
    if (r.k == 4096) line(r);
  out << "  Median relative error against K:\n    " << pad("K", 8);
  std::vector<std::string> names;
  for (const auto& r : rows)
    if (r.k == ks.front()) names.push_back(r.method);
  const char* short_names[] = {"fp8", "fastaccum", "deepseek fp32", "deepseek bf16", "fp32"};
  for (std::size_t m = 0; m < names.size() && m < 5; ++m) out << pad(short_names[m], 15);
  out << '\n';
  for (int k : ks) {
    out << "    " << pad(std::to_string(k), 8);
    for (const auto& r : rows)
      if (r.k == k) out << pad(fmt("%.2e", r.median_relative_error), 15);
    out << '\n';
  }
  out << "    (fp8 swamps: products below half an ulp of the running sum vanish; the 14-bit register's\n"
         "     truncation grows with K; promotion every 128 stops the growth, not the loss within a group)\n";
}

void run_demo() {
  std::ostringstream out;
  out << "fpemu demo: bit-exact emulation of floating-point formats\n\n(1) Named formats (fpemu formats shows "
         "more columns; u = unit roundoff)\n";
  print_format_table(out, true);
  out << '\n';
  part_modes(out);
  out << '\n';
  part_errors(out);
  out << '\n';
  part_double_rounding(out);
  out << '\n';
  part_accumulation(out);
  // Columns are padded; drop the trailing blanks of each line.
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    std::cout << line << '\n';
  }
}

}  // namespace

command add_demo(CLI::App& parent) {
  CLI::App* app =
      parent.add_subcommand("demo", "A short tour: formats, rounding modes, SR statistics, double rounding");
  return {app, [](const std::vector<std::string>& rest) {
            no_trailing("demo", rest);
            run_demo();
          }};
}

}  // namespace fpemu::cli
