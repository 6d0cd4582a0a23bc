// libFuzzer harness: the tensor-core presets (the block-FMA model of block_fma.hpp, chained over
// K, with DeepSeek-V3 promotion where the preset has it) on random dot products D = C + sum a_i b_i
// against the exact result. The input picks a preset, its fp16-accumulator variant where it has
// one, which operands of a mixed fp8 preset take the other fp8 format, K (1..320: more than two
// promotion groups), C, and the codes (optionally with exponents kept near 1, where the model's
// premises hold).
//
// Checks:
//  1. The preset's own entry point, tensor_core_dot, gives D bit for bit as the chain of
//     block_fma_step calls below; the chain is the same composition (docs/architecture.md, the
//     tensor-core model) done block by block, so that every block's C is seen.
//  2. NaN and infinity (block_fma.hpp step 1): with a NaN input, inf * 0, or +inf and -inf terms,
//     D is NaN; else with an infinite term D is that infinity (unless a block overflowed first).
//  3. The documented truncation bound: |D - X| <= c * S, X = C + sum a_i b_i and
//     S = |C| + sum |a_i b_i| computed exactly (MPFR), c = bounds::truncating_block_dot (the
//     truncating tensor-core model, analysis/reference/bounds.hpp) for K products in blocks of n with F
//     fraction bits and the accumulator's u (2u for round toward zero); with promotion composed
//     as `fpemu dot` does (analysis::accumulation_bound: (1 + c_chunk)(1 + gamma_q(u_fp32)) - 1
//     over q = ceil(K / 128) groups), and (1 + u_out) for a final rounding into a narrower output.
//     Checked where the bound's premises hold: finite inputs; no overflow, underflow or invalid
//     flag; every block's largest exponent E met by a term of magnitude >= 2^E (bounds.cpp's
//     derivation; a subnormal input or a subnormal C can break it); truncating alignment.
// The H100 fp8 presets' fp16 variant (mma.sync lowered to two fp16 HMMA steps and an fp16 add)
// has no documented bound: it is only run, for the sanitizers.
#include <mpfr.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "analysis/reference/bounds.hpp"
#include "analysis/reference/dot_analysis.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/block_fma.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"
#include "fuzz_input.hpp"

