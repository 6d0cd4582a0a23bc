// Codes (loaded from their storage width) -> binary32 bits on 32-bit vector lanes (decode_params
// in array_params.hpp), for the kernels compiled once per SIMD target: DecodeFloats
// (array_simd.cpp) and the element-wise arithmetic, which decodes its operands in registers
// (array_ops.cpp). Include it after
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
#include <type_traits>

#include <hwy/highway.h>

#include "array_params.hpp"
#include "array_simd.hpp"
#include "fpemu/convert.hpp"

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Shifts by a count per lane (a vector) or by one count for every lane (an int). Where a shift
// by a vector is one instruction (AVX2 and AVX-512) the int is broadcast, because a shift by a
// count in a register takes two there; below AVX2 a shift by a vector is emulated through
// multiplications, and the int takes the one-instruction shift by a count.
template <class V>
HWY_INLINE V LeftBy(V v, V s) { return v << s; }
template <class V>
HWY_INLINE V RightBy(V v, V s) { return v >> s; }
#if HWY_TARGET <= HWY_AVX2
template <class V>
HWY_INLINE V LeftBy(V v, int s) { return v << hn::Set(hn::DFromV<V>(), static_cast<hn::TFromV<V>>(s)); }
template <class V>
HWY_INLINE V RightBy(V v, int s) { return v >> hn::Set(hn::DFromV<V>(), static_cast<hn::TFromV<V>>(s)); }
#else
template <class V>
HWY_INLINE V LeftBy(V v, int s) { return hn::ShiftLeftSame(v, s); }
template <class V>
HWY_INLINE V RightBy(V v, int s) { return hn::ShiftRightSame(v, s); }
#endif
// A count known at compile time: the shift by an immediate.
template <class V, int N>
HWY_INLINE V LeftBy(V v, std::integral_constant<int, N>) { return hn::ShiftLeft<N>(v); }
template <class V, int N>
HWY_INLINE V RightBy(V v, std::integral_constant<int, N>) { return hn::ShiftRight<N>(v); }

// Whether the target converts binary16 to binary32 in hardware (F16C, from AVX2 on), which the
// decoder's short way for fp16 and the FP8 formats needs; Highway's emulation below does not keep
// infinities and NaNs.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
inline constexpr bool kHalfConversion = true;
#else
inline constexpr bool kHalfConversion = false;
#endif

// a < b and a > b for lanes whose top bit is clear, where the signed compare is one
// instruction and the unsigned one is not (AVX2, SSE4).
template <class V>
HWY_INLINE auto SignedLt(V a, V b) {
  const hn::RebindToSigned<hn::DFromV<V>> di;
  return hn::RebindMask(hn::DFromV<V>(), hn::Lt(hn::BitCast(di, a), hn::BitCast(di, b)));
}
template <class V>
HWY_INLINE auto SignedGt(V a, V b) { return SignedLt(b, a); }

// v toward zero as integer lanes, where v lies within their range; other lanes get any value.
// On x86 this is the conversion instruction alone: Highway's ConvertTo also fixes up lanes at
// or above 2^31, four more instructions on AVX2 and SSE4, for lanes the callers select
// away. (Other targets, and double, take ConvertTo.)
template <class DI, class VF>
HWY_INLINE hn::Vec<DI> TruncInRange(DI di, VF v) {
  if constexpr (sizeof(hn::TFromV<VF>) == 4 && hn::MaxLanes(DI()) * 4 == HWY_MAX_BYTES) {
#if HWY_TARGET <= HWY_AVX3
    return hn::Vec<DI>{_mm512_cvttps_epi32(v.raw)};
#elif HWY_TARGET == HWY_AVX2
    return hn::Vec<DI>{_mm256_cvttps_epi32(v.raw)};
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
    return hn::Vec<DI>{_mm_cvttps_epi32(v.raw)};
#endif
  }
  return hn::ConvertTo(di, v);
}

