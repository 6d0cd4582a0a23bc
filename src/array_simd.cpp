// See array_simd.hpp. This file is compiled once per SIMD target (hwy/foreach_target.h
// re-includes it); the part under HWY_ONCE is the dispatcher.
#include "array_simd.hpp"
#include "array_params.hpp"

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

#include "fpemu/convert.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/array_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "fpemu/detail/philox-inl.h"
#include "decode-inl.h"
#include "half-inl.h"
#include "round-inl.h"

#ifndef FPEMU_ARRAY_SIMD_SHARED
#define FPEMU_ARRAY_SIMD_SHARED
namespace fpemu::simd {
// Code j of a sink, one at a time (lanes the core rounds, and the tail).
inline void put_code(const code_sink& s, std::size_t j, std::uint32_t c) {
  void* at = s.at(j).data;
  if (s.bytes == 1) {
    *static_cast<std::uint8_t*>(at) = static_cast<std::uint8_t>(c);
  } else if (s.bytes == 2) {
    *static_cast<std::uint16_t*>(at) = static_cast<std::uint16_t>(c);
  } else {
    *static_cast<std::uint32_t*>(at) = c;
  }
}

}  // namespace fpemu::simd
#endif

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void FillKeystream(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t n, int width,
                   std::uint32_t* out) {
  if (width == 64) width = 32;  // sr-exact's high words: the keystream of width 32 (random.hpp)
  const hn::ScalableTag<std::uint32_t> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t L = std::min<std::size_t>(hn::Lanes(d), 16);
  const int pieces = 128 / width;
  const std::uint64_t per_group = 16 * static_cast<std::uint64_t>(pieces);
  HWY_ALIGN std::uint32_t part[128 + HWY_MAX_BYTES / 4];  // a group cut short by first or n
  // S vectors of blocks at once, vector s holding blocks block[s] + lane (block[s] a multiple of
  // 16 plus a multiple of L below 16: no carry into the high word) and storing piece j of lane
  // l at at[s] + j * 16 + l.
  auto blocks = [&]<std::size_t S>(const std::uint64_t(&block)[S], std::uint32_t* const(&at)[S]) HWY_ATTR {
    V c[S][4];
#if HWY_TARGET == HWY_SCALAR  // one lane: no even/odd multiplies; the scalar Philox
    auto philox = [&] {
      for (std::size_t s = 0; s < S; ++s) {
        const philox_counter w = philox_block(seed, stream, block[s]);
        for (int j = 0; j < 4; ++j) c[s][j] = hn::Set(d, w[j]);
      }
    };
#else
    auto philox = [&]() HWY_ATTR { PhiloxBlocks(d, block, stream, seed, c); };
#endif
    auto put = [&](std::size_t s, int j, V piece) HWY_ATTR { hn::StoreU(piece, d, at[s] + j * 16); };
    philox();
    for (std::size_t s = 0; s < S; ++s) {
      if (width == 16) {
        const V low = hn::Set(d, 0xffffu);
        for (int j = 0; j < 4; ++j) {
          put(s, 2 * j, hn::And(c[s][j], low));
          put(s, 2 * j + 1, hn::ShiftRight<16>(c[s][j]));
        }
      } else {
        for (int j = 0; j < 4; ++j) put(s, j, c[s][j]);
      }
    }
  };
  // Group by group; `index` wraps modulo 2^64 like first_index + i does.
  std::uint64_t index = first;
  for (std::size_t done = 0; done < n;) {
    const std::uint64_t g = index / per_group, offset = index % per_group;
    const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(per_group - offset, n - done));
    // A whole group goes from the registers to `out` (element l to out[done + l]), without a
    // round trip through a buffer of the four words (encode sr16 and sr-exact 1.1-1.3x on AVX3,
    // scripts/bench_ab.py against the buffered loop, four rounds).
    const bool whole = offset == 0 && count == per_group && hn::Lanes(d) <= 16;
    if (kPhiloxSets == 2 && whole && L == 16 && n - done >= 2 * per_group) {  // two whole groups
      const std::uint64_t next = index + per_group;  // the next group's first element, mod 2^64
      blocks({g * 16, next / per_group * 16}, {out + done, out + done + per_group});
      done += 2 * per_group;
      index += 2 * per_group;
      continue;
    }
    for (std::size_t b0 = 0; b0 < 16; b0 += L) blocks({g * 16 + b0}, {whole ? out + done + b0 : part + b0});
    if (!whole) std::copy(part + offset, part + offset + count, out + done);
    done += count;
    index += count;
  }
}

// Lanes whose sign bit is set: one signed compare (the kernels' formats are all signed, so
// these are the lanes the format's sign bit is set in).
template <class D, class V = hn::Vec<D>>
HWY_INLINE auto SignBitSet(D du, V bits) {
  const hn::RebindToSigned<D> di;
  return hn::RebindMask(du, hn::Lt(hn::BitCast(di, bits), hn::Zero(di)));
}

// Lanes whose magnitude is a subnormal of the input type, 0 < mag < 2^mant.
template <int kMant, class D, class V = hn::Vec<D>>
HWY_INLINE auto InputSubnormal(D du, V mag) {
  return Between(du, mag, 0, hn::TFromD<D>{1} << kMant);
}

// Whether v / 2^s is not an integer.
template <class D, class V, class S>
HWY_INLINE auto Inexact(D d, V v, S s) {
  const V one = hn::Set(d, 1);
  return hn::Ne(hn::And(v, hn::Sub(LeftBy(one, s), one)), hn::Zero(d));
}

// The magnitude y (a float or double, >= 0, below 2^23) rounded to an integer by the mode, as
// unsigned lanes: the scaled path's rule for lanes below the normal range, where y is the lane in
// units of the subnormal quantum (exact: a power-of-two scaling), and signed_y the same with the
// input's sign. Each step is exact, so the result is round_to_quantum's:
// - Trunc, Ceil and Floor take their direction from the instruction; toward +inf and -inf round
//   signed_y and take the magnitude, as the lane's own direction would (older targets that emulate
//   them need the environment to round to nearest: the caller checks, for every target, since
//   nearest-even is the addition below, which rounds as the environment does);
// - y - Trunc(y), the fraction, is exact, so comparing it with 1/2 rounds half away;
// - stochastic with k bits: the core keeps the carry of the top k fraction bits plus the random
//   bits, fraction_k = floor(frac(y) 2^k), so the result is (floor(y 2^k) + random) >> k, whole
//   in a lane while y 2^k < 2^31 (the caller checks that frac_bits + k <= 31; sr-exact, k = 32,
//   takes ExactUnits instead);
// - a whole y is made an integer by adding 2^23 (2^52 for double), below 2^24 (2^53) where the
//   quantum is 1, and taking the low bits of the sum (two instructions; a conversion to int
//   costs five on AVX2, which fixes up out-of-range lanes); in nearest-even that addition
//   rounds y itself.
template <round_mode Mode, class D, class VF, class V = hn::Vec<hn::RebindToUnsigned<D>>>
HWY_INLINE V ScaledUnits(D d, VF y, VF signed_y, V random, V k, VF two_k) {
  const hn::RebindToUnsigned<D> du;
  using T = hn::TFromD<D>;
  const VF magic = hn::Set(d, static_cast<T>(sizeof(T) == 4 ? 0x1p23 : 0x1p52));
  const V magic_bits = hn::BitCast(du, magic);
  auto integer = [&](VF whole) FPEMU_KERNEL_LAMBDA {
    return hn::Sub(hn::BitCast(du, hn::Add(whole, magic)), magic_bits);
  };
  if constexpr (Mode == round_mode::nearest_even) {
    return integer(y);
  } else if constexpr (Mode == round_mode::nearest_away) {
    const VF t = hn::Trunc(y);
    return hn::Sub(integer(t), hn::VecFromMask(du, hn::RebindMask(du, hn::Ge(hn::Sub(y, t), hn::Set(d, 0.5)))));
  } else if constexpr (Mode == round_mode::toward_zero) {
    return integer(hn::Trunc(y));
  } else if constexpr (Mode == round_mode::toward_positive) {
    return integer(hn::Abs(hn::Ceil(signed_y)));
  } else if constexpr (Mode == round_mode::toward_negative) {
    return integer(hn::Abs(hn::Floor(signed_y)));
  } else if constexpr (Mode == round_mode::to_odd) {
    const VF t = hn::Trunc(y);
    return hn::Or(integer(t), hn::IfThenElseZero(hn::RebindMask(du, hn::Ne(t, y)), hn::Set(du, 1)));
  } else {  // y 2^k may exceed 2^23 (not 2^31): a conversion, which truncates
    const hn::RebindToSigned<D> di;
    return hn::Add(hn::BitCast(du, TruncInRange(di, hn::Mul(y, two_k))), random) >> k;
  }
}

