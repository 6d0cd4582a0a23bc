// Comparison, IEEE 754-2019 minimum/maximum, next_up/next_down and classification on codes.
// None of these round; they only order and step through a format's codes.
#pragma once

#include <cstdint>

#include "fpemu/ops.hpp"

namespace fpemu {

enum class ordering : std::uint8_t { less, equal, greater, unordered };

struct comparison {
  ordering order = ordering::unordered;
  std::uint8_t flags = 0;
};

namespace detail {
// Orders two non-NaN values.
FPEMU_HD constexpr ordering order_of(const unpacked& a, const unpacked& b) {
  const auto rank = [](const unpacked& v) {  // -1 negative, 0 zero, +1 positive
    return v.cls == value_class::zero ? 0 : (v.negative ? -1 : 1);
  };
  const int ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb ? ordering::less : ordering::greater;
  if (ra == 0) return ordering::equal;
  // Same sign, both non-zero: compare magnitudes, infinity above every finite value.
  ordering mag = ordering::equal;
  const bool ai = a.cls == value_class::infinite, bi = b.cls == value_class::infinite;
  if (ai || bi) {
    mag = ai && bi ? ordering::equal : (ai ? ordering::greater : ordering::less);
  } else {
    const aligned x = normalise(a, 120), y = normalise(b, 120);
    if (x.exp != y.exp) mag = x.exp < y.exp ? ordering::less : ordering::greater;
    else if (x.sig != y.sig) mag = x.sig < y.sig ? ordering::less : ordering::greater;
  }
  if (ra > 0 || mag == ordering::equal) return mag;
  return mag == ordering::less ? ordering::greater : ordering::less;
}
}  // namespace detail

// compareQuiet*: `invalid` only for a signaling NaN operand.
FPEMU_HD constexpr comparison compare_quiet(const format& f, std::uint32_t a, std::uint32_t b) {
  const unpacked x = decode(f, a), y = decode(f, b);
  const std::uint8_t flags = detail::signaling_flags(x) | detail::signaling_flags(y);
  if (detail::any_nan(x, y)) return {ordering::unordered, flags};
  return {detail::order_of(x, y), flags};
}

// compareSignaling* (<, <=, >, >=): `invalid` for any NaN operand.
FPEMU_HD constexpr comparison compare_signaling(const format& f, std::uint32_t a, std::uint32_t b) {
  comparison c = compare_quiet(f, a, b);
  if (c.order == ordering::unordered) c.flags |= flag::invalid;
  return c;
}

namespace detail {
enum class pick : std::uint8_t { minimum, maximum };

// IEEE 754-2019 9.6: -0 < +0 for all four; `number` variants prefer a number over a NaN.
FPEMU_HD constexpr rounded min_max(const format& f, std::uint32_t a, std::uint32_t b, pick which, bool number) {
  const unpacked x = decode(f, a), y = decode(f, b);
  const std::uint8_t flags = signaling_flags(x) | signaling_flags(y);
  const bool xn = x.cls == value_class::nan, yn = y.cls == value_class::nan;
  if (xn || yn) {
    if (number && !(xn && yn)) return {xn ? b : a, flags, 0};
    return {nan_code(f, (xn ? x : y).negative), flags, 0};
  }
  ordering o = order_of(x, y);
  if (o == ordering::equal && x.cls == value_class::zero && x.negative != y.negative)
    o = x.negative ? ordering::less : ordering::greater;
  const bool take_a = which == pick::minimum ? o != ordering::greater : o != ordering::less;
  return {take_a ? a : b, flags, 0};
}
}  // namespace detail

FPEMU_HD constexpr rounded minimum(const format& f, std::uint32_t a, std::uint32_t b) {
  return detail::min_max(f, a, b, detail::pick::minimum, false);
}
FPEMU_HD constexpr rounded maximum(const format& f, std::uint32_t a, std::uint32_t b) {
  return detail::min_max(f, a, b, detail::pick::maximum, false);
}
FPEMU_HD constexpr rounded minimum_number(const format& f, std::uint32_t a, std::uint32_t b) {
  return detail::min_max(f, a, b, detail::pick::minimum, true);
}
FPEMU_HD constexpr rounded maximum_number(const format& f, std::uint32_t a, std::uint32_t b) {
  return detail::min_max(f, a, b, detail::pick::maximum, true);
}

namespace detail {
// Magnitude code of the smallest positive value.
FPEMU_HD constexpr std::uint32_t min_positive_magnitude(const format& f) {
  return f.subnormals || !f.has_zero ? (f.has_zero ? 1u : 0u) : (std::uint32_t{1} << f.frac_bits);
}

// One step away from zero (outward) or toward zero from a finite, non-zero magnitude, or from
// zero outward. Returns false when the format has no such value.
FPEMU_HD constexpr bool step_magnitude(const format& f, std::uint32_t& mag, bool outward) {
  if (outward) {
    if (decode(f, mag).cls == value_class::zero) {
      mag = min_positive_magnitude(f);
      return true;
    }
    if (mag >= max_finite_magnitude(f)) return false;
    ++mag;
    return true;
  }
  if (mag == min_positive_magnitude(f)) {
    if (!f.has_zero) return false;
    mag = 0;
    return true;
  }
  --mag;
  if (decode(f, mag).cls == value_class::zero) mag = 0;  // flushed codes read as zero
  return true;
}

// next_up (toward +inf) when up, else next_down. IEEE 754-2019 5.3.1.
FPEMU_HD constexpr rounded next_toward(const format& f, std::uint32_t code, bool up) {
  const unpacked x = decode(f, code);
  if (x.cls == value_class::nan) return {nan_code(f, x.negative), signaling_flags(x), 0};
  const bool toward_neg_inf = !up;
  if (x.cls == value_class::infinite) {
    if (x.negative != toward_neg_inf) return {max_code(f, x.negative), 0, 0};
    return {code, 0, 0};
  }
  const bool zero = x.cls == value_class::zero;
  // From zero the step goes outward on the side of the direction.
  bool negative = zero ? toward_neg_inf : x.negative;
  const bool outward = zero || (x.negative == toward_neg_inf);
  std::uint32_t mag = zero ? 0 : code & magnitude_mask(f);
  // No such value in the format: beyond the largest finite (infinity if there is one) or below
  // zero in an unsigned format. NaN says so where the format has one; else the code stays.
  const bool below_unsigned = negative && !f.is_signed;
  if (below_unsigned || !step_magnitude(f, mag, outward)) {
    if (outward && has_inf(f) && !below_unsigned) return {inf_code(f, negative), 0, 0};
    return {has_nan(f) ? nan_code(f, negative) : code, 0, 0};
  }
  if (mag == 0) return {zero_code(f, negative), 0, 0};
  return {(negative ? sign_mask(f) : 0) | mag, 0, 0};
}
}  // namespace detail

FPEMU_HD constexpr rounded next_up(const format& f, std::uint32_t code) { return detail::next_toward(f, code, true); }
FPEMU_HD constexpr rounded next_down(const format& f, std::uint32_t code) { return detail::next_toward(f, code, false); }

// IEEE 754-2019 5.7.2 class().
enum class fp_class : std::uint8_t {
  signaling_nan,
  quiet_nan,
  negative_infinity,
  negative_normal,
  negative_subnormal,
  negative_zero,
  positive_zero,
  positive_subnormal,
  positive_normal,
  positive_infinity,
};

FPEMU_HD constexpr fp_class classify(const format& f, std::uint32_t code) {
  const unpacked x = decode(f, code);
  const bool n = x.negative;
  switch (x.cls) {
    case value_class::nan: return x.signaling ? fp_class::signaling_nan : fp_class::quiet_nan;
    case value_class::infinite: return n ? fp_class::negative_infinity : fp_class::positive_infinity;
    case value_class::zero: return n ? fp_class::negative_zero : fp_class::positive_zero;
    case value_class::finite: break;
  }
  const bool subnormal = f.has_zero && ((code & magnitude_mask(f)) >> f.frac_bits) == 0;
  if (subnormal) return n ? fp_class::negative_subnormal : fp_class::positive_subnormal;
  return n ? fp_class::negative_normal : fp_class::positive_normal;
}

}  // namespace fpemu
