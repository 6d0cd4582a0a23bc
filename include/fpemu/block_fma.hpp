// The block fused multiply-add model of a tensor-core or matrix-core instruction:
// D = round_acc(C + sum a_i*b_i) over one block of n products, computed the way the hardware does
// it rather than exactly. One model, its variants named fields (Xie et al., arXiv 2511.10909,
// derive nine arithmetic algorithms for ten GPU architectures; each is a setting of these fields,
// see src/presets.cpp).
//
// Model (Fasi, Higham, Mikaitis, Pranesh, PeerJ CS 2021; Khattak & Mikaitis, ACM TACO 2025 and
// arXiv 2512.07004; Xie et al. 2025), validated bit for bit against real GPU outputs:
//  1. NaN in, inf*0, or +inf and -inf together give NaN; otherwise any infinity is the result.
//     A NaN block scale gives NaN. With product_overflow, a finite product at or above the
//     accumulator's overflow threshold counts as an infinity here.
//  2. Inputs are decoded with the format's minimum exponent for subnormals; zero products drop out.
//  3. Products are exact and NOT normalised: significand m_a*m_b in [0, 4), exponent e_a + e_b.
//     C takes part like a product, with its own exponent. Block scales (scale_block > 0) add
//     their exponents to the product's and multiply its significand by theirs; with scale_group
//     G, each group of G products is first summed exactly and scaled, and enters as ONE term
//     whose exponent is the scales' exponent sum, however large the group sum is.
//  4. The reference exponent E is the largest exponent among the non-zero terms, clamped from
//     below by min_reference_exp (Xie et al.'s e_zero: a zero term takes part with that
//     exponent, and C, when it is a term, is never below it, so the clamp is the same thing).
//  5. Every term is aligned to F fraction bits below 2^E and rounded there on its own, by default
//     truncating its magnitude (no guard, round or sticky bits):  q = floor(|m| * 2^(F + e - E)).
//     With interleave = 2 the products of even and odd index form two such sums, each with its
//     own E, which are then rounded down to F bits below the larger E and added.
//  6. The integer sum is exact; it is normalised once and rounded once into the accumulator
//     format (round toward zero into fp32 or the 14-bit register e8m13, nearest-even into fp16).
//     Two-stage (second_frac_bits = F2 > 0, AMD CDNA3): C is not a term in 4-5. The product sum
//     and C are aligned to E' = max(E, e_C): the product sum rounded down to F2 + 1 fraction
//     bits, C rounded down to F bits (or dropped, with drop_far_c, when e_C < E' - F - 1); their
//     exact sum is normalised, rounded down to F2 fraction bits, and only then rounded into acc.
//
//       term:    1x.xxxxxxxxxxxxxx|xxxx       <- bits below 2^(E-F) are dropped, per term
//       ref:  2^E ^              ^ 2^(E-F)
//
// Two other sums replace steps 1-6:
//  - sum = exact: C + the products exactly, rounded once into acc (AMD CDNA1, Xie et al.'s E-FDPA).
//  - sum = pairwise: each product rounded into acc, the block added as a pairwise tree of acc
//    additions ((p0+p1)+(p2+p3)), then C + that; IEEE arithmetic throughout, every result flushed
//    to zero when output_subnormals is false (AMD CDNA2, FTZ-MUL-ADD).
//
// The instruction's C starts a chain of steps. It is read as every step's C is, except that with
// first_c_as_operand the hardware reads it as it reads A and B (AMD CDNA2: with input_subnormals
// false, a zero or subnormal C, -0 included, is +0). Each step's result is the next step's C as it
// stands. first_c() applies this; dot_accumulator::reset calls it.
//
// Everything here is integer arithmetic and constexpr; every rounding is the core's.
#pragma once

#include <cstdint>
#include <string_view>

#include "fpemu/config.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/detail/bits.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/format.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/round_core.hpp"
#include "fpemu/rounding.hpp"
#include "fpemu/status.hpp"
#include "fpemu/unpacked.hpp"

