// One dot product next to its exact value and bounds (see dot_analysis.hpp).
#include "analysis/reference/dot_analysis.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

#include "analysis/reference/double_dot.hpp"
#include "analysis/reference/fixed_dot.hpp"
#include "analysis/reference/lead_maxima.hpp"
#include "analysis/reference/measured_error.hpp"
#include "analysis/reference/parallel_rows.hpp"
#include "analysis/reference/summation.hpp"
#include "fpemu/compare.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using bounds::add_up;
using bounds::compose_up;
using bounds::mul_up;

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// Every finite value of `inner` is a value of `outer`.
bool contains(const format& outer, const format& inner) {
  return precision(outer) >= precision(inner) && emax(outer) >= emax(inner) && emin(outer) <= emin(inner) &&
         (outer.subnormals || !inner.subnormals) && (outer.is_signed || !inner.is_signed) &&
         max_finite(outer) >= max_finite(inner);
}

double u_eff(const format& f, const rounding& r) { return effective_unit_roundoff(f, r.mode); }

bool is_subnormal(const format& f, std::uint32_t code) {
  const fp_class c = classify(f, code);
  return c == fp_class::positive_subnormal || c == fp_class::negative_subnormal;
}

bounds::coefficient chunk_bound(const accumulator_model& m, std::uint64_t len, const format& fa, const format& fb) {
  switch (m.kind) {
    case accumulator_kind::format: return bounds::dot(len, u_eff(m.acc, m.acc_rounding));
    case accumulator_kind::block_fma: return block_model_bound(m.block, len, fa, fb);
    case accumulator_kind::exact: break;
  }
  return bounds::coefficient{0.0, true, "exact partial sums", "0"};
}

// The block of a chain that holds position q < K: [lo, hi), blocks of block_size within chunks
// of promote_every products (or of all K).
std::pair<std::size_t, std::size_t> block_around(const dot_problem& p, std::size_t K, std::size_t q) {
  const auto bs = static_cast<std::size_t>(p.model.block.block_size);
  const std::size_t chunk = p.model.promote_every > 0 ? static_cast<std::size_t>(p.model.promote_every) : K;
  const std::size_t c0 = q / chunk * chunk, lo = c0 + (q - c0) / bs * bs;
  return {lo, std::min({K, c0 + chunk, lo + bs})};
}

// The premise of the block [lo, hi) of a chain (a and b its codes from lo on), C ignored
// (conservative: a larger C only adds a term at or above its lead); the message names the block.
std::string block_premise_at(const dot_problem& p, const std::uint32_t* a, const std::uint32_t* b, std::size_t lo,
                             std::size_t hi) {
  const block_fma_model& m = p.model.block;
  std::string why = block_premise(m, p.a_format, a, p.b_format, b, static_cast<int>(hi - lo), m.acc, 0);
  return why.empty() ? why : "in the block from product " + std::to_string(lo) + ": " + why;
}

// The premise of every block of one output's chain: a_row and b_col in the order of K the chain
// takes.
std::string blocks_premise(const dot_problem& p, std::span<const std::uint32_t> a_row,
                           std::span<const std::uint32_t> b_col) {
  const std::size_t K = a_row.size();
  for (std::size_t q = 0; q < K;) {
    const auto [lo, hi] = block_around(p, K, q);
    if (std::string why = block_premise_at(p, &a_row[lo], &b_col[lo], lo, hi); !why.empty()) return why;
    q = hi;
  }
  return {};
}

// Whether a block whose inputs are normal, zero or not finite meets block_premise with C = 0:
// its finite non-zero products are at least their leads, so E belongs to one of them unless
// min_reference_exp lies above every lead, and a normal product's lead is at least
// emin(fa) + emin(fb); the two-stage sum also needs E >= emin(acc) (a zero C's exponent).
bool normal_blocks_meet_premise(const dot_problem& p) {
  const block_fma_model& m = p.model.block;
  const int lowest_lead = emin(p.a_format) + emin(p.b_format);
  return m.min_reference_exp <= lowest_lead &&
         (m.second_frac_bits == 0 || std::max(m.min_reference_exp, lowest_lead) >= emin(m.acc));
}

// What the premise check needs of a code, in int16 so that a block's pairs compare in a few
// vector instructions: its lead (decode()'s exponent + frac_bits, as block_premise takes it) when
// finite and non-zero, `normal` the same for normal codes only, kNone otherwise. Sums with a kNone
// lie below kPairFloor, sums of two leads above it (leads within +-kLeadRange).
constexpr int kLeadRange = 4000;
constexpr std::int16_t kNone = -16000;
constexpr int kPairFloor = -10000;

struct code_leads {
  std::int16_t lead = kNone, normal = kNone;
  bool subnormal = false;
};

struct lead_codes {
  std::vector<code_leads> table;  // per code, for formats of <= 16 bits
  format f;
  explicit lead_codes(const format& fmt) : f(fmt) {
    if (width(f) <= 16)
      for (std::uint32_t c = 0; c <= code_mask(f); ++c) table.push_back(decoded(c));
  }
  code_leads of(std::uint32_t c) const { return table.empty() ? decoded(c) : table[c & code_mask(f)]; }
  code_leads decoded(std::uint32_t c) const {
    const unpacked u = decode(f, c);
    const bool sub = is_subnormal(f, c);
    if (u.cls != value_class::finite) return {kNone, kNone, sub};
    const auto l = static_cast<std::int16_t>(u.exp + f.frac_bits);
    return {l, sub ? kNone : l, sub};
  }
};

