// Every one of the 2^32 binary32 codes converted into every 8- and 16-bit named format (e4m3fn
// e5m2 e4m3fnuz e5m2fnuz e8m0fnu bf16 fp16) in every deterministic mode (rne rna rz ru rd rto),
// compared bit for bit (code, flags, direction) with a fast independent reference: the sorted
// table of the target's finite values as doubles, walked monotonically alongside the increasing
// inputs. Every decision is an exact comparison of doubles (the midpoint of two adjacent target
// values, and the input, are exact binary64 values). Policy ieee for every input; saturate and
// nan as well for infinite and NaN inputs, for inputs that overflow from between the largest
// finite value and the next p-bit value, and for 1 in 256 of the inputs beyond that.
// The same inputs also go through round_float(), the core's short path for binary32 inputs.
// Opt-in suite 'exhaustive'; two threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "fpemu/convert.hpp"
#include "fpemu/format.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"
#include "exhaustive_sweep.hpp"

namespace {

using fpemu::format;
using fpemu::overflow_policy;
using fpemu::round_mode;
using fpemu::rounded;
using fpemu::rounding;
namespace flag = fpemu::flag;

constexpr round_mode kModes[] = {round_mode::nearest_even,    round_mode::nearest_away,    round_mode::toward_zero,
                                 round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd};
constexpr const char* kModeNames[] = {"rne", "rna", "rz", "ru", "rd", "rto"};

// One target value: its magnitude and its (positive) code; `odd` is the parity of its
// significand in units of the quantum.
struct entry {
  double value;
  std::uint32_t code;
  bool odd;
};

// The reference's view of the target format, built from the format's fields.
struct target {
  std::string name;
  format f;
  std::vector<entry> table;  // 0 (also for e8m0fnu, which rounds tiny values to {0, min}), the
                             // positive finite values, then the first p-bit value above the
                             // largest finite one (its code is meaningless: it means overflow)
  double min_normal = 0;
  double below_min_normal = 0;  // the largest p-bit value below min_normal
  std::uint32_t sign = 0, max_code = 0, inf_code = 0, nan_pos = 0, nan_neg = 0;
  bool has_inf = false, has_nan = false, has_neg_zero = false;
};

double field_value(const format& f, std::uint32_t field, std::uint32_t frac) {
  if (field == 0 && f.has_zero) return std::ldexp(static_cast<double>(frac), (1 - f.bias) - f.frac_bits);
  return std::ldexp(static_cast<double>((std::uint32_t{1} << f.frac_bits) | frac), static_cast<int>(field) - f.bias - f.frac_bits);
}

target make_target(std::string name, const format& f) {
  target t{std::move(name), f, {}, 0, 0, 0, 0, 0, 0, 0, false, false, false};
  const int mag_bits = f.exp_bits + f.frac_bits;
  t.sign = f.is_signed ? std::uint32_t{1} << mag_bits : 0;
  t.has_inf = f.encoding == fpemu::nonfinite::ieee;
  t.has_nan = f.encoding != fpemu::nonfinite::finite;
  t.has_neg_zero = f.is_signed && f.has_zero && f.encoding != fpemu::nonfinite::fnuz;
  const std::uint32_t mags = std::uint32_t{1} << mag_bits, top_field = (std::uint32_t{1} << f.exp_bits) - 1;
  const std::uint32_t frac_mask = (std::uint32_t{1} << f.frac_bits) - 1;
  switch (f.encoding) {
    case fpemu::nonfinite::ieee:
      t.max_code = (top_field << f.frac_bits) - 1;
      t.inf_code = top_field << f.frac_bits;
      t.nan_pos = t.inf_code | (std::uint32_t{1} << (f.frac_bits - 1));
      t.nan_neg = t.nan_pos | t.sign;
      break;
    case fpemu::nonfinite::fn:
      t.max_code = mags - 2;
      t.nan_pos = mags - 1;
      t.nan_neg = t.nan_pos | t.sign;
      break;
    case fpemu::nonfinite::fnuz:
      t.max_code = mags - 1;
      t.nan_pos = t.nan_neg = t.sign;
      break;
    case fpemu::nonfinite::finite: t.max_code = mags - 1; break;
  }
  t.table.push_back({0.0, 0, false});
  for (std::uint32_t c = 0; c <= t.max_code; ++c) {
    const std::uint32_t field = c >> f.frac_bits, frac = c & frac_mask;
    if (f.has_zero && field == 0 && (frac == 0 || !f.subnormals)) continue;  // zeros
    // Significand parity: the last fraction bit; with no fraction bits every significand is 1.
    t.table.push_back({field_value(f, field, frac), c, f.frac_bits == 0 ? true : (frac & 1) != 0});
  }
  const double maxv = t.table.back().value;
  const double over = maxv + std::ldexp(1.0, std::ilogb(maxv) - f.frac_bits);
  t.table.push_back({over, 0xffffffffu, f.frac_bits == 0 ? true : ((t.max_code + 1) & 1) != 0});
  for (std::size_t i = 1; i < t.table.size(); ++i) REQUIRE(t.table[i - 1].value < t.table[i].value);
  t.min_normal = std::ldexp(1.0, (f.has_zero ? 1 : 0) - f.bias);
  t.below_min_normal = t.min_normal - std::ldexp(t.min_normal, -(f.frac_bits + 1));
  return t;
}

// The magnitude rules: 0 down, 1 up, 2 nearest-even, 3 nearest-away, 4 odd.
constexpr int kRules = 5;

// For a strictly between adjacent p-bit candidates lo < hi: does each rule round away from zero?
// `side` is the sign of a - (lo + hi) / 2 (the midpoint is exact).
void away_by_rule(int side, bool lo_odd, bool hi_odd, bool (&up)[kRules]) {
  up[0] = false;
  up[1] = true;
  // A tie goes to the even candidate; with a one-bit significand both are odd: the larger one.
  up[2] = side > 0 || (side == 0 && (lo_odd != hi_odd ? lo_odd : true));
  up[3] = side >= 0;
  // The odd candidate; with both odd, toward zero.
  up[4] = lo_odd != hi_odd ? !lo_odd : false;
}

int sign_of(double d) { return d > 0 ? 1 : (d < 0 ? -1 : 0); }

// The rule each mode applies to the magnitude of a positive / negative input.
constexpr int kRuleFor[2][6] = {{2, 3, 0, 1, 0, 4}, {2, 3, 0, 0, 1, 4}};

// The reference results, policy ieee, for a finite non-zero magnitude a in table interval j
// (table[j].value <= a < table[j+1].value, or j = last when a >= the overflow value), for both
// signs and every mode. overflow[sign][mode] says whether the p-bit rounding exceeded the
// largest finite value (then the other policies are checked too).
struct ref_batch {
  rounded r[2][6];
  bool overflow[2][6];
};
void reference_finite(const target& t, double a, std::size_t j, ref_batch& out) {
  const std::size_t last = t.table.size() - 1;
  const bool exact = t.table[j].value == a;
  bool up[kRules] = {false, false, false, false, false};
  if (!exact && j < last) {
    const entry &lo = t.table[j], &hi = t.table[j + 1];
    away_by_rule(sign_of(a - (lo.value + (hi.value - lo.value) / 2)), lo.odd, hi.odd, up);
  }
  // Tininess after rounding: the value rounded to p bits with unbounded exponent range is below
  // the smallest normal. Between the largest p-bit value below it (all ones: odd) and it (even,
  // or odd with a one-bit significand) the rule decides.
  bool tiny[kRules];
  bool up_tiny[kRules] = {false, false, false, false, false};
  const bool below = a < t.min_normal;
  if (below && a > t.below_min_normal)
    away_by_rule(sign_of(a - (t.below_min_normal + (t.min_normal - t.below_min_normal) / 2)), true,
                 t.f.frac_bits == 0, up_tiny);
  for (int r = 0; r < kRules; ++r) tiny[r] = below && !up_tiny[r];

  // Per rule: the magnitude result (positive code), its flags and direction.
  std::uint32_t code[kRules];
  std::uint8_t flags[kRules];
  std::int8_t dir[kRules];
  bool ovf[kRules];
  for (int r = 0; r < kRules; ++r) {
    const std::size_t pick = j + (up[r] ? 1 : 0);
    ovf[r] = pick == last;
    if (ovf[r]) continue;
    const entry& e = pick == 0 && !t.f.has_zero ? t.table[1] : t.table[pick];  // no zero: the smallest
    code[r] = e.code;
    flags[r] = exact ? 0 : static_cast<std::uint8_t>(flag::inexact | (tiny[r] ? flag::underflow : 0));
    dir[r] = static_cast<std::int8_t>(sign_of(e.value - a));
  }
  for (int neg = 0; neg < 2; ++neg) {
    const std::uint32_t sign = neg ? t.sign : 0;
    for (int mi = 0; mi < 6; ++mi) {
      const int r = kRuleFor[neg][mi];
      out.overflow[neg][mi] = ovf[r];
      rounded& w = out.r[neg][mi];
      if (neg && !t.f.is_signed) {
        w = {t.nan_pos, flag::invalid, 0};
        out.overflow[neg][mi] = false;
      } else if (ovf[r]) {
        const std::uint8_t of = flag::overflow | flag::inexact;
        if (r == 0 || r == 4) {
          w = {t.max_code | sign, of, static_cast<std::int8_t>(neg ? 1 : -1)};
        } else if (t.has_inf) {
          w = {t.inf_code | sign, of, static_cast<std::int8_t>(neg ? -1 : 1)};
        } else {
          w = {neg ? t.nan_neg : t.nan_pos, of, 0};
        }
      } else {
        const std::uint32_t c = code[r] == 0 ? (neg && t.has_neg_zero ? t.sign : 0) : code[r] | sign;
        w = {c, flags[r], static_cast<std::int8_t>(neg ? -dir[r] : dir[r])};
      }
    }
  }
}

// The overflow result under the saturate and nan policies.
rounded reference_overflow(const target& t, bool negative, overflow_policy p) {
  const std::uint8_t of = flag::overflow | flag::inexact;
  if (p == overflow_policy::saturate)
    return {t.max_code | (negative ? t.sign : 0), of, static_cast<std::int8_t>(negative ? 1 : -1)};
  return {negative ? t.nan_neg : t.nan_pos, of, 0};
}

// The reference for infinities, NaNs and zeros (policy-dependent for infinities).
rounded reference_special(const target& t, std::uint32_t x, overflow_policy policy) {
  const bool negative = (x >> 31) != 0;
  const std::uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) {  // NaN: keep the sign; signaling raises invalid
    const bool signaling = (mag & 0x400000u) == 0;
    return {negative ? t.nan_neg : t.nan_pos, static_cast<std::uint8_t>(signaling ? flag::invalid : 0), 0};
  }
  if (mag == 0x7f800000u) {
    if (negative && !t.f.is_signed) return {t.nan_pos, flag::invalid, 0};
    if (t.has_inf && policy != overflow_policy::saturate) return {t.inf_code | (negative ? t.sign : 0), 0, 0};
    if (policy == overflow_policy::saturate)
      return {t.max_code | (negative ? t.sign : 0), flag::invalid, static_cast<std::int8_t>(negative ? 1 : -1)};
    return {negative ? t.nan_neg : t.nan_pos, flag::invalid, 0};
  }
  // zero
  if (!t.f.has_zero) return {t.nan_pos, flag::invalid, 0};
  return {negative && t.has_neg_zero ? t.sign : 0u, 0, 0};
}

