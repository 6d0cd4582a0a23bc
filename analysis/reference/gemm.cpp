// Reference GEMM and dot products over the accumulator models, block-scaling quantisation, and
// the dispatch to the fast kernels of gemm_kernels.cpp (bitwise equal, tested against this path).
#include "analysis/reference/gemm.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <thread>

#include "analysis/reference/gemm_kernels.hpp"
#include "analysis/reference/measured_error.hpp"
#include "analysis/reference/parallel_rows.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::analysis {
namespace {

constexpr int kDeepSeekGroup = 128;
constexpr int kMxGroup = 32;
constexpr int kNvfp4Group = 16;

// Exact in double: an e4m3fn block scale (4 significant bits) times an fp32 tensor scale (24).
double scale_value(const scaled_matrix& m, std::size_t index) {
  if (m.scale_kind == scaling::none || m.scales.empty()) return 1.0;
  return to_double(m.scale_format, m.scales[index]) * to_double(formats::fp32, m.tensor_scale);
}

// a / b correctly rounded into f, as one rounding of the exact quotient (the core's exact_div).
rounded quotient(const format& f, double a, double b, const rounding& r, std::uint64_t random = 0) {
  return round_exact(f, exact_div(unpack(a), unpack(b)), r, random);
}

// The code of a block scale of 1.
std::uint32_t one_scale(const format& f) { return from(f, 1.0).code; }

std::string shape(const scaled_matrix& m) { return std::to_string(m.rows) + "x" + std::to_string(m.cols); }

// alpha * acc + beta * c, exact, then one rounding into `out`; a NaN of the block model itself
// (not of a promoted fp32 register) in its pattern (block_fma.hpp: all_ones_nan).
rounded epilogue(const accumulator_model& m, const unpacked& acc, double alpha, double beta, const format& out,
                 std::uint32_t c, const rounding& r, std::uint64_t random) {
  rounded d;
  if (alpha == 1.0 && beta == 0.0) {
    d = round(out, acc, r, random);
  } else {
    const unpacked bc = beta == 0.0 ? unpacked{} : exact_mul(unpack(beta), decode(out, c)).value;
    d = round_exact(out, exact_fma(unpack(alpha), acc, bc, r.mode), r, random);
  }
  if (m.kind == accumulator_kind::block_fma && m.promote_every == 0 && m.block.all_ones_nan &&
      decode(out, d.code).cls == value_class::nan)
    d.code = all_ones_nan_code(out);
  return d;
}

// What gemm() computes, checked once: the K order, the model (a group scaling promotes every
// group) and alpha with the per-tensor scales folded in.
struct plan {
  int M = 0, N = 0, K = 0;
  std::vector<int> order;
  bool identity_order = true;
  int group = 0;
  accumulator_model model{};
  bool block_scaled = false;  // the model applies A's and B's block scales inside its blocks
  double alpha = 1.0;
};

expected<plan> make_plan(const scaled_matrix& a, const scaled_matrix& b, std::span<const std::uint32_t> c,
                         const gemm_options& o);

// Output (i, j) by the reference loop: the accumulator chain over K in the plan's order, group
// scales set at each group's first product, then the epilogue. The k-th rounding of output ij's
// chain takes the stochastic bits of index first_index + ij * 2^32 + k, its epilogue those of
// first_index + ij * 2^32 + 2^32 - 1.
gemm_element reference_element(const plan& p, dot_accumulator& acc, const scaled_matrix& a, const scaled_matrix& b,
                               std::span<const std::uint32_t> c, const gemm_options& o, int i, int j);

std::optional<accumulated> promoted_accumulate(const plan& p, const scaled_matrix& a, const scaled_matrix& b,
                                               int threads);

}  // namespace

int group_along_k(scaling s) {
  switch (s) {
    case scaling::tile_1x128:
    case scaling::block_128: return kDeepSeekGroup;
    case scaling::mx32: return kMxGroup;
    case scaling::nvfp4: return kNvfp4Group;
    default: return 0;
  }
}

std::size_t scale_index(const scaled_matrix& m, int r, int c, bool along_k_is_cols) {
  const int k = along_k_is_cols ? c : r, other = along_k_is_cols ? r : c;
  const int k_len = along_k_is_cols ? m.cols : m.rows;
  switch (m.scale_kind) {
    case scaling::none:
    case scaling::per_tensor: return 0;
    case scaling::tile_1x128:
      if (along_k_is_cols) return static_cast<std::size_t>(other) * ((k_len + 127) / 128) + k / 128;
      [[fallthrough]];  // B uses 128 x 128 blocks (DeepSeek-V3 weights)
    case scaling::block_128:
      return static_cast<std::size_t>(other / 128) * ((k_len + 127) / 128) + k / 128;
    case scaling::mx32:
    case scaling::nvfp4: {
      const int g = group_along_k(m.scale_kind);
      return static_cast<std::size_t>(other) * static_cast<std::size_t>((k_len + g - 1) / g) +
             static_cast<std::size_t>(k / g);
    }
  }
  return 0;
}

format scale_format_of(scaling s) {
  return s == scaling::mx32 ? formats::e8m0fnu : s == scaling::nvfp4 ? formats::e4m3fn : formats::fp32;
}

scaling own_scaling(const tensor_core_preset& p) {
  for (const scaling s : {scaling::mx32, scaling::nvfp4})
    if (p.scale && *p.scale == scale_format_of(s) && p.model.block.scale_block == group_along_k(s)) return s;
  return scaling::none;
}