// Whether lead_codes can stand for f's codes.
bool leads_fit(const format& f) { return emin(f) - f.frac_bits >= -kLeadRange && emax(f) <= kLeadRange; }

// A block-FMA GEMM's premise, row by row: for row i, "output ij, " and why for the first j
// whose chain breaks blocks_premise, or "". Slow: every block checked in full. Fast: where
// normal_blocks_meet_premise vouches for blocks of normal inputs, only blocks holding a
// subnormal input, and of those only the ones the following argument cannot settle. In a model
// that takes subnormal inputs as they are and applies no block scales (the premise then reads
// only the products' leads, with C = 0), if a pair of normal inputs has a lead L_n at least that
// of every finite non-zero product of the block, then E = max(min_reference_exp, L_n) = L_n
// (min_reference_exp <= emin(fa) + emin(fb) <= L_n), a normal product is never below its lead,
// so E belongs to a term >= 2^E; and E >= emin(acc) for the two-stage sum as for normal blocks.
// The premise holds. With data N(0, s) nearly every block holds a subnormal input and nearly
// every such block is settled so, by two int16 maxima over its pairs.
std::vector<std::string> rows_premise(const dot_problem& p, const scaled_matrix& a, const scaled_matrix& b,
                                      std::span<const int> order, int threads, bool fast) {
  const int M = a.rows, K = a.cols, N = b.cols;
  const auto uK = static_cast<std::size_t>(K);
  const auto a_code = [&](int i, std::size_t q) { return a.codes[static_cast<std::size_t>(i) * uK + static_cast<std::size_t>(order[q])]; };
  const auto b_code = [&](std::size_t q, int j) {
    return b.codes[static_cast<std::size_t>(order[q]) * static_cast<std::size_t>(N) + static_cast<std::size_t>(j)];
  };
  const block_fma_model& m = p.model.block;
  fast = fast && normal_blocks_meet_premise(p);
  const bool by_leads = fast && m.input_subnormals && m.scale_block == 0 && leads_fit(a.fmt) && leads_fit(b.fmt);
  // The blocks of the chain, [lo, hi), in order.
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (std::size_t q = 0; q < uK; q = blocks.back().second) blocks.push_back(block_around(p, uK, q));
  const std::size_t nb = blocks.size();
  // B's leads and normal leads in chain order, a row of N per position q (so that a block's test
  // runs across the columns, in int16 vector lanes; kNone past N to a whole number of chunks of
  // kCols columns), and per block and column whether the block holds a subnormal.
  constexpr std::size_t kCols = 32;
  const std::size_t ldb = (static_cast<std::size_t>(N) + kCols - 1) / kCols * kCols;
  std::vector<std::int16_t> b_lead(fast ? uK * ldb : 0, kNone), b_normal(b_lead.size(), kNone);
  std::vector<char> b_sub(fast ? nb * static_cast<std::size_t>(N) : 0);
  const lead_codes la(a.fmt), lb(b.fmt);
  if (fast)
    for (std::size_t t = 0; t < nb; ++t)
      for (std::size_t q = blocks[t].first; q < blocks[t].second; ++q) {
        const std::uint32_t* codes = &b.codes[static_cast<std::size_t>(order[q]) * static_cast<std::size_t>(N)];
        std::int16_t* lead = &b_lead[q * ldb];
        std::int16_t* normal = &b_normal[q * ldb];
        char* sub = &b_sub[t * static_cast<std::size_t>(N)];
        for (int j = 0; j < N; ++j) {
          const code_leads x = lb.of(codes[j]);
          lead[j] = x.lead;
          normal[j] = x.normal;
          sub[j] |= static_cast<char>(x.subnormal);
        }
      }
  std::vector<std::string> premise(static_cast<std::size_t>(M));
  // Rows a slice at a time, block by block, so that a block of B's leads (block size x N) is read
  // from the cache for every row of the slice rather than streamed from memory for each.
  constexpr int kRowSlice = 16;
  parallel_rows(M, threads, [&](int r0, int r1) {
    const auto uN = static_cast<std::size_t>(N), rows = static_cast<std::size_t>(r1 - r0);
    std::vector<std::uint32_t> a_rows(rows * uK), b_col(uK);
    std::vector<std::int16_t> a_lead(fast ? rows * uK : 0), a_normal(a_lead.size());
    std::vector<std::int16_t> all(fast ? ldb : 0), normal(all.size());
    std::vector<char> a_sub(fast ? rows * nb : 0);
    // Per row of the slice, the output its reason names: its first output that breaks the premise.
    std::vector<int> why_j(rows, N);
    std::vector<std::string> why(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      std::uint32_t* row = &a_rows[r * uK];
      for (std::size_t q = 0; q < uK; ++q) row[q] = a_code(r0 + static_cast<int>(r), q);
      if (!fast) {
        for (int j = 0; j < N && why[r].empty() && !interrupted(); ++j) {
          for (std::size_t q = 0; q < uK; ++q) b_col[q] = b_code(q, j);
          why[r] = blocks_premise(p, std::span<const std::uint32_t>(row, uK), b_col);
          why_j[r] = j;
        }
        continue;
      }
      for (std::size_t t = 0; t < nb; ++t)
        for (std::size_t q = blocks[t].first; q < blocks[t].second; ++q) {
          const code_leads x = la.of(row[q]);
          a_lead[r * uK + q] = x.lead;
          a_normal[r * uK + q] = x.normal;
          a_sub[r * nb + t] |= static_cast<char>(x.subnormal);
        }
    }
    // Block by block in chain order, every column at once: the largest lead of a product and of a
    // product of normal numbers. A block where the latter is the former (above the floor) meets
    // the premise; the others are checked exactly, for the columns before the first that broke
    // it (its first block that does is the one reported).
    for (std::size_t t = 0; fast && t < nb && !interrupted(); ++t) {
      const auto [lo, hi] = blocks[t];
      const char* sub_t = &b_sub[t * uN];
      for (std::size_t r = 0; r < rows; ++r) {
        if (by_leads)
          lead_pair_maxima(&a_lead[r * uK], &a_normal[r * uK], b_lead.data(), b_normal.data(), ldb, lo, hi, ldb,
                           static_cast<std::int16_t>(kNone + kNone), all.data(), normal.data());
        const bool a_has_sub = a_sub[r * nb + t] != 0;
        if (by_leads) {
          // Most blocks are settled for every column: find out in one branch-free pass.
          std::int16_t unsettled = 0;
          for (int j = 0; j < why_j[r]; ++j) {
            const auto uj = static_cast<std::size_t>(j);
            const auto open = static_cast<std::int16_t>((normal[uj] <= kPairFloor) | (normal[uj] < all[uj]));
            unsettled |= static_cast<std::int16_t>(open & (a_has_sub ? 1 : sub_t[uj]));
          }
          if (unsettled == 0) continue;
        }
        for (int j = 0; j < why_j[r]; ++j) {
          const auto uj = static_cast<std::size_t>(j);
          if (!a_has_sub && !sub_t[uj]) continue;
          if (by_leads && normal[uj] > kPairFloor && normal[uj] >= all[uj]) continue;
          for (std::size_t q = lo; q < hi; ++q) b_col[q] = b_code(q, j);
          if (std::string w = block_premise_at(p, &a_rows[r * uK + lo], &b_col[lo], lo, hi); !w.empty()) {
            why[r] = std::move(w);
            why_j[r] = j;
          }
        }
      }
    }
    for (std::size_t r = 0; r < rows; ++r)
      if (!why[r].empty())
        premise[static_cast<std::size_t>(r0) + r] =
            "output " + std::to_string((static_cast<std::size_t>(r0) + r) * uN + static_cast<std::size_t>(why_j[r])) +
            ", " + why[r];
  }, kRowSlice);
  return premise;
}

}  // namespace

