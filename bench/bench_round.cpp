// Array rounding throughput against memcpy of the same elements, measured in the same run (the
// physical limit): 2^24 binary32 inputs, 64 MiB in and up to 64 MiB out, so every variant
// streams from and to memory as memcpy does. Two data sets:
//   normal  N(0, 1)
//   wide    2^u with u uniform in [-30, 30] and a random sign: for the 8-bit and smaller formats
//           about half the results are subnormal, zero or overflowing, the lanes a vector rule
//           is least likely to cover
//
//   encode/<data>/<fmt>_<mode>/threads:T    round_array: floats -> storage-width codes (uint8 up
//                                           to 8 bits, uint16 for bf16/fp16)
//   in_place/<data>/<fmt>_<mode>/threads:T  round_in_place: floats -> rounded floats (the input is
//                                           restored outside the timed region every iteration)
//   decode/<data>/<fmt>/threads:T           storage-width codes (as encode writes them) -> floats
//   memcpy/threads:T                        the same bytes copied, T threads each copying a share
//   encode_first/bf16_rne/n:N/threads:T     encode of the first N elements: where threads start to pay
//   apply/<data>/<fmt>_<mode>/<op>          element-wise add, mul, div, fma, sqrt on storage-width
//                                           codes (apply, apply_fma, apply_sqrt; the data set
//                                           rounded to the format, b and c the same codes rotated;
//                                           sqrt of their magnitudes), one thread; byte codes once
//                                           the op's table of results is made (src/array.cpp makes
//                                           it after enough elements: untimed calls until then)
//   op_traffic/bytes:B/operands:K           the bytes apply moves for K operands of B bytes, without
//                                           its arithmetic: out[i] = a[i] ^ b[i] (^ c[i]), one
//                                           thread; (K + 1) x B bytes per element against
//                                           memcpy's 8, the limit of apply on such arrays
//   keystream/width:W                       the random bits alone: fill_keystream's words for
//                                           2^24 elements in the kernels' chunks, one thread (W 16:
//                                           sr16's, 64: sr-exact's high words, which the kernels
//                                           make alone), the limit of encode and round in place in
//                                           those modes
//
// Modes: rne rz ru rd rto, sr16 (16 random bits) and sr-exact. items_per_second is elements per
// second everywhere; scripts/bench_report.py turns a JSON run into ratios against memcpy and
// checks them against the targets of docs/performance.md.
//
// Flags besides Google Benchmark's (first on the command line):
//   --list-targets   print the SIMD targets this CPU can run, best first, and exit
//   --target=NAME    dispatch the kernels to NAME (one of those) instead of the best
// The dispatched target and the CPU model go into the JSON context (fpemu_target, cpu_model).
#include <benchmark/benchmark.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/spec.hpp"
#include "src/array_simd.hpp"
#include "round_data.hpp"

namespace {

constexpr std::size_t kElements = fpemu::bench::kRoundElements;

enum class data_set { normal, wide };
constexpr const char* kDataNames[] = {"normal", "wide"};

const std::vector<float>& inputs(data_set d) {
  static const std::vector<float> sets[2] = {fpemu::bench::round_data(kDataNames[0]),
                                             fpemu::bench::round_data(kDataNames[1])};
  return sets[static_cast<int>(d)];
}

void set_elements(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kElements));
}

