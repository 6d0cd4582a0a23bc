// fpemu gemm --m M --n N --k K [--a-format FMT --b-format FMT] [accumulator options] [--scaling S]
// [--out FMT --out-round MODE] [--alpha X --beta X] [--threads T] [workload options]:
// D = alpha A B + beta C with analysis::gemm on random data, checked against the exact GEMM.
//
// Per sample: A (M x K), B (K x N) and, when beta != 0, C (M x N) are drawn in that order
// (row-major); A and B are quantised with analysis::quantise (nearest-even, saturating), C is
// rounded into --out (nearest-even, saturating). The reference for output (i, j) is
// alpha sum_k (a_ik s_a,ik)(b_kj s_b,kj) + beta c_ij, exact (fpemu::exact_accumulator, one per
// output, exact products); the relative error of d_ij is |d_ij - exact| / |exact| (0 when both
// are 0). Reported: the max and the mean over all outputs of all samples, a checksum of the
// output codes (FNV-1a over the 32-bit codes in row-major order, samples in order), the time
// analysis::gemm took (the exact reference is not timed) and the rate in products per second
// (M N K per sample). The results do not depend on --threads (analysis::gemm computes each
// output in one thread in K order); only the time does.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/gemm.hpp"
#include "common.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using analysis::scaling;

constexpr std::int64_t kMaxGemmDim = 65536;
constexpr std::int64_t kMaxGemmElements = std::int64_t{1} << 24;
constexpr double kMinScalar = 0x1p-100, kMaxScalar = 0x1p100;

struct gemm_cli_options {
  std::string m = "64", n = "64", k = "512";
  std::string a_format, b_format;  // empty: bf16, or the preset's
  std::string scaling_name = "none";
  std::string out, out_round;      // empty: fp32 (the preset's output) and rne
  std::string alpha = "1", beta = "0";
  std::string threads;             // empty: the hardware's thread count
  accumulator_options acc;
  workload_options work;
};

double parse_scalar(const std::string& text, const char* option) {
  const double v = parse_real(text, option);
  const double a = std::fabs(v);
  if (v != 0 && (a < kMinScalar || a > kMaxScalar))
    fail(std::string(option) + " " + quote(text) + " is out of range: valid 0, or a magnitude in 2^-100..2^100");
  return v;
}