// sr-exact's rule for the scaled path's lanes below the normal range, in integers (ScaledUnits'
// steps would need y 2^32 whole): the lane's significand v (its leading one included; 0 for zero;
// binary32 subnormal inputs are the caller's to leave out) lies S = s0 + emin_field - field bits
// above the quantum, `s_at_emin` being s0 + emin_field. round_to_quantum rounds it up when
// ~R < v 2^(64-S) as real numbers (R the element's 64 random bits; the sticky bit makes the
// comparison that of the reals where S > 64), and `random` holds R's high word. With
// F = floor(v 2^(32-S)) mod 2^32 (the fraction's top 32 bits), ~R's high word below F rounds up
// and above it rounds down; where the two are equal (2^-32 of the lanes) R's low word may decide,
// and the lane is returned in `undecided` for the core, as EncodeMode's shifted path does with
// its far lanes. Binary64 inputs never come here (can_encode): every lane is undecided.
// On AVX-512 in binary32 lanes instead, all exact: y = x 2^-q (per_quantum a power of two, at
// least 1 where the scaled path runs, and x a normal binary32: y stays one), its floor, the
// fraction y - floor(y), and F = floor(fraction 2^32) by VCVTTPS2UDQ (below 2^32), fewer
// instructions than the integer steps: sr-exact 1.03-1.08x on wide-range data, 0.98-1.08x on
// N(0,1) (bench/results/exact-units-float-2026-12-02-zen4-lib-ab.md).
template <class T, class D, class VF, class V = hn::Vec<D>>
HWY_INLINE V ExactUnits(D du, V mag, V random, VF per_quantum, V s_at_emin, hn::Mask<D>& undecided) {
  if constexpr (sizeof(hn::TFromD<D>) != 4) {
    undecided = hn::Eq(mag, mag);
    return hn::Zero(du);
  } else {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    (void)s_at_emin;
    const hn::Rebind<T, D> dt;
    const VF y = hn::Mul(hn::BitCast(dt, mag), per_quantum), whole = hn::Floor(y);
    const V f = V{_mm512_cvttps_epu32(hn::Mul(hn::Sub(y, whole), hn::Set(dt, 0x1p32f)).raw)};
    const V units = hn::BitCast(du, TruncInRange(hn::RebindToSigned<D>(), whole));
#else
    (void)per_quantum;
    constexpr int kMant = input_traits<T>::mant;
    const V field = hn::ShiftRight<kMant>(mag);
    const V s = hn::Sub(s_at_emin, field);  // at least s0 + 1 in the lanes below the normal range
    const V v = hn::IfThenZeroElse(hn::Eq(field, hn::Zero(du)),
                                   hn::OrAnd(hn::Set(du, 1u << kMant), mag, hn::Set(du, (1u << kMant) - 1)));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    // F: v 2^8 (below 2^32) shifted left by 24 - S or right by S - 24; VPSLLVD and VPSRLVD write
    // 0 where the count, read unsigned, exceeds 31 (Intel SDM), so the other shift, and v >> S
    // where S > 31, give 0 with no clamp (other lanes' results are unused).
    const V w = hn::ShiftLeft<8>(v), c24 = hn::Set(du, 24);
    const V f = hn::Or(hn::Shl(w, hn::Sub(c24, s)), hn::Shr(w, hn::Sub(s, c24)));
    const V units = hn::Shr(v, s);
#else
    // F: v shifted left by 32 - S where S < 32, else right by S - 32 (at most 31: v < 2^24). Other
    // lanes' counts are out of range, and their results unused.
    const V c31 = hn::Set(du, 31), c32 = hn::Set(du, 32);
    const auto narrow = SignedLt(s, c32);
    const V f = hn::Shr(hn::Shl(v, hn::IfThenElseZero(narrow, hn::Sub(c32, s))),
                        hn::IfThenZeroElse(narrow, hn::Min(hn::Sub(s, c32), c31)));
    const V units = hn::Shr(v, hn::Min(s, c31));
#endif
#endif
    const V not_r = hn::Not(random);
    undecided = hn::Eq(not_r, f);
    return hn::Sub(units, hn::VecFromMask(du, hn::Lt(not_r, f)));
  }
}

// The scaled path's units of lanes below the normal range: ScaledUnits of the lane in units of the
// quantum (mag and bits times per_quantum), or ExactUnits in sr-exact, which sets `undecided`
// (left as it is in the other modes: the caller's all-false mask).
template <round_mode Mode, class T, class D, class VF, class V = hn::Vec<D>>
HWY_INLINE V UnitsBelowNormal(D du, V mag, V bits, V random, VF per_quantum, V k, VF two_k, V s_at_emin,
                              hn::Mask<D>& undecided) {
  if constexpr (Mode == round_mode::stochastic_exact) {
    return ExactUnits<T>(du, mag, random, per_quantum, s_at_emin, undecided);
  } else {
    const hn::Rebind<T, D> dt;
    return ScaledUnits<Mode>(dt, hn::Mul(hn::BitCast(dt, mag), per_quantum),
                             hn::Mul(hn::BitCast(dt, bits), per_quantum), random, k, two_k);
  }
}

// The input's bits of results of `units` subnormal quanta (exact: an integer below 2^31 times a
// power of two that the input's type holds).
template <class D, class V = hn::Vec<hn::RebindToUnsigned<D>>>
HWY_INLINE V SubnormalBits(D d, V units, hn::Vec<D> quantum) {
  const hn::Vec<D> value = hn::Mul(hn::ConvertTo(d, hn::BitCast(hn::RebindToSigned<D>(), units)), quantum);
  return hn::BitCast(hn::RebindToUnsigned<D>(), value);
}

// The k random bits of each lane from the words at rnd: the keystream's words are as wide as k
// or wider (array_random_width), given words whole 32-bit words; `whole`: they need no mask.
template <class D>
HWY_INLINE hn::Vec<D> RandomBits(D du, const std::uint32_t* rnd, bool whole, hn::TFromD<D> k_mask) {
  hn::Vec<D> words;
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    words = hn::LoadU(du, rnd);
  } else {
    words = hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint32_t, D>(), rnd));
  }
  return whole ? words : hn::And(words, hn::Set(du, k_mask));
}

// The codes of a vector, at the sink's width (a branch that always goes the same way).
template <class D>
HWY_INLINE void StoreCodes(D du, hn::Vec<D> code, void* out, int bytes) {
  if (bytes == 1) {
    const hn::Rebind<std::uint8_t, D> d8;
    hn::StoreU(hn::TruncateTo(d8, code), d8, static_cast<std::uint8_t*>(out));
  } else if (bytes == 2) {
    const hn::Rebind<std::uint16_t, D> d16;
    hn::StoreU(hn::TruncateTo(d16, code), d16, static_cast<std::uint16_t*>(out));
  } else if constexpr (sizeof(hn::TFromD<D>) == 4) {
    hn::StoreU(code, du, static_cast<std::uint32_t*>(out));
  } else {
    const hn::Rebind<std::uint32_t, D> d32;
    hn::StoreU(hn::TruncateTo(d32, code), d32, static_cast<std::uint32_t*>(out));
  }
}

// Inputs are prefetched this many elements ahead (4 KiB): a vector's rounding takes long
// enough that the core's own lookahead keeps too few cache misses in flight to overlap memory
// with arithmetic (without it, encode ran at the serial sum of the two: bf16 rne 1.13 against
// 2.3 G elements/s with it, memcpy 1.9, one thread of the 2-core Xeon). Non-temporal stores
// of the codes were tried too, and were slower.
template <class T>
constexpr std::size_t kPrefetchAhead = 4096 / sizeof(T);

// EncodeMode's common case in a loop of its own: from element i on, vectors whose lanes are all
// finite and in the format's normal range before and after rounding (no zero, subnormal,
// overflowing, infinite or NaN lane) round every lane at the one shift s0, as fast_vector's
// rule for such vectors does. Stops at the first other vector, which it leaves to EncodeMode, or
// at `end`; returns where it stopped, and sets `inexact` if a lane it rounded was inexact. `rnd`:
// the random words of element i. A loop of its own, because in EncodeMode's loop, which holds
// every case, the compiler kept few of this rule's constants in registers (AVX2 has 16) and
// reloaded or rebuilt the others on every vector: alone, AVX2 and SSE4 encode bf16 and e5m2
// 1.6-2.6x as fast. Out of line, like ScaledRun, so that EncodeMode's loop keeps its registers
// for its own rule (inlined into it, the two ran AVX3 e4m3fn and e2m1fn on N(0,1) data at 0.8
// of the speed).
template <round_mode Mode, class T>
HWY_NOINLINE std::size_t NormalRun(const encode_params<T>& p, bool inf_above_max, const T* in, std::size_t i,
                                   std::size_t end, const std::uint32_t* rnd, bool whole_random, code_sink codes,
                                   T* values, bool& inexact) {
  using tr = input_traits<T>;
  using U = typename tr::U;
  constexpr bool kStochastic = is_stochastic(Mode);
  const hn::ScalableTag<U> du;
  const hn::Rebind<T, decltype(du)> dt;
  using V = hn::Vec<decltype(du)>;
  const std::size_t L = hn::Lanes(du);
  const V sign_bit = hn::Set(du, U{1} << (sizeof(U) * 8 - 1)), fsign = hn::Set(du, p.sign);
  const V rebias = hn::Set(du, p.rebias), max_mag = hn::Set(du, p.max_magnitude);
  const V low_mask = hn::Set(du, (U{1} << p.s0) - 1);
  // The lanes' magnitudes must lie in [lowest, highest]: at or above both the smallest normal
  // binade and the lowest field the rule covers, and within the format's exponent range unless
  // every input above it rounds above the largest finite magnitude (inf_above_max), which the
  // rounded magnitude then tells. Compared signed, like EncodeMode (the top bits are clear).
  const V lowest = hn::Set(du, std::max(p.emin_field, p.low_field) << tr::mant);
  const V highest =
      hn::Set(du, inf_above_max ? std::numeric_limits<U>::max() >> 1 : ((p.high_field + 1) << tr::mant) - 1);
  const int s0 = static_cast<int>(p.s0), k = static_cast<int>(p.k);
  const bool k_within_s0 = p.s0 >= p.k;
  V any_inexact = hn::Zero(du);
  for (const std::size_t start = i; i + L <= end; i += L) {
    hwy::Prefetch(in + i + kPrefetchAhead<T>);
    const V bits = hn::BitCast(du, hn::LoadU(dt, in + i));
    const V mag = hn::AndNot(sign_bit, bits);
    const auto negative = SignBitSet(du, bits);
    const V sign = hn::IfThenElseZero(negative, fsign);
    V random = hn::Zero(du);
    if constexpr (kStochastic) random = RandomBits(du, rnd + (i - start), whole_random, p.k_mask);
    const V rounded = RoundShift<Mode>(du, mag, s0, negative, random, k, k_within_s0);
    const V code_mag = hn::Add(rounded, rebias);
    const auto out = hn::Or(hn::Or(SignedLt(mag, lowest), SignedGt(mag, highest)), SignedGt(code_mag, max_mag));
    if (!hn::AllFalse(du, out)) break;
    any_inexact = hn::Or(any_inexact, hn::And(mag, low_mask));
    if (codes.data) StoreCodes(du, hn::Or(code_mag, sign), codes.at(i).data, codes.bytes);
    if (values) hn::StoreU(hn::BitCast(dt, hn::OrAnd(LeftBy(rounded, s0), bits, sign_bit)), dt, values + i);
  }
  if (!hn::AllFalse(du, hn::Ne(any_inexact, hn::Zero(du)))) inexact = true;
  return i;
}

// NaN lanes whose result is the format's NaN code as the kernels cover them: quiet, and no payload
// bit under the format's last fraction bit (`low_mask`: the input bits below s0; fast_vector says
// why), so that mag & (quiet_bit | low_mask) is the quiet bit alone (which lies above low_mask:
// the kernels take formats of at least one fraction bit, can_encode).
template <class T, class D, class V = hn::Vec<D>>
HWY_INLINE hn::Mask<D> CoveredNaN(D du, V mag, V infinity, V low_mask) {
  const V quiet_bit = hn::Set(du, hn::TFromD<D>{1} << (input_traits<T>::mant - 1));
  return hn::And(SignedGt(mag, infinity), hn::Eq(hn::And(mag, hn::Or(quiet_bit, low_mask)), quiet_bit));
}

// The flags EncodeMode has found in the array so far (it raises each once, for the whole array).
struct flags_seen {
  bool inexact = false, underflow = false, overflow = false, infinite = false, nan = false;
  bool operator==(const flags_seen&) const = default;
};