// Lanes whose magnitude mag (top bit clear) lies strictly between lo and hi (lo < hi < 2^(w-1)):
// mag + (2^(w-1) - 1 - lo) takes lo to the largest signed lane and the magnitudes above it to the
// lowest ones, so one signed compare tells them (an unsigned one costs three instructions on AVX2).
template <class D, class V = hn::Vec<D>>
HWY_INLINE auto Between(D du, V mag, hn::TFromD<D> lo, hn::TFromD<D> hi) {
  using U = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  constexpr U kLowest = U{1} << (sizeof(U) * 8 - 1);  // the lowest signed lane's bits
  const V shifted = hn::Add(mag, hn::Set(du, kLowest - 1 - lo));
  const V bound = hn::Set(du, kLowest + (hi - lo) - 1);
  return hn::RebindMask(du, hn::Lt(hn::BitCast(di, shifted), hn::BitCast(di, bound)));
}

// The codes at p in 32-bit lanes, from a storage width of kBytes.
template <int kBytes, class DU>
HWY_INLINE hn::Vec<DU> LoadCodes(DU du, const void* p) {
  if constexpr (kBytes == 1) {
    return hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint8_t, DU>(), static_cast<const std::uint8_t*>(p)));
  } else if constexpr (kBytes == 2) {
    return hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint16_t, DU>(), static_cast<const std::uint16_t*>(p)));
  } else {
    return hn::LoadU(du, static_cast<const std::uint32_t*>(p));
  }
}

// The same from p's width (a branch that always goes the same way).
template <class DU>
HWY_INLINE hn::Vec<DU> LoadCodes(DU du, const code_source& p) {
  if (p.bytes == 1) return LoadCodes<1>(du, p.data);
  if (p.bytes == 2) return LoadCodes<2>(du, p.data);
  return LoadCodes<4>(du, p.data);
}

// The binary32 bits of the value of each code (to_float's, or for NaN codes as kNaN says:
// decode_params::nan_codes). Exact: every value of such a format is a binary32 value. Made once
// before a loop: it holds the parameters broadcast, and its call is inlined into the loop.
template <class D, decode_params::nan_codes kNaN = decode_params::nan_codes::exact>
class Decoder {
  using V = hn::Vec<D>;
  using way = decode_params::short_way;

 public:
  Decoder(D du, const decode_params& p)
      : p_(p),
        way_(p.way),
        negative_zero_is_nan_(p.negative_zero_is_nan),
        nan_above_max_(p.nan_above_max),
        sub_all_subnormal_(p.sub_all_subnormal),
        sub_all_normal_(p.sub_all_normal),
        has_nan_(p.has_nan),
        s0_(static_cast<int>(p.s0)),
        half_shift_(static_cast<int>(p.half_shift)),
        half_sign_shift_(static_cast<int>(p.half_sign_shift)),
        frac_bits_(static_cast<int>(p.frac_bits)),
        sub_shift_(static_cast<int>(p.sub_shift)),
        sign_(hn::Set(du, p.sign)),
        mag_mask_(hn::Set(du, p.mag_mask)),
        short_limit_(hn::Set(du, p.short_limit[static_cast<int>(kNaN)])),
        half_scale_(hn::Set(hn::Rebind<float, D>(), p.half_scale)),
        rebias_(hn::Set(du, p.rebias)),
        fraction_(hn::Set(du, p.fraction)),
        sub_exponent_(hn::Set(du, p.sub_exponent)),
        subnormal_quantum_(hn::Set(hn::Rebind<float, D>(), p.subnormal_quantum)),
        max_magnitude_(hn::Set(du, p.max_magnitude)),
        negative_zero_(hn::Set(du, p.negative_zero)),
        inf_magnitude_(hn::Set(du, p.inf_magnitude)),
        all_bits_(hn::Set(du, p.all_bits)),
        quiet_bit_(hn::Set(du, p.f.frac_bits > 0 ? std::uint32_t{1} << (p.f.frac_bits - 1) : 0)),
        quiet_nan_(hn::Set(du, 0x7fc00000u)),
        sign_bit_(hn::Set(du, 0x80000000u)) {}

