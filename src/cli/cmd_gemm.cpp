// fpemu gemm --m M --n N --k K [--a-format FMT --b-format FMT] [accumulator options] [--scaling S]
// [--out-format FMT --out-rounding MODE] [--alpha X --beta X] [--threads T] [--reference R]
// [workload options] [--a-input FILE --b-input FILE]: D = alpha A B + beta C with analysis::gemm
// on random data, or the user's matrices (data_file.hpp), checked against the exact GEMM.
//
// Per sample: A (M x K), B (K x N) and, when beta != 0, C (M x N) are drawn in that order
// (row-major), or A and B are read (rounded to the nearest binary32, as the random data are
// drawn); A and B are quantised with analysis::quantise (nearest-even, saturating), C is
// rounded into --out (nearest-even, saturating). The reference for output (i, j) is
// alpha sum_k (a_ik s_a,ik)(b_kj s_b,kj) + beta c_ij, exact (fpemu::exact_accumulator, one per
// output, exact products); the relative error of d_ij is |d_ij - exact| / |exact| (0 when both
// are 0). Reported: the max and the mean over all outputs of all samples; the same outputs against
// the exact GEMM of the data before quantisation (analysis::compare_with_original: the max relative
// and the largest normwise error) and the fractions of non-zero inputs that quantise underflowed
// or saturated (analysis::quantisation_loss_of), so that a quantisation that loses everything
// cannot read as exact; a checksum of the
// output codes (FNV-1a over the 32-bit codes in row-major order, samples in order), the time
// analysis::gemm took (the exact reference is not timed) and the rate in products per second
// (M N K per sample). The exact reference costs far more than the GEMM; --reference none skips
// it and reports the checksum, the time and the rate only. The results do not depend on --threads (analysis::gemm computes each
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
#include "data_file.hpp"
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
  int m = 64, n = 64, k = 512;
  std::string a_format, b_format;  // empty: bf16, or the preset's
  std::string scaling_name;  // empty: none, or the block-scaled preset's
  std::string out, out_round;      // empty: fp32 (the preset's output) and rne
  double alpha = 1, beta = 0;
  int threads = 0;                 // 0: the hardware's thread count
  std::string reference = "exact";
  std::string a_input, b_input;    // empty: random data
  accumulator_options acc;
  workload_options work;
};

// alpha and beta: 0, or a magnitude that keeps alpha A B and beta C within double's range.
CLI::Validator scalar_check() {
  return parser_check(
      [](const std::string& in) -> std::string {
        std::string value = in;
        if (std::string why = real_check(-kInf, kInf)(value); !why.empty()) return why;
        const double a = std::fabs(std::stod(value));
        if (a != 0 && (a < kMinScalar || a > kMaxScalar))
          return quote(in) + " is out of range: valid 0, or a magnitude in 2^-100..2^100";
        return {};
      },
      "0 or |X| in 2^-100..2^100");
}