// EncodeMode's scaled path in a loop of its own, for data where vectors with subnormal or
// overflowing results are too frequent for NormalRun (FP8 and smaller formats on wide-range
// data; e4m3fn on N(0,1) data at 16 lanes). From element i on, it takes vectors whose lanes are
// all finite (binary32 subnormal inputs too where `tiny_inputs`, as on fast_vector's scaled
// path), rounding lanes below the normal range by UnitsBelowNormal and the others at the shift
// s0, and giving lanes that overflow, infinite lanes and quiet NaN lanes (as fast_vector covers
// them) the core's result for their sign (make_params); sr-exact's undecided lanes stop it. It
// raises no flags: a vector that would raise one the caller has not yet seen (`seen`) stops it,
// and EncodeMode raises it. (Gated on inexact and underflow instead, it never ran where no result
// underflows, as in sums of e4m3fn values.) Stops at the first other vector, which it leaves to
// EncodeMode, or at `end`; returns where it stopped. `rnd`: the random words of element i.
// kCodeBytes: 1, 2 or 4 for codes of that width and no `values` (encode into a storage width), a
// loop without the values' work and with the one width's store, which keeps more in registers; 0
// for values and no codes (round in place), a loop without the codes' work. (No caller asks for
// both, and EncodeMode does not run it for them.) Without values, encode of FP8/FP6/FP4 codes ran
// 1.01-1.05x as fast in geometric mean per target and data set, cells up to 1.10x (lib_ab, Zen 5);
// with their width known too, AVX2's sr16 1.17-1.33x on wide-range data and 1.01-1.31x on N(0,1),
// rd 1.08-1.14x in median, AVX3 and SSE4 about 1.0x (Zen 4). Without codes, round in place into
// FP8/FP6/FP4 ran 1.13x, 1.17x and 1.14x as fast in median on AVX3, AVX2 and SSE4 (70 cells each,
// Zen 4, bench/results/round-in-place-values-only-2026-12-02-zen4-lib-ab.md).
// kSpecials: infinite and NaN lanes taken too, once the caller has seen them (the results of
// element-wise arithmetic on wide-range codes: NaN in more than half the lanes of e4m3fn sums;
// there 1.1-1.4x as fast), in a loop of its own: in the one loop, their masks and selects cost
// element-wise FP8 fma and sr16 on N(0,1) data, which has none, 11-18%, and encode of e4m3fn
// 17-33% (lib_ab, AVX3 and AVX2, Zen 5).
template <round_mode Mode, int kCodeBytes, bool kSpecials, class T>
HWY_NOINLINE std::size_t ScaledRun(const encode_params<T>& p, bool tiny_inputs, flags_seen seen, const T* in,
                                   std::size_t i, std::size_t end, const std::uint32_t* rnd, bool whole_random,
                                   code_sink codes, T* values, frequent_step& put_lanes) {
  using tr = input_traits<T>;
  using U = typename tr::U;
  constexpr bool kStochastic = is_stochastic(Mode);
  const hn::ScalableTag<U> du;
  const hn::Rebind<T, decltype(du)> dt;
  using V = hn::Vec<decltype(du)>;
  const std::size_t L = hn::Lanes(du);
  const V zero = hn::Zero(du), sign_bit = hn::Set(du, U{1} << (sizeof(U) * 8 - 1)), fsign = hn::Set(du, p.sign);
  const V rebias = hn::Set(du, p.rebias), max_mag = hn::Set(du, p.max_magnitude);
  const V infinity = hn::Set(du, U{tr::field_max} << tr::mant), smallest_normal = hn::Set(du, p.emin_field << tr::mant);
  const V low_mask = hn::Set(du, (U{1} << p.s0) - 1);
  const V overflow_code_pos = hn::Set(du, p.overflow_code[0]), overflow_code_neg = hn::Set(du, p.overflow_code[1]);
  const V overflow_value_pos = hn::Set(du, p.overflow_value[0]);
  const V overflow_value_neg = hn::Set(du, p.overflow_value[1]);
  const V infinite_code_pos = hn::Set(du, p.infinite_code[0]), infinite_code_neg = hn::Set(du, p.infinite_code[1]);
  const V infinite_value_pos = hn::Set(du, p.infinite_value[0]), infinite_value_neg = hn::Set(du, p.infinite_value[1]);
  const V nan_code_pos = hn::Set(du, p.nan_code[0]), nan_code_neg = hn::Set(du, p.nan_code[1]);
  const V nan_value_pos = hn::Set(du, p.nan_value[0]), nan_value_neg = hn::Set(du, p.nan_value[1]);
  const hn::Vec<decltype(dt)> quantum = hn::Set(dt, p.subnormal_quantum);
  const hn::Vec<decltype(dt)> per_quantum = hn::Set(dt, T{1} / p.subnormal_quantum);  // a power of two
  const hn::Vec<decltype(dt)> two_k = hn::Set(dt, static_cast<T>(std::ldexp(1.0, static_cast<int>(p.k))));
  const V k = hn::Set(du, p.k), s_at_emin = hn::Set(du, p.s0 + p.emin_field);
  const int s0 = static_cast<int>(p.s0), k_bits = static_cast<int>(p.k);
  const bool k_within_s0 = p.s0 >= p.k, signed_zero = p.negative_zero != 0;
  for (const std::size_t start = i; i + L <= end; i += L) {
    hwy::Prefetch(in + i + kPrefetchAhead<T>);
    const V bits = hn::BitCast(du, hn::LoadU(dt, in + i));
    const V mag = hn::AndNot(sign_bit, bits);
    const auto negative = SignBitSet(du, bits);
    const V sign = hn::IfThenElseZero(negative, fsign);
    V random = zero;
    if constexpr (kStochastic) random = RandomBits(du, rnd + (i - start), whole_random, p.k_mask);
    const auto below_normal = SignedLt(mag, smallest_normal);
    const V rounded = RoundShift<Mode>(du, mag, s0, negative, random, k_bits, k_within_s0);  // the normal lanes
    auto undecided = hn::Ne(zero, zero);
    const V units = UnitsBelowNormal<Mode, T>(du, mag, bits, random, per_quantum, k, two_k, s_at_emin, undecided);
    const V code_mag = hn::IfThenElse(below_normal, units, hn::Add(rounded, rebias));
    // Finite lanes' code_mag has its top bit clear (as in fast_vector's scaled path), so the
    // signed compare tells the overflowing ones.
    const auto overflow = SignedGt(code_mag, max_mag);
    const auto finite = SignedGt(infinity, mag);
    auto covered = finite;
    if constexpr (Mode == round_mode::stochastic_exact) covered = hn::AndNot(hn::And(below_normal, undecided), covered);
    if (!seen.overflow) covered = hn::AndNot(overflow, covered);
    if (!tiny_inputs) covered = hn::AndNot(InputSubnormal<tr::mant>(du, mag), covered);
    // Infinite and NaN lanes, whose code_mag and overflow mean nothing: their results go in last.
    auto infinite = hn::Ne(zero, zero), nan = infinite;
    if constexpr (kSpecials) {
      if (seen.infinite) infinite = hn::Eq(mag, infinity);
      if (seen.nan) nan = CoveredNaN<T>(du, mag, infinity, low_mask);
      covered = hn::Or(covered, hn::Or(infinite, nan));
    }
    if (!hn::AllTrue(du, covered)) break;
    if (HWY_UNLIKELY(!seen.inexact || !seen.underflow)) {  // inexact lanes, tiny ones, as fast_vector finds them
      const V kept = hn::IfThenElse(below_normal, SubnormalBits(dt, units, quantum), hn::And(mag, low_mask));
      const auto lane_inexact = hn::Ne(kept, hn::IfThenElseZero(below_normal, mag));
      if (!hn::AllFalse(du, seen.inexact ? hn::And(below_normal, lane_inexact) : lane_inexact)) break;
    }
    // Zero results take the format's zero of the input's sign, +0 where it has no -0. Overflowing,
    // infinite and NaN lanes are put in by selects on every vector once they are frequent
    // (wide-range data), and after a branch before: selects on every vector cost AVX3 e4m3fn on
    // N(0,1) data up to a tenth, and a branch on every vector, mispredicted on wide-range data,
    // took AVX2 e5m2 there from 2.5 to 1.7 G elements/s.
    const auto plus_zero = hn::Eq(code_mag, zero);
    const bool any_put = put_lanes(!hn::AllFalse(du, kSpecials ? hn::Or(overflow, hn::Not(finite)) : overflow), i / L);
    auto put = [&](V other, V overflow_pos, V overflow_neg, V infinite_pos, V infinite_neg, V nan_pos,
                   V nan_neg) FPEMU_KERNEL_LAMBDA {
      other = hn::IfThenElse(overflow, hn::IfThenElse(negative, overflow_neg, overflow_pos), other);
      if constexpr (kSpecials) {
        other = hn::IfThenElse(infinite, hn::IfThenElse(negative, infinite_neg, infinite_pos), other);
        other = hn::IfThenElse(nan, hn::IfThenElse(negative, nan_neg, nan_pos), other);
      }
      return other;
    };
    if (kCodeBytes != 0 && codes.data) {
      V code = hn::Or(code_mag, sign);
      if (!signed_zero) code = hn::IfThenZeroElse(plus_zero, code);
      if (any_put) {
        code = put(code, overflow_code_pos, overflow_code_neg, infinite_code_pos, infinite_code_neg, nan_code_pos,
                   nan_code_neg);
      }
      StoreCodes(du, code, codes.at(i).data, kCodeBytes);
    }
    if (kCodeBytes == 0) {
      const V subnormal_bits = SubnormalBits(dt, units, quantum);
      V value = hn::OrAnd(hn::IfThenElse(below_normal, subnormal_bits, LeftBy(rounded, s0)), bits, sign_bit);
      if (!signed_zero) value = hn::IfThenZeroElse(plus_zero, value);
      if (any_put) {
        value = put(value, overflow_value_pos, overflow_value_neg, infinite_value_pos, infinite_value_neg,
                    nan_value_pos, nan_value_neg);
      }
      hn::StoreU(hn::BitCast(dt, value), dt, values + i);
    }
  }
  return i;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// EncodeMode's run for binary32 inputs into IEEE binary16 (formats::fp16) where kHalfRounds: the
// conversion instruction (HalfCodes) rounds every finite lane. Its result is the core's: an IEEE
// 754 conversion, correctly rounded in the direction its immediate names (the MXCSR's is not
// read), with gradual underflow: tiny results come out subnormal, "MXCSR.FTZ is ignored" (Intel
// SDM, VCVTPS2PH). Only MXCSR.DAZ reaches it, which would read a binary32 subnormal input as
// zero, so such lanes stop the run. A lane overflows, the core rounding it past the largest finite
// magnitude, where the instruction gives infinity, or the input is at least 2^16, which the
// directions toward zero round to the largest finite; the overflowing, infinite and NaN lanes
// take the core's result for their sign (make_params), as in ScaledRun. A lane is inexact where
// its code's value, converted back exactly, differs from the input. Like ScaledRun it raises no
// flags: a vector that would raise one not yet seen (`seen`) stops it (an inexact lane below
// 2^-14 as a maybe tiny one), as does a signaling NaN, whose flag only the core's path raises.
// Stops at the first other vector, which it leaves to EncodeMode, or at `end`; returns where it
// stopped.
//
// Compares into AVX-512 mask registers and the operations on those masks bound the loop on a
// Zen 5 (about one a cycle): with every check above made on every vector it ran at 2.7 G
// elements/s in L1 against 6.8 for NormalRun, and on wide-range data at 0.6-0.7 of ScaledRun's
// speed (bench/results/encode-fp16-2026-11-30-zen5.md).
// So a vector whose lanes are all zero or in [2^-14, kHalfBig], none of them tiny, overflowing or
// special, is told by two compares and takes a short way, where only inexactness is looked for
// until seen. Where the core's results for overflowing and infinite inputs are the instruction's
// (kAgrees: HalfAgrees, policy ieee), the other vectors need, once inexact, underflow and overflow
// are seen (kSettled; wide-range data raises them within a few vectors), no more than the check
// for lanes the instruction cannot take, and NaNs their code.
template <round_mode Mode, bool kAgrees, bool kSettled>
HWY_NOINLINE std::size_t HalfRun(const encode_params<float>& p, flags_seen seen, const float* in, std::size_t i,
                                 std::size_t end, code_sink codes, float* values) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::Rebind<float, decltype(du)> df;
  const hn::Rebind<std::uint16_t, decltype(du)> d16;
  using V = hn::Vec<decltype(du)>;
  const std::size_t L = hn::Lanes(du);
  const V sign_bit = hn::Set(du, 0x80000000u), infinity = hn::Set(du, kInfinityBits);
  const V big = hn::Set(du, kHalfBig<Mode>);
  const V half_infinity = hn::Set(du, 0x7c00u), half_sign = hn::Set(du, 0x8000u), below_2_16 = hn::Set(du, 0x477fffffu);
  // The special results as ScaledRun and EncodeMode broadcast them: one struct of them for all
  // three cost AVX2 round in place of wide-range fp16 data an eighth (0.86-0.87x, lib_ab, Zen 5).
  const V overflow_code_pos = hn::Set(du, p.overflow_code[0]), overflow_code_neg = hn::Set(du, p.overflow_code[1]);
  const V overflow_value_pos = hn::Set(du, p.overflow_value[0]);
  const V overflow_value_neg = hn::Set(du, p.overflow_value[1]);
  const V infinite_code_pos = hn::Set(du, p.infinite_code[0]), infinite_code_neg = hn::Set(du, p.infinite_code[1]);
  const V infinite_value_pos = hn::Set(du, p.infinite_value[0]), infinite_value_neg = hn::Set(du, p.infinite_value[1]);
  const V nan_code_pos = hn::Set(du, p.nan_code[0]), nan_code_neg = hn::Set(du, p.nan_code[1]);
  const V nan_value_pos = hn::Set(du, p.nan_value[0]), nan_value_neg = hn::Set(du, p.nan_value[1]);
  const hn::Vec<decltype(df)> two_112 = hn::Set(df, 0x1p112f);
  auto store = [&](V code, V value) FPEMU_KERNEL_LAMBDA {
    if (codes.data) StoreCodes(du, code, codes.at(i).data, codes.bytes);
    if (values) hn::StoreU(hn::BitCast(df, value), df, values + i);
  };
  for (; i + L <= end; i += L) {
    hwy::Prefetch(in + i + kPrefetchAhead<float>);
    const auto x = hn::LoadU(df, in + i);
    const V bits = hn::BitCast(du, x);
    const V mag = hn::AndNot(sign_bit, bits);
    const auto half = HalfCodes<Mode>(df, x);
    const auto low = Between(du, mag, 0, kHalfNormal);
    if (HWY_LIKELY(hn::AllFalse(du, hn::Or(low, SignedGt(mag, big))))) {  // the short way
      if (!kSettled && HWY_UNLIKELY(!seen.inexact) && !hn::AllTrue(du, hn::Eq(HalfValueBits(du, half), bits))) break;
      if (codes.data && codes.bytes == 2) {
        hn::StoreU(half, d16, static_cast<std::uint16_t*>(codes.at(i).data));
      } else if (codes.data) {
        StoreCodes(du, hn::PromoteTo(du, half), codes.at(i).data, codes.bytes);
      }
      if (values) {
        // A normal code's magnitude bits, 13 places up, are a binary32 of its value times 2^-112,
        // which an exact multiplication takes back; zero stays zero. (Converted back by the
        // instruction, round_in_place ran at 4.2 against 7.3 G elements/s this way, Zen 5.)
        const V shifted = hn::ShiftLeft<13>(hn::AndNot(half_sign, hn::PromoteTo(du, half)));
        const V magnitude = hn::BitCast(du, hn::Mul(hn::BitCast(df, shifted), two_112));
        hn::StoreU(hn::BitCast(df, hn::OrAnd(magnitude, bits, sign_bit)), df, values + i);
      }
      continue;
    }
    const auto negative = SignBitSet(du, bits);
    const auto finite = SignedGt(infinity, mag), nan = SignedGt(mag, infinity);
    auto put = [&](auto lanes, V other, V pos, V neg) FPEMU_KERNEL_LAMBDA {
      return hn::IfThenElse(lanes, hn::IfThenElse(negative, neg, pos), other);
    };
    V code = hn::PromoteTo(du, half), value = HalfValueBits(du, half);
    auto stop = hn::Or(InputSubnormal<23>(du, mag), seen.nan ? Between(du, mag, kInfinityBits, kQuietNaNBits) : nan);
    if constexpr (kAgrees && !kSettled) {
      // The overflowing lanes until seen (and with them, in the directed modes, those from 65504
      // to 2^16 that round toward zero), lanes maybe inexact or tiny until seen; nothing to put in.
      if (!seen.overflow) stop = hn::Or(stop, Between(du, mag, kHalfBig<Mode>, kInfinityBits));
      if (!seen.inexact || !seen.underflow) {
        const auto inexact = hn::And(finite, hn::Ne(value, bits));
        stop = hn::Or(stop, seen.inexact ? hn::And(low, inexact) : inexact);
      }
    } else if constexpr (!kAgrees) {
      const auto overflow =
          hn::And(finite, hn::Or(hn::Eq(hn::AndNot(half_sign, code), half_infinity), SignedGt(mag, below_2_16)));
      const auto infinite = hn::Eq(mag, infinity);
      if (!seen.overflow) stop = hn::Or(stop, overflow);
      if (!seen.infinite) stop = hn::Or(stop, infinite);
      if (!seen.inexact || !seen.underflow) {
        const auto inexact = hn::AndNot(overflow, hn::And(finite, hn::Ne(value, bits)));
        stop = hn::Or(stop, seen.inexact ? hn::And(low, inexact) : inexact);
      }
      code = put(infinite, put(overflow, code, overflow_code_pos, overflow_code_neg), infinite_code_pos,
                 infinite_code_neg);
      value = put(infinite, put(overflow, value, overflow_value_pos, overflow_value_neg), infinite_value_pos,
                  infinite_value_neg);
    }
    if (!hn::AllFalse(du, stop)) break;
    if (seen.nan) {
      code = put(nan, code, nan_code_pos, nan_code_neg);
      value = put(nan, value, nan_value_pos, nan_value_neg);
    }
    store(code, value);
  }
  return i;
}

