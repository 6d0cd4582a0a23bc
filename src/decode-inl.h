// Codes -> binary32 bits on 32-bit vector lanes (decode_params in array_params.hpp), for the
// kernels compiled once per SIMD target: DecodeFloats (array_simd.cpp) and the element-wise
// arithmetic, which decodes its operands in registers (array_ops.cpp). Include it after
// hwy/highway.h in a file that hwy/foreach_target.h re-includes: the guard toggles with each
// target, Highway's convention for such headers.
#if defined(FPEMU_SRC_DECODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FPEMU_SRC_DECODE_INL_H_
#undef FPEMU_SRC_DECODE_INL_H_
#else
#define FPEMU_SRC_DECODE_INL_H_
#endif

#include <bit>
#include <cstdint>

#include <hwy/highway.h>

#include "array_params.hpp"
#include "fpemu/convert.hpp"

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {

// The binary32 bits of the value of each code (to_float's). Exact: every value of such a format
// is a binary32 value. Always inlined into the caller's loop, where the broadcasts of `p` are
// hoisted.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE V DecodeBits(D du, const decode_params& p, V code) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<float, D> df;
  const hn::RebindToSigned<D> di;
  const V zero = hn::Zero(du), sign_bit = hn::Set(du, 0x80000000u);
  const V mag = hn::And(code, hn::Set(du, p.mag_mask));
  const auto negative = hn::Ne(hn::And(code, hn::Set(du, p.sign)), zero);
  const auto subnormal = hn::Eq(mag >> hn::Set(du, p.frac_bits), zero);
  const V normal_bits = hn::Sub(mag, hn::Set(du, p.rebias)) << hn::Set(du, p.s0);
  const V frac = hn::And(code, hn::Set(du, p.fraction));
  V sub_bits;
  if (p.sub_all_subnormal) {
    sub_bits = frac << hn::Set(du, p.sub_shift);
  } else if (p.sub_all_normal) {
    const V as_float = hn::BitCast(du, hn::ConvertTo(df, hn::BitCast(di, frac)));
    sub_bits = hn::IfThenZeroElse(hn::Eq(frac, zero), hn::Add(as_float, hn::Set(du, p.sub_exponent)));
  } else {
    sub_bits = hn::BitCast(du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, frac)), hn::Set(df, p.subnormal_quantum)));
  }
  V value = hn::Or(hn::IfThenElse(subnormal, sub_bits, normal_bits), hn::IfThenElseZero(negative, sign_bit));
  // NaN and infinity codes, and the negative-zero code of formats without -0 (their NaN).
  const auto above = hn::Gt(mag, hn::Set(du, p.max_magnitude));
  const auto nan_zero =
      hn::And(hn::Eq(hn::Set(du, p.negative_zero), zero), hn::And(negative, hn::Eq(mag, zero)));
  if (HWY_UNLIKELY(!hn::AllFalse(du, hn::Or(above, nan_zero)))) {
    const auto inf = hn::Eq(mag, hn::Set(du, p.inf_magnitude));
    value = hn::IfThenElse(inf, hn::IfThenElse(negative, hn::Set(du, p.inf_value[1]), hn::Set(du, p.inf_value[0])),
                           value);
    if (p.has_nan) {
      const auto nan = hn::Or(hn::AndNot(inf, above), nan_zero);
      value = hn::IfThenElse(nan, hn::IfThenElse(negative, hn::Set(du, p.nan_value[1]), hn::Set(du, p.nan_value[0])),
                             value);
    }
  }
  // Codes with bits above the format's width: whatever the core makes of them.
  if (HWY_UNLIKELY(!hn::AllFalse(du, hn::Gt(code, hn::Set(du, p.all_bits))))) {
    constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(std::uint32_t);
    HWY_ALIGN std::uint32_t codes[kMax], lanes[kMax];
    hn::Store(code, du, codes);
    hn::Store(value, du, lanes);
    for (std::size_t j = 0; j < hn::Lanes(du); ++j)
      if (codes[j] > p.all_bits) lanes[j] = std::bit_cast<std::uint32_t>(to_float(p.f, codes[j]));
    value = hn::Load(du, lanes);
  }
  return value;
}

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_SRC_DECODE_INL_H_
