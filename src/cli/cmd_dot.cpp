// fpemu dot --a-format FMT --b-format FMT --k K [accumulator options] [--scaling S] [workload
// options]: one dot product of random vectors as analysis::dot computes it, its exact value, the
// error and the bounds that apply.
//
// Per sample: a and b (K floats each, drawn in that order) are quantised with analysis::quantise
// (nearest-even, saturating; --scaling none just rounds), the dot product is computed with
// analysis::dot, and two references are formed with fpemu::exact_accumulator:
//  - exact: sum_i (a^_i s_a,i) (b^_i s_b,i) of the quantised codes with their scales applied,
//    every product exact; the error of the computed value against it is the accumulation error;
//  - exact_original: sum_i a_i b_i of the float data before quantisation; the error against it
//    adds the quantisation error.
//
// The bound on the accumulation error, c * sum_i |a^_i s_a,i b^_i s_b,i| (bounds.hpp):
//  - format accumulator, no promotion: gamma_K(u_acc) (Higham eq. (3.5): K roundings, the first
//    being the product's rounding into the accumulator), u_acc = effective_unit_roundoff;
//  - a preset (block-FMA): truncating_block_dot(K, b, F, u_acc);
//  - exact accumulator: no accumulation error;
//  - promotion every Nc products (--promote, a promoting preset, or a group scaling, which folds
//    each group of 128 or 32 into the fp32 register scaled by s_a s_b): the promoted_sum-like
//    (1 + c_chunk)(1 + gamma_q(u_fp32)) - 1, c_chunk the bound above for Nc products, q =
//    ceil(K/Nc) roundings of the register, plus one when the product of two fp32 group scales is
//    rounded to fp32 (q + 1);
//  - (1 + c)(1 + u_out) - 1 when a final rounding may be inexact: per-tensor scales applied in the
//    epilogue, the exact accumulator rounded into its format, an output narrower than the sum.
// A bound is shown not valid, with the reason, when the data break its model: overflow,
// underflow or an invalid operation in the accumulator (taken from a replica of the computation
// with fpemu::dot_accumulator), a block whose largest exponent belongs only to products below it
// (subnormal inputs), a group scale outside fp32's range.
//
// The bound against the original data (bounds::dot_lowprec_inputs generalised): with u_in the
// quantisation's unit roundoff (max over A and B; plus 2^-53 for the double rounding of x/scale
// with fp32 scales), |computed - sum a_i b_i| <= (2u_in + u_in^2 + c (1+u_in)^2) sum|a_i b_i|
// + (1 + c) T, where T = sum_i (1+u_in)(|a_i| eta_b,i + |b_i| eta_a,i) + eta_a,i eta_b,i covers
// inputs quantised below the normal range (eta = half the subnormal spacing times the scale,
// 0 for the others). With T = 0 and c = gamma_K(u_acc) this is exactly dot_lowprec_inputs.
// Inputs that saturate (|x|/scale above the largest finite value; OCP MX scales allow it) raise
// u_in to their largest relative error (|x|/scale - max) / (|x|/scale).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "analysis/reference/bounds.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/summation.hpp"
#include "common.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using analysis::scaling;

constexpr std::int64_t kMaxK = 100'000'000;

struct dot_cli_options {
  std::string a_format, b_format;  // empty: e4m3fn, or the preset's
  std::string k = "4096";
  std::string scaling_name = "none";
  accumulator_options acc;
  workload_options work;
};

struct dot_setup {
  format fa, fb;
  int k = 0;
  scaling scale_kind = scaling::none;
  accumulator_choice acc;
  accumulator_model model;  // what gemm() runs (group scalings promote every group)
  format out;
  rounding out_rounding;
};

struct bound_result {
  std::string name;
  double coefficient = kInf;
  double absolute = kInf;
  bool valid = false;
  std::string condition;
};

struct sample_result {
  std::uint64_t seed = 0;
  double value = 0, exact = 0, error = 0, rel = 0, abs_sum = 0;
  bound_result bound;
  double exact_orig = 0, error_orig = 0, rel_orig = 0, abs_sum_orig = 0;
  bound_result bound_orig;
  std::uint8_t flags = 0;
};