namespace {

// A block-scaled MMA model: it applies A's and B's block scales inside its blocks.
bool applies_block_scales(const accumulator_model& m) {
  return m.kind == accumulator_kind::block_fma && m.block.scale_block > 0;
}

// The presets whose blocks apply a scaling's scales, for messages.
std::string presets_applying(scaling s) {
  std::string names;
  for (const tensor_core_preset& q : tensor_core_presets())
    if (q.scale && own_scaling(q) == s) names += (names.empty() ? "" : ", ") + q.name;
  return names;
}

// An option set to a value as the syntax writes it: "--promote 64", "promote = 64", and in Python
// a name quoted ("scaling = 'mx32'").
std::string option_text(option_syntax x, std::string_view option, const std::string& value, bool is_name) {
  switch (x) {
    case option_syntax::command_line: return "--" + std::string(option) + " " + value;
    case option_syntax::keyword: return std::string(option) + " = " + (is_name ? "'" + value + "'" : value);
    case option_syntax::library: break;
  }
  return std::string(option) + " = " + value;
}

}  // namespace

expected<accumulator_model> model_for_scaling(accumulator_model m, const scaling_request& r) {
  const option_syntax x = r.syntax;
  const bool cli = x == option_syntax::command_line;
  const std::string how(to_string(r.how));
  const std::string scaling_set = option_text(x, "scaling", how, true);
  const std::string promote_option = x == option_syntax::library ? "acc.promote_every" : "promote";
  auto valid = [&](const std::string& what) { return (cli ? " (give " : " (valid: ") + what + ")"; };
  // A scaling as a value of the scaling option, for a list of valid ones.
  auto choice = [&](scaling s) {
    const std::string name(to_string(s));
    return cli ? "--scaling " + name : x == option_syntax::keyword ? "'" + name + "'" : name;
  };

  if (applies_block_scales(m)) {
    scaling own = scaling::none;
    if (r.preset) {
      own = own_scaling(*r.preset);
    } else {
      for (const scaling s : {scaling::mx32, scaling::nvfp4})
        if (group_along_k(s) == m.block.scale_block) own = s;
    }
    const std::string who = r.preset ? "preset " + r.preset->name : std::string("the model");
    if (r.how != scaling::none && r.how != own)
      return error{scaling_set + ": " + who + " applies " +
                   (r.preset && r.preset->scale ? scale_format_name(*r.preset->scale) + " " : std::string()) +
                   "scales per " + std::to_string(m.block.scale_block) + " products inside its blocks" +
                   valid((own == scaling::none ? std::string() : choice(own) + ", or ") + choice(scaling::none) +
                         " for scales of 1")};
    if (m.promote_every != 0)
      return error{option_text(x, promote_option, std::to_string(m.promote_every), false) + ": " + who +
                   " is a block-scaled MMA, which is not promoted" +
                   (cli ? std::string(" (leave --promote out)") : std::string(" (valid: 0)"))};
    return m;
  }
  if (r.how == scaling::nvfp4) {
    const std::string presets = presets_applying(scaling::nvfp4);
    if (x == option_syntax::library)
      return error{"nvfp4 scaling is applied inside a block-scaled MMA, not by promotion: use the model of a preset "
                   "that applies it as the accumulator (" + presets + ")"};
    return error{scaling_set + " applies its " + scale_format_name(scale_format_of(scaling::nvfp4)) +
                 " scales inside a block-scaled MMA: " + option_text(x, r.acc_option, std::string(r.acc), true) +
                 " is not one" +
                 valid((cli ? "" : std::string(r.acc_option) + " = ") + "a preset that takes them: " + presets)};
  }
  const int group = group_along_k(r.how);
  if (group == 0) return m;
  if (m.promote_every != 0 && m.promote_every != group) {
    const std::string g = std::to_string(group), interval = std::to_string(m.promote_every);
    if (x == option_syntax::library)
      return error{"block scaling groups K by " + g + " but the promotion interval is " + interval +
                   "; they must be equal (or leave promotion unset)"};
    // Without the caller's interval the preset's own applies, which may disagree too.
    const bool own_interval =
        r.preset && r.preset->model.promote_every != 0 && r.preset->model.promote_every != group;
    const std::string set_group = option_text(x, promote_option, g, false);
    std::string but, what;
    if (r.promote_given) {
      but = option_text(x, promote_option, interval, false);
      what = cli ? set_group + (own_interval ? "" : " or leave --promote out")
                 : promote_option + " = " + (own_interval ? g : "0 or " + g);
    } else {
      but = "preset " + (r.preset ? r.preset->name : std::string(r.acc)) + " promotes every " + interval;
      what = set_group + ", which overrides the preset's interval";
    }
    return error{scaling_set + " groups K by " + g + " and folds each group into fp32, but " + but +
                 (cli ? ": they must agree" : "") + valid(what)};
  }
  m.promote_every = group;
  return m;
}

std::size_t scale_count(scaling s, int rows, int cols, bool along_k_is_cols) {
  scaled_matrix shape_only;
  shape_only.rows = rows;
  shape_only.cols = cols;
  shape_only.scale_kind = s;
  return scale_index(shape_only, rows - 1, cols - 1, along_k_is_cols) + 1;
}

expected<std::vector<double>> dequantise(const scaled_matrix& m, bool along_k_is_cols) {
  const std::size_t needed = scale_count(m.scale_kind, m.rows, m.cols, along_k_is_cols);
  if (m.scale_kind != scaling::none && m.scales.size() != needed)
    return error{"dequantise: " + std::to_string(m.scales.size()) + " scales; a " + shape(m) + " matrix scaled " +
                 std::string(to_string(m.scale_kind)) + " with K along its " + (along_k_is_cols ? "columns" : "rows") +
                 " has " + std::to_string(needed)};
  std::vector<double> v(m.codes.size());
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * m.cols + c;
      v[i] = to_double(m.fmt, m.codes[i]) * scale_of(m, r, c, along_k_is_cols);
    }
  return v;
}

