// Element-wise arithmetic through the array functions (apply, apply_fma, apply_sqrt: the lane
// kernels of src/array_ops.cpp on this CPU's best SIMD target, the core for the lanes they leave)
// against the core's add, sub, mul, div, fma and sqrt with the same random bits, bit for bit:
// codes, per-element flags and the union of the flags (bf16 and fp16 also on two-byte codes
// without per-element flags, which take one pass, simd::one_pass_op).
//  - bf16 and fp16: 10^8 operand pairs each (addends for fma drawn beside them), a quarter of them
//    near-cancelling (b within 3 codes of a or -a), every pair through all six ops, in one of
//    rne, rna, rz, ru, rd, rto, sr16 and sr-exact by turns (the mode of chunk k and op j is
//    (k + j) mod 8: 1.25 * 10^7 pairs per op and mode);
//  - e4m3fn and e5m2: every one of the 2^24 (a, b, c) triples through fma in each of the eight
//    modes, twice in the six without random bits: the first pass through the lanes makes the
//    table of results (array.cpp: once 2^24 elements have been asked), the second reads it (the
//    quick suite has every pair of every op, test_array_simd); and once more in sr16 through its
//    table, made by asking the triples again (2^24 x 18 elements);
//  - e4m3fn and e5m2 in sr16: every pair through add, sub, mul and div and every code through
//    sqrt 2^10 times with its own random values, through the lanes and then the table of results.
// Opt-in suite 'exhaustive'; two threads (exhaustive_sweep.hpp for sampled timing runs).
// FPEMU_TARGET=name (a Highway target this CPU has and the build made: AVX3, AVX2, SSE4, ...) runs
// the kernels on that target instead of the best one; the summary names the one that ran.
#include <doctest/doctest.h>
#include <hwy/targets.h>

#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "exhaustive_sweep.hpp"
#include "src/array_simd.hpp"

namespace {

using namespace fpemu;

constexpr round_mode kModes[] = {round_mode::nearest_even,    round_mode::nearest_away,    round_mode::toward_zero,
                                 round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd,
                                 round_mode::stochastic,      round_mode::stochastic_exact};
constexpr const char* kOps[] = {"add", "sub", "mul", "div", "fma", "sqrt"};

using exhaustive::tally;

// Op j (kOps) on codes a, b, c (32- or 16-bit) into out, with per-element flags where `flags`
// is not empty.
template <class Code>
expected<std::uint8_t> call(const format& f, int j, const rounding& r, const sr_stream& sr, const std::vector<Code>& a,
                            const std::vector<Code>& b, const std::vector<Code>& c, std::vector<Code>& out,
                            std::span<std::uint8_t> flags) {
  if (j == 4) return apply_fma(f, std::span<const Code>(a), b, c, out, r, sr, flags);
  if (j == 5) return apply_sqrt(f, std::span<const Code>(a), out, r, sr, flags);
  return apply(static_cast<array_op>(j), f, std::span<const Code>(a), b, out, r, sr, flags);
}

// Op j (kOps) on elements [0, n) of a, b, c through the array functions and the core; returns
// the cases checked. The 16-bit formats also on two-byte codes without per-element flags (fp16
// and bf16 then take the one-pass kernel, simd::one_pass_op): codes and flag union.
std::uint64_t check(const format& f, int j, const rounding& r, std::uint64_t first_index,
                    const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                    const std::vector<std::uint32_t>& c, tally& ty) {
  const std::size_t n = a.size();
  const sr_stream sr{0x0a5eedULL, 1, first_index};
  std::vector<std::uint32_t> out(n);
  std::vector<std::uint8_t> flags(n);
  const auto all = call(f, j, r, sr, a, b, c, out, flags);
  const bool narrow = width(f) == 16;
  std::vector<std::uint16_t> out16(narrow ? n : 0);
  const auto all16 = narrow ? call(f, j, r, sr, std::vector<std::uint16_t>(a.begin(), a.end()),
                                   std::vector<std::uint16_t>(b.begin(), b.end()),
                                   std::vector<std::uint16_t>(c.begin(), c.end()), out16, {})
                            : all;
  if (!all || !all16) {
    ty.report(!all ? all.message() : all16.message());
    return 0;
  }
  std::uint8_t want_all = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t rnd =
        is_stochastic(r.mode) ? keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r)) : 0;
    const rounded w = j == 0   ? add(f, a[i], b[i], r, rnd)
                      : j == 1 ? sub(f, a[i], b[i], r, rnd)
                      : j == 2 ? mul(f, a[i], b[i], r, rnd)
                      : j == 3 ? div(f, a[i], b[i], r, rnd)
                      : j == 4 ? fma(f, a[i], b[i], c[i], r, rnd)
                               : sqrt(f, a[i], r, rnd);
    want_all |= w.flags;
    if (out[i] == w.code && flags[i] == w.flags && (!narrow || out16[i] == w.code)) continue;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s %s(0x%x, 0x%x, 0x%x) %s: 0x%x flags %s (two-byte codes 0x%x), core 0x%x flags %s",
                  to_string(f).c_str(), kOps[j], a[i], b[i], c[i], std::string(to_string(r.mode)).c_str(), out[i],
                  flags_to_string(flags[i]).c_str(), narrow ? out16[i] : out[i], w.code,
                  flags_to_string(w.flags).c_str());
    ty.report(buf);
  }
  if (*all != want_all) ty.report(to_string(f) + " " + kOps[j] + ": flag union " + flags_to_string(*all));
  if (*all16 != want_all)
    ty.report(to_string(f) + " " + kOps[j] + ": flag union on two-byte codes " + flags_to_string(*all16));
  return n;
}