namespace fpemu {

// How an aligned term loses the bits below 2^(E-F).
enum class alignment_rounding : std::uint8_t {
  truncate,  // magnitude toward zero, term by term (what the measured hardware does)
  down,      // toward -infinity (a two's-complement right shift)
  nearest,   // to nearest, ties to even
  up,        // toward +infinity
};

// The sign of a zero result.
enum class zero_sign : std::uint8_t {
  positive,  // always +0, also when a non-zero sum rounds to zero (NVIDIA; Xie et al. 2025)
  ieee,      // as an IEEE sum in the accumulator's mode: -0 when every term is -0, or under
             // round toward negative when non-zero terms cancel; an underflow keeps its sign
  exact_positive,  // +0 when the exact sum is zero, -0 terms included; an underflow keeps its
                   // sign (AMD CDNA1 in Xie et al.'s model)
};

// How a block's products are combined (see the model above).
enum class block_sum : std::uint8_t {
  aligned,   // steps 1-6: aligned, individually rounded terms, one exact integer sum
  exact,     // the exact sum, rounded once
  pairwise,  // products and a pairwise tree of additions, each rounded into acc
};

// The sum's name, as the CLI's preset table and Python's presets() print it.
constexpr std::string_view to_string(block_sum s) {
  switch (s) {
    case block_sum::exact: return "exact";
    case block_sum::pairwise: return "pairwise";
    case block_sum::aligned: break;
  }
  return "aligned";
}

// The datapath limits: check_model (analysis/reference/summation.cpp) holds user-built models to them.
inline constexpr int max_block_frac_bits = 60;
inline constexpr int max_block_size = 1 << 16;
inline constexpr int max_pairwise_block = 64;

struct block_fma_model {
  int block_size = 16;  // products per block step (n)
  int frac_bits = 25;   // F: fraction bits kept below 2^E
  alignment_rounding alignment = alignment_rounding::truncate;
  format acc = formats::fp32;  // the accumulator between blocks; also D's format
  rounding acc_rounding{round_mode::toward_zero, overflow_policy::ieee, 16};
  // E = max(E, min_reference_exp); the default never clamps.
  int min_reference_exp = -(1 << 20);
  // false: subnormal inputs read as +0, and so does a zero A or B of either sign; C only when
  // subnormal (a -0 passed between blocks keeps its sign), the first C as first_c_as_operand says
  bool input_subnormals = true;
  // true: the C a chain starts from (the instruction's C) is read as A and B are, so a zero or
  // subnormal one is +0 when input_subnormals is false (AMD CDNA2; first_c() below)
  bool first_c_as_operand = false;
  bool output_subnormals = true;  // false: subnormal results are flushed to zero (sign kept)
  zero_sign zero = zero_sign::positive;
  block_sum sum = block_sum::aligned;
  int interleave = 1;         // aligned: 2 = even and odd products summed apart (step 5)
  int second_frac_bits = 0;   // aligned: F2 > 0 = two-stage, C added after the products (step 6)
  bool drop_far_c = false;    // two-stage: C dropped when e_C < E' - F - 1
  bool product_overflow = false;  // a product beyond acc's range is an infinity (step 1)
  int scale_block = 0;        // products per pair of block scales; 0 = unscaled
  int scale_group = 0;        // > 0: products summed exactly in groups of this many (step 3)
  bool overflow_infinite = false;  // an overflow gives infinity in every rounding direction
  bool all_ones_nan = false;  // a NaN result is +NaN with all fraction bits set (0x7fffffff)

