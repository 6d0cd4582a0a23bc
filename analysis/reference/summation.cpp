// Reference summation routines (see summation.hpp).
//
// Two engines compute the sums:
//  - recursive, stochastic and promoted go through fpemu::dot_accumulator with b_i = 1.0 (fp32),
//    so every accumulator model (format, block-FMA, exact) and promotion behave exactly as in
//    dot products, GEMM and the `mma` command;
//  - pairwise, blocked, kahan and neumaier use `engine` below: every addition or subtraction is
//    exact_add on unpacked values followed by one rounding into the accumulator format, so an
//    input wider than the accumulator enters its first operation exactly (no double rounding).
//
// Bounds. Each result carries the deterministic bound of analysis/reference/bounds.hpp for its method
// first (bounds[0]), then the probabilistic bounds that apply. Where the computation does more
// roundings than the textbook algorithm assumes, the bound is taken for the larger count, and
// where the data break the standard model (overflow, underflow, NaN or infinity, or a block-FMA
// premise) the bound is reported as not valid with the reason.
#include "analysis/reference/summation.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/measured_error.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint32_t kOneFp32 = 0x3f800000;  // b_i = 1.0: sum x_i computed as the dot x . 1

struct method_name {
  sum_method method;
  std::string_view name;
};
constexpr method_name kMethodNames[] = {
    {sum_method::recursive, "recursive"}, {sum_method::pairwise, "pairwise"}, {sum_method::blocked, "blocked"},
    {sum_method::kahan, "kahan"},         {sum_method::neumaier, "neumaier"}, {sum_method::promoted, "promoted"},
    {sum_method::stochastic, "stochastic"},
};

std::string_view kind_name(accumulator_kind k) {
  switch (k) {
    case accumulator_kind::format: return "a format accumulator";
    case accumulator_kind::block_fma: return "the block-FMA model";
    case accumulator_kind::exact: return "the exact accumulator";
  }
  return "?";
}

bool is_nearest(round_mode m) { return m == round_mode::nearest_even || m == round_mode::nearest_away; }

using bounds::add_up;
using bounds::compose_up;
using bounds::mul_up;

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

bounds::coefficient valid_coefficient(std::string name, double value, std::string condition) {
  return bounds::coefficient{value, true, std::move(condition), std::move(name)};
}

// ---- Validation ---------------------------------------------------------------------------------

std::optional<std::string> check_rounding(const char* what, const format& f, const rounding& r) {
  if (auto why = check(f)) return std::string(what) + " format " + to_string(f) + ": " + *why;
  if (auto why = check(f, r)) return std::string(what) + " rounding: " + *why;
  return std::nullopt;
}

std::optional<std::string> check_model(const accumulator_model& m) {
  switch (m.kind) {
    case accumulator_kind::format:
    case accumulator_kind::exact:
      if (auto why = check_rounding("accumulator", m.acc, m.acc_rounding)) return why;
      break;
    case accumulator_kind::block_fma: {
      const block_fma_model& b = m.block;
      if (b.block_size < 1 || b.block_size > max_block_size)
        return "block-FMA block_size = " + std::to_string(b.block_size) + " is out of range: valid 1.." +
               std::to_string(max_block_size);
      if (b.frac_bits < 0 || b.frac_bits > max_block_frac_bits)
        return "block-FMA frac_bits = " + std::to_string(b.frac_bits) + " is out of range: valid 0.." +
               std::to_string(max_block_frac_bits);
      if (b.sum == block_sum::pairwise && b.block_size > max_pairwise_block)
        return "block-FMA pairwise block_size = " + std::to_string(b.block_size) + " is out of range: valid 1.." +
               std::to_string(max_pairwise_block);
      if (b.interleave < 1 || b.interleave > b.block_size)
        return "block-FMA interleave = " + std::to_string(b.interleave) + " is out of range: valid 1..block_size";
      if (b.interleave > 1 && b.second_frac_bits == 0)
        return "block-FMA interleave > 1 needs the two-stage sum (second_frac_bits > 0)";
      if (b.second_frac_bits != 0 && (b.second_frac_bits + 1 < b.frac_bits || b.second_frac_bits > max_block_frac_bits))
        return "block-FMA second_frac_bits = " + std::to_string(b.second_frac_bits) + " is out of range: valid " +
               std::to_string(std::max(b.frac_bits - 1, 1)) + ".." + std::to_string(max_block_frac_bits);
      if (b.scale_block < 0 || b.scale_group < 0 || (b.scale_group > 0 && b.scale_block % b.scale_group != 0))
        return "block-FMA scale_group must divide scale_block";
      if (auto why = check_rounding("block-FMA accumulator", b.acc, b.acc_rounding)) return why;
      break;
    }
  }
  if (m.promote_every < 0)
    return "acc.promote_every = " + std::to_string(m.promote_every) + " is out of range: valid >= 0 (0 = never)";
  if (m.promote_every > 0)
    if (auto why = check_rounding("promoted register", m.promoted, m.promoted_rounding)) return why;
  return std::nullopt;
}