quantisation_loss quantisation_loss_of(std::span<const float> x, const scaled_matrix& q, bool along_k_is_cols) {
  quantisation_loss loss;
  const double largest = max_finite(q.fmt);
  for (int r = 0; r < q.rows; ++r)
    for (int c = 0; c < q.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * q.cols + c;
      if (x[i] == 0.0f) continue;
      ++loss.nonzero;
      const double scale = scale_of(q, r, c, along_k_is_cols);
      // A scale that rounded to zero (nvfp4) zeroes its block: underflow, not saturation.
      if (scale > 0 && !(std::fabs(static_cast<double>(x[i])) <= largest * scale)) ++loss.saturated;
      else if (to_double(q.fmt, q.codes[i]) == 0.0) ++loss.underflowed;
    }
  return loss;
}

quantisation_loss quantisation_loss_of(std::span<const float> xa, const scaled_matrix& a, std::span<const float> xb,
                                       const scaled_matrix& b) {
  quantisation_loss loss = quantisation_loss_of(xa, a, true);
  loss += quantisation_loss_of(xb, b, false);
  return loss;
}

double scale_of(const scaled_matrix& m, int r, int c, bool along_k_is_cols) {
  return scale_value(m, scale_index(m, r, c, along_k_is_cols));
}

std::string_view to_string(scaling s) {
  switch (s) {
    case scaling::none: return "none";
    case scaling::per_tensor: return "tensor";
    case scaling::tile_1x128: return "tile128";
    case scaling::block_128: return "block128";
    case scaling::mx32: return "mx32";
    case scaling::nvfp4: return "nvfp4";
  }
  return "none";
}

expected<scaling> parse_scaling(std::string_view name) {
  for (scaling s : {scaling::none, scaling::per_tensor, scaling::tile_1x128, scaling::block_128, scaling::mx32,
                    scaling::nvfp4})
    if (to_string(s) == name) return s;
  return error{"unknown scaling '" + std::string(name) + "': valid are none, tensor, tile128, block128, mx32, nvfp4"};
}

expected<scaled_matrix> quantise(std::span<const float> x, int rows, int cols, const format& fmt, scaling s,
                                 bool along_k_is_cols, const rounding& r) {
  if (rows < 1 || cols < 1 || static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) != x.size())
    return error{"quantise: a " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix needs " +
                 std::to_string(static_cast<long long>(rows) * cols) + " values, got " + std::to_string(x.size())};
  if (const auto bad = check(fmt)) return error{"quantise: " + *bad};
  if (s == scaling::nvfp4 && precision(fmt) > 9)
    return error{"quantise: nvfp4 scaling takes element formats of at most 9 significant bits (FP4, FP6, FP8, bf16); " +
                 to_string(fmt) + " has " + std::to_string(precision(fmt))};
  scaled_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.fmt = fmt;
  m.scale_kind = s;
  m.scale_format = scale_format_of(s);
  m.codes.resize(x.size());
  const std::size_t n_scales = scale_count(s, rows, cols, along_k_is_cols);

  std::vector<double> amax(n_scales, 0.0);
  auto at = [&](int i, int j) { return x[static_cast<std::size_t>(i) * cols + j]; };
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const double v = at(i, j);
      if (!std::isfinite(v))
        return error{"quantise: element (" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                     (std::isnan(v) ? "NaN" : "infinite") + "; scaling needs finite inputs"};
      double& a = amax[scale_index(m, i, j, along_k_is_cols)];
      a = std::max(a, std::fabs(v));
    }
  m.scales.resize(n_scales);
  std::vector<double> scale(n_scales, 1.0);
  if (s == scaling::nvfp4) {
    const double amax_all = *std::max_element(amax.begin(), amax.end());
    constexpr rounding up{round_mode::toward_positive};
    const double top = max_finite(formats::e4m3fn) * max_finite(fmt);  // 448 * 6 for NVFP4
    m.tensor_scale = amax_all > 0 ? quotient(formats::fp32, amax_all, top, up).code : from(formats::fp32, 1.0).code;
  }
  const double tensor_scale = to_double(formats::fp32, m.tensor_scale);
  for (std::size_t g = 0; g < n_scales; ++g) {
    if (s == scaling::none) {
      m.scales[g] = from(formats::fp32, 1.0).code;
      continue;
    }
    if (s == scaling::mx32) {
      // OCP MX v1.0 section 6.3: X = 2^(floor(log2(amax)) - emax_elem); amax = 0 gives 2^0.
      const int e = amax[g] > 0 ? std::ilogb(amax[g]) - emax(fmt) : 0;
      m.scales[g] = from(formats::e8m0fnu, std::ldexp(1.0, std::clamp(e, -127, 127))).code;
    } else if (s == scaling::nvfp4) {
      // s_t max_finite(fmt): 24 + at most 9 significant bits, exact in double and within the
      // 33-bit divisor exact_div takes.
      m.scales[g] = quotient(formats::e4m3fn, amax[g], tensor_scale * max_finite(fmt), {}).code;
    } else {
      // amax maps onto the largest finite value; the fp32 scale is rounded up so nothing overflows.
      const double want = amax[g] > 0 ? amax[g] / max_finite(fmt) : 1.0;
      m.scales[g] = from(formats::fp32, want, rounding{round_mode::toward_positive}).code;
    }
    scale[g] = scale_value(m, g);
  }
  rounding saturating = r;
  saturating.overflow = overflow_policy::saturate;
  if (s == scaling::nvfp4) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const double v = at(i, j), sg = scale[scale_index(m, i, j, along_k_is_cols)];
        const std::uint64_t random = random_bits(0, 0x5ca1e, static_cast<std::uint64_t>(i) * cols + j);
        m.codes[static_cast<std::size_t>(i) * cols + j] =
            (sg == 0 ? from(fmt, std::copysign(0.0, v)) : quotient(fmt, v, sg, saturating, random)).code;
      }
    return m;
  }
  // x / scale in double is exact for power-of-two scales; otherwise one rounding to 53 bits
  // precedes the rounding into fmt (documented double rounding of the quantiser's input).
  std::vector<double> quotients(m.codes.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      quotients[static_cast<std::size_t>(i) * cols + j] =
          static_cast<double>(at(i, j)) / scale[scale_index(m, i, j, along_k_is_cols)];
  if (saturating.mode != round_mode::stochastic) {  // the array kernels: the core's codes, faster
    const expected<std::uint8_t> done = round_array(fmt, quotients, m.codes, saturating);
    assert(done.has_value());  // fmt and the rounding were checked above
    if (done) return m;
  }
  for (std::size_t i = 0; i < quotients.size(); ++i)
    m.codes[i] = from(fmt, quotients[i], saturating, random_bits(0, 0x5ca1e, i)).code;
  return m;
}

