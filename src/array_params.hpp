// What the array kernels (array_simd.cpp, array_ops.cpp, decode-inl.h) know about a format, in
// the terms of the binary32 or binary64 input, and the macro their lambdas share.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fpemu/convert.hpp"
#include "fpemu/format.hpp"
#include "fpemu/round_core.hpp"
#include "fpemu/rounding.hpp"

// The kernels' lambdas are always inlined: out of line (as GCC chose for the stochastic mode's
// larger body) every call reloads the captured vector constants through the closure, which
// cost more than the rounding itself. (HWY_ATTR is Highway's, defined where the kernels use it.)
#define FPEMU_KERNEL_LAMBDA __attribute__((always_inline)) HWY_ATTR

namespace fpemu::simd {

// A step that a kernel runs only on the vectors that need it, behind a branch, until more than
// one vector in 8 so far has needed it, and from then on every vector, without the branch: with
// data that often needs it (wide-range data: subnormal results, NaNs, flagged lanes) the
// mispredicted branches cost more than the step. Either way the results are the same.
class frequent_step {
 public:
  // Whether to run the step on a vector, given whether it needs it and how many came before.
  bool operator()(bool needed, std::size_t vectors_before) {
    if (always_) return true;
    if (!needed) return false;
    always_ = ++needed_ * 8 > vectors_before + 8;
    return true;
  }

