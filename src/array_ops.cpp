// Element-wise arithmetic in vector lanes (see array_simd.hpp: op_lanes, op_floats,
// op_doubles). Compiled once per SIMD target, like array_simd.cpp, and with -ffp-contract=off:
// the error-free transformations below are exact only as written, one rounding per operation.
//
// Why one rounding of the lane result is the core's rounding of the exact result.
//
// The operands are decoded exactly into binary32 (values_are_floats), P-bit values of the
// format (P = frac_bits + 1). Each lane computes z, the exact result x rounded to odd at the
// lane type's precision t (24 or 53 bits), from a faithful rounding z0 of x (one of the two
// numbers of t bits that bracket it) and whether z0 is exact: the odd one of the pair is z0
// where that is odd or exact, else z0's neighbour towards x. Two ways:
//  - AVX-512 rounds each instruction in the direction it names: z0 is x rounded toward zero,
//    whose neighbour towards x is the next one away from zero, so z is z0 with its last bit set
//    where x is inexact;
//  - elsewhere z0 is the hardware's nearest-even result, and an error term with the sign of
//    x - z0 says which neighbour.
// Whether x is exact, and that sign, come from terms that are exact wherever z0 is finite and
//  - add, sub: TwoSum (Knuth 1969): e = x - z0 for the nearest-even z0, exact with gradual
//    underflow, so anywhere; with directed roundings, x is exact where rounding it down and up
//    agree; neither where every sum of two values of the format is exact in the lane type: its
//    values are multiples of 2^lo below 2^hi in magnitude (lo = emin - frac_bits, hi = emax +
//    1), so a sum is an integer of hi + 1 - lo bits times 2^lo, exact where that is at most t
//    (e4m3fn 19 bits, e2m1fn 5, fp16 41: in binary32 lanes for every FP8, FP6 and FP4 format
//    but e5m2, in binary64 lanes for fp16);
//  - mul: the product of two values of at most P bits each has at most 2P <= t bits, so it is
//    exact where it is a normal number (or an operand is zero), and z = z0 = x;
//  - fma: the product as in mul, then the sum as in add;
//  - div: r = a - z0 b by one fused multiply-add, exact where r is representable: as z0 is
//    faithful, r is a multiple of 2^(e_a - t - frac_bits) (e_a the exponent of a) of at most t
//    bits, so where that is at least the type's smallest subnormal (binary32:
//    |a| >= 2^(frac_bits - 125)), and z0 is normal; x - z0 has the sign of r / b;
//  - sqrt: r = a - z0^2 by a fused multiply-add, a multiple of ulp(z0)^2 of at most t bits,
//    exact where ulp(z0)^2 is at least the smallest subnormal (binary32: |a| >= 2^-102), with
//    the sign of x - z0;
//  - div and sqrt without a fused multiply-add (SSE4 and older): binary32 lanes form r in
//    binary64, both steps exact: z0 b has at most 24 + P bits, z0^2 at most 48, and r, on a grid
//    a lies on too (2^(e_z - 23 + e_b - frac_bits) for div, e_z and e_b the exponents of z0 and
//    b, with z0 normal; ulp(z0)^2 for sqrt), is below ulp(z0) |b| (ulp(z0) 2^(e_z + 2)) in
//    magnitude, so of at most P (25) bits. Binary64 lanes need only r's sign, or that it is 0,
//    which exact pieces give (Veltkamp's split, Dekker 1971: z0 = zh + zl exactly, zh z0 rounded
//    to 26 bits, |zl| of at most 26 bits; no step overflows or underflows, as a and b are
//    binary32 values, so z0 lies in 2^-278..2^278 and each nonzero product below in
//    2^-480..2^406). Div: zh b and zl b have at most 26 + 24 bits, exact; a - zh b is exact
//    (Sterbenz: zh b is a (1 + d), |d| < 2^-25), so r has the sign of comparing it with zl b.
//    Sqrt: zh^2, zh zl and zl^2 are exact; h = a - zh^2 too (Sterbenz, as for div); with
//    2^E <= z0 < 2^(E+1), h lies on the grid of 2^(2E-50) (a is a binary32 value near 2^(2E)) and
//    2 zh zl on that of 2^(2E-76), while h - 2 zh zl = zl^2 + r is below 2^(2E-52) + 2^(2E-50) in
//    magnitude (|r| < ulp(z0) (sqrt(a) + z0)): at most 27 bits, exact; r has the sign of
//    comparing it with zl^2.
// Binary64 lanes meet these on every finite value a binary32-valued format has. Binary32 lanes
// meet them on the whole range of formats as narrow as fp16 and FP8 (lanes_in_range below);
// for wider ranges (bf16) the kernel checks each lane, and one that falls outside (a product
// below 2^-126, a sum or quotient at the largest finite number or beyond, a tiny dividend)
// goes to the core.
// Then one rounding of z into the format, by the array kernels, is the rounding of x, in every
// mode the core has, flags included, when t >= P + 2 (Boldo and Melquiond, "Emulation of FMA
// and correctly rounded sums: proved algorithms using rounding to odd", 2008): z differs from x
// only below its t-th bit, on the side of its sticky last bit, so z and x agree on every bit
// and sticky fact a rounding at P bits reads: the kept bits, the half bit, whether anything
// lies beyond it, and whether the result is exact (inexact, underflow after rounding and
// overflow follow). Subnormal results round at fewer than P bits, coarser, and agree the same
// way. Stochastic rounding with k random bits reads the k bits below the quantum, which z keeps
// when P + k <= t - 1, or P + k <= t where z is x in every lane the kernel rounds (mul, whose
// inexact products go to the core; add and sub where every sum is exact): sr16 into bf16 in
// binary32 lanes for mul (bf16's one pass, OnePassRun, takes x rounded toward zero and whether it
// is inexact instead, which serve where P + k <= t: sr16 into bf16 in binary32 lanes for every
// op). sr-exact reads 64 bits below the quantum, so only exact lanes (z = x) are rounded here;
// inexact ones go to the core.
//
// A lane with an infinite operand is exact (an infinity, or a zero as in x / inf) unless the
// hardware's result is NaN; its error term or remainder is NaN, which the lanes read as exact
// (ordered comparisons). A NaN result is the core's: a quiet NaN with the sign of the first NaN
// operand, or + for an invalid operation, which the encode kernels round to the format's NaN of
// that sign (or, in a format without NaNs, 0 with invalid), as the core does; the arithmetic
// raises invalid for an invalid operation (inf - inf, 0 x inf, 0 / 0, inf / inf, the root of a
// negative number; and 0 x inf + NaN in fma) or a signaling NaN operand. x / 0 with x finite and
// nonzero is the hardware's infinity and raises divide-by-zero. Those flags are listed with the
// lane for the caller to or into the encoding's. Lanes the vector rule leaves to the core, marked
// special and set to 0 (which raises no flag): the range checks above (which take infinite
// operands and results too, but in sqrt, and NaNs), and (sr-exact) an inexact z. x / 0 where
// rounding an infinity raises a flag is set to 0 too and listed as kInfiniteQuotient: its result
// is the core's rounding of the infinity with divide-by-zero, which clears that rounding's
// invalid (so the union of flags could not carry it), the same for every lane of a sign. An exact zero
// result of add, sub or fma takes the core's sign: that of the operands when they agree, else
// +0, or -0 when rounding toward -infinity (the hardware, rounding to nearest or toward zero,
// gives the first two; the last is put in here).
#include "array_simd.hpp"

#include <algorithm>
#include <array>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "array_params.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/array_ops.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "decode-inl.h"
#include "half-inl.h"
#include "round-inl.h"

#ifndef FPEMU_ARRAY_OPS_SHARED
#define FPEMU_ARRAY_OPS_SHARED
namespace fpemu::simd {
// What a kernel call checks and puts in beyond the arithmetic (the top of this file).
struct lane_checks {
  bool negative_zero_sum = false;  // rounding toward -infinity: exact zero sums are -0
  bool exact_only = false;         // sr-exact: inexact lanes go to the core
  bool exact_sums = false;         // add, sub: every sum is exact in the lanes (the top of this file)
  bool range = false;              // binary32 lanes of a format whose range needs the checks
  double min_operand = 0;          // div: the smallest dividend, sqrt: the smallest operand, checked
  // x / 0 is listed as kInfiniteQuotient where rounding an infinity raises a flag (no infinity
  // in the format, or policy saturate): the core then clears its invalid, which the union could not.
  bool list_infinite_quotients = false;
};
}  // namespace fpemu::simd
#endif

HWY_BEFORE_NAMESPACE();
namespace fpemu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Appends the lanes of `entries` under m, in order, to `out` as 32-bit words (the entries fit
// them); returns how many. On AVX2, SSE4 and SSSE3 through a static index table: Highway 1.0.3's
// Compress there reads its table (1 KiB on AVX2, 256 bytes on the others) from a constexpr array
// local to the function, which GCC copied onto the stack at every call (rep movsq: without it the
// arithmetic pass of wide-range fp16 add, where most vectors list lanes, ran 2x as fast on AVX2,
// bench/results/keystream-compress-2026-11-29-xeon-ab.md). Entry m
// of the table packs, four bits a lane from the bottom, the 32-bit lanes whose bit of m is set,
// then the others; its first four serve four lanes too (a mask of four bits leaves lanes 4-7
// unset, and they come after the unset lanes 0-3).
#define FPEMU_STATIC_COMPRESS (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3)
#if FPEMU_STATIC_COMPRESS
constexpr auto kCompressIndices = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t m = 0; m < 256; ++m) {
    int at = 0;
    for (const std::uint32_t set : {1u, 0u})
      for (std::uint32_t lane = 0; lane < 8; ++lane)
        if ((m >> lane & 1) == set) table[m] |= lane << 4 * at++;
  }
  return table;
}();
#endif

template <class D, class M>
HWY_INLINE std::size_t AppendListed(D d, hn::Vec<D> entries, M m, std::uint32_t* out) {
  using U = hn::TFromD<D>;
  HWY_ALIGN U compressed[HWY_MAX_BYTES / sizeof(U)];
#if FPEMU_STATIC_COMPRESS
  const hn::Repartition<std::uint32_t, D> d32;
  std::uint8_t bits = 0;
  hn::StoreMaskBits(d, m, &bits);
  std::uint32_t words = bits;  // the mask of the 32-bit lanes
  if constexpr (sizeof(U) == 8) {  // each bit twice: the 4 bits spread to the even places, doubled
    words = (words | words << 2) & 0x33u;
    words = (words | words << 1) & 0x55u;
    words *= 3;
  }
  alignas(32) static constexpr std::uint32_t kShifts[8] = {0, 4, 8, 12, 16, 20, 24, 28};
  const auto nibbles = hn::Set(d32, kCompressIndices[words]) >> hn::Load(d32, kShifts);
  const auto indices = hn::IndicesFromVec(d32, hn::And(nibbles, hn::Set(d32, 15u)));
  const auto listed = hn::BitCast(d, hn::TableLookupLanes(hn::BitCast(d32, entries), indices));
  const std::size_t count = hn::CountTrue(d, m);
  if constexpr (sizeof(U) == 4) {  // a masked store (lane by lane below AVX2): nothing past count
    hn::BlendedStore(listed, hn::FirstN(d, count), d, out);
    return count;
  }
  hn::Store(listed, d, compressed);
#else
  if constexpr (sizeof(U) == 4) return hn::CompressBlendedStore(entries, m, d, out);
  const std::size_t count = hn::CompressStore(entries, m, d, compressed);
#endif
  for (std::size_t j = 0; j < count; ++j) out[j] = static_cast<std::uint32_t>(compressed[j]);
  return count;
}
#undef FPEMU_STATIC_COMPRESS

// Operand lanes of type T from the binary32 bits of their values.
template <class D, class VU>
HWY_INLINE hn::Vec<D> OperandLanes(D d, VU bits) {
  const auto values = hn::BitCast(hn::Rebind<float, D>(), bits);
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return values;
  } else {
    return hn::PromoteTo(d, values);
  }
}