// Every finite value of `inner` is a value of `outer`.
bool contains(const format& outer, const format& inner) {
  return precision(outer) >= precision(inner) && emax(outer) >= emax(inner) && emin(outer) <= emin(inner) &&
         (outer.subnormals || !inner.subnormals) && (outer.is_signed || !inner.is_signed) &&
         max_finite(outer) >= max_finite(inner);
}

double u_eff(const format& f, const rounding& r) { return analysis::effective_unit_roundoff(f, r.mode); }

bounds::coefficient chunk_bound(const accumulator_model& m, std::uint64_t len) {
  switch (m.kind) {
    case accumulator_kind::format: return bounds::dot(len, u_eff(m.acc, m.acc_rounding));
    case accumulator_kind::block_fma:
      return bounds::truncating_block_dot(len, static_cast<std::uint64_t>(m.block.block_size), m.block.frac_bits,
                                          u_eff(m.block.acc, m.block.acc_rounding));
    case accumulator_kind::exact: break;
  }
  return bounds::coefficient{0.0, true, "exact partial sums", "0"};
}

// The accumulation bound of the setup; `scale_rounded`: a group's product of fp32 scales was
// rounded into fp32.
bounds::coefficient accumulation_bound(const dot_setup& s, bool scale_rounded) {
  const accumulator_model& m = s.model;
  const auto K = static_cast<std::uint64_t>(s.k);
  bounds::coefficient c;
  bool final_rounding = false;
  if (m.promote_every == 0) {
    c = chunk_bound(m, K);
    if (m.kind == accumulator_kind::exact) {
      final_rounding = true;
    } else {
      const format& vf = m.kind == accumulator_kind::format ? m.acc : m.block.acc;
      final_rounding = !contains(s.out, vf);
    }
  } else {
    const std::uint64_t len = std::min(K, static_cast<std::uint64_t>(m.promote_every));
    const std::uint64_t q = K / len + (K % len != 0 ? 1 : 0);
    const bounds::coefficient chunk = chunk_bound(m, len);
    const bounds::coefficient high = bounds::gamma(q + (scale_rounded ? 1 : 0), u_eff(m.promoted, m.promoted_rounding));
    c.name = "(1+[" + chunk.name + "])(1+gamma_{ceil(K/Nc)" + (scale_rounded ? "+1" : "") + "}(u_" +
             to_string(m.promoted) + "))-1";
    c.condition = "chunks of Nc = " + std::to_string(len) + ": " + chunk.condition + "; promoted register: " +
                  high.condition;
    if (scale_rounded) c.condition += "; +1 rounding: s_a*s_b rounded to fp32";
    c.valid = chunk.valid && high.valid;
    c.value = c.valid ? compose_up(chunk.value, high.value) : kInf;
    final_rounding = !contains(s.out, m.promoted);
  }
  if (s.scale_kind == scaling::per_tensor) final_rounding = true;
  if (final_rounding && c.valid) {
    const double u_out = u_eff(s.out, s.out_rounding);
    if (c.value == 0) {
      c.name = "u_out";
      c.condition = "one rounding into " + to_string(s.out) + " (u_out = " + num(u_out) + ")";
      c.value = u_out;
    } else {
      c.name = "(1+[" + c.name + "])(1+u_out)-1";
      c.condition += "; one final rounding into " + to_string(s.out) + " (u_out = " + num(u_out) + ")";
      c.value = compose_up(c.value, u_out);
    }
  }
  return c;
}