 private:
  bool always_ = false;
  std::size_t needed_ = 0;
};

template <class T>
struct input_traits;
template <>
struct input_traits<float> {
  using U = std::uint32_t;
  static constexpr int mant = 23, bias = 127, field_max = 255;
};
template <>
struct input_traits<double> {
  using U = std::uint64_t;
  static constexpr int mant = 52, bias = 1023, field_max = 2047;
};

// Everything a kernel needs to know about the target format, in the input's terms. Exponents
// are biased binary32/binary64 exponent fields.
template <class T>
struct encode_params {
  using U = typename input_traits<T>::U;
  U s0;        // fraction bits of the input below the format's quantum (normal results)
  U frac_bits;
  U emin_field;  // field of the format's smallest normal binade; lanes below it are subnormal
  U low_field;   // lanes below it, which would shift by more than W - 1 bits, go to the core
  U high_field;  // finite lanes above it overflow; infinite ones take infinite_code, quiet NaNs nan_code
  U max_shift_extra;  // low_field's distance below emin_field
  U rebias;           // (format bias - input bias) << frac_bits, modulo 2^W
  U max_magnitude, sign, negative_zero, k_mask, k;
  T subnormal_quantum;  // 2^(emin - frac_bits), for values of subnormal results
  // The core's result for a lane that overflows (detail::overflow_result: it depends on the
  // sign, the mode and the policy, never on the random bits), by sign: code, value, flags.
  U overflow_code[2], overflow_value[2];
  U overflow_flags;
  // Likewise for infinite inputs (round of an infinity; the flags are the same for either sign
  // of a signed format), and quiet NaN inputs (the format's NaN of that sign; invalid where it
  // has none). Signaling NaNs, which raise invalid, go to the core.
  U infinite_code[2], infinite_value[2];
  U infinite_flags;
  U nan_code[2], nan_value[2];
  U nan_flags;
};

template <class T>
encode_params<T> make_params(const format& f, const rounding& r) {
  using tr = input_traits<T>;
  using U = typename tr::U;
  constexpr int W = sizeof(U) * 8;
  encode_params<T> p{};
  p.s0 = static_cast<U>(tr::mant - f.frac_bits);
  p.frac_bits = static_cast<U>(f.frac_bits);
  const long long emin_field = std::max<long long>(0, static_cast<long long>(emin(f)) + tr::bias);
  p.emin_field = static_cast<U>(emin_field);
  p.max_shift_extra = static_cast<U>(W - 1) - p.s0;
  p.low_field = static_cast<U>(std::max<long long>(1, emin_field - static_cast<long long>(p.max_shift_extra)));
  p.high_field = static_cast<U>(std::min<long long>(tr::field_max - 1, static_cast<long long>(emax(f)) + tr::bias));
  p.rebias = static_cast<U>(static_cast<U>(static_cast<long long>(f.bias) - tr::bias) << f.frac_bits);
  p.max_magnitude = max_finite_magnitude(f);
  p.sign = sign_mask(f);
  p.negative_zero = has_negative_zero(f) ? sign_mask(f) : 0;
  // sr-exact reads 64 random bits, of which a lane rounded at a shift s <= 32 needs the top s
  // (round_to_quantum: rem + (R >> (64 - s)) carries exactly when rem 2^(64-s) + R does): the
  // high word, read as k = 32 bits (FillKeystream's width 64).
  const int k = r.mode == round_mode::stochastic_exact ? 32 : std::clamp(r.sr_bits, 1, 32);
  p.k = static_cast<U>(k);
  p.k_mask = static_cast<U>((std::uint64_t{1} << k) - 1);
  p.subnormal_quantum = static_cast<T>(std::ldexp(1.0, emin(f) - f.frac_bits));
  for (const bool negative : {false, true}) {
    const rounded o = detail::overflow_result(f, negative, detail::rule_for(r.mode, negative), r.overflow);
    p.overflow_code[negative] = o.code;
    p.overflow_value[negative] = std::bit_cast<U>(static_cast<T>(to_float(f, o.code)));
    p.overflow_flags = o.flags;
    const rounded inf = round(f, unpacked{value_class::infinite, negative}, r);
    p.infinite_code[negative] = inf.code;
    p.infinite_value[negative] = std::bit_cast<U>(static_cast<T>(to_float(f, inf.code)));
    p.infinite_flags = inf.flags;
    const rounded nan = round(f, unpacked{value_class::nan, negative}, r);
    p.nan_code[negative] = nan.code;
    p.nan_value[negative] = std::bit_cast<U>(static_cast<T>(to_float(f, nan.code)));
    p.nan_flags = nan.flags;
  }
  return p;
}

// What decoding codes of f into binary32 bits needs (DecodeBits in decode-inl.h), for formats
// with values_are_floats(f).
struct decode_params {
  format f;
  std::uint32_t sign, mag_mask, max_magnitude, all_bits, fraction, s0, frac_bits, rebias, negative_zero;
  // Subnormal codes, fraction * 2^q for a fraction < 2^frac_bits, are built in integers, so that
  // no lane costs a microcode assist for a subnormal product (several per vector on Intel cores)
  // and FTZ does not matter. Where every such value is a binary32 subnormal (bf16), its bits are
  // the fraction shifted to binary32's quantum 2^-149; where every one is binary32-normal (the
  // FP8, FP6, FP4 formats, fp16), they are those of the exact float fraction with q added to the
  // exponent field; else the product by the quantum.
  bool sub_all_subnormal, sub_all_normal;
  std::uint32_t sub_shift, sub_exponent;
  float subnormal_quantum;
  // Infinity and NaN codes decode to binary32's infinity and quiet NaN of their sign (to_float;
  // payloads are not kept), the same for every code of a class and sign.
  bool has_nan;
  std::uint32_t inf_magnitude, inf_value[2], nan_value[2];
  // Short ways, exact, for the formats whose fields fit a hardware format's. Codes that are the
  // top bits of a binary32 encoding (8 exponent bits, bias 127, IEEE infinities and NaNs: bf16,
  // tf32) are shifted into place. Codes whose fields fit binary16's (at most 5 exponent bits,
  // IEEE specials if 5, at most 10 fraction bits: fp16, the FP8 formats) are placed into binary16
  // bits, which the CPU's F16C instruction converts exactly (subnormals become binary32 normals):
  // via_half where they are binary16's top bits as they stand (5 exponent bits, bias 15: fp16,
  // e5m2), via_half_apart where the magnitude and the sign go to their places apart and the
  // value is scaled by 2^(15 - bias), exact where every value of the format is a normal binary32
  // number (e4m3fn, the MX FP6 and FP4 types). Two ways, so that the loops that know theirs
  // (array_ops.cpp: OpRun) branch on neither step.
  enum class short_way : std::uint8_t { none, binary32_top, via_half, via_half_apart } way;
  bool negative_zero_is_nan, nan_above_max;
  std::uint32_t half_shift, half_sign_shift;
  float half_scale;
  // Codes whose magnitude exceeds short_limit[n] (or the sign alone, NaN in formats without -0)
  // take the full decoder, for a decoder that gives NaN codes n: to_float's NaN (exact), any NaN
  // (operands of arithmetic, whose NaN results take their sign from the NaN), or none (a loop
  // that stops at NaN operands: OpRun). The short way takes the NaN codes (but under none) of
  // IEEE formats and of formats whose codes above the largest finite magnitude are all NaN and
  // decode to binary32's quiet NaN of their sign (`nan_above_max`, encoding fn: e4m3fn), setting
  // those lanes to that NaN itself: wide-range e4m3fn data holds many (overflow under policy ieee
  // gives NaN there).
  enum class nan_codes : std::uint8_t { exact, any, none };
  std::uint32_t short_limit[3];
  // Codes of at most 8 bits: to_float's bits for each, which DecodeFloats looks up on the targets
  // without a short way for them (no F16C: SSE4 and older), where the full decoder's dozens of
  // operations a vector cost more than one load a lane.
  bool by_table;
  std::array<std::uint32_t, 256> table;
};

inline decode_params make_decode_params(const format& f) {
  const encode_params<float> p = make_params<float>(f, rounding{});
  decode_params d{};
  d.f = f;
  d.sign = p.sign;
  d.mag_mask = magnitude_mask(f);
  d.max_magnitude = p.max_magnitude;
  d.all_bits = p.sign | magnitude_mask(f);
  d.fraction = frac_mask(f);
  d.s0 = p.s0;
  d.frac_bits = p.frac_bits;
  d.rebias = p.rebias;
  d.negative_zero = p.negative_zero;
  const int q = emin(f) - f.frac_bits;
  d.sub_all_subnormal = q + f.frac_bits - 1 < -126;
  d.sub_all_normal = q >= -126;
  d.sub_shift = static_cast<std::uint32_t>(d.sub_all_subnormal ? q + 149 : 0);
  d.sub_exponent = static_cast<std::uint32_t>(q) << 23;  // modulo 2^32
  d.subnormal_quantum = p.subnormal_quantum;
  d.has_nan = f.encoding != nonfinite::finite;
  d.inf_magnitude = f.encoding == nonfinite::ieee ? detail::inf_code(f, false) : 0xffffffffu;
  for (const bool negative : {false, true}) {
    d.inf_value[negative] = std::bit_cast<std::uint32_t>(to_float(f, detail::inf_code(f, negative)));
    d.nan_value[negative] = std::bit_cast<std::uint32_t>(to_float(f, detail::nan_code(f, negative)));
  }
  using way = decode_params::short_way;
  const bool ieee = f.encoding == nonfinite::ieee;
  if (f.is_signed && f.has_zero && f.subnormals) {
    if (f.exp_bits == 8 && f.bias == 127 && ieee && f.frac_bits <= 23) {
      d.way = way::binary32_top;
    } else if ((f.exp_bits < 5 || (f.exp_bits == 5 && ieee)) && f.frac_bits <= 10 && q >= -126 && emax(f) <= 127) {
      // binary16's exponent field is 5 bits: the format's sign bit lands on binary16's when its
      // exponent field is as wide, and its infinities and NaNs land on binary16's.
      d.way = f.exp_bits == 5 && f.bias == 15 ? way::via_half : way::via_half_apart;
    }
  }
  d.half_shift = static_cast<std::uint32_t>(10 - std::min(f.frac_bits, 10));
  d.half_sign_shift = d.half_shift + static_cast<std::uint32_t>(5 - std::min(f.exp_bits, 5));
  d.half_scale = static_cast<float>(std::ldexp(1.0, 15 - f.bias));
  d.negative_zero_is_nan = f.encoding == nonfinite::fnuz;
  const bool hardware_specials =
      d.way == way::binary32_top || ((d.way == way::via_half || d.way == way::via_half_apart) && f.exp_bits == 5);
  d.nan_above_max = f.encoding == nonfinite::fn && d.nan_value[0] == 0x7fc00000u && d.nan_value[1] == 0xffc00000u;
  using nan = decode_params::nan_codes;
  const std::uint32_t no_nan = hardware_specials ? d.inf_magnitude : d.max_magnitude;
  d.short_limit[static_cast<int>(nan::exact)] = d.nan_above_max ? d.mag_mask : no_nan;
  d.short_limit[static_cast<int>(nan::any)] = hardware_specials || d.nan_above_max ? d.mag_mask : no_nan;
  d.short_limit[static_cast<int>(nan::none)] = no_nan;
  d.by_table = d.all_bits < d.table.size();
  for (std::uint32_t c = 0; d.by_table && c <= d.all_bits; ++c) {
    d.table[c] = std::bit_cast<std::uint32_t>(to_float(f, c));
  }
  return d;
}

// The parameters of the last (format, rounding) the calling thread asked for, remembered: an
// array call runs the kernels piece by piece, and each piece would otherwise derive them anew
// (make_params rounds several values through the core: 7% of fp16 add, apply_lanes).
template <class T>
const encode_params<T>& params_for(const format& f, const rounding& r) {
  thread_local struct {
    format f;
    rounding r;
    encode_params<T> p;
    bool made = false;
  } last;
  if (!last.made || !(last.f == f) || !(last.r == r)) {
    last.p = make_params<T>(f, r);
    last.f = f;
    last.r = r;
    last.made = true;
  }
  return last.p;
}

// The same for decoding, out of line (array_simd.cpp): inlined, the kernels' loops knew the
// parameters' address to be a thread-local one, and where their registers ran short recomputed
// it, a call, every vector instead of keeping it (SSE4 decode of FP8 codes by table 0.6x the
// rate, of fp16 0.7x).
const decode_params& decode_params_for(const format& f);

}  // namespace fpemu::simd
