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
// Everything else (zeros, subnormal inputs or results, overflow, inf/NaN, stochastic_exact,
// unsigned or zero-less formats) goes to the core.
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
// codes by moving the fields into place, the rest through the core.
FPEMU_HD constexpr float code_to_float(const format& f, std::uint32_t code) {
  const std::uint32_t exp_field = (code >> f.frac_bits) & exp_field_max(f);
  if (f.is_signed && f.has_zero && exp_field != 0 && exp_field != exp_field_max(f)) {
    const std::uint32_t sign = (code & sign_mask(f)) != 0 ? 0x80000000u : 0;
    const std::uint32_t biased = exp_field - static_cast<std::uint32_t>(f.bias) + 127;
    return std::bit_cast<float>(sign | (biased << 23) | ((code & frac_mask(f)) << (23 - f.frac_bits)));
  }
  return detail::code_to_float_general(f, code);
}

}  // namespace fpemu