bounds::coefficient block_model_bound(const block_fma_model& m, std::uint64_t len, const format& fa, const format& fb) {
  const auto b = static_cast<std::uint64_t>(m.block_size);
  const double u = u_eff(m.acc, m.acc_rounding);
  const double ulp_f = std::ldexp(1.0, -m.frac_bits);
  switch (m.sum) {
    case block_sum::exact:  // one rounding per block
      return bounds::staged_block_dot(len, b, 0.0, 0.0, u);
    case block_sum::pairwise: {
      // A product is rounded once, then by the ceil(log2 b) levels of its block's tree and the
      // addition of C, then once per later block: gamma_{q + ceil(log2 b) + 1}(u).
      const std::uint64_t q = len == 0 ? 0 : (len + std::min(b, len) - 1) / std::min(b, len);
      const auto depth = static_cast<std::uint64_t>(std::bit_width(b - 1));
      bounds::coefficient c = bounds::gamma(q + depth + 1, u);
      c.name = "gamma_{ceil(n/b)+ceil(log2 b)+1}(u_acc)";
      return c;
    }
    case block_sum::aligned: break;
  }
  if (m.second_frac_bits > 0) {
    // Two-stage (block_fma.hpp step 6), against the largest term, 2^E' <= max|t_j| (premise):
    // b products truncated below their E <= E' lose < b 2^(E'-F); two interleaved halves
    // realigned lose < 2^(E'-F) each; the product sum rounded down at 2^(E'-F2-1) and C at
    // 2^(E'-F) (or dropped, |C| < 2^(E'-F-1)) lose < 2^(E'-F2-1) + 2^(E'-F): w below. Then the
    // floor to F2 fraction bits (u_mid = 2^-F2) and the rounding into acc.
    const double halves = m.interleave > 1 ? static_cast<double>(m.interleave) : 0.0;
    const double w = bounds::add_up(bounds::mul_up(static_cast<double>(b) + halves + 1.0, ulp_f),
                                    std::ldexp(1.0, -m.second_frac_bits - 1));
    return bounds::staged_block_dot(len, b, w, std::ldexp(1.0, -m.second_frac_bits), u);
  }
  if (m.scale_group > 0) {
    // Groups summed exactly enter with their scales' exponent as E, whatever their size: a group
    // that sets E has a non-zero product of magnitude >= min_positive(fa) min_positive(fb) 2^E
    // 2^-6 (a subnormal UE4M3 scale is >= 2^(lead - 3)), so the ceil(b/G) + 1 terms lose
    // < (ceil(b/G) + 1) 2^(E-F) <= w max|a_i b_i s_i|, w = (ceil(b/G) + 1) 2^(slack - F).
    const int slack = -(emin(fa) - (fa.subnormals ? fa.frac_bits : 0)) - (emin(fb) - (fb.subnormals ? fb.frac_bits : 0)) + 6;
    const auto groups = static_cast<double>((b + static_cast<std::uint64_t>(m.scale_group) - 1) /
                                            static_cast<std::uint64_t>(m.scale_group));
    const double w = bounds::mul_up(groups + 1.0, std::ldexp(1.0, slack - m.frac_bits));
    return bounds::staged_block_dot(len, b, w, 0.0, u);
  }
  // NVIDIA's datapath; block scales (powers of two per product, E8M0) move a product and its
  // lead alike, so the premise and the derivation hold for the scaled terms.
  return bounds::truncating_block_dot(len, b, m.frac_bits, u);
}

