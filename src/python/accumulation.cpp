// Python bindings: summation, dot and GEMM under accumulator models, the tensor-core presets and
// their mma model, and the DeepSeek-V3 2024 accumulation experiment.
#include <bit>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/reference/accumulation_experiment.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/summation.hpp"
#include "bindings.hpp"
#include "fpemu/convert.hpp"
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
  const analysis::sum_result r = value_or_raise(analysis::sum(codes, o));
  py::dict d;
  d["value"] = r.value;
  d["code"] = r.code;
  d["format"] = r.result_format;
  d["exact"] = r.exact;
  d["error"] = r.error;
  d["relative_error"] = r.relative_error;
  d["abs_sum"] = r.abs_sum;
  d["flags"] = r.flags;
  py::list bounds;
  for (const auto& b : r.bounds) bounds.append(bound_dict(b));
  d["bounds"] = bounds;
  return d;
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
  if (threads < 0) throw py::value_error("threads = " + std::to_string(threads) + " (valid: 0 for all cores, or >= 1)");
  o.threads = threads;
  o.sr = sr_stream{seed, 0, 0};
  return o;
}

py::object gemm_impl(const py::array& a, const py::array& b, const std::optional<py::array>& c, const py::object& a_fmt,
                     const py::object& b_fmt, const std::string& acc, const std::string& acc_mode, int sr_bits,
                     int promote, const py::object& out, const std::string& out_mode, double alpha, double beta,
                     const std::optional<std::vector<int>>& k_order, int threads, std::uint64_t seed) {
  const format fa = to_format(a_fmt), fb = b_fmt.is_none() ? fa : to_format(b_fmt), fo = to_format(out);
  const analysis::gemm_options o =
      gemm_options_from(acc, acc_mode, sr_bits, promote, fo, out_mode, alpha, beta, k_order, threads, seed);
  const analysis::scaled_matrix ma = unscaled(a, fa, "A"), mb = unscaled(b, fb, "B");
  std::vector<std::uint32_t> cc;
  if (c) {
    const auto [rows, cols] = matrix_shape(*c, "C");
    if (rows != ma.rows || cols != mb.cols)
      throw py::value_error("C has shape (" + std::to_string(rows) + ", " + std::to_string(cols) + "); A*B is (" +
                            std::to_string(ma.rows) + ", " + std::to_string(mb.cols) + ")");
    cc = to_codes(fo, *c, "C");
  }
  const std::vector<std::uint32_t> d = value_or_raise(analysis::gemm(ma, mb, cc, o));
  return reshaped(codes_array(fo, d), std::vector<py::ssize_t>{ma.rows, mb.cols});
}

std::uint32_t dot_impl(const py::array& a, const py::array& b, const py::object& a_fmt, const py::object& b_fmt,
                       const std::string& acc, const std::string& acc_mode, int sr_bits, int promote,
                       const py::object& out, const std::string& out_mode, std::uint64_t seed) {
  if (a.ndim() != 1 || b.ndim() != 1) throw py::value_error("a and b must be 1-D arrays of codes");
  if (a.shape(0) != b.shape(0) || a.shape(0) < 1 || a.shape(0) > (1 << 30))
    throw py::value_error("a has length " + std::to_string(a.shape(0)) + " and b has length " +
                          std::to_string(b.shape(0)) + " (valid: equal, 1..2^30)");
  const format fa = to_format(a_fmt), fb = b_fmt.is_none() ? fa : to_format(b_fmt), fo = to_format(out);
  const analysis::gemm_options o =
      gemm_options_from(acc, acc_mode, sr_bits, promote, fo, out_mode, 1.0, 0.0, std::nullopt, 1, seed);
  // A 1 x K by K x 1 product, its codes read from the 1-D arrays so that a message names a[i].
  const auto vector_of = [k = static_cast<int>(a.shape(0))](const py::array& v, const format& f, const char* name,
                                                           bool row) {
    analysis::scaled_matrix m;
    m.rows = row ? 1 : k;
    m.cols = row ? k : 1;
    m.fmt = f;
    m.codes = to_codes(f, v, name);
    return m;
  };
  // One declaration initialises in order: a bad a is reported before a bad b.
  const analysis::scaled_matrix ma = vector_of(a, fa, "a", true), mb = vector_of(b, fb, "b", false);
  return value_or_raise(analysis::dot(ma, mb, o));
}