struct tally {
  std::atomic<std::uint64_t> cases{0}, policy_cases{0}, mismatches{0};
  std::mutex print;
};

void report(tally& ty, const target& t, std::uint32_t x, const char* mode, overflow_policy p, const rounded& got,
            const rounded& want) {
  if (ty.mismatches.fetch_add(1) >= 10) return;
  const std::lock_guard<std::mutex> lock(ty.print);
  std::printf("MISMATCH fp32 0x%08" PRIx32 " (%.9g) -> %s mode %s policy %d: core 0x%" PRIx32 " flags %s dir %d, "
              "reference 0x%" PRIx32 " flags %s dir %d\n",
              x, static_cast<double>(std::bit_cast<float>(x)), t.name.c_str(), mode, static_cast<int>(p), got.code,
              fpemu::flags_to_string(got.flags).c_str(), got.direction, want.code,
              fpemu::flags_to_string(want.flags).c_str(), want.direction);
  std::fflush(stdout);
}

// Magnitude codes [begin, end) with both signs.
void run_chunk(const target& t, std::uint32_t begin, std::uint32_t end, tally& ty) {
  const format& f32 = fpemu::formats::fp32;
  std::uint64_t cases = 0, policy_cases = 0;
  const double first = static_cast<double>(std::bit_cast<float>(std::min(begin, 0x7f800000u)));
  // table[j].value <= a < table[j+1].value
  std::size_t j = static_cast<std::size_t>(
      std::upper_bound(t.table.begin(), t.table.end(), first, [](double v, const entry& e) { return v < e.value; }) -
      t.table.begin() - 1);
  const std::size_t last = t.table.size() - 1;
  ref_batch want;
  for (std::uint32_t mag = begin; mag < end; ++mag) {
    if (mag >= 0x7f800000u || mag == 0) {  // infinities, NaNs, zeros: every policy
      for (const std::uint32_t x : {mag, mag | 0x80000000u}) {
        for (int mi = 0; mi < 6; ++mi) {
          for (const overflow_policy p : {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan}) {
            const rounded w = reference_special(t, x, p);
            const rounded g = fpemu::convert(t.f, f32, x, rounding{kModes[mi], p});
            ++(p == overflow_policy::ieee ? cases : policy_cases);
            if (g != w) report(ty, t, x, kModeNames[mi], p, g, w);
          }
        }
      }
      continue;
    }
    const double a = static_cast<double>(std::bit_cast<float>(mag));
    while (j < last && t.table[j + 1].value <= a) ++j;
    reference_finite(t, a, j, want);
    // The other policies: near the overflow threshold always, far above it on a 1/256 sample.
    const bool check_policies = j + 1 == last || (mag & 0xff) == 0;
    for (int neg = 0; neg < 2; ++neg) {
      const std::uint32_t x = neg ? mag | 0x80000000u : mag;
      // fpemu::convert(t.f, fp32, x, r) is round(t.f, decode(fp32, x), r): decode once.
      const fpemu::unpacked u = fpemu::decode(f32, x);
      for (int mi = 0; mi < 6; ++mi) {
        const rounding r{kModes[mi], overflow_policy::ieee};
        const rounded g = fpemu::round(t.f, u, r);
        ++cases;
        if (g != want.r[neg][mi]) report(ty, t, x, kModeNames[mi], overflow_policy::ieee, g, want.r[neg][mi]);
        // The core's short path for binary32 inputs must agree on every input too.
        const rounded q = fpemu::round_float(t.f, std::bit_cast<float>(x), r);
        if (q != want.r[neg][mi]) report(ty, t, x, kModeNames[mi], overflow_policy::ieee, q, want.r[neg][mi]);
        if (!want.overflow[neg][mi] || !check_policies) continue;
        for (const overflow_policy p : {overflow_policy::saturate, overflow_policy::nan}) {
          const rounded w = reference_overflow(t, neg != 0, p);
          const rounded gp = fpemu::convert(t.f, f32, x, rounding{kModes[mi], p});
          ++policy_cases;
          if (gp != w) report(ty, t, x, kModeNames[mi], p, gp, w);
        }
      }
    }
  }
  ty.cases += cases;
  ty.policy_cases += policy_cases;
}

