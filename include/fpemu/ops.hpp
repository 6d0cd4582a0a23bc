// IEEE 754 arithmetic on codes of any format, correctly rounded in every mode.
//
// Each operation computes its exact result (or, for div and sqrt, at least 90 correct bits
// plus a sticky bit) on unpacked values, then makes one call to the rounding core. The
// exact_* functions are public so that accumulator models can combine operands of different
// formats before rounding once.
#pragma once

#include <cstdint>

#include "fpemu/round_core.hpp"

namespace fpemu {

// An exact (or sticky-exact) intermediate result and the flags raised while computing it.
struct exact_result {
  unpacked value;
  std::uint8_t flags = 0;
};

namespace detail {

FPEMU_HD constexpr unpacked quiet_nan(bool negative = false) { return unpacked{value_class::nan, negative}; }

FPEMU_HD constexpr std::uint8_t signaling_flags(const unpacked& a) {
  return a.cls == value_class::nan && a.signaling ? flag::invalid : 0;
}

// The first NaN operand, quieted (x86 and ARM propagate the first NaN).
FPEMU_HD constexpr exact_result propagate_nan(const unpacked& a, const unpacked& b, const unpacked& c) {
  const std::uint8_t flags = signaling_flags(a) | signaling_flags(b) | signaling_flags(c);
  const unpacked& n = a.cls == value_class::nan ? a : (b.cls == value_class::nan ? b : c);
  return {quiet_nan(n.negative), flags};
}

FPEMU_HD constexpr bool any_nan(const unpacked& a, const unpacked& b, const unpacked& c = unpacked{}) {
  return a.cls == value_class::nan || b.cls == value_class::nan || c.cls == value_class::nan;
}

// Significand with its leading bit at `lead`, the sticky bit jammed into bit 0.
struct aligned {
  u128 sig;
  int exp;
};
FPEMU_HD constexpr aligned normalise(const unpacked& a, int lead) {
  u128 sig = a.sig == 0 ? u128{1} : a.sig;
  const int shift = lead - msb128(sig);
  sig = shift >= 0 ? sig << shift : shift_right_jam(sig, -shift);
  return {sig | (a.sticky ? 1 : 0), a.exp - shift};
}

}  // namespace detail

FPEMU_HD constexpr unpacked negate(unpacked a) {
  if (a.cls != value_class::nan) a.negative = !a.negative;
  return a;
}

// a + b, exact. An exact zero sum of non-zero operands is +0, or -0 when rounding toward -inf.
FPEMU_HD constexpr exact_result exact_add(const unpacked& a, const unpacked& b, round_mode mode) {
  using detail::u128;
  if (detail::any_nan(a, b)) return detail::propagate_nan(a, b, unpacked{});
  const bool a_inf = a.cls == value_class::infinite, b_inf = b.cls == value_class::infinite;
  if (a_inf && b_inf && a.negative != b.negative) return {detail::quiet_nan(), flag::invalid};
  if (a_inf) return {a};
  if (b_inf) return {b};
  const bool neg_zero_sum = mode == round_mode::toward_negative;
  if (a.cls == value_class::zero && b.cls == value_class::zero)
    return {unpacked{value_class::zero, a.negative == b.negative ? a.negative : neg_zero_sum}};
  if (a.cls == value_class::zero) return {b};
  if (b.cls == value_class::zero) return {a};

  // Both operands with their leading bit at 120; the smaller one shifted right with jamming.
  // Any jammed bit lies at least 118 - 31 bits below the leading bit of the sum.
  detail::aligned x = detail::normalise(a, 120), y = detail::normalise(b, 120);
  bool x_neg = a.negative, y_neg = b.negative;
  if (y.exp > x.exp || (y.exp == x.exp && y.sig > x.sig)) {
    const detail::aligned t = x;
    x = y;
    y = t;
    const bool tn = x_neg;
    x_neg = y_neg;
    y_neg = tn;
  }
  const u128 ys = detail::shift_right_jam(y.sig, x.exp - y.exp);
  const u128 sum = x_neg == y_neg ? x.sig + ys : x.sig - ys;
  if (sum == 0) return {unpacked{value_class::zero, neg_zero_sum}};
  return {make_finite(x_neg, sum, x.exp)};
}

// a * b, exact for significands below 2^64 (every code of a format up to 32 bits).
FPEMU_HD constexpr exact_result exact_mul(const unpacked& a, const unpacked& b) {
  if (detail::any_nan(a, b)) return detail::propagate_nan(a, b, unpacked{});
  const bool neg = a.negative != b.negative;
  const bool a_inf = a.cls == value_class::infinite, b_inf = b.cls == value_class::infinite;
  const bool a_zero = a.cls == value_class::zero, b_zero = b.cls == value_class::zero;
  if ((a_inf && b_zero) || (a_zero && b_inf)) return {detail::quiet_nan(), flag::invalid};
  if (a_inf || b_inf) return {unpacked{value_class::infinite, neg}};
  if (a_zero || b_zero) return {unpacked{value_class::zero, neg}};
  const detail::aligned x = detail::normalise(a, 63), y = detail::normalise(b, 63);
  return {make_finite(neg, x.sig * y.sig, x.exp + y.exp)};
}

// a * b + c with a single rounding.
FPEMU_HD constexpr exact_result exact_fma(const unpacked& a, const unpacked& b, const unpacked& c, round_mode mode) {
  if (detail::any_nan(a, b, c)) {
    // 0 * inf + NaN raises invalid too. IEEE 754-2019 7.2(c) leaves this optional and hardware
    // differs (AMD Zen's FMA does not raise it); fpemu always does.
    exact_result r = detail::propagate_nan(a, b, c);
    const bool zero_inf = (a.cls == value_class::zero && b.cls == value_class::infinite) ||
                          (a.cls == value_class::infinite && b.cls == value_class::zero);
    if (zero_inf) r.flags |= flag::invalid;
    return r;
  }
  const exact_result p = exact_mul(a, b);
  exact_result s = exact_add(p.value, c, mode);
  s.flags |= p.flags;
  return s;
}

// a / b with at least 92 quotient bits and a sticky remainder bit (divisor significands below
// 2^33, which covers every code of a format up to 32 bits).
FPEMU_HD constexpr exact_result exact_div(const unpacked& a, const unpacked& b) {
  if (detail::any_nan(a, b)) return detail::propagate_nan(a, b, unpacked{});
  const bool neg = a.negative != b.negative;
  const bool a_inf = a.cls == value_class::infinite, b_inf = b.cls == value_class::infinite;
  const bool a_zero = a.cls == value_class::zero, b_zero = b.cls == value_class::zero;
  if ((a_inf && b_inf) || (a_zero && b_zero)) return {detail::quiet_nan(), flag::invalid};
  if (a_inf) return {unpacked{value_class::infinite, neg}};
  if (b_inf || a_zero) return {unpacked{value_class::zero, neg}};
  if (b_zero) return {unpacked{value_class::infinite, neg}, flag::divide_by_zero};
  const detail::aligned x = detail::normalise(a, 126);
  const detail::u128 q = x.sig / b.sig, rem = x.sig % b.sig;
  return {make_finite(neg, q, x.exp - b.exp, rem != 0 || a.sticky || b.sticky)};
}

// sqrt(a) with 124 root bits and a sticky remainder bit.
FPEMU_HD constexpr exact_result exact_sqrt(const unpacked& a) {
  using detail::u128;
  if (a.cls == value_class::nan) return {detail::quiet_nan(a.negative), detail::signaling_flags(a)};
  if (a.cls == value_class::zero) return {a};
  if (a.negative) return {detail::quiet_nan(), flag::invalid};
  if (a.cls == value_class::infinite) return {a};
  // Radicand sig * 2^exp with exp even and sig's leading bit at 126 or 127.
  detail::aligned x = detail::normalise(a, 126);
  if ((x.exp & 1) != 0) {
    x.sig <<= 1;
    x.exp -= 1;
  }
  // Digit-by-digit square root of sig * 2^120: 64 bit pairs of sig, then 60 zero pairs.
  u128 root = 0, rem = 0;
  for (int pair = 0; pair < 124; ++pair) {
    const int shift = 126 - 2 * pair;
    const u128 bits = shift >= 0 ? (x.sig >> shift) & 3 : 0;
    rem = (rem << 2) | bits;
    const u128 trial = (root << 2) | 1;
    root <<= 1;
    if (rem >= trial) {
      rem -= trial;
      root |= 1;
    }
  }
  return {make_finite(false, root, (x.exp - 120) / 2, rem != 0)};
}

// ---- Operations on codes of one format ------------------------------------------------------

// Rounds the result of an exact operation (exact_add, exact_mul, exact_fma, exact_div,
// exact_sqrt) once into f, with the operation's own flags (invalid, divide-by-zero) added: the
// one step every operation below ends with, public for code that composes exact operations
// itself (an fma by a scale, an accumulator's step).
FPEMU_HD constexpr rounded round_exact(const format& f, const exact_result& e, const rounding& r,
                                       std::uint64_t random = 0) {
  rounded out = round(f, e.value, r, random);
  // x / 0 in a format without infinity: the infinite exact result is already signalled by
  // divide-by-zero; storing it as NaN or the largest finite is not a second, invalid, exception.
  if (e.flags & flag::divide_by_zero) out.flags &= static_cast<std::uint8_t>(~flag::invalid);
  out.flags |= e.flags;
  return out;
}

FPEMU_HD constexpr rounded add(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r,
                               std::uint64_t random = 0) {
  return round_exact(f, exact_add(decode(f, a), decode(f, b), r.mode), r, random);
}
FPEMU_HD constexpr rounded sub(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r,
                               std::uint64_t random = 0) {
  return round_exact(f, exact_add(decode(f, a), negate(decode(f, b)), r.mode), r, random);
}
FPEMU_HD constexpr rounded mul(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r,
                               std::uint64_t random = 0) {
  return round_exact(f, exact_mul(decode(f, a), decode(f, b)), r, random);
}
FPEMU_HD constexpr rounded div(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r,
                               std::uint64_t random = 0) {
  return round_exact(f, exact_div(decode(f, a), decode(f, b)), r, random);
}
FPEMU_HD constexpr rounded fma(const format& f, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                               const rounding& r, std::uint64_t random = 0) {
  return round_exact(f, exact_fma(decode(f, a), decode(f, b), decode(f, c), r.mode), r, random);
}
FPEMU_HD constexpr rounded sqrt(const format& f, std::uint32_t a, const rounding& r, std::uint64_t random = 0) {
  return round_exact(f, exact_sqrt(decode(f, a)), r, random);
}

}  // namespace fpemu
