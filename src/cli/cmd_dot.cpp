// fpemu dot --a-format FMT --b-format FMT --k K [accumulator options] [--scaling S] [workload
// options] [--a-input FILE --b-input FILE]: one dot product of random vectors, or of the user's
// (data_file.hpp), as analysis::dot computes it, its exact value, the error and the bounds that
// apply.
//
// Per sample: a and b (K floats each, drawn in that order, or read and rounded to the nearest
// binary32: the "float data" of the report) are quantised with analysis::quantise
// (nearest-even, saturating; --scaling none just rounds), the dot product is computed with
// analysis::dot, and analysis::analyse_dot (analysis/reference/dot_analysis.hpp) gives the
// error against the exact dot product of the quantised values and of the float data, and the
// bounds that apply, each valid or not with the reason; analysis::quantisation_loss_of counts the
// non-zero inputs that quantise underflowed to zero or saturated (over a and b of every sample),
// as fpemu gemm reports them, so that a quantisation that loses everything cannot read as exact.
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
#include "data_file.hpp"
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
  std::uint64_t k = 4096;
  std::string scaling_name;  // empty: none, or the block-scaled preset's
  std::string a_input, b_input;  // empty: random data
  accumulator_options acc;
  workload_options work;
};

struct dot_setup {
  analysis::dot_problem problem;
  accumulator_choice acc;
  std::vector<float> xa, xb;  // the user's vectors; empty: random data
};

struct sample_result {
  std::uint64_t seed = 0;
  analysis::dot_report report;
  analysis::quantisation_loss lost;  // of a and b
};

sample_result run_sample(const dot_setup& s, const workload& w, std::uint64_t seed) {
  const analysis::dot_problem& p = s.problem;
  const int k = static_cast<int>(p.k);
  sampler draw(w, seed);
  const std::vector<float> xa = s.xa.empty() ? draw_floats(draw, p.k) : s.xa;
  const std::vector<float> xb = s.xb.empty() ? draw_floats(draw, p.k) : s.xb;
  const analysis::scaled_matrix a = value_or_fail(analysis::quantise(xa, 1, k, p.a_format, p.scale_kind, true), "A");
  const analysis::scaled_matrix b = value_or_fail(analysis::quantise(xb, k, 1, p.b_format, p.scale_kind, false), "B");
  analysis::gemm_options go;
  go.acc = p.model;
  go.out = p.out;
  go.out_rounding = p.out_rounding;
  go.threads = 1;
  go.sr = sr_stream{seed, 0, 0};
  const std::uint32_t code = value_or_fail(analysis::dot(a, b, go), "dot");
  return {seed, analysis::analyse_dot(p, xa, xb, a, b, code, go.sr), analysis::quantisation_loss_of(xa, a, xb, b)};
}

// Summary over the samples.
struct dot_summary {
  double sum_rel = 0, max_rel = -1;
  bool have = false;
  sample_result worst;
  std::uint64_t valid = 0, violations = 0, valid_orig = 0, violations_orig = 0;
  double max_ratio = -1, max_ratio_orig = -1;
  analysis::quantisation_loss lost;  // over all samples

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
    lost += sample.lost;
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
  s.k = o.k;
  if (!o.a_input.empty()) {
    // Read as binary32, the precision of the random data's "original" values.
    const data_array a = read_vector("--a-input", o.a_input), b = read_vector("--b-input", o.b_input);
    if (a.cols != b.cols)
      fail("--a-input " + quote(o.a_input) + " holds " + std::to_string(a.cols) + " values but --b-input " +
           quote(o.b_input) + " holds " + std::to_string(b.cols) + ": a dot product needs vectors of one length");
    if (a.cols > static_cast<std::size_t>(kMaxK))
      fail("--a-input " + quote(o.a_input) + " holds " + std::to_string(a.cols) + " values: at most " +
           std::to_string(kMaxK));
    for (const double v : a.values) setup.xa.push_back(static_cast<float>(v));
    for (const double v : b.values) setup.xb.push_back(static_cast<float>(v));
    s.k = a.cols;
  }
  s.scale_kind = require_scaling(o.scaling_name, acc);
  s.model = model_for_scaling(acc, s.scale_kind, !o.acc.promote.empty());
  // A block-scaled MMA takes NVFP4's tensor scales in its epilogue: one more rounding.
  s.scaled_epilogue = s.scale_kind == scaling::nvfp4;
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
  progress bar("dot", w.samples);
  for (std::uint64_t i = 0; i < w.samples; ++i) {
    sum.add(run_sample(setup, w, w.sample_seed(i)));
    bar.step();
  }
  bar.finish();
  const analysis::dot_report& r = sum.worst.report;
  const std::uint64_t worst_seed = sum.worst.seed;
  const double mean = sum.sum_rel / static_cast<double>(w.samples);