// D = C + A B as the preset's tensor core computes it, one dot product per output.
py::array mma_impl(const py::array& a, const py::array& b, const std::optional<py::array>& c, const std::string& preset,
                   const std::string& out, const py::object& a_fmt, const py::object& b_fmt) {
  tensor_core_preset p = value_or_raise(find_preset(preset));
  if (!a_fmt.is_none() || !b_fmt.is_none())
    p = value_or_raise(with_inputs(p, a_fmt.is_none() ? p.a : to_format(a_fmt), b_fmt.is_none() ? p.b : to_format(b_fmt)));
  if (out != "fp32" && out != "fp16") throw py::value_error("out = '" + out + "' (valid: fp32, fp16)");
  const bool fp16_out = out == "fp16";
  const auto [m, k] = matrix_shape(a, "A");
  const auto [kb, n] = matrix_shape(b, "B");
  if (kb != k)
    throw py::value_error("A is (" + std::to_string(m) + ", " + std::to_string(k) + ") but B is (" + std::to_string(kb) +
                          ", " + std::to_string(n) + "): the inner sizes must agree");
  // Exact float32 values only: narrowing a float64 1 + 2^-30 would turn it into the valid bf16 value 1.
  const std::vector<float> va = exact_floats(a, "A"), vb = exact_floats(b, "B");
  std::vector<float> vc(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0f);
  if (c) {
    const auto [cm, cn] = matrix_shape(*c, "C");
    if (cm != m || cn != n)
      throw py::value_error("C is (" + std::to_string(cm) + ", " + std::to_string(cn) + "); D is (" +
                            std::to_string(m) + ", " + std::to_string(n) + ")");
    vc = exact_floats(*c, "C");
  }
  const format fc = fp16_out ? formats::fp16 : formats::fp32;
  std::vector<float> d(vc.size());
  std::vector<std::uint32_t> row(static_cast<std::size_t>(k)), col(static_cast<std::size_t>(k));
  for (int i = 0; i < m; ++i) {
    for (int t = 0; t < k; ++t) row[static_cast<std::size_t>(t)] = std::bit_cast<std::uint32_t>(va[static_cast<std::size_t>(i) * k + t]);
    for (int j = 0; j < n; ++j) {
      for (int t = 0; t < k; ++t) col[static_cast<std::size_t>(t)] = std::bit_cast<std::uint32_t>(vb[static_cast<std::size_t>(t) * n + j]);
      const std::size_t ij = static_cast<std::size_t>(i) * n + j;
      const rounded cin = from(fc, static_cast<double>(vc[ij]), rounding{});
      if (cin.flags & flag::inexact)
        throw py::value_error("C[" + std::to_string(i) + ", " + std::to_string(j) + "] = " + number(vc[ij]) +
                              " is not an " + out + " value");
      // tensor_core_dot takes C as a binary32 pattern (and narrows it itself for fp16 output).
      const std::uint32_t code = value_or_raise(tensor_core_dot(p, fp16_out, row, col, std::bit_cast<std::uint32_t>(vc[ij])));
      d[ij] = static_cast<float>(to_double(fc, code));
    }
  }
  return reshaped(floats_array(d), std::vector<py::ssize_t>{m, n});
}

// The scaling and the axis along which K runs, as analysis::quantise takes them.
analysis::scaling to_scaling(const std::string& name) { return value_or_raise(analysis::parse_scaling(name)); }
bool along_k_is_cols(int k_axis) {
  if (k_axis != 0 && k_axis != 1)
    throw py::value_error("k_axis = " + std::to_string(k_axis) +
                          " (valid: 1, K along columns as in A; 0, along rows as in B)");
  return k_axis == 1;
}