// Operand lanes of type T: the values of the codes at p, decoded in registers (`specials` and
// `vector`: the decoder's, see Decoder).
template <class D, class Dec>
HWY_INLINE hn::Vec<D> LoadOperand(D d, const Dec& decode, const code_source& p, frequent_step& specials,
                                  std::size_t vector) {
  return OperandLanes(d, decode(LoadCodes(hn::Rebind<std::uint32_t, D>(), p), specials, vector));
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// AVX-512's rounding direction per instruction (the environment's is untouched, no flag is
// raised): the sum, quotient or root rounded toward zero, -infinity or +infinity.
constexpr bool kEmbeddedRounding = true;
constexpr int kTowardZero = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
constexpr int kUp = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
template <int R, class V>
HWY_INLINE V AddRounded(V a, V b) {
  if constexpr (std::is_same_v<V, hn::Vec512<float>>) return V{_mm512_add_round_ps(a.raw, b.raw, R)};
  else return V{_mm512_add_round_pd(a.raw, b.raw, R)};
}
template <int R, class V>
HWY_INLINE V DivRounded(V a, V b) {
  if constexpr (std::is_same_v<V, hn::Vec512<float>>) return V{_mm512_div_round_ps(a.raw, b.raw, R)};
  else return V{_mm512_div_round_pd(a.raw, b.raw, R)};
}
template <int R, class V>
HWY_INLINE V SqrtRounded(V a) {
  if constexpr (std::is_same_v<V, hn::Vec512<float>>) return V{_mm512_sqrt_round_ps(a.raw, R)};
  else return V{_mm512_sqrt_round_pd(a.raw, R)};
}
#else
constexpr bool kEmbeddedRounding = false;
constexpr int kTowardZero = 0, kDown = 0, kUp = 0;
// Declared only, for the branches `if constexpr (kEmbeddedRounding)` discards.
template <int R, class V>
V AddRounded(V a, V b);
template <int R, class V>
V DivRounded(V a, V b);
template <int R, class V>
V SqrtRounded(V a);
#endif

// What a lane holds of an inexact x (the exact result): x rounded to odd at the lane type's
// precision (the top of this file); rounded by the environment, to nearest-even or in the direction
// the caller set, by the one operation (fma: the exact product, then the sum), without telling
// whether it is inexact, for OnePassRun's rounding in those modes (its comment says where that is
// x's); or rounded toward zero, for OnePassRun's stochastic rounding, which reads the bits below
// the quantum as they are and whether anything lies beyond them.
enum class lane_z { odd, rounded, toward_zero };

// One vector's arithmetic (the top of this file): the exact result x, or x rounded as kZ says where
// it is inexact, and what the lanes' checks find. Made once before a loop, like Decoder; OpLanes
// and OpRun share it.
template <lane_op Op, class D, lane_z kZ = lane_z::odd>
class LaneArithmetic {
  static constexpr bool kRounded = kZ == lane_z::rounded;
  using V = hn::Vec<D>;
  using M = hn::Mask<D>;
  using DU = hn::RebindToUnsigned<D>;
  using VU = hn::Vec<DU>;
  using U = hn::TFromD<DU>;
  using T = hn::TFromD<D>;

 public:
  struct lanes {
    V z;             // x rounded as kZ says (x where exact)
    V product;       // fma: the rounded product, whose NaN tells 0 x inf
    M inexact;       // z != x
    M out_of_range;  // lanes the checks of binary32 lanes leave to the core (none unless checks.range)
    M by_zero;       // div: x / 0 with x finite and nonzero, the hardware's infinity and divide-by-zero
  };

  explicit LaneArithmetic(const lane_checks& checks)
      : negative_zero_sum_(checks.negative_zero_sum),
        exact_sums_(checks.exact_sums),
        range_(checks.range),
        sign_bit_(hn::Set(DU(), U{1} << (sizeof(U) * 8 - 1))),
        one_(hn::Set(DU(), U{1})),
        min_normal_(hn::Set(D(), std::numeric_limits<T>::min())),
        max_finite_(hn::Set(D(), std::numeric_limits<T>::max())),
        min_operand_(hn::Set(D(), static_cast<T>(checks.min_operand))) {}

  HWY_INLINE lanes operator()(V x, V y, V w) const {
    const D d;
    const V zero = hn::Zero(d);
    const M none = hn::Ne(zero, zero);
    lanes r{zero, zero, none, none, none};
    if constexpr (Op == lane_op::add || Op == lane_op::sub) {
      const V addend = Op == lane_op::sub ? hn::Neg(y) : y;
      r.z = kRounded ? hn::Add(x, addend)
                     : ZeroSign(exact_sums_ ? hn::Add(x, addend) : RoundedSum(x, addend, r.inexact), x, addend);
      if (range_) r.out_of_range = BeyondRange(r.z);
    } else if constexpr (Op == lane_op::mul) {
      r.z = hn::Mul(x, y);
      if (range_) r.out_of_range = InexactProduct(r.z, x, y);
    } else if constexpr (Op == lane_op::fma) {
      r.product = hn::Mul(x, y);
      r.z = kRounded ? hn::Add(r.product, w) : ZeroSign(RoundedSum(r.product, w, r.inexact), r.product, w);
      if (range_) r.out_of_range = hn::Or(InexactProduct(r.product, x, y), BeyondRange(r.z));
    } else if constexpr (Op == lane_op::div) {
      r.by_zero = hn::And(hn::Eq(y, zero), hn::AndNot(hn::Eq(x, zero), hn::IsFinite(x)));
      if constexpr (kRounded) {
        r.z = hn::Div(x, y);
      } else if constexpr (kEmbeddedRounding) {
        r.z = DivRounded<kTowardZero>(x, y);
        r.inexact = Nonzero(hn::NegMulAdd(r.z, y, x));
        r.z = FromTowardZero(r.z, r.inexact);
      } else {
        r.z = hn::Div(x, y);
        const V rem = Remainder(x, r.z, y);
        r.inexact = Nonzero(rem);
        r.z = FromNearest(r.z, r.inexact, hn::Xor(rem, hn::And(y, hn::BitCast(d, sign_bit_))));  // sign of rem / y
      }
      if (range_) {
        const auto tiny = hn::Or(hn::Lt(hn::Abs(r.z), min_normal_), hn::Lt(hn::Abs(x), min_operand_));
        r.out_of_range = hn::Or(BeyondRange(r.z), hn::AndNot(hn::Eq(x, zero), tiny));
      }
    } else {
      if constexpr (kRounded) {
        r.z = hn::Sqrt(x);
      } else if constexpr (kEmbeddedRounding) {
        r.z = SqrtRounded<kTowardZero>(x);
        r.inexact = Nonzero(hn::NegMulAdd(r.z, r.z, x));
        r.z = FromTowardZero(r.z, r.inexact);
      } else {
        r.z = hn::Sqrt(x);
        const V rem = Remainder(x, r.z, r.z);
        r.inexact = Nonzero(rem);
        r.z = FromNearest(r.z, r.inexact, rem);
      }
      if (range_) r.out_of_range = hn::AndNot(hn::Eq(x, zero), hn::Lt(x, min_operand_));
    }
    return r;
  }

 private:
  // Whether an error term or remainder is nonzero; false for a NaN one, which arises only with
  // an infinite operand (or result), where the result is exact (the top of this file).
  HWY_INLINE M Nonzero(V e) const { return hn::Lt(hn::Zero(D()), hn::Abs(e)); }
  // z, x rounded toward zero, as kZ asks: as it is, or to odd (its last bit set where inexact).
  HWY_INLINE V FromTowardZero(V z, M inexact) const {
    if constexpr (kZ == lane_z::toward_zero) return z;
    const DU du;
    return hn::BitCast(D(), hn::Or(hn::BitCast(du, z), hn::IfThenElseZero(hn::RebindMask(du, inexact), one_)));
  }
  // z, x rounded to nearest, as kZ asks given whether it is inexact and the sign of x - z (the
  // sign bit of `err`): its neighbour towards x, to odd if its last bit is even, toward zero if x
  // lies below it in magnitude.
  HWY_INLINE V FromNearest(V z, M inexact, V err) const {
    const DU du;
    const VU zero = hn::Zero(du), bits = hn::BitCast(du, z);
    const auto away = hn::Eq(hn::And(hn::Xor(bits, hn::BitCast(du, err)), sign_bit_), zero);  // x beyond z
    if constexpr (kZ == lane_z::toward_zero) {  // -1 on the magnitude
      return hn::BitCast(D(), hn::Sub(bits, hn::IfThenElseZero(hn::AndNot(away, hn::RebindMask(du, inexact)), one_)));
    }
    const auto even = hn::Eq(hn::And(bits, one_), zero);
    const VU step = hn::IfThenElse(away, one_, hn::Not(zero));  // +1 or -1 on the magnitude
    return hn::BitCast(D(), hn::Add(bits, hn::IfThenElseZero(hn::And(hn::RebindMask(du, inexact), even), step)));
  }
  // x + y rounded as kZ says (odd or toward zero), and whether it is inexact. Exact zero sums come
  // out +0, or -0 when both operands are.
  HWY_INLINE V RoundedSum(V x, V y, M& inexact) const {
    if constexpr (kEmbeddedRounding) {
      // x + y is exact where rounding it down and up agree.
      inexact = hn::Ne(AddRounded<kDown>(x, y), AddRounded<kUp>(x, y));
      return FromTowardZero(AddRounded<kTowardZero>(x, y), inexact);
    } else {  // TwoSum (Knuth 1969): s + e = x + y exactly where x, y and s are finite
      const V s = hn::Add(x, y);
      const V yv = hn::Sub(s, x);
      const V e = hn::Add(hn::Sub(x, hn::Sub(s, yv)), hn::Sub(y, yv));
      inexact = Nonzero(e);
      return FromNearest(s, inexact, e);
    }
  }
  // a - z b, exact, or (without a fused multiply-add) a value with its sign and zero where it is:
  // the remainder of div and sqrt for z rounded to nearest (the top of this file). Targets
  // without one form it in binary64 lanes for binary32 lanes, and from exact pieces for binary64
  // lanes.
  HWY_INLINE V Remainder(V a, V z, V b) const {
    if constexpr (HWY_NATIVE_FMA) {
      return hn::NegMulAdd(z, b, a);
    } else if constexpr (sizeof(T) == 8) {
      const D d;
      const V c = hn::Mul(hn::Set(d, 134217729.0), z);  // (2^27 + 1) z: Veltkamp's split of z
      const V zh = hn::Sub(c, hn::Sub(c, z)), zl = hn::Sub(z, zh);
      V head, tail;  // r = head - tail, compared exactly
      if constexpr (Op == lane_op::sqrt) {
        const V middle = hn::Mul(zh, zl);
        head = hn::Sub(hn::Sub(a, hn::Mul(zh, zh)), hn::Add(middle, middle));
        tail = hn::Mul(zl, zl);
      } else {
        head = hn::Sub(a, hn::Mul(zh, b));
        tail = hn::Mul(zl, b);
      }
      // +-1 as head exceeds tail or not, 0 where equal or NaN (an infinite or NaN operand, as
      // Nonzero reads them).
      const V one = hn::Set(d, 1.0);
      return hn::IfThenElse(hn::Gt(head, tail), one, hn::IfThenElseZero(hn::Lt(head, tail), hn::Neg(one)));
    } else {
      // +-1 with the sign of the binary64 remainder, 0 where it is zero or NaN (as Nonzero reads
      // them), demoted exactly: in lanes of two halves, or of one for the scalar target.
      auto part = [&](auto df, hn::Vec<decltype(df)> ah, hn::Vec<decltype(df)> zh, hn::Vec<decltype(df)> bh)
                      FPEMU_KERNEL_LAMBDA {
        const hn::Rebind<double, decltype(df)> dd;
        const auto r = hn::Sub(hn::PromoteTo(dd, ah), hn::Mul(hn::PromoteTo(dd, zh), hn::PromoteTo(dd, bh)));
        const auto sign = hn::CopySign(hn::Set(dd, 1.0), r);
        return hn::DemoteTo(df, hn::IfThenElseZero(hn::Lt(hn::Zero(dd), hn::Abs(r)), sign));
      };
#if HWY_TARGET == HWY_SCALAR
      return part(D(), a, z, b);
#else
      const hn::Half<D> dh;
      return hn::Combine(D(), part(dh, hn::UpperHalf(dh, a), hn::UpperHalf(dh, z), hn::UpperHalf(dh, b)),
                         part(dh, hn::LowerHalf(dh, a), hn::LowerHalf(dh, z), hn::LowerHalf(dh, b)));
#endif
    }
  }
  // The sum's exact zero: +0 or -0 as the core has it (see the top).
  HWY_INLINE V ZeroSign(V s, V x, V y) const {
    if (!negative_zero_sum_) return s;
    const V signs = hn::BitCast(D(), hn::And(hn::Or(hn::BitCast(DU(), x), hn::BitCast(DU(), y)), sign_bit_));
    return hn::IfThenElse(hn::Eq(s, hn::Zero(D())), signs, s);
  }
  // A sum or quotient beyond the finite range (rounded toward zero, it stops at the largest
  // finite number, which no exact sum or quotient of narrower values is).
  HWY_INLINE M BeyondRange(V z) const { return hn::Not(hn::Lt(hn::Abs(z), max_finite_)); }
  // A product of nonzero operands below the normal range, or overflowing: maybe inexact.
  HWY_INLINE M InexactProduct(V p, V x, V y) const {
    const V zero = hn::Zero(D());
    const auto zero_operand = hn::Or(hn::Eq(x, zero), hn::Eq(y, zero));
    return hn::Or(BeyondRange(p), hn::AndNot(zero_operand, hn::Lt(hn::Abs(p), min_normal_)));
  }

  bool negative_zero_sum_, exact_sums_, range_;
  VU sign_bit_, one_;
  V min_normal_, max_finite_, min_operand_;
};

// Operands are prefetched 4 KiB ahead, as in the encode kernels: without it the loads of the
// codes stalled the loop (bf16 add ran at 0.25 G elements/s). The lines the encode pass will
// write its codes to are fetched for writing here, so that the misses of both passes overlap
// with this pass's arithmetic instead of stalling the stores (fp16 add: 0.75 to 0.85 G/s).
constexpr std::size_t kOperandsAhead = 1024;

// OpLanes' common case in a loop of its own, as NormalRun is EncodeMode's: from element i on,
// vectors of kBytes-byte codes that the decoder's short way kWay takes, none of them NaN (its
// decoder leaves NaN codes to the full one, so the short way needs no NaN step), whose lanes'
// results are not NaN, and that neither leave a lane to the core nor raise a flag of the
// arithmetic's (x / 0), so that OpLanes would list nothing: it stores their results. Stops at
// the first other vector, which it leaves to OpLanes, or at `end`; returns where it stopped. A
// loop of its own, because in OpLanes' loop, which holds every case, the compiler kept few
// constants in registers, tested the code width and the decoder's way on every operand, and
// branched around the rare cases.
template <lane_op Op, class T, int kBytes, decode_params::short_way kWay>
HWY_NOINLINE std::size_t OpRun(const decode_params& params, const lane_checks& checks, const code_source& a,
                               const code_source& b, const code_source& c, std::size_t i, std::size_t end, T* out,
                               const code_sink& codes) {
  const hn::ScalableTag<T> d;
  const hn::Rebind<std::uint32_t, decltype(d)> du;  // the codes, a 32-bit lane each
  using V = hn::Vec<decltype(d)>;
  const std::size_t L = hn::Lanes(d);
  const Decoder<decltype(du), decode_params::nan_codes::none> decode(du, params);
  const LaneArithmetic<Op, decltype(d)> arithmetic(checks);
  const bool exact_only = checks.exact_only;
  const auto* pa = static_cast<const std::uint8_t*>(a.data);
  const auto* pb = static_cast<const std::uint8_t*>(b.data);
  const auto* pc = static_cast<const std::uint8_t*>(c.data);
  auto operand = [&](const std::uint8_t* p, V& value) FPEMU_KERNEL_LAMBDA {
    hn::Vec<decltype(du)> bits;
    if (!decode.template Short<kWay, true>(LoadCodes<kBytes>(du, p + i * kBytes), bits)) return false;
    value = OperandLanes(d, bits);
    return true;
  };
  for (; i + L <= end; i += L) {
    hwy::Prefetch(pa + (i + kOperandsAhead) * kBytes);
    if constexpr (Op != lane_op::sqrt) hwy::Prefetch(pb + (i + kOperandsAhead) * kBytes);
    if constexpr (Op == lane_op::fma) hwy::Prefetch(pc + (i + kOperandsAhead) * kBytes);
    __builtin_prefetch(codes.at(i).data, 1);
    V x, y = hn::Zero(d), w = hn::Zero(d);
    if (!operand(pa, x)) break;
    if constexpr (Op != lane_op::sqrt) {
      if (!operand(pb, y)) break;
    }
    if constexpr (Op == lane_op::fma) {
      if (!operand(pc, w)) break;
    }
    const auto lanes = arithmetic(x, y, w);
    auto stop = hn::Or(lanes.out_of_range, hn::IsNaN(lanes.z));
    if constexpr (Op == lane_op::div) stop = hn::Or(stop, lanes.by_zero);
    if (exact_only) stop = hn::Or(stop, lanes.inexact);
    if (!hn::AllFalse(d, stop)) break;
    hn::StoreU(lanes.z, d, out + i);
  }
  return i;
}

template <lane_op Op, class T>
std::size_t OpLanes(const format& f, code_source a, code_source b, code_source c,
                    std::size_t n, const lane_checks& checks, T* out, std::uint32_t* special,
                    code_sink codes, std::uint8_t* raised_union) {
  const bool exact_only = checks.exact_only, list_infinite_quotients = checks.list_infinite_quotients;
  const hn::ScalableTag<T> d;
  const decode_params& params = decode_params_for(f);
  const Decoder<hn::Rebind<std::uint32_t, decltype(d)>, decode_params::nan_codes::any> decode(
      hn::Rebind<std::uint32_t, decltype(d)>(), params);
  const LaneArithmetic<Op, decltype(d)> arithmetic(checks);
  const hn::RebindToUnsigned<decltype(d)> du;
  using V = hn::Vec<decltype(d)>;
  using VU = hn::Vec<decltype(du)>;
  using U = hn::TFromD<decltype(du)>;
  const std::size_t L = hn::Lanes(d);
  const VU sign_bit = hn::Set(du, U{1} << (sizeof(U) * 8 - 1)), zero = hn::Zero(du);
  const V fzero = hn::Zero(d);
  const V quiet_nan = hn::Set(d, std::numeric_limits<T>::quiet_NaN());
  std::size_t count = 0;
  VU unlisted = zero;  // with raised_union: the flags of the lanes left off the list
  // The NaN and listing steps below, each on every vector once frequent (wide-range fp16 data:
  // a NaN result, inf x 0, in 2 of 5 vectors).
  frequent_step nan_step, listing_step, decoder_specials;  // the last the decoder's (see Decoder)

  auto one_vector = [&](const code_source& pa, const code_source& pb, const code_source& pc, T* dst,
                        std::size_t base) FPEMU_KERNEL_LAMBDA {
    const V x = LoadOperand(d, decode, pa, decoder_specials, base / L);
    V y = fzero, w = fzero;
    if constexpr (Op != lane_op::sqrt) y = LoadOperand(d, decode, pb, decoder_specials, base / L);
    if constexpr (Op == lane_op::fma) w = LoadOperand(d, decode, pc, decoder_specials, base / L);
    const auto lanes = arithmetic(x, y, w);
    V z = lanes.z;
    // Lanes for the core, and the flags the arithmetic raises in the others (invalid,
    // divide-by-zero), which the caller ors into the encode kernels' (the top of this file).
    auto bad = lanes.out_of_range, infinite_quotient = hn::Ne(fzero, fzero);
    VU raised = zero;
    if constexpr (Op == lane_op::div) {
      if (list_infinite_quotients) {
        infinite_quotient = lanes.by_zero;
        bad = hn::Or(bad, lanes.by_zero);
      } else {
        raised = hn::IfThenElseZero(hn::RebindMask(du, lanes.by_zero), hn::Set(du, U{flag::divide_by_zero}));
      }
    }
    const auto nan = hn::IsNaN(z);
    if (nan_step(!hn::AllFalse(d, nan), base / L)) {
      // NaN results (see the top): the core's quiet NaN, signed as the first NaN operand (+
      // without one), and invalid for an invalid operation (no NaN operand, or 0 x inf in fma)
      // or a signaling NaN operand, which only its code tells (decoded, all NaNs are quiet).
      auto signaling = [&](const code_source& codes) FPEMU_KERNEL_LAMBDA {
        const hn::Rebind<std::uint32_t, decltype(d)> du32;
        const hn::RebindToSigned<decltype(du32)> di32;
        const auto s32 = decode.Signaling(LoadCodes(du32, codes));
        if constexpr (sizeof(T) == 4) {
          return hn::RebindMask(d, s32);
        } else {  // widened lane by lane: masks of different lane sizes do not rebind
          const hn::RebindToSigned<decltype(d)> di;
          return hn::MaskFromVec(hn::BitCast(d, hn::PromoteTo(di, hn::VecFromMask(di32, hn::RebindMask(di32, s32)))));
        }
      };
      const auto nx = hn::IsNaN(x), ny = hn::IsNaN(y), nw = hn::IsNaN(w);
      const auto nan_operand = hn::Or(nx, hn::Or(ny, nw));
      const V first = hn::IfThenElse(nx, x, hn::IfThenElse(ny, y, w));
      const V sign = hn::IfThenElseZero(nan_operand, hn::And(first, hn::BitCast(d, sign_bit)));
      z = hn::IfThenElse(nan, hn::Or(sign, quiet_nan), z);
      auto invalid = hn::Not(nan_operand);
      if (!hn::AllFalse(d, nan_operand)) {  // only a NaN operand can be signaling (wide-range data: none)
        invalid = hn::Or(invalid, signaling(pa));
        if constexpr (Op != lane_op::sqrt) invalid = hn::Or(invalid, signaling(pb));
        if constexpr (Op == lane_op::fma) invalid = hn::Or(invalid, signaling(pc));
      }
      if constexpr (Op == lane_op::fma)
        invalid = hn::Or(invalid, hn::AndNot(hn::Or(nx, ny), hn::IsNaN(lanes.product)));
      const VU invalid_flag = hn::Set(du, U{flag::invalid});
      raised = hn::Or(raised, hn::IfThenElseZero(hn::RebindMask(du, hn::And(nan, invalid)), invalid_flag));
    }
    if (exact_only) bad = hn::Or(bad, lanes.inexact);
    hn::StoreU(hn::IfThenZeroElse(bad, z), d, dst);
    raised = hn::IfThenZeroElse(hn::RebindMask(du, bad), raised);
    if (base + L > n) raised = hn::IfThenElseZero(hn::FirstN(du, n - base), raised);  // not the tail's padding
    auto listed = bad;
    if (raised_union)
      unlisted = hn::Or(unlisted, raised);
    else
      listed = hn::Or(listed, hn::RebindMask(d, hn::Ne(raised, zero)));
    if constexpr (Op == lane_op::div)
      raised = hn::IfThenElse(hn::RebindMask(du, infinite_quotient), hn::Set(du, U{kInfiniteQuotient}), raised);
    if (base + L > n) listed = hn::And(listed, hn::FirstN(d, n - base));
    if (listing_step(!hn::AllFalse(d, listed), base / L)) {
      // The listed lanes' entries (index | flags << kLaneIndexBits), compressed to the front: a
      // loop over the lanes mispredicted on data with many of them (wide-range fp16 div: x / 0
      // in one lane of 12).
      const VU entries = hn::Or(hn::Add(hn::Iota(du, U{0}), hn::Set(du, static_cast<U>(base))),
                                hn::ShiftLeft<kLaneIndexBits>(raised));
      count += AppendListed(du, entries, hn::RebindMask(du, listed), special + count);
    }
  };

  // OpRun for the codes' width and the decoder's short way, where it has one; it takes vectors
  // while they are of its kind, and the one it stops at goes through one_vector. Where more than
  // about one vector in 8 stops it (wide-range data: zeros, infinities and NaNs), a stop costs
  // more than the run saves, and one_vector takes every vector, as in EncodeMode.
  using run_kernel = std::size_t (*)(const decode_params&, const lane_checks&, const code_source&,
                                     const code_source&, const code_source&, std::size_t, std::size_t, T*,
                                     const code_sink&);
  run_kernel run = nullptr;
  using way = decode_params::short_way;
  const int bytes = a.bytes == b.bytes && a.bytes == c.bytes ? a.bytes : 0;
  if (params.way == way::binary32_top && bytes == 2) run = &OpRun<Op, T, 2, way::binary32_top>;
  if constexpr (kHalfConversion) {
    if (params.way == way::via_half && bytes == 1) run = &OpRun<Op, T, 1, way::via_half>;
    if (params.way == way::via_half && bytes == 2) run = &OpRun<Op, T, 2, way::via_half>;
    if (params.way == way::via_half_apart && bytes == 1) run = &OpRun<Op, T, 1, way::via_half_apart>;
  }
  std::size_t i = 0, run_stops = 0;
  for (; i + L <= n; i += L) {
    if (run) {
      i = run(params, checks, a, b, c, i, n, out, codes);
      if (i + L > n) break;
      if (++run_stops * 8 > i / L + 16) run = nullptr;
    }
    hwy::Prefetch(a.at(i + kOperandsAhead).data);
    if constexpr (Op != lane_op::sqrt) hwy::Prefetch(b.at(i + kOperandsAhead).data);
    if constexpr (Op == lane_op::fma) hwy::Prefetch(c.at(i + kOperandsAhead).data);
    __builtin_prefetch(codes.at(i).data, 1);
    one_vector(a.at(i), b.at(i), c.at(i), out + i, i);
  }
  if (i < n) {  // the tail through zero-padded 32-bit codes (one_vector lists no index >= n)
    constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(T);
    HWY_ALIGN std::uint32_t pa[kMax] = {}, pb[kMax] = {}, pc[kMax] = {};
    HWY_ALIGN T po[kMax];
    for (std::size_t j = 0; j < n - i; ++j) {
      pa[j] = a[i + j];
      if (Op != lane_op::sqrt) pb[j] = b[i + j];
      if (Op == lane_op::fma) pc[j] = c[i + j];
    }
    one_vector(code_source(pa), code_source(pb), code_source(pc), po, i);
    std::memcpy(out + i, po, (n - i) * sizeof(T));
  }
  if (raised_union) {
    HWY_ALIGN U lanes[HWY_MAX_BYTES / sizeof(U)];
    hn::Store(unlisted, du, lanes);
    for (std::size_t j = 0; j < L; ++j) *raised_union |= static_cast<std::uint8_t>(lanes[j]);
  }
  return count;
}

// How the one-pass kernel below (OnePassRun) reads and writes the two-byte codes of a format (on
// every target but the scalar one): fp16 by the CPU's conversion instructions (F16C) or integer
// steps, bf16, the top half of binary32, by shifts and the increment of round_float.hpp. Each
// gives, for the lanes a vector rounds: the operands' values (exact), the codes of z in Mode,
// which finite lanes are inexact, (stochastic rounding) which lanes' codes the 24 bits of z do
// not decide (Undecided) and (fma to nearest) which z may lie halfway between two codes' values
// (Midpoint); and for the checks, whether binary32 lanes need the range checks
// (kRange), binary32 bits of its smallest normal and of the largest magnitude that rounds into its
// finite range in Mode with either sign (kBig), its codes' infinity and quiet bit, and the flags
// its rounding can raise on the op's results (RoundingFlags). Stochastic rounding with up to 16
// random bits reads P + 16 bits of x: binary32's 24 for bf16 (P = 8), 27 for fp16 (P = 11).
struct fp16_codes {
  static constexpr bool kServes = HWY_TARGET != HWY_SCALAR, kRange = false;
  static constexpr std::uint16_t kInfinity = 0x7c00, kQuiet = 0x0200;
  static constexpr std::uint32_t kNormal = kHalfNormal;
  template <round_mode Mode>
  static constexpr std::uint32_t kBig = kHalfBig<Mode>;
  // Sums and differences of fp16 values are multiples of 2^-24, so exact below 2^-14 (no
  // underflow); roots lie in [2^-12, 256) (no underflow, no overflow).
  static constexpr std::uint8_t RoundingFlags(lane_op op) {
    switch (op) {
      case lane_op::add:
      case lane_op::sub: return flag::overflow | flag::inexact;
      case lane_op::sqrt: return flag::inexact;
      default: return flag::overflow | flag::underflow | flag::inexact;
    }
  }
  // The conversion instruction where the target has it; elsewhere a normal code's bits moved up to
  // binary32's places, the exponent rebiased by 127 - 15 (all ones for infinities and NaNs), and a
  // subnormal one's magnitude m as m 2^-24, converted from an integer (exact): the generic
  // Decoder's full way with fp16's fields as constants, which ran the one pass 1.04-2.0x as fast
  // as that decoder does on SSE4 (bench/results/fp16-values-by-decoder-2026-12-01-xeon.md).
  template <class D>
  static HWY_INLINE hn::Vec<D> Values(D d, hn::Vec<hn::Rebind<std::uint16_t, D>> codes) {
    const hn::RebindToUnsigned<D> du;
    if constexpr (kHalfConversion) return hn::BitCast(d, HalfValueBits(du, codes));
    const auto c = hn::PromoteTo(du, codes), m = hn::And(c, hn::Set(du, 0x7fffu)), up = hn::ShiftLeft<13>(m);
    const auto beyond = SignedGt(m, hn::Set(du, 0x7bffu));
    auto bits = hn::IfThenElse(beyond, hn::Or(up, hn::Set(du, kInfinityBits)),
                               hn::Add(up, hn::Set(du, std::uint32_t{127 - 15} << 23)));
    const auto subnormal = hn::Mul(hn::ConvertTo(d, hn::BitCast(hn::RebindToSigned<D>(), m)), hn::Set(d, 0x1p-24f));
    bits = hn::IfThenElse(SignedLt(m, hn::Set(du, 0x400u)), hn::BitCast(du, subnormal), bits);
    return hn::BitCast(d, hn::Or(bits, hn::ShiftLeft<16>(hn::And(c, hn::Set(du, 0x8000u)))));
  }
  // The conversion instruction's codes in the four directions where the target has it
  // (kHalfRounds). Elsewhere, and stochastically, z's fixed-point form (Fixed) rounded to the
  // quantum at bit 13 by Mode (RoundShift: 2^12 - 1 plus the kept last bit to nearest-even,
  // 2^13 - 1 away from zero; stochastically the top 13 of `random`, the k random bits set under the
  // 16 below the quantum: RandomSum): the core's carry (stochastically where z decides it:
  // Undecided). Beyond 65504 the largest finite code where the lane rounds toward zero, else the
  // infinity (policy ieee, RoundingAgrees); a NaN the quiet NaN.
  template <round_mode Mode, class D>
  static HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, D>> Codes(D d, hn::Vec<D> z,
                                                                hn::Vec<hn::RebindToUnsigned<D>> random) {
    if constexpr (kHalfRounds<Mode>) return HalfCodes<Mode>(d, z);
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    const auto bits = hn::BitCast(du, z), mag = hn::And(bits, hn::Set(du, 0x7fffffffu));
    const auto infinity = hn::Set(du, kInfinityBits);
    const auto negative = hn::RebindMask(du, hn::Lt(hn::BitCast(di, bits), hn::Zero(di)));
    auto toward_zero = hn::Ne(mag, mag);  // the lanes that round toward zero
    if constexpr (Mode == round_mode::toward_zero) toward_zero = hn::Eq(mag, mag);
    if constexpr (Mode == round_mode::toward_positive) toward_zero = negative;
    if constexpr (Mode == round_mode::toward_negative) toward_zero = hn::Not(negative);
    auto rounded = hn::Zero(du);
    if constexpr (Mode == round_mode::stochastic) {
      rounded = hn::ShiftRight<13>(RandomSum(du, bits, random));
    } else {
      constexpr std::integral_constant<int, 13> kQuantum;
      rounded = RoundShift<Mode>(du, Fixed<true>(du, bits), kQuantum, negative, random, kQuantum, true);
    }
    const auto largest = hn::IfThenElse(hn::And(toward_zero, SignedLt(mag, infinity)), hn::Set(du, 0x7bffu),
                                        hn::Set(du, std::uint32_t{kInfinity}));
    const auto limit = hn::IfThenElse(SignedGt(mag, infinity), hn::Set(du, 0x7e00u), largest);
    const auto code = hn::Min(rounded, limit);
    const auto sign = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u));
    return hn::DemoteTo(hn::Rebind<std::uint16_t, D>(), hn::BitCast(di, hn::Or(code, sign)));
  }
  // z's magnitude as a fixed-point number with the quantum of its code at bit 13: for a normal
  // result its binary32 bits, the exponent rebiased by 127 - 15; below 2^-14, where the quantum is
  // 2^-24, |z| 2^37 cut to an integer (below 2^23, exact), with (kSticky) its last bit set where the
  // cut dropped anything. z, rounded to odd at 24 bits, keeps the 13 bits below the quantum with
  // its last one sticky (P + 2 = 13 <= 24), as the increments ask.
  template <bool kSticky, class DU>
  static HWY_INLINE hn::Vec<DU> Fixed(DU du, hn::Vec<DU> bits) {
    const hn::Rebind<float, DU> df;
    const hn::RebindToSigned<DU> di;
    const auto mag = hn::And(bits, hn::Set(du, 0x7fffffffu));
    const auto scaled = hn::Mul(hn::BitCast(df, mag), hn::Set(df, 0x1p37f));
    const auto whole = TruncInRange(di, scaled);  // (lanes of 2^-14 and above are not taken)
    auto cut = hn::BitCast(du, whole);
    if constexpr (kSticky) {
      const auto dropped = hn::RebindMask(du, hn::Ne(hn::ConvertTo(df, whole), scaled));
      cut = hn::Or(cut, hn::IfThenElseZero(dropped, hn::Set(du, 1u)));
    }
    return hn::IfThenElse(SignedLt(mag, hn::Set(du, kHalfNormal)), cut,
                          hn::Sub(mag, hn::Set(du, std::uint32_t{127 - 15} << 23)));
  }
  // Stochastically: Fixed plus the top 13 of the 16 random bits. z holds 13 of the 16 bits below
  // the quantum that stochastic rounding reads (24 - 11), or more below 2^-14; the carry into the
  // quantum is x's unless those 13 bits and the random bits' top 13 sum to 2^13 - 1 and the low 3
  // random bits are not 0: x's next 3 bits then decide (Undecided: the vector goes to the two
  // passes, about one lane in 2^13).
  template <class DU>
  static HWY_INLINE hn::Vec<DU> RandomSum(DU du, hn::Vec<DU> bits, hn::Vec<DU> random) {
    return hn::Add(Fixed<false>(du, bits), hn::ShiftRight<3>(random));
  }
  template <class DU>
  static HWY_INLINE auto Undecided(DU du, hn::Vec<DU> bits, hn::Vec<DU> random) {
    const auto window = hn::Set(du, 0x1fffu);
    const auto undecided = hn::Eq(hn::And(RandomSum(du, bits, random), window), window);
    return hn::AndNot(hn::Eq(hn::And(random, hn::Set(du, 7u)), hn::Zero(du)), undecided);
  }
  // A code's value, converted back exactly, differs from z.
  template <class DU>
  static HWY_INLINE auto Inexact(DU du, hn::Vec<DU> bits, hn::Vec<hn::Rebind<std::uint16_t, DU>> codes) {
    return hn::Ne(hn::BitCast(du, Values(hn::Rebind<float, DU>(), codes)), bits);
  }
  // Lanes whose z may lie halfway between two codes' values: the 13 bits below the quantum are 1
  // then zeros, read below 2^-14 (quantum 2^-24) on |z| + 2^-14, whose quantum that is and whose
  // bits below it are z's where z is a multiple of 2^-37, as every midpoint is (elsewhere the sum
  // is rounded to nearest and may look like one: a lane taken for a midpoint costs only time).
  template <class DU>
  static HWY_INLINE auto Midpoint(DU du, hn::Vec<DU> bits) {
    const hn::Rebind<float, DU> df;
    const auto mag = hn::And(bits, hn::Set(du, 0x7fffffffu));
    const auto shifted = hn::BitCast(du, hn::Add(hn::BitCast(df, mag), hn::Set(df, 0x1p-14f)));
    const auto read = hn::IfThenElse(SignedLt(mag, hn::Set(du, kHalfNormal)), shifted, bits);
    return hn::Eq(hn::And(read, hn::Set(du, 0x1fffu)), hn::Set(du, 0x1000u));
  }
};

