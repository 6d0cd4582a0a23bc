// The rounding core: the one definition of every rounding decision in fpemu.
//
// round(format, exact value, rounding, random bits) -> code, IEEE flags, error direction.
// A few fast paths make the same decisions for the cases they cover, each with a written
// argument at its top and tests that compare it bit for bit with this routine:
//  - round_float (round_float.hpp): binary32 inputs; test_round_float, and every binary32 input
//    for the 8- and 16-bit formats in the opt-in suite exhaustive-core (exhaustive_fp32_inputs);
//  - the SIMD array kernels (src/array_simd.cpp): test_array_simd on every SIMD target, every
//    binary32 input in the opt-in suite exhaustive (exhaustive_array_paths);
//  - the fast GEMM kernels (analysis/reference/gemm_kernels.hpp): hardware binary32 FMA where it
//    is exact or one nearest-even rounding; test_gemm;
//  - the GPU's conversion instructions (cuda/convert.hpp: used only once proven on every binary32
//    input on the device at hand) and the fused optimizer's element steps
//    (cuda/fused_optimizer.hpp): test_cuda_convert and test_cuda_optimizer on the host, and
//    fpemu gpu-check on the device.
// Integer-only and constexpr so that the same code runs at compile time, on the host and on a
// GPU. Conventions (documented in docs/formats.md):
//  - underflow is signalled when the result is tiny *after* rounding (to the format's precision
//    with an unbounded exponent range) and inexact, as on x86 and RISC-V;
//  - overflow when that same rounded value exceeds the largest finite number; the policy then
//    picks infinity, the largest finite or NaN (see rounding.hpp);
//  - formats without subnormals round tiny values to the set {0, smallest normal};
//  - round-to-odd sets the last bit of the significand (for 1-bit significands, as in e8m0fnu,
//    it therefore equals toward-zero); like toward-zero it never overflows to infinity.
#pragma once

#include <cstdint>

#include "fpemu/detail/bits.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"
#include "fpemu/status.hpp"
#include "fpemu/unpacked.hpp"