  output_sinks sinks(o.work.output);
  table_writer table(sinks, {"a_format", "b_format", "k", "accumulator", "scaling", "out", "samples", "seed", "value",
                             "exact", "error", "rel_error", "mean_rel_error", "max_rel_error", "bound",
                             "bound_coefficient", "bound_absolute", "bound_valid", "max_error_over_bound",
                             "bound_violations", "exact_original", "error_original", "rel_error_original",
                             "bound_original_absolute", "bound_original_valid", "bound_original_violations",
                             "underflowed", "saturated"});
  table.row({to_string(s.a_format), to_string(s.b_format), s.k, describe(acc),
             std::string(analysis::to_string(s.scale_kind)), to_string(s.out), w.samples, worst_seed, r.value, r.exact,
             r.error, r.relative, mean, sum.max_rel, r.bound.name, r.bound.coefficient, r.bound.absolute, r.bound.valid,
             sum.max_ratio >= 0 ? cell(sum.max_ratio) : cell(), sum.violations, r.exact_original, r.error_original,
             r.relative_original, r.bound_original.absolute, r.bound_original.valid, sum.violations_orig,
             sum.lost.fraction(sum.lost.underflowed), sum.lost.fraction(sum.lost.saturated)});
  table.finish();
  sinks.commit();
  if (!sinks.text()) return;

