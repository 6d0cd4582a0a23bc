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

#include "fpemu/random.hpp"

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {

// How many sets of counters to hand Philox at once: two where AVX-512's 32 registers hold their
// 16 vectors of state, one elsewhere (on AVX2 two sets spilled, and ran 0.78-0.96x as fast).
// Three on AVX-512 (three groups a call) made the keystream of 32- and 64-bit words 1.13-1.17x as
// fast on a Zen 5, but cost encode in sr16 up to 7% where it runs at the memory limit, and left
// sr-exact below half of memcpy's rate, so two it is.
inline constexpr std::size_t kPhiloxSets = HWY_TARGET <= HWY_AVX3 ? 2 : 1;
// Whether a set's even and odd lanes run each round together (PhiloxBlocks, below).
inline constexpr bool kInterleaved = HWY_TARGET <= HWY_AVX2;
// Whether PhiloxBlocks folds the products the first two rounds share among the lanes into
// scalar arithmetic: everywhere but AVX2, whose rounds are bound by the chain of multiplies, not
// their number, and where the folded rounds cost registers its 16 could not spare (state stored
// and reloaded inside the chain: sr-exact 0.86-0.97x on a Zen 4).
inline constexpr bool kFoldedRounds = HWY_TARGET != HWY_AVX2;

#if HWY_TARGET != HWY_SCALAR
// Philox blocks block[s] + lane of stream `stream` under key `seed` (random.hpp's philox_block),
// lane by lane: c[s][w] receives word w of set s's blocks. block[s]'s low word plus the lane must
// not carry.
// The rounds run on the even lanes and on the odd ones apart, each block in the low half of a
// 64-bit lane, where one even-lane multiply gives the whole 32x32 product: its low half is the
// next round's low word as it stands, and a swap of halves (Shuffle2301, a shuffle-port
// instruction) brings its high word down, so that the multiplies are the only work on the ports
// they share with shifts on Intel cores (a full 32-bit lane multiply costs two of them there, and
// splitting each product by shifts doubled that port's load). The high halves carry garbage
// through the rounds: neither the multiplies nor the result read it. A set's rounds are a chain of
// ten multiplies, each waiting for the one before; with AVX-512's 32 registers each round runs on
// every set, even and odd lanes alike, before the next (two sets: encode in sr16 and sr-exact
// 1.04-1.16x as fast as one set on a Zen 5, bench/results/encode-2026-11-29-zen5-lib-ab.md).
// AVX2's 16 registers hold one set's even and odd lanes interleaved (kInterleaved: encode and
// round in place in sr-exact 1.00-1.30x, sr16 0.93-1.20x, against the even lanes' rounds before
// the odd ones', on a Zen 4, bench/results/philox-avx2-2026-12-01-zen4-lib-ab.md); SSE4's do not
// (interleaved, its encode in sr16 and sr-exact ran 0.92-0.95x).
// On AVX-512 the multiplies bound the rounds (40 a set; a Zen 4 issues one 512-bit multiply in
// about two cycles, of any kind). In the first two rounds one product of each is the same in every
// lane, as the counter's words 1 to 3 are (the block's high word, the stream, 0), and where
// kFoldedRounds those two are computed once, in scalar arithmetic:
//   round 1: word 2's product m1 stream; word 0's m0 c0, c0 = block + lane
//   round 2: word 0 after round 1, hi(m1 stream) ^ hi(block) ^ k0, is the same in every lane, and
//            with it its product; word 2's product varies.
// The keystream alone ran 1.04-1.10x as fast on AVX3 and 1.13-1.19x on SSE4, sr-exact 1.05x and
// 1.10x (medians of 20 cells), sr16 1.01x and 1.04x, on a Zen 4
// (bench/results/philox-folded-rounds-2026-12-02-zen4-lib-ab.md).
// Always inlined: out of line, every call would reload the multipliers and keys through memory,
// which costs more than the rounds.
template <std::size_t S, class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE void PhiloxBlocks(D d, const std::uint64_t (&block)[S], std::uint32_t stream, std::uint64_t seed,
                             V (&c)[S][4]) {
  namespace hn = hwy::HWY_NAMESPACE;
  const V m0 = hn::Set(d, philox_m0), m1 = hn::Set(d, philox_m1);
  const auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  const std::uint64_t stream_product = std::uint64_t{philox_m1} * stream;  // round 1, word 2's
  V odd[S][4];
  for (std::size_t s = 0; s < S; ++s) {
    const V counter = hn::Add(hn::Iota(d, 0), hn::Set(d, static_cast<std::uint32_t>(block[s])));
    if constexpr (!kFoldedRounds) {  // the counters as they are
      c[s][0] = counter;
      c[s][1] = hn::Set(d, static_cast<std::uint32_t>(block[s] >> 32));
      c[s][2] = hn::Set(d, stream);
      c[s][3] = hn::Zero(d);
      for (int w = 0; w < 4; ++w) odd[s][w] = hn::Shuffle2301(c[s][w]);
      continue;
    }
    const auto word0 =  // word 0 after round 1, and its product in round 2
        static_cast<std::uint32_t>(stream_product >> 32) ^ static_cast<std::uint32_t>(block[s] >> 32) ^ k0;
    const std::uint64_t word0_product = std::uint64_t{philox_m0} * word0;
    const V key1 = hn::Set(d, k1);
    const V word0_key = hn::Set(d, static_cast<std::uint32_t>(stream_product) ^ (k0 + philox_w0));
    const V word2_key = hn::Set(d, static_cast<std::uint32_t>(word0_product >> 32) ^ (k1 + philox_w1));
    const V p0 = hn::BitCast(d, hn::MulEven(counter, m0)),  // round 1, even and odd lanes
        q0 = hn::BitCast(d, hn::MulEven(hn::Shuffle2301(counter), m0));
    const V p1 = hn::BitCast(d, hn::MulEven(hn::Xor(hn::Shuffle2301(p0), key1), m1)),  // round 2
        q1 = hn::BitCast(d, hn::MulEven(hn::Xor(hn::Shuffle2301(q0), key1), m1));
    c[s][0] = hn::Xor(hn::Shuffle2301(p1), word0_key);
    odd[s][0] = hn::Xor(hn::Shuffle2301(q1), word0_key);
    c[s][1] = p1;
    odd[s][1] = q1;
    c[s][2] = hn::Xor(p0, word2_key);
    odd[s][2] = hn::Xor(q0, word2_key);
    c[s][3] = odd[s][3] = hn::Set(d, static_cast<std::uint32_t>(word0_product));
  }
  // The other rounds on N sets at once, each round on every set before the next.
  auto rounds = [&]<std::size_t N>(V(&a)[N][4]) __attribute__((always_inline)) HWY_ATTR {
    constexpr int kFirst = kFoldedRounds ? 2 : 0;
    std::uint32_t key0 = k0 + kFirst * philox_w0, key1 = k1 + kFirst * philox_w1;
    for (int round = kFirst; round < 10; ++round) {
      const V kv0 = hn::Set(d, key0), kv1 = hn::Set(d, key1);
      for (std::size_t s = 0; s < N; ++s) {
        const V p0 = hn::BitCast(d, hn::MulEven(a[s][0], m0)), p1 = hn::BitCast(d, hn::MulEven(a[s][2], m1));
        a[s][0] = hn::Xor3(hn::Shuffle2301(p1), a[s][1], kv0);
        a[s][1] = p1;
        a[s][2] = hn::Xor3(hn::Shuffle2301(p0), a[s][3], kv1);
        a[s][3] = p0;
      }
      key0 += philox_w0;
      key1 += philox_w1;
    }
  };
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
