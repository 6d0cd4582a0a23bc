// A floating-point format as data, its derived quantities, and the named formats.
//
// A format is a sign bit (optional), an exponent field of exp_bits and a fraction field of
// frac_bits, with a bias, a subnormal rule and a rule for which codes are not finite. Every
// derived quantity (max finite, min normal, unit roundoff, ...) is a constexpr function of these
// fields, so a compile-time fp<F> and a runtime `const format&` run the same code.
//
// Encodings of the non-finite values (the `nonfinite` field):
//   ieee    exponent field all ones: fraction 0 is +-inf, anything else NaN (IEEE 754).
//   fn      no infinities; the code with every non-sign bit set is NaN (OCP FP8 E4M3, e8m0fnu).
//   fnuz    no infinities, no negative zero; the negative-zero pattern 1000...0 is the single NaN.
//   finite  no infinities, no NaN (OCP MX element types e2m3fn, e3m2fn, e2m1fn).
#pragma once

#include <bit>
#include <cstdint>

#include "fpemu/config.hpp"

namespace fpemu {

enum class nonfinite : std::uint8_t { ieee, fn, fnuz, finite };

struct format {
  int exp_bits = 8;
  int frac_bits = 23;
  int bias = 127;
  bool subnormals = true;   // false: codes with a zero exponent field are zeros (flush to zero)
  nonfinite encoding = nonfinite::ieee;
  bool is_signed = true;
  bool has_zero = true;     // false (e8m0fnu only): the zero exponent field is a normal binade

  friend constexpr bool operator==(const format&, const format&) = default;
};

// ---- Derived quantities ---------------------------------------------------------------------

FPEMU_HD constexpr int width(const format& f) { return (f.is_signed ? 1 : 0) + f.exp_bits + f.frac_bits; }
FPEMU_HD constexpr std::uint32_t sign_mask(const format& f) {
  return f.is_signed ? std::uint32_t{1} << (f.exp_bits + f.frac_bits) : 0;
}
FPEMU_HD constexpr std::uint32_t magnitude_mask(const format& f) {
  return (std::uint32_t{1} << (f.exp_bits + f.frac_bits)) - 1;
}
FPEMU_HD constexpr std::uint32_t code_mask(const format& f) {
  return width(f) == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << width(f)) - 1;
}
FPEMU_HD constexpr std::uint32_t frac_mask(const format& f) {
  return (std::uint32_t{1} << f.frac_bits) - 1;
}
FPEMU_HD constexpr std::uint32_t exp_field_max(const format& f) { return (std::uint32_t{1} << f.exp_bits) - 1; }

FPEMU_HD constexpr bool has_inf(const format& f) { return f.encoding == nonfinite::ieee; }
FPEMU_HD constexpr bool has_nan(const format& f) { return f.encoding != nonfinite::finite; }
FPEMU_HD constexpr bool has_negative_zero(const format& f) {
  return f.is_signed && f.has_zero && f.encoding != nonfinite::fnuz;
}

// Unbiased exponent of the smallest normal number.
FPEMU_HD constexpr int emin(const format& f) { return (f.has_zero ? 1 : 0) - f.bias; }

// Magnitude bits of the largest finite code.
FPEMU_HD constexpr std::uint32_t max_finite_magnitude(const format& f) {
  switch (f.encoding) {
    case nonfinite::ieee: return ((exp_field_max(f)) << f.frac_bits) - 1;
    case nonfinite::fn: return magnitude_mask(f) - 1;
    default: return magnitude_mask(f);
  }
}
// Unbiased exponent and integer significand (hidden bit included) of the largest finite value.
FPEMU_HD constexpr int emax(const format& f) {
  return static_cast<int>(max_finite_magnitude(f) >> f.frac_bits) - f.bias;
}
FPEMU_HD constexpr std::uint32_t max_significand(const format& f) {
  return (max_finite_magnitude(f) & frac_mask(f)) | (std::uint32_t{1} << f.frac_bits);
}

// Significant bits of a normal number.
FPEMU_HD constexpr int precision(const format& f) { return f.frac_bits + 1; }