void run_gemm(const gemm_cli_options& o) {
  const workload w = resolve_workload(o.work);
  const accumulator_choice acc = resolve_accumulator(o.acc, "fp32");
  const format fa = o.a_format.empty() ? (acc.preset ? acc.preset->a : formats::bf16)
                                       : value_or_fail(parse_format(o.a_format), "--a-format");
  const format fb = o.b_format.empty() ? (acc.preset ? acc.preset->b : formats::bf16)
                                       : value_or_fail(parse_format(o.b_format), "--b-format");
  const int M = static_cast<int>(parse_integer(o.m, "--m", 1, kMaxGemmDim));
  const int N = static_cast<int>(parse_integer(o.n, "--n", 1, kMaxGemmDim));
  const int K = static_cast<int>(parse_integer(o.k, "--k", 1, kMaxGemmDim));
  auto check_size = [](const char* what, const char* dims, std::int64_t count) {
    if (count > kMaxGemmElements)
      fail(std::string(what) + " would have " + dims + " = " + std::to_string(count) + " elements: at most " +
           std::to_string(kMaxGemmElements) + " (2^24) per matrix");
  };
  check_size("A", "--m x --k", std::int64_t{M} * K);
  check_size("B", "--k x --n", std::int64_t{K} * N);
  check_size("D", "--m x --n", std::int64_t{M} * N);
  const scaling scale_kind = require_scaling(o.scaling_name);
  const accumulator_model model = model_for_scaling(acc, scale_kind, !o.acc.promote.empty());
  const format out = o.out.empty() ? (acc.preset ? acc.preset->output : formats::fp32)
                                   : value_or_fail(parse_format(o.out), "--out");
  rounding out_rounding = acc.preset && o.out.empty() ? acc.preset->output_rounding : rounding{};
  if (!o.out_round.empty()) out_rounding.mode = value_or_fail(parse_round_mode(o.out_round), "--out-round");
  if (auto why = check(out, out_rounding)) fail("--out-round: " + *why);
  const double alpha = parse_scalar(o.alpha, "--alpha");
  const double beta = parse_scalar(o.beta, "--beta");
  const unsigned hw = std::thread::hardware_concurrency();
  const int threads = o.threads.empty() ? static_cast<int>(std::clamp(hw, 1u, 1024u))
                                        : static_cast<int>(parse_integer(o.threads, "--threads", 1, 1024));

  const auto MN = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
  const auto MK = static_cast<std::size_t>(M) * static_cast<std::size_t>(K);
  const auto KN = static_cast<std::size_t>(K) * static_cast<std::size_t>(N);
  const rounding to_out{round_mode::nearest_even, overflow_policy::saturate};
  double max_rel = -1, sum_rel = 0;
  bool have = false;
  double elapsed = 0;
  std::uint64_t checksum = 0xcbf29ce484222325ull;  // FNV-1a offset basis
  analysis::gemm_report worst;  // the sample with the largest normwise error
  bool have_normwise = false;
  std::uint64_t worst_seed = w.seed;

  progress_meter progress(w.progress, w.samples);
  for (std::uint64_t s = 0; s < w.samples; ++s) {
    const std::uint64_t seed = w.sample_seed(s);
    progress.update(s + 1, "gemm");
    sampler draw(w, seed);
    const std::vector<float> xa = draw_floats(draw, MK), xb = draw_floats(draw, KN);
    std::vector<std::uint32_t> c;
    if (beta != 0) {
      c.resize(MN);
      for (std::uint32_t& code : c) code = from(out, draw(), to_out).code;
    }
    const analysis::scaled_matrix a = value_or_fail(analysis::quantise(xa, M, K, fa, scale_kind, true), "A");
    const analysis::scaled_matrix b = value_or_fail(analysis::quantise(xb, K, N, fb, scale_kind, false), "B");

    analysis::gemm_options go;
    go.acc = model;
    go.out = out;
    go.out_rounding = out_rounding;
    go.alpha = alpha;
    go.beta = beta;
    go.threads = threads;
    go.sr = sr_stream{seed, 0, 0};
    const auto t0 = std::chrono::steady_clock::now();
    const expected<std::vector<std::uint32_t>> d = analysis::gemm(a, b, c, go);
    elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!d) fail(d.message());

    // The exact GEMM of the quantised inputs, the errors and the normwise bound.
    progress.update(s + 1, "exact reference");
    const analysis::gemm_report report = analysis::analyse_gemm(a, b, c, go, *d);
    const std::vector<double>& rel = report.relative;
    if (!have_normwise || report.normwise > worst.normwise || (std::isnan(report.normwise) && !std::isnan(worst.normwise))) {
      have_normwise = true;
      worst = report;
      worst.relative.clear();
      worst_seed = seed;
    }
    for (std::size_t ij = 0; ij < MN; ++ij) {
      const double r = rel[ij];
      sum_rel += r;
      if (!have || r > max_rel || (std::isnan(r) && !std::isnan(max_rel))) {
        have = true;
        max_rel = r;
      }
      for (int byte = 0; byte < 4; ++byte) {
        checksum ^= ((*d)[ij] >> (8 * byte)) & 0xff;
        checksum *= 0x100000001b3ull;
      }
    }
  }
  progress.finish();

  const double outputs = static_cast<double>(MN) * static_cast<double>(w.samples);
  const double mean_rel = sum_rel / outputs;
  const double products = outputs * K;
  const double rate = elapsed > 0 ? products / elapsed : std::numeric_limits<double>::infinity();
  char sum_text[24];
  std::snprintf(sum_text, sizeof sum_text, "0x%016llx", static_cast<unsigned long long>(checksum));
  const std::string out_text = to_string(out) + " " + std::string(to_string(out_rounding.mode));

  if (w.csv) {
    std::cout << "m,n,k,a_format,b_format,scaling,accumulator,out,alpha,beta,threads,samples,seed,max_rel_error,"
                 "mean_rel_error,normwise_error,normwise_bound,normwise_bound_valid,checksum,elapsed_s,products_per_s\n"
              << M << ',' << N << ',' << K << ',' << csv_field(to_string(fa)) << ',' << csv_field(to_string(fb)) << ','
              << analysis::to_string(scale_kind) << ',' << csv_field(describe(acc)) << ',' << csv_field(out_text)
              << ',' << exact_num(alpha) << ',' << exact_num(beta) << ',' << threads << ',' << w.samples << ',' << w.seed
              << ',' << num(max_rel, 9) << ',' << num(mean_rel, 9) << ',' << num(worst.normwise, 9) << ','
              << num(worst.normwise_bound_relative, 9) << ',' << (worst.normwise_bound.valid ? "yes" : "no") << ','
              << sum_text << ',' << num(elapsed, 6)
              << ',' << num(rate, 6) << '\n';
    return;
  }
  std::cout << "fpemu gemm: D = alpha*A*B + beta*C, M = " << M << ", N = " << N << ", K = " << K << "; A "
            << to_string(fa) << ", B " << to_string(fb) << ", scaling " << analysis::to_string(scale_kind) << "; data "
            << w.describe() << ", " << w.seeds() << '\n'
            << "accumulator: " << describe(acc);
  if (model.promote_every != acc.model.promote_every)
    std::cout << "; promoted every " << model.promote_every << " into fp32 by the group scaling";
  std::cout << "\nout " << out_text << ", alpha " << exact_num(alpha) << ", beta " << exact_num(beta) << ", threads "
            << threads << '\n'
            << "  max_rel_error   " << num(max_rel) << "  (over " << MN << " outputs x " << w.samples
            << " samples, against the exact GEMM of the quantised inputs)\n"
            << "  mean_rel_error  " << num(mean_rel) << '\n'
            << "  normwise_error  " << num(worst.normwise) << "  (||D - X||_F / ||X||_F"
            << (w.samples > 1 ? ", the largest: seed " + std::to_string(worst_seed) : std::string()) << ")\n"
            << "  normwise_bound  " << num(worst.normwise_bound_relative) << "  (c ||S||_F / ||X||_F, c = "
            << worst.normwise_bound.name << " = " << num(worst.normwise_bound.coefficient) << ", "
            << (worst.normwise_bound.valid ? "valid" : "not valid") << ": " << worst.normwise_bound.condition << ")\n"
            << "  checksum        " << sum_text << "  (FNV-1a of the output codes)\n"
            << "  elapsed         " << num(elapsed) << " s  (analysis::gemm only)\n"
            << "  rate            " << num(rate, 4) << " products/s\n";
}

}  // namespace