bounds::coefficient accumulation_bound(const dot_problem& p, bool scale_rounded) {
  const accumulator_model& m = p.model;
  bounds::coefficient c;
  bool final_rounding = false;
  if (m.promote_every == 0) {
    c = chunk_bound(m, p.k, p.a_format, p.b_format);
    if (m.kind == accumulator_kind::exact) {
      final_rounding = true;
    } else {
      const format& vf = m.kind == accumulator_kind::format ? m.acc : m.block.acc;
      final_rounding = !contains(p.out, vf);
    }
  } else {
    const std::uint64_t len = std::min(p.k, static_cast<std::uint64_t>(m.promote_every));
    const std::uint64_t q = len == 0 ? 0 : (p.k + len - 1) / len;
    const bounds::coefficient chunk = chunk_bound(m, len, p.a_format, p.b_format);
    const bounds::coefficient high = bounds::gamma(q + (scale_rounded ? 1 : 0), u_eff(m.promoted, m.promoted_rounding));
    c.name = "(1+[" + chunk.name + "])(1+gamma_{ceil(K/Nc)" + (scale_rounded ? "+1" : "") + "}(u_" +
             to_string(m.promoted) + "))-1";
    c.condition = "chunks of Nc = " + std::to_string(len) + ": " + chunk.condition + "; promoted register: " +
                  high.condition;
    if (scale_rounded) c.condition += "; +1 rounding: s_a*s_b rounded to fp32";
    c.valid = chunk.valid && high.valid;
    c.value = c.valid ? compose_up(chunk.value, high.value) : kInf;
    final_rounding = !contains(p.out, m.promoted);
  }
  if (p.scale_kind == scaling::per_tensor || p.scaled_epilogue) final_rounding = true;
  if (final_rounding && c.valid) {
    const double u_out = u_eff(p.out, p.out_rounding);
    if (c.value == 0) {
      c.name = "u_out";
      c.condition = "one rounding into " + to_string(p.out) + " (u_out = " + num(u_out) + ")";
      c.value = u_out;
    } else {
      c.name = "(1+[" + c.name + "])(1+u_out)-1";
      c.condition += "; one final rounding into " + to_string(p.out) + " (u_out = " + num(u_out) + ")";
      c.value = compose_up(c.value, u_out);
    }
  }
  return c;
}

std::string block_premise(const block_fma_model& m, const format& fa, const std::uint32_t* a, const format& fb,
                          const std::uint32_t* b, int n, const format& fc, std::uint32_t c) {
  // Block scales are not seen here. One scale pair per block shifts every product alike, so the
  // premise holds when the products alone meet it and C is normal (whichever sets E); groups
  // (scale_group) need only a normal C (block_model_bound); several pairs per block, all normal.
  const bool scaled = m.scale_block > 0;
  if (scaled) {
    if (is_subnormal(fc, c)) return "C is subnormal (with block scales the bound assumes a normal C)";
    if (m.scale_group > 0) return {};
    for (int i = 0; m.scale_block < n && i < n; ++i)
      if (is_subnormal(fa, a[i]) || is_subnormal(fb, b[i]))
        return "input " + std::to_string(i) + " is subnormal (with several block scales the bound assumes normal inputs)";
  }
  int E = m.min_reference_exp;
  bool any = false, reached = false;
  auto term = [&](int lead, bool at_least_lead) {
    if (!any || lead > E) {
      reached = lead >= E && at_least_lead;
      E = std::max(E, lead);
    } else if (lead == E) {
      reached = reached || at_least_lead;
    }
    any = true;
  };
  // A code's significand is below 2^frac_bits exactly when it is subnormal (decode() gives the
  // integer significand with the hidden bit at 2^frac_bits).
  const unpacked uc = decode(fc, c);
  if (uc.cls == value_class::finite && !scaled) term(uc.exp + fc.frac_bits, !is_subnormal(fc, c));
  using sig_t = decltype(unpacked{}.sig);
  const sig_t one = sig_t{1} << (fa.frac_bits + fb.frac_bits);
  for (int i = 0; i < n; ++i) {
    if (!m.input_subnormals && (is_subnormal(fa, a[i]) || is_subnormal(fb, b[i])))
      return "input " + std::to_string(i) + " is subnormal, which the model reads as zero";
    const unpacked ua = decode(fa, a[i]), ub = decode(fb, b[i]);
    if (ua.cls != value_class::finite || ub.cls != value_class::finite) continue;
    term(ua.exp + fa.frac_bits + ub.exp + fb.frac_bits, ua.sig * ub.sig >= one);
  }
  // Two-stage: a zero C still sets E' >= emin(fc) (block_fma.hpp step 6), above tiny products.
  if (m.second_frac_bits > 0 && decode(fc, c).cls == value_class::zero && any && E < emin(fc))
    return "every product lies below 2^" + std::to_string(emin(fc)) +
           ", the exponent a zero C takes in the two-stage sum (the bound assumes 2^E' <= max|t_j|)";
  if (!any || reached) return {};
  return "the reference exponent " + std::to_string(E) +
         " belongs to no term of magnitude >= 2^E (subnormal inputs, or min_reference_exp above every term; the "
         "bound assumes 2^E <= max|t_j|)";
}