// A matrix of the user's as the binary32 values that random data would be, row-major.
std::vector<float> as_floats(const data_array& m) {
  std::vector<float> v(m.values.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(m.values[i]);
  return v;
}

void run_gemm(const gemm_cli_options& o) {
  const workload w = resolve_workload(o.work);
  const accumulator_choice acc = resolve_accumulator(o.acc, "fp32");
  const format fa = o.a_format.empty() ? (acc.preset ? acc.preset->a : formats::bf16)
                                       : value_or_fail(parse_format(o.a_format), "--a-format");
  const format fb = o.b_format.empty() ? (acc.preset ? acc.preset->b : formats::bf16)
                                       : value_or_fail(parse_format(o.b_format), "--b-format");
  int M = o.m, N = o.n, K = o.k;
  std::vector<float> user_a, user_b;  // empty: random data
  if (!o.a_input.empty()) {
    const data_array a = read_matrix("--a-input", o.a_input), b = read_matrix("--b-input", o.b_input);
    if (a.cols != b.rows)
      fail("--a-input " + quote(o.a_input) + " is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
           " but --b-input " + quote(o.b_input) + " is " + std::to_string(b.rows) + " x " + std::to_string(b.cols) +
           ": A's columns must equal B's rows");
    for (const auto& [what, dim] : {std::pair{"A's rows", a.rows}, {"A's columns", a.cols}, {"B's columns", b.cols}})
      if (dim > static_cast<std::size_t>(kMaxGemmDim))
        fail(std::string(what) + " number " + std::to_string(dim) + ": at most " + std::to_string(kMaxGemmDim));
    M = static_cast<int>(a.rows);
    K = static_cast<int>(a.cols);
    N = static_cast<int>(b.cols);
    user_a = as_floats(a);
    user_b = as_floats(b);
  }
  auto check_size = [](const char* what, const char* dims, std::int64_t count) {
    if (count > kMaxGemmElements)
      fail(std::string(what) + " would have " + dims + " = " + std::to_string(count) + " elements: at most " +
           std::to_string(kMaxGemmElements) + " (2^24) per matrix");
  };
  check_size("A", "--m x --k", std::int64_t{M} * K);
  check_size("B", "--k x --n", std::int64_t{K} * N);
  check_size("D", "--m x --n", std::int64_t{M} * N);
  const scaling scale_kind = require_scaling(o.scaling_name, acc);
  const accumulator_model model = model_for_scaling(acc, scale_kind, !o.acc.promote.empty());
  const format out = o.out.empty() ? (acc.preset ? acc.preset->output : formats::fp32) : require_format(o.out);
  rounding out_rounding = acc.preset && o.out.empty() ? acc.preset->output_rounding : rounding{};
  if (!o.out_round.empty()) out_rounding.mode = value_or_fail(parse_round_mode(o.out_round), "--out-rounding");
  if (auto why = check(out, out_rounding)) fail("--out-rounding: " + *why);
  const double alpha = o.alpha;
  const double beta = o.beta;
  const unsigned hw = std::thread::hardware_concurrency();
  const int threads = o.threads == 0 ? static_cast<int>(std::clamp(hw, 1u, 1024u)) : o.threads;
  const bool reference = o.reference == "exact";

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
  // Against the data before quantisation: the largest normwise error and relative error, and the
  // inputs quantise() lost (counts over A and B of every sample).
  const bool quantised = !(fa == formats::fp32 && fb == formats::fp32 && scale_kind == scaling::none);
  double normwise_original = -1, max_rel_original = -1;
  analysis::quantisation_loss lost;

  // Per sample 1000 units: the GEMM takes the first 10, the exact references (about 99% of the
  // time) the rest, by the rows done: the quantised inputs' and, when quantise() changed them,
  // the original data's, half each.
  constexpr std::uint64_t kUnits = 1000, kGemmUnits = 10;
  const std::uint64_t reference_units = (kUnits - kGemmUnits) / (quantised ? 2 : 1);
  progress bar(reference ? "gemm and exact reference" : "gemm", w.samples * kUnits);
  for (std::uint64_t s = 0; s < w.samples; ++s) {
    const std::uint64_t seed = w.sample_seed(s);
    sampler draw(w, seed);
    const std::vector<float> xa = user_a.empty() ? draw_floats(draw, MK) : user_a;
    const std::vector<float> xb = user_b.empty() ? draw_floats(draw, KN) : user_b;
    std::vector<std::uint32_t> c;
    if (beta != 0) {
      c.resize(MN);
      for (std::uint32_t& code : c) code = from(out, draw(), to_out).code;
    }
    const analysis::scaled_matrix a = value_or_fail(analysis::quantise(xa, M, K, fa, scale_kind, true), "A");
    const analysis::scaled_matrix b = value_or_fail(analysis::quantise(xb, K, N, fb, scale_kind, false), "B");
    lost += analysis::quantisation_loss_of(xa, a, xb, b);

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

    bar.set(s * kUnits + (reference ? kGemmUnits : kUnits));
    for (std::size_t ij = 0; ij < MN; ++ij)
      for (int byte = 0; byte < 4; ++byte) {
        checksum ^= ((*d)[ij] >> (8 * byte)) & 0xff;
        checksum *= 0x100000001b3ull;
      }
    if (!reference) continue;

    // The exact GEMM of the quantised inputs, the errors and the normwise bound.
    const auto rows_done = [&](std::uint64_t from) {
      return [&bar, from, reference_units](int done, int rows) {
        bar.set(from + reference_units * static_cast<std::uint64_t>(done) / static_cast<std::uint64_t>(std::max(rows, 1)));
      };
    };
    const analysis::gemm_report report = analysis::analyse_gemm(a, b, c, go, *d, rows_done(s * kUnits + kGemmUnits));
    // The same outputs against the data before quantisation (the same report when quantise()
    // changed nothing).
    const analysis::gemm_report original =
        quantised ? analysis::compare_with_original(xa, xb, M, N, K, c, go, *d,
                                                    rows_done(s * kUnits + kGemmUnits + reference_units))
                  : report;
    normwise_original = std::max(normwise_original, original.normwise);
    max_rel_original = std::max(max_rel_original, analysis::largest_relative(original.relative, false));
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
    }
  }
  bar.finish();

  const double outputs = static_cast<double>(MN) * static_cast<double>(w.samples);
  const double mean_rel = sum_rel / outputs;
  const double products = outputs * K;
  const double rate = elapsed > 0 ? products / elapsed : std::numeric_limits<double>::infinity();
  char sum_text[24];
  std::snprintf(sum_text, sizeof sum_text, "0x%016llx", static_cast<unsigned long long>(checksum));
  const std::string out_text = to_string(out) + " " + std::string(to_string(out_rounding.mode));

  // Without the reference the error columns are empty (CSV) or null (JSON).
  const auto if_reference = [reference](cell c) { return reference ? c : cell(); };
  output_sinks sinks(o.work.output);
  const double underflowed_fraction = lost.fraction(lost.underflowed), saturated_fraction = lost.fraction(lost.saturated);
  table_writer table(sinks, {"m", "n", "k", "a_format", "b_format", "scaling", "accumulator", "out", "alpha", "beta",
                             "threads", "samples", "seed", "reference", "max_rel_error", "mean_rel_error",
                             "normwise_error", "normwise_bound", "normwise_bound_valid", "max_rel_error_original",
                             "normwise_error_original", "underflowed", "saturated", "checksum", "elapsed_s",
                             "products_per_s"});
  table.row({M, N, K, to_string(fa), to_string(fb), std::string(analysis::to_string(scale_kind)), describe(acc),
             out_text, alpha, beta, threads, w.samples, w.seed, o.reference, if_reference(max_rel),
             if_reference(mean_rel), if_reference(worst.normwise), if_reference(worst.normwise_bound_relative),
             if_reference(worst.normwise_bound.valid), if_reference(max_rel_original),
             if_reference(normwise_original), underflowed_fraction, saturated_fraction, std::string(sum_text), elapsed,
             rate});
  table.finish();
  sinks.commit();
  if (!sinks.text()) return;

  std::cout << "fpemu gemm: D = alpha*A*B + beta*C, M = " << M << ", N = " << N << ", K = " << K << "; A "
            << to_string(fa) << ", B " << to_string(fb) << ", scaling " << analysis::to_string(scale_kind) << "; data "
            << (user_a.empty() ? w.describe() + ", " + w.seeds() : quote(o.a_input) + " x " + quote(o.b_input))
            << '\n'
            << "accumulator: " << describe(acc);
  if (model.promote_every != acc.model.promote_every)
    std::cout << "; promoted every " << model.promote_every << " into fp32 by the group scaling";
  std::cout << "\nout " << out_text << ", alpha " << exact_num(alpha) << ", beta " << exact_num(beta) << ", threads "
            << threads << '\n';
  if (reference)
    std::cout << "  max_rel_error   " << num(max_rel) << "  (over " << MN << " outputs x " << w.samples
            << " samples, against the exact GEMM of the quantised inputs)\n"
            << "  mean_rel_error  " << num(mean_rel) << '\n'
            << "  normwise_error  " << num(worst.normwise) << "  (||D - X||_F / ||X||_F"
            << (w.samples > 1 ? ", the largest: seed " + std::to_string(worst_seed) : std::string()) << ")\n"
            << "  normwise_bound  " << num(worst.normwise_bound_relative) << "  (c ||S||_F / ||X||_F, c = "
            << worst.normwise_bound.name << " = " << num(worst.normwise_bound.coefficient) << ", "
            << (worst.normwise_bound.valid ? "valid" : "not valid") << ": " << worst.normwise_bound.condition << ")\n"
            << "  max_rel_error_original   " << num(max_rel_original)
            << "  (against the exact GEMM of the data before quantisation)\n"
            << "  normwise_error_original  " << num(normwise_original) << "  (the largest over samples)\n";
  else
    std::cout << "  (no exact reference: --reference none)\n";
  std::cout << "  inputs: " << num(underflowed_fraction) << " of the non-zero ones underflowed to 0, "
            << num(saturated_fraction) << " saturated (beyond the largest finite value times their scale)\n";
  std::cout << "  checksum        " << sum_text << "  (FNV-1a of the output codes)\n"
            << "  elapsed         " << num(elapsed) << " s  (analysis::gemm only)\n"
            << "  rate            " << num(rate, 4) << " products/s\n";
}

}  // namespace

