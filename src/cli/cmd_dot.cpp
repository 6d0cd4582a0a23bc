// fpemu dot --a-format FMT --b-format FMT --k K [accumulator options] [--scaling S] [workload
// options]: one dot product of random vectors as analysis::dot computes it, its exact value, the
// error and the bounds that apply.
//
// Per sample: a and b (K floats each, drawn in that order) are quantised with analysis::quantise
// (nearest-even, saturating; --scaling none just rounds), the dot product is computed with
// analysis::dot, and analysis::analyse_dot (analysis/reference/dot_analysis.hpp) gives the
// error against the exact dot product of the quantised values and of the float data, and the
// bounds that apply, each valid or not with the reason.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "analysis/reference/bounds.hpp"
#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/summation.hpp"
#include "common.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using analysis::scaling;

constexpr std::int64_t kMaxK = 100'000'000;

struct dot_cli_options {
  std::string a_format, b_format;  // empty: e4m3fn, or the preset's
  std::string k = "4096";
  std::string scaling_name = "none";
  accumulator_options acc;
  workload_options work;
};

struct dot_setup {
  analysis::dot_problem problem;
  accumulator_choice acc;
};

struct sample_result {
  std::uint64_t seed = 0;
  analysis::dot_report report;
};

sample_result run_sample(const dot_setup& s, const workload& w, std::uint64_t seed) {
  const analysis::dot_problem& p = s.problem;
  const int k = static_cast<int>(p.k);
  sampler draw(w, seed);
  const std::vector<float> xa = draw_floats(draw, p.k), xb = draw_floats(draw, p.k);
  const analysis::scaled_matrix a = value_or_fail(analysis::quantise(xa, 1, k, p.a_format, p.scale_kind, true), "A");
  const analysis::scaled_matrix b = value_or_fail(analysis::quantise(xb, k, 1, p.b_format, p.scale_kind, false), "B");
  analysis::gemm_options go;
  go.acc = p.model;
  go.out = p.out;
  go.out_rounding = p.out_rounding;
  go.threads = 1;
  go.sr = sr_stream{seed, 0, 0};
  const std::uint32_t code = value_or_fail(analysis::dot(a, b, go), "dot");
  return {seed, analysis::analyse_dot(p, xa, xb, a, b, code, go.sr)};
}

// Summary over the samples.
struct dot_summary {
  double sum_rel = 0, max_rel = -1;
  bool have = false;
  sample_result worst;
  std::uint64_t valid = 0, violations = 0, valid_orig = 0, violations_orig = 0;
  double max_ratio = -1, max_ratio_orig = -1;

  static void tally(const bounds::bound_line& b, double error, std::uint64_t& valid, std::uint64_t& violations,
                    double& max_ratio) {
    if (!b.valid) return;
    ++valid;
    const double e = std::fabs(error);
    if (e > b.absolute) ++violations;
    const double ratio = b.absolute > 0 ? e / b.absolute : (e == 0 ? 0.0 : kInf);
    max_ratio = std::max(max_ratio, ratio);
  }

  void add(const sample_result& sample) {
    const analysis::dot_report& r = sample.report;
    sum_rel += r.relative;
    if (!have || r.relative > max_rel || (std::isnan(r.relative) && !std::isnan(max_rel))) {
      have = true;
      max_rel = r.relative;
      worst = sample;
    }
    tally(r.bound, r.error, valid, violations, max_ratio);
    tally(r.bound_original, r.error_original, valid_orig, violations_orig, max_ratio_orig);
  }
};

void print_bound(const char* key, const bounds::bound_line& b) {
  std::cout << "  " << key << "deterministic  " << b.name << ": coefficient " << num(b.coefficient) << ", absolute "
            << num(b.absolute) << ", " << (b.valid ? "valid" : "not valid") << " (" << b.condition << ")\n";
}

