// std::numeric_limits<fpemu::fp<F>>, every member derived from the format's constexpr functions.
//
// Conventions follow C (ISO C 5.2.4.2.2) and C++ [numeric.limits.members]: digits counts the
// hidden bit, min_exponent/max_exponent are one more than the unbiased exponents (emin + 1,
// emax + 1), min() is the smallest normal, lowest() the most negative finite value (for an
// unsigned format the value of code 0), and the values of members a format lacks (infinity()
// without infinities, ...) are T(), the code 0. fp<formats::fp32> agrees with float member by
// member; tests/test_value.cpp checks that.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "fpemu/detail/bits.hpp"
#include "fpemu/format.hpp"
#include "fpemu/round_core.hpp"
#include "fpemu/value.hpp"

namespace fpemu::detail {

// floor(log10(x)) and ceil(log10(x)) need an exact comparison of x = m * 2^e with 10^k; a
// double comparison can be off by one near a power of ten. This small multi-word integer is
// enough for every validated format (values within binary64's range, |k| <= 330): it holds
// m * 5^|k| * 2^shift, at most 32 + 767 + 1400 bits.
struct pow10_compare {
  static constexpr int words = 40;
  std::array<std::uint64_t, words> w{};

  constexpr void mul_small(std::uint64_t f) {
    u128 carry = 0;
    for (auto& x : w) {
      const u128 p = static_cast<u128>(x) * f + carry;
      x = static_cast<std::uint64_t>(p);
      carry = p >> 64;
    }
  }
  constexpr void shl(int n) {
    const int q = n / 64, r = n % 64;
    for (int i = words - 1; i >= 0; --i) {
      const std::uint64_t hi = i - q >= 0 ? w[i - q] : 0;
      const std::uint64_t lo = i - q - 1 >= 0 ? w[i - q - 1] : 0;
      w[i] = r == 0 ? hi : (hi << r) | (lo >> (64 - r));
    }
  }
  friend constexpr int cmp(const pow10_compare& a, const pow10_compare& b) {
    for (int i = words - 1; i >= 0; --i)
      if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    return 0;
  }
};

// Sign of m * 2^e - 10^k, for m > 0.
constexpr int compare_with_pow10(std::uint64_t m, int e, int k) {
  pow10_compare lhs, rhs;
  lhs.w[0] = m;
  rhs.w[0] = 1;
  // m * 2^e  vs  5^k * 2^k: move 5^|k| to the side where it multiplies, then align powers of 2.
  for (int i = 0; i < (k < 0 ? -k : k); ++i) (k < 0 ? lhs : rhs).mul_small(5);
  if (e > k) lhs.shl(e - k);
  else rhs.shl(k - e);
  return cmp(lhs, rhs);
}

// floor(log10(m * 2^e)) for m > 0 (ceil when `ceiling`), searched from a binary estimate.
constexpr int log10_of(std::uint64_t m, int e, bool ceiling) {
  int bits = 0;
  while ((m >> bits) > 1) ++bits;
  int k = (e + bits) * 30103 / 100000;  // log10(2) ~ 0.30103; off by at most one or two
  if (!ceiling) {
    while (compare_with_pow10(m, e, k) < 0) --k;
    while (compare_with_pow10(m, e, k + 1) >= 0) ++k;
  } else {
    while (compare_with_pow10(m, e, k) > 0) ++k;
    while (compare_with_pow10(m, e, k - 1) <= 0) --k;
  }
  return k;
}

}  // namespace fpemu::detail

namespace std {

template <fpemu::format F>
struct numeric_limits<fpemu::fp<F>> {
 private:
  using T = fpemu::fp<F>;
  static constexpr bool ieee_nan_bits = F.encoding == fpemu::nonfinite::ieee;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = F.is_signed;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = fpemu::has_inf(F);
  static constexpr bool has_quiet_NaN = fpemu::has_nan(F);
  // A signaling NaN needs a NaN code with the top fraction bit clear and another bit set: ieee
  // encoding with at least two fraction bits (e5m2 has 0x7d; an eXm1 ieee format has none).
  static constexpr bool has_signaling_NaN = ieee_nan_bits && F.frac_bits >= 2;
  static constexpr std::float_denorm_style has_denorm =
      F.subnormals && F.has_zero ? std::denorm_present : std::denorm_absent;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  // IEEE 754 binary arithmetic in full: infinities, both NaNs, signed zeros, gradual underflow
  // and the standard bias (emin = 1 - emax). bf16, tf32 and e8m13 qualify as IEEE 754
  // "extendable precision" formats; fn/fnuz/finite formats and nosub variants do not.
  static constexpr bool is_iec559 = has_infinity && has_signaling_NaN && has_denorm == std::denorm_present &&
                                    F.is_signed && fpemu::emin(F) == 1 - fpemu::emax(F);
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = fpemu::precision(F);
  // floor((p - 1) log10 2) and ceil(1 + p log10 2); p log10 2 is never an integer for p >= 1.
  static constexpr int digits10 = (digits - 1) * 30103 / 100000;
  static constexpr int max_digits10 = 2 + digits * 30103 / 100000;
  static constexpr int radix = 2;
  static constexpr int min_exponent = fpemu::emin(F) + 1;
  static constexpr int max_exponent = fpemu::emax(F) + 1;
  // ceil(log10(min())) and floor(log10(max())), computed exactly.
  static constexpr int min_exponent10 = fpemu::detail::log10_of(1, fpemu::emin(F), true);
  static constexpr int max_exponent10 =
      fpemu::detail::log10_of(fpemu::max_significand(F), fpemu::emax(F) - F.frac_bits, false);
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;  // the core detects tininess after rounding

  static constexpr T min() noexcept { return T(fpemu::min_normal(F)); }
  static constexpr T max() noexcept { return T(fpemu::max_finite(F)); }
  // Code 0 is the least value of an unsigned format: +0, or 2^-127 for e8m0fnu.
  static constexpr T lowest() noexcept { return F.is_signed ? -max() : T::from_code(0); }
  // 2^(1-p), the distance from 1 to the next value (rounded to the format where 1 is not a
  // normal number, as in a format with bias 0).
  static constexpr T epsilon() noexcept { return T(fpemu::machine_epsilon(F)); }
  static constexpr T round_error() noexcept { return T(0.5); }
  static constexpr T infinity() noexcept {
    return has_infinity ? T::from_code(fpemu::detail::inf_code(F, false)) : T();
  }
  static constexpr T quiet_NaN() noexcept {
    return has_quiet_NaN ? T::from_code(fpemu::detail::nan_code(F, false)) : T();
  }
  // Exponent field all ones, fraction 01000...: the top fraction bit clear marks it signaling.
  // The same pattern as GCC's float and double (0x7fa00000) and Eigen::half (0x7d00).
  static constexpr T signaling_NaN() noexcept {
    if constexpr (has_signaling_NaN)
      return T::from_code((fpemu::exp_field_max(F) << F.frac_bits) | (1u << (F.frac_bits - 2)));
    else
      return T();
  }
  // The smallest subnormal, or min() without subnormals (min_positive says the same).
  static constexpr T denorm_min() noexcept { return T(fpemu::min_positive(F)); }
};

}  // namespace std