struct bf16_codes {
  static constexpr bool kServes = HWY_TARGET != HWY_SCALAR, kRange = true;
  static constexpr std::uint16_t kInfinity = 0x7f80, kQuiet = 0x0040;
  static constexpr std::uint32_t kNormal = 0x00800000u;  // 2^-126
  // Below 0x7f7f8000 (bf16's largest finite and half its ulp) to nearest, 2^128 toward zero, the
  // largest finite in the directed modes.
  template <round_mode Mode>
  static constexpr std::uint32_t kBig = Mode == round_mode::nearest_even  ? 0x7f7f7fffu
                                        : Mode == round_mode::toward_zero ? 0x7f7fffffu
                                                                          : 0x7f7f0000u;
  // Underflow in fma alone: the range checks (the top of this file) give the core every product,
  // quotient and root below 2^-126, and sums of two bf16 values below it are multiples of 2^-133,
  // so exact; a product (at least 2^-126, a multiple of 2^-141) plus an addend is not.
  static constexpr std::uint8_t RoundingFlags(lane_op op) {
    switch (op) {
      case lane_op::sqrt: return flag::inexact;
      case lane_op::fma: return flag::overflow | flag::underflow | flag::inexact;
      default: return flag::overflow | flag::inexact;
    }
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Values(D d, hn::Vec<hn::Rebind<std::uint16_t, D>> codes) {
    const hn::RebindToUnsigned<D> du;
    return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du, codes)));
  }
  // The top half of z's bits, sign included, rounded by Mode (RoundShift: 2^15 - 1 plus the kept
  // last bit to nearest-even, 2^16 - 1 away from zero; stochastically `random`, the k random bits
  // set under the 16 below the quantum, whose carry is round_core.hpp's); a carry into the exponent
  // field makes the infinity, as IEEE rounding does, and no NaN's low half is nonzero (a quiet NaN
  // from a bf16 operand or the default one), so NaNs stay NaNs and no lane wraps.
  template <round_mode Mode, class D>
  static HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, D>> Codes(D d, hn::Vec<D> z,
                                                                hn::Vec<hn::RebindToUnsigned<D>> random) {
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    const auto bits = hn::BitCast(du, z);
    const auto negative = hn::RebindMask(du, hn::Lt(hn::BitCast(di, bits), hn::Zero(di)));
    constexpr std::integral_constant<int, 16> kQuantum;
    const auto top = RoundShift<Mode>(du, bits, kQuantum, negative, random, kQuantum, true);
    return hn::DemoteTo(hn::Rebind<std::uint16_t, D>(), hn::BitCast(di, top));  // below 2^16
  }
  template <class DU>
  static HWY_INLINE auto Inexact(DU du, hn::Vec<DU> bits, hn::Vec<hn::Rebind<std::uint16_t, DU>>) {
    return hn::Ne(hn::And(bits, hn::Set(du, 0xffffu)), hn::Zero(du));
  }
  // z holds all 16 bits below the quantum: every lane decided.
  template <class DU>
  static HWY_INLINE auto Undecided(DU du, hn::Vec<DU>, hn::Vec<DU>) {
    return hn::Ne(hn::Zero(du), hn::Zero(du));
  }
  // Lanes whose z lies halfway between two codes' values: its 16 bits below the quantum are 1
  // then zeros (subnormals too: bf16's are binary32's truncated).
  template <class DU>
  static HWY_INLINE auto Midpoint(DU du, hn::Vec<DU> bits) {
    return hn::Eq(hn::And(bits, hn::Set(du, 0xffffu)), hn::Set(du, 0x8000u));
  }
};