namespace {

expected<plan> make_plan(const scaled_matrix& a, const scaled_matrix& b, std::span<const std::uint32_t> c,
                         const gemm_options& o) {
  const int M = a.rows, K = a.cols, N = b.cols;
  if (a.cols != b.rows)
    return error{"gemm: A is " + shape(a) + " and B is " + shape(b) + ": A's columns must equal B's rows"};
  if (M < 1 || N < 1 || K < 1) return error{"gemm: empty matrix (A " + shape(a) + ", B " + shape(b) + ")"};
  const std::size_t MN = static_cast<std::size_t>(M) * N;
  if (a.codes.size() != static_cast<std::size_t>(M) * K || b.codes.size() != static_cast<std::size_t>(K) * N)
    return error{"gemm: code arrays do not match the shapes A " + shape(a) + ", B " + shape(b)};
  if (!c.empty() && c.size() != MN)
    return error{"gemm: C has " + std::to_string(c.size()) + " values, expected " + std::to_string(MN) + " (" +
                 std::to_string(M) + "x" + std::to_string(N) + ")"};
  if (c.empty() && o.beta != 0.0) return error{"gemm: beta = " + std::to_string(o.beta) + " needs a C matrix"};
  if (!std::isfinite(o.alpha) || !std::isfinite(o.beta))
    return error{"gemm: alpha and beta must be finite (got alpha = " + std::to_string(o.alpha) +
                 ", beta = " + std::to_string(o.beta) + ")"};

  plan p;
  p.M = M;
  p.N = N;
  p.K = K;
  std::vector<int>& order = p.order;
  order = o.k_order;
  if (order.empty()) {
    order.resize(static_cast<std::size_t>(K));
    std::iota(order.begin(), order.end(), 0);
  } else {
    std::vector<char> seen(static_cast<std::size_t>(K), 0);
    bool ok = order.size() == static_cast<std::size_t>(K);
    for (int k : order) ok = ok && k >= 0 && k < K && !seen[static_cast<std::size_t>(k)]++;
    if (!ok) return error{"gemm: k_order must be a permutation of 0.." + std::to_string(K - 1)};
  }
  p.identity_order = std::is_sorted(order.begin(), order.end());

  // Each operand's scaling against the model (model_for_scaling, the front ends' rule too). The
  // model run is the one for the operand whose scaling groups K (the larger group: two different
  // groups are refused below).
  accumulator_model ruled[2];
  const scaled_matrix* operands[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    scaling_request r;
    r.how = operands[i]->scale_kind;
    const expected<accumulator_model> m = model_for_scaling(o.acc, r);
    if (!m) return error{"gemm: " + m.message()};
    ruled[i] = *m;
  }
  const int ga = group_along_k(a.scale_kind), gb = group_along_k(b.scale_kind);
  p.model = ga >= gb ? ruled[0] : ruled[1];

  // A block-scaled MMA (Blackwell mxf8f6f4, mxf4, mxf4nvf4) applies the block scales inside its
  // fused sum; NVFP4's per-tensor fp32 scales go to the epilogue, as in cuBLASLt's alpha.
  if (applies_block_scales(o.acc)) {
    if (a.scale_kind != scaling::none && b.scale_kind != scaling::none && a.scale_kind != b.scale_kind)
      return error{"gemm: A is scaled " + std::string(to_string(a.scale_kind)) + " and B " +
                   std::string(to_string(b.scale_kind)) + ": a block-scaled MMA takes one scale format for both"};
    if (!p.identity_order) return error{"gemm: block scaling needs K in its natural order (k_order must be 0..K-1)"};
    p.block_scaled = true;
    p.alpha = o.alpha * to_double(formats::fp32, a.tensor_scale) * to_double(formats::fp32, b.tensor_scale);
    return p;
  }
  // Group scaling: the partial of each group along K is scaled when it is promoted.
  if (ga && gb && ga != gb)
    return error{std::string("gemm: A's scaling ") + std::string(to_string(a.scale_kind)) + " and B's " +
                 std::string(to_string(b.scale_kind)) + " group K differently (" + std::to_string(ga) + " vs " +
                 std::to_string(gb) + ")"};
  p.group = std::max(ga, gb);
  if (p.group && !p.identity_order)
    return error{"gemm: block scaling needs K in its natural order (k_order must be 0..K-1)"};
  const double tensor_scale = (a.scale_kind == scaling::per_tensor ? scale_value(a, 0) : 1.0) *
                              (b.scale_kind == scaling::per_tensor ? scale_value(b, 0) : 1.0);
  p.alpha = o.alpha * tensor_scale;
  return p;
}


// The format of the block scales a block-scaled MMA applies (e8m0fnu when neither operand has any).
format block_scale_format(const scaled_matrix& a, const scaled_matrix& b) {
  const scaled_matrix& s = a.scale_kind != scaling::none ? a : b;
  return s.scale_kind == scaling::none ? formats::e8m0fnu : s.scale_format;
}

// The code of element (r, c)'s block scale in fmt: 1 for an operand without scales.
std::uint32_t block_scale_code(const scaled_matrix& m, const format& fmt, int r, int c, bool along_k_is_cols) {
  return m.scale_kind == scaling::none ? one_scale(fmt) : m.scales[scale_index(m, r, c, along_k_is_cols)];
}

// The group scale s_a s_b of output (i, j) from K index k on, rounded into fp32 (exact in double).
rounded group_scale(const scaled_matrix& a, const scaled_matrix& b, int i, int k, int j) {
  return from(formats::fp32, scale_of(a, i, k, true) * scale_of(b, k, j, false));
}

gemm_element reference_element(const plan& p, dot_accumulator& acc, const scaled_matrix& a, const scaled_matrix& b,
                               std::span<const std::uint32_t> c, const gemm_options& o, int i, int j) {
  const std::size_t ij = static_cast<std::size_t>(i) * p.N + j;
  const sr_stream sr{o.sr.seed, o.sr.stream, o.sr.first_index + (static_cast<std::uint64_t>(ij) << 32)};
  gemm_element e;
  acc.reset(formats::fp32, 0, sr);
  for (std::size_t q = 0; q < p.order.size(); ++q) {
    const int k = p.order[q];
    if (p.block_scaled && q % static_cast<std::size_t>(p.model.block.scale_block) == 0) {
      const format fmt = block_scale_format(a, b);
      acc.set_block_scales(fmt, block_scale_code(a, fmt, i, k, true), block_scale_code(b, fmt, k, j, false));
    }
    if (p.group && q % static_cast<std::size_t>(p.group) == 0) {
      const rounded s = group_scale(a, b, i, k, j);
      e.scale_flags |= s.flags;
      acc.set_group_scale(formats::fp32, s.code);
    }
    acc.add_product(a.codes[static_cast<std::size_t>(i) * p.K + k], b.codes[static_cast<std::size_t>(k) * p.N + j]);
  }
  const rounded d = epilogue(p.model, acc.value(), p.alpha, o.beta, o.out, c.empty() ? 0 : c[ij], o.out_rounding,
                             random_bits(o.sr.seed, o.sr.stream, sr.first_index + 0xffffffffu));
  e.code = d.code;
  e.flags = static_cast<std::uint8_t>(acc.flags() | d.flags);
  return e;
}

// The promoted register of every output after the fast kernels, group by group: the partial of
// each group of promote_every products along K is fast_accumulate's code for that slice of K
// (the model without promotion, starting at zero, as the reference restarts it), and the fold
// R = round_fp32(partial * s + R), s = round_fp32(s_a s_b) (1 without group scales), is the
// host's float fma: with nearest-even into fp32 (the only promoted rounding taken here) an fma of
// three floats is that one rounding of the exact value, gradual underflow included, as the fp32
// chain kernel relies on too (the default floating-point environment). s_a s_b of two fp32 scales
// is exact in double, so its cast to float is the reference's one rounding. A fold with an
// operand or a result that is not a finite float (an overflow, a NaN, a partial whose format's
// values are not all floats) takes the core's own fma. Nothing when a slice has no fast kernel.
std::optional<accumulated> promoted_accumulate(const plan& p, const scaled_matrix& a, const scaled_matrix& b,
                                               int threads) {
  const accumulator_model& m = p.model;
  if (p.block_scaled || m.promoted != formats::fp32 || m.promoted_rounding != rounding{}) return std::nullopt;
  const int M = p.M, N = p.N, K = p.K, G = m.promote_every;
  accumulator_model inner = m;
  inner.promote_every = 0;
  std::vector<float> r(static_cast<std::size_t>(M) * N, 0.0f), partials(r.size());
  std::vector<std::uint32_t> slice;
  std::vector<double> sa(static_cast<std::size_t>(M), 1.0), sb(static_cast<std::size_t>(N), 1.0);
  for (int k0 = 0; k0 < K; k0 += G) {
    const int len = std::min(G, K - k0);
    slice.resize(static_cast<std::size_t>(M) * len);
    for (int i = 0; i < M; ++i)
      std::copy_n(a.codes.begin() + static_cast<std::ptrdiff_t>(i) * K + k0, len,
                  slice.begin() + static_cast<std::ptrdiff_t>(i) * len);
    const std::span<const std::uint32_t> b_rows(b.codes.data() + static_cast<std::size_t>(k0) * N,
                                                static_cast<std::size_t>(len) * N);
    const std::optional<accumulated> part = fast_accumulate(a.fmt, slice, b.fmt, b_rows, M, N, len, inner, threads);
    if (!part) return std::nullopt;
    if (p.group) {
      for (int i = 0; i < M; ++i) sa[static_cast<std::size_t>(i)] = scale_of(a, i, k0, true);
      for (int j = 0; j < N; ++j) sb[static_cast<std::size_t>(j)] = scale_of(b, k0, j, false);
    }
    const format& pf = part->fmt;
    // The partials as floats where their format's values are floats (fp32, e8m13), else NaN: the
    // fold below then takes the core's fma.
    if (pf == formats::fp32) {
      std::transform(part->codes.begin(), part->codes.end(), partials.begin(),
                     [](std::uint32_t c) { return std::bit_cast<float>(c); });
    } else if (!decode_array(pf, part->codes, partials)) {
      std::fill(partials.begin(), partials.end(), std::numeric_limits<float>::quiet_NaN());
    }
    parallel_rows(M, threads, [&](int r0, int r1) {
      for (int i = r0; i < r1; ++i)
        for (int j = 0; j < N; ++j) {
          const std::size_t ij = static_cast<std::size_t>(i) * N + j;
          const float partial = partials[ij];
          const float s = static_cast<float>(sa[static_cast<std::size_t>(i)] * sb[static_cast<std::size_t>(j)]);
          const float next = std::fma(partial, s, r[ij]);
          if (std::isfinite(partial) && std::isfinite(s) && std::isfinite(next)) {
            r[ij] = next;
            continue;
          }
          const auto fp32_value = [](float v) { return decode(formats::fp32, std::bit_cast<std::uint32_t>(v)); };
          const exact_result e =
              exact_fma(decode(pf, part->codes[ij]), fp32_value(s), fp32_value(r[ij]), round_mode::nearest_even);
          r[ij] = std::bit_cast<float>(round_exact(formats::fp32, e, rounding{}, 0).code);
        }
    });
  }
  accumulated out{formats::fp32, std::vector<std::uint32_t>(r.size())};
  std::transform(r.begin(), r.end(), out.codes.begin(), [](float v) { return std::bit_cast<std::uint32_t>(v); });
  return out;
}

}  // namespace