// ---- Engine for pairwise, blocked, kahan, neumaier ----------------------------------------------

// A value in the computation: an input (exact, maybe not a value of the accumulator format) or
// the result of a rounding (`code` valid).
struct term {
  unpacked v;
  std::uint32_t code = 0;
  bool rounded = false;
};

class engine {
 public:
  engine(const format& f, const rounding& r, const sr_stream& sr) : f_(f), r_(r), sr_(sr) {}

  term input(const format& fin, std::uint32_t code) const { return term{decode(fin, code), 0, false}; }
  static term zero() { return term{unpacked{value_class::zero, false}, 0, false}; }

  term add(const term& a, const term& b) { return finish(exact_add(a.v, b.v, r_.mode)); }
  term sub(const term& a, const term& b) { return finish(exact_add(a.v, negate(b.v), r_.mode)); }
  // The value as a code of the format: a rounding when it is not one yet.
  term settle(const term& a) { return a.rounded ? a : finish(exact_result{a.v, 0}); }

  std::uint8_t flags() const { return flags_; }

 private:
  // The k-th rounding of the sum takes random_bits(seed, stream, first_index + k).
  term finish(const exact_result& e) {
    const bool sr = is_stochastic(r_.mode);
    const std::uint64_t bits = sr ? random_bits(sr_.seed, sr_.stream, sr_.first_index + count_) : 0;
    ++count_;
    const rounded r = round_exact(f_, e, r_, bits);
    flags_ |= r.flags;
    return term{decode(f_, r.code), r.code, true};
  }

  format f_;
  rounding r_;
  sr_stream sr_;
  std::uint64_t count_ = 0;
  std::uint8_t flags_ = 0;
};

// |a| >= |b| exactly (NaN: true).
bool abs_ge(const unpacked& a, const unpacked& b) {
  unpacked pa = a, pb = b;
  pa.negative = false;
  pb.negative = true;
  const exact_result d = exact_add(pa, pb, round_mode::nearest_even);
  return d.value.cls == value_class::nan || d.value.cls == value_class::zero || !d.value.negative;
}

// Halves [lo, lo + n/2) and [lo + n/2, hi), down to single terms.
term pairwise(engine& e, const format& fin, std::span<const std::uint32_t> x) {
  if (x.size() == 1) return e.input(fin, x[0]);
  const std::size_t half = x.size() / 2;
  const term left = pairwise(e, fin, x.first(half));
  const term right = pairwise(e, fin, x.subspan(half));
  return e.add(left, right);
}

struct computed {
  std::uint32_t code = 0;
  std::uint8_t flags = 0;
};

computed run_engine(std::span<const std::uint32_t> x, const sum_options& o) {
  const format& fin = o.input;
  engine e(o.acc.acc, o.acc.acc_rounding, o.sr);
  term result = engine::zero();
  switch (o.method) {
    case sum_method::pairwise:
      if (!x.empty()) result = pairwise(e, fin, x);
      break;
    case sum_method::blocked: {
      const auto b = static_cast<std::size_t>(o.block);
      bool first_block = true;
      for (std::size_t lo = 0; lo < x.size(); lo += b) {
        const std::size_t hi = std::min(x.size(), lo + b);
        term s = e.input(fin, x[lo]);  // the block's first term enters its first addition exactly
        for (std::size_t i = lo + 1; i < hi; ++i) s = e.add(s, e.input(fin, x[i]));
        result = first_block ? s : e.add(result, s);
        first_block = false;
      }
      break;
    }
    case sum_method::kahan: {
      term s = engine::zero(), c = engine::zero();
      for (const std::uint32_t code : x) {
        const term y = e.sub(e.input(fin, code), c);
        const term t = e.add(s, y);
        c = e.sub(e.sub(t, s), y);
        s = t;
      }
      result = s;
      break;
    }
    case sum_method::neumaier: {
      term s = engine::zero(), c = engine::zero();
      for (const std::uint32_t code : x) {
        const term xi = e.input(fin, code);
        const term t = e.add(s, xi);
        const term d = abs_ge(s.v, xi.v) ? e.add(e.sub(s, t), xi) : e.add(e.sub(xi, t), s);
        c = e.add(c, d);
        s = t;
      }
      result = e.add(s, c);
      break;
    }
    default: break;
  }
  result = e.settle(result);
  return {result.code, e.flags()};
}

