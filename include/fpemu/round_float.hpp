// Rounding a binary32 value into a format, with a short path for the common case.
//
// round_float(f, x, r, random) returns exactly what round(f, unpack(x), r, random) returns (the
// core, round_core.hpp); the tests check this bitwise on every binary32 input for the 16-bit and
// 8-bit formats in every mode. Where x and the result are both normal and the result cannot
// overflow, the decision reduces to adding an increment below the kept bits of x's magnitude and
// letting the carry ripple into the exponent field. That is the core's rule written for a 24-bit
// significand, not a second rounding rule: round_to_quantum() rounds up exactly when
//   nearest_even  fraction > half, or == half with an odd kept part
//   nearest_away  fraction >= half
//   up / down     fraction != 0 / never
//   stochastic    floor(fraction * 2^k) + r >= 2^k   (k random bits r)
// and each case below is the increment whose carry out of the fraction field says the same.
// Inputs above the format's exponent range take the core's overflow result directly, inputs
// below its normal range the core's rounding to the subnormal quantum (with the core's
// tininess-after-rounding test for the binade just below). Everything else (zeros, binary32
// subnormals, overflow from the top binade, inf/NaN, stochastic_exact, unsigned, zero-less or
// subnormal-less formats) goes to the whole core.
#pragma once

#include <bit>
#include <cstdint>

#include "fpemu/convert.hpp"
#include "fpemu/round_core.hpp"

namespace fpemu {
namespace detail {
FPEMU_COLD FPEMU_HD constexpr rounded round_float_general(const format& f, float x, const rounding& r,
                                                          std::uint64_t random) {
  return round(f, unpack(x), r, random);
}
FPEMU_COLD FPEMU_HD constexpr float code_to_float_general(const format& f, std::uint32_t code) {
  return to_float(f, code);
}
}  // namespace detail

FPEMU_HD constexpr rounded round_float(const format& f, float x, const rounding& r = {}, std::uint64_t random = 0) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t mag = bits & 0x7fffffffu;
  const int shift = 23 - f.frac_bits;
  const int e = static_cast<int>(mag >> 23) - 127;
  // Finite inputs above the format's exponent range overflow whatever the mode and the random
  // bits: the core's overflow result, without unpacking.
  if (f.is_signed && (mag >> 23) != 255 && e > emax(f))
    return detail::overflow_result(f, (bits >> 31) != 0, detail::rule_for(r.mode, (bits >> 31) != 0), r.overflow);
  // Finite inputs below the format's normal range (gradual underflow): the core's rounding of
  // the significand to the subnormal quantum, without unpacking. A carry out of the subnormals
  // gives 2^frac_bits, the smallest normal's code. Tininess is after rounding, as in the core:
  // only an input in the binade just below the normal range (e = emin - 1) can be not tiny, when
  // rounding it at its own precision (a quantum half the subnormal one, the same random bits)
  // also carries into 2^emin.
  if (f.is_signed && f.has_zero && f.subnormals && (mag >> 23) != 0 && e < emin(f) &&
      r.mode != round_mode::stochastic_exact) {
    const bool neg = (bits >> 31) != 0;
    const std::uint32_t sig = (mag & 0x7fffffu) | 0x800000u;
    const int shift = emin(f) - f.frac_bits - (e - 23);
    const detail::magnitude_rule rule = detail::rule_for(r.mode, neg);
    const detail::quantum_rounding q = detail::round_to_quantum(sig, shift, rule, r.sr_bits, random);
    if (!q.inexact) return {(neg ? sign_mask(f) : 0) | static_cast<std::uint32_t>(q.m), 0, 0};
    const std::int8_t dir = detail::signed_direction(q.up, neg);
    const bool tiny = e < emin(f) - 1 || q.m != (detail::u128{1} << f.frac_bits) ||
                      detail::round_to_quantum(sig, shift - 1, rule, r.sr_bits, random).m !=
                          (detail::u128{2} << f.frac_bits);
    const std::uint8_t flags = tiny ? flag::inexact | flag::underflow : flag::inexact;
    if (q.m == 0) return {detail::zero_code(f, neg), flags, dir};
    return {(neg ? sign_mask(f) : 0) | static_cast<std::uint32_t>(q.m), flags, dir};
  }
  const bool fast = f.is_signed && f.has_zero && shift >= 0 && (mag >> 23) != 0 && (mag >> 23) != 255 &&
                    e >= emin(f) && e < emax(f) &&
                    r.mode != round_mode::stochastic_exact;
  if (!fast) return detail::round_float_general(f, x, r, random);