// Number of codes whose value is finite (+0 and -0 both count; so do the flushed codes of a
// format without subnormals, which all read as zero).
constexpr std::uint64_t finite_count(const format& f) {
  const std::uint64_t codes = std::uint64_t{1} << width(f);
  switch (f.encoding) {
    case nonfinite::ieee: return codes - (f.is_signed ? 2 : 1) * (std::uint64_t{1} << f.frac_bits);
    case nonfinite::fn: return codes - (f.is_signed ? 2 : 1);
    case nonfinite::fnuz: return codes - 1;
    case nonfinite::finite: break;
  }
  return codes;
}

// 2^e as a double, exact for -1074 <= e <= 1023 (validated formats never leave that range).
constexpr double pow2(int e) {
  if (e >= -1022) return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
  return std::bit_cast<double>(std::uint64_t{1} << (e + 1074));
}

constexpr double max_finite(const format& f) {
  return static_cast<double>(max_significand(f)) * pow2(emax(f) - f.frac_bits);
}
constexpr double min_normal(const format& f) { return pow2(emin(f)); }
// Smallest positive value: the smallest subnormal, or the smallest normal without subnormals.
constexpr double min_positive(const format& f) {
  return f.subnormals && f.has_zero ? pow2(emin(f) - f.frac_bits) : min_normal(f);
}
// Unit roundoff for round-to-nearest, u = 2^-p, and machine epsilon 2^(1-p).
constexpr double unit_roundoff(const format& f) { return pow2(-precision(f)); }
constexpr double machine_epsilon(const format& f) { return pow2(1 - precision(f)); }

// ---- Named formats --------------------------------------------------------------------------

namespace formats {
// OCP 8-bit Floating Point Specification (OFP8) rev 1.0, E4M3: no inf, NaN = S.1111.111, max 448.
inline constexpr format e4m3fn{4, 3, 7, true, nonfinite::fn};
// OFP8 E5M2: IEEE 754-like, inf and NaN, max 57344.
inline constexpr format e5m2{5, 2, 15, true, nonfinite::ieee};
// GraphCore/AMD FP8 "fnuz" (ml_dtypes float8_e4m3fnuz): bias 8, no -0, NaN = 0x80, max 240.
inline constexpr format e4m3fnuz{4, 3, 8, true, nonfinite::fnuz};
// ml_dtypes float8_e5m2fnuz: bias 16, no inf, no -0, NaN = 0x80, max 57344.
inline constexpr format e5m2fnuz{5, 2, 16, true, nonfinite::fnuz};
// bfloat16 (Google Brain): the top half of binary32.
inline constexpr format bf16{8, 7, 127, true, nonfinite::ieee};
// IEEE 754 binary16.
inline constexpr format fp16{5, 10, 15, true, nonfinite::ieee};
// NVIDIA TensorFloat-32 (A100 whitepaper): binary32 range, 10 fraction bits, 19 bits wide.
inline constexpr format tf32{8, 10, 127, true, nonfinite::ieee};
// IEEE 754 binary32.
inline constexpr format fp32{8, 23, 127, true, nonfinite::ieee};
// The ~14-bit Hopper/Ada FP8 tensor-core accumulator register: binary32 exponent range and 13
// fraction bits (DeepSeek-V3 tech report 3.3.2; Khattak & Mikaitis 2025).
inline constexpr format e8m13{8, 13, 127, true, nonfinite::ieee};
// OCP Microscaling Formats (MX) v1.0 element types: no inf, no NaN.
inline constexpr format e2m3fn{2, 3, 1, true, nonfinite::finite};  // FP6 E2M3, max 7.5
inline constexpr format e3m2fn{3, 2, 3, true, nonfinite::finite};  // FP6 E3M2, max 28
inline constexpr format e2m1fn{2, 1, 1, true, nonfinite::finite};  // FP4 E2M1, max 6
// OCP MX v1.0 scale type E8M0: unsigned, powers of two 2^-127..2^127, no zero, NaN = 0xFF.
inline constexpr format e8m0fnu{8, 0, 127, false, nonfinite::fn, false, false};
}  // namespace formats

}  // namespace fpemu
