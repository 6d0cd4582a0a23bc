// The Boost tests' own reading and writing of codes, from a format's fields alone: no
// fpemu::decode, no rounding core, so that the references built on it (MPFR, cpp_bin_float) share
// nothing with the code they check. The rules are the ones format.hpp's opening comment states
// (ieee, fn, fnuz, finite encodings) and ops.hpp's NaN conventions (a NaN result is the canonical
// quiet NaN with the sign of the first NaN operand, + for an invalid operation).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "fpemu/format.hpp"

namespace boost_test {

struct ref_value {
  enum class kind : std::uint8_t { zero, finite, infinite, nan } cls = kind::zero;
  bool negative = false;
  double value = 0;  // exact; +-inf for infinities, NaN for NaN
};

constexpr std::uint32_t field_mask(int bits) { return bits >= 32 ? ~0u : (std::uint32_t{1} << bits) - 1; }

inline ref_value ref_decode(const fpemu::format& f, std::uint32_t code) {
  const int eb = f.exp_bits, fb = f.frac_bits;
  const std::uint32_t sign_bit = f.is_signed ? std::uint32_t{1} << (eb + fb) : 0;
  const std::uint32_t magnitude = code & field_mask(eb + fb);
  const bool negative = (code & sign_bit) != 0;
  const std::uint32_t field = magnitude >> fb, fraction = magnitude & field_mask(fb);
  const bool exponent_all_ones = field == field_mask(eb);
  switch (f.encoding) {
    case fpemu::nonfinite::ieee:
      if (exponent_all_ones && fraction == 0)
        return {ref_value::kind::infinite, negative, negative ? -HUGE_VAL : HUGE_VAL};
      if (exponent_all_ones) return {ref_value::kind::nan, negative, NAN};
      break;
    case fpemu::nonfinite::fn:
      if (magnitude == field_mask(eb + fb)) return {ref_value::kind::nan, negative, NAN};
      break;
    case fpemu::nonfinite::fnuz:
      if (negative && magnitude == 0) return {ref_value::kind::nan, false, NAN};  // the one, unsigned, NaN
      break;
    case fpemu::nonfinite::finite: break;
  }
  double v = 0;
  if (field == 0) {
    if (fraction == 0 || !f.subnormals) return {ref_value::kind::zero, negative, negative ? -0.0 : 0.0};
    v = std::ldexp(static_cast<double>(fraction), 1 - f.bias - fb);
  } else {
    v = std::ldexp(static_cast<double>(fraction | (std::uint32_t{1} << fb)), static_cast<int>(field) - f.bias - fb);
  }
  return {ref_value::kind::finite, negative, negative ? -v : v};
}

// The canonical quiet NaN, the infinity, the zero and the largest finite code of each sign.
inline std::uint32_t ref_nan(const fpemu::format& f, bool negative) {
  const int eb = f.exp_bits, fb = f.frac_bits;
  const std::uint32_t sign = negative && f.is_signed ? std::uint32_t{1} << (eb + fb) : 0;
  switch (f.encoding) {
    case fpemu::nonfinite::ieee: return sign | (field_mask(eb) << fb) | (std::uint32_t{1} << (fb - 1));
    case fpemu::nonfinite::fn: return sign | field_mask(eb + fb);
    case fpemu::nonfinite::fnuz: return std::uint32_t{1} << (eb + fb);
    case fpemu::nonfinite::finite: break;
  }
  throw std::logic_error("ref_nan: the format has no NaN");
}
constexpr std::uint32_t ref_sign(const fpemu::format& f, bool negative) {
  return negative && f.is_signed ? std::uint32_t{1} << (f.exp_bits + f.frac_bits) : 0;
}
inline std::uint32_t ref_inf(const fpemu::format& f, bool negative) {
  return ref_sign(f, negative) | (field_mask(f.exp_bits) << f.frac_bits);
}
inline std::uint32_t ref_zero(const fpemu::format& f, bool negative) {
  return f.encoding == fpemu::nonfinite::fnuz ? 0 : ref_sign(f, negative);
}
constexpr std::uint32_t ref_max(const fpemu::format& f, bool negative) {
  const std::uint32_t all = field_mask(f.exp_bits + f.frac_bits);
  std::uint32_t magnitude = all;
  if (f.encoding == fpemu::nonfinite::ieee) magnitude = (field_mask(f.exp_bits) << f.frac_bits) - 1;
  if (f.encoding == fpemu::nonfinite::fn) magnitude = all - 1;
  return ref_sign(f, negative) | magnitude;
}
inline double ref_max_value(const fpemu::format& f) { return ref_decode(f, ref_max(f, false)).value; }

// The code of a value of the format (exactly representable, not NaN), by its fields.
inline std::uint32_t ref_encode(const fpemu::format& f, double v) {
  const bool negative = std::signbit(v);
  if (std::isinf(v)) return ref_inf(f, negative);
  if (v == 0) return ref_zero(f, negative);
  const double a = std::fabs(v);
  const int fb = f.frac_bits, emin = 1 - f.bias;
  const int e = std::ilogb(a);
  std::uint32_t field = 0;
  double significand = 0;
  if (e < emin) {
    significand = std::ldexp(a, fb - emin);
  } else {
    field = static_cast<std::uint32_t>(e + f.bias);
    significand = std::ldexp(a, fb - e) - std::ldexp(1.0, fb);
  }
  const auto fraction = static_cast<std::uint32_t>(significand);
  if (static_cast<double>(fraction) != significand || field > field_mask(f.exp_bits) || fraction > field_mask(fb)) {
    char text[64];
    std::snprintf(text, sizeof text, "%a", v);
    throw std::logic_error(std::string("ref_encode: not a value of the format: ") + text);
  }
  return ref_sign(f, negative) | (field << fb) | fraction;
}

// A short description of a code for failure messages: "0x3f80 (1)".
inline std::string show(const fpemu::format& f, std::uint32_t code) {
  char text[80];
  std::snprintf(text, sizeof text, "0x%x (%.17g)", code, ref_decode(f, code).value);
  return text;
}

}  // namespace boost_test
