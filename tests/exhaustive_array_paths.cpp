// The vector array paths (array.hpp; the SIMD kernels of src/array_simd.cpp on this CPU's best
// target) on every one of the 2^32 binary32 inputs into bf16, fp16, e4m3fn and e5m2, in the six
// deterministic modes and in stochastic rounding with 16 random bits, against the core's
// binary32 entry round_float() given the same random bits, bit for bit: round_array's codes and
// union of the flags, round_in_place's values and per-element flags. Policy ieee on every input;
// saturate and nan too on every batch in the format's top binade, the binade above it (the
// overflow thresholds of every mode) and the infinities and NaNs, and on 1 in 16 of the others. Inputs go in batches of 8192 consecutive bit patterns, so calls of every length and
// lane alignment are not exercised here (test_array_simd does that).
// round_float itself is checked against an independent table-walk reference on every input by
// exhaustive_fp32_inputs (suite exhaustive-core). Opt-in suite 'exhaustive'; two threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "exhaustive_sweep.hpp"

namespace {

using fpemu::format;
using fpemu::overflow_policy;
using fpemu::round_mode;
using fpemu::rounded;
using fpemu::rounding;

constexpr std::uint64_t kSeed = 0x5eed0f5eed0f5eedull;
constexpr std::size_t kBatch = 8192;
constexpr round_mode kModes[] = {round_mode::nearest_even,    round_mode::nearest_away,    round_mode::toward_zero,
                                 round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd,
                                 round_mode::stochastic};

// keystream_bits(seed, 0, first + i, 16) for i in [0, n), first and n multiples of 128, written
// from the layout random.hpp documents (element l of group g reads 16-bit piece l / 16 of
// Philox block 16g + l % 16): one Philox evaluation per 8 elements. Spot-checked against
// keystream_bits in every batch.
void keystream16(std::uint64_t seed, std::uint64_t first, std::size_t n, std::uint32_t* out) {
  for (std::size_t g0 = 0; g0 < n; g0 += 128) {
    const std::uint64_t g = (first + g0) / 128;
    for (std::uint32_t l = 0; l < 16; ++l) {
      const std::uint64_t block = g * 16 + l;
      const fpemu::philox_counter w = fpemu::philox4x32_10(
          {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), 0, 0},
          {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
      for (std::size_t piece = 0; piece < 8; ++piece)
        out[g0 + piece * 16 + l] = (w[piece / 2] >> (16 * (piece % 2))) & 0xffffu;
    }
  }
}

struct tally : exhaustive::tally {
  std::atomic<std::uint64_t> policy_cases{0};
};

struct batch {
  std::vector<float> in = std::vector<float>(kBatch), values = std::vector<float>(kBatch);
  std::vector<std::uint32_t> random = std::vector<std::uint32_t>(kBatch), codes = std::vector<std::uint32_t>(kBatch);
  std::vector<std::uint8_t> flags = std::vector<std::uint8_t>(kBatch);
};

// A format with the binary32 value of each of its codes (the core's code_to_float).
struct target {
  std::string name;
  format f;
  std::vector<float> value_of_code;
};

// Inputs [b0, b0 + kBatch) under r against round_float; returns the cases checked.
std::uint64_t check_batch(const target& t, std::uint32_t b0, const rounding& r, batch& b, tally& ty) {
  const format& f = t.f;
  const bool stochastic = r.mode == round_mode::stochastic;
  const fpemu::sr_stream sr{kSeed, 0, b0};
  const auto u = fpemu::round_array(f, std::span<const float>(b.in), std::span(b.codes), r, sr);
  std::copy(b.in.begin(), b.in.end(), b.values.begin());
  const auto v = fpemu::round_in_place(f, std::span(b.values), r, sr, std::span(b.flags));
  if (!u || !v) {
    ty.report("array call failed: " + (u ? v.message() : u.message()));
    return 0;
  }
  std::uint8_t want_union = 0;
  for (std::size_t j = 0; j < kBatch; ++j) {
    const rounded w = fpemu::round_float(f, b.in[j], r, stochastic ? b.random[j] : 0);
    want_union |= w.flags;
    const float want_value = t.value_of_code[w.code], got = b.values[j];
    const bool same_value = std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want_value) ||
                            (got != got && want_value != want_value);
    if (b.codes[j] == w.code && b.flags[j] == w.flags && same_value) continue;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "fp32 0x%08" PRIx32 " -> %s %s %s: round_array code 0x%" PRIx32 ", round_in_place value 0x%08" PRIx32
                  " flags %s; round_float code 0x%" PRIx32 " (value 0x%08" PRIx32 ") flags %s",
                  b0 + static_cast<std::uint32_t>(j), t.name.c_str(), std::string(fpemu::to_string(r.mode)).c_str(),
                  std::string(fpemu::to_string(r.overflow)).c_str(), b.codes[j], std::bit_cast<std::uint32_t>(got),
                  fpemu::flags_to_string(b.flags[j]).c_str(), w.code, std::bit_cast<std::uint32_t>(want_value),
                  fpemu::flags_to_string(w.flags).c_str());
    ty.report(buf);
  }
  if (*u != want_union || *v != want_union)
    ty.report("fp32 [0x" + std::to_string(b0) + ", +8192) -> " + t.name + " " + std::string(fpemu::to_string(r.mode)) +
              ": flag unions round_array " + fpemu::flags_to_string(*u) + ", round_in_place " +
              fpemu::flags_to_string(*v) + ", round_float " + fpemu::flags_to_string(want_union));
  return kBatch;
}

