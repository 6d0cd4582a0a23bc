// Emulated GEMM throughput against a native FP32 GEMM (Eigen) of the same shape, measured in the
// same run: M = N = 512, K = 4096, one thread for every variant (Eigen is built without OpenMP).
//  (a) e4m3fn inputs with the h100-e4m3 tensor-core preset (block-FMA chain over K)
//  (b) bf16 inputs with an fp32 round-to-nearest format accumulator (one rounding per product)
// The ratio that matters is emulated products/s over native products/s; Google Benchmark's
// items_per_second counter is products (M*N*K) per second for every variant, and each emulated
// variant also reports vs_native, that ratio against native_fp32_eigen's rate measured earlier in
// the same run (absent when the native benchmark was filtered out).
// h100_e4m3_2threads runs the same GEMM on two threads, timed on the wall clock.
// preset/NAME runs every tensor-core preset that a fast kernel serves the same way (its own input
// formats, its own block scales; a promoted preset group by group), with vs_h100_e4m3 its rate
// over h100_e4m3's in this run; the presets left to the reference loop are named once on stderr
// instead (minutes per GEMM).
// exact_reference/h100_e4m3 times what an error report adds: analyse_gemm's exact products of the
// first 64 rows (products per second of the exact reference, with vs_h100_e4m3 its rate over the
// emulated GEMM's: the target is at least 0.1, so that a report costs at most ten emulations).
//
//   ./dev bench     (Eigen's GEMM is built for the host CPU, native_gemm.hpp; the emulation as users
//                    get it, with runtime SIMD dispatch)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/gemm_kernels.hpp"
#include "fpemu/presets.hpp"
#include "native_gemm.hpp"

namespace {

constexpr int M = 512, N = 512, K = 4096;

std::vector<float> normal(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

constexpr double kProducts = static_cast<double>(M) * N * K;

// Products per second of the native GEMM's last (longest) run, 0 until it has run.
double native_rate = 0.0;

// Seconds on the clock Google Benchmark divides by: the thread's CPU time, or wall time for
// benchmarks that use real time.
double seconds(bool real_time) {
  timespec t{};
  clock_gettime(real_time ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void set_products(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * M * N * K);
}

double rate(const benchmark::State& state, double elapsed) {
  return static_cast<double>(state.iterations()) * kProducts / elapsed;
}

void native_fp32_eigen(benchmark::State& state) {
  const std::vector<float> a = normal(static_cast<std::size_t>(M) * K, 1), b = normal(static_cast<std::size_t>(K) * N, 2);
  std::vector<float> c(static_cast<std::size_t>(M) * N);
  const double start = seconds(false);
  for (auto _ : state) {
    fpemu::bench::native_sgemm(a.data(), b.data(), c.data(), M, N, K);
    benchmark::DoNotOptimize(c.data());
  }
  native_rate = rate(state, seconds(false) - start);
  set_products(state);
}

// Products per second of h100_e4m3's last run, 0 until it has run.
double h100_rate = 0.0;

double emulated(benchmark::State& state, const fpemu::format& in, const fpemu::accumulator_model& acc,
                int threads = 1, const fpemu::format& in_b = fpemu::formats::fp32,
                fpemu::analysis::scaling s = fpemu::analysis::scaling::none) {
  using namespace fpemu::analysis;
  const fpemu::format fb = in_b == fpemu::formats::fp32 ? in : in_b;
  const auto a = quantise(normal(static_cast<std::size_t>(M) * K, 1), M, K, in, s, true);
  const auto b = quantise(normal(static_cast<std::size_t>(K) * N, 2), K, N, fb, s, false);
  gemm_options o;
  o.acc = acc;
  o.threads = threads;
  const bool real_time = threads > 1;
  const double start = seconds(real_time);
  for (auto _ : state) {
    const auto d = gemm(*a, *b, {}, o);
    benchmark::DoNotOptimize(d->data());
  }
  const double elapsed = seconds(real_time) - start;
  set_products(state);
  if (native_rate > 0.0) state.counters["vs_native"] = rate(state, elapsed) / native_rate;
  return rate(state, elapsed);
}

void h100_e4m3(benchmark::State& state) {
  h100_rate = emulated(state, fpemu::formats::e4m3fn, fpemu::find_preset("h100-e4m3")->model);
}

void preset(benchmark::State& state, const fpemu::tensor_core_preset& p) {
  const double r = emulated(state, p.a, p.model, 1, p.b, p.scale ? fpemu::analysis::own_scaling(p) : fpemu::analysis::scaling::none);
  if (h100_rate > 0.0) state.counters["vs_h100_e4m3"] = r / h100_rate;
}

// Registers preset/NAME for each preset a fast kernel serves.
void register_presets() {
  std::string slow;
  for (const fpemu::tensor_core_preset& p : fpemu::tensor_core_presets()) {
    const std::vector<std::uint32_t> a(static_cast<std::size_t>(K), 0), b(static_cast<std::size_t>(K), 0);
    fpemu::accumulator_model groups = p.model;  // gemm() runs a promoted model's groups on the kernels
    groups.promote_every = 0;
    if (!fpemu::analysis::fast_accumulate(p.a, a, p.b, b, 1, 1, K, groups, 1)) {
      slow += " " + p.name;
      continue;
    }
    benchmark::RegisterBenchmark(("preset/" + p.name).c_str(), preset, p)->Unit(benchmark::kMillisecond)->MinTime(2.0);
  }
  if (!slow.empty()) std::fprintf(stderr, "reference loop only, not timed:%s\n", slow.c_str());
}

void h100_e4m3_2threads(benchmark::State& state) {
  emulated(state, fpemu::formats::e4m3fn, fpemu::find_preset("h100-e4m3")->model, 2);
}

void bf16_fp32_rne(benchmark::State& state) { emulated(state, fpemu::formats::bf16, fpemu::accumulator_model{}); }

void exact_reference_h100_e4m3(benchmark::State& state) {
  using namespace fpemu::analysis;
  constexpr int kRows = 64;
  const auto a = quantise(normal(static_cast<std::size_t>(kRows) * K, 1), kRows, K, fpemu::formats::e4m3fn,
                          scaling::none, true);
  const auto b = quantise(normal(static_cast<std::size_t>(K) * N, 2), K, N, fpemu::formats::e4m3fn, scaling::none, false);
  gemm_options o;
  o.acc = fpemu::find_preset("h100-e4m3")->model;
  o.threads = 1;
  const auto d = gemm(*a, *b, {}, o);
  const double start = seconds(false);
  for (auto _ : state) {
    const gemm_report r = analyse_gemm(*a, *b, {}, o, *d);
    benchmark::DoNotOptimize(r.normwise);
  }
  const double products = static_cast<double>(state.iterations()) * kRows * N * K;
  state.SetItemsProcessed(static_cast<std::int64_t>(products));
  if (h100_rate > 0.0) state.counters["vs_h100_e4m3"] = products / (seconds(false) - start) / h100_rate;
}

}  // namespace

BENCHMARK(native_fp32_eigen)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(h100_e4m3)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(bf16_fp32_rne)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(h100_e4m3_2threads)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(exact_reference_h100_e4m3)->Name("exact_reference/h100_e4m3")->Unit(benchmark::kMillisecond)->MinTime(2.0);

int main(int argc, char** argv) {
  register_presets();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