namespace {

using fpemu::format;
using fpemu::rounded;
using fpemu::unpacked;
using fpemu::value_class;

constexpr int kMaxK = 320;

// A code of f from raw bits; with window w > 0 its exponent field is moved into the 2w + 1 fields
// around the bias, so that products neither overflow nor underflow.
std::uint32_t shape_code(const format& f, std::uint32_t raw, int window) {
  raw &= fpemu::code_mask(f);
  if (window == 0) return raw;
  const std::uint32_t field_mask = fpemu::exp_field_max(f) << f.frac_bits;
  const int field = static_cast<int>((raw & field_mask) >> f.frac_bits);
  const int moved =
      std::clamp(f.bias + field % (2 * window + 1) - window, 0, static_cast<int>(fpemu::exp_field_max(f)));
  return (raw & ~field_mask) | (static_cast<std::uint32_t>(moved) << f.frac_bits);
}

struct dot_case {
  fpemu::tensor_core_preset preset;  // inputs chosen
  bool fp16 = false;                 // the fp16-accumulator variant
  fpemu::block_fma_model block;      // the block model in use
  format fc;                         // C's format
  std::vector<std::uint32_t> a, b;
  std::uint32_t c = 0;
};

struct chain_result {
  format out;
  std::uint32_t d = 0;
  std::uint8_t flags = 0;
  bool premise = true;
};

// The preset's dot product block by block (tensor_core_dot's composition).
chain_result run_chain(const dot_case& k) {
  const fpemu::block_fma_model& m = k.block;
  const format& fa = k.preset.a;
  const format& fb = k.preset.b;
  chain_result out;
  // Blocks over products [lo, hi) from C = c in fc; returns the last block's D (in m.acc).
  auto blocks = [&](std::size_t lo, std::size_t hi, format fc, std::uint32_t c) {
    for (std::size_t i = lo; i < hi; i += static_cast<std::size_t>(m.block_size)) {
      const int n = static_cast<int>(std::min(hi - i, static_cast<std::size_t>(m.block_size)));
      out.premise = out.premise && fpemu::analysis::block_premise(m, fa, &k.a[i], fb, &k.b[i], n, fc, c).empty();
      const rounded r = fpemu::block_fma_step(m, fa, &k.a[i], fb, &k.b[i], n, fc, c);
      out.flags |= r.flags;
      c = r.code;
      fc = m.acc;
    }
    return c;
  };
  const fpemu::accumulator_model& model = k.preset.model;
  rounded final_rounding;
  if (k.fp16 || model.promote_every == 0) {
    out.out = k.fp16 ? fpemu::formats::fp16 : fpemu::formats::fp32;
    final_rounding = fpemu::convert(out.out, m.acc, blocks(0, k.a.size(), k.fc, k.c), k.preset.output_rounding);
  } else {
    // Promotion: each group of promote_every products starts the chain at zero; its result is
    // added into the promoted register (an fma by the group scale, which is 1 here).
    const format& hi = model.promoted;
    std::uint32_t reg = fpemu::convert(hi, k.fc, k.c, model.promoted_rounding).code;
    const auto group = static_cast<std::size_t>(model.promote_every);
    for (std::size_t g = 0; g < k.a.size(); g += group) {
      const std::uint32_t partial = blocks(g, std::min(k.a.size(), g + group), m.acc, 0);
      const rounded r = fpemu::add(hi, fpemu::convert(hi, m.acc, partial).code, reg, model.promoted_rounding);
      out.flags |= r.flags;
      reg = r.code;
    }
    out.out = k.preset.output;
    final_rounding = fpemu::convert(out.out, hi, reg, k.preset.output_rounding);
  }
  out.d = final_rounding.code;
  out.flags |= final_rounding.flags;
  return out;
}

[[noreturn]] void fail(const dot_case& k, const std::string& what) {
  std::fprintf(stderr, "FAILED %s: preset %s%s, inputs %s x %s, K = %zu, C = 0x%x\n", what.c_str(),
               k.preset.name.c_str(), k.fp16 ? " (fp16 accumulator)" : "", fpemu::to_string(k.preset.a).c_str(),
               fpemu::to_string(k.preset.b).c_str(), k.a.size(), k.c);
  __builtin_trap();
}

// The case through the preset's entry point: binary32 patterns in (every input value is one),
// binary32 out, or binary16 with the fp16 variant.
std::uint32_t entry_point_dot(const dot_case& k) {
  std::vector<std::uint32_t> a32(k.a.size()), b32(k.b.size());
  for (std::size_t i = 0; i < k.a.size(); ++i) {
    a32[i] = fpemu::convert(fpemu::formats::fp32, k.preset.a, k.a[i]).code;
    b32[i] = fpemu::convert(fpemu::formats::fp32, k.preset.b, k.b[i]).code;
  }
  const std::uint32_t c32 = fpemu::convert(fpemu::formats::fp32, k.fc, k.c).code;
  const fpemu::expected<std::uint32_t> d = fpemu::tensor_core_dot(k.preset, k.fp16, a32, b32, c32);
  if (!d) fail(k, "tensor_core_dot refused: " + d.message());
  return *d;
}

// Check 1: tensor_core_dot == the block chain.
void check_entry_point(const dot_case& k, const chain_result& r) {
  const std::uint32_t d = entry_point_dot(k);
  const format got_format = k.fp16 ? fpemu::formats::fp16 : fpemu::formats::fp32;
  const rounded want = fpemu::convert(got_format, r.out, r.d);  // exact: bf16 output widened
  const bool both_nan = fpemu::decode(got_format, d).cls == value_class::nan &&
                        fpemu::decode(r.out, r.d).cls == value_class::nan;  // payloads may differ
  if (d != want.code && !both_nan) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "tensor_core_dot gives 0x%x, the block chain 0x%x", d, want.code);
    fail(k, buf);
  }
}

// Check 2: returns whether some input is NaN or infinite (and checked D's class then).
bool check_specials(const dot_case& k, const chain_result& r) {
  bool nan = false, pos_inf = false, neg_inf = false;
  const unpacked uc = fpemu::decode(k.fc, k.c);
  nan = uc.cls == value_class::nan;
  if (uc.cls == value_class::infinite) (uc.negative ? neg_inf : pos_inf) = true;
  for (std::size_t i = 0; i < k.a.size(); ++i) {
    const unpacked ua = fpemu::decode(k.preset.a, k.a[i]), ub = fpemu::decode(k.preset.b, k.b[i]);
    if (ua.cls == value_class::nan || ub.cls == value_class::nan) nan = true;
    if (ua.cls == value_class::infinite || ub.cls == value_class::infinite) {
      if (ua.cls == value_class::zero || ub.cls == value_class::zero) nan = true;
      else (ua.negative != ub.negative ? neg_inf : pos_inf) = true;
    }
  }
  if (!nan && !pos_inf && !neg_inf) return false;
  // IEEE arithmetic (pairwise) and products overflowing to infinity add their own specials.
  if (k.block.sum == fpemu::block_sum::pairwise || k.block.product_overflow) return true;
  if (r.flags & fpemu::flag::overflow) return true;  // an overflowed block may already be infinite
  const unpacked d = fpemu::decode(r.out, r.d);
  const bool want_nan = nan || (pos_inf && neg_inf);
  const bool ok = want_nan ? d.cls == value_class::nan : d.cls == value_class::infinite && d.negative == neg_inf;
  if (!ok) fail(k, want_nan ? "D is not NaN" : "D is not the infinity of the inputs");
  return true;
}

// Exact arithmetic on the values involved: binary32-range products of <= 24-bit significands,
// K <= 320 of them, span well under kExactBits.
constexpr mpfr_prec_t kExactBits = 1200;

struct exact_values {
  mpfr_t x, s, t, err, bound, coef;
  exact_values() { mpfr_inits2(kExactBits, x, s, t, err, bound, coef, static_cast<mpfr_ptr>(nullptr)); }
  ~exact_values() { mpfr_clears(x, s, t, err, bound, coef, static_cast<mpfr_ptr>(nullptr)); }
};

