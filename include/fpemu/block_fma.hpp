// The block fused multiply-add model of a tensor-core instruction: D = round_acc(C + sum a_i*b_i)
// over one block of n products, computed the way the hardware does it rather than exactly.
//
// Model (Fasi, Higham, Mikaitis, Pranesh, PeerJ CS 2021; Khattak & Mikaitis, arXiv 2510.15884 and
// 2512.07004; Xie et al., arXiv 2511.10909), validated bit for bit against real GPU outputs:
//  1. NaN in, inf*0, or +inf and -inf together give NaN; otherwise any infinity is the result.
//  2. Inputs are decoded with the format's minimum exponent for subnormals; zero products drop out.
//  3. Products are exact and NOT normalised: significand m_a*m_b in [0, 4), exponent e_a + e_b.
//     C takes part like a product, with its own exponent.
//  4. The reference exponent E is the largest exponent among the non-zero terms (optionally
//     clamped from below).
//  5. Every term is aligned to F fraction bits below 2^E and rounded there on its own, by default
//     truncating its magnitude (no guard, round or sticky bits):  q = floor(|m| * 2^(F + e - E)).
//  6. The integer sum is exact; it is normalised once and rounded once into the accumulator
//     format (round toward zero into fp32 or the 14-bit register e8m13, nearest-even into fp16).
//
//       term:    1x.xxxxxxxxxxxxxx|xxxx       <- bits below 2^(E-F) are dropped, per term
//       ref:  2^E ^              ^ 2^(E-F)
//
// Everything here is integer arithmetic and constexpr; the final rounding is the core's.
#pragma once

#include <cstdint>

#include "fpemu/config.hpp"
#include "fpemu/detail/bits.hpp"
#include "fpemu/format.hpp"
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

// The sign of a block whose exact sum of aligned terms is zero.
enum class zero_sign : std::uint8_t {
  positive,  // always +0 (the published hardware models)
  ieee,      // as an IEEE sum in the accumulator's mode: -0 when every term is -0, or under
             // round toward negative when non-zero terms cancel
};

// Returned by block_fma_model_check for the parameters the integer datapath supports.
inline constexpr int max_block_frac_bits = 60;
inline constexpr int max_block_size = 1 << 16;

struct block_fma_model {
  int block_size = 16;  // products per block step (n)
  int frac_bits = 25;   // F: fraction bits kept below 2^E
  alignment_rounding alignment = alignment_rounding::truncate;
  format acc = formats::fp32;  // the accumulator between blocks; also D's format
  rounding acc_rounding{round_mode::toward_zero, overflow_policy::ieee, 16};
  // E = max(E, min_reference_exp); the default never clamps.
  int min_reference_exp = -(1 << 20);
  bool input_subnormals = true;   // false: subnormal inputs are read as zero
  bool output_subnormals = true;  // false: subnormal results are flushed to zero
  zero_sign zero = zero_sign::positive;

  friend constexpr bool operator==(const block_fma_model&, const block_fma_model&) = default;
};

namespace detail {

// One term on its way into the block sum: value = (-1)^negative * sig * 2^lsb, and `lead` the
// exponent the alignment is measured from (e_a + e_b for a product, not normalised).
struct block_term {
  bool negative = false;
  std::uint64_t sig = 0;
  int lsb = 0;
  int lead = 0;
};

FPEMU_HD constexpr bool is_subnormal(const format& f, const unpacked& u) {
  return u.cls == value_class::finite && u.sig < (u128{1} << f.frac_bits);
}

// Rounds sig * 2^-shift (shift > 0) to an integer by the alignment rule, on the signed value.
FPEMU_HD constexpr u128 align_down(std::uint64_t sig, int shift, bool negative, alignment_rounding rule,
                                   bool& lost) {
  if (shift >= 64) {
    lost = sig != 0;
    const bool up = sig != 0 && ((rule == alignment_rounding::down && negative) ||
                                 (rule == alignment_rounding::up && !negative));
    return up ? 1 : 0;
  }
  const std::uint64_t m = sig >> shift;
  const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
  lost = rem != 0;
  if (rem == 0) return m;
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  bool up = false;
  switch (rule) {
    case alignment_rounding::truncate: up = false; break;
    case alignment_rounding::down: up = negative; break;
    case alignment_rounding::up: up = !negative; break;
    case alignment_rounding::nearest: up = rem > half || (rem == half && (m & 1) != 0); break;
  }
  return u128{m} + (up ? 1 : 0);
}

}  // namespace detail

