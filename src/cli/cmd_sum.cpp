// fpemu sum --format FMT --n N [--method M|all] [--block B] [accumulator options] [workload
// options] [--input FILE]: sums random data, or the user's (--input), with analysis::sum and prints, per method, the computed sum, the exact sum, the
// error and every error bound of the method next to it (analysis/reference/summation.hpp, bounds.hpp).
//
// Data: N values drawn from --dist (workload.hpp), or the values of --input FILE (data_file.hpp:
// NumPy .npy or text), each rounded into --format with round-to-nearest-even, saturating at the
// largest finite value; --first X replaces the first value by X before
// that rounding (e.g. --first 1 with tiny positive data shows stagnation). With --samples S the
// run is repeated with seeds S0, S0+1, ...; each method reports the mean and the max relative
// error, and the detail lines of the sample with the largest relative error.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "analysis/reference/summation.hpp"
#include "common.hpp"
#include "data_file.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using analysis::sum_method;

constexpr std::int64_t kMaxN = 100'000'000;
constexpr std::int64_t kMaxBlock = std::int64_t{1} << 30;

struct sum_cli_options {
  std::string format;  // empty: bf16, or the preset's input format
  std::size_t n = 1000;
  std::string method = "all";
  int block = 32;
  std::string first;  // empty: not given
  double lambda = 3;
  std::string input;  // empty: random data
  accumulator_options acc;
  workload_options work;
};

// One method over all samples.
struct method_run {
  analysis::sum_options options;
  double sum_rel = 0;
  double max_rel = -1;
  std::uint64_t worst_seed = 0;
  analysis::sum_result worst;
  std::uint64_t valid = 0, violations = 0;
  double max_ratio = -1;  // max |error| / deterministic bound over the samples where it is valid

  bool have = false;

  void add(const analysis::sum_result& r, std::uint64_t seed) {
    sum_rel += r.relative_error;
    const bool worse = !have || r.relative_error > max_rel || (std::isnan(r.relative_error) && !std::isnan(max_rel));
    if (worse) {
      have = true;
      max_rel = r.relative_error;
      worst_seed = seed;
      worst = r;
    }
    if (!r.bounds.empty() && r.bounds.front().valid) {
      ++valid;
      const double bound = r.bounds.front().absolute;
      const double err = std::fabs(r.error);
      if (err > bound) ++violations;
      const double ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
      if (ratio > max_ratio) max_ratio = ratio;
    }
  }
};

bool needs_format_accumulator(sum_method m) {
  return m == sum_method::pairwise || m == sum_method::blocked || m == sum_method::kahan ||
         m == sum_method::neumaier || m == sum_method::stochastic;
}

std::string probability_text(double p, bool valid) {
  if (p >= 1) return "deterministic";
  if (!valid || !(p > 0)) return "probabilistic";
  char buf[40];
  std::snprintf(buf, sizeof buf, "P >= %.6f", std::floor(p * 1e6) / 1e6);  // rounded down
  return buf;
}

std::vector<sum_method> choose_methods(const std::string& name, const accumulator_choice& acc, bool promote_given) {
  const accumulator_model& m = acc.model;
  const std::string what = acc.preset ? "--preset " + acc.preset->name : "--acc exact";
  if (name == "all") {
    if (m.promote_every > 0) return {sum_method::recursive};  // the model itself promotes
    if (m.kind != accumulator_kind::format) return {sum_method::recursive, sum_method::promoted};
    return {sum_method::recursive, sum_method::pairwise, sum_method::blocked,   sum_method::kahan,
            sum_method::neumaier,  sum_method::promoted, sum_method::stochastic};
  }
  const expected<sum_method> parsed = analysis::parse_sum_method(name);
  if (!parsed) fail("--method: " + parsed.message() + ", or all");
  const sum_method method = *parsed;
  if (needs_format_accumulator(method) && m.kind != accumulator_kind::format)
    fail("--method " + name + " needs a format accumulator (--acc FORMAT), not " + what);
  if (needs_format_accumulator(method) && m.promote_every > 0)
    fail("--method " + name + " does not promote: " +
         (promote_given ? "drop --promote " + std::to_string(m.promote_every)
                        : "preset " + (acc.preset ? acc.preset->name : std::string("?")) + " promotes every " +
                              std::to_string(m.promote_every)) +
         " (recursive and promoted do)");
  return {method};
}

void print_bound(const analysis::bound_line& b) {
  std::cout << "  bound        " << probability_text(b.probability, b.valid) << "  " << b.name << ": coefficient "
            << num(b.coefficient) << ", absolute " << num(b.absolute) << ", " << (b.valid ? "valid" : "not valid")
            << " (" << b.condition << ")\n";
}

