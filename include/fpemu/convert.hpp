// Conversions between formats and from/to the host's binary types. Each conversion unpacks the
// source exactly and makes one call to the rounding core, so there is no double rounding.
// Decimal and hexadecimal text are in text.hpp.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "fpemu/round_core.hpp"

namespace fpemu {

// Exact unpacking of a binary64 value (quiet/signaling NaNs and infinities included).
FPEMU_HD constexpr unpacked unpack(double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const bool negative = (bits >> 63) != 0;
  const auto field = static_cast<int>((bits >> 52) & 0x7FF);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (field == 0x7FF) {
    if (frac == 0) return unpacked{value_class::infinite, negative};
    return unpacked{value_class::nan, negative, (frac >> 51) == 0};
  }
  if (field == 0) return make_finite(negative, frac, -1074);
  return make_finite(negative, frac | (std::uint64_t{1} << 52), field - 1075);
}

// binary32 converts exactly to binary64, so one path serves both.
FPEMU_HD constexpr unpacked unpack(float x) {
  // A local copy: device code may not take the address of a namespace-scope constexpr.
  constexpr format binary32 = formats::fp32;
  return decode(binary32, std::bit_cast<std::uint32_t>(x));
}

// Any integer type, exactly.
template <class Int>
  requires std::is_integral_v<Int> && (!std::is_same_v<Int, bool>)
FPEMU_HD constexpr unpacked unpack(Int x) {
  if constexpr (std::is_signed_v<Int>) {
    const bool negative = x < 0;
    const auto wide = static_cast<std::int64_t>(x);
    const std::uint64_t mag = negative ? ~static_cast<std::uint64_t>(wide) + 1 : static_cast<std::uint64_t>(wide);
    return make_finite(negative, mag, 0);
  } else {
    return make_finite(false, static_cast<std::uint64_t>(x), 0);
  }
}

template <class T>
FPEMU_HD constexpr rounded from(const format& f, T x, const rounding& r = {}, std::uint64_t random = 0) {
  return round(f, unpack(x), r, random);
}

// A code of format `from_format` rounded into format `to`.
FPEMU_HD constexpr rounded convert(const format& to, const format& from_format, std::uint32_t code,
                                   const rounding& r = {}, std::uint64_t random = 0) {
  return round(to, decode(from_format, code), r, random);
}

// The exact value of a code as a double (every validated format fits binary64 exactly).
// NaN codes give a quiet NaN of the code's sign.
constexpr double to_double(const format& f, std::uint32_t code) {
  const unpacked x = decode(f, code);
  switch (x.cls) {
    case value_class::nan:
      return std::bit_cast<double>((x.negative ? std::uint64_t{1} << 63 : 0) | 0x7FF8000000000000ull);
    case value_class::infinite:
      return std::bit_cast<double>((x.negative ? std::uint64_t{1} << 63 : 0) | 0x7FF0000000000000ull);
    case value_class::zero: return x.negative ? -0.0 : 0.0;
    case value_class::finite: break;
  }
  // sig < 2^32 and 2^exp within binary64 (subnormal included): the product is exact.
  const double magnitude = static_cast<double>(static_cast<std::uint64_t>(x.sig)) * pow2(x.exp);
  return x.negative ? -magnitude : magnitude;
}

// The value of a code as a float, rounded once into binary32 where the format is wider.
constexpr float to_float(const format& f, std::uint32_t code, const rounding& r = {}) {
  constexpr format binary32 = formats::fp32;
  return std::bit_cast<float>(round(binary32, decode(f, code), r).code);
}

}  // namespace fpemu
