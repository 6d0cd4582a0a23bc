// Philox-4x32-10 (random.hpp's philox4x32_10) on 32-bit vector lanes, for the kernels compiled
// once per SIMD target (src/array_simd.cpp, analysis/training/kernels.cpp); not installed.
// Include it after hwy/highway.h in a file that hwy/foreach_target.h re-includes: the guard below
// toggles with each target, Highway's convention for such headers.
#if defined(FPEMU_DETAIL_PHILOX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FPEMU_DETAIL_PHILOX_INL_H_
#undef FPEMU_DETAIL_PHILOX_INL_H_
#else
#define FPEMU_DETAIL_PHILOX_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR
// The ten rounds on counters (c0, c1, c2, c3) with key `seed`, lane by lane: lane b of the words
// is the block whose counter lane b held. Both halves of each 32x32 product come from two
// even-lane 64-bit multiplies (a full 32-bit lane multiply costs two of them on Intel cores).
// Always inlined: out of line, every call would reload the multipliers and keys through memory,
// which costs more than the rounds.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE void Philox(D d, V& c0, V& c1, V& c2, V& c3, std::uint64_t seed) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Repartition<std::uint64_t, D> d64;
  const V m0 = hn::Set(d, 0xD2511F53u), m1 = hn::Set(d, 0xCD9E8D57u);
  // a * m as its high and low 32 bits, lane by lane.
  auto mul_hi_lo = [&](V a, V m, V& hi, V& lo) __attribute__((always_inline)) HWY_ATTR {
    const auto even = hn::MulEven(a, m);
    const auto odd = hn::MulEven(hn::BitCast(d, hn::ShiftRight<32>(hn::BitCast(d64, a))), m);
    hi = hn::OddEven(hn::BitCast(d, odd), hn::BitCast(d, hn::ShiftRight<32>(even)));
    lo = hn::OddEven(hn::BitCast(d, hn::ShiftLeft<32>(odd)), hn::BitCast(d, even));
  };
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    V hi0, lo0, hi1, lo1;
    mul_hi_lo(c0, m0, hi0, lo0);
    mul_hi_lo(c2, m1, hi1, lo1);
    c0 = hn::Xor3(hi1, c1, hn::Set(d, k0));
    c1 = lo1;
    c2 = hn::Xor3(hi0, c3, hn::Set(d, k1));
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}
#endif

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_DETAIL_PHILOX_INL_H_
