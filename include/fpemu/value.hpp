// fp<F>: a value of a compile-time format, stored as its code, with IEEE 754 arithmetic.
//
// A thin wrapper over the same constexpr core that serves runtime formats: every operator
// calls ops.hpp / compare.hpp / convert.hpp with rounding{} (round to nearest even, overflow
// as IEEE 754 prescribes) and keeps only the code; status flags and the error direction are
// dropped. Code that needs them, or another mode, calls the core functions on code() directly.
//
// The code lives in the smallest unsigned integer that holds width(F) bits, so fp<bf16> is two
// bytes and an array of fp<e4m3fn> is an array of bytes. Conversions are explicit both ways:
// every one of them rounds, and a silent one would hide a rounding.
#pragma once

#include <cassert>
#include <compare>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "fpemu/compare.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/format.hpp"

namespace fpemu {

namespace detail {
template <int Bits>
using code_storage =
    std::conditional_t<(Bits <= 8), std::uint8_t, std::conditional_t<(Bits <= 16), std::uint16_t, std::uint32_t>>;
}  // namespace detail

template <format F>
class fp {
  // The shape limits of check() (spec.cpp) that a constant expression can test; the rest
  // (encoding rules, bias range) are the caller's to validate.
  static_assert(F.exp_bits >= 1 && F.exp_bits <= 11 && F.frac_bits >= 0 && width(F) <= 32,
                "fp<F>: the format is not one fpemu supports (see fpemu::check)");

 public:
  static constexpr format fmt = F;
  using storage_type = detail::code_storage<width(F)>;

  // The code 0: +0, or for e8m0fnu (no zero) its smallest value 2^-127.
  constexpr fp() = default;

  FPEMU_HD constexpr explicit fp(double x) : code_(narrow(from(F, x).code)) {}
  FPEMU_HD constexpr explicit fp(float x) : code_(narrow(from(F, x).code)) {}
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  FPEMU_HD constexpr explicit fp(I x)
      : code_(narrow(std::is_signed_v<I> ? from(F, static_cast<std::int64_t>(x)).code
                                         : from(F, static_cast<std::uint64_t>(x)).code)) {}
  // From another compile-time format: one rounding, no double rounding through a host type.
  template <format G>
    requires(!(G == F))
  FPEMU_HD constexpr explicit fp(fp<G> x) : code_(narrow(convert(F, G, x.code()).code)) {}

  // Bits above width(F) are a programming error.
  FPEMU_HD static constexpr fp from_code(std::uint32_t code) {
    assert((code & ~code_mask(F)) == 0);
    fp v;
    v.code_ = static_cast<storage_type>(code);
    return v;
  }
  FPEMU_HD constexpr storage_type code() const { return code_; }

  // Exact: every value of a validated format is a binary64 value.
  constexpr explicit operator double() const { return to_double(F, code_); }
  // Rounded to nearest even where the format is wider than binary32.
  constexpr explicit operator float() const { return to_float(F, code_); }

  // IEEE 754 negate: a sign-bit flip that keeps NaN payloads. Where -x has no code (the zero
  // and the NaN of fnuz, any value of an unsigned format) the core decides: the same value
  // for zero and NaN, NaN (or +0 without NaN) for a positive value of an unsigned format.
  FPEMU_HD constexpr fp operator-() const {
    if constexpr (F.is_signed) {
      if (F.encoding == nonfinite::fnuz && (code_ & magnitude_mask(F)) == 0) return *this;
      return from_code(code_ ^ sign_mask(F));
    } else {
      return from_code(round(F, negate(decode(F, code_)), rounding{}).code);
    }
  }
  FPEMU_HD constexpr fp operator+() const { return *this; }

  FPEMU_HD friend constexpr fp operator+(fp a, fp b) { return from_code(add(F, a.code_, b.code_, rounding{}).code); }
  FPEMU_HD friend constexpr fp operator-(fp a, fp b) { return from_code(sub(F, a.code_, b.code_, rounding{}).code); }
  FPEMU_HD friend constexpr fp operator*(fp a, fp b) { return from_code(mul(F, a.code_, b.code_, rounding{}).code); }
  FPEMU_HD friend constexpr fp operator/(fp a, fp b) { return from_code(div(F, a.code_, b.code_, rounding{}).code); }

