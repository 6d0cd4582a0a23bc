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
#include <string_view>

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
//
// The one table of named formats. From it come the constants formats::NAME (below), the types
// NAME_t = fp<formats::NAME> (value.hpp), and named_formats(): the names parse_format accepts,
// the table `fpemu formats` prints and the docs' table is generated from. Each row: the name, a
// description, the specification it follows, then the fields of `format` in declaration order
// (exp_bits, frac_bits, bias, subnormals, encoding, is_signed, has_zero; trailing defaults left out).
#define FPEMU_NAMED_FORMATS(X)                                                                           \
  X(e4m3fn, "FP8 E4M3: no inf, NaN = S.1111.111, max 448",                                            \
    "OCP 8-bit Floating Point Specification (OFP8) rev 1.0", 4, 3, 7, true, nonfinite::fn)              \
  X(e5m2, "FP8 E5M2: IEEE 754-like, inf and NaN, max 57344",                                           \
    "OCP 8-bit Floating Point Specification (OFP8) rev 1.0", 5, 2, 15, true, nonfinite::ieee)           \
  X(e4m3fnuz, "FP8 E4M3 fnuz: bias 8, no inf, no -0, NaN = 0x80, max 240",                            \
    "GraphCore/AMD FP8 (ml_dtypes float8_e4m3fnuz)", 4, 3, 8, true, nonfinite::fnuz)                   \
  X(e5m2fnuz, "FP8 E5M2 fnuz: bias 16, no inf, no -0, NaN = 0x80, max 57344",                         \
    "GraphCore/AMD FP8 (ml_dtypes float8_e5m2fnuz)", 5, 2, 16, true, nonfinite::fnuz)                  \
  X(bf16, "bfloat16: the top half of binary32", "Google Brain bfloat16 (Intel BF16 specification 2018)", \
    8, 7, 127, true, nonfinite::ieee)                                                                  \
  X(fp16, "IEEE 754 binary16", "IEEE 754-2019", 5, 10, 15, true, nonfinite::ieee)                     \
  X(tf32, "TensorFloat-32: binary32 range, 10 fraction bits, 19 bits wide",                           \
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020)", 8, 10, 127, true, nonfinite::ieee)     \
  X(fp32, "IEEE 754 binary32", "IEEE 754-2019", 8, 23, 127, true, nonfinite::ieee)                    \
  X(e8m13, "the FP8 tensor-core accumulator register of Hopper and Ada: binary32 range, 13 fraction bits", \
    "DeepSeek-V3 Technical Report 3.3.2 (2024); Khattak & Mikaitis, ACM TACO (2025)", 8, 13, 127, true,  \
    nonfinite::ieee)                                                                                   \
  X(e2m3fn, "MX FP6 E2M3: no inf, no NaN, max 7.5", "OCP Microscaling Formats (MX) v1.0", 2, 3, 1, true,  \
    nonfinite::finite)                                                                                 \
  X(e3m2fn, "MX FP6 E3M2: no inf, no NaN, max 28", "OCP Microscaling Formats (MX) v1.0", 3, 2, 3, true,   \
    nonfinite::finite)                                                                                 \
  X(e2m1fn, "MX FP4 E2M1: no inf, no NaN, max 6", "OCP Microscaling Formats (MX) v1.0", 2, 1, 1, true,    \
    nonfinite::finite)                                                                                 \
  X(e8m0fnu, "MX scale E8M0: unsigned powers of two 2^-127..2^127, no zero, NaN = 0xFF",              \
    "OCP Microscaling Formats (MX) v1.0", 8, 0, 127, false, nonfinite::fn, false, false)

namespace formats {
#define FPEMU_FORMAT_CONSTANT(name, description, citation, ...) inline constexpr format name{__VA_ARGS__};
FPEMU_NAMED_FORMATS(FPEMU_FORMAT_CONSTANT)
#undef FPEMU_FORMAT_CONSTANT
}  // namespace formats

struct named_format {
  std::string_view name;
  format fmt;
  std::string_view description;
  std::string_view citation;  // the specification or paper the format follows
};

// In the table's order.
inline constexpr named_format named_format_table[] = {
#define FPEMU_FORMAT_ROW(name, description, citation, ...) named_format{#name, formats::name, description, citation},
    FPEMU_NAMED_FORMATS(FPEMU_FORMAT_ROW)
#undef FPEMU_FORMAT_ROW
};

}  // namespace fpemu