void run_sum(const sum_cli_options& o) {
  const workload w = resolve_workload(o.work);
  const accumulator_choice acc = resolve_accumulator(o.acc, "bf16");
  const format in = o.format.empty() ? (acc.preset ? acc.preset->a : formats::bf16) : require_format(o.format);
  const std::vector<double> data = o.input.empty() ? std::vector<double>{} : read_vector("--input", o.input).values;
  const std::size_t n = o.input.empty() ? o.n : data.size();
  const int block = o.block;
  const double lambda = o.lambda;
  const bool has_first = !o.first.empty();
  const double first = has_first ? std::stod(o.first) : 0.0;  // checked by real_check
  const std::vector<sum_method> methods = choose_methods(o.method, acc, !o.acc.promote.empty());

  std::vector<method_run> runs(methods.size());
  for (std::size_t i = 0; i < methods.size(); ++i) {
    analysis::sum_options& so = runs[i].options;
    so.method = methods[i];
    so.input = in;
    so.acc = acc.model;
    so.block = methods[i] == sum_method::promoted && acc.model.promote_every > 0 ? acc.model.promote_every : block;
    so.lambda = lambda;
  }

  const rounding to_input{round_mode::nearest_even, overflow_policy::saturate};
  std::vector<std::uint32_t> x(n);
  progress bar("sum", w.samples * runs.size());
  for (std::uint64_t s = 0; s < w.samples; ++s) {
    const std::uint64_t seed = w.sample_seed(s);
    sampler draw(w, seed);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = data.empty() ? draw() : data[i];
      x[i] = from(in, i == 0 && has_first ? first : v, to_input).code;
    }
    for (method_run& r : runs) {
      r.options.sr = sr_stream{seed, 0, 0};
      const expected<analysis::sum_result> result = analysis::sum(x, r.options);
      if (!result) fail("sum: " + result.message());
      r.add(*result, seed);
      bar.step();
    }
  }
  bar.finish();

  output_sinks sinks(o.work.output);
  table_writer table(sinks, {"method", "n", "input", "accumulator", "samples", "seed", "value", "exact", "error",
                             "rel_error", "mean_rel_error", "max_rel_error", "bound", "bound_coefficient",
                             "bound_absolute", "bound_valid", "max_error_over_bound", "bound_violations"});
  for (const method_run& r : runs) {
    const analysis::sum_result& b = r.worst;
    const analysis::bound_line none{};
    const analysis::bound_line& d = b.bounds.empty() ? none : b.bounds.front();
    table.row({std::string(analysis::to_string(r.options.method)), n, to_string(in), describe(acc), w.samples,
               r.worst_seed, b.value, b.exact, b.error, b.relative_error,
               r.sum_rel / static_cast<double>(w.samples), r.max_rel, d.name, d.coefficient, d.absolute, d.valid,
               r.max_ratio >= 0 ? cell(r.max_ratio) : cell(), r.violations});
  }
  table.finish();
  sinks.commit();
  if (!sinks.text()) return;

  std::cout << "fpemu sum: " << n << ' ' << to_string(in) << " values from "
            << (data.empty() ? w.describe() + ", " + w.seeds() : quote(o.input));
  if (has_first) std::cout << ", x_0 = " << exact_num(first);
  std::cout << "\naccumulator: " << describe(acc) << '\n';
  for (const method_run& r : runs) {
    const analysis::sum_result& b = r.worst;
    std::cout << "\nmethod " << analysis::to_string(r.options.method);
    if (r.options.method == sum_method::blocked) std::cout << " (b = " << r.options.block << ")";
    if (r.options.method == sum_method::promoted) std::cout << " (Nc = " << r.options.block << ")";
    std::cout << '\n';
    if (w.samples > 1) {
      std::cout << "  mean_rel_error  " << num(r.sum_rel / static_cast<double>(w.samples)) << " over " << w.samples
                << " samples\n"
                << "  max_rel_error   " << num(r.max_rel) << " (seed " << r.worst_seed
                << "; the lines below are for this sample)\n";
    }
    std::cout << "  value        " << exact_num(b.value) << '\n'
              << "  exact        " << exact_num(b.exact) << "  (sum |x_i| = " << exact_num(b.abs_sum) << ")\n"
              << "  error        " << exact_num(b.error) << "  (computed - exact)\n"
              << "  rel_error    " << num(b.relative_error) << '\n';
    if (b.flags != 0) std::cout << "  flags        " << flags_to_string(b.flags) << '\n';
    for (const analysis::bound_line& line : b.bounds) print_bound(line);
    if (w.samples > 1) {
      std::cout << "  violations   " << r.violations << " of the " << r.valid
                << " samples with a valid deterministic bound exceed it";
      if (r.max_ratio >= 0) std::cout << "; max |error|/bound = " << num(r.max_ratio);
      std::cout << '\n';
    }
  }
}

}  // namespace