  const bool neg = (bits >> 31) != 0;
  const std::uint32_t low = shift == 0 ? 0 : mag & ((std::uint32_t{1} << shift) - 1);
  // Rebias: binary32's biased exponent E becomes E - 127 + f.bias (modular arithmetic; the
  // result is a valid magnitude because e lies in f's normal range).
  const std::uint32_t rebias = static_cast<std::uint32_t>(f.bias - 127) << f.frac_bits;
  const std::uint32_t sign = neg ? sign_mask(f) : 0;
  if (low == 0) return {sign | ((mag >> shift) + rebias), 0, 0};

  const std::uint32_t kept = mag >> shift;
  std::uint32_t rounded_mag = kept;
  switch (detail::rule_for(r.mode, neg)) {
    case detail::magnitude_rule::down: break;
    case detail::magnitude_rule::up: rounded_mag = kept + 1; break;
    case detail::magnitude_rule::nearest_even:
      rounded_mag = (mag + (std::uint32_t{1} << (shift - 1)) - 1 + (kept & 1)) >> shift;
      break;
    case detail::magnitude_rule::nearest_away: rounded_mag = (mag + (std::uint32_t{1} << (shift - 1))) >> shift; break;
    case detail::magnitude_rule::odd: rounded_mag = kept | 1; break;
    case detail::magnitude_rule::stochastic: {
      const int k = r.sr_bits < 1 ? 1 : (r.sr_bits > 32 ? 32 : r.sr_bits);
      const std::uint64_t rnd = random & ((std::uint64_t{1} << k) - 1);
      // Align the k random bits with the top k bits of the fraction field; random bits that
      // fall below a fraction narrower than k cannot reach the carry and are dropped.
      const std::uint32_t inc = k <= shift ? static_cast<std::uint32_t>(rnd << (shift - k))
                                           : static_cast<std::uint32_t>(rnd >> (k - shift));
      rounded_mag = (mag + inc) >> shift;
      break;
    }
    case detail::magnitude_rule::stochastic_exact: break;  // not on this path
  }
  const bool up = rounded_mag != kept;
  return {sign | (rounded_mag + rebias), flag::inexact, detail::signed_direction(up, neg)};
}

// The value of `code` as a binary32, for formats whose values are all binary32 values (at most
// 23 fraction bits, exponents within binary32's range; see training::storage_format): normal
// codes by moving the fields into place, zeros and subnormals (of formats with -0) as the
// fraction times the quantum, both exact; the rest through the core.
FPEMU_HD constexpr float code_to_float(const format& f, std::uint32_t code) {
  const std::uint32_t exp_field = (code >> f.frac_bits) & exp_field_max(f);
  const std::uint32_t sign = (code & sign_mask(f)) != 0 ? 0x80000000u : 0;
  if (f.is_signed && f.has_zero && exp_field != 0 && exp_field != exp_field_max(f)) {
    const std::uint32_t biased = exp_field - static_cast<std::uint32_t>(f.bias) + 127;
    return std::bit_cast<float>(sign | (biased << 23) | ((code & frac_mask(f)) << (23 - f.frac_bits)));
  }
  const int q = emin(f) - f.frac_bits;  // the exponent of the subnormals' quantum
  if (f.is_signed && has_negative_zero(f) && f.subnormals && exp_field == 0 && q >= -149 && f.frac_bits <= 23 &&
      code <= (sign_mask(f) | frac_mask(f))) {
    // frac * 2^q in integers (no dependence on the FPU's flush-to-zero setting).
    const std::uint32_t frac = code & frac_mask(f);
    const int lead = detail::bit_width(frac) - 1;  // frac's leading bit
    if (frac == 0) return std::bit_cast<float>(sign);
    if (q + lead < -126) return std::bit_cast<float>(sign | (frac << (q + 149)));  // a binary32 subnormal
    return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(q + lead + 127) << 23) |
                                ((frac << (23 - lead)) & 0x7fffffu));
  }
  return detail::code_to_float_general(f, code);
}

}  // namespace fpemu