  // The signaling NaN codes (decode's): NaNs above the infinity, so IEEE ones, with the top
  // fraction bit clear.
  HWY_INLINE auto Signaling(V code) const {
    const V mag = hn::And(code, mag_mask_);
    return hn::And(hn::Gt(mag, inf_magnitude_), hn::Eq(hn::And(mag, quiet_bit_), hn::Zero(D())));
  }

  // Full's fix-up of NaN and infinity lanes comes after a branch while such lanes are rare, on
  // every vector once they are not: `specials` is the caller's loop's frequent_step for it, and
  // `vector` the number of vectors the loop decoded before this one. On wide-range data the
  // branch, mispredicted, held SSE4 decode of fp16 codes (no F16C: every vector takes Full) to
  // 0.63-0.65 G elements/s, 1.38-1.46 without it, while selects on every vector cost it a third on
  // N(0,1) data (lib_ab --kinds decode, Zen 5). The loop holds that state, not the decoder, whose
  // constants then stay in registers.
  HWY_INLINE V operator()(V code, frequent_step& specials, std::size_t vector) const {
    V bits;
    if (way_ == way::binary32_top) {
      if (HWY_LIKELY(Short<way::binary32_top>(code, bits))) return bits;
    } else if constexpr (kHalfConversion) {
      if (way_ == way::via_half && HWY_LIKELY(Short<way::via_half>(code, bits))) return bits;
      if (way_ == way::via_half_apart && HWY_LIKELY(Short<way::via_half_apart>(code, bits))) return bits;
    }
    return Full(code, specials, vector);
  }

  // The short way kWay (array_params.hpp; the parameters' way, and the ways via binary16 only
  // where kHalfConversion): false, with `bits` unset, for a vector with a code it leaves to the
  // full decoder. For loops that know the way (array_ops.cpp: OpRun). kNarrow: codes below 2^31
  // (arrays of 8- and 16-bit codes), compared as signed integers.
  template <way kWay, bool kNarrow = false>
  HWY_INLINE bool Short(V code, V& bits) const {
    constexpr bool kApart = kWay == way::via_half_apart;
    static_assert(kWay == way::binary32_top || (kHalfConversion && (kWay == way::via_half || kApart)));
    const D du;
    const hn::Rebind<float, D> df;
    const V mag = hn::AndNot(sign_, code);
    auto full = Above<kNarrow>(mag, short_limit_);
    // Only fnuz formats have it, and their specials are not IEEE ones: none takes the other ways.
    if (kApart && negative_zero_is_nan_) full = hn::Or(full, hn::Eq(code, sign_));
    if (!hn::AllFalse(du, full)) return false;
    if constexpr (kWay == way::binary32_top) {
      bits = LeftBy(code, s0_);
    } else {
      const V half = kApart ? hn::Or(LeftBy(hn::And(code, mag_mask_), half_shift_),
                                     LeftBy(hn::And(code, sign_), half_sign_shift_))
                            : LeftBy(code, half_shift_);
      const hn::Rebind<std::uint16_t, D> d16;
      const hn::Rebind<hwy::float16_t, D> dh;
      auto value = hn::PromoteTo(df, hn::BitCast(dh, hn::TruncateTo(d16, half)));
      if constexpr (kApart) value = hn::Mul(value, half_scale_);
      bits = hn::BitCast(du, value);
      // The NaN codes' lanes: to_float's quiet NaN of the code's sign, which the lane's value
      // holds (the NaN result of arithmetic takes its sign from the operand, see array_ops.cpp).
      // Only fn formats have them, whose specials are not IEEE ones either. Without a branch:
      // on wide-range e4m3fn data about every other vector holds one, and AVX2 decode ran
      // 1.15-1.24x as fast without the mispredicted branch (lib_ab, Zen 5; N(0,1) data 0.97-1.02).
      if (kApart && kNaN != decode_params::nan_codes::none && nan_above_max_) {
        const auto nan = Above<kNarrow>(mag, max_magnitude_);
        bits = hn::IfThenElse(nan, hn::OrAnd(quiet_nan_, bits, sign_bit_), bits);
      }
    }
    return true;
  }