namespace fpemu {
namespace detail {

// How the magnitude is rounded once the sign is known.
enum class magnitude_rule : std::uint8_t { down, up, nearest_even, nearest_away, odd, stochastic, stochastic_exact };

FPEMU_HD constexpr magnitude_rule rule_for(round_mode mode, bool negative) {
  switch (mode) {
    case round_mode::nearest_even: return magnitude_rule::nearest_even;
    case round_mode::nearest_away: return magnitude_rule::nearest_away;
    case round_mode::toward_zero: return magnitude_rule::down;
    case round_mode::toward_positive: return negative ? magnitude_rule::down : magnitude_rule::up;
    case round_mode::toward_negative: return negative ? magnitude_rule::up : magnitude_rule::down;
    case round_mode::to_odd: return magnitude_rule::odd;
    case round_mode::stochastic: return magnitude_rule::stochastic;
    case round_mode::stochastic_exact: return magnitude_rule::stochastic_exact;
  }
  return magnitude_rule::nearest_even;
}

struct quantum_rounding {
  u128 m = 0;          // the rounded magnitude in units of the quantum
  bool inexact = false;
  bool up = false;     // rounded away from zero
};

// Rounds sig / 2^shift to an integer by `rule`. The fraction below the quantum is read as its
// top 64 bits `top` plus `below` (any lower bit set):
//
//      sig:  [ m ............ | top (64 bits) | below ... ]
//                             ^ quantum (2^shift)
FPEMU_HD constexpr quantum_rounding round_to_quantum(u128 sig, int shift, magnitude_rule rule, int sr_bits,
                                                     std::uint64_t random) {
  const u128 m = shift >= 128 ? 0 : sig >> shift;
  const u128 rem = shift >= 128 ? sig : sig & low_mask(shift);
  if (rem == 0) return {m, false, false};

  std::uint64_t top = 0;
  bool below = false;
  const int lowbits = shift - 64;
  if (lowbits >= 128) {
    below = true;
  } else if (lowbits >= 0) {
    top = static_cast<std::uint64_t>(rem >> lowbits);
    below = (rem & low_mask(lowbits)) != 0;
  } else {
    top = static_cast<std::uint64_t>(rem << -lowbits);
  }

  const bool half = (top >> 63) != 0;
  const bool beyond_half = (top << 1) != 0 || below;
  bool up = false;
  switch (rule) {
    case magnitude_rule::down: up = false; break;
    case magnitude_rule::up: up = true; break;
    case magnitude_rule::nearest_even: up = half && (beyond_half || (m & 1) != 0); break;
    case magnitude_rule::nearest_away: up = half; break;
    case magnitude_rule::odd: up = (m & 1) == 0; break;
    case magnitude_rule::stochastic: {
      // Hardware with k random bits: add them to the k fraction bits below the quantum and
      // keep the carry. P(up) = floor(d * 2^k) / 2^k for a fractional distance d.
      const int k = sr_bits < 1 ? 1 : (sr_bits > 32 ? 32 : sr_bits);
      const std::uint64_t fraction_k = top >> (64 - k);
      const std::uint64_t r = random & ((std::uint64_t{1} << k) - 1);
      up = ((fraction_k + r) >> k) != 0;
      break;
    }
    case magnitude_rule::stochastic_exact:
      up = (u128{top} + random + (below ? 1 : 0)) >> 64 != 0;
      break;
  }
  return {m + (up ? 1 : 0), true, up};
}

FPEMU_HD constexpr std::uint32_t nan_code(const format& f, bool negative) {
  switch (f.encoding) {
    case nonfinite::ieee:
      return (negative ? sign_mask(f) : 0) | (exp_field_max(f) << f.frac_bits) |
             (std::uint32_t{1} << (f.frac_bits - 1));
    case nonfinite::fn: return (negative ? sign_mask(f) : 0) | magnitude_mask(f);
    case nonfinite::fnuz: return sign_mask(f);
    case nonfinite::finite: break;
  }
  return 0;  // no NaN: callers raise `invalid` and return +0
}

FPEMU_HD constexpr std::uint32_t inf_code(const format& f, bool negative) {
  return (negative ? sign_mask(f) : 0) | (exp_field_max(f) << f.frac_bits);
}

FPEMU_HD constexpr std::uint32_t zero_code(const format& f, bool negative) {
  return negative && has_negative_zero(f) ? sign_mask(f) : 0;
}

FPEMU_HD constexpr std::uint32_t max_code(const format& f, bool negative) {
  return (negative ? sign_mask(f) : 0) | max_finite_magnitude(f);
}

FPEMU_HD constexpr std::int8_t signed_direction(bool magnitude_up, bool negative) {
  return static_cast<std::int8_t>(magnitude_up != negative ? 1 : -1);
}

// NaN, or +0 with `invalid` for a format that has no NaN.
FPEMU_HD constexpr rounded invalid_result(const format& f, bool negative) {
  return {has_nan(f) ? nan_code(f, negative) : 0, flag::invalid, 0};
}

// Value for an overflowing result: the policy decides between infinity, largest finite, NaN.
FPEMU_HD constexpr rounded overflow_result(const format& f, bool negative, magnitude_rule rule, overflow_policy policy) {
  constexpr std::uint8_t flags = flag::overflow | flag::inexact;
  const rounded largest{max_code(f, negative), flags, signed_direction(false, negative)};
  if (policy == overflow_policy::saturate || !has_nan(f)) return largest;
  if (policy == overflow_policy::nan) return {nan_code(f, negative), flags, 0};
  if (rule == magnitude_rule::down || rule == magnitude_rule::odd) return largest;
  if (has_inf(f)) return {inf_code(f, negative), flags, signed_direction(true, negative)};
  return {nan_code(f, negative), flags, 0};
}

}  // namespace detail

// Rounds the exact value x into format f. `random` supplies the random bits of the stochastic
// modes (its low sr_bits bits, or all 64 for stochastic_exact) and is ignored otherwise.
FPEMU_HD constexpr rounded round(const format& f, const unpacked& x, const rounding& r, std::uint64_t random = 0) {
  using detail::u128;
  const bool neg = x.negative;

  switch (x.cls) {
    case value_class::nan:
      return {has_nan(f) ? detail::nan_code(f, neg) : 0,
              static_cast<std::uint8_t>(x.signaling || !has_nan(f) ? flag::invalid : 0), 0};
    case value_class::infinite:
      if (neg && !f.is_signed) return detail::invalid_result(f, false);
      // saturate clamps infinite inputs too, as PTX .satfinite does.
      if (has_inf(f) && r.overflow != overflow_policy::saturate) return {detail::inf_code(f, neg), 0, 0};
      if (r.overflow == overflow_policy::saturate || !has_nan(f))
        return {detail::max_code(f, neg), flag::invalid, detail::signed_direction(false, neg)};
      return detail::invalid_result(f, neg);
    case value_class::zero:
      if (!f.has_zero) return detail::invalid_result(f, false);
      return {detail::zero_code(f, neg), 0, 0};
    case value_class::finite: break;
  }
  if (neg && !f.is_signed) return detail::invalid_result(f, false);

  // Normalise: leading bit at 125, so the quantum sits at least 94 bits below it and every
  // lost bit is jammed far below the 64 bits the stochastic modes read.
  u128 sig = x.sig == 0 ? u128{1} : x.sig;
  int exp = x.exp;
  const int lead = detail::msb128(sig);
  if (lead > 125) {
    sig = detail::shift_right_jam(sig, lead - 125);
  } else {
    sig <<= 125 - lead;
  }
  exp += lead - 125;
  if (x.sticky) sig |= 1;
  const int e = exp + 125;  // exponent of the leading bit: 2^e <= |x| < 2^(e+1)

  const detail::magnitude_rule rule = detail::rule_for(r.mode, neg);
  const int fb = f.frac_bits;
  const int lo = emin(f);
  const bool gradual = f.subnormals && f.has_zero;
  const u128 carry = u128{1} << (fb + 1);

  int q = (gradual && e < lo ? lo : e) - fb;  // exponent of the quantum
  detail::quantum_rounding res = detail::round_to_quantum(sig, q - exp, rule, r.sr_bits, random);
  if (res.m == carry) {
    res.m >>= 1;
    q += 1;
  }

  // Tininess after rounding: the value rounded to p bits with an unbounded exponent range is
  // below the smallest normal. Only a value with e == emin - 1 can round up out of it.
  bool tiny = false;
  if (e < lo) {
    if (gradual) {
      tiny = true;
      if (e == lo - 1) {
        const auto p_bits = detail::round_to_quantum(sig, e - fb - exp, rule, r.sr_bits, random);
        tiny = p_bits.m != carry;
      }
    } else {
      tiny = q + fb < lo;
      if (tiny) {  // round to {0, smallest normal}
        q = lo;
        res = detail::round_to_quantum(sig, q - exp, rule, r.sr_bits, random);
        if (res.m == 0 && !f.has_zero) res = {1, true, true};
        if (res.m == 1) {  // the smallest normal, as a normal significand
          res.m = u128{1} << fb;
          q = lo - fb;
        }
      }
    }
  }

  std::uint8_t flags = res.inexact ? flag::inexact : 0;
  if (tiny && res.inexact) flags |= flag::underflow;

  if (res.m != 0 && res.m >= (u128{1} << fb)) {
    const int lead_exp = q + fb;
    if (lead_exp > emax(f) || (lead_exp == emax(f) && res.m > max_significand(f)))
      return detail::overflow_result(f, neg, rule, r.overflow);
  }

  const std::int8_t dir = res.inexact ? detail::signed_direction(res.up, neg) : 0;
  if (res.m == 0) return {detail::zero_code(f, neg), flags, dir};
  const std::uint32_t m = static_cast<std::uint32_t>(res.m);
  const std::uint32_t sign = neg ? sign_mask(f) : 0;
  if (m < (std::uint32_t{1} << fb)) return {sign | m, flags, dir};  // subnormal
  const auto field = static_cast<std::uint32_t>(q + fb + f.bias);
  return {sign | (field << fb) | (m & frac_mask(f)), flags, dir};
}

}  // namespace fpemu