// Premise of truncating_block_dot that the data can break: in every block the largest exponent
// E (e_a + e_b of a non-zero product) belongs to a product with |a b| >= 2^E (subnormal inputs
// have significands below 1). The running sum C is ignored (conservative).
std::string block_premise(const dot_setup& s, const analysis::scaled_matrix& a, const analysis::scaled_matrix& b) {
  const block_fma_model& m = s.model.block;
  if (m.min_reference_exp > emin(s.fa) + emin(s.fb))
    return "min_reference_exp = " + std::to_string(m.min_reference_exp) +
           " may raise the reference exponent above every term";
  const auto K = static_cast<std::size_t>(s.k);
  const auto bs = static_cast<std::size_t>(m.block_size);
  const std::size_t chunk = s.model.promote_every > 0 ? static_cast<std::size_t>(s.model.promote_every) : K;
  const detail::u128 one = detail::u128{1} << (s.fa.frac_bits + s.fb.frac_bits);
  for (std::size_t c0 = 0; c0 < K; c0 += chunk) {
    const std::size_t c1 = std::min(K, c0 + chunk);
    for (std::size_t lo = c0; lo < c1; lo += bs) {
      int E = std::numeric_limits<int>::min();
      bool reached = false;
      for (std::size_t i = lo; i < std::min(c1, lo + bs); ++i) {
        const unpacked ua = decode(s.fa, a.codes[i]), ub = decode(s.fb, b.codes[i]);
        if (!m.input_subnormals && (detail::is_subnormal(s.fa, ua) || detail::is_subnormal(s.fb, ub)))
          return "input " + std::to_string(i) + " is subnormal, which the model reads as zero";
        if (ua.cls != value_class::finite || ub.cls != value_class::finite) continue;
        const int lead = ua.exp + s.fa.frac_bits + ub.exp + s.fb.frac_bits;
        const bool big = ua.sig * ub.sig >= one;
        if (lead > E) {
          E = lead;
          reached = big;
        } else if (lead == E) {
          reached = reached || big;
        }
      }
      if (E != std::numeric_limits<int>::min() && !reached)
        return "in the block from product " + std::to_string(lo) +
               " the largest exponent belongs only to products with subnormal inputs (the bound assumes "
               "2^E <= max|t_j|)";
    }
  }
  return {};
}

std::string flags_problem(std::uint8_t flags) {
  if (flags & flag::invalid) return "an invalid operation was raised";
  if (flags & flag::overflow) return "the accumulator overflowed";
  if (flags & flag::underflow) return "a rounding underflowed (the relative error model does not hold)";
  return {};
}

void invalidate(bound_result& b, const std::string& why) {
  if (!b.valid) return;
  b.valid = false;
  b.absolute = kInf;
  b.condition += "; not valid here: " + why;
}