command add_gemm(CLI::App& parent) {
  auto o = std::make_shared<gemm_cli_options>();
  CLI::App* app = parent.add_subcommand("gemm", "A random GEMM: max and mean relative error against exact, and speed");
  app->add_option("--m", o->m, "Rows of A and D, 1..65536")->capture_default_str()->type_name("M");
  app->add_option("--n", o->n, "Columns of B and D, 1..65536")->capture_default_str()->type_name("N");
  app->add_option("--k", o->k, "Columns of A, rows of B, 1..65536 (each matrix at most 2^24 elements)")
      ->capture_default_str()
      ->type_name("K");
  app->add_option("--a-format", o->a_format, "Format of A (default bf16, or the --preset's)")->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of B (default bf16, or the --preset's)")->type_name("FMT");
  app->add_option("--scaling", o->scaling_name, "Block scaling: none|tensor|tile128|block128|mx32")
      ->capture_default_str()
      ->type_name("S");
  app->add_option("--out", o->out, "Format of C and D (default fp32, or the --preset's output)")->type_name("FMT");
  app->add_option("--out-round", o->out_round, "Rounding of D: rne|rna|rz|ru|rd|rto|sr|sr-exact (default rne)")
      ->type_name("MODE");
  app->add_option("--alpha", o->alpha, "alpha: 0, or a magnitude in 2^-100..2^100")
      ->capture_default_str()
      ->type_name("X");
  app->add_option("--beta", o->beta, "beta: 0 (no C), or a magnitude in 2^-100..2^100")
      ->capture_default_str()
      ->type_name("X");
  app->add_option("--threads", o->threads, "Threads, 1..1024 (default: the hardware's); results do not depend on it")
      ->type_name("T");
  add_accumulator_options(*app, o->acc, "default: --acc fp32");
  add_workload_options(*app, o->work);
  app->footer(
      "Usage: fpemu gemm [--m M] [--n N] [--k K] [--a-format FMT] [--b-format FMT] [--acc FMT|exact|PRESET\n"
      "       [--acc-round MODE] [--sr-bits K] | --preset NAME] [--promote N] [--scaling S] [--out FMT]\n"
      "       [--out-round MODE] [--alpha X] [--beta X] [--threads T] [--dist D --mu X --sigma X\n"
      "       --scale X] [--seed S] [--samples N] [--csv] [--progress]\n"
      "Draws A (M x K), B (K x N) and, when beta != 0, C (M x N), quantises A and B (analysis::quantise:\n"
      "nearest-even, saturating), rounds C into --out, computes D = alpha*A*B + beta*C with\n"
      "analysis::gemm, and compares every output with the exact result of the quantised inputs (scales\n"
      "applied; one exact accumulator per output). Prints max_rel_error and mean_rel_error over all\n"
      "outputs (and samples), normwise_error ||D - X||_F / ||X||_F and its bound c ||S||_F / ||X||_F\n"
      "(S_ij = |alpha| sum_k |a_ik b_kj| + |beta c_ij|, c the accumulation bound of `fpemu dot`; for the\n"
      "sample with the largest normwise error), a checksum of the output codes (FNV-1a), the time analysis::gemm took\n"
      "(the exact reference is not timed) and the rate in products/s (M*N*K per sample).\n"
      "Group scalings (tile128, block128: 128; mx32: 32) fold each group into fp32: --promote must\n"
      "then equal the group size or be left out.\n"
      "Seeds: sample s draws from std::mt19937_64(S+s) (A, B, then C); stochastic roundings take the\n"
      "Philox stream keyed by S+s. The printed results, except elapsed and rate, are the same for any\n"
      "--threads.\n"
      "--csv: the header 'm,n,k,a_format,b_format,scaling,accumulator,out,alpha,beta,threads,samples,\n"
      "seed,max_rel_error,mean_rel_error,normwise_error,normwise_bound,normwise_bound_valid,checksum,\n"
      "elapsed_s,products_per_s' and one row.");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("gemm", rest);
            run_gemm(*o);
          }};
}

}  // namespace fpemu::cli