#endif

template <round_mode Mode, class T>
std::uint8_t EncodeMode(const format& f, const rounding& r, const T* in, std::size_t n, const keystream& ks,
                        code_sink codes, T* values, std::uint8_t* flags) {
  using tr = input_traits<T>;
  using U = typename tr::U;
  constexpr bool kStochastic = is_stochastic(Mode);
  const encode_params<T>& p = params_for<T>(f, r);
  const hn::ScalableTag<U> du;
  const hn::Rebind<T, decltype(du)> dt;
  using V = hn::Vec<decltype(du)>;
  const std::size_t L = hn::Lanes(du);

  const V zero = hn::Zero(du), one = hn::Set(du, 1);
  const V sign_bit = hn::Set(du, U{1} << (sizeof(U) * 8 - 1));
  const V s0 = hn::Set(du, p.s0), k = hn::Set(du, p.k), s_at_emin = hn::Set(du, p.s0 + p.emin_field);
  const bool k_within_s0 = p.s0 >= p.k;  // every shift is at least s0
  const int s0_bits = static_cast<int>(p.s0), frac_bits = static_cast<int>(p.frac_bits), k_bits = static_cast<int>(p.k);
  const V emin_field = hn::Set(du, p.emin_field), low = hn::Set(du, p.low_field), high = hn::Set(du, p.high_field);
  const V max_extra = hn::Set(du, p.max_shift_extra), rebias = hn::Set(du, p.rebias);
  const V max_mag = hn::Set(du, p.max_magnitude), fsign = hn::Set(du, p.sign), negzero = hn::Set(du, p.negative_zero);
  const V mant_mask = hn::Set(du, (U{1} << tr::mant) - 1), implicit = hn::Set(du, U{1} << tr::mant);
  const V f_inexact = hn::Set(du, flag::inexact), f_underflow = hn::Set(du, flag::underflow);
  const V value_negzero = p.negative_zero != 0 ? sign_bit : zero;
  V all_flags = zero;
  std::uint8_t scalar_flags = 0;
  using M = hn::Mask<decltype(du)>;
  const V overflow_code_pos = hn::Set(du, p.overflow_code[0]), overflow_code_neg = hn::Set(du, p.overflow_code[1]);
  const V overflow_value_pos = hn::Set(du, p.overflow_value[0]), overflow_value_neg = hn::Set(du, p.overflow_value[1]);
  const V overflow_flags = hn::Set(du, p.overflow_flags);
  const V infinite_code_pos = hn::Set(du, p.infinite_code[0]), infinite_code_neg = hn::Set(du, p.infinite_code[1]);
  const V infinite_value_pos = hn::Set(du, p.infinite_value[0]);
  const V infinite_value_neg = hn::Set(du, p.infinite_value[1]);
  const V infinite_flags = hn::Set(du, p.infinite_flags), infinity = hn::Set(du, U{tr::field_max} << tr::mant);
  const V nan_code_pos = hn::Set(du, p.nan_code[0]), nan_code_neg = hn::Set(du, p.nan_code[1]);
  const V nan_value_pos = hn::Set(du, p.nan_value[0]), nan_value_neg = hn::Set(du, p.nan_value[1]);
  const V nan_flags = hn::Set(du, p.nan_flags), quiet_bit = hn::Set(du, U{1} << (tr::mant - 1));
  // Quiet NaN inputs (the top fraction bit set), whose result is constant like an infinity's.
  auto quiet_nan = [&](V mag) FPEMU_KERNEL_LAMBDA {
    return hn::And(hn::Gt(mag, infinity), hn::Ne(hn::And(mag, quiet_bit), zero));
  };
  // Lanes that overflow: finite inputs above the format's exponent range, and lanes within it
  // whose rounded magnitude exceeds the largest finite one. Their result is the core's
  // (make_params), the same for every such lane of a sign. The compares are signed, one
  // instruction where unsigned ones are not (AVX2, SSE4): magnitudes and fields have the top
  // bit clear, and so does code_mag in the lanes whose field lies in [low, high], the only ones
  // where it counts.
  auto overflowing = [&](V mag, V field, V code_mag) FPEMU_KERNEL_LAMBDA {
    return hn::And(SignedLt(mag, infinity), hn::AndNot(SignedLt(field, low), hn::Or(SignedGt(field, high),
                                                                                  SignedGt(code_mag, max_mag))));
  };
  // `other` with the overflowing lanes' result (code or value) put in.
  auto put_overflow = [&](M overflow, M negative, V pos, V neg, V other) FPEMU_KERNEL_LAMBDA {
    return hn::IfThenElse(overflow, hn::IfThenElse(negative, neg, pos), other);
  };

  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(U);
  HWY_ALIGN T pad_in[kMax];
  HWY_ALIGN std::uint32_t pad_random[kMax] = {}, pad_codes[kMax] = {};
  const code_sink pad_sink(pad_codes);
  HWY_ALIGN T pad_values[kMax];
  HWY_ALIGN std::uint8_t pad_flags[kMax];

  // The k random bits of each lane (zero outside the stochastic mode).
  const bool k_is_width = static_cast<int>(p.k) == array_random_width(r) && ks.given == nullptr;
  auto random_of = [&](const std::uint32_t* rnd) FPEMU_KERNEL_LAMBDA {
    if constexpr (!kStochastic) {
      (void)rnd;
      return zero;
    } else {
      return RandomBits(du, rnd, k_is_width, p.k_mask);
    }
  };
  auto store_codes = [&](V code, void* out, int bytes) FPEMU_KERNEL_LAMBDA { StoreCodes(du, code, out, bytes); };

  // The common case in one pass, when no per-element flags are asked for: every lane zero, or
  // finite within the format's range before and after rounding. Returns false, having written
  // nothing, for a vector with any other lane; one_vector() then does it. Only the union of the
  // flags is wanted here, so inexact and underflow are looked for only until first seen;
  // tininess needs a second rounding (at p bits) for lanes one binade below the normal range.
  const V range_span = hn::Set(du, p.high_field - p.low_field);
  const V low_mask = hn::Set(du, (U{1} << p.s0) - 1);
  const V smallest_normal = hn::Set(du, p.emin_field << tr::mant);  // 2^emin's input bits
  const V below_low = hn::Set(du, (p.low_field << tr::mant) - 1);
  // Binary32 bits of the normal result whose format code (sans sign) is 0: code << s0 plus this.
  const V normal_value_base = hn::Set(du, static_cast<U>((p.emin_field - 1) << tr::mant));
  const bool signed_zero = p.negative_zero != 0;
  flags_seen seen;
  // Whether inf and NaN inputs, rounded like finite ones, land above the largest finite code
  // (not so for a format whose range reaches past the input's): then the rounded magnitude
  // says whether a lane is covered, given that its input lies in the range the rule covers.
  const bool inf_above_max =
      ((U{tr::field_max} - p.emin_field) << p.frac_bits) + (U{1} << p.frac_bits) > p.max_magnitude;
  // With subnormal results possible, a vector whose lanes all lie in the normal range (zero
  // excluded) rounds every lane at the same shift and cannot round any to zero. The others go
  // lane by lane, one of two ways:
  // - scaled: a lane below the normal range is scaled to units of the subnormal quantum (exact:
  //   a power of two, upwards) and rounded to an integer in the vector unit (UnitsBelowNormal),
  //   in every mode, however far below the smallest subnormal it lies (wide-range data has many
  //   such lanes). Zero comes out as 0 units.
  // - shifted: the significand with its leading one (none for zero) shifted right by s0 plus
  //   the lane's distance below the normal range, then put above the binade's code; a normal
  //   lane's carry moves it up a binade and a subnormal lane's makes it the smallest normal,
  //   both by plain addition. The shift is clamped to the lane width; in the nearest and
  //   toward-zero modes the lanes it clamps round to zero anyway (their significand is under
  //   half the shifted-out bits), while the other modes give the core nonzero lanes below it.
  const bool subnormal_results = p.emin_field > p.low_field;
  const int quantum_exponent = emin(f) - f.frac_bits;
  const bool scaled = inf_above_max && quantum_exponent <= 0 &&
                      quantum_exponent >= std::numeric_limits<T>::min_exponent - 1 &&
                      (Mode == round_mode::stochastic_exact
                           ? sizeof(U) == 4
                           : !kStochastic || frac_bits + static_cast<int>(p.k) <= 31) &&
                      rounds_to_nearest();
  // Binary32 subnormal inputs, which DAZ would read as zero: only nearest-even and toward-zero
  // round them and zero alike, so the other modes leave them to the core on the scaled path.
  const bool scaled_takes_tiny_inputs = Mode == round_mode::nearest_even || Mode == round_mode::toward_zero;
  const hn::Vec<decltype(dt)> two_k = hn::Set(dt, static_cast<T>(std::ldexp(1.0, static_cast<int>(p.k))));
  const hn::Vec<decltype(dt)> quantum = hn::Set(dt, p.subnormal_quantum);
  const hn::Vec<decltype(dt)> per_quantum = hn::Set(dt, static_cast<T>(std::ldexp(1.0, -quantum_exponent)));
  const bool clamped_lanes_round_to_zero =
      (Mode == round_mode::nearest_even || Mode == round_mode::nearest_away || Mode == round_mode::toward_zero) &&
      p.low_field > 1;
  // The lane rule, on every vector once frequent (e4m3fn on N(0,1) data: subnormal results in
  // one vector of 16 lanes in 5).
  frequent_step lane_rule;
  auto fast_vector = [&](const T* src, const std::uint32_t* rnd, code_sink code_out, T* value_out) FPEMU_KERNEL_LAMBDA {
    const V bits = hn::BitCast(du, hn::LoadU(dt, src));
    const V mag = hn::AndNot(sign_bit, bits);
    const V field = hn::ShiftRight<tr::mant>(mag);
    const auto negative = SignBitSet(du, bits);
    const V sign = hn::IfThenElseZero(negative, fsign);  // the input's sign at the format's sign bit
    const V random_v = random_of(rnd);
    // Lanes out of the vector rule: outside the input range it covers.
    auto bad_input = [&]() FPEMU_KERNEL_LAMBDA { return hn::Gt(hn::Sub(field, low), range_span); };
    V code_mag, value_bits = zero;
    // Whether every lane is covered, overflowing (marked in `overflow`), infinite (`infinite`)
    // or a quiet NaN (`nan`), given the lanes `out` of the rule. The inexact checks below read
    // a NaN lane's payload bits under the format's last fraction bit (mag & low_mask, on every
    // path: a NaN is no subnormal, so it rounds at s0), so only NaNs without such bits are
    // covered, as the quiet NaN of an arithmetic result is; the others are one_vector's.
    auto overflow = hn::Ne(zero, zero), infinite = overflow, nan = overflow;
    bool any_out = false;
    auto covered = [&](M out) FPEMU_KERNEL_LAMBDA {
      if (HWY_LIKELY(hn::AllFalse(du, out))) return true;
      overflow = overflowing(mag, field, code_mag);
      infinite = hn::Eq(mag, infinity);
      nan = CoveredNaN<T>(du, mag, infinity, low_mask);
      any_out = true;
      return hn::AllFalse(du, hn::AndNot(hn::Or(hn::Or(overflow, infinite), nan), out));
    };
    auto store = [&](V code, V value) FPEMU_KERNEL_LAMBDA {
      if (any_out) {
        seen.overflow = seen.overflow || !hn::AllFalse(du, overflow);
        seen.infinite = seen.infinite || !hn::AllFalse(du, infinite);
        seen.nan = seen.nan || !hn::AllFalse(du, nan);
      }
      if (code_out.data) {
        if (any_out) {
          code = put_overflow(overflow, negative, overflow_code_pos, overflow_code_neg, code);
          code = put_overflow(infinite, negative, infinite_code_pos, infinite_code_neg, code);
          code = put_overflow(nan, negative, nan_code_pos, nan_code_neg, code);
        }
        store_codes(code, code_out.data, code_out.bytes);
      }
      if (value_out) {
        if (any_out) {
          value = put_overflow(overflow, negative, overflow_value_pos, overflow_value_neg, value);
          value = put_overflow(infinite, negative, infinite_value_pos, infinite_value_neg, value);
          value = put_overflow(nan, negative, nan_value_pos, nan_value_neg, value);
        }
        hn::StoreU(hn::BitCast(dt, value), dt, value_out);
      }
    };
    // A result with the input's sign, where that is the format's zero of that sign too.
    auto store_signed = [&]() FPEMU_KERNEL_LAMBDA {
      if (signed_zero) {
        store(hn::Or(code_mag, sign), hn::OrAnd(value_bits, bits, sign_bit));
      } else {  // zero results are +0
        const auto zero_result = hn::Eq(code_mag, zero);
        store(hn::IfThenZeroElse(zero_result, hn::Or(code_mag, sign)),
              hn::IfThenZeroElse(zero_result, hn::OrAnd(value_bits, bits, sign_bit)));
      }
    };
    // Signed as in overflowing(): code_mag's top bit is set only in lanes below the format's
    // normal range on a path that rebiases them, which every such path counts out by bad_input().
    const auto above_max = [&]() FPEMU_KERNEL_LAMBDA { return SignedGt(code_mag, max_mag); };
    const auto below_normal = SignedLt(mag, smallest_normal);
    if (!subnormal_results) {
      const V rounded = RoundShift<Mode>(du, mag, s0_bits, negative, random_v, k_bits, k_within_s0);
      code_mag = hn::Add(rounded, rebias);
      const auto is_zero = hn::Eq(mag, zero);
      if (!covered(hn::AndNot(is_zero, hn::Or(bad_input(), above_max())))) return false;
      if (value_out) value_bits = LeftBy(rounded, s0_bits);
      if (!seen.inexact) seen.inexact = !hn::AllFalse(du, hn::AndNot(is_zero, hn::Ne(hn::And(mag, low_mask), zero)));
      // Without subnormal results nothing in range rounds to zero: zero results are zero inputs.
      store(hn::IfThenElse(is_zero, hn::And(sign, negzero), hn::Or(code_mag, sign)),
            hn::IfThenElse(is_zero, hn::IfThenElseZero(negative, value_negzero),
                           hn::Or(value_bits, hn::IfThenElseZero(negative, sign_bit))));
      return true;
    }
    if (!lane_rule(!hn::AllFalse(du, below_normal), static_cast<std::size_t>(src - in) / L)) {
      const V rounded = RoundShift<Mode>(du, mag, s0_bits, negative, random_v, k_bits, k_within_s0);
      code_mag = hn::Add(rounded, rebias);
      if (!covered(inf_above_max ? above_max() : hn::Or(bad_input(), above_max()))) return false;
      if (value_out) value_bits = LeftBy(rounded, s0_bits);
      if (!seen.inexact) seen.inexact = !hn::AllFalse(du, hn::Ne(hn::And(mag, low_mask), zero));
      store(hn::Or(code_mag, sign), hn::OrAnd(value_bits, bits, sign_bit));
      return true;
    }
    if (scaled) {
      const V rounded = RoundShift<Mode>(du, mag, s0_bits, negative, random_v, k_bits, k_within_s0);  // the normal lanes
      auto undecided = hn::Ne(zero, zero);
      const V units = UnitsBelowNormal<Mode, T>(du, mag, bits, random_v, per_quantum, k, two_k, s_at_emin, undecided);
      code_mag = hn::IfThenElse(below_normal, units, hn::Add(rounded, rebias));
      auto out = scaled_takes_tiny_inputs ? above_max() : hn::Or(above_max(), InputSubnormal<tr::mant>(du, mag));
      if constexpr (Mode == round_mode::stochastic_exact) out = hn::Or(out, hn::And(below_normal, undecided));
      if (!covered(out)) return false;
      const V subnormal_bits = SubnormalBits(dt, units, quantum);
      if (value_out) value_bits = hn::IfThenElse(below_normal, subnormal_bits, LeftBy(rounded, s0_bits));
      if (HWY_UNLIKELY(!seen.inexact || !seen.underflow)) {
        // Compared as bits, so that a subnormal input zeroed by DAZ still counts as inexact.
        const auto lane_inexact = hn::Ne(hn::IfThenElse(below_normal, subnormal_bits, hn::And(mag, low_mask)),
                                         hn::IfThenElseZero(below_normal, mag));
        seen.inexact = seen.inexact || !hn::AllFalse(du, lane_inexact);
        const auto candidate = hn::And(below_normal, lane_inexact);
        if (!seen.underflow && !hn::AllFalse(du, candidate)) {
          // Not tiny: one binade below 2^emin and carrying into it when rounded at p bits.
          const auto not_tiny = hn::And(hn::Eq(hn::Add(field, one), emin_field), hn::Ne(RightBy(rounded, frac_bits), field));
          seen.underflow = !hn::AllFalse(du, hn::AndNot(not_tiny, candidate));
        }
      }
      store_signed();
      return true;
    }
    const V above = hn::Max(field, emin_field);
    const V extra = hn::Min(hn::Sub(above, field), max_extra);
    const auto is_zero = hn::Eq(mag, zero);
    const V v = hn::IfThenZeroElse(is_zero, hn::OrAnd(implicit, bits, mant_mask));
    const V shift = hn::Add(s0, extra);
    const V rounded = RoundShift<Mode>(du, v, shift, negative, random_v, k, k_within_s0);
    code_mag = hn::Add(LeftBy(hn::Sub(above, emin_field), frac_bits), rounded);
    if constexpr (Mode == round_mode::stochastic_exact) {
      // Lanes more than 31 bits below the quantum, whose shift the clamp cut: their magnitude
      // rounds to 0 or the smallest subnormal, up when rem + (R >> (64 - S)) carries at S bits,
      // that is when ~R < v 2^(64-S) as 64-bit numbers. Its high word decides unless ~R's high
      // word equals v >> (S - 32); those lanes (2^-32 of them) go to the core with all 64 bits,
      // as do binary32 subnormal inputs (no implicit bit).
      const V true_extra = hn::Sub(above, field);
      const auto far = hn::Gt(true_extra, max_extra);
      auto out = hn::Or(inf_above_max ? above_max() : hn::AndNot(is_zero, hn::Or(bad_input(), above_max())),
                        InputSubnormal<tr::mant>(du, mag));
      if (!hn::AllFalse(du, far)) {
        const V beyond = hn::Min(hn::Sub(hn::Sub(true_extra, max_extra), one), hn::Set(du, U{31}));  // S - 32
        const V x_hi = v >> beyond;
        const V not_r = hn::Not(random_v);
        code_mag = hn::IfThenElse(far, hn::IfThenElseZero(hn::Lt(not_r, x_hi), one), code_mag);
        out = hn::Or(out, hn::AndNot(is_zero, hn::And(far, hn::Eq(not_r, x_hi))));
      }
      if (!covered(out)) return false;
    } else if (!inf_above_max) {
      if (!covered(hn::AndNot(is_zero, hn::Or(bad_input(), above_max())))) return false;
    } else if (clamped_lanes_round_to_zero) {
      if (!covered(above_max())) return false;
    } else if (!covered(hn::Or(above_max(), hn::Lt(hn::Sub(mag, one), below_low)))) {  // nonzero, below low
      return false;
    }
    if constexpr (sizeof(U) == 4) {
      if (value_out) {
        value_bits = hn::IfThenElse(below_normal, SubnormalBits(dt, code_mag, quantum),
                                    hn::Add(LeftBy(code_mag, s0_bits), normal_value_base));
      }
    }
    if (HWY_UNLIKELY(!seen.inexact)) seen.inexact = !hn::AllFalse(du, Inexact(du, v, shift));
    if (HWY_UNLIKELY(!seen.underflow)) {
      const auto candidate = hn::And(below_normal, Inexact(du, v, shift));
      if (!hn::AllFalse(du, candidate)) {
        const V at_p_bits = RoundShift<Mode>(du, mag, s0_bits, negative, random_v, k_bits, k_within_s0);
        const auto not_tiny = hn::And(hn::Eq(extra, one), hn::Ne(RightBy(at_p_bits, frac_bits), field));
        seen.underflow = !hn::AllFalse(du, hn::AndNot(not_tiny, candidate));
      }
    }
    store_signed();
    return true;
  };

  std::size_t at = 0;  // the index of the element in src[0] (sr-exact's fallback draws its 64 bits)
  // One vector: src/rnd in, outputs at the given pointers (each may be null).
  auto one_vector = [&](const T* src, const std::uint32_t* rnd, code_sink code_out, T* value_out,
                        std::uint8_t* flag_out) FPEMU_KERNEL_LAMBDA {
    const V bits = hn::BitCast(du, hn::LoadU(dt, src));
    const V mag = hn::AndNot(sign_bit, bits);
    const auto negative = hn::Ne(hn::And(bits, sign_bit), zero);
    const V field = hn::ShiftRight<tr::mant>(mag);
    const auto is_zero = hn::Eq(mag, zero);
    const auto in_range = hn::Not(hn::Or(hn::Lt(field, low), hn::Gt(field, high)));
    auto special = hn::AndNot(in_range, hn::Not(is_zero));
    const auto sub = hn::Lt(field, emin_field);
    const V random_v = random_of(rnd);
    V code_mag, value_bits;
    auto inexact = hn::Ne(zero, zero);
    auto underflow = inexact;
    if (hn::AllFalse(du, sub)) {
      const V rounded = RoundShift<Mode>(du, mag, s0_bits, negative, random_v, k_bits, k_within_s0);
      inexact = Inexact(du, mag, s0_bits);
      code_mag = hn::Add(rounded, rebias);
      value_bits = LeftBy(rounded, s0_bits);
    } else {
      const V extra = hn::Min(hn::IfThenElseZero(sub, hn::Sub(emin_field, field)), max_extra);
      const V v = hn::IfThenElse(sub, hn::Or(hn::And(mag, mant_mask), implicit), mag);
      const V shift = hn::Add(s0, extra);
      const V rounded = RoundShift<Mode>(du, v, shift, negative, random_v, k, k_within_s0);
      inexact = Inexact(du, v, shift);
      // Tininess after rounding: a lane one binade below the smallest normal is not tiny when
      // rounding it to p bits carries into 2^emin.
      const V at_p_bits = RoundShift<Mode>(du, mag, s0_bits, negative, random_v, k_bits, k_within_s0);
      const auto carries = hn::Ne(RightBy(at_p_bits, frac_bits), field);
      const auto tiny = hn::AndNot(hn::And(hn::Eq(extra, one), carries), sub);
      underflow = hn::And(tiny, inexact);
      code_mag = hn::IfThenElse(sub, rounded, hn::Add(rounded, rebias));
      if constexpr (sizeof(U) == 4) {
        value_bits = hn::IfThenElse(sub, SubnormalBits(dt, rounded, quantum), LeftBy(rounded, s0_bits));
      } else {
        value_bits = zero;  // values are produced for binary32 inputs only
      }
    }
    special = hn::Or(special, hn::AndNot(is_zero, hn::Gt(code_mag, max_mag)));
    // Zero inputs and results that round to zero take the format's zero of that sign (+0 in
    // formats without -0, whose code 1000... is NaN).
    const auto zero_result = hn::Or(is_zero, hn::Eq(code_mag, zero));
    V code = hn::Or(code_mag, hn::IfThenElseZero(negative, fsign));
    code = hn::IfThenElse(zero_result, hn::IfThenElseZero(negative, negzero), code);
    V value = hn::Or(value_bits, hn::IfThenElseZero(negative, sign_bit));
    value = hn::IfThenElse(zero_result, hn::IfThenElseZero(negative, value_negzero), value);
    V flag_v = hn::IfThenZeroElse(
        is_zero, hn::Or(hn::IfThenElseZero(inexact, f_inexact), hn::IfThenElseZero(underflow, f_underflow)));
    if (HWY_UNLIKELY(!hn::AllFalse(du, special))) {
      const auto overflow = overflowing(mag, field, code_mag);
      special = hn::AndNot(overflow, special);
      code = put_overflow(overflow, negative, overflow_code_pos, overflow_code_neg, code);
      value = put_overflow(overflow, negative, overflow_value_pos, overflow_value_neg, value);
      flag_v = hn::IfThenElse(overflow, overflow_flags, flag_v);
      const auto infinite = hn::Eq(mag, infinity);
      special = hn::AndNot(infinite, special);
      code = put_overflow(infinite, negative, infinite_code_pos, infinite_code_neg, code);
      value = put_overflow(infinite, negative, infinite_value_pos, infinite_value_neg, value);
      flag_v = hn::IfThenElse(infinite, infinite_flags, flag_v);
      const auto nan = quiet_nan(mag);
      special = hn::AndNot(nan, special);
      code = put_overflow(nan, negative, nan_code_pos, nan_code_neg, code);
      value = put_overflow(nan, negative, nan_value_pos, nan_value_neg, value);
      flag_v = hn::IfThenElse(nan, nan_flags, flag_v);
    }
    all_flags = hn::Or(all_flags, hn::IfThenZeroElse(special, flag_v));

    if (HWY_LIKELY(hn::AllFalse(du, special))) {
      if (code_out.data) store_codes(code, code_out.data, code_out.bytes);
      if (value_out) hn::StoreU(hn::BitCast(dt, value), dt, value_out);
      if (flag_out) {
        HWY_ALIGN U f_lanes[kMax] = {};
        hn::Store(flag_v, du, f_lanes);
        for (std::size_t j = 0; j < L; ++j) flag_out[j] = static_cast<std::uint8_t>(f_lanes[j]);
      }
      return;
    }
    // Lanes the vector rule does not cover go to the core, with the same random bits.
    HWY_ALIGN U c_lanes[kMax], v_lanes[kMax], f_lanes[kMax], s_lanes[kMax];
    hn::Store(code, du, c_lanes);
    hn::Store(value, du, v_lanes);
    hn::Store(flag_v, du, f_lanes);
    hn::Store(hn::VecFromMask(du, special), du, s_lanes);
    for (std::size_t j = 0; j < L; ++j) {
      if (s_lanes[j] != 0) {
        const std::uint64_t bits_j = Mode == round_mode::stochastic_exact
                                         ? keystream_bits(ks.seed, ks.stream, ks.first_index + at + j, 64)
                                         : kStochastic ? rnd[j] : 0;
        rounded res;
        if constexpr (sizeof(U) == 4) {
          res = round_float(f, src[j], r, bits_j);
          v_lanes[j] = std::bit_cast<U>(code_to_float(f, res.code));
        } else {
          res = from(f, src[j], r, bits_j);
        }
        c_lanes[j] = res.code;
        f_lanes[j] = res.flags;
        scalar_flags |= res.flags;
      }
      if (code_out.data) put_code(code_out, j, static_cast<std::uint32_t>(c_lanes[j]));
      if (value_out) value_out[j] = std::bit_cast<T>(v_lanes[j]);
      if (flag_out) flag_out[j] = static_cast<std::uint8_t>(f_lanes[j]);
    }
  };

  HWY_ALIGN std::uint32_t random[keystream_chunk];
  const int width = array_random_width(r);
  // NormalRun takes vectors while they are of its kind, and the one it stops at goes through
  // fast_vector. Where more than about one vector in kScaledAfter stops it (wide-range data;
  // e4m3fn on N(0,1) data, where one vector in 10 holds a subnormal result at 8 lanes, one in 5
  // at 16) a stop costs more than the run saves, and ScaledRun takes its place, where the scaled
  // path serves the format. NormalRun where it does not, and ScaledRun, are left at one stop in
  // 8, for fast_vector alone, and so is HalfRun, which takes the place of both where it serves
  // (binary32 into fp16, kHalfRounds). On AVX2 and AVX-512, where ScaledRun costs little more than
  // NormalRun, kScaledAfter is 32: AVX2 e4m3fn on N(0,1) data went from 1.1 to 1.5 G elements/s
  // (rne; rz and rto 1.1x), while on SSE4 the directed and stochastic modes lost up to a fifth
  // at 16 and 32 (Emerald Rapids Xeon; bench/results/encode-kernels-2026-11-29-xeon-lib-ab.md).
  // The caller's pieces are a few hundred vectors (kPiece in array.cpp), so the verdict must come
  // within a few dozen. One loop, the run its state: a loop per run would hold a copy of
  // fast_vector and one_vector each (with three copies, the sanitizer build of ./dev test
  // compiled this file in 15 minutes, with one in 3).
  constexpr std::size_t kScaledAfter = HWY_TARGET <= HWY_AVX2 ? 32 : 8;
  enum class run { normal, scaled, half, none };
  const bool scaled_runs = scaled && !(codes.data && values);  // (ScaledRun writes one or the other)
  const bool half = kHalfRounds<Mode> && std::is_same_v<T, float> && f == formats::fp16;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  bool half_agrees = false;
  if constexpr (kHalfRounds<Mode> && std::is_same_v<T, float>) half_agrees = half && HalfAgrees<Mode>(p);
#endif
  run state = flags != nullptr ? run::none : half ? run::half : run::normal;
  std::size_t run_stops = 0, run_start = 0;
  frequent_step put_lanes;  // ScaledRun's
  std::size_t i = 0, chunk_begin = 0, chunk_end = 0;
  auto random_at = [&](std::size_t j) FPEMU_KERNEL_LAMBDA -> const std::uint32_t* {
    return !kStochastic ? nullptr : ks.given ? ks.given + j : random + (j - chunk_begin);
  };
  while (i + L <= n) {
    if (i == chunk_end) {
      chunk_begin = i;
      chunk_end = std::min(n, i + keystream_chunk) / L * L;
      if (kStochastic && !ks.given) {
        FillKeystream(ks.seed, ks.stream, ks.first_index + i, chunk_end - i, width, random);
      }
    }
    for (; i < chunk_end; i += L) {
      if (state != run::none) {
        const bool specials = seen.infinite || seen.nan;
        const int only_codes = values ? 0 : codes.bytes;
        auto scaled_run = only_codes == 1   ? (specials ? &ScaledRun<Mode, 1, true, T> : &ScaledRun<Mode, 1, false, T>)
                          : only_codes == 2 ? (specials ? &ScaledRun<Mode, 2, true, T> : &ScaledRun<Mode, 2, false, T>)
                          : only_codes == 4 ? (specials ? &ScaledRun<Mode, 4, true, T> : &ScaledRun<Mode, 4, false, T>)
                                            : (specials ? &ScaledRun<Mode, 0, true, T> : &ScaledRun<Mode, 0, false, T>);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
        if constexpr (kHalfRounds<Mode> && std::is_same_v<T, float>) {
          if (state == run::half) {
            const bool settled = half_agrees && seen.inexact && seen.underflow && seen.overflow;
            i = settled       ? HalfRun<Mode, true, true>(p, seen, in, i, chunk_end, codes, values)
                : half_agrees ? HalfRun<Mode, true, false>(p, seen, in, i, chunk_end, codes, values)
                              : HalfRun<Mode, false, false>(p, seen, in, i, chunk_end, codes, values);
          }
        }
#endif
        if (state == run::normal) {
          i = NormalRun<Mode>(p, inf_above_max, in, i, chunk_end, random_at(i), k_is_width, codes, values,
                              seen.inexact);
        } else if (state == run::scaled) {
          i = scaled_run(p, scaled_takes_tiny_inputs, seen, in, i, chunk_end, random_at(i), k_is_width, codes, values,
                         put_lanes);
        }
        if (i == chunk_end) break;
      }
      const std::uint32_t* rnd = random_at(i);
      const code_sink c = codes.at(i);
      T* v = values ? values + i : nullptr;
      at = i;
      hwy::Prefetch(in + i + kPrefetchAhead<T>);
      const flags_seen before = seen;
      if (flags != nullptr || !fast_vector(in + i, rnd, c, v))
        one_vector(in + i, rnd, c, v, flags ? flags + i : nullptr);
      // ScaledRun and HalfRun raise no flags: a vector that would raise one not yet seen stops
      // them, for fast_vector, once for each flag, which is no sign that the run does not suit
      // the data.
      if (state != run::none && !(state != run::normal && seen != before) &&
          ++run_stops * (state == run::normal && scaled_runs ? kScaledAfter : 8) > (i - run_start) / L + 16) {
        state = state == run::normal && scaled_runs ? run::scaled : run::none;
        run_stops = 0;
        run_start = i;
      }
    }
  }
  if (i < n) {  // the tail through zero-padded lanes (a zero is neither special nor flagged)
    const std::size_t rest = n - i;
    std::fill(pad_in, pad_in + kMax, T{0});
    std::copy(in + i, in + n, pad_in);
    if (kStochastic && ks.given) {
      std::copy(ks.given + i, ks.given + n, pad_random);
    } else if (kStochastic) {
      FillKeystream(ks.seed, ks.stream, ks.first_index + i, rest, width, pad_random);
    }
    at = i;
    one_vector(pad_in, pad_random, pad_sink, pad_values, pad_flags);
    for (std::size_t j = 0; codes.data && j < rest; ++j) put_code(codes, i + j, pad_codes[j]);
    if (values) std::copy(pad_values, pad_values + rest, values + i);
    if (flags) std::copy(pad_flags, pad_flags + rest, flags + i);
  }
  HWY_ALIGN U lanes[kMax] = {};
  hn::Store(all_flags, du, lanes);
  std::uint8_t result = scalar_flags;
  for (std::size_t j = 0; j < L; ++j) result |= static_cast<std::uint8_t>(lanes[j]);
  if (seen.inexact) result |= flag::inexact;
  if (seen.underflow) result |= flag::underflow;
  if (seen.overflow) result |= p.overflow_flags;
  if (seen.infinite) result |= p.infinite_flags;
  if (seen.nan) result |= p.nan_flags;
  return result;
}