py::tuple quantise_impl(const py::array& x, const py::object& fmt, const std::string& scaling, int k_axis,
                        const std::string& mode) {
  const format f = to_format(fmt);
  const auto [rows, cols] = matrix_shape(x, "x");
  const std::vector<float> values = exact_floats(x, "x");
  const analysis::scaled_matrix q = value_or_raise(analysis::quantise(
      values, rows, cols, f, to_scaling(scaling), along_k_is_cols(k_axis), to_rounding(f, mode, "saturate")));
  return py::make_tuple(reshaped(codes_array(f, q.codes), std::vector<py::ssize_t>{rows, cols}),
                        codes_array(q.scale_format, q.scales));
}

py::array dequantise_impl(const py::array& codes, const py::array& scales, const py::object& fmt,
                          const std::string& scaling, int k_axis) {
  analysis::scaled_matrix q;
  q.fmt = to_format(fmt);
  std::tie(q.rows, q.cols) = matrix_shape(codes, "codes");
  q.codes = to_codes(q.fmt, codes, "codes");
  q.scale_kind = to_scaling(scaling);
  q.scale_format = q.scale_kind == analysis::scaling::mx32 ? formats::e8m0fnu : formats::fp32;
  q.scales = to_codes(q.scale_format, scales, "scales");
  const bool cols_k = along_k_is_cols(k_axis);
  // The number of scales the layout needs: one past the index of the last element's group.
  const std::size_t needed = analysis::scale_index(q, q.rows - 1, q.cols - 1, cols_k) + 1;
  if (q.scales.size() != needed)
    throw py::value_error("scales has " + std::to_string(q.scales.size()) + " elements; a " + std::to_string(q.rows) +
                          "x" + std::to_string(q.cols) + " matrix scaled " + scaling + " along k_axis " +
                          std::to_string(k_axis) + " has " + std::to_string(needed));
  std::vector<double> v(q.codes.size());
  for (int r = 0; r < q.rows; ++r)
    for (int c = 0; c < q.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * q.cols + c;
      v[i] = to_double(q.fmt, q.codes[i]) * analysis::scale_of(q, r, c, cols_k);
    }
  return reshaped(doubles_array(v), std::vector<py::ssize_t>{q.rows, q.cols}).cast<py::array>();
}

}  // namespace