dot_report analyse_dot(const dot_problem& p, std::span<const float> xa, std::span<const float> xb,
                       const scaled_matrix& a, const scaled_matrix& b, std::uint32_t computed_code,
                       const sr_stream& sr) {
  dot_report r;
  const std::size_t K = p.k;
  const format& fa = p.a_format;
  const format& fb = p.b_format;

  // The exact dot products, of the quantised values (scales applied) and of the float data.
  exact_accumulator exact, abs_sum, exact_orig, abs_orig;
  std::vector<double> sa(K), sb(K);
  for (std::size_t i = 0; i < K; ++i) {
    sa[i] = scale_of(a, 0, static_cast<int>(i), true);
    sb[i] = scale_of(b, static_cast<int>(i), 0, false);
    unpacked ta = exact_mul(decode(fa, a.codes[i]), unpack(sa[i])).value;
    unpacked tb = exact_mul(decode(fb, b.codes[i]), unpack(sb[i])).value;
    exact.add_product(ta, tb);
    ta.negative = tb.negative = false;
    abs_sum.add_product(ta, tb);
    unpacked oa = unpack(xa[i]), ob = unpack(xb[i]);
    exact_orig.add_product(oa, ob);
    oa.negative = ob.negative = false;
    abs_orig.add_product(oa, ob);
  }
  const unpacked computed = decode(p.out, computed_code);
  r.value = to_double(p.out, computed_code);
  r.exact = exact.to_double();
  r.error = measured_error(exact, computed);
  r.relative = relative_error(r.error, r.exact);
  r.abs_sum = abs_sum.to_double();
  r.exact_original = exact_orig.to_double();
  r.error_original = measured_error(exact_orig, computed);
  r.relative_original = relative_error(r.error_original, r.exact_original);
  r.abs_sum_original = abs_orig.to_double();

  // The flags of the computation (gemm()'s reference loop, which keeps them).
  std::string broken;
  bool scale_rounded = false;
  {
    gemm_options o;
    o.acc = p.model;
    o.out = p.out;
    o.out_rounding = p.out_rounding;
    o.threads = 1;
    o.sr = sr;
    const expected<std::vector<gemm_element>> e = gemm_elements(a, b, {}, o);
    if (!e) {
      broken = e.message();
    } else {
      const gemm_element& d = e->front();
      r.flags = d.flags;
      scale_rounded = (d.scale_flags & flag::inexact) != 0;
      if (d.scale_flags & (flag::overflow | flag::underflow))
        broken = "the product of two group scales is outside fp32's range";
      if (broken.empty()) broken = flags_break_model(r.flags);
      if (broken.empty() && d.code != computed_code)
        broken = "the computed code differs from analysis::dot's for these inputs";
    }
  }
  if (broken.empty() && computed.cls != value_class::finite && computed.cls != value_class::zero)
    broken = "the computed result is not finite";
  if (broken.empty() && p.model.kind == accumulator_kind::block_fma) broken = blocks_premise(p, a.codes, b.codes);

  // The accumulation bound.
  const bounds::coefficient c = accumulation_bound(p, scale_rounded);
  r.bound = bounds::make_bound_line(c, upper_double(abs_sum));
  if (!broken.empty()) bounds::invalidate(r.bound, broken);

  // The bound against the original data.
  const bool fp32_scales = p.scale_kind == scaling::per_tensor || p.scale_kind == scaling::tile_1x128 ||
                           p.scale_kind == scaling::block_128;
  auto u_of = [&](const format& f) {
    const double u = unit_roundoff(f), d = std::ldexp(1.0, -53);
    return fp32_scales ? add_up(mul_up(u, 1 + d), d) : u;
  };
  double u_in = std::max(u_of(fa), u_of(fb));
  // Saturated inputs: |a^ - a| = (|x|/s - max_finite) s <= d |a| with d their relative error.
  std::size_t saturated = 0;
  auto saturation = [&](double y, const format& f) {
    if (!(y > max_finite(f))) return;
    ++saturated;
    u_in = std::max(u_in, bounds::div_up(bounds::next_up(y - max_finite(f)), y));
  };
  for (std::size_t i = 0; i < K; ++i) {
    saturation(std::fabs(static_cast<double>(xa[i])) / sa[i], fa);
    saturation(std::fabs(static_cast<double>(xb[i])) / sb[i], fb);
  }
  auto half_spacing = [](const format& f) {
    return f.subnormals ? std::ldexp(1.0, emin(f) - f.frac_bits - 1) : std::ldexp(1.0, emin(f) - 1);
  };
  double T = 0;
  std::size_t tiny = 0;
  for (std::size_t i = 0; i < K; ++i) {
    const double xai = std::fabs(static_cast<double>(xa[i])), xbi = std::fabs(static_cast<double>(xb[i]));
    const double ya = xai / sa[i], yb = xbi / sb[i];
    const double ea = xa[i] != 0 && ya < min_normal(fa) ? sa[i] * half_spacing(fa) : 0.0;
    const double eb = xb[i] != 0 && yb < min_normal(fb) ? sb[i] * half_spacing(fb) : 0.0;
    tiny += (ea > 0 ? 1 : 0) + (eb > 0 ? 1 : 0);
    if (ea > 0 || eb > 0) {
      const double cross = add_up(mul_up(xai, eb), mul_up(xbi, ea));
      T = add_up(T, add_up(mul_up(1 + u_in, cross), mul_up(ea, eb)));
    }
  }
  bounds::bound_line& lo = r.bound_original;
  // c is gamma_K(u_acc) itself: a format accumulator, no promotion, no final rounding (out = acc).
  const bool plain = p.model.kind == accumulator_kind::format && p.model.promote_every == 0 &&
                     p.scale_kind != scaling::per_tensor && p.out == p.model.acc;
  if (plain) {
    const bounds::coefficient l = bounds::dot_lowprec_inputs(p.k, u_in, u_eff(p.model.acc, p.model.acc_rounding));
    lo.name = l.name.empty() ? "2u_in+u_in^2+gamma_n(u_acc)(1+u_in)^2" : l.name;
    lo.coefficient = l.value;
    lo.valid = l.valid;
    lo.condition = "u_in = " + num(u_in) + "; " + l.condition;
  } else {
    lo.name = "2u_in+u_in^2+c(1+u_in)^2, c = " + c.name;
    lo.valid = c.valid;
    const double one_u2 = mul_up(1 + u_in, 1 + u_in);
    lo.coefficient = c.valid ? add_up(add_up(2 * u_in, mul_up(u_in, u_in)), mul_up(c.value, one_u2)) : kInf;
    lo.condition = "u_in = " + num(u_in) + "; c: " + c.condition;
  }
  lo.absolute = kInf;
  if (lo.valid) {
    lo.absolute = mul_up(lo.coefficient, upper_double(abs_orig));
    if (T > 0) {
      lo.absolute = add_up(lo.absolute, mul_up(add_up(1.0, c.value), T));
      lo.condition += "; plus (1+c)T = " + num(mul_up(add_up(1.0, c.value), T)) + " for " + std::to_string(tiny) +
                      " inputs quantised below the normal range";
    }
  }
  if (saturated > 0)
    lo.condition += "; " + std::to_string(saturated) +
                    " inputs saturated at the largest finite value: u_in is raised to their largest relative error";
  if (!broken.empty()) bounds::invalidate(lo, broken);
  return r;
}

