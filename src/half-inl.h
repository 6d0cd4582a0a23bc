// Binary32 lanes to IEEE binary16 codes by the CPU's conversion instruction, for the kernels that
// round into fp16 with it: HalfRun (array_simd.cpp, the encode kernels) and OnePassRun
// (array_ops.cpp, element-wise arithmetic); HalfRun's comment gives the argument that its result
// is the core's. And RoundingAgrees, which both kernels' callers ask. Include it after
// hwy/highway.h in a file that hwy/foreach_target.h re-includes: the guard toggles with each
// target, as in decode-inl.h.
#if defined(FPEMU_SRC_HALF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FPEMU_SRC_HALF_INL_H_
#undef FPEMU_SRC_HALF_INL_H_
#else
#define FPEMU_SRC_HALF_INL_H_
#endif

#include <cstdint>
#include <limits>

#include <hwy/highway.h>

#include "array_params.hpp"
#include "decode-inl.h"
#include "fpemu/rounding.hpp"

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether the conversion instruction rounds in Mode on this target: its four directions, where
// the target has it (kHalfConversion).
template <round_mode Mode>
inline constexpr bool kHalfRounds =
    kHalfConversion && (Mode == round_mode::nearest_even || Mode == round_mode::toward_zero ||
                        Mode == round_mode::toward_positive || Mode == round_mode::toward_negative);

// Binary32 bits: 2^-14, binary16's smallest normal; its infinity and quiet NaN.
inline constexpr std::uint32_t kHalfNormal = 0x38800000u, kInfinityBits = 0x7f800000u, kQuietNaNBits = 0x7fc00000u;
// The largest binary32 magnitude (bits) that rounds into binary16's finite range in Mode with
// either sign: below 65520 (65504 and half its ulp) to nearest, 2^16 toward zero, and 65504 in the
// directed modes, which round one sign away from zero.
template <round_mode Mode>
inline constexpr std::uint32_t kHalfBig = Mode == round_mode::nearest_even  ? 0x477fefffu
                                          : Mode == round_mode::toward_zero ? 0x477fffffu
                                                                            : 0x477fe000u;

// Whether round(d, lanes), binary32 lanes to two-byte codes, gives the core's results (p) for
// the largest finite binary32 and for infinity, either sign, and an infinity raises no flag:
// policy ieee, where the codes' own overflow is the core's.
template <class Round>
bool RoundingAgrees(const encode_params<float>& p, Round round) {
  const hn::ScalableTag<float> d;
  if (p.infinite_flags != 0) return false;
  for (const bool negative : {false, true}) {
    const float sign = negative ? -1.0f : 1.0f;
    const auto code = [&](float x) HWY_ATTR { return hn::GetLane(round(d, hn::Set(d, sign * x))); };
    if (code(std::numeric_limits<float>::max()) != p.overflow_code[negative]) return false;
    if (code(std::numeric_limits<float>::infinity()) != p.infinite_code[negative]) return false;
  }
  return true;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// Binary32 lanes to binary16 codes by the conversion instruction (F16C's VCVTPS2PH, and
// AVX-512's for 16 lanes), rounded in the direction of Mode (kHalfRounds).
template <round_mode Mode, class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, DF>> HalfCodes(DF, hn::Vec<DF> x) {
  constexpr int kDirection = (Mode == round_mode::nearest_even    ? _MM_FROUND_TO_NEAREST_INT
                              : Mode == round_mode::toward_zero     ? _MM_FROUND_TO_ZERO
                              : Mode == round_mode::toward_positive ? _MM_FROUND_TO_POS_INF
                                                                    : _MM_FROUND_TO_NEG_INF) |
                             _MM_FROUND_NO_EXC;
#if HWY_TARGET <= HWY_AVX3
  return hn::Vec<hn::Rebind<std::uint16_t, DF>>{_mm512_cvtps_ph(x.raw, kDirection)};
#else
  return hn::Vec<hn::Rebind<std::uint16_t, DF>>{_mm256_cvtps_ph(x.raw, kDirection)};
#endif
}

// The binary32 bits of binary16 codes' values (exact), a 32-bit lane each.
template <class DU>
HWY_INLINE hn::Vec<DU> HalfValueBits(DU du, hn::Vec<hn::Rebind<std::uint16_t, DU>> half) {
  return hn::BitCast(du, hn::PromoteTo(hn::Rebind<float, DU>(), hn::BitCast(hn::Rebind<hwy::float16_t, DU>(), half)));
}

// Whether HalfCodes' results for overflowing and infinite inputs are the core's (p: binary32 into
// fp16), and an infinity raises no flag (policy ieee).
template <round_mode Mode>
bool HalfAgrees(const encode_params<float>& p) {
  return RoundingAgrees(p, [](auto d, auto x) HWY_ATTR { return HalfCodes<Mode>(d, x); });
}
#else
// Declared only, for the branches `if constexpr (kHalfConversion)` discards.
template <round_mode Mode, class DF>
hn::Vec<hn::Rebind<std::uint16_t, DF>> HalfCodes(DF, hn::Vec<DF> x);
template <class DU>
hn::Vec<DU> HalfValueBits(DU du, hn::Vec<hn::Rebind<std::uint16_t, DU>> half);
#endif

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_SRC_HALF_INL_H_