  FPEMU_HD constexpr fp& operator+=(fp b) { return *this = *this + b; }
  FPEMU_HD constexpr fp& operator-=(fp b) { return *this = *this - b; }
  FPEMU_HD constexpr fp& operator*=(fp b) { return *this = *this * b; }
  FPEMU_HD constexpr fp& operator/=(fp b) { return *this = *this / b; }

  // IEEE 754 comparisons: NaN is unordered (every relation false, != true), -0 == +0.
  FPEMU_HD friend constexpr bool operator==(fp a, fp b) {
    return compare_quiet(F, a.code_, b.code_).order == ordering::equal;
  }
  FPEMU_HD friend constexpr std::partial_ordering operator<=>(fp a, fp b) {
    switch (compare_quiet(F, a.code_, b.code_).order) {
      case ordering::less: return std::partial_ordering::less;
      case ordering::equal: return std::partial_ordering::equivalent;
      case ordering::greater: return std::partial_ordering::greater;
      case ordering::unordered: break;
    }
    return std::partial_ordering::unordered;
  }

 private:
  FPEMU_HD static constexpr storage_type narrow(std::uint32_t code) { return static_cast<storage_type>(code); }

  storage_type code_ = 0;
};

// ---- Free functions (found by argument-dependent lookup, as Eigen and generic code expect) ----

template <format F>
FPEMU_HD constexpr fp<F> sqrt(fp<F> a) {
  return fp<F>::from_code(sqrt(F, a.code(), rounding{}).code);
}
// a * b + c with one rounding.
template <format F>
FPEMU_HD constexpr fp<F> fma(fp<F> a, fp<F> b, fp<F> c) {
  return fp<F>::from_code(fma(F, a.code(), b.code(), c.code(), rounding{}).code);
}
// IEEE 754 abs clears the sign bit; the NaN of fnuz (the negative-zero pattern) stays NaN.
template <format F>
FPEMU_HD constexpr fp<F> abs(fp<F> a) {
  if (F.encoding == nonfinite::fnuz && a.code() == sign_mask(F)) return a;
  return fp<F>::from_code(a.code() & ~sign_mask(F));
}

template <format F>
FPEMU_HD constexpr bool isnan(fp<F> a) {
  return decode(F, a.code()).cls == value_class::nan;
}
template <format F>
FPEMU_HD constexpr bool isinf(fp<F> a) {
  return decode(F, a.code()).cls == value_class::infinite;
}
template <format F>
FPEMU_HD constexpr bool isfinite(fp<F> a) {
  const value_class c = decode(F, a.code()).cls;
  return c == value_class::zero || c == value_class::finite;
}
// The sign of the value as the core decodes it: false for the fnuz NaN, which is unsigned.
template <format F>
FPEMU_HD constexpr bool signbit(fp<F> a) {
  return decode(F, a.code()).negative;
}
template <format F>
FPEMU_HD constexpr fp_class classify(fp<F> a) {
  return classify(F, a.code());
}

template <format F>
FPEMU_HD constexpr fp<F> next_up(fp<F> a) {
  return fp<F>::from_code(next_up(F, a.code()).code);
}
template <format F>
FPEMU_HD constexpr fp<F> next_down(fp<F> a) {
  return fp<F>::from_code(next_down(F, a.code()).code);
}

// IEEE 754-2019 9.6 (-0 < +0; NaN propagates, or loses to a number in the *_number variants).
template <format F>
FPEMU_HD constexpr fp<F> minimum(fp<F> a, fp<F> b) {
  return fp<F>::from_code(minimum(F, a.code(), b.code()).code);
}
template <format F>
FPEMU_HD constexpr fp<F> maximum(fp<F> a, fp<F> b) {
  return fp<F>::from_code(maximum(F, a.code(), b.code()).code);
}
template <format F>
FPEMU_HD constexpr fp<F> minimum_number(fp<F> a, fp<F> b) {
  return fp<F>::from_code(minimum_number(F, a.code(), b.code()).code);
}
template <format F>
FPEMU_HD constexpr fp<F> maximum_number(fp<F> a, fp<F> b) {
  return fp<F>::from_code(maximum_number(F, a.code(), b.code()).code);
}

// ---- The named formats as types -------------------------------------------------------------

// e4m3fn_t, bf16_t, ...: one per row of format.hpp's table.
#define FPEMU_FORMAT_TYPE(name, ...) using name##_t = fp<formats::name>;
FPEMU_NAMED_FORMATS(FPEMU_FORMAT_TYPE)
#undef FPEMU_FORMAT_TYPE

}  // namespace fpemu