namespace {

// The operands of exact_outputs: at (A's rows with alpha and scales applied) and bt (B's
// columns) as doubles (double_dot.hpp; a vector that is not exactly doubles is marked so), and
// `exact`, which fills at and bt with the exact values, for the outputs the doubles cannot serve.
struct exact_operands {
  double_vectors a, b;
  std::function<void(std::vector<unpacked>& at, std::vector<unpacked>& bt)> exact;
};

// Whether every value of f is a double (to_double's value is then exact).
bool values_fit_double(const format& f) { return emax(f) <= 1023 && emin(f) - f.frac_bits >= -1074; }

// x * y * z as a double, false when that is not exact.
bool exact_double_product(double x, double y, double z, double& product) {
  double xy = 0;
  return analysis::exact_double_product(x, y, xy) && analysis::exact_double_product(xy, z, product);
}

// The exact pass of analyse_gemm and compare_with_original: for every output, the exact
// x_ij = sum_k at_ik bt_jk + beta c_ij, d_ij's relative error against it into r.relative, and
// r.error_norm, r.exact_norm and r.normwise. Returns ||S||_F rounded up (S_ij = sum_k |at_ik bt_jk|
// + |beta c_ij|), the bound's base; rows_done as in analyse_gemm. Each dot product comes from the
// first of these that serves it, all exact: the double kernel (double_dot.hpp; with
// fast_kernels only, so that the slow path is its oracle), fixed_dot, the exact_accumulator; the
// exact values the last two need are made once, when first needed.
double exact_outputs(const exact_operands& ops, int M, int N, int K, std::span<const std::uint32_t> c,
                     const gemm_options& o, std::span<const std::uint32_t> d, int threads,
                     const std::function<void(int, int)>& rows_done, gemm_report& r) {
  const std::size_t MN = static_cast<std::size_t>(M) * N;
  const unpacked ub = unpack(o.beta);
  r.relative.assign(MN, 0.0);
  std::vector<double> err(MN), ex(MN), mag(MN);
  const double_panels panels(ops.b);
  std::once_flag made;
  std::vector<unpacked> at, bt;
  std::optional<fixed_vectors> fixed_a, fixed_b;  // the fast exact products (fixed_dot.hpp)
  const auto make_exact = [&] {
    std::call_once(made, [&] {
      ops.exact(at, bt);
      fixed_a.emplace(at, M, K);
      fixed_b.emplace(bt, N, K);
    });
  };
  const bool out_fits_double = values_fit_double(o.out);
  // Rows per call of the double kernel (a multiple of its tiles' rows): a call streams all of B's
  // panels, so fewer, larger calls read B fewer times (48 against 12: 1.02-1.05x on the bench's
  // exact reference; 96 no better).
  constexpr int kSlice = 48;
  parallel_rows(M, threads, [&](int r0, int r1) {
    exact_accumulator x, s;
    const std::size_t n = static_cast<std::size_t>(r1 - r0) * N;
    std::vector<double> dsum(n), dmag(n);
    double_gemm(ops.a, r0, r1, panels, dsum, dmag);
    for (int i = r0; i < r1; ++i) {
      for (int j = 0; j < N && !interrupted(); ++j) {
        x.clear();
        s.clear();
        const std::size_t ij = static_cast<std::size_t>(i) * N + j, local = ij - static_cast<std::size_t>(r0) * N;
        if (o.fast_kernels && dsum[local] != 0 && double_dot_exact(ops.a, i, ops.b, j)) {
          const unpacked computed = decode(o.out, d[ij]);
          if (o.beta == 0 && out_fits_double &&
              (computed.cls == value_class::finite || computed.cls == value_class::zero)) {
            // The accumulators would hold dsum and dmag exactly, and the error d - dsum of two
            // doubles rounded once (measured_error, nearest-even) is the double subtraction's.
            const double e = to_double(o.out, d[ij]) - dsum[local];
            ex[ij] = dsum[local];
            err[ij] = e == 0 ? 0.0 : e;
            mag[ij] = dmag[local];
            r.relative[ij] = relative_error(err[ij], ex[ij]);
            continue;
          }
          x.add(unpack(dsum[local]));
          s.add(unpack(dmag[local]));
        } else if (make_exact(); const std::optional<fixed_dot_result> f = fixed_dot(*fixed_a, i, *fixed_b, j)) {
          x.add(f->sum);
          s.add(f->magnitude);
        } else {
          const unpacked* ai = &at[static_cast<std::size_t>(i) * K];
          const unpacked* bj = &bt[static_cast<std::size_t>(j) * K];
          for (int k = 0; k < K; ++k) {
            x.add_product(ai[k], bj[k]);
            unpacked pa = ai[k], pb = bj[k];
            pa.negative = pb.negative = false;
            s.add_product(pa, pb);
          }
        }
        if (o.beta != 0) {
          const unpacked cij = decode(o.out, c[ij]);
          x.add_product(ub, cij);
          unpacked pb = ub, pc = cij;
          pb.negative = pc.negative = false;
          s.add_product(pb, pc);
        }
        ex[ij] = x.to_double();
        err[ij] = measured_error(x, decode(o.out, d[ij]));
        mag[ij] = upper_double(s);
        r.relative[ij] = relative_error(err[ij], ex[ij]);
      }
      if (r0 == 0 && rows_done) rows_done(i + 1, r1);
    }
  }, kSlice);

  // Norms: the error's and the exact result's to nearest (reports), ||S||_F rounded up (the bound).
  double e2 = 0, x2 = 0, s2 = 0;
  for (std::size_t ij = 0; ij < MN; ++ij) {
    e2 += err[ij] * err[ij];
    x2 += ex[ij] * ex[ij];
    s2 = add_up(s2, mul_up(mag[ij], mag[ij]));
  }
  r.error_norm = std::sqrt(e2);
  r.exact_norm = std::sqrt(x2);
  r.normwise = relative_error(r.error_norm, r.exact_norm);
  return bounds::next_up(std::sqrt(s2));
}

}  // namespace