void bind_accumulation(py::module_& m) {
  m.def(
      "presets",
      [] {
        py::list out;
        for (const tensor_core_preset& p : tensor_core_presets()) {
          py::dict d;
          d["name"] = p.name;
          d["summary"] = p.summary;
          d["a"] = p.a;
          d["b"] = p.b;
          d["instruction_k"] = p.instruction_k;
          d["block_size"] = p.model.block.block_size;
          d["frac_bits"] = p.model.block.frac_bits;
          d["promote_every"] = p.model.promote_every;
          d["fp16_out"] = p.fp16_accumulator.has_value();
          d["validated"] = p.validated;
          out.append(d);
        }
        return out;
      },
      "The tensor-core presets as dicts: name, summary, default input formats a and b, instruction_k,\n"
      "the block-FMA block_size and frac_bits, promote_every, whether an fp16 accumulator exists, and\n"
      "whether the preset reproduces recorded hardware outputs bit for bit (validated).");

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
        py::arg("sr_bits") = 16, py::arg("promote") = 0, py::arg("out") = "fp32", py::arg("out_mode") = "rne",
        py::arg("alpha") = 1.0, py::arg("beta") = 0.0, py::arg("k_order") = py::none(), py::arg("threads") = 0,
        py::arg("seed") = 0,
        (std::string("D = alpha * A B + beta * C on codes: A (M x K) of a_fmt, B (K x N) of b_fmt (default a_fmt),\n"
                     "C (M x N) of out. Each output accumulates its products in k_order (default 0..K-1) under the\n"
                     "accumulator, then alpha*acc + beta*c is rounded once into out. Returns M x N codes of out;\n"
                     "bit-identical for any thread count.\n") +
         accumulator_doc)
            .c_str());

  m.def("quantise", &quantise_impl, py::arg("x"), py::arg("fmt"), py::kw_only(), py::arg("scaling") = "mx32",
        py::arg("k_axis") = 1, py::arg("mode") = "rne",
        "Block-scaled quantisation of a 2-D float32 array (values exact in float32) into codes of fmt, as\n"
        "fpemu gemm scales its inputs: scaling 'mx32' (OCP MX v1.0: one e8m0fnu scale per 32 elements\n"
        "along K, X = 2^(floor(log2(amax)) - emax(fmt)), 2^0 for an all-zero block), 'tile128' (one fp32\n"
        "scale per row per 128 along K for A, per 128 x 128 block for B; DeepSeek-V3), 'block128', 'tensor'\n"
        "or 'none'; fp32 scales are amax / max_finite(fmt) rounded up. Each element x / scale is rounded\n"
        "once into fmt in `mode`, saturating. k_axis: 1 when K runs along columns (A), 0 along rows (B).\n"
        "Returns (codes, scale codes): codes in x's shape, scales as e8m0fnu (mx32) or fp32 codes.");
  m.def("dequantise", &dequantise_impl, py::arg("codes"), py::arg("scales"), py::arg("fmt"), py::kw_only(),
        py::arg("scaling") = "mx32", py::arg("k_axis") = 1,
        "The values of block-scaled codes (quantise's result): each code's value times its group's scale,\n"
        "exact in float64.");

  m.def("dot", &dot_impl, py::arg("a"), py::arg("b"), py::kw_only(), py::arg("a_fmt") = "fp32",
        py::arg("b_fmt") = py::none(), py::arg("acc") = "fp32", py::arg("acc_mode") = "rne", py::arg("sr_bits") = 16,
        py::arg("promote") = 0, py::arg("out") = "fp32", py::arg("out_mode") = "rne", py::arg("seed") = 0,
        (std::string("The dot product of code vectors a and b (a 1 x K by K x 1 gemm): returns the code of out.\n") +
         accumulator_doc)
            .c_str());

  m.def("mma", &mma_impl, py::arg("A"), py::arg("B"), py::arg("C") = py::none(), py::kw_only(), py::arg("preset"),
        py::arg("out") = "fp32", py::arg("a_fmt") = py::none(), py::arg("b_fmt") = py::none(),
        "D = C + A B as a GPU tensor core computes it (the preset's bit-exact model): A (M x K) and B (K x N)\n"
        "hold values of the preset's input formats (as float32 arrays; a value that is not one is an error),\n"
        "C (M x N, default zeros) and D are fp32 or, with out='fp16' where the preset has one, fp16 values.\n"
        "Each D[i, j] is one chain of the preset's instructions over K in order. a_fmt/b_fmt choose\n"
        "e4m3fn/e5m2 operands for the mixed FP8 presets. Returns float32.");

  m.def(
      "accumulation_experiment",
      [](const std::vector<int>& ks, int samples, std::uint64_t seed) {
        if (ks.empty()) throw py::value_error("ks is empty (give lengths K >= 1)");
        for (int k : ks)
          if (k < 1 || k > (1 << 24)) throw py::value_error("K = " + std::to_string(k) + " (valid: 1..2^24)");
        if (samples < 1) throw py::value_error("samples = " + std::to_string(samples) + " (valid: >= 1)");
        py::list out;
        for (const analysis::accumulation_row& r : analysis::accumulation_experiment(ks, samples, seed)) {
          py::dict d;
          d["method"] = r.method;
          d["k"] = r.k;
          d["samples"] = r.samples;
          d["mean_relative_error"] = r.mean_relative_error;
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