void run_dot(const dot_cli_options& o) {
  const workload w = resolve_workload(o.work);
  dot_setup setup;
  setup.acc = resolve_accumulator(o.acc, "h100-e4m3");
  analysis::dot_problem& s = setup.problem;
  const accumulator_choice& acc = setup.acc;
  s.a_format = o.a_format.empty() ? (acc.preset ? acc.preset->a : formats::e4m3fn)
                                  : value_or_fail(parse_format(o.a_format), "--a-format");
  s.b_format = o.b_format.empty() ? (acc.preset ? acc.preset->b : formats::e4m3fn)
                                  : value_or_fail(parse_format(o.b_format), "--b-format");
  s.k = static_cast<std::uint64_t>(parse_integer(o.k, "--k", 1, kMaxK));
  s.scale_kind = require_scaling(o.scaling_name);
  s.model = model_for_scaling(acc, s.scale_kind, !o.acc.promote.empty());
  if (acc.preset) {
    s.out = acc.preset->output;
    s.out_rounding = acc.preset->output_rounding;
  } else if (s.model.promote_every > 0) {
    s.out = s.model.promoted;
    s.out_rounding = s.model.promoted_rounding;
  } else {
    s.out = s.model.acc;
    s.out_rounding = s.model.acc_rounding;
  }

  dot_summary sum;
  progress_meter progress(w.progress, w.samples);
  for (std::uint64_t i = 0; i < w.samples; ++i) {
    progress.update(i + 1);
    sum.add(run_sample(setup, w, w.sample_seed(i)));
  }
  progress.finish();
  const analysis::dot_report& r = sum.worst.report;
  const std::uint64_t worst_seed = sum.worst.seed;
  const double mean = sum.sum_rel / static_cast<double>(w.samples);

  if (w.csv) {
    std::cout << "a_format,b_format,k,accumulator,scaling,out,samples,seed,value,exact,error,rel_error,mean_rel_error,"
                 "max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,max_error_over_bound,"
                 "bound_violations,exact_original,error_original,rel_error_original,bound_original_absolute,"
                 "bound_original_valid,bound_original_violations\n";
    std::cout << csv_field(to_string(s.a_format)) << ',' << csv_field(to_string(s.b_format)) << ',' << s.k << ','
              << csv_field(describe(acc)) << ',' << analysis::to_string(s.scale_kind) << ','
              << csv_field(to_string(s.out)) << ',' << w.samples << ',' << worst_seed << ',' << exact_num(r.value) << ','
              << exact_num(r.exact) << ',' << exact_num(r.error) << ',' << num(r.relative, 9) << ',' << num(mean, 9) << ','
              << num(sum.max_rel, 9) << ',' << csv_field(r.bound.name) << ',' << exact_num(r.bound.coefficient) << ','
              << exact_num(r.bound.absolute) << ',' << (r.bound.valid ? "yes" : "no") << ','
              << (sum.max_ratio >= 0 ? num(sum.max_ratio, 9) : "") << ',' << sum.violations << ','
              << exact_num(r.exact_original) << ',' << exact_num(r.error_original) << ',' << num(r.relative_original, 9) << ','
              << exact_num(r.bound_original.absolute) << ',' << (r.bound_original.valid ? "yes" : "no") << ','
              << sum.violations_orig << '\n';
    return;
  }

  std::cout << "fpemu dot: K = " << s.k << ", A " << to_string(s.a_format) << ", B " << to_string(s.b_format) << ", scaling "
            << analysis::to_string(s.scale_kind) << "; data " << w.describe() << ", " << w.seeds() << '\n'
            << "accumulator: " << describe(acc);
  if (s.model.promote_every != acc.model.promote_every)
    std::cout << "; promoted every " << s.model.promote_every << " into fp32 by the group scaling";
  std::cout << "\nresult in " << to_string(s.out) << ' ' << to_string(s.out_rounding.mode) << '\n';
  if (w.samples > 1)
    std::cout << "  mean_rel_error  " << num(mean) << " over " << w.samples << " samples\n"
              << "  max_rel_error   " << num(sum.max_rel) << " (seed " << worst_seed
              << "; the lines below are for this sample)\n";
  std::cout << "  value        " << exact_num(r.value) << '\n'
            << "  exact        " << exact_num(r.exact) << "  (quantised inputs, scales applied; sum |a_i b_i| = "
            << exact_num(r.abs_sum) << ")\n"
            << "  error        " << exact_num(r.error) << "  (computed - exact)\n"
            << "  rel_error    " << num(r.relative) << '\n';
  if (r.flags != 0) std::cout << "  flags        " << flags_to_string(r.flags) << '\n';
  print_bound("bound        ", r.bound);
  std::cout << "  exact_original      " << exact_num(r.exact_original) << "  (the float data before quantisation; sum |a_i b_i| = "
            << exact_num(r.abs_sum_original) << ")\n"
            << "  error_original      " << exact_num(r.error_original) << "  (computed - exact_original)\n"
            << "  rel_error_original  " << num(r.relative_original) << '\n';
  print_bound("bound_original  ", r.bound_original);
  if (w.samples > 1) {
    std::cout << "  violations   " << sum.violations << " of the " << sum.valid
              << " samples with a valid bound exceed it";
    if (sum.max_ratio >= 0) std::cout << "; max |error|/bound = " << num(sum.max_ratio);
    std::cout << "\n  violations_original  " << sum.violations_orig << " of " << sum.valid_orig;
    if (sum.max_ratio_orig >= 0) std::cout << "; max |error_original|/bound_original = " << num(sum.max_ratio_orig);
    std::cout << '\n';
  }
}

}  // namespace