sample_result run_sample(const dot_setup& s, const workload& w, std::uint64_t seed) {
  sample_result r;
  r.seed = seed;
  const auto K = static_cast<std::size_t>(s.k);
  sampler draw(w, seed);
  const std::vector<float> xa = draw_floats(draw, K), xb = draw_floats(draw, K);
  const analysis::scaled_matrix a = value_or_fail(analysis::quantise(xa, 1, s.k, s.fa, s.scale_kind, true), "A");
  const analysis::scaled_matrix b = value_or_fail(analysis::quantise(xb, s.k, 1, s.fb, s.scale_kind, false), "B");

  analysis::gemm_options go;
  go.acc = s.model;
  go.out = s.out;
  go.out_rounding = s.out_rounding;
  go.threads = 1;
  go.sr = sr_stream{seed, 0, 0};
  const std::uint32_t code = value_or_fail(analysis::dot(a, b, go), "dot");

  // The exact dot products, of the quantised values (scales applied) and of the float data.
  exact_accumulator exact, abs_sum, exact_orig, abs_orig;
  std::vector<double> sa(K), sb(K);
  for (std::size_t i = 0; i < K; ++i) {
    sa[i] = element_scale(a, 0, static_cast<int>(i), true);
    sb[i] = element_scale(b, static_cast<int>(i), 0, false);
    unpacked ta = exact_mul(decode(s.fa, a.codes[i]), unpack(sa[i])).value;
    unpacked tb = exact_mul(decode(s.fb, b.codes[i]), unpack(sb[i])).value;
    exact.add_product(ta, tb);
    ta.negative = tb.negative = false;
    abs_sum.add_product(ta, tb);
    unpacked oa = unpack(xa[i]), ob = unpack(xb[i]);
    exact_orig.add_product(oa, ob);
    oa.negative = ob.negative = false;
    abs_orig.add_product(oa, ob);
  }
  const unpacked computed = decode(s.out, code);
  r.value = to_double(s.out, code);
  r.exact = exact.to_double();
  r.error = exact_error(exact, computed);
  r.rel = relative(r.error, r.exact);
  r.abs_sum = abs_sum.to_double();
  r.exact_orig = exact_orig.to_double();
  r.error_orig = exact_error(exact_orig, computed);
  r.rel_orig = relative(r.error_orig, r.exact_orig);
  r.abs_sum_orig = abs_orig.to_double();

  // A replica of the computation for its flags (gemm.cpp's loop for output 0).
  std::string broken;
  bool scale_rounded = false;
  {
    const int group = scaling_group(s.scale_kind);
    const sr_stream sr{seed, 0, 0};
    dot_accumulator acc(s.model, s.fa, s.fb, sr);
    acc.reset(formats::fp32, 0, sr);
    for (std::size_t i = 0; i < K; ++i) {
      if (group != 0 && i % static_cast<std::size_t>(group) == 0) {
        const rounded g = from(formats::fp32, sa[i] * sb[i]);
        if (g.flags & flag::inexact) scale_rounded = true;
        if ((g.flags & (flag::overflow | flag::underflow)) && broken.empty())
          broken = "the product of the group scales from input " + std::to_string(i) + " is outside fp32's range";
        acc.set_group_scale(formats::fp32, g.code);
      }
      acc.add_product(a.codes[i], b.codes[i]);
    }
    const unpacked v = acc.value();
    const double alpha = (s.scale_kind == scaling::per_tensor ? sa[0] * sb[0] : 1.0);
    const std::uint64_t random = random_bits(seed, 0, 0xffffffffu);
    const rounded fin = alpha == 1.0 ? fpemu::round(s.out, v, s.out_rounding, random)
                                     : round_exact(s.out, exact_fma(unpack(alpha), v, unpacked{}, s.out_rounding.mode),
                                                      s.out_rounding, random);
    r.flags = static_cast<std::uint8_t>(acc.flags() | fin.flags);
    if (broken.empty()) broken = flags_problem(r.flags);
    if (broken.empty() && fin.code != code)
      broken = "the replica used to check overflow and underflow disagrees with analysis::dot";
  }
  if (broken.empty() && computed.cls != value_class::finite && computed.cls != value_class::zero)
    broken = "the computed result is not finite";
  if (broken.empty() && s.model.kind == accumulator_kind::block_fma) broken = block_premise(s, a, b);

  // The accumulation bound.
  const bounds::coefficient c = accumulation_bound(s, scale_rounded);
  r.bound.name = c.name;
  r.bound.coefficient = c.value;
  r.bound.valid = c.valid;
  r.bound.condition = c.condition;
  r.bound.absolute = c.valid ? mul_up(c.value, upper_double(abs_sum)) : kInf;
  if (!broken.empty()) invalidate(r.bound, broken);

  // The bound against the original data.
  const bool fp32_scales = s.scale_kind == scaling::per_tensor || s.scale_kind == scaling::tile_1x128 ||
                           s.scale_kind == scaling::block_128;
  auto u_of = [&](const format& f) {
    const double u = unit_roundoff(f), d = std::ldexp(1.0, -53);
    return fp32_scales ? add_up(mul_up(u, 1 + d), d) : u;
  };
  double u_in = std::max(u_of(s.fa), u_of(s.fb));
  // Saturated inputs: |a^ - a| = (|x|/s - max_finite) s <= d |a| with d their relative error.
  std::size_t saturated = 0;
  auto saturation = [&](double y, const format& f) {
    if (!(y > max_finite(f))) return;
    ++saturated;
    u_in = std::max(u_in, round_up(round_up(y - max_finite(f)) / y));
  };
  for (std::size_t i = 0; i < K; ++i) {
    saturation(std::fabs(static_cast<double>(xa[i])) / sa[i], s.fa);
    saturation(std::fabs(static_cast<double>(xb[i])) / sb[i], s.fb);
  }
  auto half_spacing = [](const format& f) {
    return f.subnormals ? std::ldexp(1.0, emin(f) - f.frac_bits - 1) : std::ldexp(1.0, emin(f) - 1);
  };
  double T = 0;
  std::size_t tiny = 0;
  for (std::size_t i = 0; i < K; ++i) {
    const double ya = std::fabs(static_cast<double>(xa[i])) / sa[i], yb = std::fabs(static_cast<double>(xb[i])) / sb[i];
    const double ea = xa[i] != 0 && ya < min_normal(s.fa) ? sa[i] * half_spacing(s.fa) : 0.0;
    const double eb = xb[i] != 0 && yb < min_normal(s.fb) ? sb[i] * half_spacing(s.fb) : 0.0;
    tiny += (ea > 0 ? 1 : 0) + (eb > 0 ? 1 : 0);
    if (ea > 0 || eb > 0) {
      const double cross = add_up(mul_up(std::fabs(static_cast<double>(xa[i])), eb), mul_up(std::fabs(static_cast<double>(xb[i])), ea));
      T = add_up(T, add_up(mul_up(1 + u_in, cross), mul_up(ea, eb)));
    }
  }
  bound_result& lo = r.bound_orig;
  // c is gamma_K(u_acc) itself: a format accumulator, no promotion, no final rounding (out = acc).
  const bool plain = s.model.kind == accumulator_kind::format && s.model.promote_every == 0 &&
                     s.scale_kind != scaling::per_tensor && s.out == s.model.acc;
  if (plain) {
    const bounds::coefficient l = bounds::dot_lowprec_inputs(static_cast<std::uint64_t>(K), u_in, u_eff(s.model.acc, s.model.acc_rounding));
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
  if (!broken.empty()) invalidate(lo, broken);
  return r;
}

// Summary over the samples.
struct dot_summary {
  double sum_rel = 0, max_rel = -1;
  bool have = false;
  sample_result worst;
  std::uint64_t valid = 0, violations = 0, valid_orig = 0, violations_orig = 0;
  double max_ratio = -1, max_ratio_orig = -1;

  static void tally(const bound_result& b, double error, std::uint64_t& valid, std::uint64_t& violations,
                    double& max_ratio) {
    if (!b.valid) return;
    ++valid;
    const double e = std::fabs(error);
    if (e > b.absolute) ++violations;
    const double ratio = b.absolute > 0 ? e / b.absolute : (e == 0 ? 0.0 : kInf);
    max_ratio = std::max(max_ratio, ratio);
  }

  void add(const sample_result& r) {
    sum_rel += r.rel;
    if (!have || r.rel > max_rel || (std::isnan(r.rel) && !std::isnan(max_rel))) {
      have = true;
      max_rel = r.rel;
      worst = r;
    }
    tally(r.bound, r.error, valid, violations, max_ratio);
    tally(r.bound_orig, r.error_orig, valid_orig, violations_orig, max_ratio_orig);
  }
};

void print_bound(const char* key, const bound_result& b) {
  std::cout << "  " << key << "deterministic  " << b.name << ": coefficient " << num(b.coefficient) << ", absolute "
            << num(b.absolute) << ", " << (b.valid ? "valid" : "not valid") << " (" << b.condition << ")\n";
}

void run_dot(const dot_cli_options& o) {
  const workload w = resolve_workload(o.work);
  dot_setup s;
  s.acc = resolve_accumulator(o.acc, "h100-e4m3");
  s.fa = o.a_format.empty() ? (s.acc.preset ? s.acc.preset->a : formats::e4m3fn)
                            : value_or_fail(parse_format(o.a_format), "--a-format");
  s.fb = o.b_format.empty() ? (s.acc.preset ? s.acc.preset->b : formats::e4m3fn)
                            : value_or_fail(parse_format(o.b_format), "--b-format");
  s.k = static_cast<int>(parse_integer(o.k, "--k", 1, kMaxK));
  s.scale_kind = require_scaling(o.scaling_name);
  s.model = model_for_scaling(s.acc, s.scale_kind, !o.acc.promote.empty());
  if (s.acc.preset) {
    s.out = s.acc.preset->output;
    s.out_rounding = s.acc.preset->output_rounding;
  } else if (s.model.promote_every > 0) {
    s.out = s.model.promoted;
    s.out_rounding = s.model.promoted_rounding;
  } else {
    s.out = s.model.acc;
    s.out_rounding = s.model.acc_rounding;
  }

  dot_summary sum;
  progress_meter progress(w.progress, w.samples);
  for (std::uint64_t i = 0; i < w.samples; ++i) {
    progress.update(i + 1);
    sum.add(run_sample(s, w, w.sample_seed(i)));
  }
  progress.finish();
  const sample_result& r = sum.worst;
  const double mean = sum.sum_rel / static_cast<double>(w.samples);

  if (w.csv) {
    std::cout << "a_format,b_format,k,accumulator,scaling,out,samples,seed,value,exact,error,rel_error,mean_rel_error,"
                 "max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,max_error_over_bound,"
                 "bound_violations,exact_original,error_original,rel_error_original,bound_original_absolute,"
                 "bound_original_valid,bound_original_violations\n";
    std::cout << csv_field(to_string(s.fa)) << ',' << csv_field(to_string(s.fb)) << ',' << s.k << ','
              << csv_field(describe(s.acc)) << ',' << analysis::to_string(s.scale_kind) << ','
              << csv_field(to_string(s.out)) << ',' << w.samples << ',' << r.seed << ',' << exact_num(r.value) << ','
              << exact_num(r.exact) << ',' << exact_num(r.error) << ',' << num(r.rel, 9) << ',' << num(mean, 9) << ','
              << num(sum.max_rel, 9) << ',' << csv_field(r.bound.name) << ',' << exact_num(r.bound.coefficient) << ','
              << exact_num(r.bound.absolute) << ',' << (r.bound.valid ? "yes" : "no") << ','
              << (sum.max_ratio >= 0 ? num(sum.max_ratio, 9) : "") << ',' << sum.violations << ','
              << exact_num(r.exact_orig) << ',' << exact_num(r.error_orig) << ',' << num(r.rel_orig, 9) << ','
              << exact_num(r.bound_orig.absolute) << ',' << (r.bound_orig.valid ? "yes" : "no") << ','
              << sum.violations_orig << '\n';
    return;
  }

  std::cout << "fpemu dot: K = " << s.k << ", A " << to_string(s.fa) << ", B " << to_string(s.fb) << ", scaling "
            << analysis::to_string(s.scale_kind) << "; data " << w.describe() << ", " << w.seeds() << '\n'
            << "accumulator: " << describe(s.acc);
  if (s.model.promote_every != s.acc.model.promote_every)
    std::cout << "; promoted every " << s.model.promote_every << " into fp32 by the group scaling";
  std::cout << "\nresult in " << to_string(s.out) << ' ' << to_string(s.out_rounding.mode) << '\n';
  if (w.samples > 1)
    std::cout << "  mean_rel_error  " << num(mean) << " over " << w.samples << " samples\n"
              << "  max_rel_error   " << num(sum.max_rel) << " (seed " << r.seed
              << "; the lines below are for this sample)\n";
  std::cout << "  value        " << exact_num(r.value) << '\n'
            << "  exact        " << exact_num(r.exact) << "  (quantised inputs, scales applied; sum |a_i b_i| = "
            << exact_num(r.abs_sum) << ")\n"
            << "  error        " << exact_num(r.error) << "  (computed - exact)\n"
            << "  rel_error    " << num(r.rel) << '\n';
  if (r.flags != 0) std::cout << "  flags        " << flags_to_string(r.flags) << '\n';
  print_bound("bound        ", r.bound);
  std::cout << "  exact_original      " << exact_num(r.exact_orig) << "  (the float data before quantisation; sum |a_i b_i| = "
            << exact_num(r.abs_sum_orig) << ")\n"
            << "  error_original      " << exact_num(r.error_orig) << "  (computed - exact_original)\n"
            << "  rel_error_original  " << num(r.rel_orig) << '\n';
  print_bound("bound_original  ", r.bound_orig);
  if (w.samples > 1) {
    std::cout << "  violations   " << sum.violations << " of the " << sum.valid
              << " samples with a valid bound exceed it";
    if (sum.max_ratio >= 0) std::cout << "; max |error|/bound = " << num(sum.max_ratio);
    std::cout << "\n  violations_original  " << sum.violations_orig << " of " << sum.valid_orig;
    if (sum.max_ratio_orig >= 0) std::cout << "; max |error_original|/bound_original = " << num(sum.max_ratio_orig);
    std::cout << '\n';
  }
}

}  // namespace