command add_gemm(CLI::App& parent) {
  auto o = std::make_shared<gemm_cli_options>();
  CLI::App* app = parent.add_subcommand("gemm", "A random GEMM: max and mean relative error against exact, and speed");
  const auto dim = [&](const char* name, int& target, const char* help) {
    app->add_option(name, target, help)->transform(integer_check(1, kMaxGemmDim))->capture_default_str()->type_name("N");
  };
  dim("--m", o->m, "Rows of A and D (random data)");
  dim("--n", o->n, "Columns of B and D (random data)");
  dim("--k", o->k, "Columns of A, rows of B (random data; each matrix at most 2^24 elements)");
  app->add_option("--a-input", o->a_input, "Matrix A from FILE instead of random data: NumPy .npy (2-D, float32 or "
                                           "float64, C order) or text (one row per line); read as binary32")
      ->type_name("FILE");
  app->add_option("--b-input", o->b_input, "Matrix B from FILE (with --a-input)")->type_name("FILE");
  app->add_option("--a-format", o->a_format, "Format of A")
      ->check(format_check())
      ->default_str("bf16, or the --preset's")
      ->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of B")
      ->check(format_check())
      ->default_str("bf16, or the --preset's")
      ->type_name("FMT");
  app->add_option("--scaling", o->scaling_name, "Block scaling")
      ->transform(choice_check({"none", "tensor", "tile128", "block128", "mx32", "nvfp4"}))
      ->default_str("none, or a block-scaled --preset's (mx32, nvfp4)")
      ->type_name("S");
  app->add_option("--out-format", o->out, "Format of C and D")
      ->check(format_check())
      ->default_str("fp32, or the --preset's output")
      ->type_name("FMT");
  app->add_option("--out-rounding", o->out_round, "Rounding of D")
      ->transform(choice_check({"rne", "rna", "rz", "ru", "rd", "rto", "sr", "sr-exact"}))
      ->default_str("rne, or the --preset's")
      ->type_name("MODE");
  app->add_option("--alpha", o->alpha, "alpha")->transform(scalar_check())->capture_default_str()->type_name("X");
  app->add_option("--beta", o->beta, "beta; 0: no C")->transform(scalar_check())->capture_default_str()->type_name("X");
  add_threads_option(*app, o->threads, "Threads of the GEMM and of the exact reference");
  app->add_option("--reference", o->reference,
                  "exact: compare every output with the exact GEMM (errors, normwise bound); none: skip it "
                  "(checksum, time and rate only)")
      ->transform(choice_check({"exact", "none"}))
      ->capture_default_str()
      ->type_name("R");
  add_accumulator_options(*app, o->acc, "fp32");
  add_workload_options(*app, o->work);
  app->footer(
      "Usage: fpemu gemm [--m M --n N --k K | --a-input FILE --b-input FILE] [--a-format FMT]\n"
      "       [--b-format FMT] [--acc FMT|exact|PRESET [--acc-rounding MODE] [--sr-bits K] | --preset NAME]\n"
      "       [--promote N] [--scaling S] [--out-format FMT] [--out-rounding MODE] [--alpha X] [--beta X]\n"
      "       [--threads T] [--reference exact|none] [--dist D --mu X --sigma X --scale X] [--seed S]\n"
      "       [--samples N] [--csv FILE] [--json FILE]\n"
      "Draws A (M x K), B (K x N) and, when beta != 0, C (M x N), or reads A and B (--a-input, --b-input),\n"
      "quantises A and B (analysis::quantise: nearest-even, saturating), rounds C into --out-format,\n"
      "computes D = alpha*A*B + beta*C with analysis::gemm, and compares every output with the exact\n"
      "result of the quantised inputs (scales\n"
      "applied; one exact accumulator per output). Prints max_rel_error and mean_rel_error over all\n"
      "outputs (and samples), normwise_error ||D - X||_F / ||X||_F and its bound c ||S||_F / ||X||_F\n"
      "(S_ij = |alpha| sum_k |a_ik b_kj| + |beta c_ij|, c the accumulation bound of `fpemu dot`; for the\n"
      "sample with the largest normwise error), max_rel_error_original and normwise_error_original\n"
      "against the exact GEMM of the data before quantisation (what quantisation and accumulation cost\n"
      "together), the fractions of non-zero inputs that underflowed to 0 and that saturated (beyond the\n"
      "format's largest finite value times their scale), a checksum of the output codes (FNV-1a), the time\n"
      "analysis::gemm took\n"
      "(the exact reference is not timed) and the rate in products/s (M*N*K per sample).\n"
      "Group scalings (tile128, block128: 128; mx32: 32) fold each group into fp32: --promote must\n"
      "then equal the group size or be left out. A block-scaled --preset (b200-mxf8f6f4, *-mxf4,\n"
      "*-mxf4nvf4) applies mx32 or nvfp4 scales inside its blocks, as Blackwell does; its scaling is\n"
      "the default.\n"
      "Seeds: sample s draws from std::mt19937_64(S+s) (A, B, then C); stochastic roundings take the\n"
      "Philox stream keyed by S+s. The printed results, except elapsed and rate, are the same for any\n"
      "--threads.\n"
      "--reference none skips the exact reference (about 99% of the time): no errors, no bound.\n"
      "--csv FILE, --json FILE ('-': stdout, instead of the report): the columns 'm,n,k,a_format,b_format,\n"
      "scaling,accumulator,out,alpha,beta,threads,samples,seed,reference,max_rel_error,mean_rel_error,\n"
      "normwise_error,normwise_bound,normwise_bound_valid,max_rel_error_original,normwise_error_original,\n"
      "underflowed,saturated,checksum,elapsed_s,products_per_s' and one row.\n"
      "--a-input refuses the options of random data (--m, --n, --k, --samples, --dist, ...) and --beta.");
  return {app, [o, app](const std::vector<std::string>& rest) {
            no_trailing("gemm", rest);
            if (o->a_input.empty() != o->b_input.empty())
              fail(std::string(o->a_input.empty() ? "--b-input" : "--a-input") + " needs " +
                   (o->a_input.empty() ? "--a-input" : "--b-input") + ": give both matrices, or neither");
            if (!o->a_input.empty()) {
              refuse_random_options(*app, "--a-input", {"--m", "--n", "--k"});
              if (o->beta != 0) fail("--beta needs C, which is drawn at random: leave --beta out with --a-input");
            }
            run_gemm(*o);
          }};
}

}  // namespace fpemu::cli