std::vector<target> targets() {
  std::vector<target> v;
  for (const char* name : {"e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "e8m0fnu", "bf16", "fp16"}) {
    const auto f = fpemu::parse_format(name);
    REQUIRE(f.has_value());
    v.push_back(make_target(name, *f));
  }
  return v;
}

}  // namespace

TEST_CASE("every fp32 code into e4m3fn e5m2 e4m3fnuz e5m2fnuz e8m0fnu bf16 fp16, every deterministic mode == "
          "table-walk reference (code, flags, direction)") {
  // Timing runs: see exhaustive_sweep.hpp (chunks of 2^20 magnitudes here).
  const exhaustive::sweep sweep = exhaustive::sweep::from_environment();
  const std::uint64_t limit = std::uint64_t{1} << 31;  // every magnitude, both signs in run_chunk
  for (const target& t : targets()) {
    const auto start = std::chrono::steady_clock::now();
    tally ty;
    sweep.run(limit, [&](std::uint64_t begin, std::uint64_t end) {
      run_chunk(t, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end), ty);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::uint64_t expected = sweep.stride == 1 ? limit * 2 * 6 : ty.cases.load();
    std::printf("exhaustive_fp32_inputs: fp32 -> %s: %" PRIu64 " inputs x 6 modes = %" PRIu64
                " cases (policy ieee) + %" PRIu64 " saturate/nan cases, %" PRIu64 " mismatches (%.1f s)\n",
                t.name.c_str(), ty.cases.load() / 6, ty.cases.load(), ty.policy_cases.load(), ty.mismatches.load(), s);
    std::fflush(stdout);
    CHECK(ty.cases.load() == expected);
    CHECK(ty.mismatches.load() == 0);
  }
}