// ---- dot_accumulator for recursive, stochastic and promoted ---------------------------------------

computed run_accumulator(std::span<const std::uint32_t> x, const format& fin, const accumulator_model& m,
                         const sr_stream& sr, const format& out, const rounding& out_r) {
  dot_accumulator acc(m, fin, formats::fp32, sr);
  std::size_t first = 0;
  const bool starts_with_x0 = m.promote_every == 0 && m.kind != accumulator_kind::block_fma && !x.empty();
  if (starts_with_x0 && m.kind == accumulator_kind::format && x.size() == 1) {
    // One term: its rounding into the accumulator is the sum's first (index 0) rounding.
    const rounded r = fpemu::round(m.acc, decode(fin, x[0]), m.acc_rounding,
                                   random_bits(sr.seed, sr.stream, sr.first_index));
    return {r.code, r.flags};
  }
  if (starts_with_x0) {
    // s_1 = x_1 exactly (C = x_1 in the input format), then s_i = round(s_{i-1} + x_i): the first
    // rounding is of x_1 + x_2, as in the textbook algorithm, even when x_1 does not fit.
    acc.reset(fin, x[0], sr);
    first = 1;
  } else {
    acc.reset(formats::fp32, 0, sr);  // block-FMA chains and promotion start from +0
  }
  for (std::size_t i = first; i < x.size(); ++i) acc.add_product(x[i], kOneFp32);
  const rounded r = acc.result(out, out_r);
  return {r.code, static_cast<std::uint8_t>(acc.flags() | r.flags)};
}

// ---- Bounds -------------------------------------------------------------------------------------

// Whether every x_i is exactly a value of f (then the first addition of x_i is the first rounding).
bool all_representable(std::span<const std::uint32_t> x, const format& fin, const format& f) {
  if (fin == f) return true;
  for (const std::uint32_t code : x) {
    const unpacked u = decode(fin, code);
    if (u.cls != value_class::finite) continue;  // zeros fit; non-finite data void the bounds anyway
    const rounded r = fpemu::round(f, u, rounding{});
    if (r.direction != 0 || (r.flags & (flag::inexact | flag::overflow | flag::invalid)) != 0) return false;
    const unpacked back = decode(f, r.code);
    if (back.cls != value_class::finite) return false;
  }
  return true;
}

// Premises of the alignment-and-truncation bound that the data can break (b_i = 1.0, so the
// product terms are the inputs): the largest term of each block must satisfy 2^E <= |t|, which
// fails only when a block's non-zero inputs are all subnormal; subnormal inputs read as zero
// drop out of the sum entirely; a clamped reference exponent may exceed every term's.
std::string block_fma_premise(std::span<const std::uint32_t> x, const format& fin, const accumulator_model& m) {
  const block_fma_model& b = m.block;
  if (b.min_reference_exp > std::min(emin(fin), emin(b.acc)))
    return "min_reference_exp = " + std::to_string(b.min_reference_exp) +
           " may raise the reference exponent above every term (the bound assumes 2^E <= max|t_j|)";
  const auto bs = static_cast<std::size_t>(b.block_size);
  const std::size_t chunk = m.promote_every > 0 ? static_cast<std::size_t>(m.promote_every) : x.size();
  for (std::size_t c0 = 0; c0 < x.size(); c0 += chunk) {
    const std::size_t c1 = std::min(x.size(), c0 + chunk);
    for (std::size_t lo = c0; lo < c1; lo += bs) {
      bool normal = false, subnormal = false;
      for (std::size_t i = lo; i < std::min(c1, lo + bs); ++i) {
        const unpacked u = decode(fin, x[i]);
        if (u.cls != value_class::finite) continue;
        (detail::is_subnormal(fin, u) ? subnormal : normal) = true;
      }
      if (subnormal && !b.input_subnormals)
        return "input " + std::to_string(lo) + ".. has subnormal values, which the model reads as zero";
      if (subnormal && !normal)
        return "the block from input " + std::to_string(lo) +
               " has only subnormal non-zero inputs (the bound assumes 2^E <= max|t_j|)";
    }
  }
  return {};
}