// Bit patterns [begin, end), a multiple of kBatch apart.
void run_chunk(const target& t, std::uint64_t begin, std::uint64_t end, tally& ty) {
  batch b;
  const format& f = t.f;
  // Magnitudes in [2^emax, 2^(emax + 2)) and infinities and NaNs run under every policy.
  const std::uint32_t top = static_cast<std::uint32_t>(fpemu::emax(f) + 127) << 23, above = top + (2u << 23);
  std::uint64_t cases = 0, policy_cases = 0;
  for (std::uint64_t b0 = begin; b0 < end; b0 += kBatch) {
    const auto first = static_cast<std::uint32_t>(b0);
    for (std::size_t j = 0; j < kBatch; ++j) b.in[j] = std::bit_cast<float>(first + static_cast<std::uint32_t>(j));
    keystream16(kSeed, first, kBatch, b.random.data());
    for (std::size_t j = 0; j < kBatch; j += 997) {
      if (b.random[j] != fpemu::keystream_bits(kSeed, 0, first + j, 16))
        ty.report("keystream16 at index " + std::to_string(first + j));
    }
    const std::uint32_t mag = first & 0x7fffffffu;  // the batch's magnitudes: [mag, mag + kBatch)
    const bool policies = (mag >= top && mag < above) || mag >= 0x7f800000u || (b0 / kBatch) % 16 == 0;
    for (const round_mode m : kModes) {
      cases += check_batch(t, first, rounding{m, overflow_policy::ieee, 16}, b, ty);
      if (!policies) continue;
      for (const overflow_policy p : {overflow_policy::saturate, overflow_policy::nan})
        policy_cases += check_batch(t, first, rounding{m, p, 16}, b, ty);
    }
  }
  ty.cases += cases;
  ty.policy_cases += policy_cases;
}

}  // namespace

TEST_CASE("every fp32 code into bf16 fp16 e4m3fn e5m2 through round_array and round_in_place, every mode and sr16 "
          "== round_float (code, value, flags, flag unions)") {
  // Timing runs: see exhaustive_sweep.hpp.
  const exhaustive::sweep sweep = exhaustive::sweep::from_environment();
  constexpr std::uint64_t kAll = std::uint64_t{1} << 32;
  // The array functions' own threads stay off: the test's threads cover the cores.
  fpemu::set_array_threads(1);
  const auto all_start = std::chrono::steady_clock::now();
  for (const char* name : {"bf16", "fp16", "e4m3fn", "e5m2"}) {
    const auto f = fpemu::parse_format(name);
    REQUIRE(f.has_value());
    target t{name, *f, {}};
    for (std::uint32_t c = 0; c < (std::uint32_t{1} << fpemu::width(*f)); ++c)
      t.value_of_code.push_back(fpemu::code_to_float(*f, c));
    const auto start = std::chrono::steady_clock::now();
    tally ty;
    sweep.run(kAll, [&](std::uint64_t begin, std::uint64_t end) { run_chunk(t, begin, end, ty); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("exhaustive_array_paths: fp32 -> %s: %" PRIu64 " inputs x 7 modes = %" PRIu64
                " cases (policy ieee) + %" PRIu64 " saturate/nan cases, each: code, value, flags; %" PRIu64
                " mismatches (%.1f s)\n",
                name, ty.cases.load() / 7, ty.cases.load(), ty.policy_cases.load(), ty.mismatches.load(), s);
    std::fflush(stdout);
    if (sweep.stride == 1) CHECK(ty.cases.load() == kAll * 7);
    CHECK(ty.mismatches.load() == 0);
  }
  std::printf("exhaustive_array_paths: %.1f s in all (sample 1/%" PRIu64 ", %u threads)\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - all_start).count(), sweep.stride, sweep.threads);
}