expected<std::vector<std::uint32_t>> gemm(const scaled_matrix& a, const scaled_matrix& b,
                                          std::span<const std::uint32_t> c, const gemm_options& o) {
  const expected<plan> planned = make_plan(a, b, c, o);
  if (!planned) return error{planned.message()};
  const plan& p = *planned;
  const int M = p.M, N = p.N, K = p.K;
  const std::size_t MN = static_cast<std::size_t>(M) * N;
  std::vector<std::uint32_t> d(MN);
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());

  // Fast kernels compute the accumulator codes for whole rows, bitwise equal to the reference loop.
  std::vector<std::uint32_t> acc_codes;
  format acc_format = formats::fp32;
  if (o.fast_kernels && p.identity_order && p.model.promote_every > 0) {
    if (auto k = promoted_accumulate(p, a, b, threads)) acc_codes = std::move(k->codes);
  } else if (o.fast_kernels && p.identity_order) {
    block_scale_codes scales;
    if (p.block_scaled) {
      const scaled_matrix& s = a.scale_kind != scaling::none ? a : b;
      if (s.scale_kind != scaling::none) scales.fmt = s.scale_format;
      if (a.scale_kind != scaling::none) scales.a = a.scales;
      if (b.scale_kind != scaling::none) scales.b = b.scales;
    }
    if (auto k = fast_accumulate(a.fmt, a.codes, b.fmt, b.codes, M, N, K, p.model, threads, scales)) {
      acc_codes = std::move(k->codes);
      acc_format = k->fmt;
    }
  }

  // alpha 1, beta 0 and an fp32 register read out into fp32: the epilogue rounds a finite fp32
  // value into fp32, which returns its code (infinities and NaNs take the epilogue).
  const bool identity_epilogue =
      p.alpha == 1.0 && o.beta == 0.0 && acc_format == formats::fp32 && o.out == formats::fp32;
  auto rows = [&](int r0, int r1) {
    dot_accumulator acc(p.model, a.fmt, b.fmt);
    for (int i = r0; i < r1; ++i)
      for (int j = 0; j < N && !interrupted(); ++j) {  // a row of the reference can take a second
        const std::size_t ij = static_cast<std::size_t>(i) * N + j;
        if (acc_codes.empty()) {
          d[ij] = reference_element(p, acc, a, b, c, o, i, j).code;
          continue;
        }
        if (identity_epilogue && (acc_codes[ij] & 0x7f800000u) != 0x7f800000u) {
          d[ij] = acc_codes[ij];
          continue;
        }
        const std::uint64_t first = o.sr.first_index + (static_cast<std::uint64_t>(ij) << 32);
        d[ij] = epilogue(p.model, decode(acc_format, acc_codes[ij]), p.alpha, o.beta, o.out, c.empty() ? 0 : c[ij],
                         o.out_rounding, random_bits(o.sr.seed, o.sr.stream, first + 0xffffffffu))
                    .code;
      }
  };
  parallel_rows(M, threads, rows);
  return d;
}