// Element-wise arithmetic on two-byte codes into two-byte codes in one pass, for fp16 and bf16
// under policy ieee in nearest-even, the directed modes and stochastically (below), where the
// codes' rounding of the core's overflow and infinite results is the core's (RoundingAgrees): the
// operands' values, LaneArithmetic's z (the exact result x, rounded to odd at 24 bits where inexact: the top of this
// file), and z rounded by Codes. For fp16 that is HalfRun's rounding, the core's (HalfRun's
// comment), or without F16C the core's increment on z's fixed-point form (fp16_codes::Fixed), the
// largest finite code or the infinity beyond 65504 as the core has them under policy ieee; for
// bf16 z's top half after the core's increment for a normal or subnormal result (bf16's are
// binary32's truncated), with a carry out of the largest finite magnitude giving the infinity, the
// core's overflow result under policy ieee. Either way the core's rounding of z, so of x. The
// lanes that OpLanes would leave to the core (the range checks, bf16 only: binary32 lanes meet the
// ranges the top of this file asks on all of fp16) stop it. Nor does DAZ reach z: fp16's
// sums are multiples of 2^-24 and its products, quotients and roots at least 2^-48, so no nonzero z
// is a binary32 subnormal; bf16 z below 2^-126 are exact sums, which FTZ and DAZ would change, but
// the kernel, like OpLanes, runs only without them (op_lanes). NaN results take the core's NaN
// code, signed as in OpLanes.
// Like HalfRun it raises no flags: a vector that would raise one not in `seen` stops it: overflow
// for a finite lane above kBig, inexact, underflow for an inexact lane below the smallest normal
// (maybe tiny), invalid as OpLanes raises it (a NaN result from no NaN operand or from 0 x inf in
// fma, or a signaling NaN operand), divide-by-zero for x / 0. The rounding's flags take compares on
// every vector, which a short way keeps to two where no lane is tiny, huge or special (HalfRun's);
// once `seen` holds those the op can raise (kSettled: RoundingFlags), they are not looked for, and
// no branch depends on the kinds of lanes but the one for NaN results, on every vector once
// frequent (on wide-range data, where the ways alternate, the branches mispredicted: settled AVX2
// fp16 div ran at 0.76 G elements/s, a third of its time in their wake). Stops at the first other
// vector, which the caller does by the two passes, or at `end`; returns where it stopped.
// Once inexact has been seen, so that no lane's inexactness is wanted but that of a result below
// the smallest normal while underflow is not (such a lane stops it, where the op can raise
// underflow), the lanes skip rounding to odd (lane_z::rounded) in nearest-even and in the
// directed modes: z is x rounded in binary32 by the environment, in the mode's direction
// (op_lanes asks for nearest-even; OnePassMode sets the others for the run); no served x is below
// binary32's smallest subnormal, so z is 0 only where x is (the range checks above). Overflow is
// still told: x overflows where it reaches a binary32 value T beyond kBig (its successor: 65520 to
// nearest, 2^16 toward zero) or passes kBig itself (rd below -kBig, ru above it), and z does
// there too: rounding is monotone onto a grid that holds T and kBig, and x passing kBig is rounded
// away from it; bf16 results beyond binary32's range meet the range check. To nearest-even, a
// second rounding to nearest-even at p bits gives x's own wherever 24 >= 2p + 2, for +, -, x, /
// and sqrt of p-bit operands (Figueroa, "When is double rounding innocuous?", 1995; Roux, "Innocuous double
// rounding of basic arithmetic operations", 2014, a formal proof): fp16 (p = 11) and bf16 (p = 8).
// That argument is for results in the normal range, and the unbounded exponent covers the overflow
// threshold, a midpoint like any other. Below it: sums of fp16 or bf16 values there are exact
// (multiples of the smallest subnormal), roots never land there, products are exact in binary32,
// bf16's tiny products and quotients go to the core (but for one rounded up to 2^-126 in binary32,
// at most 2^-150 below it, which rounds to 2^-126 in bf16 too: its neighbour below is 2^-133 away);
// fp16 quotients can, and `exhaustive_array_ops` checks every fp16 and bf16 pair through add and
// div this way against the two passes. fma's x is no op of two p-bit values (its product, exact
// where the lanes serve it, has up to 2p bits), so there the lanes look at z: where z is not
// halfway between two of the format's values, rounding it to nearest-even gives x's own, in every
// range. For the midpoints, the overflow threshold among them, are binary32 values (multiples of
// 2^-25 for fp16, of 2^-134 for bf16), and rounding to nearest changes only across one: were x's
// rounding not z's, a midpoint m would lie between them (x <= m < z or z < m <= x), a binary32
// value nearer x than z is, or x itself (then exact, z = x = m). Exact midpoints are common (short
// products plus an addend often sum to one), so a lane asks for more only where z is a midpoint and
// x = p + w inexact: where it is exact, z - p and z - w are exact too and give w and p back; where
// not, the difference that takes off the operand of the larger exponent is exact (the lemma of
// Dekker's Fast2Sum, "A floating-point technique for extending the available precision", 1971) and
// differs from the other operand by z - x. A vector with such a lane (rare: x then lies within half
// an ulp of binary32 of a midpoint but not on it) takes x rounded to odd instead. In a directed
// mode the second rounding, in the same direction, gives x's own everywhere: the format's values
// are binary32 values, so those at or below x are those at or below x rounded down in binary32 (at
// or above: up), subnormals included, and rounding toward zero is one of the two by x's sign, which
// z keeps; beyond binary32's range z is its largest finite value, whose rounding is x's, or the
// infinity, x's under policy ieee (RoundingAgrees). Every op qualifies, fma too: its product is
// exact where the lanes serve it, so z is x rounded once. An exact zero sum comes out with the
// sign IEEE 754 gives it in that direction, the core's (ZeroSign).
// Stochastic rounding with k <= 16 random bits reads the k bits of x below the quantum and whether
// any bit lies beyond the quantum (round_core.hpp), so the lanes give x rounded toward zero at 24
// bits and whether it is inexact, instead of x rounded to odd (whose last bit, jammed, is one of
// those bits). For bf16 that holds all the P + 16 = 24 bits it reads, for normal results and
// subnormal ones alike, as binary32's subnormals end at 2^-149, 16 bits below bf16's quantum there
// (the lanes reach only sums and fma sums below 2^-126, the others going to the core); for fp16 it
// holds 13 of the 16 bits below the quantum (more below 2^-14; no fp16 result is a binary32
// subnormal), which decide the carry of all but about one lane in 2^13, whose vector stops it
// (fp16_codes::RandomSum). Codes adds element i's random bits to the bits below the quantum, as
// the core does; overflow, inexact (the lane's or a bit below the quantum) and underflow stop it as
// above, the last for any inexact lane below the smallest normal (tininess after rounding with the
// same random bits read one bit lower, which the core works out, is left to the two passes).
template <class Codes, lane_op Op, round_mode Mode, bool kSettled, lane_z kZ>
HWY_NOINLINE std::size_t OnePassRun(const lane_checks& checks, const encode_params<float>& p, std::uint8_t seen,
                                    const sr_stream& sr, const std::uint16_t* a, const std::uint16_t* b,
                                    const std::uint16_t* c, std::size_t i, std::size_t end, std::uint16_t* out) {
  constexpr bool kStochastic = Mode == round_mode::stochastic;
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<std::uint16_t, decltype(d)> d16;
  const hn::Rebind<std::int16_t, decltype(d)> di16;
  using V = hn::Vec<decltype(d)>;
  using VU = hn::Vec<decltype(du)>;
  using V16 = hn::Vec<decltype(d16)>;
  const std::size_t L = hn::Lanes(d);
  // checks_for's checks, with what is known here made constants the compiler folds (with them
  // read from `checks`, fp16 ran 0.83-0.96x as fast on AVX3): no sums exact in 24 bits, range
  // checks for bf16 alone (lanes_in_range).
  lane_checks k = checks;
  k.negative_zero_sum = Mode == round_mode::toward_negative;
  k.exact_sums = false;
  k.range = Codes::kRange;
  const LaneArithmetic<Op, decltype(d), kZ> arithmetic(k);
  constexpr bool kMidpoints = kZ == lane_z::rounded && Op == lane_op::fma && Mode == round_mode::nearest_even;
  const LaneArithmetic<Op, decltype(d), lane_z::odd> odd_arithmetic(k);
  const VU sign_bit = hn::Set(du, 0x80000000u), infinity = hn::Set(du, kInfinityBits);
  const VU big = hn::Set(du, Codes::template kBig<Mode>), zero = hn::Zero(du);
  const V16 magnitude16 = hn::Set(d16, 0x7fff), infinity16 = hn::Set(d16, Codes::kInfinity);
  const V16 quiet16 = hn::Set(d16, Codes::kQuiet);
  const V16 nan_code_pos = hn::Set(d16, static_cast<std::uint16_t>(p.nan_code[0]));
  const V16 nan_code_neg = hn::Set(d16, static_cast<std::uint16_t>(p.nan_code[1]));
  const bool inexact_seen = seen & flag::inexact, underflow_seen = seen & flag::underflow;
  frequent_step nan_step;  // (wide-range data: inf - inf, 0 x inf, 0 / 0)
  const std::size_t start = i;
  // The random bits, made a chunk at a time as in the encode kernels, each element's k set under
  // the 16 bits below the quantum. The chunks are the outer loop, so that no call lies in the loop
  // over vectors: with fill_keystream called inside it (under a branch), every vector register
  // was the call's to clobber, and GCC broadcast the loop's constants again on each vector (sr16
  // 1.06-1.07x as fast in median on AVX3 and AVX2 without it,
  // bench/results/elementwise-one-pass-chunks-2026-12-02-zen4-lib-ab.md).
  constexpr std::size_t kRandomChunk = kStochastic ? keystream_chunk : 1;
  HWY_ALIGN std::uint32_t random[kRandomChunk];
  const VU k_mask = hn::Set(du, p.k_mask);
  const int random_shift = 16 - static_cast<int>(p.k);
  auto codes = [&](const std::uint16_t* p) FPEMU_KERNEL_LAMBDA { return hn::LoadU(d16, p + i); };
  auto operand = [&](const std::uint16_t* p) FPEMU_KERNEL_LAMBDA { return Codes::Values(d, codes(p)); };
  // The NaN codes among the codes (their magnitudes, as signed lanes, above the infinity's).
  auto nan_codes = [&](V16 code) FPEMU_KERNEL_LAMBDA {
    return hn::RebindMask(d16, hn::Gt(hn::BitCast(di16, hn::And(code, magnitude16)), hn::BitCast(di16, infinity16)));
  };
  while (i + L <= end) {
    const std::size_t chunk_begin = i, whole = (end - i) / L * L;  // (whole vectors)
    const std::size_t chunk_end = i + (kStochastic ? std::min(kRandomChunk, whole) : whole);
    if constexpr (kStochastic) fill_keystream(sr.seed, sr.stream, sr.first_index + i, chunk_end - i, 16, random);
    for (; i < chunk_end; i += L) {
      hwy::Prefetch(a + i + kOperandsAhead);
      if constexpr (Op != lane_op::sqrt) hwy::Prefetch(b + i + kOperandsAhead);
      if constexpr (Op == lane_op::fma) hwy::Prefetch(c + i + kOperandsAhead);
      __builtin_prefetch(out + i, 1);
      const V x = operand(a);
      const V y = Op != lane_op::sqrt ? operand(b) : hn::Zero(d), w = Op == lane_op::fma ? operand(c) : hn::Zero(d);
      auto lanes = arithmetic(x, y, w);
      if constexpr (kMidpoints) {  // (fma to nearest: inexact lanes rounded onto a midpoint, below)
        const V p = lanes.product, s = lanes.z;
        const auto exact = hn::And(hn::Eq(hn::Sub(s, p), w), hn::Eq(hn::Sub(s, w), p));
        const auto midpoint = hn::AndNot(hn::RebindMask(du, exact), Codes::Midpoint(du, hn::BitCast(du, s)));
        if (HWY_UNLIKELY(!hn::AllFalse(du, midpoint))) lanes.z = odd_arithmetic(x, y, w).z;
      }
      if (Codes::kRange && !hn::AllFalse(d, lanes.out_of_range)) return i;
      VU random_bits = zero;
      if constexpr (kStochastic) {
        random_bits = hn::ShiftLeftSame(hn::And(hn::LoadU(du, random + (i - chunk_begin)), k_mask), random_shift);
      }
      auto result = Codes::template Codes<Mode>(d, lanes.z, random_bits);
      if constexpr (kStochastic) {
        if (!hn::AllFalse(du, Codes::Undecided(du, hn::BitCast(du, lanes.z), random_bits))) return i;
      }
      // The lanes whose result is inexact, of those given.
      auto inexact_of = [&](VU bits, auto given) FPEMU_KERNEL_LAMBDA {
        const auto below = hn::And(given, Codes::Inexact(du, bits, result));
        if constexpr (kZ != lane_z::toward_zero) return below;
        return hn::Or(below, hn::And(given, hn::RebindMask(du, lanes.inexact)));
      };
      if constexpr (!kSettled) {
        const VU bits = hn::BitCast(du, lanes.z), mag = hn::AndNot(sign_bit, bits);
        const auto low = Between(du, mag, 0, Codes::kNormal);
        if (HWY_LIKELY(hn::AllFalse(du, hn::Or(low, SignedGt(mag, big))))) {  // the short way, as HalfRun's
          if (HWY_UNLIKELY(!inexact_seen) && !hn::AllFalse(du, inexact_of(bits, hn::Eq(zero, zero)))) return i;
          hn::StoreU(result, d16, out + i);
          continue;
        }
        const auto finite = SignedGt(infinity, mag);
        auto stop = hn::Not(hn::Eq(zero, zero));
        if (!(seen & flag::overflow)) stop = hn::And(finite, SignedGt(mag, big));
        if constexpr (kZ == lane_z::rounded) {  // (inexact seen) z does not tell a tiny lane's x inexact
          if ((Codes::RoundingFlags(Op) & flag::underflow) && !underflow_seen) stop = hn::Or(stop, low);
        } else if (!inexact_seen || !underflow_seen) {
          const auto inexact = inexact_of(bits, finite);
          stop = hn::Or(stop, inexact_seen ? hn::And(low, inexact) : inexact);
        }
        if (!hn::AllFalse(du, stop)) return i;
      }
      if constexpr (Op == lane_op::div) {
        if (!(seen & flag::divide_by_zero) && !hn::AllFalse(d, lanes.by_zero)) return i;
      }
      // NaN results: found on z (on the codes it cost fp16 sqrt a tenth), put in on the codes (on
      // binary32 lanes, AVX2's fp16 add, div and fma of wide-range data took 1.1-1.15x as long).
      if (nan_step(!hn::AllFalse(d, hn::IsNaN(lanes.z)), (i - start) / L)) {
        const auto nan = nan_codes(result);
        const V16 ca = codes(a), cb = Op != lane_op::sqrt ? codes(b) : hn::Zero(d16);
        const V16 cc = Op == lane_op::fma ? codes(c) : hn::Zero(d16);
        const auto na = nan_codes(ca), nb = nan_codes(cb), nc = nan_codes(cc);
        if (!(seen & flag::invalid)) {  // (OpLanes' rule)
          const auto signaling = [&](V16 code, auto is_nan) FPEMU_KERNEL_LAMBDA {
            return hn::And(is_nan, hn::Eq(hn::And(code, quiet16), hn::Zero(d16)));
          };
          auto invalid = hn::AndNot(hn::Or(na, hn::Or(nb, nc)), nan);
          if constexpr (Op == lane_op::fma) {  // 0 x inf, its lanes narrowed to 16 bits
            const hn::RebindToSigned<decltype(d)> di;
            const auto zero_times_inf = hn::AndNot(hn::Or(hn::IsNaN(x), hn::IsNaN(y)), hn::IsNaN(lanes.product));
            const auto lanes16 = hn::DemoteTo(di16, hn::BitCast(di, hn::VecFromMask(d, zero_times_inf)));
            invalid = hn::Or(invalid, hn::MaskFromVec(hn::BitCast(d16, lanes16)));
          }
          invalid = hn::Or(invalid, hn::Or(signaling(ca, na), hn::Or(signaling(cb, nb), signaling(cc, nc))));
          if (!hn::AllFalse(d16, invalid)) return i;
        }
        // The core's NaN code, signed as the first NaN operand (+ without one).
        const V16 first = hn::IfThenElse(na, ca, hn::IfThenElse(nb, cb, hn::IfThenElseZero(nc, cc)));
        const auto negative = hn::RebindMask(d16, hn::Lt(hn::BitCast(di16, first), hn::Zero(di16)));
        result = hn::IfThenElse(nan, hn::IfThenElse(negative, nan_code_neg, nan_code_pos), result);
      }
      hn::StoreU(result, d16, out + i);
    }
  }
  return i;
}