  friend constexpr bool operator==(const block_fma_model&, const block_fma_model&) = default;
};

// The block scales of one step, one pair per scale_block products: e8m0fnu codes (MX), or
// e4m3fn codes read as unsigned UE4M3 (NVFP4: the sign bit is ignored, as by the hardware).
struct block_scales {
  format fmt = formats::e8m0fnu;
  const std::uint32_t* a = nullptr;
  const std::uint32_t* b = nullptr;
};

namespace detail {

// One term on its way into the block sum: value = (-1)^negative * sig * 2^lsb, and `lead` the
// exponent the alignment is measured from (e_a + e_b for a product, not normalised).
struct block_term {
  bool negative = false;
  u128 sig = 0;
  int lsb = 0;
  int lead = 0;
};

FPEMU_HD constexpr bool is_subnormal(const format& f, const unpacked& u) {
  return u.cls == value_class::finite && u.sig < (u128{1} << f.frac_bits);
}

// Rounds sig * 2^-shift (shift > 0) to an integer by the alignment rule, on the signed value.
FPEMU_HD constexpr u128 align_down(u128 sig, int shift, bool negative, alignment_rounding rule, bool& lost) {
  if (shift >= 128) {
    lost = sig != 0;
    const bool up = sig != 0 && ((rule == alignment_rounding::down && negative) ||
                                 (rule == alignment_rounding::up && !negative));
    return up ? 1 : 0;
  }
  const u128 m = sig >> shift;
  const u128 rem = sig & ((u128{1} << shift) - 1);
  lost = rem != 0;
  if (rem == 0) return m;
  const u128 half = u128{1} << (shift - 1);
  bool up = false;
  switch (rule) {
    case alignment_rounding::truncate: up = false; break;
    case alignment_rounding::down: up = negative; break;
    case alignment_rounding::up: up = !negative; break;
    case alignment_rounding::nearest: up = rem > half || (rem == half && (m & 1) != 0); break;
  }
  return m + (up ? 1 : 0);
}

// A signed fixed-point value v * 2^from moved to the quantum 2^to, rounded down (floor) when
// to > from; `lost` is set when bits fall off.
FPEMU_HD constexpr i128 requantise_down(i128 v, int from, int to, bool& lost) {
  if (to <= from) return v << (from - to);  // the callers keep this within 127 bits
  const bool negative = v < 0;
  bool dropped = false;
  const u128 q = align_down(negative ? static_cast<u128>(-v) : static_cast<u128>(v), to - from, negative,
                            alignment_rounding::down, dropped);
  lost = lost || dropped;
  return negative ? -static_cast<i128>(q) : static_cast<i128>(q);
}

// The value of a scale code, its sign bit ignored (UE4M3 is E4M3 read without it; E8M0 has none).
FPEMU_HD constexpr unpacked read_scale(const format& f, std::uint32_t code) {
  return decode(f, code & magnitude_mask(f));
}

}  // namespace detail

// The NaN of all_ones_nan in f: +NaN with every exponent and fraction bit set (NVIDIA's 0x7fffffff),
// or f's own NaN where that pattern is not a NaN of f.
FPEMU_HD constexpr std::uint32_t all_ones_nan_code(const format& f) {
  return decode(f, magnitude_mask(f)).cls == value_class::nan ? magnitude_mask(f) : detail::nan_code(f, false);
}

// The C a chain of block steps starts from, given the instruction's C (a code of fc): as it is,
// or with first_c_as_operand read like A and B: +0 when it is zero or a flushed subnormal.
FPEMU_HD constexpr std::uint32_t first_c(const block_fma_model& m, const format& fc, std::uint32_t c) {
  if (!m.first_c_as_operand || m.input_subnormals) return c;
  const unpacked u = decode(fc, c);
  return u.cls == value_class::zero || detail::is_subnormal(fc, u) ? detail::zero_code(fc, false) : c;
}

namespace detail {

// Sets a result to the model's conventions for zero, NaN, overflow and flushing.
FPEMU_HD constexpr rounded finish(const block_fma_model& m, rounded r) {
  const unpacked d = decode(m.acc, r.code);
  if (d.cls == value_class::nan && m.all_ones_nan) r.code = all_ones_nan_code(m.acc);
  if ((r.flags & flag::overflow) != 0 && m.overflow_infinite && d.cls == value_class::finite)
    r.code = inf_code(m.acc, d.negative);
  if (!m.output_subnormals && is_subnormal(m.acc, d))
    r = {zero_code(m.acc, d.negative), static_cast<std::uint8_t>(r.flags | flag::underflow | flag::inexact), 0};
  if (m.zero == zero_sign::positive && decode(m.acc, r.code).cls == value_class::zero) r.code = 0;
  return r;
}

// sum = exact: C + sum a_i*b_i with no rounding before the last.
FPEMU_HD constexpr rounded exact_block(const block_fma_model& m, const format& fa, const std::uint32_t* a,
                                       const format& fb, const std::uint32_t* b, int n, const format& fc,
                                       std::uint32_t c) {
  auto read = [&](const format& f, std::uint32_t code) {
    unpacked u = decode(f, code);
    if (!m.input_subnormals && (is_subnormal(f, u) || u.cls == value_class::zero)) u = unpacked{};
    return u;
  };
  exact_accumulator x;
  unpacked uc = decode(fc, c);
  if (!m.input_subnormals && is_subnormal(fc, uc)) uc = unpacked{};
  x.add(uc);
  for (int i = 0; i < n; ++i) x.add_product(read(fa, a[i]), read(fb, b[i]));
  rounded r = x.round(m.acc, m.acc_rounding);
  if (m.zero == zero_sign::exact_positive && x.is_zero()) r.code = zero_code(m.acc, false);
  return finish(m, r);
}

// sum = pairwise: the tree over v[lo, hi) as a recursive halving, ((p0+p1)+(p2+p3)) for four.
FPEMU_HD constexpr std::uint32_t pairwise_tree(const block_fma_model& m, const std::uint32_t* v, int lo, int hi,
                                               std::uint8_t& flags) {
  if (hi - lo == 1) return v[lo];
  const int mid = lo + (hi - lo) / 2;
  const std::uint32_t l = pairwise_tree(m, v, lo, mid, flags), r = pairwise_tree(m, v, mid, hi, flags);
  const rounded s = finish(m, add(m.acc, l, r, m.acc_rounding));
  flags |= s.flags;
  return s.code;
}

FPEMU_HD constexpr rounded pairwise_block(const block_fma_model& m, const format& fa, const std::uint32_t* a,
                                          const format& fb, const std::uint32_t* b, int n, const format& fc,
                                          std::uint32_t c) {
  // Operands enter acc exactly (the formats this serves are subsets of it), subnormals as +0.
  auto in = [&](const format& f, std::uint32_t code, bool is_c) {
    const unpacked u = decode(f, code);
    if (!m.input_subnormals && (is_subnormal(f, u) || (u.cls == value_class::zero && !is_c)))
      return zero_code(m.acc, false);
    return convert(m.acc, f, code, rounding{round_mode::nearest_even}).code;
  };
  std::uint8_t flags = 0;
  const std::uint32_t c_acc = in(fc, c, true);
  if (n == 0) return {c_acc, 0, 0};
  std::uint32_t p[max_pairwise_block] = {};
  for (int i = 0; i < n; ++i) {
    const rounded r = finish(m, mul(m.acc, in(fa, a[i], false), in(fb, b[i], false), m.acc_rounding));
    flags |= r.flags;
    p[i] = r.code;
  }
  const std::uint32_t tree = pairwise_tree(m, p, 0, n, flags);
  rounded r = finish(m, add(m.acc, c_acc, tree, m.acc_rounding));
  r.flags |= flags;
  return r;
}

}  // namespace detail

// The result of one block step: the rounded value in m.acc, IEEE flags of the final rounding,
// plus flag::inexact when alignment dropped bits.
//
// a, b: n codes of formats fa and fb (n <= m.block_size is allowed: a short last block);
// c: the addend as a code of format fc (usually m.acc, or fp32 for the first block);
// scales: with m.scale_block > 0, one pair per scale_block products (nullptr reads as 1).
FPEMU_HD constexpr rounded block_fma_step(const block_fma_model& m, const format& fa, const std::uint32_t* a,
                                          const format& fb, const std::uint32_t* b, int n, const format& fc,
                                          std::uint32_t c, const block_scales* scales = nullptr) {
  using detail::block_term;
  using detail::i128;
  using detail::u128;
  if (m.sum == block_sum::exact) return detail::exact_block(m, fa, a, fb, b, n, fc, c);
  if (m.sum == block_sum::pairwise) return detail::pairwise_block(m, fa, a, fb, b, n, fc, c);

  auto read = [&](const format& f, std::uint32_t code) {
    unpacked u = decode(f, code);
    if (!m.input_subnormals && (detail::is_subnormal(f, u) || u.cls == value_class::zero)) u = unpacked{};
    return u;
  };
  const bool scaled = m.scale_block > 0 && scales != nullptr;

  // A finite product's true exponent, for product_overflow: lead + 1 when m_a*m_b >= 2.
  auto overflows = [&](const unpacked& ua, const unpacked& ub) {
    const int lead = ua.exp + fa.frac_bits + ub.exp + fb.frac_bits;
    const bool two = ua.sig * ub.sig >= (u128{2} << (fa.frac_bits + fb.frac_bits));
    return lead + (two ? 1 : 0) > emax(m.acc);
  };

  // 1. Special values.
  bool nan = false, pos_inf = false, neg_inf = false;
  const unpacked uc = decode(fc, c);
  if (uc.cls == value_class::nan) nan = true;
  if (uc.cls == value_class::infinite) (uc.negative ? neg_inf : pos_inf) = true;
  for (int i = 0; i < n; ++i) {
    const unpacked ua = decode(fa, a[i]), ub = decode(fb, b[i]);
    if (ua.cls == value_class::nan || ub.cls == value_class::nan) nan = true;
    if (scaled && (detail::read_scale(scales->fmt, scales->a[i / m.scale_block]).cls == value_class::nan ||
                   detail::read_scale(scales->fmt, scales->b[i / m.scale_block]).cls == value_class::nan))
      nan = true;
    const bool inf_a = ua.cls == value_class::infinite, inf_b = ub.cls == value_class::infinite;
    const bool big = m.product_overflow && ua.cls == value_class::finite && ub.cls == value_class::finite &&
                     overflows(ua, ub);
    if (inf_a || inf_b || big) {
      if (ua.cls == value_class::zero || ub.cls == value_class::zero) {
        nan = true;
      } else {
        (ua.negative != ub.negative ? neg_inf : pos_inf) = true;
      }
    }
  }
  auto special = [&](const unpacked& v) { return detail::finish(m, round(m.acc, v, m.acc_rounding)); };
  if (nan || (pos_inf && neg_inf)) return special(unpacked{value_class::nan});
  if (pos_inf || neg_inf) return special(unpacked{value_class::infinite, neg_inf});

  // 2-3. Terms: a product (scaled), or a group of products summed exactly and scaled. Computed
  // again on every pass rather than stored, so that the same code runs on a GPU thread.
  const int group = m.scale_group > 0 ? m.scale_group : 1;
  const int terms = m.scale_group > 0 ? (n + group - 1) / group : n;
  auto term = [&](int t, bool& zero) {
    // (Indexed here, not through a lambda taking the operand: GCC 12's -fsanitize=shift at -O1
    // read B's scale from the wrong index through one.)
    unpacked sa{value_class::finite, false, false, 0, 1}, sb = sa;
    if (scaled) {
      const int si = t * group / m.scale_block;
      sa = detail::read_scale(scales->fmt, scales->a[si]);
      sb = detail::read_scale(scales->fmt, scales->b[si]);
    }
    const bool scale_zero = sa.cls == value_class::zero || sb.cls == value_class::zero;
    const int scale_lead = (sa.exp + (scaled ? scales->fmt.frac_bits : 0)) + (sb.exp + (scaled ? scales->fmt.frac_bits : 0));
    const u128 scale_sig = sa.sig * sb.sig;
    const int scale_lsb = sa.exp + sb.exp;
    if (m.scale_group == 0) {
      const unpacked ua = read(fa, a[t]), ub = read(fb, b[t]);
      zero = ua.cls == value_class::zero || ub.cls == value_class::zero || scale_zero;
      return block_term{ua.negative != ub.negative, zero ? 0 : ua.sig * ub.sig * scale_sig,
                        ua.exp + ub.exp + scale_lsb,
                        ua.exp + fa.frac_bits + ub.exp + fb.frac_bits + scale_lead};
    }
    // The group's exact sum at the smallest product quantum of the two formats.
    const int lsb = (emin(fa) - fa.frac_bits) + (emin(fb) - fb.frac_bits);
    i128 s = 0;
    bool all_zero = true;
    for (int i = t * group; i < n && i < (t + 1) * group; ++i) {
      const unpacked ua = read(fa, a[i]), ub = read(fb, b[i]);
      if (ua.cls == value_class::zero || ub.cls == value_class::zero) continue;
      all_zero = false;
      const i128 p = static_cast<i128>(ua.sig * ub.sig) << (ua.exp + ub.exp - lsb);
      s += ua.negative != ub.negative ? -p : p;
    }
    // A group that cancels to zero still sets E: the hardware aligns it at its scales' exponent.
    zero = all_zero || scale_zero;
    const bool negative = s < 0;
    const u128 mag = negative ? static_cast<u128>(-s) : static_cast<u128>(s);
    return block_term{negative, zero ? 0 : mag * scale_sig, lsb + scale_lsb, scale_lead};
  };
  unpacked cu = decode(fc, c);
  if (!m.input_subnormals && detail::is_subnormal(fc, cu)) cu = unpacked{};
  const bool c_zero = cu.cls == value_class::zero;
  const block_term c_term{cu.negative, cu.sig, cu.exp, cu.exp + fc.frac_bits};
  const bool two_stage = m.second_frac_bits > 0;

  // 4-5. Per sub-sum (k mod interleave): its reference exponent, then its aligned terms added.
  bool lost_any = false;
  bool any_term = false;
  bool all_negative_zero = c_zero && cu.negative;  // for zero_sign::ieee
  auto sub_sum = [&](int sub, bool with_c, int& ref, bool& has_terms) {
    ref = m.min_reference_exp;
    has_terms = with_c && !c_zero;
    if (has_terms && c_term.lead > ref) ref = c_term.lead;
    for (int t = sub; t < terms; t += m.interleave) {
      bool zero = false;
      const block_term x = term(t, zero);
      if (zero) {
        all_negative_zero = all_negative_zero && x.negative;
        continue;
      }
      has_terms = true;
      if (x.lead > ref) ref = x.lead;
    }
    const int quantum = ref - m.frac_bits;
    i128 s = 0;
    auto add_term = [&](const block_term& x) {
      const int shift = quantum - x.lsb;  // > 0: bits fall below the quantum
      u128 q = 0;
      if (shift <= 0) {
        q = x.sig << -shift;  // fits: sig < 2^(lead - lsb + 14), lead <= ref and F <= 60
      } else {
        bool lost = false;
        q = detail::align_down(x.sig, shift, x.negative, m.alignment, lost);
        lost_any = lost_any || lost;
      }
      s += x.negative ? -static_cast<i128>(q) : static_cast<i128>(q);
    };
    if (!has_terms) return s;
    for (int t = sub; t < terms; t += m.interleave) {
      bool zero = false;
      const block_term x = term(t, zero);
      if (!zero) add_term(x);
    }
    if (with_c && !c_zero) add_term(c_term);
    return s;
  };
  int ref = 0;
  i128 sum = 0;
  for (int sub = 0; sub < m.interleave; ++sub) {
    int sub_ref = 0;
    bool has = false;
    const i128 s = sub_sum(sub, !two_stage && sub == 0, sub_ref, has);
    if (!has) continue;
    if (!any_term) {
      ref = sub_ref;
      sum = s;
    } else {
      // Two sub-sums meet at the larger exponent, each rounded down to F bits below it.
      const int to = (sub_ref > ref ? sub_ref : ref) - m.frac_bits;
      sum = detail::requantise_down(sum, ref - m.frac_bits, to, lost_any) +
            detail::requantise_down(s, sub_ref - m.frac_bits, to, lost_any);
      ref = to + m.frac_bits;
    }
    any_term = true;
  }
  int quantum = ref - m.frac_bits;

  // 6 (two-stage). C meets the product sum at E' = max(E, e_C); C's exponent is its format's
  // minimum when it is zero.
  if (two_stage) {
    const int e_c = c_zero ? emin(fc) : c_term.lead;
    const int e_max = any_term && ref > e_c ? ref : e_c;
    const int q = e_max - m.second_frac_bits - 1;
    sum = any_term ? detail::requantise_down(sum, quantum, q, lost_any) : 0;
    if (!c_zero && !(m.drop_far_c && e_c < e_max - m.frac_bits - 1)) {
      const i128 cv = c_term.negative ? -static_cast<i128>(c_term.sig) : static_cast<i128>(c_term.sig);
      sum += detail::requantise_down(detail::requantise_down(cv, c_term.lsb, e_max - m.frac_bits, lost_any),
                                     e_max - m.frac_bits, q, lost_any);
    } else if (!c_zero) {
      lost_any = true;
    }
    any_term = any_term || !c_zero;
    quantum = q;
    if (sum != 0) {  // normalised, rounded down to F2 fraction bits (exponent at least acc's emin)
      const u128 mag = sum < 0 ? static_cast<u128>(-sum) : static_cast<u128>(sum);
      int lead = detail::msb128(mag) + quantum;
      if (lead < emin(m.acc)) lead = emin(m.acc);
      const int to = lead - m.second_frac_bits;
      if (to > quantum) {
        sum = detail::requantise_down(sum, quantum, to, lost_any);
        quantum = to;
      }
    }
  }

  if (any_term) all_negative_zero = false;
  const bool negative_zero =
      m.zero == zero_sign::ieee &&
      (!any_term ? all_negative_zero : m.acc_rounding.mode == round_mode::toward_negative);
  if (sum == 0) {
    rounded z = detail::finish(m, round(m.acc, unpacked{value_class::zero, negative_zero}, m.acc_rounding));
    if (lost_any) z.flags |= flag::inexact;
    return z;
  }
  const bool negative = sum < 0;
  const u128 magnitude = negative ? static_cast<u128>(-sum) : static_cast<u128>(sum);
  rounded r = round(m.acc, make_finite(negative, magnitude, quantum), m.acc_rounding);
  if (lost_any) r.flags |= flag::inexact;
  return detail::finish(m, r);
}

}  // namespace fpemu