// Why the data void the standard model, or "" when they do not.
std::string data_breaks_model(std::span<const std::uint32_t> x, const format& fin, std::uint8_t flags,
                              const format& out, std::uint32_t code) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const unpacked u = decode(fin, x[i]);
    if (u.cls == value_class::nan || u.cls == value_class::infinite)
      return "input " + std::to_string(i) + " is not finite";
  }
  if (std::string why = flags_break_model(flags); !why.empty()) return why;
  const unpacked r = decode(out, code);
  if (r.cls == value_class::nan || r.cls == value_class::infinite) return "the computed sum is not finite";
  return {};
}

// The deterministic coefficient of one chunk (or the whole sum without promotion) of `len` terms
// summed by the model itself; `extra` roundings per term beyond the textbook count.
bounds::coefficient chunk_coefficient(const accumulator_model& m, std::uint64_t len, std::uint64_t extra) {
  switch (m.kind) {
    case accumulator_kind::format:
      return bounds::recursive_sum(len + extra, effective_unit_roundoff(m.acc, m.acc_rounding.mode));
    case accumulator_kind::block_fma: return block_model_bound(m.block, len, formats::fp32, formats::fp32);
    case accumulator_kind::exact: break;
  }
  return valid_coefficient("0", 0.0, "exact chunk sums");
}

// The recursive sum under a model, with promotion when m.promote_every > 0.
bounds::coefficient model_coefficient(const accumulator_model& m, std::uint64_t n, bool wide) {
  if (m.promote_every == 0) {
    switch (m.kind) {
      case accumulator_kind::format: {
        // s_1 = x_1 exactly: n-1 roundings, but one when n = 1 and x_1 does not fit.
        bounds::coefficient c = chunk_coefficient(m, n == 1 && wide ? 2 : n, 0);
        if (n == 1 && wide) c.condition += "; x_1 is rounded into the accumulator (one rounding)";
        return c;
      }
      case accumulator_kind::block_fma: return chunk_coefficient(m, n, 0);
      case accumulator_kind::exact: {
        if (n == 0) return valid_coefficient("u_acc", 0.0, "n = 0: empty sum");
        const double u = effective_unit_roundoff(m.acc, m.acc_rounding.mode);
        return valid_coefficient("u_acc", u, "the exact sum rounded once into the accumulator format");
      }
    }
  }
  const auto nc = static_cast<std::uint64_t>(m.promote_every);
  const double u_high = effective_unit_roundoff(m.promoted, m.promoted_rounding.mode);
  if (n == 0) return valid_coefficient("0", 0.0, "n = 0: empty sum");
  if (m.kind == accumulator_kind::format && !wide)
    return bounds::promoted_sum(n, nc, effective_unit_roundoff(m.acc, m.acc_rounding.mode), u_high);
  // Each chunk starts at zero: a term that does not fit is rounded by the chunk's first addition.
  const std::uint64_t len = std::min(nc, n);
  const std::uint64_t q = n / len + (n % len != 0 ? 1 : 0);
  const bounds::coefficient chunk = chunk_coefficient(m, len, m.kind == accumulator_kind::format ? 1 : 0);
  const bounds::coefficient high = bounds::gamma(q, u_high);
  const std::string name = "(1+[" + chunk.name + "])(1+gamma_{ceil(n/Nc)}(u_high))-1";
  std::string cond = "chunk of " + std::to_string(len) + ": " + chunk.condition + "; promoted: " + high.condition;
  if (m.kind == accumulator_kind::format) cond += "; inputs do not all fit the chunk format (+1 rounding per term)";
  if (!chunk.valid || !high.valid) return bounds::coefficient{kInf, false, cond, name};
  return valid_coefficient(name, compose_up(chunk.value, high.value), cond);
}

// A Higham-Mary bound gamma~_k(lambda) that must hold for `events` term products at once.
bound_line union_line(const bounds::probabilistic& p, std::uint64_t events, const std::string& name, double s_up) {
  bounds::coefficient c = p.c;
  c.name = name;
  double prob = p.probability;
  if (c.valid && c.value > 0 && events > 1) {
    const double fail = mul_up(static_cast<double>(events), bounds::next_up(1.0 - p.probability));
    prob = std::max(0.0, bounds::sub_down(1.0, fail));
    if (!(prob > 0)) {
      c = bounds::coefficient{kInf, false, "probability bound " + num(bounds::sub_down(1.0, fail)) + " <= 0 (increase lambda)", name};
    } else {
      c.condition = "independent mean-zero rounding errors (Higham-Mary model), " + std::to_string(events) +
                    " products at once; holds with probability >= " + num(prob);
    }
  }
  return bounds::make_bound_line(c, s_up, prob);
}