gemm_report analyse_gemm(const scaled_matrix& a, const scaled_matrix& b, std::span<const std::uint32_t> c,
                         const gemm_options& o, std::span<const std::uint32_t> d,
                         const std::function<void(int, int)>& rows_done) {
  const int M = a.rows, K = a.cols, N = b.cols;
  const std::size_t MN = static_cast<std::size_t>(M) * N;
  gemm_report r;
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());

  // The flags of every output, for the bound's validity.
  std::string broken;
  bool scale_rounded = false;
  // gemm_elements_for_bound is gemm_elements with the flags flags_break_model reads, faster.
  const expected<std::vector<gemm_element>> elements =
      o.fast_kernels ? gemm_elements_for_bound(a, b, c, o) : gemm_elements(a, b, c, o);
  if (!elements) {
    broken = elements.message();
  } else {
    for (std::size_t ij = 0; ij < MN && broken.empty(); ++ij) {
      const gemm_element& e = (*elements)[ij];
      scale_rounded = scale_rounded || (e.scale_flags & flag::inexact);
      if (e.scale_flags & (flag::overflow | flag::underflow))
        broken = "the product of two group scales is outside fp32's range";
      else if (std::string why = flags_break_model(e.flags); !why.empty())
        broken = "output " + std::to_string(ij) + ": " + why;
      else if (e.code != d[ij])
        broken = "output " + std::to_string(ij) + " differs from gemm()'s";
      else if (decode(o.out, d[ij]).cls != value_class::finite && decode(o.out, d[ij]).cls != value_class::zero)
        broken = "output " + std::to_string(ij) + " is not finite";
    }
  }

  // The quantised values with their scales (and alpha) applied, B k-major as stored: doubles from a
  // table of codes where exact, and the exact values for the outputs the doubles cannot serve.
  const auto decoder = [](const format& f) {
    std::vector<double> table;
    if (width(f) <= 16)
      for (std::uint32_t code = 0; code <= code_mask(f); ++code) table.push_back(to_double(f, code));
    return [f, table = std::move(table)](std::uint32_t code) {
      return table.empty() ? to_double(f, code) : table[code & code_mask(f)];
    };
  };
  const auto a_value = decoder(a.fmt);
  const auto b_value = decoder(b.fmt);
  std::vector<double> av(static_cast<std::size_t>(M) * K), bv(static_cast<std::size_t>(K) * N);
  std::vector<char> a_exact(static_cast<std::size_t>(M), 1), b_exact(static_cast<std::size_t>(N), 1);
  // Without scales or alpha a code's double is its value, when the format fits a double.
  const bool a_plain = a.scale_kind == scaling::none && o.alpha == 1.0 && values_fit_double(a.fmt);
  const bool b_plain = b.scale_kind == scaling::none && values_fit_double(b.fmt);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const std::size_t ik = static_cast<std::size_t>(i) * K + k;
      if (a_plain)
        av[ik] = a_value(a.codes[ik]);
      else if (!exact_double_product(o.alpha, a_value(a.codes[ik]), scale_of(a, i, k, true), av[ik]))
        a_exact[static_cast<std::size_t>(i)] = 0;
    }
  for (int k = 0; k < K; ++k)  // B's columns stay k-major
    for (int j = 0; j < N; ++j) {
      const std::size_t kj = static_cast<std::size_t>(k) * N + j;
      if (b_plain)
        bv[kj] = b_value(b.codes[kj]);
      else if (!exact_double_product(b_value(b.codes[kj]), scale_of(b, k, j, false), bv[kj]))
        b_exact[static_cast<std::size_t>(j)] = 0;
    }
  const exact_operands ops{
      double_vectors(std::move(av), std::move(a_exact), M, K), double_vectors(std::move(bv), std::move(b_exact), N, K, true),
      [&](std::vector<unpacked>& at, std::vector<unpacked>& bt) {
        at.resize(static_cast<std::size_t>(M) * K);
        bt.resize(static_cast<std::size_t>(K) * N);
        const unpacked ua = unpack(o.alpha);
        for (int i = 0; i < M; ++i)
          for (int k = 0; k < K; ++k) {
            const std::size_t ik = static_cast<std::size_t>(i) * K + k;
            at[ik] = exact_mul(ua, exact_mul(decode(a.fmt, a.codes[ik]), unpack(scale_of(a, i, k, true))).value).value;
          }
        for (int k = 0; k < K; ++k)
          for (int j = 0; j < N; ++j) {
            const std::size_t kj = static_cast<std::size_t>(k) * N + j;
            bt[static_cast<std::size_t>(j) * K + k] =
                exact_mul(decode(b.fmt, b.codes[kj]), unpack(scale_of(b, k, j, false))).value;
          }
      }};
  dot_problem p;
  p.a_format = a.fmt;
  p.b_format = b.fmt;
  p.k = static_cast<std::uint64_t>(K);
  p.scale_kind = a.scale_kind != scaling::none ? a.scale_kind : b.scale_kind;
  p.model = o.acc;
  // A group scaling promotes each group (gemm.cpp), unless the model applies the scales itself.
  const bool in_mma = p.model.kind == accumulator_kind::block_fma && p.model.block.scale_block > 0;
  if (const int group = std::max(group_along_k(a.scale_kind), group_along_k(b.scale_kind)); group != 0 && !in_mma)
    p.model.promote_every = group;
  p.out = o.out;
  p.out_rounding = o.out_rounding;
  // NVFP4's tensor scales go into alpha (gemm.cpp): the epilogue rounds once more.
  p.scaled_epilogue = o.alpha != 1.0 || o.beta != 0.0 || (in_mma && p.scale_kind == scaling::nvfp4);
  const bool block_model = p.model.kind == accumulator_kind::block_fma;

  // The first broken premise, row by row.
  std::vector<int> order = o.k_order;
  if (order.empty()) {
    order.resize(static_cast<std::size_t>(K));
    std::iota(order.begin(), order.end(), 0);
  }
  const std::vector<std::string> premise =
      block_model ? rows_premise(p, a, b, order, threads, o.fast_kernels) : std::vector<std::string>{};
  const double s_norm = exact_outputs(ops, M, N, K, c, o, d, threads, rows_done, r);
  for (const std::string& why : premise)
    if (broken.empty() && !why.empty()) broken = why;
  const bounds::coefficient coef = accumulation_bound(p, scale_rounded);
  r.normwise_bound = bounds::make_bound_line(coef, s_norm);
  r.normwise_bound.condition += "; componentwise |d_ij - x_ij| <= c S_ij summed in the Frobenius norm";
  if (!broken.empty()) bounds::invalidate(r.normwise_bound, broken);
  r.normwise_bound_relative = r.normwise_bound.valid && r.exact_norm > 0
                                  ? r.normwise_bound.absolute / r.exact_norm
                                  : std::numeric_limits<double>::infinity();
  return r;
}