// The environment's rounding direction set to Mode's while in scope (nearest-even: left as
// op_lanes asks it), for the lanes of one-pass kernels (compiled with -frounding-math: the compiler
// assumes no direction) and nothing else, then put back to nearest-even, as op_lanes found it.
template <round_mode Mode>
class environment_direction {
 public:
  environment_direction() {
    if constexpr (kDirection != FE_TONEAREST) std::fesetround(kDirection);
  }
  ~environment_direction() {
    if constexpr (kDirection != FE_TONEAREST) std::fesetround(FE_TONEAREST);
  }
  environment_direction(const environment_direction&) = delete;
  environment_direction& operator=(const environment_direction&) = delete;

 private:
  static constexpr int kDirection = Mode == round_mode::toward_zero       ? FE_TOWARDZERO
                                    : Mode == round_mode::toward_positive ? FE_UPWARD
                                    : Mode == round_mode::toward_negative ? FE_DOWNWARD
                                                                          : FE_TONEAREST;
};

template <class Codes, lane_op Op, round_mode Mode>
std::size_t OnePassMode(const lane_checks& k, const encode_params<float>& p, std::uint8_t seen, const sr_stream& sr,
                        const std::uint16_t* a, const std::uint16_t* b, const std::uint16_t* c, std::size_t i,
                        std::size_t end, std::uint16_t* out) {
  constexpr std::uint8_t kFlags = Codes::RoundingFlags(Op);
  constexpr lane_z kZ = Mode == round_mode::stochastic ? lane_z::toward_zero : lane_z::odd;
  const bool settled = (seen & kFlags) == kFlags;
  // Rounding by the environment first (OnePassRun) needs no more than inexact seen. fma to nearest
  // then looks for midpoints, which gains nothing over rounding to odd where each sum is rounded
  // as asked (kEmbeddedRounding: AVX3 fma 0.91-1.04x as fast with the test,
  // bench/results/elementwise-fma-midpoints-2026-12-01-xeon.md).
  constexpr bool kRounded = Mode != round_mode::stochastic &&
                            !(kEmbeddedRounding && Op == lane_op::fma && Mode == round_mode::nearest_even);
  if constexpr (kRounded) {
    if (seen & flag::inexact) {
      const environment_direction<Mode> direction;
      if (settled) return OnePassRun<Codes, Op, Mode, true, lane_z::rounded>(k, p, seen, sr, a, b, c, i, end, out);
      return OnePassRun<Codes, Op, Mode, false, lane_z::rounded>(k, p, seen, sr, a, b, c, i, end, out);
    }
  }
  if (settled) return OnePassRun<Codes, Op, Mode, true, kZ>(k, p, seen, sr, a, b, c, i, end, out);
  return OnePassRun<Codes, Op, Mode, false, kZ>(k, p, seen, sr, a, b, c, i, end, out);
}