template <class T>
std::uint8_t Encode(const format& f, const rounding& r, const T* in, std::size_t n, const keystream& random,
                    code_sink codes, T* values, std::uint8_t* flags) {
  switch (r.mode) {
    case round_mode::nearest_even:
      return EncodeMode<round_mode::nearest_even>(f, r, in, n, random, codes, values, flags);
    case round_mode::nearest_away:
      return EncodeMode<round_mode::nearest_away>(f, r, in, n, random, codes, values, flags);
    case round_mode::toward_zero:
      return EncodeMode<round_mode::toward_zero>(f, r, in, n, random, codes, values, flags);
    case round_mode::toward_positive:
      return EncodeMode<round_mode::toward_positive>(f, r, in, n, random, codes, values, flags);
    case round_mode::toward_negative:
      return EncodeMode<round_mode::toward_negative>(f, r, in, n, random, codes, values, flags);
    case round_mode::to_odd: return EncodeMode<round_mode::to_odd>(f, r, in, n, random, codes, values, flags);
    case round_mode::stochastic:
      return EncodeMode<round_mode::stochastic>(f, r, in, n, random, codes, values, flags);
    case round_mode::stochastic_exact:
      return EncodeMode<round_mode::stochastic_exact>(f, r, in, n, random, codes, values, flags);
  }
  return 0;
}