  std::cout << "fpemu dot: K = " << s.k << ", A " << to_string(s.a_format) << ", B " << to_string(s.b_format) << ", scaling "
            << analysis::to_string(s.scale_kind) << "; data "
            << (setup.xa.empty() ? w.describe() + ", " + w.seeds() : quote(o.a_input) + " . " + quote(o.b_input))
            << '\n'
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
  std::cout << "  inputs: " << num(sum.lost.fraction(sum.lost.underflowed)) << " of the non-zero ones underflowed to 0, "
            << num(sum.lost.fraction(sum.lost.saturated)) << " saturated (beyond the largest finite value times their scale"
            << (w.samples > 1 ? "; over all samples" : "") << ")\n";
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
  app->add_option("--a-format", o->a_format, "Format of a")
      ->check(format_check())
      ->default_str("e4m3fn, or the --preset's")
      ->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of b")
      ->check(format_check())
      ->default_str("e4m3fn, or the --preset's")
      ->type_name("FMT");
  app->add_option("--k", o->k, "Length K (random data)")
      ->transform(integer_check(1, kMaxK))
      ->capture_default_str()
      ->type_name("K");
  app->add_option("--a-input", o->a_input, "Vector a from FILE instead of random data: NumPy .npy (1-D, float32 "
                                           "or float64) or text; read as binary32")
      ->type_name("FILE");
  app->add_option("--b-input", o->b_input, "Vector b from FILE (with --a-input)")->type_name("FILE");
  app->add_option("--scaling", o->scaling_name,
                  "Block scaling: none (just round), tensor (one fp32 scale per vector), tile128, block128 "
                  "(fp32 scale per 128 along K), mx32 (e8m0 scale per 32), nvfp4 (e4m3fn per 16 under an fp32 tensor scale; "
                  "with a *-mxf4nvf4 preset)")
      ->transform(choice_check({"none", "tensor", "tile128", "block128", "mx32", "nvfp4"}))
      ->default_str("none, or a block-scaled --preset's (mx32, nvfp4)")
      ->type_name("S");
  add_accumulator_options(*app, o->acc, "h100-e4m3");
  add_workload_options(*app, o->work);
  app->footer(
      "Usage: fpemu dot [--a-format FMT] [--b-format FMT] [--k K | --a-input FILE --b-input FILE]\n"
      "       [--acc FMT|exact|PRESET [--acc-rounding MODE] [--sr-bits K] | --preset NAME] [--promote N]\n"
      "       [--scaling S] [--dist D --mu X --sigma X --scale X] [--seed S] [--samples N] [--csv FILE]\n"
      "       [--json FILE]\n"
      "Draws a and b (K values each), or reads them (--a-input, --b-input), quantises them\n"
      "(analysis::quantise: nearest-even, saturating),\n"
      "computes the dot product with analysis::dot and prints: value; exact, the exact dot product of\n"
      "the quantised values with their scales applied; error (computed - exact) and rel_error; the\n"
      "bound on that error (gamma_K(u_acc) for a format accumulator, truncating_block_dot for a preset,\n"
      "a promoted_sum-like composition with promotion or group scaling, composed with the final\n"
      "rounding where it may be inexact; see analysis/reference/dot_analysis.hpp); then exact_original,\n"
      "error_original and\n"
      "rel_error_original against the float data before quantisation, and bound_original, the\n"
      "dot_lowprec_inputs bound 2u_in + u_in^2 + c (1+u_in)^2 (c: the bound above), plus a term for\n"
      "inputs quantised below the normal range. Each bound: coefficient, absolute bound, valid or not\n"
      "(with the condition or the reason). Then the fractions of the non-zero inputs of a and b that\n"
      "quantisation underflowed to 0 and that saturated (beyond the format's largest finite value\n"
      "times their scale), over all samples, as fpemu gemm reports them.\n"
      "The result's format: the preset's output (fp32; bf16 for h100-e4m3-deepseek), the fp32\n"
      "register with promotion or group scaling, else the accumulator format. Group scalings\n"
      "(tile128, block128: 128; mx32: 32) fold each group into fp32: --promote must then equal the\n"
      "group size or be left out.\n"
      "Seeds: sample s draws from std::mt19937_64(S+s) (a, then b); its stochastic roundings take the\n"
      "Philox stream keyed by S+s. --samples > 1: mean and max relative error; the lines are for the\n"
      "sample with the largest one.\n"
      "--csv FILE, --json FILE ('-': stdout, instead of the report): the columns 'a_format,b_format,k,\n"
      "accumulator,scaling,out,samples,seed,value,exact,error,\n"
      "rel_error,mean_rel_error,max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,\n"
      "max_error_over_bound,bound_violations,exact_original,error_original,rel_error_original,\n"
      "bound_original_absolute,bound_original_valid,bound_original_violations,underflowed,saturated' and\n"
      "one row.\n"
      "--a-input refuses the options of random data (--k, --samples, --dist, ...).");
  return {app, [o, app](const std::vector<std::string>& rest) {
            no_trailing("dot", rest);
            if (o->a_input.empty() != o->b_input.empty())
              fail(std::string(o->a_input.empty() ? "--b-input" : "--a-input") + " needs " +
                   (o->a_input.empty() ? "--a-input" : "--b-input") + ": give both vectors, or neither");
            if (!o->a_input.empty()) refuse_random_options(*app, "--a-input", {"--k"});
            run_dot(*o);
          }};
}

}  // namespace fpemu::cli