// Calls fn(codes, Mode) where the one pass serves f and r's mode on this target (the caller has
// checked the rest); returns false elsewhere.
template <class Fn>
bool WithCodes(const format& f, const rounding& r, Fn fn) {
  auto in_mode = [&](auto codes) {
    auto call = [&](auto mode) {
      fn(codes, mode);
      return true;
    };
    using m = round_mode;
    switch (r.mode) {
      case m::nearest_even: return call(std::integral_constant<m, m::nearest_even>());
      case m::toward_zero: return call(std::integral_constant<m, m::toward_zero>());
      case m::toward_positive: return call(std::integral_constant<m, m::toward_positive>());
      case m::toward_negative: return call(std::integral_constant<m, m::toward_negative>());
      case m::stochastic: return r.sr_bits <= 16 && call(std::integral_constant<m, m::stochastic>());
      default: return false;
    }
  };
  if constexpr (fp16_codes::kServes) {
    if (f == formats::fp16) return in_mode(fp16_codes());
  }
  if constexpr (bf16_codes::kServes) {
    if (f == formats::bf16) return in_mode(bf16_codes());
  }
  return false;
}

bool OnePassOps(const format& f, const rounding& r) {
  bool agrees = false;
  const bool served = WithCodes(f, r, [&](auto codes, auto mode) {
    // (Stochastically, with every random bit set: the largest finite binary32 value overflows.)
    agrees = RoundingAgrees(params_for<float>(f, r), [](auto d, auto z) HWY_ATTR {
      return decltype(codes)::template Codes<decltype(mode)::value>(d, z, hn::Set(hn::RebindToUnsigned<decltype(d)>(),
                                                                                  0xffffu));
    });
  });
  return served && agrees;
}