std::uint8_t EncodeFloats(const format& f, const rounding& r, const float* in, std::size_t n, const keystream& random,
                          code_sink codes, float* values, std::uint8_t* flags) {
  return Encode<float>(f, r, in, n, random, codes, values, flags);
}

std::uint8_t EncodeDoubles(const format& f, const rounding& r, const double* in, std::size_t n,
                           const keystream& random, code_sink codes, std::uint8_t* flags) {
  return Encode<double>(f, r, in, n, random, codes, nullptr, flags);
}

// The binary32 values of `bits` as binary64 at dst (non-temporal stores where `stream`, which
// needs dst aligned to a vector).
template <class DU>
HWY_INLINE void StoreAsDoubles(DU du, hn::Vec<DU> bits, double* dst, bool stream) {
  const hn::Rebind<float, DU> df;
#if HWY_TARGET == HWY_SCALAR || !HWY_HAVE_FLOAT64
  (void)stream;
  HWY_ALIGN float lanes[hn::MaxLanes(df)];
  hn::Store(hn::BitCast(df, bits), df, lanes);
  for (std::size_t j = 0; j < hn::Lanes(du); ++j) dst[j] = lanes[j];
#else
  const hn::Half<decltype(df)> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const auto values = hn::BitCast(df, bits);
  const auto low = hn::PromoteTo(dd, hn::LowerHalf(dh, values)), high = hn::PromoteTo(dd, hn::UpperHalf(dh, values));
  if (stream) {
    hn::Stream(low, dd, dst);
    hn::Stream(high, dd, dst + hn::Lanes(dd));
  } else {
    hn::StoreU(low, dd, dst);
    hn::StoreU(high, dd, dst + hn::Lanes(dd));
  }
#endif
}