void memcpy_elements(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::vector<float>& in = inputs(data_set::normal);
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

template <class Code>
void op_traffic_of(benchmark::State& state) {
  const auto operands = state.range(1);
  const std::vector<Code> a(kElements, 1), b(kElements, 2), c(kElements, 4);
  std::vector<Code> out(kElements);
  for (auto _ : state) {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<Code>(operands == 1 ? a[i] ^ 0x80u : operands == 2 ? a[i] ^ b[i] : a[i] ^ b[i] ^ c[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

void op_traffic(benchmark::State& state) {
  if (state.range(0) == 1) return op_traffic_of<std::uint8_t>(state);
  if (state.range(0) == 2) return op_traffic_of<std::uint16_t>(state);
  op_traffic_of<std::uint32_t>(state);
}

void keystream(benchmark::State& state) {
  const int width = static_cast<int>(state.range(0));
  std::vector<std::uint32_t> words(fpemu::simd::keystream_chunk);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kElements; i += words.size())
      fpemu::simd::fill_keystream(1, 0, i, words.size(), width, words.data());
    benchmark::DoNotOptimize(words.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

// "sr<k>" is stochastic rounding with k random bits; every other name is parse_round_mode's.
fpemu::rounding mode_of(const std::string& mode) {
  fpemu::rounding r;
  const int k = fpemu::bench::sr_bits_of(mode);
  r.mode = k != 0 ? fpemu::round_mode::stochastic : *fpemu::parse_round_mode(mode);
  if (k != 0) r.sr_bits = k;
  return r;
}

template <class Code>
void encode_into(benchmark::State& state, const fpemu::format& f, const fpemu::rounding& r, data_set d) {
  const std::vector<float>& in = inputs(d);
  std::vector<Code> out(in.size(), 1);
  for (auto _ : state) {
    auto flags = fpemu::round_array(f, in, std::span<Code>(out), r, fpemu::sr_stream{1, 0, 0});
    if (!flags) state.SkipWithError(flags.message().c_str());
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

void encode(benchmark::State& state, const std::string& spec, const std::string& mode, data_set d) {
  fpemu::set_array_threads(static_cast<int>(state.range(0)));
  const fpemu::format f = *fpemu::parse_format(spec);
  if (fpemu::width(f) <= 8) return encode_into<std::uint8_t>(state, f, mode_of(mode), d);
  encode_into<std::uint16_t>(state, f, mode_of(mode), d);
}

void in_place(benchmark::State& state, const std::string& spec, const std::string& mode, data_set d) {
  fpemu::set_array_threads(static_cast<int>(state.range(0)));
  const fpemu::format f = *fpemu::parse_format(spec);
  const fpemu::rounding r = mode_of(mode);
  const std::vector<float>& in = inputs(d);
  std::vector<float> x(in.size());
  for (auto _ : state) {
    state.PauseTiming();
    std::memcpy(x.data(), in.data(), in.size() * sizeof(float));
    state.ResumeTiming();
    auto flags = fpemu::round_in_place(f, x, r, fpemu::sr_stream{1, 0, 0});
    if (!flags) state.SkipWithError(flags.message().c_str());
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

template <class Code>
void decode_codes(benchmark::State& state, const std::string& spec, data_set d) {
  fpemu::set_array_threads(static_cast<int>(state.range(0)));
  const fpemu::format f = *fpemu::parse_format(spec);
  const std::vector<float>& in = inputs(d);
  std::vector<Code> codes(in.size());
  (void)fpemu::round_array(f, in, std::span<Code>(codes));
  std::vector<float> out(in.size());
  for (auto _ : state) {
    auto flags = fpemu::decode_array(f, std::span<const Code>(codes), std::span<float>(out));
    if (!flags) state.SkipWithError(flags.message().c_str());
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

void decode(benchmark::State& state, const std::string& spec, data_set d) {
  if (fpemu::width(*fpemu::parse_format(spec)) <= 8) return decode_codes<std::uint8_t>(state, spec, d);
  decode_codes<std::uint16_t>(state, spec, d);
}

// round_array on the first n elements (bf16, rne, N(0,1) data): where the thread pool starts to pay.
void encode_first(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  fpemu::set_array_threads(static_cast<int>(state.range(1)));
  const fpemu::format f = *fpemu::parse_format("bf16");
  const std::span<const float> in = std::span<const float>(inputs(data_set::normal)).first(n);
  std::vector<std::uint16_t> out(n);
  for (auto _ : state) {
    auto flags = fpemu::round_array(f, in, std::span<std::uint16_t>(out));
    benchmark::DoNotOptimize(flags);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
}

// On storage-width codes (Code: uint16_t for bf16 and fp16, uint8_t for the FP8 formats).
template <class Code>
void apply_codes(benchmark::State& state, const std::string& spec, const std::string& mode, const std::string& op,
                 data_set d) {
  fpemu::set_array_threads(1);
  const fpemu::format f = *fpemu::parse_format(spec);
  const fpemu::rounding r = mode_of(mode);
  std::vector<Code> codes(kElements);
  (void)fpemu::round_array(f, inputs(d), std::span<Code>(codes));
  auto operand = [&](std::size_t k) { return fpemu::bench::op_operand(codes, k, op, fpemu::magnitude_mask(f)); };
  const std::vector<Code> a = operand(0), b = operand(1);
  const std::vector<Code> c = op == "fma" ? operand(2) : std::vector<Code>(a.size());
  std::vector<Code> out(a.size());
  const std::span<const Code> sa(a), sb(b), sc(c);
  const fpemu::sr_stream sr{1, 0, 0};
  using fpemu::simd::lane_op;
  const lane_op o = op == "fma"    ? lane_op::fma
                    : op == "sqrt" ? lane_op::sqrt
                    : op == "add"  ? lane_op::add
                    : op == "mul"  ? lane_op::mul
                                   : lane_op::div;
  auto call = [&] {
    return o == lane_op::fma    ? fpemu::apply_fma(f, sa, sb, sc, out, r, sr)
           : o == lane_op::sqrt ? fpemu::apply_sqrt(f, sa, out, r, sr)
                                : fpemu::apply(o == lane_op::add   ? fpemu::array_op::add
                                               : o == lane_op::mul ? fpemu::array_op::mul
                                                                   : fpemu::array_op::div,
                                               f, sa, sb, out, r, sr);
  };
  // Byte codes are timed once the op's table of results is there (the top of this file): asked
  // until the library has made it, as a process that keeps asking the op does (at most 2^24 x 18
  // elements, fma in sr16).
  for (int calls = 0; sizeof(Code) == 1 && calls < 32 && !fpemu::simd::has_table(o, f, r); ++calls) (void)call();
  for (auto _ : state) {
    auto flags = call();
    if (!flags) state.SkipWithError(flags.message().c_str());
    benchmark::DoNotOptimize(flags);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_elements(state);
}

void apply_op(benchmark::State& state, const std::string& spec, const std::string& mode, const std::string& op,
              data_set d) {
  if (fpemu::width(*fpemu::parse_format(spec)) <= 8) return apply_codes<std::uint8_t>(state, spec, mode, op, d);
  apply_codes<std::uint16_t>(state, spec, mode, op, d);
}

using fpemu::bench::kRoundFormats, fpemu::bench::kRoundModes;

void register_all() {
  auto per_thread = [](benchmark::internal::Benchmark* b) {
    b->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  per_thread(benchmark::RegisterBenchmark("memcpy", memcpy_elements));
  benchmark::RegisterBenchmark("op_traffic", op_traffic)
      ->ArgNames({"bytes", "operands"})
      ->ArgsProduct({{1, 2, 4}, {1, 2, 3}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("keystream", keystream)
      ->ArgName("width")
      ->Arg(16)
      ->Arg(64)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("encode_first/bf16_rne", encode_first)
      ->ArgNames({"n", "threads"})
      ->ArgsProduct({{1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20}, {1, 2}})
      ->UseRealTime();
  for (const data_set d : {data_set::normal, data_set::wide}) {
    const std::string data = kDataNames[static_cast<int>(d)];
    for (const std::string fmt : kRoundFormats) {
      for (const std::string mode : kRoundModes) {
        const std::string name = data + "/" + fmt + "_" + mode;
        per_thread(benchmark::RegisterBenchmark(("encode/" + name).c_str(), encode, fmt, mode, d));
        per_thread(benchmark::RegisterBenchmark(("in_place/" + name).c_str(), in_place, fmt, mode, d));
      }
      per_thread(benchmark::RegisterBenchmark(("decode/" + data + "/" + fmt).c_str(), decode, fmt, d));
    }
    for (const std::string fmt : fpemu::bench::kOpFormats) {
      for (const std::string mode : fpemu::bench::kOpModes) {
        for (const std::string op : fpemu::bench::kOps) {
          const std::string name = "apply/" + data + "/" + fmt + "_" + mode + "/" + op;
          benchmark::RegisterBenchmark(name.c_str(), apply_op, fmt, mode, op, d)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
        }
      }
    }
  }
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list-targets") {
      for (const std::int64_t t : targets) std::printf("%s\n", hwy::TargetName(t));
      return 0;
    }
    if (a.rfind("--target=", 0) == 0) {
      const std::string want = a.substr(9);
      std::int64_t chosen = 0;
      for (const std::int64_t t : targets)
        if (want == hwy::TargetName(t)) chosen = t;
      if (chosen == 0) {
        std::fprintf(stderr, "bench_round: --target=%s: not a target of this CPU and build (--list-targets)\n",
                     want.c_str());
        return 2;
      }
      hwy::SetSupportedTargetsForTest(chosen);
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
  benchmark::AddCustomContext("fpemu_target", fpemu::simd::target_name());
  benchmark::AddCustomContext("cpu_model", cpu_model());
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
