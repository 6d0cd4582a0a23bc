// Rounding by the mode's increment below the quantum (round_float.hpp) in vector lanes: RoundShift,
// for the encode kernels (array_simd.cpp) and the one pass's codes (array_ops.cpp). Include it
// after hwy/highway.h in a file that hwy/foreach_target.h re-includes: the guard toggles with each
// target, as in decode-inl.h.
#if defined(FPEMU_SRC_ROUND_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FPEMU_SRC_ROUND_INL_H_
#undef FPEMU_SRC_ROUND_INL_H_
#else
#define FPEMU_SRC_ROUND_INL_H_
#endif

#include <type_traits>

#include <hwy/highway.h>

#include "decode-inl.h"
#include "fpemu/rounding.hpp"

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A shift count less n, for a count per lane (a vector), one for every lane (an int, which
// LeftBy and RightBy in decode-inl.h take) or one known at compile time (a std::integral_constant;
// two equal ones leave 0, all the one pass asks).
template <class V>
HWY_INLINE V CountLess(V s, int n) { return hn::Sub(s, hn::Set(hn::DFromV<V>(), static_cast<hn::TFromV<V>>(n))); }
template <class V>
HWY_INLINE V CountLess(V s, V n) { return hn::Sub(s, n); }
HWY_INLINE int CountLess(int s, int n) { return s - n; }
template <int N>
HWY_INLINE int CountLess(std::integral_constant<int, N>, int n) { return N - n; }
template <int N>
HWY_INLINE std::integral_constant<int, 0> CountLess(std::integral_constant<int, N>, std::integral_constant<int, N>) {
  return {};
}

// Rounds v / 2^s to an integer by the mode's increment (round_float.hpp): s >= 1 and every
// count below stays under the lane width, so no shift is out of range on any target. The
// directed modes add 2^s - 1 before the shift where they round away from zero, so that the
// carry out of the rest below the quantum is their increment; no mode asks whether v / 2^s is
// inexact (array_simd.cpp's Inexact, where a flag is wanted).
// The count s (and k, the same kind) is an int where it is the same in every lane, a
// std::integral_constant where it is known at compile time (the one pass's codes).
template <round_mode Mode, class D, class V, class M, class S>
HWY_INLINE V RoundShift(D d, V v, S s, M negative, V random, S k, bool k_within_s) {
  const V one = hn::Set(d, 1);
  const V kept = RightBy(v, s);
  if constexpr (Mode == round_mode::nearest_even) {
    // v + 2^(s-1) - 1 + lsb, written as v + 2^(s-1) - (1 - lsb), with no -1: GCC makes that
    // constant on every vector by vpternlogd $0xff on a register, which AMD's Zen cores do not
    // take as a fresh value, so that each vector waited for the one before (AVX3 encode of e5m2
    // in rne on wide data, Zen 5: 2.4 G elements/s, 0.43 of memcpy; 5.9 written so).
    return RightBy(hn::Sub(hn::Add(v, LeftBy(one, CountLess(s, 1))), hn::AndNot(kept, one)), s);
  } else if constexpr (Mode == round_mode::nearest_away) {
    return RightBy(hn::Add(v, LeftBy(one, CountLess(s, 1))), s);
  } else if constexpr (Mode == round_mode::toward_zero) {
    return kept;
  } else if constexpr (Mode == round_mode::toward_positive || Mode == round_mode::toward_negative) {
    // Away from zero, (v + 2^s - 1) / 2^s, where the mode's direction is the lane's, else kept
    // (no wrap: v + 2^s - 1 stays below 2^32 for every v the callers give).
    const V low = hn::Sub(LeftBy(one, s), one);
    const V away = Mode == round_mode::toward_positive ? hn::IfThenZeroElse(negative, low)
                                                       : hn::IfThenElseZero(negative, low);
    return RightBy(hn::Add(v, away), s);
  } else if constexpr (Mode == round_mode::to_odd) {
    // The sticky bit: (rest + 2^s - 1) / 2^s for the rest below the quantum, rest < 2^s.
    const V low = hn::Sub(LeftBy(one, s), one);
    return hn::Or(kept, RightBy(hn::Add(hn::And(v, low), low), s));
  } else {
    // The k random bits aligned with the top k bits of the fraction below the quantum
    // (k_within_s: s >= k in every lane, the common case, with no lane to shift right).
    if (k_within_s) return RightBy(hn::Add(v, LeftBy(random, CountLess(s, k))), s);
    if constexpr (!std::is_same_v<S, V>) {
      return RightBy(hn::Add(v, RightBy(random, CountLess(k, s))), s);
    } else {
      const auto narrow = hn::Lt(s, k);
      const V left = hn::IfThenZeroElse(narrow, hn::Sub(s, k));
      const V right = hn::IfThenElseZero(narrow, hn::Sub(k, s));
      return hn::Add(v, (random << left) >> right) >> s;
    }
  }
}

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_SRC_ROUND_INL_H_
