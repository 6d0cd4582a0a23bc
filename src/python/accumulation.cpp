// Python bindings: summation, dot and GEMM under accumulator models, the tensor-core presets and
// their mma model, and the DeepSeek-V3 2024 accumulation experiment.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/reference/accumulation_experiment.hpp"
#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/scaling_experiment.hpp"
#include "analysis/reference/summation.hpp"
#include "bindings.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::python {
namespace {

constexpr const char* accumulator_doc =
    "acc: a format spec ('fp32', 'bf16', 'e4m3fn', ...) rounded after every product in acc_mode\n"
    "(sr_bits random bits for 'sr'), 'exact', or a tensor-core preset (fpemu.presets(): a block-FMA\n"
    "model of the hardware, e.g. 'h100-e4m3-fastaccum'); promote=Nc folds every Nc products into an\n"
    "fp32 register (DeepSeek-V3), 0 keeps the preset's interval or never promotes.";

py::dict bound_dict(const analysis::bound_line& b) {
  py::dict d;
  d["name"] = b.name;
  d["coefficient"] = b.coefficient;
  d["absolute"] = b.absolute;
  d["valid"] = b.valid;
  d["condition"] = b.condition;
  d["probability"] = b.probability;
  return d;
}

// The report of a computed scalar, as sum and dot return it: the result (value, code, format),
// the exact value, error = value - exact, relative_error, abs_sum (the sum of magnitudes the
// bounds scale), IEEE flags and the bounds.
py::dict scalar_report(double value, std::uint32_t code, const format& f, double exact, double error, double relative,
                       double abs_sum, std::uint8_t flags, const std::vector<analysis::bound_line>& bounds) {
  py::dict d;
  d["value"] = value;
  d["code"] = code;
  d["format"] = f;
  d["exact"] = exact;
  d["error"] = error;
  d["relative_error"] = relative;
  d["abs_sum"] = abs_sum;
  d["flags"] = flags;
  py::list lines;
  for (const auto& b : bounds) lines.append(bound_dict(b));
  d["bounds"] = lines;
  return d;
}

py::dict sum_impl(const py::array& x, const py::object& fmt, const std::string& method, const std::string& acc,
                  const std::string& acc_mode, int sr_bits, int promote, int block, const py::object& high,
                  std::uint64_t seed, std::uint32_t stream, double lam) {
  analysis::sum_options o;
  o.input = to_format(fmt);
  o.method = value_or_raise(analysis::parse_sum_method(method));
  o.acc = to_accumulator(acc, acc_mode, sr_bits, promote);
  if (block < 1) throw py::value_error("block = " + std::to_string(block) + " (valid: >= 1)");
  o.block = o.method == analysis::sum_method::promoted && o.acc.promote_every > 0 ? o.acc.promote_every : block;
  o.high = to_format(high);
  o.sr = sr_stream{seed, stream, 0};
  if (!(lam > 0) || !std::isfinite(lam)) throw py::value_error("lam = " + number(lam) + " (valid: > 0, finite)");
  o.lambda = lam;
  const std::vector<std::uint32_t> codes = to_codes(o.input, x, "x");
  const analysis::sum_result r = value_or_raise(without_gil([&] { return analysis::sum(codes, o); }));
  return scalar_report(r.value, r.code, r.result_format, r.exact, r.error, r.relative_error, r.abs_sum, r.flags,
                       r.bounds);
}

analysis::scaled_matrix unscaled(const py::array& a, const format& f, const std::string& name) {
  const auto [rows, cols] = matrix_shape(a, name);
  analysis::scaled_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.fmt = f;
  m.codes = to_codes(f, a, name);
  return m;
}

analysis::gemm_options gemm_options_from(const std::string& acc, const std::string& acc_mode, int sr_bits, int promote,
                                         const format& out, const std::string& out_mode, double alpha, double beta,
                                         const std::optional<std::vector<int>>& k_order, int threads,
                                         std::uint64_t seed) {
  analysis::gemm_options o;
  o.acc = to_accumulator(acc, acc_mode, sr_bits, promote);
  o.out = out;
  o.out_rounding = to_rounding(out, out_mode, "ieee", sr_bits);
  if (!std::isfinite(alpha) || !std::isfinite(beta))
    throw py::value_error("alpha = " + number(alpha) + ", beta = " + number(beta) + " (valid: finite)");
  o.alpha = alpha;
  o.beta = beta;
  if (k_order) o.k_order = *k_order;
  o.threads = thread_count(threads);
  o.sr = sr_stream{seed, 0, 0};
  return o;
}

// A report of the same kind as sum's, from the analysis the CLI prints.
py::dict gemm_report_dict(const analysis::gemm_report& r, py::object result, py::ssize_t rows, py::ssize_t cols) {
  py::dict d;
  d["result"] = std::move(result);
  d["relative_error"] = reshaped(doubles_array(r.relative), std::vector<py::ssize_t>{rows, cols});
  d["normwise_error"] = r.normwise;
  d["error_norm"] = r.error_norm;
  d["exact_norm"] = r.exact_norm;
  py::list bounds;
  bounds.append(bound_dict(r.normwise_bound));
  d["bounds"] = bounds;
  d["normwise_bound"] = r.normwise_bound_relative;
  return d;
}

std::string shape_text(py::ssize_t rows, py::ssize_t cols) {
  return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
}

// The data an operand was quantised from (a_original, b_original), as analysis::quantise reads
// it: float32 values in the operand's shape (`rows` x `cols`; a vector when `vector`), finite.
std::vector<float> original_operand(const py::object& in, const std::string& name, const std::string& operand,
                                    int rows, int cols, bool vector) {
  const py::array x = as_array(in, name);
  if (vector) {
    if (x.ndim() != 1 || x.shape(0) != cols)
      throw py::value_error(name + " has shape " + std::string(py::str(py::tuple(py::cast(shape_of(x))))) + "; " +
                            operand + " has length " + std::to_string(cols) + ": give the " +
                            std::to_string(cols) + " values " + operand + " was quantised from, as a 1-D array");
  } else {
    const auto [r, c] = matrix_shape(x, name);
    if (r != rows || c != cols)
      throw py::value_error(name + " is " + shape_text(r, c) + " but " + operand + " is " + shape_text(rows, cols) +
                            ": give the data " + operand + " was quantised from, in its shape");
  }
  std::vector<float> v = exact_floats(x, name);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw py::value_error(element(name, x, i) + " = " + number(v[i]) +
                            " is not finite (the data before quantisation must be finite)");
  return v;
}

// Both or neither of a_original and b_original, and only for a report.
bool originals_given(const py::object& a_original, const py::object& b_original, bool report) {
  if (a_original.is_none() && b_original.is_none()) return false;
  if (a_original.is_none() || b_original.is_none())
    throw py::value_error(std::string(a_original.is_none() ? "b_original" : "a_original") + " given without " +
                          (a_original.is_none() ? "a_original" : "b_original") +
                          ": give the data before quantisation of both operands, or neither");
  if (!report)
    throw py::value_error("a_original and b_original are read by the report: pass report=True with them");
  return true;
}

// What quantise lost of both operands, as fractions of their non-zero inputs (as fpemu gemm
// and fpemu dot report them).
void add_quantisation_loss(py::dict& d, std::span<const float> xa, const analysis::scaled_matrix& a,
                           std::span<const float> xb, const analysis::scaled_matrix& b) {
  const analysis::quantisation_loss lost = analysis::quantisation_loss_of(xa, a, xb, b);
  d["underflowed"] = lost.fraction(lost.underflowed);
  d["saturated"] = lost.fraction(lost.saturated);
}

py::dict dot_impl(const py::object& a_in, const py::object& b_in, const py::object& a_fmt, const py::object& b_fmt,
                  const std::string& acc, const std::string& acc_mode, int sr_bits, int promote,
                  const py::object& out_fmt, const std::string& out_mode, std::uint64_t seed,
                  const py::object& a_original, const py::object& b_original) {
  const bool originals = originals_given(a_original, b_original, true);
  const py::array a = as_array(a_in, "a"), b = as_array(b_in, "b");
  if (a.ndim() != 1 || b.ndim() != 1) throw py::value_error("a and b must be 1-D arrays of codes");
  if (a.shape(0) != b.shape(0) || a.shape(0) < 1 || a.shape(0) > (1 << 30))
    throw py::value_error("a has length " + std::to_string(a.shape(0)) + " and b has length " +
                          std::to_string(b.shape(0)) + " (valid: equal, 1..2^30)");
  const format fa = to_format(a_fmt), fb = b_fmt.is_none() ? fa : to_format(b_fmt), fo = to_format(out_fmt);
  const analysis::gemm_options o =
      gemm_options_from(acc, acc_mode, sr_bits, promote, fo, out_mode, 1.0, 0.0, std::nullopt, 1, seed);
  // A 1 x K by K x 1 product, its codes read from the 1-D arrays so that a message names a[i].
  const auto k = static_cast<int>(a.shape(0));
  const auto vector_of = [k](const py::array& v, const format& f, const char* name, bool row) {
    analysis::scaled_matrix m;
    m.rows = row ? 1 : k;
    m.cols = row ? k : 1;
    m.fmt = f;
    m.codes = to_codes(f, v, name);
    return m;
  };
  // One declaration initialises in order: a bad a is reported before a bad b.
  const analysis::scaled_matrix ma = vector_of(a, fa, "a", true), mb = vector_of(b, fb, "b", false);
  // The analysis compares with the data before quantisation: a_original and b_original, or else
  // the codes' values.
  const std::vector<float> xa = originals ? original_operand(a_original, "a_original", "a", 1, k, true)
                                          : float_values(fa, ma.codes, "a");
  const std::vector<float> xb = originals ? original_operand(b_original, "b_original", "b", 1, k, true)
                                          : float_values(fb, mb.codes, "b");
  analysis::dot_problem p;
  p.a_format = fa;
  p.b_format = fb;
  p.k = static_cast<std::uint64_t>(k);
  p.model = o.acc;
  p.out = fo;
  p.out_rounding = o.out_rounding;
  const auto [code, r] = without_gil([&] {
    const std::uint32_t computed = value_or_raise(analysis::dot(ma, mb, o));
    return std::pair{computed, analysis::analyse_dot(p, xa, xb, ma, mb, computed, o.sr)};
  });
  py::dict d = scalar_report(r.value, code, fo, r.exact, r.error, r.relative, r.abs_sum, r.flags, {r.bound});
  if (!originals) return d;
  d["exact_original"] = r.exact_original;
  d["error_original"] = r.error_original;
  d["relative_error_original"] = r.relative_original;
  d["abs_sum_original"] = r.abs_sum_original;
  py::list lines;
  lines.append(bound_dict(r.bound_original));
  d["bounds_original"] = lines;
  add_quantisation_loss(d, xa, ma, xb, mb);
  return d;
}

// An operand of the tensor-core model as binary32 patterns of its values, which is what the
// model reads: codes of f by the module's convention, except that a float32 array goes to the
// model as it is (its tf32 presets read fp32 registers and ignore the low 13 bits, as the
// hardware does; for the others it names a value that is not one of f's).
std::vector<std::uint32_t> model_operand(const format& f, const py::array& x, const std::string& name) {
  const auto n = static_cast<std::size_t>(x.size());
  std::vector<std::uint32_t> bits(n);
  if (x.dtype().is(py::dtype::of<float>())) {
    const auto in = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(x);
    std::memcpy(bits.data(), in.data(), n * sizeof(float));
    return bits;
  }
  const std::vector<float> values = float_values(f, to_codes(f, x, name), name);
  std::memcpy(bits.data(), values.data(), n * sizeof(float));
  return bits;
}

// The names of the block-scaled presets, for messages.
std::string scaled_preset_names() {
  std::string names;
  for (const tensor_core_preset& q : tensor_core_presets())
    if (q.scale) names += (names.empty() ? "" : ", ") + q.name;
  return names;
}

// One operand's block scales, rows x cols, by the module's convention for codes of the scale
// format (integer arrays: codes; typed arrays; float arrays: values, each one of the format's), as
// binary32 patterns of their values, which is what tensor_core_dot reads.
std::vector<std::uint32_t> scale_operand(const tensor_core_preset& p, const py::object& in, const std::string& name,
                                         int rows, int cols, const std::string& wanted) {
  const py::array s = as_array(in, name);
  const auto [r, c] = matrix_shape(s, name);
  if (r != rows || c != cols)
    throw py::value_error(name + " is " + shape_text(r, c) + "; preset " + p.name + " needs " + wanted + " = " +
                          shape_text(rows, cols) + ", one scale per " + std::to_string(p.model.block.scale_block) +
                          " products");
  const std::vector<std::uint32_t> codes = to_codes(*p.scale, s, name);
  const std::vector<float> values = float_values(*p.scale, codes, name);
  // UE4M3 (NVFP4) scales are e4m3fn codes without a sign, as tensor_core_dot says too; here the
  // message names the element.
  if (*p.scale == formats::e4m3fn)
    for (std::size_t i = 0; i < values.size(); ++i)
      if (std::signbit(values[i]) && !std::isnan(values[i]))
        throw py::value_error(element(name, s, i) + " = " + number(values[i]) + " is negative: preset " + p.name +
                              " reads its e4m3fn scales as unsigned " + scale_format_name(*p.scale));
  std::vector<std::uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

// D = C + A B as the preset's tensor core computes it, one dot product per output; block-scaled
// presets multiply each product by its scales scale_a[i, k / n] and scale_b[k / n, j].
py::object mma_impl(const py::object& a_in, const py::object& b_in, const py::object& c_in, const std::string& preset,
                    const std::string& out_fmt, const py::object& a_fmt, const py::object& b_fmt,
                    const py::object& scale_a_in, const py::object& scale_b_in, const py::object& out,
                    const py::object& dtype) {
  tensor_core_preset p = value_or_raise(find_preset(preset));
  if (!a_fmt.is_none() || !b_fmt.is_none())
    p = value_or_raise(with_inputs(p, a_fmt.is_none() ? p.a : to_format(a_fmt), b_fmt.is_none() ? p.b : to_format(b_fmt)));
  if (out_fmt != "fp32" && out_fmt != "fp16") throw py::value_error("out_fmt = '" + out_fmt + "' (valid: fp32, fp16)");
  const bool fp16_out = out_fmt == "fp16";
  const format fc = fp16_out ? formats::fp16 : formats::fp32;
  const int block = p.scale ? p.model.block.scale_block : 0;
  const std::string per = "K/" + std::to_string(block);
  const bool scales_given = !scale_a_in.is_none() || !scale_b_in.is_none();
  if (p.scale && (scale_a_in.is_none() || scale_b_in.is_none())) {
    throw py::value_error("preset " + p.name + " is block-scaled (" + scale_format_name(*p.scale) + ", one scale per " +
                          std::to_string(block) + " products): give scale_a (M, " + per + ") and scale_b (" + per +
                          ", N)");
  }
  if (!p.scale && scales_given)
    throw py::value_error("preset " + p.name + " takes no block scales: scale_a and scale_b apply to the block-scaled "
                          "presets (" + scaled_preset_names() + ")");
  const py::array a = as_array(a_in, "A"), b = as_array(b_in, "B");
  const auto [m, k] = matrix_shape(a, "A");
  const auto [kb, n] = matrix_shape(b, "B");
  if (kb != k)
    throw py::value_error("A is (" + std::to_string(m) + ", " + std::to_string(k) + ") but B is (" + std::to_string(kb) +
                          ", " + std::to_string(n) + "): the inner sizes must agree");
  if (p.scale && k % block != 0)
    throw py::value_error("K = " + std::to_string(k) + " is not a multiple of " + std::to_string(block) +
                          ", the products per scale of preset " + p.name);
  const int kblocks = p.scale ? k / block : 0;
  std::vector<std::uint32_t> sa, sb;  // binary32 patterns, row-major as scale_a and scale_b
  if (p.scale) {
    sa = scale_operand(p, scale_a_in, "scale_a", m, kblocks, "(M, " + per + ")");
    sb = scale_operand(p, scale_b_in, "scale_b", kblocks, n, "(" + per + ", N)");
  }
  const std::vector<std::uint32_t> va = model_operand(p.a, a, "A"), vb = model_operand(p.b, b, "B");
  const std::size_t mn = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  std::vector<std::uint32_t> vc(mn, 0);  // binary32 patterns of C's values
  if (!c_in.is_none()) {
    const py::array c = as_array(c_in, "C");
    const auto [cm, cn] = matrix_shape(c, "C");
    if (cm != m || cn != n)
      throw py::value_error("C is (" + std::to_string(cm) + ", " + std::to_string(cn) + "); D is (" +
                            std::to_string(m) + ", " + std::to_string(n) + ")");
    const std::vector<float> values = float_values(fc, to_codes(fc, c, "C"), "C");
    std::memcpy(vc.data(), values.data(), mn * sizeof(float));
  }
  // D in the dtype of its format by default: float32 for fp32, float16 for fp16.
  result_array result(fc, out, dtype, {m, n}, py::dtype(*dtype_name(fc)), is_torch_tensor(a_in));
  std::vector<std::uint32_t> d(mn);
  without_gil([&] {
    const auto kb_size = static_cast<std::size_t>(kblocks);
    std::vector<std::uint32_t> row(static_cast<std::size_t>(k)), col(static_cast<std::size_t>(k)), col_scales(kb_size);
    for (int i = 0; i < m && !interrupted(); ++i) {
      std::copy_n(va.begin() + static_cast<std::ptrdiff_t>(i) * k, k, row.begin());
      const std::span<const std::uint32_t> row_scales =
          p.scale ? std::span<const std::uint32_t>(sa).subspan(static_cast<std::size_t>(i) * kb_size, kb_size)
                  : std::span<const std::uint32_t>{};
      for (int j = 0; j < n; ++j) {
        for (int t = 0; t < k; ++t) col[static_cast<std::size_t>(t)] = vb[static_cast<std::size_t>(t) * n + j];
        for (std::size_t t = 0; t < kb_size; ++t) col_scales[t] = sb[t * static_cast<std::size_t>(n) + j];
        const std::size_t ij = static_cast<std::size_t>(i) * n + j;
        d[ij] = value_or_raise(tensor_core_dot(p, fp16_out, row, col, vc[ij], row_scales, col_scales));
      }
    }
  });
  result.store(d);
  return result.get();
}

// The scaling and the axis along which K runs, as analysis::quantise takes them.
analysis::scaling to_scaling(const std::string& name) { return value_or_raise(analysis::parse_scaling(name)); }
bool along_k_is_cols(int k_axis) {
  if (k_axis != 0 && k_axis != 1)
    throw py::value_error("k_axis = " + std::to_string(k_axis) +
                          " (valid: 1, K along columns as in A; 0, along rows as in B)");
  return k_axis == 1;
}

py::tuple quantise_impl(const py::object& x_in, const py::object& fmt, const std::string& scaling, int k_axis,
                        const std::string& mode) {
  const format f = to_format(fmt);
  const py::array x = as_array(x_in, "x");
  const auto [rows, cols] = matrix_shape(x, "x");
  const std::vector<float> values = exact_floats(x, "x");
  const analysis::scaling how = to_scaling(scaling);
  const bool along_cols = along_k_is_cols(k_axis);
  const rounding r = to_rounding(f, mode, "saturate");
  const analysis::scaled_matrix q = value_or_raise(
      without_gil([&] { return analysis::quantise(values, rows, cols, f, how, along_cols, r); }));
  return py::make_tuple(reshaped(codes_array(f, q.codes), std::vector<py::ssize_t>{rows, cols}),
                        codes_array(q.scale_format, q.scales), to_double(formats::fp32, q.tensor_scale));
}

py::array dequantise_impl(const py::object& codes, const py::object& scales, const py::object& fmt,
                          const std::string& scaling, int k_axis, double tensor_scale) {
  analysis::scaled_matrix q;
  q.fmt = to_format(fmt);
  const py::array c = as_array(codes, "codes");
  std::tie(q.rows, q.cols) = matrix_shape(c, "codes");
  q.codes = to_codes(q.fmt, c, "codes");
  q.scale_kind = to_scaling(scaling);
  q.scale_format = analysis::scale_format_of(q.scale_kind);
  q.scales = to_codes(q.scale_format, as_array(scales, "scales"), "scales");
  const rounded t = from(formats::fp32, tensor_scale);
  if (t.flags != 0 || !(tensor_scale > 0) || !std::isfinite(tensor_scale))
    throw py::value_error("tensor_scale = " + number(tensor_scale) + " (valid: a positive finite fp32 value)");
  if (q.scale_kind != analysis::scaling::nvfp4 && tensor_scale != 1.0)
    throw py::value_error("tensor_scale = " + number(tensor_scale) + ": only nvfp4 has a tensor scale (valid: 1)");
  q.tensor_scale = t.code;
  const bool cols_k = along_k_is_cols(k_axis);
  const std::vector<double> v = value_or_raise(analysis::dequantise(q, cols_k));
  return reshaped(doubles_array(v), std::vector<py::ssize_t>{q.rows, q.cols}).cast<py::array>();
}

// ---- Block scaling of gemm's operands ----

std::string scaling_text(analysis::scaling s) { return "'" + std::string(analysis::to_string(s)) + "'"; }

// The accumulator model that gemm runs for codes scaled `how` (analysis::model_for_scaling, its
// error a ValueError naming scaling= and promote=).
accumulator_model model_for_scaling(const std::string& acc, const accumulator_model& m, analysis::scaling how,
                                    int promote) {
  const expected<accumulator_choice> c = parse_accumulator(acc);  // to_accumulator accepted it
  analysis::scaling_request r;
  r.how = how;
  r.preset = c && c->preset ? &*c->preset : nullptr;
  r.acc = acc;
  r.promote_given = promote > 0;
  r.syntax = analysis::option_syntax::keyword;
  return value_or_raise(analysis::model_for_scaling(m, r));
}

// The number of scales of an operand, in words, as quantise lays them out.
std::string scale_layout(analysis::scaling s, bool is_a) {
  const std::string rows = is_a ? "M" : "N";
  switch (s) {
    case analysis::scaling::per_tensor: return "one";
    case analysis::scaling::tile_1x128:
      return is_a ? "M * ceil(K/128), one per row per 128 along K" : "ceil(N/128) * ceil(K/128), one per 128 x 128 block";
    case analysis::scaling::block_128: return "ceil(" + rows + "/128) * ceil(K/128), one per 128 x 128 block";
    case analysis::scaling::mx32: return rows + " * ceil(K/32), one per 32 along K";
    case analysis::scaling::nvfp4: return rows + " * ceil(K/16), one per 16 along K";
    case analysis::scaling::none: break;
  }
  return "none";
}

// Scales an operand by fpemu.quantise's layout: `scales` its scale codes (a 1-D array by the
// module's convention for the scale format), `tensor_scale` nvfp4's fp32 tensor scale.
void apply_scales(analysis::scaled_matrix& m, analysis::scaling how, const py::object& scales_in,
                  const std::string& name, const std::string& matrix, double tensor_scale,
                  const std::string& tensor_name) {
  const rounded t = from(formats::fp32, tensor_scale);
  if (t.flags != 0 || !(tensor_scale > 0) || !std::isfinite(tensor_scale))
    throw py::value_error(tensor_name + " = " + number(tensor_scale) + " (valid: a positive finite fp32 value)");
  if (how != analysis::scaling::nvfp4 && tensor_scale != 1.0)
    throw py::value_error(tensor_name + " = " + number(tensor_scale) + ": only scaling 'nvfp4' has a tensor scale " +
                          "(valid: 1)");
  if (how == analysis::scaling::none) return;
  const bool is_a = matrix == "A";
  const py::array s = as_array(scales_in, name);
  if (s.ndim() != 1)
    throw py::value_error(name + " must be a 1-D array of scale codes, as fpemu.quantise returns them (k_axis=" +
                          std::string(is_a ? "1" : "0") + "), not " + std::to_string(s.ndim()) + "-D");
  m.scale_kind = how;
  m.scale_format = analysis::scale_format_of(how);
  m.scales = to_codes(m.scale_format, s, name);
  const std::size_t needed = analysis::scale_count(how, m.rows, m.cols, is_a);
  if (m.scales.size() != needed)
    throw py::value_error(name + " has " + std::to_string(m.scales.size()) + " scales; " + matrix + " " +
                          shape_text(m.rows, m.cols) + " scaled " + scaling_text(how) + " takes " +
                          std::to_string(needed) + " (" + scale_layout(how, is_a) + "), as fpemu.quantise(" +
                          (is_a ? "A" : "B") + ", ..., k_axis=" + (is_a ? "1" : "0") + ") returns them");
  // UE4M3 scales are e4m3fn codes without a sign, as the block-scaled MMA reads them.
  if (m.scale_format == formats::e4m3fn)
    for (std::size_t i = 0; i < m.scales.size(); ++i) {
      const double v = to_double(formats::e4m3fn, m.scales[i]);
      if (std::signbit(v) && !std::isnan(v))
        throw py::value_error(element(name, s, i) + " = " + number(v) + " is negative: nvfp4's e4m3fn scales are " +
                              "unsigned UE4M3");
    }
  m.tensor_scale = t.code;
}

py::object gemm_impl(const py::object& a_in, const py::object& b_in, const py::object& c_in, const py::object& a_fmt,
                     const py::object& b_fmt, const std::string& acc, const std::string& acc_mode, int sr_bits,
                     int promote, const py::object& out_fmt, const std::string& out_mode, double alpha, double beta,
                     const std::optional<std::vector<int>>& k_order, int threads, std::uint64_t seed,
                     const std::string& scaling, const py::object& scale_a, const py::object& scale_b,
                     double tensor_scale_a, double tensor_scale_b, bool report, const py::object& a_original,
                     const py::object& b_original, const py::object& out, const py::object& dtype) {
  const bool originals = originals_given(a_original, b_original, report);
  const format fa = to_format(a_fmt), fb = b_fmt.is_none() ? fa : to_format(b_fmt), fo = to_format(out_fmt);
  analysis::gemm_options o =
      gemm_options_from(acc, acc_mode, sr_bits, promote, fo, out_mode, alpha, beta, k_order, threads, seed);
  const analysis::scaling how = to_scaling(scaling);
  o.acc = model_for_scaling(acc, o.acc, how, promote);
  const bool scaled = how != analysis::scaling::none;
  if (!scaled && (!scale_a.is_none() || !scale_b.is_none()))
    throw py::value_error(std::string(!scale_a.is_none() ? "scale_a" : "scale_b") +
                          " given with scaling = 'none' (valid: the scaling fpemu.quantise made the scales with: "
                          "'tensor', 'tile128', 'block128', 'mx32' or 'nvfp4')");
  if (scaled && (scale_a.is_none() || scale_b.is_none()))
    throw py::value_error("scaling = " + scaling_text(how) + " needs scale_a and scale_b (missing: " +
                          (scale_a.is_none() ? "scale_a" : "scale_b") +
                          "): the scales fpemu.quantise returned for A (k_axis=1) and B (k_axis=0)");
  const py::array a = as_array(a_in, "A"), b = as_array(b_in, "B");
  analysis::scaled_matrix ma = unscaled(a, fa, "A"), mb = unscaled(b, fb, "B");
  apply_scales(ma, how, scale_a, "scale_a", "A", tensor_scale_a, "tensor_scale_a");
  apply_scales(mb, how, scale_b, "scale_b", "B", tensor_scale_b, "tensor_scale_b");
  const std::vector<float> xa = originals ? original_operand(a_original, "a_original", "A", ma.rows, ma.cols, false)
                                          : std::vector<float>{};
  const std::vector<float> xb = originals ? original_operand(b_original, "b_original", "B", mb.rows, mb.cols, false)
                                          : std::vector<float>{};
  std::vector<std::uint32_t> cc;
  if (!c_in.is_none()) {
    const py::array c = as_array(c_in, "C");
    const auto [rows, cols] = matrix_shape(c, "C");
    if (rows != ma.rows || cols != mb.cols)
      throw py::value_error("C has shape (" + std::to_string(rows) + ", " + std::to_string(cols) + "); A*B is (" +
                            std::to_string(ma.rows) + ", " + std::to_string(mb.cols) + ")");
    cc = to_codes(fo, c, "C");
  }
  result_array result(fo, out, dtype, {ma.rows, mb.cols}, py::none(), is_torch_tensor(a_in));
  const std::vector<std::uint32_t> d = value_or_raise(without_gil([&] { return analysis::gemm(ma, mb, cc, o); }));
  result.store(d);
  if (!report) return result.get();
  const analysis::gemm_report r = without_gil([&] { return analysis::analyse_gemm(ma, mb, cc, o, d); });
  py::dict dict = gemm_report_dict(r, result.get(), ma.rows, mb.cols);
  if (!originals) return dict;
  // The same D against the exact GEMM of the data before quantisation, as fpemu gemm reports it.
  const analysis::gemm_report g = without_gil(
      [&] { return analysis::compare_with_original(xa, xb, ma.rows, mb.cols, ma.cols, cc, o, d); });
  dict["relative_error_original"] = reshaped(doubles_array(g.relative), std::vector<py::ssize_t>{ma.rows, mb.cols});
  dict["max_rel_error_original"] = analysis::largest_relative(g.relative, false);
  dict["normwise_error_original"] = g.normwise;
  dict["error_norm_original"] = g.error_norm;
  dict["exact_norm_original"] = g.exact_norm;
  add_quantisation_loss(dict, xa, ma, xb, mb);
  return dict;
}

py::list scaling_table_impl(const std::vector<int>& ks, const std::vector<double>& sigmas, int m, int n,
                            std::uint64_t seed, int threads) {
  analysis::scaling_experiment_options o;
  o.ks = ks;
  o.sigmas = sigmas;
  o.m = m;
  o.n = n;
  o.seed = seed;
  o.threads = thread_count(threads);
  const std::vector<analysis::scaling_cell> cells =
      value_or_raise(without_gil([&] { return analysis::scaling_experiment(o); }));
  py::list out;
  for (const analysis::scaling_cell& c : cells) {
    py::dict d;
    d["name"] = c.setup.name;
    d["scaling"] = std::string(analysis::to_string(c.setup.how));
    d["a_format"] = to_string(c.setup.a_format);
    d["b_format"] = to_string(c.setup.b_format);
    d["accumulator"] = c.setup.accumulator;
    d["m"] = m;
    d["n"] = n;
    d["k"] = c.k;
    d["sigma"] = c.sigma;
    d["seed"] = seed;
    d["normwise_error_original"] = c.normwise_error_original;
    d["max_rel_error_original"] = c.max_rel_error_original;
    d["normwise_error"] = c.normwise_error;
    d["max_rel_error"] = c.max_rel_error;
    d["underflowed"] = c.underflowed;
    d["saturated"] = c.saturated;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_accumulation(py::module_& m) {
  m.def(
      "presets",
      [] {
        py::list out;
        for (const tensor_core_preset& p : tensor_core_presets()) {
          const block_fma_model& b = p.model.block;
          py::dict d;
          d["name"] = p.name;
          d["summary"] = p.summary;
          d["instruction"] = p.instruction;
          d["source"] = p.source;
          d["a"] = p.a;
          d["b"] = p.b;
          py::list inputs;
          for (const format& f : input_formats(p)) inputs.append(to_string(f));
          d["inputs"] = inputs;
          d["instruction_k"] = p.instruction_k;
          d["block_size"] = b.block_size;
          d["sum"] = std::string(to_string(b.sum));
          d["frac_bits"] = b.frac_bits;
          d["second_frac_bits"] = b.second_frac_bits;
          d["scale"] = p.scale ? py::object(py::str(to_string(*p.scale))) : py::object(py::none());
          d["scale_block"] = b.scale_block;
          d["promote_every"] = p.model.promote_every;
          d["fp16_out"] = p.fp16_accumulator.has_value();
          d["validated"] = p.validated;
          out.append(d);
        }
        return out;
      },
      "The tensor-core presets as dicts: name, summary, instruction (the instruction modelled, as PTX or\n"
      "the CDNA ISA spells it), source (who published the parameters), default input formats a and b,\n"
      "inputs (the format names A and B may each take, for a_fmt/b_fmt), instruction_k, the block-FMA\n"
      "block_size, sum ('aligned'; 'exact': each block summed exactly; 'pairwise': rounded products\n"
      "and additions), frac_bits (F, of an aligned sum) and second_frac_bits (F2 of a two-stage sum,\n"
      "0 for one stage), scale (the block scales' format name: 'e8m0fnu', or 'e4m3fn' read as\n"
      "unsigned UE4M3; None when unscaled) and scale_block (products per scale, 0 when unscaled),\n"
      "promote_every, whether an fp16 accumulator exists, and whether the preset reproduces recorded\n"
      "hardware outputs bit for bit (validated).");

  m.def("sum", &sum_impl, py::arg("x"), py::arg("fmt") = "fp32", py::kw_only(), py::arg("method") = "recursive",
        py::arg("acc") = "fp32", py::arg("acc_mode") = "rne", py::arg("sr_bits") = 16, py::arg("promote") = 0,
        py::arg("block") = 32, py::arg("high") = "fp32", py::arg("seed") = 0, py::arg("stream") = 0,
        py::arg("lam") = 3.0,
        (std::string("Sums codes x of format fmt by a reference method (recursive pairwise blocked kahan neumaier\n"
                     "promoted stochastic) and returns a dict: value, code and format of the result, the exact sum,\n"
                     "error (computed - exact), relative_error, abs_sum = sum |x_i|, IEEE flags, and bounds: the\n"
                     "method's deterministic bound first, then probabilistic ones (lam = lambda), each a dict with\n"
                     "name, coefficient, absolute = coefficient * abs_sum, valid, condition, probability.\n"
                     "block: b of blocked, Nc of promoted (whose high register is `high`).\n") +
         accumulator_doc)
            .c_str());

  m.def("gemm", &gemm_impl, py::arg("A"), py::arg("B"), py::arg("C") = py::none(), py::kw_only(),
        py::arg("a_fmt") = "fp32", py::arg("b_fmt") = py::none(), py::arg("acc") = "fp32", py::arg("acc_mode") = "rne",
        py::arg("sr_bits") = 16, py::arg("promote") = 0, py::arg("out_fmt") = "fp32", py::arg("out_mode") = "rne",
        py::arg("alpha") = 1.0, py::arg("beta") = 0.0, py::arg("k_order") = py::none(), py::arg("threads") = 0,
        py::arg("seed") = 0, py::arg("scaling") = "none", py::arg("scale_a") = py::none(),
        py::arg("scale_b") = py::none(), py::arg("tensor_scale_a") = 1.0, py::arg("tensor_scale_b") = 1.0,
        py::arg("report") = false, py::arg("a_original") = py::none(), py::arg("b_original") = py::none(),
        py::arg("out") = py::none(), py::arg("dtype") = py::none(),
        (std::string("D = alpha * A B + beta * C on codes: A (M x K) of a_fmt, B (K x N) of b_fmt (default a_fmt),\n"
                     "C (M x N) of out_fmt. Each output accumulates its products in k_order (default 0..K-1) under\n"
                     "the accumulator, then alpha*acc + beta*c is rounded once into out_fmt. Returns D (M x N) by\n"
                     "the module's convention: codes of out_fmt by default, or into `out`, or as `dtype` asks;\n"
                     "bit-identical for any thread count. report=True returns a dict instead, as fpemu gemm reports:\n"
                     "result (D), relative_error per output against the exact product, normwise_error, error_norm\n"
                     "and exact_norm (Frobenius), and bounds (the componentwise bound's normwise form, a dict as\n"
                     "sum's) with normwise_bound, its value relative to exact_norm; with scales, against the exact\n"
                     "product of the scaled values. With a_original and b_original, the float32 data A and B were\n"
                     "quantised from (fpemu.quantise's x; each in its operand's shape), the report adds D against\n"
                     "the exact GEMM of those data, as fpemu gemm reports it (quantisation and accumulation\n"
                     "together): relative_error_original per output, max_rel_error_original,\n"
                     "normwise_error_original, error_norm_original and exact_norm_original, and underflowed and\n"
                     "saturated, the fractions of the non-zero inputs of A and B that quantised to 0 or lay beyond\n"
                     "the format's largest value times their scale.\n"
                     "Block-scaled codes, as fpemu.quantise returns them for A (k_axis=1) and B (k_axis=0), multiply\n"
                     "with their scales: scaling names how they were made ('tensor', 'tile128', 'block128', 'mx32',\n"
                     "'nvfp4'; 'none', the default, takes no scales), scale_a and scale_b are quantise's 1-D arrays\n"
                     "of scale codes, tensor_scale_a and tensor_scale_b nvfp4's tensor scales. A block-scaled preset\n"
                     "applies its own scaling inside its blocks ('mx32' for b200-mxf8f6f4, 'nvfp4' for\n"
                     "b200-mxf4nvf4; 'none': scales of 1), nvfp4's tensor scales multiplying alpha in the epilogue.\n"
                     "Any other accumulator folds each group of a group scaling (tile128, block128: 128; mx32: 32),\n"
                     "times its two scales, into the fp32 register, so the promotion interval must be 0 or the group\n"
                     "size (h100-e4m3-deepseek with 'tile128': DeepSeek-V3's GEMM); 'tensor' multiplies alpha;\n"
                     "'nvfp4' needs a preset that applies it.\n") +
         accumulator_doc)
            .c_str());

  m.def("quantise", &quantise_impl, py::arg("x"), py::arg("fmt"), py::kw_only(), py::arg("scaling") = "mx32",
        py::arg("k_axis") = 1, py::arg("mode") = "rne",
        "Block-scaled quantisation of a 2-D float32 array (values exact in float32) into codes of fmt, as\n"
        "fpemu gemm scales its inputs: scaling 'mx32' (OCP MX v1.0: one e8m0fnu scale per 32 elements\n"
        "along K, X = 2^(floor(log2(amax)) - emax(fmt)), 2^0 for an all-zero block), 'nvfp4' (NVIDIA's\n"
        "NVFP4 with fmt e2m1fn: an fp32 tensor scale s_t = amax / (448 max_finite(fmt)) rounded up, and\n"
        "per 16 elements along K an e4m3fn scale amax_16 / (max_finite(fmt) s_t), nearest-even),\n"
        "'tile128' (one fp32 scale per row per 128 along K for A, per 128 x 128 block for B;\n"
        "DeepSeek-V3), 'block128', 'tensor' or 'none'; fp32 scales are amax / max_finite(fmt) rounded\n"
        "up. Each element x / scale is rounded once into fmt in `mode`, saturating. k_axis: 1 when K\n"
        "runs along columns (A), 0 along rows (B). Returns (codes, scale codes, tensor_scale): codes in\n"
        "x's shape, scales as e8m0fnu (mx32), e4m3fn (nvfp4) or fp32 codes, and nvfp4's tensor scale\n"
        "(1.0 for the others).");
  m.def("dequantise", &dequantise_impl, py::arg("codes"), py::arg("scales"), py::arg("fmt"), py::kw_only(),
        py::arg("scaling") = "mx32", py::arg("k_axis") = 1, py::arg("tensor_scale") = 1.0,
        "The values of block-scaled codes (quantise's result): each code's value times its group's scale\n"
        "(and nvfp4's tensor_scale), exact in float64.");

  m.def("dot", &dot_impl, py::arg("a"), py::arg("b"), py::kw_only(), py::arg("a_fmt") = "fp32",
        py::arg("b_fmt") = py::none(), py::arg("acc") = "fp32", py::arg("acc_mode") = "rne", py::arg("sr_bits") = 16,
        py::arg("promote") = 0, py::arg("out_fmt") = "fp32", py::arg("out_mode") = "rne", py::arg("seed") = 0,
        py::arg("a_original") = py::none(), py::arg("b_original") = py::none(),
        (std::string("The dot product of code vectors a and b (a 1 x K by K x 1 gemm), rounded into out_fmt, with its\n"
                     "analysis as fpemu dot prints it: a dict as sum's: value, code and format of the result,\n"
                     "the exact dot product, error, relative_error, abs_sum = sum |a_i b_i|, IEEE flags, and\n"
                     "bounds (the accumulation bound of the accumulator model, with its validity). With a_original\n"
                     "and b_original, the float32 vectors a and b were quantised from (length K), it adds, as fpemu\n"
                     "dot prints them: exact_original (their exact dot product), error_original,\n"
                     "relative_error_original, abs_sum_original, bounds_original (the bound against them), and\n"
                     "underflowed and saturated, the fractions of their non-zero values that quantised to 0 or lay\n"
                     "beyond the format's largest value.\n") +
         accumulator_doc)
            .c_str());

  const analysis::scaling_experiment_options table_defaults;
  m.def("scaling_table", &scaling_table_impl, py::kw_only(), py::arg("ks") = table_defaults.ks,
        py::arg("sigmas") = table_defaults.sigmas, py::arg("m") = table_defaults.m, py::arg("n") = table_defaults.n,
        py::arg("seed") = table_defaults.seed, py::arg("threads") = 0,
        "What block scaling buys, the table of docs/accumulation.md: for each of five scalings (name: e4m3fn\n"
        "inputs unscaled 'none', per 'tensor', 'tile128' (DeepSeek-V3's 1x128 A / 128x128 B), 'mx32', all\n"
        "accumulated in fp32, and NVFP4's e2m1fn inputs on b200-mxf4nvf4), each K in ks and each sigma in\n"
        "sigmas, one dict: an M x K by K x N GEMM of N(0, sigma^2) data drawn as `fpemu gemm --m M --n N --k\n"
        "K --sigma SIGMA --seed SEED` draws it, so that each number equals that command's (one build):\n"
        "normwise_error_original and max_rel_error_original against the exact GEMM of the data,\n"
        "normwise_error and max_rel_error against the quantised inputs, underflowed and saturated (the\n"
        "fractions of the non-zero inputs quantise lost), with name (the table's row label), scaling,\n"
        "a_format, b_format, accumulator, m, n, k, sigma and seed. Rows in the table's order: scaling,\n"
        "then K, then sigma.");

  m.def("mma", &mma_impl, py::arg("A"), py::arg("B"), py::arg("C") = py::none(), py::kw_only(), py::arg("preset"),
        py::arg("out_fmt") = "fp32", py::arg("a_fmt") = py::none(), py::arg("b_fmt") = py::none(),
        py::arg("scale_a") = py::none(), py::arg("scale_b") = py::none(), py::arg("out") = py::none(),
        py::arg("dtype") = py::none(),
        "D = C + A B as a GPU tensor core computes it (the preset's bit-exact model): A (M x K) and B (K x N)\n"
        "hold the preset's input formats by the module's convention (integer arrays: codes; typed arrays;\n"
        "float32 arrays: values, each one of the format's, except that tf32 presets ignore the low 13\n"
        "bits as the hardware does), C (M x N, default zeros) and D are fp32 or, with out_fmt='fp16'\n"
        "where the preset has one, fp16. Each D[i, j] is one chain of the preset's instructions over K in\n"
        "order. a_fmt/b_fmt choose each operand's format from the preset's inputs (fpemu.presets()).\n"
        "Block-scaled presets (presets()' scale and scale_block = n, e.g. 'b200-mxf8f6f4': e8m0fnu, 32)\n"
        "need scale_a (M x K/n) and scale_b (K/n x N), K a multiple of n: product k of D[i, j] is\n"
        "multiplied by scale_a[i, k // n] * scale_b[k // n, j]. Scales follow the same convention for\n"
        "the scale format (float arrays and tensors: values, each one of its, such as powers of two for\n"
        "e8m0fnu and non-negative e4m3fn values for UE4M3; integer arrays: codes); other presets refuse\n"
        "them. Returns D as float32 (float16 for fp16), or into `out`, or as `dtype` asks.");

  m.def(
      "accumulation_experiment",
      [](const std::vector<int>& ks, int samples, std::uint64_t seed) {
        if (ks.empty()) throw py::value_error("ks is empty (give lengths K >= 1)");
        for (int k : ks)
          if (k < 1 || k > (1 << 24)) throw py::value_error("K = " + std::to_string(k) + " (valid: 1..2^24)");
        if (samples < 1) throw py::value_error("samples = " + std::to_string(samples) + " (valid: >= 1)");
        py::list out;
        const auto rows = without_gil([&] { return analysis::accumulation_experiment(ks, samples, seed); });
        for (const analysis::accumulation_row& r : rows) {
          py::dict d;
          d["method"] = r.method;
          d["k"] = r.k;
          d["samples"] = r.samples;
          d["mean_relative_error"] = r.mean_relative_error;
          d["median_relative_error"] = r.median_relative_error;
          d["p95_relative_error"] = r.p95_relative_error;
          d["max_relative_error"] = r.max_relative_error;
          d["max_normalised_error"] = r.max_normalised_error;
          d["deterministic_bound"] = r.deterministic_bound;
          d["probabilistic_bound"] = r.probabilistic_bound;
          out.append(d);
        }
        return out;
      },
      py::arg("ks"), py::arg("samples") = 100, py::arg("seed") = 2025,
      "The FP8 accumulation table (DeepSeek-V3 2024) with the faithful models: dot products of K e4m3fn inputs from\n"
      "N(0, 0.5^2) accumulated in e4m3fn, on the H100 tensor core without promotion, with DeepSeek-V3\n"
      "promotion every 128 (before and after its bf16 epilogue) and in fp32; one dict per method and K\n"
      "with the mean and max relative error, the max error over sum |a_i b_i| and the bounds. The default\n"
      "seed is that of `fpemu demo` and the table of docs/accumulation.md.");

  m.def(
      "effective_unit_roundoff",
      [](const py::object& fmt, const std::string& mode) {
        return analysis::effective_unit_roundoff(to_format(fmt), value_or_raise(parse_round_mode(mode)));
      },
      py::arg("fmt"), py::arg("mode") = "rne",
      "The u to put into the bounds for one rounding of fmt in mode: 2^-p for nearest, 2^(1-p) for directed,\n"
      "odd and stochastic rounding.");
}

}  // namespace fpemu::python