std::vector<bound_line> make_bounds(const sum_options& o, const accumulator_model& m, std::uint64_t n, bool wide,
                                    double s_up) {
  std::vector<bound_line> out;
  const double u = m.kind == accumulator_kind::format ? effective_unit_roundoff(m.acc, m.acc_rounding.mode) : 0.0;
  const bool nearest = is_nearest(m.acc_rounding.mode);
  const std::uint64_t n1 = n == 1 && wide ? 2 : n;  // one term that does not fit: one rounding
  switch (o.method) {
    case sum_method::recursive:
    case sum_method::promoted:
      out.push_back(bounds::make_bound_line(model_coefficient(m, n, wide), s_up));
      if (m.kind == accumulator_kind::format && m.promote_every == 0 && nearest) {
        const bounds::probabilistic p = bounds::recursive_sum_probabilistic(n1, u, o.lambda);
        out.push_back(bounds::make_bound_line(p.c, s_up, p.probability));
      }
      break;
    case sum_method::stochastic: {
      const double u0 = unit_roundoff(m.acc);
      bounds::coefficient det = bounds::stochastic_sum_deterministic(n1, u0);
      out.push_back(bounds::make_bound_line(det, s_up));
      // Connolly-Higham-Mary for unbiased SR, plus the bias of k-bit SR: each rounding's mean
      // error is below 2^-k ulp <= 2^-k 2u |s_{i-1} + x_i|, and these add up to at most
      // 2^-k gamma_{n-1}(2u) S (the martingale part keeps its |d| <= ulp).
      const bounds::probabilistic p = bounds::stochastic_sum_probabilistic(n1, u0, o.lambda);
      bounds::coefficient c = p.c;
      const int k = m.acc_rounding.mode == round_mode::stochastic ? m.acc_rounding.sr_bits : 64;
      if (c.valid && det.valid) {
        c.value = add_up(c.value, mul_up(std::ldexp(1.0, -k), det.value));
        c.name += " + 2^-k*gamma_{n-1}(2u)";
        c.condition += "; k = " + std::to_string(k) + " random bits: bias term added";
      } else if (c.valid) {
        c = bounds::coefficient{kInf, false, det.condition + " (needed for the bias of k-bit SR)", c.name};
      }
      out.push_back(bounds::make_bound_line(c, s_up, c.valid ? p.probability : 0.0));
      break;
    }
    case sum_method::pairwise: {
      out.push_back(bounds::make_bound_line(bounds::pairwise_sum(n1, u), s_up));
      if (nearest && n1 >= 2) {
        const auto depth = static_cast<std::uint64_t>(std::bit_width(n1 - 1));
        out.push_back(union_line(bounds::gamma_probabilistic(depth, u, o.lambda), n, "gamma~_{ceil(log2 n)}(lambda)",
                                 s_up));
      }
      break;
    }
    case sum_method::blocked: {
      const auto b = static_cast<std::uint64_t>(o.block);
      out.push_back(bounds::make_bound_line(bounds::blocked_sum(n1, b, u), s_up));
      if (nearest && n1 >= 2) {
        const std::uint64_t be = std::min(b, n1);
        const std::uint64_t k = be - 1 + (n1 / be + (n1 % be != 0 ? 1 : 0)) - 1;
        out.push_back(union_line(bounds::gamma_probabilistic(k, u, o.lambda), n, "gamma~_{b-1+ceil(n/b)-1}(lambda)",
                                 s_up));
      }
      break;
    }
    case sum_method::kahan: {
      // s = c = 0 first: Kahan's algorithm on (0, x_1, ..., x_n). When the x_i fit, its first
      // step is exact and this is the algorithm on the n terms.
      bounds::coefficient c = bounds::kahan_sum(wide ? n + 1 : n, u);
      if (wide) c.condition += "; inputs do not all fit the accumulator: bound for n+1 terms (0, x_1, ..., x_n)";
      out.push_back(bounds::make_bound_line(c, s_up));
      break;
    }
    case sum_method::neumaier: {
      bounds::coefficient c = bounds::neumaier_sum(n, u);
      if (!nearest) {
        c = bounds::coefficient{kInf, false,
                                "round to nearest only (error-free transformations); the mode is " +
                                    std::string(to_string(m.acc_rounding.mode)),
                                c.name};
      } else if (wide) {
        c = bounds::coefficient{kInf, false,
                                "the inputs do not all fit the accumulator format, so the error-free "
                                "transformations do not hold",
                                c.name};
      }
      out.push_back(bounds::make_bound_line(c, s_up));
      break;
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(sum_method m) {
  for (const method_name& n : kMethodNames)
    if (n.method == m) return n.name;
  return "?";
}

expected<sum_method> parse_sum_method(std::string_view name) {
  std::string names;
  for (const method_name& n : kMethodNames) {
    if (n.name == name) return n.method;
    names += (names.empty() ? "" : ", ") + std::string(n.name);
  }
  return error{"unknown summation method '" + std::string(name) + "': expected one of " + names};
}

double effective_unit_roundoff(const format& f, round_mode mode) {
  return is_nearest(mode) ? unit_roundoff(f) : 2 * unit_roundoff(f);
}

expected<sum_result> sum(std::span<const std::uint32_t> x, const sum_options& o) {
  const std::string method(to_string(o.method));
  if (method == "?") return error{"unknown summation method " + std::to_string(static_cast<int>(o.method))};
  if (auto why = check(o.input)) return error{"input format " + to_string(o.input) + ": " + *why};
  if (o.block < 1)
    return error{"block = " + std::to_string(o.block) +
                 " is out of range: valid >= 1 (blocked: the block size b; promoted: the chunk size Nc)"};

  // The model actually used.
  accumulator_model m = o.acc;
  switch (o.method) {
    case sum_method::recursive: break;
    case sum_method::promoted:
      m.promote_every = o.block;
      m.promoted = o.high;
      m.promoted_rounding = o.high_rounding;
      break;
    case sum_method::stochastic:
    case sum_method::pairwise:
    case sum_method::blocked:
    case sum_method::kahan:
    case sum_method::neumaier:
      if (m.kind != accumulator_kind::format)
        return error{"method " + method + " needs a format accumulator (got " + std::string(kind_name(m.kind)) + ")"};
      if (m.promote_every != 0)
        return error{"method " + method + " does not promote: acc.promote_every = " + std::to_string(m.promote_every) +
                     " must be 0 (use method promoted)"};
      if (o.method == sum_method::stochastic && m.acc_rounding.mode != round_mode::stochastic_exact)
        m.acc_rounding.mode = round_mode::stochastic;
      break;
  }
  if (auto why = check_model(m)) return error{*why};

  // The sum.
  format out_format = m.acc;
  rounding out_rounding = m.acc_rounding;
  if (m.promote_every > 0) {
    out_format = m.promoted;
    out_rounding = m.promoted_rounding;
  } else if (m.kind == accumulator_kind::block_fma) {
    out_format = m.block.acc;
    out_rounding = m.block.acc_rounding;
  }
  sum_options eff = o;
  eff.acc = m;
  const computed c = o.method == sum_method::recursive || o.method == sum_method::promoted ||
                             o.method == sum_method::stochastic
                         ? run_accumulator(x, o.input, m, o.sr, out_format, out_rounding)
                         : run_engine(x, eff);

  // The exact sum, the error (computed - exact, exactly) and sum |x_i|.
  exact_accumulator exact, abs_sum;
  for (const std::uint32_t code : x) {
    unpacked u = decode(o.input, code);
    exact.add(u);
    if (u.cls != value_class::nan) u.negative = false;
    abs_sum.add(u);
  }
  sum_result r;
  r.result_format = out_format;
  r.code = c.code;
  r.value = to_double(out_format, c.code);
  r.flags = c.flags;
  r.exact = exact.to_double();
  r.error = measured_error(exact, decode(out_format, c.code));
  r.relative_error = relative_error(r.error, r.exact);
  r.abs_sum = abs_sum.to_double();
  const double s_up = upper_double(abs_sum);  // so that coefficient * S bounds the real product

  // The bounds, voided where the data break their model.
  bool wide = false;
  if (m.kind == accumulator_kind::format) wide = !all_representable(x, o.input, m.acc);
  r.bounds = make_bounds(eff, m, x.size(), wide, s_up);
  std::string broken = data_breaks_model(x, o.input, c.flags, out_format, c.code);
  if (broken.empty() && m.kind == accumulator_kind::block_fma) broken = block_fma_premise(x, o.input, m);
  if (!broken.empty())
    for (bound_line& b : r.bounds) bounds::invalidate(b, broken);
  return r;
}

}  // namespace fpemu::analysis
