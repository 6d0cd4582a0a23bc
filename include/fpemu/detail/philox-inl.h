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

#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {

// How many sets of counters to hand Philox at once: two where AVX-512's 32 registers hold their
// 16 vectors of state, one elsewhere (on AVX2 two sets spilled, and ran 0.78-0.96x as fast).
// Three on AVX-512 (three groups a call) made the keystream of 32- and 64-bit words 1.13-1.17x as
// fast on a Zen 5, but cost encode in sr16 up to 7% where it runs at the memory limit, and left
// sr-exact below half of memcpy's rate, so two it is.
inline constexpr std::size_t kPhiloxSets = HWY_TARGET <= HWY_AVX3 ? 2 : 1;
// Whether a set's even and odd lanes run each round together (Philox, below).
inline constexpr bool kInterleaved = HWY_TARGET <= HWY_AVX2;

#if HWY_TARGET != HWY_SCALAR
// The counters of blocks block + lane, lane by lane, as random.hpp's philox_block lays them out
// (the block's low and high words, stream, 0); block's low word plus the lane must not carry.
template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE void BlockCounters(D d, std::uint64_t block, std::uint32_t stream, V (&c)[4]) {
  namespace hn = hwy::HWY_NAMESPACE;
  c[0] = hn::Add(hn::Iota(d, 0), hn::Set(d, static_cast<std::uint32_t>(block)));
  c[1] = hn::Set(d, static_cast<std::uint32_t>(block >> 32));
  c[2] = hn::Set(d, stream);
  c[3] = hn::Zero(d);
}

// The ten rounds on S sets of counters (c[s][0..3]) with key `seed`, lane by lane: lane b of a
// set's words is the block whose counter lane b held. The rounds run on the even lanes and on
// the odd ones apart, each block in the low half of a 64-bit lane, where one even-lane multiply
// gives the whole 32x32 product: its low half is the next round's low word as it stands, and a
// swap of halves (Shuffle2301, a shuffle-port instruction) brings its high word down, so that
// the multiplies are the only work on the ports they share with shifts on Intel cores (a full
// 32-bit lane multiply costs two of them there, and splitting each product by shifts doubled
// that port's load). The high halves carry garbage through the rounds: neither the multiplies
// nor the result read it. A set's rounds are a chain of ten multiplies, each waiting for the one
// before; with AVX-512's 32 registers each round runs on every set, even and odd lanes alike,
// before the next (two sets: encode in sr16 and sr-exact 1.04-1.16x as fast as one set on a
// Zen 5, bench/results/encode-2026-11-29-zen5-lib-ab.md). AVX2's 16 registers hold one set's
// even and odd lanes interleaved (kInterleaved: encode and round in place in sr-exact 1.00-1.30x,
// sr16 0.93-1.20x, against the even lanes' rounds before the odd ones', on a Zen 4,
// bench/results/philox-avx2-2026-12-01-zen4-lib-ab.md); SSE4's do not (interleaved, its encode in
// sr16 and sr-exact ran 0.92-0.95x).
// Always inlined: out of line, every call would reload the multipliers and keys through memory,
// which costs more than the rounds.
template <std::size_t S, class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE void Philox(D d, V (&c)[S][4], std::uint64_t seed) {
  namespace hn = hwy::HWY_NAMESPACE;
  const V m0 = hn::Set(d, 0xD2511F53u), m1 = hn::Set(d, 0xCD9E8D57u);
  // The ten rounds on N sets at once, each round on every set before the next.
  auto rounds = [&]<std::size_t N>(V(&a)[N][4]) __attribute__((always_inline)) HWY_ATTR {
    std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      const V key0 = hn::Set(d, k0), key1 = hn::Set(d, k1);
      for (std::size_t s = 0; s < N; ++s) {
        const V p0 = hn::BitCast(d, hn::MulEven(a[s][0], m0)), p1 = hn::BitCast(d, hn::MulEven(a[s][2], m1));
        a[s][0] = hn::Xor3(hn::Shuffle2301(p1), a[s][1], key0);
        a[s][1] = p1;
        a[s][2] = hn::Xor3(hn::Shuffle2301(p0), a[s][3], key1);
        a[s][3] = p0;
      }
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
  };
  V odd[S][4];
  for (std::size_t s = 0; s < S; ++s) {
    for (int w = 0; w < 4; ++w) odd[s][w] = hn::Shuffle2301(c[s][w]);
  }
  if constexpr (kInterleaved) {
    V all[2 * S][4];
    for (std::size_t s = 0; s < S; ++s) {
      for (int w = 0; w < 4; ++w) all[s][w] = c[s][w], all[S + s][w] = odd[s][w];
    }
    rounds(all);
    for (std::size_t s = 0; s < S; ++s) {
      for (int w = 0; w < 4; ++w) c[s][w] = all[s][w], odd[s][w] = all[S + s][w];
    }
  } else {
    rounds(c);
    rounds(odd);
  }
  for (std::size_t s = 0; s < S; ++s) {
    for (int w = 0; w < 4; ++w) c[s][w] = hn::OddEven(hn::Shuffle2301(odd[s][w]), c[s][w]);
  }
}
#endif

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FPEMU_DETAIL_PHILOX_INL_H_
