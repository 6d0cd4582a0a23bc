// Array rounding throughput against memcpy of the same elements, measured in the same run (the
// physical limit): 2^24 binary32 inputs drawn from N(0, 1), 64 MiB in and up to 64 MiB out, so
// every variant streams from and to memory as memcpy does.
//
//   encode/<fmt>_<mode>/threads:T    round_array: floats -> storage-width codes (uint8 for FP8,
//                                    uint16 for bf16/fp16), as tensors of these formats are kept
//   encode_u32/<fmt>_rne/threads:T   round_array: floats -> uint32 codes (for comparison)
//   in_place/<fmt>_<mode>/threads:T  round_in_place: floats -> rounded floats (the input is
//                                    restored outside the timed region before every iteration)
//   memcpy/threads:T                 the same bytes copied, T threads each copying a share
//   decode/<fmt>/threads:1           codes -> floats
//
// items_per_second is elements per second everywhere; scripts/bench_report.py turns a JSON run
// into ratios against memcpy and checks them against the targets of docs/performance.md.
//
//   ./dev bench        (or: build-bench/bench/bench_round --benchmark_format=json)
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/spec.hpp"

namespace {

constexpr std::size_t kElements = std::size_t{1} << 24;

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

void set_elements(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kElements));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kElements) * 8);
}

void memcpy_elements(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::vector<float>& in = normal_inputs();
  std::vector<float> out(in.size(), 1.0f);
  const std::size_t share = in.size() / static_cast<std::size_t>(threads);
  for (auto _ : state) {
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t)
      others.emplace_back([&, t] { std::memcpy(out.data() + t * share, in.data() + t * share, share * sizeof(float)); });
    std::memcpy(out.data(), in.data(), share * sizeof(float));
    for (std::thread& t : others) t.join();
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

fpemu::rounding mode_of(const char* mode) {
  using fpemu::round_mode;
  const round_mode m = std::strcmp(mode, "rne") == 0  ? round_mode::nearest_even
                       : std::strcmp(mode, "rz") == 0 ? round_mode::toward_zero
                                                      : round_mode::stochastic;
  return fpemu::rounding{m, fpemu::overflow_policy::ieee, 16};
}

template <class Code>
void encode_into(benchmark::State& state, const char* spec, const char* mode) {
  fpemu::set_array_threads(static_cast<int>(state.range(0)));
  const fpemu::format f = *fpemu::parse_format(spec);
  const std::vector<float>& in = normal_inputs();
  std::vector<Code> out(in.size(), 1);
  for (auto _ : state) {
    auto flags = fpemu::round_array(f, in, std::span<Code>(out), mode_of(mode), fpemu::sr_stream{1, 0, 0});
    if (!flags) state.SkipWithError(flags.message().c_str());
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

void encode(benchmark::State& state, const char* spec, const char* mode) {
  if (fpemu::width(*fpemu::parse_format(spec)) <= 8) return encode_into<std::uint8_t>(state, spec, mode);
  encode_into<std::uint16_t>(state, spec, mode);
}

void encode_u32(benchmark::State& state, const char* spec, const char* mode) {
  encode_into<std::uint32_t>(state, spec, mode);
}

void in_place(benchmark::State& state, const char* spec, const char* mode) {
  fpemu::set_array_threads(static_cast<int>(state.range(0)));
  const fpemu::format f = *fpemu::parse_format(spec);
  const std::vector<float>& in = normal_inputs();
  std::vector<float> x(in.size());
  for (auto _ : state) {
    state.PauseTiming();
    std::memcpy(x.data(), in.data(), in.size() * sizeof(float));
    state.ResumeTiming();
    auto flags = fpemu::round_in_place(f, x, mode_of(mode), fpemu::sr_stream{1, 0, 0});
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

void decode(benchmark::State& state, const char* spec) {
  fpemu::set_array_threads(static_cast<int>(state.range(0)));
  const fpemu::format f = *fpemu::parse_format(spec);
  const std::vector<float>& in = normal_inputs();
  std::vector<std::uint32_t> codes(in.size());
  (void)fpemu::round_array(f, in, codes);
  std::vector<float> out(in.size());
  for (auto _ : state) {
    auto flags = fpemu::decode_array(f, codes, std::span<float>(out));
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

}  // namespace

BENCHMARK(memcpy_elements)->Name("memcpy")->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

#define FPEMU_ROUND_BENCH(fmt, mode)                                                                          \
  BENCHMARK_CAPTURE(encode, fmt##_##mode, #fmt, #mode)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime(); \
  BENCHMARK_CAPTURE(in_place, fmt##_##mode, #fmt, #mode)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

FPEMU_ROUND_BENCH(bf16, rne)
FPEMU_ROUND_BENCH(bf16, rz)
FPEMU_ROUND_BENCH(bf16, sr16)
FPEMU_ROUND_BENCH(fp16, rne)
FPEMU_ROUND_BENCH(fp16, rz)
FPEMU_ROUND_BENCH(fp16, sr16)
FPEMU_ROUND_BENCH(e4m3fn, rne)
FPEMU_ROUND_BENCH(e4m3fn, rz)
FPEMU_ROUND_BENCH(e4m3fn, sr16)
FPEMU_ROUND_BENCH(e5m2, rne)
FPEMU_ROUND_BENCH(e5m2, rz)
FPEMU_ROUND_BENCH(e5m2, sr16)

#define FPEMU_U32_BENCH(fmt) \
  BENCHMARK_CAPTURE(encode_u32, fmt##_rne, #fmt, "rne")->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
FPEMU_U32_BENCH(bf16)
FPEMU_U32_BENCH(e4m3fn)

BENCHMARK_CAPTURE(decode, bf16, "bf16")->ArgName("threads")->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(decode, e4m3fn, "e4m3fn")->ArgName("threads")->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
