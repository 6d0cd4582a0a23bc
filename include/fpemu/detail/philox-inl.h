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
// is the block whose counter lane b held. The rounds run twice, on the even lanes and on the odd
// ones, each block in the low half of a 64-bit lane, where one even-lane multiply gives the whole
// 32x32 product: its low half is the next round's low word as it stands, and a swap of halves
// (Shuffle2301, a shuffle-port instruction) brings its high word down, so that the multiplies are
// the only work on the ports they share with shifts on Intel cores (a full 32-bit lane multiply
// costs two of them there, and splitting each product by shifts doubled that port's load). The
// high halves carry garbage through the rounds: neither the multiplies nor the result read it.
// Always inlined: out of line, every call would reload the multipliers and keys through memory,
// which costs more than the rounds.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE void Philox(D d, V& c0, V& c1, V& c2, V& c3, std::uint64_t seed) {
  namespace hn = hwy::HWY_NAMESPACE;
  const V m0 = hn::Set(d, 0xD2511F53u), m1 = hn::Set(d, 0xCD9E8D57u);
  auto rounds = [&](V& a0, V& a1, V& a2, V& a3) __attribute__((always_inline)) HWY_ATTR {
    std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      const V p0 = hn::BitCast(d, hn::MulEven(a0, m0)), p1 = hn::BitCast(d, hn::MulEven(a2, m1));
      a0 = hn::Xor3(hn::Shuffle2301(p1), a1, hn::Set(d, k0));
      a1 = p1;
      a2 = hn::Xor3(hn::Shuffle2301(p0), a3, hn::Set(d, k1));
      a3 = p0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
  };
  V o0 = hn::Shuffle2301(c0), o1 = hn::Shuffle2301(c1), o2 = hn::Shuffle2301(c2), o3 = hn::Shuffle2301(c3);
  rounds(c0, c1, c2, c3);
  rounds(o0, o1, o2, o3);
  c0 = hn::OddEven(hn::Shuffle2301(o0), c0);
  c1 = hn::OddEven(hn::Shuffle2301(o1), c1);
  c2 = hn::OddEven(hn::Shuffle2301(o2), c2);
  c3 = hn::OddEven(hn::Shuffle2301(o3), c3);
}
#endif

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_DETAIL_PHILOX_INL_H_
