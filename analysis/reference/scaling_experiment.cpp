// See scaling_experiment.hpp.
#include "analysis/reference/scaling_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>

#include "analysis/reference/dot_analysis.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/presets.hpp"

namespace fpemu::analysis {
namespace {

constexpr int kMaxDim = 65536;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 24;
constexpr double kMaxSigma = 1e30;  // six sigma stays far inside binary32's range

// n values of N(0, sigma^2) as `fpemu gemm` draws them (cli::sampler, cli::draw_floats).
std::vector<float> normal_floats(std::mt19937_64& rng, std::normal_distribution<double>& normal, std::size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(normal(rng));
  return v;
}

std::string text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

expected<void> check(const scaling_experiment_options& o) {
  if (o.ks.empty()) return error{"no K given (give lengths K in 1..65536)"};
  if (o.sigmas.empty()) return error{"no sigma given (give standard deviations > 0)"};
  for (const auto& [what, v] : {std::pair{"M", o.m}, std::pair{"N", o.n}})
    if (v < 1 || v > kMaxDim)
      return error{std::string(what) + " = " + std::to_string(v) + " is out of range (valid: 1..65536)"};
  if (std::int64_t{o.m} * o.n > kMaxElements)
    return error{"M = " + std::to_string(o.m) + ", N = " + std::to_string(o.n) +
                 " make an output of more than 2^24 elements"};
  for (int k : o.ks) {
    if (k < 1 || k > kMaxDim) return error{"K = " + std::to_string(k) + " is out of range (valid: 1..65536)"};
    if (std::int64_t{std::max(o.m, o.n)} * k > kMaxElements)
      return error{"K = " + std::to_string(k) + " with M = " + std::to_string(o.m) + ", N = " + std::to_string(o.n) +
                   " makes a matrix of more than 2^24 elements"};
  }
  for (double s : o.sigmas)
    if (!(s > 0) || !(s <= kMaxSigma))
      return error{"sigma = " + text(s) + " is out of range (valid: > 0 and <= 1e30)"};
  return {};
}

}  // namespace

const std::vector<scaling_setup>& scaling_setups() {
  static const std::vector<scaling_setup> setups = [] {
    const tensor_core_preset nvfp4 = find_preset("b200-mxf4nvf4").value();
    return std::vector<scaling_setup>{
        {"none (e4m3fn)", "fp32", formats::e4m3fn, formats::e4m3fn, scaling::none},
        {"per tensor (e4m3fn)", "fp32", formats::e4m3fn, formats::e4m3fn, scaling::per_tensor},
        {"1x128 A, 128x128 B (e4m3fn)", "fp32", formats::e4m3fn, formats::e4m3fn, scaling::tile_1x128},
        {"MX, 32 (e4m3fn, E8M0)", "fp32", formats::e4m3fn, formats::e4m3fn, scaling::mx32},
        {"NVFP4 (e2m1fn, UE4M3 per 16, " + nvfp4.name + ")", nvfp4.name, nvfp4.a, nvfp4.b, own_scaling(nvfp4)},
    };
  }();
  return setups;
}

expected<std::vector<scaling_cell>> scaling_experiment(const scaling_experiment_options& o,
                                                      const std::function<void(int, int)>& progress) {
  if (expected<void> ok = check(o); !ok) return error{ok.message()};
  const int M = o.m, N = o.n;
  std::vector<scaling_cell> cells;
  const int total = static_cast<int>(scaling_setups().size() * o.ks.size() * o.sigmas.size());
  for (const scaling_setup& setup : scaling_setups()) {
    const expected<accumulator_choice> acc = parse_accumulator(setup.accumulator);
    if (!acc) return error{acc.message()};
    scaling_request request;
    request.how = setup.how;
    request.preset = acc->preset ? &*acc->preset : nullptr;
    request.acc = setup.accumulator;
    request.acc_option = acc->preset ? "preset" : "acc";
    const expected<accumulator_model> model = model_for_scaling(acc->model, request);
    if (!model) return error{model.message()};
    gemm_options go;
    go.acc = *model;
    if (acc->preset) {
      go.out = acc->preset->output;
      go.out_rounding = acc->preset->output_rounding;
    }
    go.threads = o.threads;
    go.sr = sr_stream{o.seed, 0, 0};
    for (int K : o.ks)
      for (double sigma : o.sigmas) {
        if (interrupted()) return cells;  // the caller that asked discards them
        std::mt19937_64 rng(o.seed);
        std::normal_distribution<double> normal(0.0, sigma);
        const std::vector<float> xa = normal_floats(rng, normal, static_cast<std::size_t>(M) * K);
        const std::vector<float> xb = normal_floats(rng, normal, static_cast<std::size_t>(K) * N);
        const expected<scaled_matrix> a = quantise(xa, M, K, setup.a_format, setup.how, true);
        if (!a) return error{"A: " + a.message()};
        const expected<scaled_matrix> b = quantise(xb, K, N, setup.b_format, setup.how, false);
        if (!b) return error{"B: " + b.message()};
        const expected<std::vector<std::uint32_t>> d = gemm(*a, *b, {}, go);
        if (!d) return error{d.message()};
        const gemm_report quantised = analyse_gemm(*a, *b, {}, go, *d);
        const gemm_report original = compare_with_original(xa, xb, M, N, K, {}, go, *d);
        const quantisation_loss lost = quantisation_loss_of(xa, *a, xb, *b);
        scaling_cell c;
        c.setup = setup;
        c.k = K;
        c.sigma = sigma;
        c.normwise_error_original = original.normwise;
        c.max_rel_error_original = largest_relative(original.relative, false);
        c.normwise_error = quantised.normwise;
        c.max_rel_error = largest_relative(quantised.relative, true);
        c.underflowed = lost.fraction(lost.underflowed);
        c.saturated = lost.fraction(lost.saturated);
        cells.push_back(std::move(c));
        if (progress) progress(static_cast<int>(cells.size()), total);
      }
  }
  return cells;
}

}  // namespace fpemu::analysis