expected<std::vector<gemm_element>> gemm_elements(const scaled_matrix& a, const scaled_matrix& b,
                                                  std::span<const std::uint32_t> c, const gemm_options& o) {
  const expected<plan> planned = make_plan(a, b, c, o);
  if (!planned) return error{planned.message()};
  const plan& p = *planned;
  std::vector<gemm_element> d(static_cast<std::size_t>(p.M) * p.N);
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  parallel_rows(p.M, threads, [&](int r0, int r1) {
    dot_accumulator acc(p.model, a.fmt, b.fmt);
    for (int i = r0; i < r1; ++i)
      for (int j = 0; j < p.N && !interrupted(); ++j)
        d[static_cast<std::size_t>(i) * p.N + j] = reference_element(p, acc, a, b, c, o, i, j);
  });
  return d;
}

namespace {

// What cannot_break_model needs of a value: finite, its magnitude, and the exponent of its last
// bit (INT_MAX for zero).
struct value_bounds {
  bool finite = true;
  double magnitude = 0;
  int lsb = INT_MAX;
};

int add_lsb(int x, int y) { return x == INT_MAX || y == INT_MAX ? INT_MAX : x + y; }

value_bounds bounds_of(const unpacked& u) {
  if (u.cls == value_class::nan || u.cls == value_class::infinite) return {false, 0, INT_MAX};
  if (u.cls == value_class::zero || u.sig == 0) return {};
  const auto sig = static_cast<std::uint64_t>(u.sig);  // formats of at most 32 bits
  return {true, std::ldexp(static_cast<double>(sig), u.exp), u.exp + std::countr_zero(sig)};
}

value_bounds bounds_of(double x) {
  if (!std::isfinite(x)) return {false, 0, INT_MAX};
  if (x == 0) return {};
  int e = 0;
  const auto m = static_cast<std::uint64_t>(std::ldexp(std::fabs(std::frexp(x, &e)), 53));
  return {true, std::fabs(x), e - 53 + std::countr_zero(m)};
}

// bounds_of every code of a format, tabulated for formats of at most 16 bits.
class bounds_table {
 public:
  explicit bounds_table(const format& f) : f_(f) {
    if (width(f) <= 16)
      for (std::uint32_t code = 0; code <= code_mask(f); ++code) table_.push_back(bounds_of(decode(f, code)));
  }
  value_bounds operator()(std::uint32_t code) const {
    return table_.empty() ? bounds_of(decode(f_, code)) : table_[code & code_mask(f_)];
  }