// The result of one block step: the rounded value in m.acc, IEEE flags of the final rounding,
// plus flag::inexact when alignment dropped bits.
//
// a, b: n codes of formats fa and fb (n <= m.block_size is allowed: a short last block);
// c: the addend as a code of format fc (usually m.acc, or fp32 for the first block).
FPEMU_HD constexpr rounded block_fma_step(const block_fma_model& m, const format& fa, const std::uint32_t* a,
                                          const format& fb, const std::uint32_t* b, int n, const format& fc,
                                          std::uint32_t c) {
  using detail::block_term;
  using detail::u128;

  // 1. Special values.
  bool nan = false, pos_inf = false, neg_inf = false;
  const unpacked uc = decode(fc, c);
  if (uc.cls == value_class::nan) nan = true;
  if (uc.cls == value_class::infinite) (uc.negative ? neg_inf : pos_inf) = true;
  for (int i = 0; i < n; ++i) {
    const unpacked ua = decode(fa, a[i]), ub = decode(fb, b[i]);
    if (ua.cls == value_class::nan || ub.cls == value_class::nan) nan = true;
    const bool inf_a = ua.cls == value_class::infinite, inf_b = ub.cls == value_class::infinite;
    if (inf_a || inf_b) {
      if (ua.cls == value_class::zero || ub.cls == value_class::zero) {
        nan = true;
      } else {
        (ua.negative != ub.negative ? neg_inf : pos_inf) = true;
      }
    }
  }
  if (nan || (pos_inf && neg_inf)) return round(m.acc, unpacked{value_class::nan}, m.acc_rounding);
  if (pos_inf || neg_inf) return round(m.acc, unpacked{value_class::infinite, neg_inf}, m.acc_rounding);

  // 2-4. Terms and the reference exponent: two passes over the inputs, so that no term list
  // is stored (the same code runs on a GPU thread).
  auto read = [&](const format& f, std::uint32_t code) {
    unpacked u = decode(f, code);
    if (!m.input_subnormals && detail::is_subnormal(f, u)) u.cls = value_class::zero;
    return u;
  };
  auto product = [&](int i, bool& zero, bool& negative) {
    const unpacked ua = read(fa, a[i]), ub = read(fb, b[i]);
    negative = ua.negative != ub.negative;
    zero = ua.cls == value_class::zero || ub.cls == value_class::zero;
    return block_term{negative, zero ? 0 : static_cast<std::uint64_t>(ua.sig * ub.sig), ua.exp + ub.exp,
                      ua.exp + fa.frac_bits + ub.exp + fb.frac_bits};
  };
  const unpacked cu = read(fc, c);
  const bool c_zero = cu.cls == value_class::zero;
  const block_term c_term{cu.negative, static_cast<std::uint64_t>(cu.sig), cu.exp, cu.exp + fc.frac_bits};

  int count = c_zero ? 0 : 1;
  bool all_negative_zero = c_zero && cu.negative;  // for zero_sign::ieee
  int ref = m.min_reference_exp;
  if (!c_zero && c_term.lead > ref) ref = c_term.lead;
  for (int i = 0; i < n; ++i) {
    bool zero = false, negative = false;
    const block_term t = product(i, zero, negative);
    if (zero) {
      all_negative_zero = all_negative_zero && negative;
      continue;
    }
    ++count;
    if (t.lead > ref) ref = t.lead;
  }
  if (count != 0) all_negative_zero = false;
  const bool negative_zero =
      m.zero == zero_sign::ieee &&
      (count == 0 ? all_negative_zero : m.acc_rounding.mode == round_mode::toward_negative);
  const rounded zero_result = round(m.acc, unpacked{value_class::zero, negative_zero}, m.acc_rounding);
  if (count == 0) return zero_result;

  // 5. Align every term to 2^(ref - F), round it there on its own, and add exactly.
  const int quantum = ref - m.frac_bits;
  detail::i128 sum = 0;
  bool lost_any = false;
  auto add = [&](const block_term& t) {
    const int shift = quantum - t.lsb;  // > 0: bits fall below the quantum
    u128 q = 0;
    if (shift <= 0) {
      q = u128{t.sig} << -shift;  // fits: sig < 2^(lead - lsb + 2), lead <= ref and F <= 60
    } else {
      bool lost = false;
      q = detail::align_down(t.sig, shift, t.negative, m.alignment, lost);
      lost_any = lost_any || lost;
    }
    sum += t.negative ? -static_cast<detail::i128>(q) : static_cast<detail::i128>(q);
  };
  for (int i = 0; i < n; ++i) {
    bool zero = false, negative = false;
    const block_term t = product(i, zero, negative);
    if (!zero) add(t);
  }
  if (!c_zero) add(c_term);

  // 6. Normalise and round once.
  if (sum == 0) {
    rounded z = zero_result;
    if (lost_any) z.flags |= flag::inexact;
    return z;
  }
  const bool negative = sum < 0;
  const u128 magnitude = negative ? static_cast<u128>(-sum) : static_cast<u128>(sum);
  rounded r = round(m.acc, make_finite(negative, magnitude, quantum), m.acc_rounding);
  if (lost_any) r.flags |= flag::inexact;
  if (!m.output_subnormals) {
    const unpacked d = decode(m.acc, r.code);
    if (detail::is_subnormal(m.acc, d))
      r = {detail::zero_code(m.acc, d.negative),
           static_cast<std::uint8_t>(r.flags | flag::underflow | flag::inexact), 0};
  }
  return r;
}

}  // namespace fpemu
