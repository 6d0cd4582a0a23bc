// Throughput of the scalar rounding core through the array API, against memcpy of the same
// elements measured in the same run (the physical limit). This is the baseline that the
// vectorised paths of a later issue are measured against; the core itself is written to be
// obviously correct, not fast.
//
//   ./dev bench        (or: meson configure build -Dbenchmarks=true && build/bench/bench_round)
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"

namespace {

constexpr std::size_t kElements = std::size_t{1} << 20;

const std::vector<float>& normal_inputs() {
  static const std::vector<float> v = [] {
    std::vector<float> x(kElements);
    std::mt19937 rng(1);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (float& f : x) f = n(rng);
    return x;
  }();
  return v;
}

// The limit: copy the same number of 4-byte elements.
void memcpy_elements(benchmark::State& state) {
  const std::vector<float>& in = normal_inputs();
  std::vector<float> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.size()));
}
BENCHMARK(memcpy_elements);

void round_float_array(benchmark::State& state, const char* spec, fpemu::round_mode mode) {
  const fpemu::format f = *fpemu::parse_format(spec);
  const std::vector<float>& in = normal_inputs();
  std::vector<std::uint32_t> out(in.size());
  const fpemu::rounding r{mode, fpemu::overflow_policy::ieee, 16};
  for (auto _ : state) {
    auto flags = fpemu::round_array(f, in, out, r, fpemu::sr_stream{1, 0, 0});
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.size()));
}
BENCHMARK_CAPTURE(round_float_array, bf16_rne, "bf16", fpemu::round_mode::nearest_even);
BENCHMARK_CAPTURE(round_float_array, fp16_rne, "fp16", fpemu::round_mode::nearest_even);
BENCHMARK_CAPTURE(round_float_array, e4m3fn_rne, "e4m3fn", fpemu::round_mode::nearest_even);
BENCHMARK_CAPTURE(round_float_array, e5m2_rz, "e5m2", fpemu::round_mode::toward_zero);
BENCHMARK_CAPTURE(round_float_array, e4m3fn_sr16, "e4m3fn", fpemu::round_mode::stochastic);

// One scalar operation on codes, for the cost of the exact-then-round-once ops.
void bf16_add(benchmark::State& state) {
  std::vector<std::uint32_t> a(4096), b(4096);
  std::mt19937 rng(2);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = 0x3f80 + (rng() & 0x3ff);
    b[i] = 0x3c00 + (rng() & 0x7ff);
  }
  std::uint32_t acc = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < a.size(); ++i) acc ^= fpemu::add(fpemu::formats::bf16, a[i], b[i], {}).code;
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * a.size()));
}
BENCHMARK(bf16_add);

}  // namespace

BENCHMARK_MAIN();