// DecodeFloats (T float), DecodeDoubles (T double) and DecodeBinary32 (T uint32_t: binary32
// codes, written as such) on codes of type Code; kReport: returns whether a value is an infinity or a NaN (else false),
// which only callers that ask pay for.
template <class Code, class T, bool kReport>
bool DecodeRun(const format& f, const Code* codes, std::size_t n, T* out, bool stream) {
  constexpr int kBytes = sizeof(Code);
  const hn::ScalableTag<std::uint32_t> du;
  const hn::ScalableTag<T> dt;
  using VU = hn::Vec<decltype(du)>;
  const decode_params& p = decode_params_for(f);
  const Decoder<decltype(du)> decode(du, p);
  const std::size_t L = hn::Lanes(du);
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(std::uint32_t);
  HWY_ALIGN std::uint32_t pad[kMax];
  HWY_ALIGN T pad_out[kMax];
  // Codes of at most 8 bits by table (decode_params::by_table) where the decoder has no short way
  // for them, lane by lane from the codes in memory straight into the output, in a loop of its
  // own: Highway's gather there stores the index vector, loads each lane and reads the four lanes
  // back as one vector, a store-forwarding stall (SSE4 decode of FP8/FP6/FP4 codes 1.13-1.23x as
  // fast without it, lib_ab on a Zen 5, though these stores are not non-temporal); in the loop of
  // the other formats, its branch cost SSE4 bf16 decode an eighth.
  const bool by_table = p.by_table && !kHalfConversion;
  const VU all_bits = hn::Set(du, p.all_bits), exponent = hn::Set(du, 0x7f800000u);
  // The largest exponent field of the values: all ones where one was an infinity or a NaN (a
  // maximum: a mask of such lanes took twice the operations, and Python's decode into float32,
  // which is convert_array's, ran at 0.83 of decode_array's rate with it, 0.93-0.99 with this;
  // bench/bench_python.py, Zen 5).
  VU exponents = hn::Zero(du);
  std::uint32_t table_non_finite = 0;
  frequent_step specials;  // the decoder's (see Decoder)

  auto one_vector = [&](VU code, T* dst, bool aligned_stream, std::size_t vector) FPEMU_KERNEL_LAMBDA {
    const VU bits = decode(code, specials, vector);
    if constexpr (kReport) exponents = hn::Max(exponents, hn::And(bits, exponent));
    if constexpr (std::is_same_v<T, double>) {
      StoreAsDoubles(du, bits, dst, aligned_stream);
    } else if (aligned_stream) {
      hn::Stream(hn::BitCast(dt, bits), dt, dst);
    } else {
      hn::StoreU(hn::BitCast(dt, bits), dt, dst);
    }
  };
  // Fewer than L codes at i, through zero-padded lanes.
  auto part = [&](std::size_t i, std::size_t count) FPEMU_KERNEL_LAMBDA {
    std::fill(pad, pad + kMax, 0u);
    std::copy(codes + i, codes + i + count, pad);
    one_vector(hn::Load(du, pad), pad_out, false, i / L);
    std::copy(pad_out, pad_out + count, out + i);
  };
  std::size_t i = 0;
  if (stream) {  // non-temporal stores from the first vector-aligned output on
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(out) % (L * sizeof(T)) / sizeof(T);
    if (misaligned != 0 && reinterpret_cast<std::uintptr_t>(out) % sizeof(T) == 0) {
      i = std::min(n, L - misaligned);
      part(0, i);
    }
    stream = reinterpret_cast<std::uintptr_t>(out + i) % (L * sizeof(T)) == 0;
  }
  if (by_table) {
    for (; i + L <= n; i += L) {
      hwy::Prefetch(codes + i + kPrefetchAhead<Code>);
      const VU code = LoadCodes<kBytes>(du, codes + i);
      if (hn::AllFalse(du, hn::Gt(code, all_bits))) {
        for (std::size_t j = 0; j < L; ++j) {
          const std::uint32_t bits = p.table[codes[i + j]];
          if constexpr (kReport) table_non_finite |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
          if constexpr (std::is_same_v<T, double>) {
            out[i + j] = std::bit_cast<float>(bits);
          } else {
            out[i + j] = std::bit_cast<T>(bits);
          }
        }
      } else {
        one_vector(code, out + i, stream, i / L);
      }
    }
  }
  for (; i + L <= n; i += L) {
    hwy::Prefetch(codes + i + kPrefetchAhead<Code>);
    one_vector(LoadCodes<kBytes>(du, codes + i), out + i, stream, i / L);
  }
  if (stream) hwy::FlushStream();
  if (i < n) part(i, n - i);
  return kReport && (table_non_finite != 0 || !hn::AllFalse(du, hn::Eq(exponents, exponent)));
}