void exact(int ternary) {
  if (ternary != 0) __builtin_trap();  // the harness's precision is too small
}

// Check 3: the truncation bound, where its premises hold.
void check_bound(const dot_case& k, const chain_result& r) {
  if (!r.premise || k.block.alignment != fpemu::alignment_rounding::truncate) return;
  if (r.flags & (fpemu::flag::overflow | fpemu::flag::underflow | fpemu::flag::invalid)) return;

  // The bound `fpemu dot` reports (analysis::accumulation_bound), for this chain.
  fpemu::analysis::dot_problem p;
  p.a_format = k.preset.a;
  p.b_format = k.preset.b;
  p.k = k.a.size();
  p.model = k.preset.model;
  p.model.block = k.block;
  if (k.fp16) p.model.promote_every = 0;
  p.out = r.out;
  p.out_rounding = k.preset.output_rounding;
  const fpemu::bounds::coefficient c = fpemu::analysis::accumulation_bound(p, false);
  if (!c.valid) return;

  static exact_values v;
  mpfr_set_d(v.x, fpemu::to_double(k.fc, k.c), MPFR_RNDN);  // every value is a binary64 value
  mpfr_abs(v.s, v.x, MPFR_RNDN);
  for (std::size_t i = 0; i < k.a.size(); ++i) {
    exact(mpfr_set_d(v.t, fpemu::to_double(k.preset.a, k.a[i]), MPFR_RNDN));
    exact(mpfr_mul_d(v.t, v.t, fpemu::to_double(k.preset.b, k.b[i]), MPFR_RNDN));
    exact(mpfr_add(v.x, v.x, v.t, MPFR_RNDN));
    mpfr_abs(v.t, v.t, MPFR_RNDN);
    exact(mpfr_add(v.s, v.s, v.t, MPFR_RNDN));
  }
  exact(mpfr_set_d(v.err, fpemu::to_double(r.out, r.d), MPFR_RNDN));
  exact(mpfr_sub(v.err, v.err, v.x, MPFR_RNDN));
  mpfr_abs(v.err, v.err, MPFR_RNDN);
  // c * S rounded up (c is rounded up already): the check never blames the model for the
  // harness's rounding.
  mpfr_set_d(v.coef, c.value, MPFR_RNDU);
  mpfr_mul(v.bound, v.coef, v.s, MPFR_RNDU);
  if (mpfr_cmp(v.err, v.bound) > 0) {
    char buf[160];
    mpfr_snprintf(buf, sizeof buf, "|D - X| = %.6Rg exceeds the bound %.6Rg (c = %.6Rg, S = %.6Rg)", v.err, v.bound,
                  v.coef, v.s);
    fail(k, buf);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz_input::byte_reader in(data, size);
  const std::vector<fpemu::tensor_core_preset>& presets = fpemu::tensor_core_presets();
  dot_case k;
  k.preset = presets[in.byte() % presets.size()];
  const std::uint8_t options = in.byte();
  if (k.preset.scale) return 0;  // block-scaled presets: tests/test_mmasim_vectors.cpp
  if (!k.preset.inputs.empty()) {  // either operand may take any of the listed formats
    const std::vector<format>& in = k.preset.inputs;
    const format fa = in[(options & 3) % in.size()];
    const format fb = in[((options >> 6) & 3) % in.size()];
    const fpemu::expected<fpemu::tensor_core_preset> mixed = fpemu::with_inputs(k.preset, fa, fb);
    if (!mixed) __builtin_trap();  // every listed pair is allowed
    k.preset = *mixed;
  }
  k.fp16 = (options & 4) && k.preset.fp16_accumulator;
  k.block = k.fp16 ? *k.preset.fp16_accumulator : k.preset.model.block;
  k.fc = k.fp16 ? fpemu::formats::fp16 : fpemu::formats::fp32;
  const int window = (options >> 3) & 7;
  const std::size_t K = 1 + in.u16() % kMaxK;
  k.c = shape_code(k.fc, in.u32(), window);
  // The codes come from the rest of the input, read cyclically so that a short input still
  // makes a long dot product.
  const std::span<const std::uint8_t> pool = in.rest();
  if (pool.empty()) return 0;
  std::size_t at = 0;
  auto next_code = [&](const format& f) {
    std::uint32_t raw = 0;
    for (int i = 0; i < (fpemu::width(f) + 7) / 8; ++i) raw |= std::uint32_t{pool[at++ % pool.size()]} << (8 * i);
    return shape_code(f, raw, window);
  };
  for (std::size_t i = 0; i < K; ++i) {
    k.a.push_back(next_code(k.preset.a));
    k.b.push_back(next_code(k.preset.b));
  }

  if (k.fp16 && k.preset.fp16_via_hmma) {
    entry_point_dot(k);
    return 0;
  }
  const chain_result r = run_chain(k);
  check_entry_point(k, r);
  if (!check_specials(k, r)) check_bound(k, r);
  return 0;
}