command add_dot(CLI::App& parent) {
  auto o = std::make_shared<dot_cli_options>();
  CLI::App* app = parent.add_subcommand("dot", "A dot product of random vectors: error against exact, and bounds");
  app->add_option("--a-format", o->a_format, "Format of a (default e4m3fn, or the --preset's)")->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of b (default e4m3fn, or the --preset's)")->type_name("FMT");
  app->add_option("--k", o->k, "Length K, 1..100000000")->capture_default_str()->type_name("K");
  app->add_option("--scaling", o->scaling_name,
                  "Block scaling: none (just round), tensor (one fp32 scale per vector), tile128, block128 "
                  "(fp32 scale per 128 along K), mx32 (e8m0 scale per 32)")
      ->capture_default_str()
      ->type_name("S");
  add_accumulator_options(*app, o->acc, "default: --preset h100-e4m3");
  add_workload_options(*app, o->work);
  app->footer(
      "Usage: fpemu dot [--a-format FMT] [--b-format FMT] [--k K] [--acc FMT|exact|PRESET [--acc-round MODE]\n"
      "       [--sr-bits K] | --preset NAME] [--promote N] [--scaling S] [--dist D --mu X --sigma X\n"
      "       --scale X] [--seed S] [--samples N] [--csv] [--progress]\n"
      "Draws a and b (K values each), quantises them (analysis::quantise: nearest-even, saturating),\n"
      "computes the dot product with analysis::dot and prints: value; exact, the exact dot product of\n"
      "the quantised values with their scales applied; error (computed - exact) and rel_error; the\n"
      "bound on that error (gamma_K(u_acc) for a format accumulator, truncating_block_dot for a preset,\n"
      "a promoted_sum-like composition with promotion or group scaling, composed with the final\n"
      "rounding where it may be inexact; see cmd_dot.cpp); then exact_original, error_original and\n"
      "rel_error_original against the float data before quantisation, and bound_original, the\n"
      "dot_lowprec_inputs bound 2u_in + u_in^2 + c (1+u_in)^2 (c: the bound above), plus a term for\n"
      "inputs quantised below the normal range. Each bound: coefficient, absolute bound, valid or not\n"
      "(with the condition or the reason).\n"
      "The result's format: the preset's output (fp32; bf16 for h100-e4m3-deepseek), the fp32\n"
      "register with promotion or group scaling, else the accumulator format. Group scalings\n"
      "(tile128, block128: 128; mx32: 32) fold each group into fp32: --promote must then equal the\n"
      "group size or be left out.\n"
      "Seeds: sample s draws from std::mt19937_64(S+s) (a, then b); its stochastic roundings take the\n"
      "Philox stream keyed by S+s. --samples > 1: mean and max relative error; the lines are for the\n"
      "sample with the largest one.\n"
      "--csv: the header 'a_format,b_format,k,accumulator,scaling,out,samples,seed,value,exact,error,\n"
      "rel_error,mean_rel_error,max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,\n"
      "max_error_over_bound,bound_violations,exact_original,error_original,rel_error_original,\n"
      "bound_original_absolute,bound_original_valid,bound_original_violations' and one row.");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("dot", rest);
            run_dot(*o);
          }};
}

}  // namespace fpemu::cli