 private:
  format f_;
  std::vector<value_bounds> table_;
};

// One operand vector (a row of A or a column of B) as cannot_break_model sees it: every code and
// block scale finite, top >= max_k max(|v_k|, 2^emin, 1) s_k, and lsb <= the exponent of the last
// bit of every non-zero v_k s_k (s_k the block scale a block-scaled MMA applies, else 1).
struct operand_bounds {
  bool finite = true;
  double top = 0;
  int lsb = INT_MAX;
  // v times scale; `least` is max(2^emin(f), 1), the smallest top of a value of f.
  void add(const value_bounds& v, double least, const value_bounds& scale) {
    join({v.finite && scale.finite, std::max(v.magnitude, least) * scale.magnitude, add_lsb(v.lsb, scale.lsb)});
  }
  void join(const operand_bounds& o) {
    finite = finite && o.finite;
    top = std::max(top, o.top);
    lsb = std::min(lsb, o.lsb);
  }
};

// The bounds of A's rows (along_k_is_cols) or B's columns.
std::vector<operand_bounds> operand_bounds_of(const plan& p, const scaled_matrix& m, const format& scale_fmt,
                                              bool along_k_is_cols) {
  const bounds_table table(m.fmt);
  const value_bounds one{true, 1.0, 0};
  const double least = std::max(min_normal(m.fmt), 1.0);
  std::vector<operand_bounds> v(static_cast<std::size_t>(along_k_is_cols ? m.rows : m.cols));
  if (!p.block_scaled && width(m.fmt) <= 16) {  // what each code adds, tabulated
    std::vector<operand_bounds> of_code(std::size_t{1} << width(m.fmt));
    for (std::uint32_t code = 0; code < of_code.size(); ++code) of_code[code].add(table(code), least, one);
    const std::uint32_t mask = code_mask(m.fmt);
    for (int r = 0; r < m.rows; ++r) {
      const std::uint32_t* codes = m.codes.data() + static_cast<std::size_t>(r) * m.cols;
      for (int c = 0; c < m.cols; ++c)
        v[static_cast<std::size_t>(along_k_is_cols ? r : c)].join(of_code[codes[c] & mask]);
    }
    return v;
  }
  for (int r = 0; r < m.rows; ++r) {
    const std::uint32_t* codes = m.codes.data() + static_cast<std::size_t>(r) * m.cols;
    for (int c = 0; c < m.cols; ++c) {
      operand_bounds& o = v[static_cast<std::size_t>(along_k_is_cols ? r : c)];
      if (!p.block_scaled) {
        o.add(table(codes[c]), least, one);
        continue;
      }
      o.add(table(codes[c]), least,
            bounds_of(detail::read_scale(scale_fmt, block_scale_code(m, scale_fmt, r, c, along_k_is_cols))));
    }
  }
  return v;
}

// Whether output (i, j)'s chain can raise none of model_breaking_flags, from its operands' bounds
// a and b, the largest group scale s_max and the lowest last bit s_lsb of the group scales (1 and
// 0 without), and its C code c (read only when beta != 0). The argument:
//  - Every code and scale is finite, so an infinity or a NaN can only come from an overflow, and
//    an invalid operation only from an infinity: ruling out overflow rules out invalid.
//  - Magnitudes. P = a.top b.top bounds every product |a_k b_k s_k| and 2^lead of every term of a
//    block (a subnormal product's lead is that of 2^emin(fa) 2^emin(fb); an exactly summed group's
//    lead is its scales' s_a s_b <= P). A rounding into a format of precision p multiplies a
//    magnitude by at most rho = 1 + 2^(1-p). A block of n terms adds at most n P to |C|; its
//    alignments, requantisations and F2 floor lose or gain at most n + 8 times 2^(E - F_min),
//    F_min = min(F, F2), with 2^E <= |C| + n P + Q, Q = max(2^min_reference_exp, 2^emin(acc),
//    2^emin(fp32)) (C's lead, a zero C's in the two-stage sum). With r roundings on any path
//    through a block (1; the pairwise tree's depth + 2, and 2 for converting the operands), a
//    bound V on |C| becomes g (V + c), g = rho^r (1 + (n + 8) 2^-F_min), c = n P + (n + 8)
//    2^-F_min Q, and after B blocks V <= B c g^B. A format accumulator is blocks of one product
//    without alignment; the exact one a single block without rounding. Promotion folds q partials,
//    each at most V s_max, with one rounding each: R <= q V s_max rho^q. The epilogue rounds
//    |alpha| R + |beta c|. Roundings are monotone and every format's largest finite value is
//    one of its values, so when each bound (doubled, to cover the error of computing it in double)
//    is at most the largest finite value of the format rounded into, nothing overflows.
//  - Last bits. Every product and every exactly summed group is an integer multiple of 2^G,
//    G = a.lsb + b.lsb. Aligning to 2^(E-F), requantising and the F2 floor either leave a term as
//    it is or make it a multiple of a coarser power of two, and an inexact rounding into a format
//    gives a multiple of an ulp coarser than 2^G: every value of the chain is 0 or at least 2^G
//    in magnitude, so with G >= emin(acc) no rounding is tiny (nor flushed). The same for the
//    promoted register (G + s_lsb against emin(promoted)) and the epilogue (alpha's last bit plus
//    the register's, and beta's plus c's, against emin(out)).
// The factors of that bound that depend on the model alone, computed once per GEMM (not once per
// output): V = 2 B (n P + slop Q) g^B, and promotion's rho^q.
struct chain_growth {
  double n = 1, slop = 0;  // slop: (n + 8) 2^-F_min
  double Q = 0, blocks = 0, g_blocks = 0;  // g_blocks: g^B
  double q = 0, promoted_growth = 0;        // promotion: q and rho^q
  explicit chain_growth(const plan& p) {
    const accumulator_model& m = p.model;
    const bool block = m.kind == accumulator_kind::block_fma;
    const format& acc = block ? m.block.acc : m.acc;
    const int chunk = m.promote_every > 0 ? std::min(m.promote_every, p.K) : p.K;
    int blocks_of = 1, r = 1;
    if (m.kind == accumulator_kind::exact) {
      blocks_of = chunk;
      r = 0;
    } else if (block) {
      blocks_of = std::min(m.block.block_size, chunk);
      if (m.block.sum == block_sum::aligned) {
        const int f_min = m.block.second_frac_bits > 0 ? std::min(m.block.frac_bits, m.block.second_frac_bits)
                                                       : m.block.frac_bits;
        slop = (blocks_of + 8) * std::ldexp(1.0, -f_min);
      } else if (m.block.sum == block_sum::pairwise) {
        r = std::bit_width(static_cast<unsigned>(blocks_of - 1)) + 4;
      }
    }
    n = blocks_of;
    Q = std::max({std::ldexp(1.0, std::max(m.block.min_reference_exp, -1100)), min_normal(acc),
                  min_normal(formats::fp32)});
    const double g = std::pow(1 + std::ldexp(1.0, 1 - precision(acc)), r) * (1 + slop);
    blocks = std::ceil(static_cast<double>(chunk) / blocks_of);
    g_blocks = std::pow(g, blocks);
    if (m.promote_every > 0) {
      q = std::ceil(static_cast<double>(p.K) / chunk);
      promoted_growth = std::pow(1 + std::ldexp(1.0, 1 - precision(m.promoted)), q);
    }
  }
};

bool cannot_break_model(const plan& p, const gemm_options& o, const chain_growth& growth, const operand_bounds& a,
                        const operand_bounds& b, double s_max, int s_lsb, std::uint32_t c) {
  const accumulator_model& m = p.model;
  if (!a.finite || !b.finite || !std::isfinite(s_max)) return false;
  const format& acc = m.kind == accumulator_kind::block_fma ? m.block.acc : m.acc;
  const double P = a.top * b.top;
  double V = 2 * growth.blocks * (growth.n * P + growth.slop * growth.Q) * growth.g_blocks;
  int grain = add_lsb(a.lsb, b.lsb);
  if (!(V <= max_finite(acc)) || (grain != INT_MAX && grain < emin(acc))) return false;
  if (m.promote_every > 0) {
    V = 2 * growth.q * V * s_max * growth.promoted_growth;
    grain = add_lsb(grain, s_lsb);
    if (!(V <= max_finite(m.promoted)) || (grain != INT_MAX && grain < emin(m.promoted))) return false;
  }
  const value_bounds alpha = bounds_of(p.alpha), beta = bounds_of(o.beta);
  const value_bounds cv = o.beta != 0 ? bounds_of(decode(o.out, c)) : value_bounds{};
  if (!alpha.finite || !beta.finite || !cv.finite) return false;
  const double d = 2 * (alpha.magnitude * V + beta.magnitude * cv.magnitude);
  const int d_grain = std::min(add_lsb(alpha.lsb, grain), add_lsb(beta.lsb, cv.lsb));
  return d <= max_finite(o.out) && (d_grain == INT_MAX || d_grain >= emin(o.out));
}

}  // namespace