rounding rounding_of(round_mode m) { return {m, overflow_policy::ieee, 16}; }

// The kernels on FPEMU_TARGET's target (the top of this file), or the best one.
void dispatch_as_asked() {
  hwy::SetSupportedTargetsForTest(0);
  const char* asked = std::getenv("FPEMU_TARGET");
  if (asked == nullptr) return;
  std::string names;
  for (const std::int64_t t : hwy::SupportedAndGeneratedTargets()) {
    if (std::string(hwy::TargetName(t)) == asked) return hwy::SetSupportedTargetsForTest(t);
    names += (names.empty() ? "" : ", ") + std::string(hwy::TargetName(t));
  }
  FAIL("FPEMU_TARGET=" << asked << " is not a target of this CPU and build (" << names << ")");
}

}  // namespace

TEST_CASE("10^8 random bf16 and fp16 operand pairs through every op, eight modes by turns, and every e4m3fn and "
          "e5m2 fma triple in eight modes == the core's ops (codes, flags, flag unions)") {
  const exhaustive::sweep sweep = exhaustive::sweep::from_environment();
  dispatch_as_asked();
  set_array_threads(1);  // the sweep's threads cover the cores
  const auto all_start = std::chrono::steady_clock::now();
  for (const char* name : {"bf16", "fp16"}) {
    const format f = *parse_format(name);
    const std::uint32_t mask = (std::uint32_t{1} << width(f)) - 1;
    constexpr std::uint64_t kPairs = 100'000'000;
    const auto start = std::chrono::steady_clock::now();
    tally ty;
    sweep.run(kPairs, [&](std::uint64_t begin, std::uint64_t end) {
      const std::uint64_t chunk = begin / exhaustive::sweep::kChunk;
      std::mt19937_64 rng(chunk * 0x9e3779b97f4a7c15ull + mask);
      const std::size_t n = end - begin;
      std::vector<std::uint32_t> a(n), b(n), c(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t w = rng();
        a[i] = static_cast<std::uint32_t>(w) & mask;
        c[i] = static_cast<std::uint32_t>(w >> 32) & mask;
        const std::uint32_t near = (a[i] + static_cast<std::uint32_t>(w >> 48) % 7 - 3) ^ (w >> 60 & 1 ? sign_mask(f) : 0);
        b[i] = (i % 4 == 3 ? near : static_cast<std::uint32_t>(rng())) & mask;
      }
      std::uint64_t cases = 0;
      for (int j = 0; j < 6; ++j) cases += check(f, j, rounding_of(kModes[(chunk + j) % 8]), begin, a, b, c, ty);
      ty.cases += cases;
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("exhaustive_array_ops: %s: %" PRIu64 " pairs x 6 ops = %" PRIu64 " cases, %" PRIu64
                " mismatches (%.1f s)\n",
                name, ty.cases.load() / 6, ty.cases.load(), ty.mismatches.load(), s);
    std::fflush(stdout);
    if (sweep.stride == 1) CHECK(ty.cases.load() == kPairs * 6);
    CHECK(ty.mismatches.load() == 0);
  }
  for (const char* name : {"e4m3fn", "e5m2"}) {
    const format f = *parse_format(name);
    constexpr std::uint64_t kTriples = std::uint64_t{1} << 24;
    const auto start = std::chrono::steady_clock::now();
    tally ty;
    // Pass p of mode j at [(2j + p) 2^24, (2j + p + 1) 2^24); stochastic modes' second passes skipped.
    sweep.run(kTriples * 16, [&](std::uint64_t begin, std::uint64_t end) {
      const round_mode m = kModes[begin / kTriples / 2];  // chunks of 2^20 never straddle a pass
      if (is_stochastic(m) && begin / kTriples % 2 == 1) return;
      const std::size_t n = end - begin;
      std::vector<std::uint32_t> a(n), b(n), c(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t t = (begin + i) % kTriples;
        a[i] = static_cast<std::uint32_t>(t >> 16);
        b[i] = static_cast<std::uint32_t>(t >> 8) & 0xff;
        c[i] = static_cast<std::uint32_t>(t) & 0xff;
      }
      ty.cases += check(f, 4, rounding_of(m), begin, a, b, c, ty);
    });
    // sr16's second pass reads its table of results (four entries per triple of a row), made once
    // 2^24 x 18 elements have been asked (array.cpp): the triples asked again, unchecked, until it is
    // there; then every triple with random values of its own, other than the first pass's.
    const rounding sr16 = rounding_of(round_mode::stochastic);
    {
      std::vector<std::uint8_t> x(kTriples), y(kTriples), z(kTriples), out(kTriples);
      for (std::size_t t = 0; t < kTriples; ++t) {
        x[t] = static_cast<std::uint8_t>(t >> 16);
        y[t] = static_cast<std::uint8_t>(t >> 8);
        z[t] = static_cast<std::uint8_t>(t);
      }
      set_array_threads(0);
      for (int calls = 0; !simd::has_table(simd::lane_op::fma, f, sr16); ++calls) {
        REQUIRE(calls < 64);
        REQUIRE(apply_fma(f, std::span<const std::uint8_t>(x), y, z, std::span(out), sr16).has_value());
      }
      set_array_threads(1);
    }
    sweep.run(kTriples, [&](std::uint64_t begin, std::uint64_t end) {
      const std::size_t n = end - begin;
      std::vector<std::uint32_t> a(n), b(n), c(n);
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<std::uint32_t>(begin + i) >> 16;
        b[i] = static_cast<std::uint32_t>(begin + i) >> 8 & 0xff;
        c[i] = static_cast<std::uint32_t>(begin + i) & 0xff;
      }
      ty.cases += check(f, 4, sr16, kTriples * 16 + begin, a, b, c, ty);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("exhaustive_array_ops: %s: every fma triple x (6 modes x 2 passes + 2 stochastic modes + sr16 "
                "through its table) = %" PRIu64 " cases, %" PRIu64 " mismatches (%.1f s)\n",
                name, ty.cases.load(), ty.mismatches.load(), s);
    std::fflush(stdout);
    if (sweep.stride == 1) {
      CHECK(ty.cases.load() == kTriples * 15);
      CHECK(simd::has_table(simd::lane_op::fma, f, sr16));
      for (const round_mode m : kModes)
        if (!is_stochastic(m)) CHECK(simd::has_table(simd::lane_op::fma, f, rounding_of(m)));
    }
    CHECK(ty.mismatches.load() == 0);
  }
  std::printf("exhaustive_array_ops: %.1f s in all (sample 1/%" PRIu64 ", %u threads, %s)\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - all_start).count(), sweep.stride,
              sweep.threads, simd::target_name());
}

// In sr with up to 16 random bits, add, sub, mul, div and sqrt on byte codes read a table of the
// core's results at both ends of the random values and where code and flags step (array.cpp),
// made once 2^21 x 18 elements have been asked of it: every pair 2^10 times with its own random
// values, the first ones through the lanes, the rest through the table.
TEST_CASE("every e4m3fn and e5m2 pair through add, sub, mul and div and every code through sqrt in sr16, 2^10 "
          "random values each, through the lanes and the table of results == the core (codes, flags, flag unions)") {
  const exhaustive::sweep sweep = exhaustive::sweep::from_environment();
  dispatch_as_asked();
  set_array_threads(1);
  constexpr std::uint64_t kElements = std::uint64_t{1} << 26;
  const rounding r = rounding_of(round_mode::stochastic);
  for (const char* name : {"e4m3fn", "e5m2"}) {
    const format f = *parse_format(name);
    const auto start = std::chrono::steady_clock::now();
    tally ty;
    for (const int j : {0, 1, 2, 3, 5}) {
      sweep.run(kElements, [&](std::uint64_t begin, std::uint64_t end) {
        const std::size_t n = end - begin;
        std::vector<std::uint32_t> a(n), b(n), c(n);
        for (std::size_t i = 0; i < n; ++i) {
          a[i] = static_cast<std::uint32_t>(begin + i) >> 8 & 0xff;
          b[i] = static_cast<std::uint32_t>(begin + i) & 0xff;
        }
        ty.cases += check(f, j, r, begin, a, b, c, ty);
      });
      const simd::lane_op op = j == 5 ? simd::lane_op::sqrt : static_cast<simd::lane_op>(j);
      if (sweep.stride == 1) CHECK(simd::has_table(op, f, r));
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("exhaustive_array_ops: %s sr16: every pair x 2^10 random values x 5 ops = %" PRIu64 " cases, %" PRIu64
                " mismatches (%.1f s, %s)\n",
                name, ty.cases.load(), ty.mismatches.load(), s, simd::target_name());
    std::fflush(stdout);
    if (sweep.stride == 1) CHECK(ty.cases.load() == kElements * 5);
    CHECK(ty.mismatches.load() == 0);
  }
}

// The one pass in nearest-even and in the directed modes, once its chunk has raised inexact, rounds
// the binary32 result of add, div and sqrt, rounded by the environment in the mode's direction,
// into the format directly (innocuous double rounding: OnePassRun's comment), which leaves fp16
// quotients below the normal range in nearest-even to this check. Every pair of codes through add
// and div, every code through sqrt, on two-byte codes without per-element flags (the one pass)
// against the same with per-element flags (the two passes, rounding to odd, checked against the
// core above). Each call's pairs raise the flags as they come, so the one pass runs before inexact
// is seen, after it, and settled.
TEST_CASE("every fp16 and bf16 pair through add and div and every code through sqrt, in "
          "nearest-even, rz, ru and rd through the one pass == the two passes") {
  const exhaustive::sweep sweep = exhaustive::sweep::from_environment();
  dispatch_as_asked();
  set_array_threads(1);
  for (const round_mode mode :
       {round_mode::nearest_even, round_mode::toward_zero, round_mode::toward_positive, round_mode::toward_negative}) {
    const rounding r = rounding_of(mode);
    const std::string mode_name(to_string(mode));
    for (const char* name : {"fp16", "bf16"}) {
      const format f = *parse_format(name);
      const auto one = static_cast<std::uint16_t>(from(f, 1.0).code);
      for (const int j : {0, 3, 5}) {
        const std::uint64_t pairs = j == 5 ? std::uint64_t{1} << 16 : std::uint64_t{1} << 32;
        const auto start = std::chrono::steady_clock::now();
        tally ty;
        sweep.run(pairs, [&](std::uint64_t begin, std::uint64_t end) {
          const std::size_t n = end - begin;
          std::vector<std::uint16_t> a(n, one), b(n, one), out(n), out_flagged(n);
          std::vector<std::uint8_t> flags(n);
          for (std::uint64_t k = begin; k < end; ++k) {
            a[k - begin] = static_cast<std::uint16_t>(j == 5 ? k : k >> 16);
            b[k - begin] = static_cast<std::uint16_t>(k);
          }
          const auto all = call(f, j, r, {}, a, b, b, out, {});
          const auto all_flagged = call(f, j, r, {}, a, b, b, out_flagged, flags);
          if (!all || !all_flagged) return ty.report(!all ? all.message() : all_flagged.message());
          for (std::size_t i = 0; i < n; ++i) {
            if (out[i] == out_flagged[i]) continue;
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s %s(0x%x, 0x%x) %s: one pass 0x%x, two passes 0x%x", name, kOps[j],
                          a[i], b[i], mode_name.c_str(), out[i], out_flagged[i]);
            ty.report(buf);
          }
          if (*all != *all_flagged)
            ty.report(std::string(name) + " " + kOps[j] + " " + mode_name + ": flag unions differ");
          ty.cases += end - begin;
        });
        std::printf("exhaustive_array_ops: %s %s, every %s in %s: %" PRIu64 " cases, %" PRIu64
                    " mismatches (%.1f s, %s)\n",
                    name, kOps[j], j == 5 ? "code" : "pair", mode_name.c_str(), ty.cases.load(),
                    ty.mismatches.load(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                    simd::target_name());
        std::fflush(stdout);
        if (sweep.stride == 1) CHECK(ty.cases.load() == pairs);
        CHECK(ty.mismatches.load() == 0);
      }
    }
  }
}