std::size_t OnePassOp(lane_op op, const format& f, const rounding& r, const lane_checks& k, const sr_stream& sr,
                      const std::uint16_t* a, const std::uint16_t* b, const std::uint16_t* c, std::size_t i,
                      std::size_t end, std::uint16_t* out, std::uint8_t seen) {
  const encode_params<float>& p = params_for<float>(f, r);
  WithCodes(f, r, [&](auto codes, auto mode) {
    using C = decltype(codes);
    constexpr round_mode M = decltype(mode)::value;
    switch (op) {
      case lane_op::add: i = OnePassMode<C, lane_op::add, M>(k, p, seen, sr, a, b, c, i, end, out); break;
      case lane_op::sub: i = OnePassMode<C, lane_op::sub, M>(k, p, seen, sr, a, b, c, i, end, out); break;
      case lane_op::mul: i = OnePassMode<C, lane_op::mul, M>(k, p, seen, sr, a, b, c, i, end, out); break;
      case lane_op::div: i = OnePassMode<C, lane_op::div, M>(k, p, seen, sr, a, b, c, i, end, out); break;
      case lane_op::fma: i = OnePassMode<C, lane_op::fma, M>(k, p, seen, sr, a, b, c, i, end, out); break;
      case lane_op::sqrt: i = OnePassMode<C, lane_op::sqrt, M>(k, p, seen, sr, a, b, c, i, end, out); break;
    }
  });
  return i;
}

template <class T>
std::size_t Op(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
               const lane_checks& k, T* out, std::uint32_t* special, code_sink codes, std::uint8_t* raised) {
  switch (op) {
    case lane_op::add: return OpLanes<lane_op::add>(f, a, b, c, n, k, out, special, codes, raised);
    case lane_op::sub: return OpLanes<lane_op::sub>(f, a, b, c, n, k, out, special, codes, raised);
    case lane_op::mul: return OpLanes<lane_op::mul>(f, a, b, c, n, k, out, special, codes, raised);
    case lane_op::div: return OpLanes<lane_op::div>(f, a, b, c, n, k, out, special, codes, raised);
    case lane_op::fma: return OpLanes<lane_op::fma>(f, a, b, c, n, k, out, special, codes, raised);
    case lane_op::sqrt: return OpLanes<lane_op::sqrt>(f, a, b, c, n, k, out, special, codes, raised);
  }
  return 0;
}

// The index of the entry of operands x, y, z in t (result_table_view): their low bytes, and for
// three the row of (x, y).
template <int kOperands, class Code>
HWY_INLINE unsigned EntryIndex(const result_table_view& t, Code x, Code y, Code z) {
  unsigned index = x & 0xffu;
  if constexpr (kOperands >= 2) index = index << 8 | (y & 0xffu);
  if constexpr (kOperands == 3) index = unsigned{t.rows[index]} << 8 | (z & 0xffu);
  return index;
}

// With random bits, each lane's entry (code | flags << 8) out of its index's four
// (result_table_view): the last one's code where the lane's random value r is above code_from,
// else the first one's, and likewise its flags by flags_from (bits above 16 in `first` and `last`
// are ignored).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Pick(D d, V r, V first, V last, V code_from, V flags_from) {
  const V code = hn::IfThenElse(hn::Gt(r, code_from), last, first);
  const V flags = hn::IfThenElse(hn::Gt(r, flags_from), last, first);
  return hn::Or(hn::And(code, hn::Set(d, 0xff)), hn::And(flags, hn::Set(d, 0xff00)));
}

// The entries of (a[i], b[i], c[i]) in t for i in [0, n), on the low byte of each code (Code wide
// or a byte): the low bytes to out, the high ones to flags (if not null); returns the union of the
// high bytes. Below AVX2, for one operand without random bits, and for two or three without them
// where `gathers` is false, eight entries a step, read one by one and split into result and flag
// bytes in one vector (a byte store per result and flag byte ran SSE4's e4m3fn add at 0.47 of
// memcpy's element rate, this 0.6); AVX2 and AVX-512 gather the others (below). Which is faster
// depends on the CPU (look_up's table_reads::by_cpu): on a Zen 5 core the gathers read about 0.7
// elements a cycle, and these loads ran 0.98-1.15x as fast for pairs, 1.03-1.36x for fma's two
// levels and 1.5-2.2x for one operand (bench/results/elementwise-2026-11-30b-zen5.md); on a Zen 4
// core fma 1.0-1.7x as fast (median 1.4) on AVX-512 and AVX2, pairs alike on AVX-512 and 1.0-1.3x
// on AVX2 (bench/results/elementwise-fp8-table-loads-2026-12-02-zen4-lib-ab.md); on the Emerald
// Rapids Xeon the gathers ran pairs 1.1-2.1x and fma 1.1-1.5x as fast as these loads
// (bench/results/elementwise-fp8-gather-2026-12-01-xeon.md), with random bits 1.9x. With random
// bits the Zen 4's gathers ran 1.2-2.3x as fast as these loads, and on AVX-512 1.16x as fast in
// median as the same vector loop with the words loaded one by one (on AVX2 alike), so they gather
// everywhere (the same Zen 4 record).
// kRandom: the table's word an index (result_table_view), from which element i's random value r
// (random[i]'s low k bits) picks its entry, or, where a vector holds a word with bit 15 set, the
// four entries, of which r picks the code and the flags. Reading one word instead of the four
// entries ran e4m3fn and e5m2 add, mul, div and sqrt in sr16 1.3-1.6x as fast on AVX2, 1.0-1.3x
// on AVX-512, alike on SSE4, whose keystream takes most of the time (bench/results/elementwise-fp8-
// sr16-word-2026-12-01-xeon.md).
template <int kOperands, bool kRandom, class Code>
std::uint8_t LookUpAs(const result_table_view& t, const Code* a, const Code* b, const Code* c, std::size_t n,
                      Code* out, std::uint8_t* flags, const std::uint32_t* random, [[maybe_unused]] bool gathers) {
  const std::uint32_t k_mask = (std::uint32_t{1} << t.random_bits) - 1;
  auto entry_of = [&](std::size_t j) -> unsigned {
    const unsigned index = EntryIndex<kOperands>(t, a[j], b[j], c[j]);
    if constexpr (!kRandom) {
      return t.entries[index];
    } else {
      const std::uint16_t* e = t.entries + 4 * std::size_t{index};
      const std::uint32_t r = random[j] & k_mask;
      return ((r > e[2] ? e[1] : e[0]) & 0xffu) | ((r > e[3] ? e[1] : e[0]) & 0xff00u);
    }
  };
  std::size_t i = 0;
  unsigned all = 0;
#if HWY_TARGET <= HWY_AVX2
  // A vector of entries by gathers (fma: its rows first), each lane's pick with random bits by a
  // compare. For the four entries AVX-512 gathers those of an index as one 64-bit word and splits
  // results from last random values by shuffles, AVX2 gathers each half as a 32-bit word, where
  // those shuffles cost more (e4m3fn add and sqrt in sr16 on the Emerald Rapids Xeon, bench_round:
  // AVX-512 1.1-1.3x as fast as by 32-bit gathers, AVX2 0.87x). A 16-bit entry or row comes with
  // the next one in a 32-bit word (the tables end in a spare one), eight lanes a step on AVX-512
  // too: with sixteen, fma's two dependent gathers ran 0.65-0.95x as fast, and with eight the
  // random picks 0.7-0.8x. One operand without random bits keeps the loads below: its 256 entries
  // stay in the L1 cache, and AVX-512's gathers ran sqrt at 0.64-0.88x (lib_ab).
  if constexpr (kRandom || kOperands >= 2) {
    using D32 = std::conditional_t<kRandom, hn::ScalableTag<std::uint32_t>, hn::CappedTag<std::uint32_t, 8>>;
    const D32 d32;
    const hn::RebindToSigned<decltype(d32)> di32;
    const hn::Rebind<Code, decltype(d32)> dc;
    const hn::Rebind<std::uint8_t, decltype(d32)> d8;
    const std::size_t L = hn::Lanes(d32);
    const hn::Repartition<std::int64_t, decltype(d32)> di64;
    const hn::Half<decltype(di32)> dh;
    const auto* quads = reinterpret_cast<const std::int64_t*>(t.entries);
    const auto* words = reinterpret_cast<const std::int32_t*>(t.entries);
    const auto* rows = reinterpret_cast<const std::int32_t*>(t.rows);
    const auto* packed = reinterpret_cast<const std::int32_t*>(t.words);
    const auto byte = hn::Set(d32, 0xffu), low = hn::Set(d32, 0xffffu), mask = hn::Set(d32, k_mask);
    auto index_of = [&](const Code* p) FPEMU_KERNEL_LAMBDA {
      if constexpr (sizeof(Code) == 4) return hn::And(hn::LoadU(d32, p + i), byte);
      else return hn::And(hn::PromoteTo(d32, hn::LoadU(dc, p + i)), byte);
    };
    // The 16-bit element at `index` of the array at `base`.
    auto gather16 = [&](const std::int32_t* base, hn::Vec<decltype(d32)> index) FPEMU_KERNEL_LAMBDA {
      return hn::And(hn::BitCast(d32, hn::GatherOffset(di32, base, hn::BitCast(di32, hn::Add(index, index)))), low);
    };
    auto seen = hn::Zero(d32);
    for (; (kRandom || gathers) && i + L <= n; i += L) {
      auto index = index_of(a);
      if constexpr (kOperands >= 2) index = hn::Or(hn::ShiftLeft<8>(index), index_of(b));
      if constexpr (kOperands == 3) index = hn::Or(hn::ShiftLeft<8>(gather16(rows, index)), index_of(c));
      hn::Vec<decltype(d32)> entry;
      if constexpr (kRandom) {
        const auto at = hn::BitCast(di32, index);
        const auto r = hn::And(hn::LoadU(d32, random + i), mask);
        const auto word = hn::GatherIndex(di32, packed, at);
        // first + (r > code_from), minus the compare's all-ones mask; of 16-bit values in 32-bit
        // lanes (code_from shifted down as unsigned), so the signed compare serves
        const auto code_from = hn::BitCast(di32, hn::ShiftRight<16>(hn::BitCast(d32, word)));
        const auto steps = hn::VecFromMask(di32, hn::Gt(hn::BitCast(di32, r), code_from));
        entry = hn::BitCast(d32, hn::Sub(hn::And(word, hn::BitCast(di32, low)), steps));
        if (HWY_UNLIKELY(!hn::AllFalse(di32, hn::TestBit(word, hn::Set(di32, 0x8000))))) {
          hn::Vec<decltype(d32)> results, last_of_first;  // (first | last << 16, code_from | flags_from << 16)
          if constexpr (HWY_TARGET <= HWY_AVX3) {
            const auto lower =
                hn::BitCast(d32, hn::GatherIndex(di64, quads, hn::PromoteTo(di64, hn::LowerHalf(dh, at))));
            const auto upper =
                hn::BitCast(d32, hn::GatherIndex(di64, quads, hn::PromoteTo(di64, hn::UpperHalf(dh, at))));
            results = hn::ConcatEven(d32, upper, lower);
            last_of_first = hn::ConcatOdd(d32, upper, lower);
          } else {
            const auto halves = hn::ShiftLeft<1>(at);
            results = hn::BitCast(d32, hn::GatherIndex(di32, words, halves));
            last_of_first = hn::BitCast(d32, hn::GatherIndex(di32, words + 1, halves));
          }
          entry = Pick(d32, r, results, hn::ShiftRight<16>(results), hn::And(last_of_first, low),
                       hn::ShiftRight<16>(last_of_first));
        }
      } else {
        entry = gather16(words, index);
      }
      seen = hn::Or(seen, entry);
      const auto codes = hn::BitCast(di32, hn::And(entry, byte));
      if constexpr (sizeof(Code) == 4) hn::StoreU(hn::BitCast(d32, codes), d32, out + i);
      else hn::StoreU(hn::DemoteTo(dc, codes), dc, out + i);
      if (flags) hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, hn::ShiftRight<8>(entry))), d8, flags + i);
    }
    HWY_ALIGN std::uint32_t seen_lanes[HWY_MAX_BYTES / 4];
    hn::Store(seen, d32, seen_lanes);
    for (std::size_t j = 0; j < L; ++j) all |= seen_lanes[j];
  }