command add_dot(CLI::App& parent) {
  auto o = std::make_shared<dot_cli_options>();
  CLI::App* app = parent.add_subcommand("dot", "A dot product of random vectors: error against exact, and bounds");
  app->add_option("--a-format", o->a_format, "Format of a (default e4m3fn, or the --preset's)")->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of b (default e4m3fn, or the --preset's)")->type_name("FMT");
  app->add_option("--k", o->k, "Length K, 1..100000000")->capture_default_str()->type_name("K");
  app->add_option("--scaling", o->scaling_name,
                  "Block scaling: none (just round), tensor (one fp32 scale per vector), tile128, block128 "
                  "(fp32 scale per 128 along K), mx32 (e8m0 scale per 32)")
      ->capture_default_str()
      ->type_name("S");
  add_accumulator_options(*app, o->acc, "default: --preset h100-e4m3");
  add_workload_options(*app, o->work);
  app->footer(
      "Usage: fpemu dot [--a-format FMT] [--b-format FMT] [--k K] [--acc FMT|exact|PRESET [--acc-round MODE]\n"
      "       [--sr-bits K] | --preset NAME] [--promote N] [--scaling S] [--dist D --mu X --sigma X\n"
      "       --scale X] [--seed S] [--samples N] [--csv] [--progress]\n"
      "Draws a and b (K values each), quantises them (analysis::quantise: nearest-even, saturating),\n"
      "computes the dot product with analysis::dot and prints: value; exact, the exact dot product of\n"
      "the quantised values with their scales applied; error (computed - exact) and rel_error; the\n"
      "bound on that error (gamma_K(u_acc) for a format accumulator, truncating_block_dot for a preset,\n"
      "a promoted_sum-like composition with promotion or group scaling, composed with the final\n"
      "rounding where it may be inexact; see analysis/reference/dot_analysis.hpp); then exact_original, error_original and\n"
      "rel_error_original against the float data before quantisation, and bound_original, the\n"
      "dot_lowprec_inputs bound 2u_in + u_in^2 + c (1+u_in)^2 (c: the bound above), plus a term for\n"
      "inputs quantised below the normal range. Each bound: coefficient, absolute bound, valid or not\n"
      "(with the condition or the reason).\n"
      "The result's format: the preset's output (fp32; bf16 for h100-e4m3-deepseek), the fp32\n"
      "register with promotion or group scaling, else the accumulator format. Group scalings\n"
      "(tile128, block128: 128; mx32: 32) fold each group into fp32: --promote must then equal the\n"
      "group size or be left out.\n"
      "Seeds: sample s draws from std::mt19937_64(S+s) (a, then b); its stochastic roundings take the\n"
      "Philox stream keyed by S+s. --samples > 1: mean and max relative error; the lines are for the\n"
      "sample with the largest one.\n"
      "--csv: the header 'a_format,b_format,k,accumulator,scaling,out,samples,seed,value,exact,error,\n"
      "rel_error,mean_rel_error,max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,\n"
      "max_error_over_bound,bound_violations,exact_original,error_original,rel_error_original,\n"
      "bound_original_absolute,bound_original_valid,bound_original_violations' and one row.");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("dot", rest);
            run_dot(*o);
          }};
}

}  // namespace fpemu::cli