command add_sum(CLI::App& parent) {
  auto o = std::make_shared<sum_cli_options>();
  CLI::App* app = parent.add_subcommand("sum", "Sum random data by several methods: error next to its bounds");
  add_format_option(*app, o->format, "Format of the summands")->default_str("bf16, or the --preset's input format");
  app->add_option("--n", o->n, "Number of summands (random data)")
      ->transform(integer_check(1, kMaxN))
      ->capture_default_str()
      ->type_name("N");
  app->add_option("--input", o->input, "Sum the values of FILE instead of random data: NumPy .npy (1-D, float32 or "
                                       "float64) or text (numbers separated by blanks)")
      ->type_name("FILE");
  app->add_option("--method", o->method, "Summation method, or all (every method that applies to the accumulator)")
      ->check(parser_check(
          [](const std::string& in) {
            if (in == "all") return std::string{};
            const auto m = analysis::parse_sum_method(in);
            return m ? std::string{} : m.message() + ", or all";
          },
          "recursive|pairwise|blocked|kahan|neumaier|promoted|stochastic|all"))
      ->capture_default_str()
      ->type_name("M");
  app->add_option("--block", o->block, "Block size b of blocked, chunk size Nc of promoted")
      ->transform(integer_check(1, kMaxBlock))
      ->capture_default_str()
      ->type_name("B");
  app->add_option("--first", o->first, "Replace the first value by X (before rounding into --format)")
      ->transform(real_check(-kInf, kInf))
      ->type_name("X");
  app->add_option("--lambda", o->lambda, "lambda of the probabilistic bounds")
      ->transform(real_check(0, kInf, true))
      ->capture_default_str()
      ->type_name("L");
  add_accumulator_options(*app, o->acc, "bf16");
  add_workload_options(*app, o->work);
  app->footer(
      "Usage: fpemu sum [--format FMT] [--n N | --input FILE] [--method M|all] [--block B]\n"
      "       [--acc FMT|exact|PRESET [--acc-rounding MODE] [--sr-bits K] | --preset NAME] [--promote N]\n"
      "       [--dist D --mu X --sigma X --scale X] [--seed S] [--samples N] [--first X] [--csv FILE]\n"
      "       [--json FILE]\n"
      "Draws N values (--dist), or reads them from --input FILE, rounds each into --format (nearest-even,\n"
      "saturating) and sums them by each method with analysis::sum. Per method it prints the computed\n"
      "sum (value), the exact sum, the\n"
      "error (computed - exact), the relative error, and every bound of the method: its name, the\n"
      "coefficient c, the absolute bound c * sum|x_i|, whether it is valid (with the condition or the\n"
      "reason it is not), and for a probabilistic bound the probability with which it holds.\n"
      "Methods: 'all' runs recursive, pairwise, blocked, kahan, neumaier, promoted and stochastic for a\n"
      "format accumulator; recursive and promoted for --preset and --acc exact; recursive alone when the\n"
      "accumulator promotes (--promote, or a promoting preset). pairwise, blocked, kahan, neumaier and\n"
      "stochastic need a format accumulator without promotion. promoted sums chunks of Nc (--block, or\n"
      "--promote N) in the accumulator and adds each chunk into fp32 (RNE); stochastic is recursive\n"
      "with stochastic rounding (--sr-bits random bits unless --acc-rounding sr-exact).\n"
      "Seeds: sample s draws from std::mt19937_64(S+s); its stochastic roundings take the Philox stream\n"
      "keyed by the same seed S+s. With --samples > 1 each method reports the mean and max relative\n"
      "error, and the lines of the sample with the largest one (its seed), plus how many samples exceed\n"
      "the valid deterministic bound (always 0 unless the theory is wrong).\n"
      "--csv FILE, --json FILE: the columns 'method,n,input,accumulator,samples,seed,value,exact,error,\n"
      "rel_error,mean_rel_error,max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,\n"
      "max_error_over_bound,bound_violations' and one row per method (value..bound_valid: the sample\n"
      "with the largest relative error; bound: the deterministic one); '-' writes them to stdout instead\n"
      "of the report. --input FILE refuses the options of random data (--n, --samples, --dist, ...).");
  return {app, [o, app](const std::vector<std::string>& rest) {
            no_trailing("sum", rest);
            if (!o->input.empty()) refuse_random_options(*app, "--input", {"--n"});
            run_sum(*o);
          }};
}

}  // namespace fpemu::cli