template <class T, bool kReport>
bool DecodeTo(const format& f, const code_source& codes, std::size_t n, T* out, bool stream) {
  if (codes.bytes == 1)
    return DecodeRun<std::uint8_t, T, kReport>(f, static_cast<const std::uint8_t*>(codes.data), n, out, stream);
  if (codes.bytes == 2)
    return DecodeRun<std::uint16_t, T, kReport>(f, static_cast<const std::uint16_t*>(codes.data), n, out, stream);
  return DecodeRun<std::uint32_t, T, kReport>(f, static_cast<const std::uint32_t*>(codes.data), n, out, stream);
}

void DecodeFloats(const format& f, code_source codes, std::size_t n, float* out, bool stream, bool* non_finite) {
  if (non_finite) {
    *non_finite = DecodeTo<float, true>(f, codes, n, out, stream);
  } else {
    DecodeTo<float, false>(f, codes, n, out, stream);
  }
}

bool DecodeBinary32(const format& f, code_source codes, std::size_t n, std::uint32_t* out, bool stream) {
  return DecodeTo<std::uint32_t, true>(f, codes, n, out, stream);
}

void DecodeDoubles(const format& f, code_source codes, std::size_t n, double* out, bool stream) {
  DecodeTo<double, false>(f, codes, n, out, stream);
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::simd {

[[gnu::noinline]] const decode_params& decode_params_for(const format& f) {
  thread_local struct {
    format f;
    decode_params p;
    bool made = false;
  } last;
  if (!last.made || !(last.f == f)) {
    last.p = make_decode_params(f);
    last.f = f;
    last.made = true;
  }
  return last.p;
}

HWY_EXPORT(EncodeFloats);
HWY_EXPORT(EncodeDoubles);
HWY_EXPORT(DecodeFloats);
HWY_EXPORT(DecodeBinary32);
HWY_EXPORT(DecodeDoubles);
HWY_EXPORT(FillKeystream);
HWY_EXPORT(TargetName);

// On x86 the SSE unit's control register counts too, which _mm_setcsr sets apart from fesetround
// (glibc's fegetround reads the x87 one).
bool rounds_to_nearest() {
#if defined(__x86_64__) || defined(__i386__)
  if ((__builtin_ia32_stmxcsr() & 0x6000u) != 0) return false;  // MXCSR.RC
#endif
  return std::fegetround() == FE_TONEAREST;
}

bool keeps_subnormals() {
#if defined(__x86_64__) || defined(__i386__)
  return (__builtin_ia32_stmxcsr() & 0x8040u) == 0;  // MXCSR.FTZ, MXCSR.DAZ
#else
  return true;
#endif
}

bool can_encode(const format& f, const rounding& r, bool from_double) {
  const int mant = from_double ? 52 : 23;
  return f.is_signed && f.has_zero && f.subnormals && f.frac_bits >= 1 && f.frac_bits < mant &&
         (r.mode != round_mode::stochastic_exact || !from_double);
}

// Normal values normal in binary32 too (the decoder moves their fields into place), subnormal
// values at least binary32's smallest subnormal.
bool values_are_floats(const format& f) {
  return f.is_signed && f.has_zero && f.subnormals && f.frac_bits >= 1 && f.frac_bits < 23 && emax(f) <= 127 &&
         emin(f) >= -126 && emin(f) - f.frac_bits >= -149;
}

std::uint8_t encode_floats(const format& f, const rounding& r, const float* in, std::size_t n, const keystream& random,
                           code_sink codes, float* values, std::uint8_t* flags) {
  return HWY_DYNAMIC_DISPATCH(EncodeFloats)(f, r, in, n, random, codes, values, flags);
}

std::uint8_t encode_doubles(const format& f, const rounding& r, const double* in, std::size_t n,
                            const keystream& random, code_sink codes, std::uint8_t* flags) {
  return HWY_DYNAMIC_DISPATCH(EncodeDoubles)(f, r, in, n, random, codes, flags);
}

void decode_floats(const format& f, code_source codes, std::size_t n, float* out, bool stream, bool* non_finite) {
  HWY_DYNAMIC_DISPATCH(DecodeFloats)(f, codes, n, out, stream, non_finite);
}

bool decode_binary32(const format& f, code_source codes, std::size_t n, std::uint32_t* out, bool stream) {
  return HWY_DYNAMIC_DISPATCH(DecodeBinary32)(f, codes, n, out, stream);
}

void decode_doubles(const format& f, code_source codes, std::size_t n, double* out, bool stream) {
  HWY_DYNAMIC_DISPATCH(DecodeDoubles)(f, codes, n, out, stream);
}

void fill_keystream(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t n, int width,
                    std::uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(FillKeystream)(seed, stream, first, n, width, out);
}

const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace fpemu::simd
#endif