expected<std::vector<gemm_element>> gemm_elements_for_bound(const scaled_matrix& a, const scaled_matrix& b,
                                                            std::span<const std::uint32_t> c, const gemm_options& o) {
  const expected<plan> planned = make_plan(a, b, c, o);
  if (!planned) return error{planned.message()};
  const plan& p = *planned;
  const expected<std::vector<std::uint32_t>> codes = gemm(a, b, c, o);
  if (!codes) return error{codes.message()};
  const format scale_fmt = block_scale_format(a, b);
  const std::vector<operand_bounds> rows = operand_bounds_of(p, a, scale_fmt, true);
  const std::vector<operand_bounds> cols = operand_bounds_of(p, b, scale_fmt, false);
  const chain_growth growth(p);
  std::vector<gemm_element> d(static_cast<std::size_t>(p.M) * p.N);
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  parallel_rows(p.M, threads, [&](int r0, int r1) {
    dot_accumulator acc(p.model, a.fmt, b.fmt);
    for (int i = r0; i < r1; ++i)
      for (int j = 0; j < p.N && !interrupted(); ++j) {
        const std::size_t ij = static_cast<std::size_t>(i) * p.N + j;
        gemm_element e{(*codes)[ij], 0, 0};
        double s_max = 1;
        int s_lsb = 0;
        if (p.group) {
          s_max = 0;
          s_lsb = INT_MAX;
          for (int k = 0; k < p.K; k += p.group) {  // a group scaling keeps K in its natural order
            const rounded s = group_scale(a, b, i, k, j);
            e.scale_flags |= s.flags;
            const value_bounds v = bounds_of(decode(formats::fp32, s.code));
            s_max = v.finite ? std::max(s_max, v.magnitude) : std::numeric_limits<double>::infinity();
            s_lsb = std::min(s_lsb, v.lsb);
          }
        }
        if (!cannot_break_model(p, o, growth, rows[static_cast<std::size_t>(i)], cols[static_cast<std::size_t>(j)],
                                s_max, s_lsb, c.empty() ? 0 : c[ij])) {
          e = reference_element(p, acc, a, b, c, o, i, j);
          e.flags &= model_breaking_flags;
        }
        d[ij] = e;
      }
  });
  return d;
}

expected<std::uint32_t> dot(const scaled_matrix& a, const scaled_matrix& b, const gemm_options& options) {
  if (a.rows != 1 || b.cols != 1)
    return error{"dot: expects a 1xK row and a Kx1 column, got " + shape(a) + " and " + shape(b)};
  gemm_options o = options;
  o.threads = 1;
  const expected<std::vector<std::uint32_t>> d = gemm(a, b, {}, o);
  if (!d) return error{d.message()};
  return d->front();
}

}  // namespace fpemu::analysis