 private:
  // mag > limit, as a signed compare for narrow codes (see Short).
  template <bool kNarrow>
  static HWY_INLINE auto Above(V mag, V limit) {
    if constexpr (kNarrow) {
      return SignedGt(mag, limit);
    } else {
      return hn::Gt(mag, limit);
    }
  }

  HWY_INLINE V Full(V code, frequent_step& specials, std::size_t vector) const {
    const D du;
    const hn::Rebind<float, D> df;
    const hn::RebindToSigned<D> di;
    const V zero = hn::Zero(du), sign_bit = hn::Set(du, 0x80000000u);
    const V mag = hn::And(code, mag_mask_);
    const auto negative = hn::Ne(hn::And(code, sign_), zero);
    const auto subnormal = hn::Eq(RightBy(mag, frac_bits_), zero);
    const V normal_bits = LeftBy(hn::Sub(mag, rebias_), s0_);
    const V frac = hn::And(code, fraction_);
    V sub_bits;
    if (sub_all_subnormal_) {
      sub_bits = LeftBy(frac, sub_shift_);
    } else if (sub_all_normal_) {
      const V as_float = hn::BitCast(du, hn::ConvertTo(df, hn::BitCast(di, frac)));
      sub_bits = hn::IfThenZeroElse(hn::Eq(frac, zero), hn::Add(as_float, sub_exponent_));
    } else {
      sub_bits = hn::BitCast(du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, frac)), subnormal_quantum_));
    }
    V value = hn::Or(hn::IfThenElse(subnormal, sub_bits, normal_bits), hn::IfThenElseZero(negative, sign_bit));
    // NaN and infinity codes, and the negative-zero code of formats without -0 (their NaN).
    const auto above = hn::Gt(mag, max_magnitude_);
    const auto nan_zero = hn::And(hn::Eq(negative_zero_, zero), hn::And(negative, hn::Eq(mag, zero)));
    if (specials(!hn::AllFalse(du, hn::Or(above, nan_zero)), vector)) {
      const auto inf = hn::Eq(mag, inf_magnitude_);
      value = hn::IfThenElse(inf, hn::IfThenElse(negative, hn::Set(du, p_.inf_value[1]), hn::Set(du, p_.inf_value[0])),
                             value);
      if (has_nan_) {
        const auto nan = hn::Or(hn::AndNot(inf, above), nan_zero);
        value = hn::IfThenElse(
            nan, hn::IfThenElse(negative, hn::Set(du, p_.nan_value[1]), hn::Set(du, p_.nan_value[0])), value);
      }
    }
    // Codes with bits above the format's width: whatever the core makes of them.
    if (HWY_UNLIKELY(!hn::AllFalse(du, hn::Gt(code, all_bits_)))) {
      constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(std::uint32_t);
      HWY_ALIGN std::uint32_t codes[kMax], lanes[kMax];
      hn::Store(code, du, codes);
      hn::Store(value, du, lanes);
      for (std::size_t j = 0; j < hn::Lanes(du); ++j)
        if (codes[j] > p_.all_bits) lanes[j] = std::bit_cast<std::uint32_t>(to_float(p_.f, codes[j]));
      value = hn::Load(du, lanes);
    }
    return value;
  }

  const decode_params& p_;  // for the rare paths
  way way_;
  bool negative_zero_is_nan_, nan_above_max_, sub_all_subnormal_, sub_all_normal_, has_nan_;
  // The shifts are the same in every lane (LeftBy, RightBy).
  int s0_, half_shift_, half_sign_shift_, frac_bits_, sub_shift_;
  V sign_, mag_mask_, short_limit_;
  hn::Vec<hn::Rebind<float, D>> half_scale_;
  V rebias_, fraction_, sub_exponent_;
  hn::Vec<hn::Rebind<float, D>> subnormal_quantum_;
  V max_magnitude_, negative_zero_, inf_magnitude_, all_bits_, quiet_bit_, quiet_nan_, sign_bit_;
};

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_SRC_DECODE_INL_H_
