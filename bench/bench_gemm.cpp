// Emulated GEMM throughput against a native FP32 GEMM (Eigen) of the same shape, measured in the
// same run: M = N = 512, K = 4096, one thread for every variant (Eigen is built without OpenMP).
//  (a) e4m3fn inputs with the h100-e4m3 tensor-core preset (block-FMA chain over K)
//  (b) bf16 inputs with an fp32 round-to-nearest format accumulator (one rounding per product)
// The ratio that matters is emulated products/s over native products/s; Google Benchmark's
// items_per_second counter is products (M*N*K) per second for every variant.
//
//   ./dev bench     (builds with -Dbenchmarks=true and -march=native for every target, so Eigen
//                    gets the machine's best vector code too)
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <random>
#include <vector>

#include "fpemu/presets.hpp"
#include "gemm.hpp"

namespace {

constexpr int M = 512, N = 512, K = 4096;

std::vector<float> normal(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void set_products(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * M * N * K);
}

void native_fp32_eigen(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const std::vector<float> a = normal(static_cast<std::size_t>(M) * K, 1), b = normal(static_cast<std::size_t>(K) * N, 2);
  const Eigen::Map<const Eigen::Matrix<float, M, Eigen::Dynamic, Eigen::RowMajor>> A(a.data(), M, K);
  const Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, N, Eigen::RowMajor>> B(b.data(), K, N);
  Eigen::MatrixXf C(M, N);
  for (auto _ : state) {
    C.noalias() = A * B;
    benchmark::DoNotOptimize(C.data());
  }
  set_products(state);
}

void emulated(benchmark::State& state, const fpemu::format& in, const fpemu::accumulator_model& acc) {
  using namespace fpemu::analysis;
  const auto a = quantise(normal(static_cast<std::size_t>(M) * K, 1), M, K, in, scaling::none, true);
  const auto b = quantise(normal(static_cast<std::size_t>(K) * N, 2), K, N, in, scaling::none, false);
  gemm_options o;
  o.acc = acc;
  o.threads = 1;
  for (auto _ : state) {
    const auto d = gemm(*a, *b, {}, o);
    benchmark::DoNotOptimize(d->data());
  }
  set_products(state);
}

void h100_e4m3(benchmark::State& state) {
  emulated(state, fpemu::formats::e4m3fn, fpemu::find_preset("h100-e4m3")->model);
}

void bf16_fp32_rne(benchmark::State& state) { emulated(state, fpemu::formats::bf16, fpemu::accumulator_model{}); }

}  // namespace

BENCHMARK(native_fp32_eigen)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(h100_e4m3)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(bf16_fp32_rne)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_MAIN();