gemm_report compare_with_original(std::span<const float> a, std::span<const float> b, int M, int N, int K,
                                  std::span<const std::uint32_t> c, const gemm_options& o,
                                  std::span<const std::uint32_t> d, const std::function<void(int, int)>& rows_done) {
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  std::vector<double> av(static_cast<std::size_t>(M) * K), bv(static_cast<std::size_t>(K) * N);
  std::vector<char> a_exact(static_cast<std::size_t>(M), 1), b_exact(static_cast<std::size_t>(N), 1);
  for (std::size_t ik = 0; ik < av.size(); ++ik)
    if (!exact_double_product(o.alpha, a[ik], av[ik])) a_exact[ik / static_cast<std::size_t>(K)] = 0;
  std::copy(b.begin(), b.end(), bv.begin());  // B's columns stay k-major
  const exact_operands ops{
      double_vectors(std::move(av), std::move(a_exact), M, K), double_vectors(std::move(bv), std::move(b_exact), N, K, true),
      [&](std::vector<unpacked>& at, std::vector<unpacked>& bt) {
        const unpacked ua = unpack(o.alpha);
        at.resize(static_cast<std::size_t>(M) * K);
        bt.resize(static_cast<std::size_t>(K) * N);
        for (std::size_t ik = 0; ik < at.size(); ++ik) at[ik] = exact_mul(ua, unpack(a[ik])).value;
        for (int k = 0; k < K; ++k)
          for (int j = 0; j < N; ++j)
            bt[static_cast<std::size_t>(j) * K + k] = unpack(b[static_cast<std::size_t>(k) * N + j]);
      }};
  gemm_report r;
  exact_outputs(ops, M, N, K, c, o, d, threads, rows_done, r);
  bounds::invalidate(r.normwise_bound, "no bound against the unquantised inputs");
  r.normwise_bound_relative = std::numeric_limits<double>::infinity();
  return r;
}

double largest_relative(std::span<const double> relative, bool keep_nan) {
  double m = -1;
  for (double r : relative) m = keep_nan && std::isnan(r) ? r : std::isnan(m) ? m : std::max(m, r);
  return m;
}

}  // namespace fpemu::analysis