#endif
#if HWY_TARGET != HWY_SCALAR
  const hn::Full128<std::uint16_t> d16;
  const hn::Rebind<std::uint8_t, decltype(d16)> d8;
  auto union_bits = hn::Zero(d16);
  // The low bytes of eight codes of at most 16 bits, in 16-bit lanes (two operands, below).
  auto low_bytes = [&](const Code* p) FPEMU_KERNEL_LAMBDA {
    if constexpr (sizeof(Code) == 1) return hn::PromoteTo(d16, hn::LoadU(d8, p + i));
    else if constexpr (sizeof(Code) == 2) return hn::And(hn::LoadU(d16, p + i), hn::Set(d16, 0xff));
  };
  for (; i + 8 <= n; i += 8) {
    HWY_ALIGN std::uint16_t entry[8];
    hn::Vec<decltype(d16)> entries;
    if constexpr (kRandom) {  // the picks in lanes (as branches they mispredicted half the time)
      HWY_ALIGN std::uint16_t halves[16], r[8];
      unsigned at[8];
      for (std::size_t j = i; j < i + 8; ++j) {
        at[j - i] = EntryIndex<kOperands>(t, a[j], b[j], c[j]);
        std::memcpy(halves + 2 * (j - i), t.words + at[j - i], 4);
        r[j - i] = static_cast<std::uint16_t>(random[j] & k_mask);
      }
      const auto rv = hn::Load(d16, r);
      hn::Vec<decltype(d16)> first, code_from;
      hn::LoadInterleaved2(d16, halves, first, code_from);
      entries = hn::Sub(first, hn::VecFromMask(d16, hn::Gt(rv, code_from)));
      if (HWY_UNLIKELY(!hn::AllFalse(d16, hn::TestBit(first, hn::Set(d16, 0x8000))))) {
        HWY_ALIGN std::uint16_t quads[32];
        for (std::size_t j = 0; j < 8; ++j) std::memcpy(quads + 4 * j, t.entries + 4 * std::size_t{at[j]}, 8);
        hn::Vec<decltype(d16)> last, flags_from;
        hn::LoadInterleaved4(d16, quads, first, last, code_from, flags_from);
        entries = Pick(d16, rv, first, last, code_from, flags_from);
      }
      if constexpr (sizeof(Code) == 4) hn::Store(entries, d16, entry);
    } else if constexpr (kOperands == 2 && sizeof(Code) <= 2) {
      // The indices in lanes, then the entries by loads: pairs 1.04-1.12x as fast in median on the
      // Zen 4's three targets; one operand and fma's two levels that way ran 0.63-0.82x and
      // 0.87-1.15x (bench/results/elementwise-fp8-table-indices-2026-12-02-zen4-lib-ab.md).
      HWY_ALIGN std::uint16_t at[8];
      hn::Store(hn::Or(hn::ShiftLeft<8>(low_bytes(a)), low_bytes(b)), d16, at);
      for (std::size_t j = 0; j < 8; ++j) entry[j] = t.entries[at[j]];
      entries = hn::Load(d16, entry);
    } else {
      for (std::size_t j = i; j < i + 8; ++j) entry[j - i] = static_cast<std::uint16_t>(entry_of(j));
      entries = hn::Load(d16, entry);
    }
    union_bits = hn::Or(union_bits, entries);
    if constexpr (sizeof(Code) == 1) {
      hn::StoreU(hn::TruncateTo(d8, entries), d8, out + i);
    } else if constexpr (sizeof(Code) == 2) {
      hn::StoreU(hn::And(entries, hn::Set(d16, 0xff)), d16, out + i);
    } else {
      for (std::size_t j = 0; j < 8; ++j) out[i + j] = entry[j] & 0xffu;
    }
    if (flags) hn::StoreU(hn::TruncateTo(d8, hn::ShiftRight<8>(entries)), d8, flags + i);
  }
  HWY_ALIGN std::uint16_t lanes[8];
  hn::Store(union_bits, d16, lanes);
  for (const unsigned lane : lanes) all |= lane;
#endif
  for (; i < n; ++i) {
    const unsigned entry = entry_of(i);
    out[i] = static_cast<Code>(entry & 0xffu);
    if (flags) flags[i] = static_cast<std::uint8_t>(entry >> 8);
    all |= entry;
  }
  return static_cast<std::uint8_t>(all >> 8);
}

template <class Code>
std::uint8_t LookUpWidth(const result_table_view& t, code_source a, code_source b, code_source c, std::size_t n,
                         code_sink out, std::uint8_t* flags, const std::uint32_t* random, bool gathers) {
  const auto* x = static_cast<const Code*>(a.data);
  const auto* y = static_cast<const Code*>(b.data);
  const auto* z = static_cast<const Code*>(c.data);
  auto* o = static_cast<Code*>(out.data);
  if (t.random_bits) {
    if (t.operands == 1) return LookUpAs<1, true>(t, x, y, z, n, o, flags, random, gathers);
    if (t.operands == 2) return LookUpAs<2, true>(t, x, y, z, n, o, flags, random, gathers);
    return LookUpAs<3, true>(t, x, y, z, n, o, flags, random, gathers);
  }
  if (t.operands == 1) return LookUpAs<1, false>(t, x, y, z, n, o, flags, random, gathers);
  if (t.operands == 2) return LookUpAs<2, false>(t, x, y, z, n, o, flags, random, gathers);
  return LookUpAs<3, false>(t, x, y, z, n, o, flags, random, gathers);
}

std::uint8_t LookUp(const result_table_view& t, code_source a, code_source b, code_source c, std::size_t n,
                    code_sink out, std::uint8_t* flags, const std::uint32_t* random, bool gathers) {
  if (a.bytes == 1) return LookUpWidth<std::uint8_t>(t, a, b, c, n, out, flags, random, gathers);
  if (a.bytes == 2) return LookUpWidth<std::uint16_t>(t, a, b, c, n, out, flags, random, gathers);
  return LookUpWidth<std::uint32_t>(t, a, b, c, n, out, flags, random, gathers);
}

std::size_t OpFloats(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
                     const lane_checks& k, float* out, std::uint32_t* special, code_sink codes, std::uint8_t* raised) {
  return Op(op, f, a, b, c, n, k, out, special, codes, raised);
}

std::size_t OpDoubles(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
                      const lane_checks& k, double* out, std::uint32_t* special, code_sink codes,
                      std::uint8_t* raised) {
  return Op(op, f, a, b, c, n, k, out, special, codes, raised);
}

}  // namespace fpemu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::simd {

HWY_EXPORT(OpFloats);
HWY_EXPORT(OpDoubles);
HWY_EXPORT(LookUp);
HWY_EXPORT(OnePassOps);
HWY_EXPORT(OnePassOp);

namespace {

// Whether every pair (triple) of finite values of f meets the ranges the top of this file asks
// of binary32 lanes, so that the kernel need not check them lane by lane: lo = emin - frac_bits
// is the exponent of f's smallest subnormal, values lie below 2^hi.
bool lanes_in_range(lane_op op, const format& f) {
  constexpr int kMinNormal = -126, kMaxExponent = 128;  // binary32
  const int lo = emin(f) - f.frac_bits, hi = emax(f) + 1;
  const bool product_normal = 2 * lo >= kMinNormal && 2 * hi <= kMaxExponent;
  switch (op) {
    case lane_op::add:
    case lane_op::sub: return hi + 1 <= kMaxExponent;
    case lane_op::mul: return product_normal;
    case lane_op::fma: return product_normal && 2 * hi + 1 <= kMaxExponent;
    case lane_op::div: return lo - hi >= kMinNormal && hi - lo < kMaxExponent && lo >= f.frac_bits - 125;
    case lane_op::sqrt: return lo >= -102;
  }
  return false;
}

// Whether every sum of two finite values of f is exact in lanes of t bits (the top of this file;
// a sum beyond binary32's range is still caught by the range check, where lanes_in_range fails).
bool sums_exact(const format& f, int t) {
  const int lo = emin(f) - f.frac_bits, hi = emax(f) + 1;
  return hi + 1 - lo <= t;
}

// Whether lanes of t bits keep what rounding into f by r reads (the top of this file); `exact`:
// the lanes' results are the exact ones.
bool precise_enough(const format& f, const rounding& r, int t, bool exact) {
  const int P = f.frac_bits + 1;
  return P + 2 <= t && (r.mode != round_mode::stochastic || P + std::clamp(r.sr_bits, 1, 32) <= t - (exact ? 0 : 1));
}

lane_checks checks_for(lane_op op, const format& f, const rounding& r, bool binary32) {
  lane_checks k;
  k.negative_zero_sum = r.mode == round_mode::toward_negative;
  k.exact_only = r.mode == round_mode::stochastic_exact;
  k.exact_sums = (op == lane_op::add || op == lane_op::sub) && sums_exact(f, binary32 ? 24 : 53);
  k.range = binary32 && !lanes_in_range(op, f);
  k.min_operand = std::ldexp(1.0, op == lane_op::div ? f.frac_bits - 125 : -102);
  k.list_infinite_quotients = round(f, unpacked{value_class::infinite, false}, r).flags != 0;
  return k;
}

}  // namespace

op_path op_lanes(lane_op op, const format& f, const rounding& r) {
  if (!values_are_floats(f) || !rounds_to_nearest() || !keeps_subnormals()) return op_path::core;
  // Binary32 lanes: products of two P-bit values exact in 24 bits, so every product the lanes
  // round (the others go to the core) is exact, as is every sum where sums_exact.
  const bool exact = op == lane_op::mul || ((op == lane_op::add || op == lane_op::sub) && sums_exact(f, 24));
  if (can_encode(f, r, false) && 2 * (f.frac_bits + 1) <= 24 && precise_enough(f, r, 24, exact))
    return op_path::binary32;
  if (r.mode != round_mode::stochastic_exact && can_encode(f, r, true) && precise_enough(f, r, 53, false))
    return op_path::binary64;
  return op_path::core;
}

std::size_t op_floats(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
                      const rounding& r, float* out, std::uint32_t* special, code_sink codes, std::uint8_t* raised) {
  return HWY_DYNAMIC_DISPATCH(OpFloats)(op, f, a, b, c, n, checks_for(op, f, r, true), out, special, codes, raised);
}

std::size_t op_doubles(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
                       const rounding& r, double* out, std::uint32_t* special, code_sink codes, std::uint8_t* raised) {
  return HWY_DYNAMIC_DISPATCH(OpDoubles)(op, f, a, b, c, n, checks_for(op, f, r, false), out, special, codes,
                                         raised);
}

bool one_pass_ops(lane_op op, const format& f, const rounding& r) {
  return op_lanes(op, f, r) != op_path::core && HWY_DYNAMIC_DISPATCH(OnePassOps)(f, r);
}

std::size_t one_pass_op(lane_op op, const format& f, const rounding& r, const sr_stream& sr, const std::uint16_t* a,
                        const std::uint16_t* b, const std::uint16_t* c, std::size_t i, std::size_t end,
                        std::uint16_t* out, std::uint8_t seen) {
  return HWY_DYNAMIC_DISPATCH(OnePassOp)(op, f, r, checks_for(op, f, r, true), sr, a, b, c, i, end, out, seen);
}

std::uint8_t look_up(const result_table_view& table, code_source a, code_source b, code_source c, std::size_t n,
                     code_sink out, std::uint8_t* flags, const std::uint32_t* random, table_reads reads) {
  // By CPU (LookUpAs): the loads on AMD's cores, where they ran as fast as the gathers or faster
  // (Zen 4, Zen 5), the gathers elsewhere (faster on the Emerald Rapids Xeon).
#if HWY_ARCH_X86
  static const bool amd = __builtin_cpu_is("amd");
#else
  constexpr bool amd = false;
#endif
  const bool gathers = reads == table_reads::gathers || (reads == table_reads::by_cpu && !amd);
  return HWY_DYNAMIC_DISPATCH(LookUp)(table, a, b, c, n, out, flags, random, gathers);
}

}  // namespace fpemu::simd
#endif
