// The training models; model.hpp documents every step of the arithmetic.
#include "analysis/training/model.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/gemm_kernels.hpp"
#include "analysis/reference/parallel_rows.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::training {
namespace {

using analysis::scaled_matrix;

constexpr int kMaxSize = 1 << 24;        // per dimension
constexpr int kEvaluationBlock = 1024;  // rows per forward pass in evaluate()

std::size_t area(int rows, int cols) { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); }

// Rounding runs on several threads once a matrix has this many elements (thread start-up costs
// tens of microseconds; round_float about 10 ns an element).
constexpr std::size_t kParallelRounding = 1 << 15;

int rounding_threads(std::size_t n, int threads) { return n >= kParallelRounding ? threads : 1; }

// x (rows x cols, row-major) rounded into f, as a rows x cols matrix of codes.
scaled_matrix round_matrix(const format& f, const float* x, int rows, int cols, int threads) {
  scaled_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.fmt = f;
  m.codes.resize(area(rows, cols));
  analysis::parallel_rows(rows, rounding_threads(m.codes.size(), threads), [&](int r0, int r1) {
    for (std::size_t i = area(r0, cols); i < area(r1, cols); ++i) m.codes[i] = round_float(f, x[i]).code;
  });
  return m;
}

// x (rows x cols, row-major) transposed: cols x rows.
std::vector<float> transpose(const float* x, int rows, int cols) {
  std::vector<float> t(area(rows, cols));
  constexpr int kTile = 32;  // tiles keep both the reads and the strided writes in cache
  for (int i0 = 0; i0 < rows; i0 += kTile)
    for (int j0 = 0; j0 < cols; j0 += kTile)
      for (int i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (int j = j0; j < std::min(cols, j0 + kTile); ++j)
          t[static_cast<std::size_t>(j) * rows + i] = x[static_cast<std::size_t>(i) * cols + j];
  return t;
}

// a * b accumulated in fp32 with nearest-even, no promotion, natural K order, fp32 out: exactly
// analysis::gemm(a, b, {}, gemm_options{threads}), as floats.
//
// gemm's fast path is fast_accumulate() (the fp32 FMA-chain kernel here) followed by a per-output
// epilogue round(fp32, decode(acc)) that also draws Philox bits for stochastic rounding: about
// 40 ns an output, which for the 256 x 784 weight gradient was ~40% of an mlp step. With alpha = 1,
// beta = 0 and fp32 out that epilogue is the identity on finite fp32 codes, so we take the
// kernel's codes as they are and call the same rounding for the others (inf, NaN). When the
// kernel declines (a non-finite input), gemm itself computes the product by its reference loop.
std::vector<float> fp32_matmul(const scaled_matrix& a, const scaled_matrix& b, int threads) {
  std::vector<float> out(area(a.rows, b.cols), std::numeric_limits<float>::quiet_NaN());
  const accumulator_model fp32_rne{};  // a format accumulator of fp32, nearest-even, no promotion
  if (auto k = analysis::fast_accumulate(a.fmt, a.codes, b.fmt, b.codes, a.rows, b.cols, a.cols, fp32_rne, threads)) {
    assert(k->codes.size() == out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::uint32_t code = k->codes[i];
      const bool finite_fp32 = k->fmt == formats::fp32 && (code & 0x7f800000u) != 0x7f800000u;
      out[i] = std::bit_cast<float>(finite_fp32 ? code : round(formats::fp32, decode(k->fmt, code), rounding{}, 0).code);
    }
    return out;
  }
  analysis::gemm_options o;  // fp32_rne accumulator, fp32 out, alpha 1, beta 0
  o.threads = threads;
  const expected<std::vector<std::uint32_t>> d = analysis::gemm(a, b, {}, o);
  assert(d.has_value());
  if (d && d->size() == out.size()) std::memcpy(out.data(), d->data(), out.size() * sizeof(float));
  return out;
}

// Column sums of a rows x cols float matrix: sum over r in order, in float, from +0.
void column_sums(const std::vector<float>& g, int rows, int cols, std::span<float> out) {
  std::fill(out.begin(), out.end(), 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[static_cast<std::size_t>(c)] += g[static_cast<std::size_t>(r) * cols + c];
}

bool class_label(float y, int classes) { return y >= 0.0f && y < static_cast<float>(classes) && y == std::floor(y); }

// Stable log(1 + exp(t)) in double.
double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// Stable 1 / (1 + exp(-t)) in float.
float sigmoid(float t) {
  if (t >= 0.0f) return 1.0f / (1.0f + std::exp(-t));
  const float e = std::exp(t);
  return e / (1.0f + e);
}


}  // namespace

expected<model_kind> parse_model_kind(std::string_view name) {
  for (model_kind k : {model_kind::mlp, model_kind::logreg, model_kind::linreg})
    if (to_string(k) == name) return k;
  return error{"unknown model '" + std::string(name) + "': valid are mlp, logreg, linreg"};
}

std::string_view to_string(model_kind k) {
  switch (k) {
    case model_kind::mlp: return "mlp";
    case model_kind::logreg: return "logreg";
    case model_kind::linreg: return "linreg";
  }
  return "mlp";
}

expected<model> model::create(const model_shape& s, const compute_precision& p) {
  auto size_error = [](const char* what, int v, const char* need) -> error {
    return error{std::string("model: ") + what + " = " + std::to_string(v) + "; " + need};
  };
  const std::string range = "must be 1.." + std::to_string(kMaxSize);
  if (s.inputs < 1 || s.inputs > kMaxSize) return size_error("inputs", s.inputs, range.c_str());
  if (s.kind == model_kind::mlp) {
    if (s.hidden < 1 || s.hidden > kMaxSize) return size_error("hidden", s.hidden, range.c_str());
    if (s.classes < 2 || s.classes > kMaxSize)
      return size_error("classes", s.classes, ("an mlp needs 2.." + std::to_string(kMaxSize)).c_str());
    const std::size_t limit = static_cast<std::size_t>(std::numeric_limits<int>::max());
    if (area(s.hidden, s.inputs) > limit || area(s.classes, s.hidden) > limit)
      return error{"model: " + std::to_string(s.hidden) + " hidden units x " + std::to_string(s.inputs) +
                   " inputs (or x " + std::to_string(s.classes) + " classes) is too many weights for one tensor"};
  }
  const format& f = p.matmul_inputs;
  const std::string name = "compute format " + fpemu::to_string(f);
  if (const auto bad = check(f)) return error{"model: " + name + ": " + *bad};
  if (!f.is_signed || !f.has_zero)
    return error{"model: " + name + " must be signed and have a zero to hold weights and gradients"};
  if (f.exp_bits > 8 || f.frac_bits > 23 || emax(f) > 127 || emin(f) - f.frac_bits < -149)
    return error{"model: " + name + " (" + std::to_string(f.exp_bits) + " exponent bits, " +
                 std::to_string(f.frac_bits) + " fraction bits, bias " + std::to_string(f.bias) +
                 ") has values that are not binary32 values; matmul inputs need at most 8 exponent bits, at "
                 "most 23 fraction bits and a range within binary32's (bf16, fp16, tf32, fp32, fp8, ...)"};
  if (p.scaling != analysis::scaling::none || p.acc) {
    analysis::scaling_request r;
    r.how = p.scaling;
    if (const auto m = analysis::model_for_scaling(p.acc.value_or(accumulator_model{}), r); !m)
      return error{"model: " + m.message()};
  }
  return model(s, p);
}

int model::threads() const {
  return precision_.threads > 0 ? precision_.threads
                                : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::vector<std::size_t> model::param_sizes() const {
  if (shape_.kind == model_kind::mlp)
    return {area(shape_.hidden, shape_.inputs), static_cast<std::size_t>(shape_.hidden),
            area(shape_.classes, shape_.hidden), static_cast<std::size_t>(shape_.classes)};
  return {static_cast<std::size_t>(shape_.inputs), 1};
}

std::vector<std::string> model::param_names() const {
  if (shape_.kind == model_kind::mlp) return {"W1", "b1", "W2", "b2"};
  return {"w", "b"};
}

std::vector<std::vector<float>> model::init(std::uint64_t seed) const {
  const std::vector<std::size_t> sizes = param_sizes();
  std::vector<std::vector<float>> out;
  for (std::size_t p = 0; p < sizes.size(); ++p) out.emplace_back(sizes[p], 0.0f);
  if (shape_.kind != model_kind::mlp) return out;
  auto uniform = [seed](std::vector<float>& v, std::uint32_t stream, double bound) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double u = static_cast<double>(random_bits(seed, stream, i) >> 11) * 0x1p-53;
      v[i] = static_cast<float>((2.0 * u - 1.0) * bound);
    }
  };
  uniform(out[0], 0, std::sqrt(6.0 / shape_.inputs));
  uniform(out[2], 2, std::sqrt(6.0 / (shape_.hidden + shape_.classes)));
  return out;
}

std::optional<std::string> model::check_labels(std::span<const float> y) const {
  for (std::size_t r = 0; r < y.size(); ++r) {
    const float v = y[r];
    bool ok = false;
    std::string need;
    switch (shape_.kind) {
      case model_kind::mlp:
        ok = class_label(v, shape_.classes);
        need = "a class index 0.." + std::to_string(shape_.classes - 1);
        break;
      case model_kind::logreg:
        ok = v == 1.0f || v == -1.0f;
        need = "-1 or +1";
        break;
      case model_kind::linreg:
        ok = std::isfinite(v);
        need = "a finite value";
        break;
    }
    if (!ok)
      return "label " + std::to_string(r) + " is " + std::to_string(v) + "; the " + std::string(to_string(shape_.kind)) +
             " model needs " + need;
  }
  return std::nullopt;
}

namespace {

struct context {
  const model_shape& shape;
  const compute_precision& p;
  int threads;                 // resolved: at least 1
  gemm_probe* probe = nullptr;
  const format& f() const { return p.matmul_inputs; }
};

// One operand of a GEMM as the GEMM reads it: x (rows x cols, row-major) or its transpose, in the
// compute format (model.hpp's top), in A's layout (`first`) or B's. `values` keeps the binary32
// operand for a probe. Under a block scaling an operand with a non-finite value has no codes.
struct operand {
  scaled_matrix q;
  std::vector<float> values;
};

operand make_operand(const context& c, const float* x, int rows, int cols, bool transpose_x, bool first) {
  operand o;
  const bool scaled = c.p.scaling != analysis::scaling::none;
  const int r = transpose_x ? cols : rows, k = transpose_x ? rows : cols;
  if (!scaled && c.probe == nullptr && !transpose_x) {
    o.q = round_matrix(c.f(), x, rows, cols, c.threads);
    return o;
  }
  o.values = transpose_x ? transpose(x, rows, cols) : std::vector<float>(x, x + area(rows, cols));
  if (!scaled) {
    o.q = round_matrix(c.f(), o.values.data(), r, k, c.threads);
    if (c.probe == nullptr) o.values = {};
    return o;
  }
  expected<scaled_matrix> q = analysis::quantise(o.values, r, k, c.f(), c.p.scaling, first);
  if (q) {
    o.q = std::move(*q);
  } else {  // a non-finite value: no scale can be formed
    o.q.rows = r;
    o.q.cols = k;
  }
  return o;
}

// x's operand as B when `as_first` is x's operand as A: the same codes without a scaling (the
// rounding is element by element), else quantised in B's layout.
const operand& second_of(const context& c, const operand& as_first, operand& storage, const float* x, int rows,
                         int cols) {
  if (c.p.scaling == analysis::scaling::none) return as_first;
  storage = make_operand(c, x, rows, cols, false, false);
  return storage;
}

// The first `rows` rows of a matrix in A's layout (K along its columns): scale_index numbers A's
// scales row by row, so theirs are a prefix.
scaled_matrix first_rows(const scaled_matrix& a, int rows) {
  scaled_matrix t = a;
  t.rows = rows;
  t.codes.resize(area(rows, a.cols));
  if (a.scale_kind != analysis::scaling::none) t.scales.resize(analysis::scale_count(a.scale_kind, rows, a.cols, true));
  return t;
}

bool all_finite(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// The probe's record of D = A B (model.hpp's gemm_error).
gemm_error measure(const context& c, std::string_view layer, const operand& a, const operand& b,
                   const std::vector<float>& d) {
  gemm_error e;
  e.layer = std::string(layer);
  e.M = a.q.rows;
  e.N = b.q.cols;
  e.K = a.q.cols;
  e.rows = std::min(c.probe->rows, e.M);
  const std::size_t n = area(e.rows, e.N);
  const std::span<const float> d_rows(d.data(), n), a_rows(a.values.data(), area(e.rows, e.K));
  if (a.q.codes.empty() || b.q.codes.empty() || !all_finite(d_rows) || !all_finite(a_rows) || !all_finite(b.values)) {
    e.normwise_original = e.normwise_quantised = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  std::vector<std::uint32_t> codes(n);
  std::transform(d_rows.begin(), d_rows.end(), codes.begin(), [](float v) { return std::bit_cast<std::uint32_t>(v); });
  analysis::gemm_options o;
  o.acc = c.p.acc.value_or(accumulator_model{});
  o.threads = c.threads;
  e.normwise_original = analysis::compare_with_original(a_rows, b.values, e.rows, e.N, e.K, {}, o, codes).normwise;
  e.normwise_quantised = analysis::analyse_gemm(first_rows(a.q, e.rows), b.q, {}, o, codes).normwise;
  return e;
}

// D = A B in fp32 under the compute precision (model.hpp's top); NaN throughout where a scaled
// operand has no codes. A probe measures it as `layer`.
std::vector<float> matmul(const context& c, std::string_view layer, const operand& a, const operand& b) {
  std::vector<float> d;
  if (a.q.codes.empty() || b.q.codes.empty()) {
    d.assign(area(a.q.rows, b.q.cols), std::numeric_limits<float>::quiet_NaN());
  } else if (!c.p.acc && c.p.scaling == analysis::scaling::none) {
    d = fp32_matmul(a.q, b.q, c.threads);
  } else {
    analysis::gemm_options o;  // fp32 out, nearest-even, alpha 1, beta 0
    o.acc = c.p.acc.value_or(accumulator_model{});
    o.threads = c.threads;
    const expected<std::vector<std::uint32_t>> codes = analysis::gemm(a.q, b.q, {}, o);
    assert(codes.has_value());  // the recipe's model was checked against its scaling
    d.resize(area(a.q.rows, b.q.cols), std::numeric_limits<float>::quiet_NaN());
    if (codes && codes->size() == d.size()) std::memcpy(d.data(), codes->data(), d.size() * sizeof(float));
  }
  if (c.probe != nullptr) c.probe->errors.push_back(measure(c, layer, a, b, d));
  return d;
}

// Forward pass of the mlp on a block of rows.
struct mlp_forward {
  std::vector<float> h;   // rows x hidden, relu(Z1)
  operand h_first;        // H as the first operand of fprop2
  std::vector<float> z1;  // rows x hidden
  std::vector<float> z2;  // rows x classes
};

mlp_forward forward_mlp(const context& c, std::span<const std::span<const float>> params, const operand& x) {
  const int R = x.q.rows, H = c.shape.hidden, C = c.shape.classes;
  mlp_forward fw;
  fw.z1 = matmul(c, "fprop1", x, make_operand(c, params[0].data(), H, c.shape.inputs, true, false));
  const float* b1 = params[1].data();
  fw.h.resize(fw.z1.size());
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < H; ++j) {
      float& z = fw.z1[static_cast<std::size_t>(r) * H + j];
      z += b1[j];
      fw.h[static_cast<std::size_t>(r) * H + j] = z > 0.0f || std::isnan(z) ? z : 0.0f;
    }
  fw.h_first = make_operand(c, fw.h.data(), R, H, false, true);
  fw.z2 = matmul(c, "fprop2", fw.h_first, make_operand(c, params[2].data(), C, H, true, false));
  const float* b2 = params[3].data();
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < C; ++k) fw.z2[static_cast<std::size_t>(r) * C + k] += b2[k];
  return fw;
}

// z = q(X) q(w) + b for the linear models.
std::vector<float> forward_linear(const context& c, std::span<const std::span<const float>> params, const operand& x) {
  std::vector<float> z = matmul(c, "fprop1", x, make_operand(c, params[0].data(), c.shape.inputs, 1, false, false));
  const float b = params[1][0];
  for (float& v : z) v += b;
  return z;
}

// Softmax cross-entropy of one row of logits: the loss in double; with g, (p - onehot) / R.
double softmax_row(const float* z, int C, float y, bool valid, float* g, float R) {
  float m = z[0];
  for (int k = 1; k < C; ++k)
    if (z[k] > m) m = z[k];
  const double md = m;
  double sd = 0.0;
  for (int k = 0; k < C; ++k) sd += std::exp(static_cast<double>(z[k]) - md);
  const int label = valid ? static_cast<int>(y) : -1;
  const double loss = valid ? md + std::log(sd) - static_cast<double>(z[label]) : std::numeric_limits<double>::quiet_NaN();
  if (g != nullptr) {
    float s = 0.0f;
    for (int k = 0; k < C; ++k) {
      g[k] = std::exp(z[k] - m);
      s += g[k];
    }
    for (int k = 0; k < C; ++k) g[k] = (g[k] / s - (k == label ? 1.0f : 0.0f)) / R;
  }
  return loss;
}

double linear_row_loss(model_kind kind, float z, float y) {
  if (kind == model_kind::logreg) {
    const double loss = softplus(-static_cast<double>(y) * static_cast<double>(z));
    return y == 1.0f || y == -1.0f ? loss : std::numeric_limits<double>::quiet_NaN();
  }
  const double d = static_cast<double>(z) - static_cast<double>(y);
  return 0.5 * d * d;
}

void check_params([[maybe_unused]] const std::vector<std::size_t>& sizes,
                  [[maybe_unused]] std::span<const std::span<const float>> params) {
  assert(params.size() == sizes.size());
  for ([[maybe_unused]] std::size_t p = 0; p < params.size(); ++p) assert(params[p].size() == sizes[p]);
}

}  // namespace

double model::loss_and_gradient(std::span<const std::span<const float>> params, std::span<const float> x,
                                std::span<const float> y, int rows, std::span<const std::span<float>> grads,
                                gemm_probe* probe) const {
  const std::vector<std::size_t> sizes = param_sizes();
  check_params(sizes, params);
  assert(grads.size() == sizes.size());
  for ([[maybe_unused]] std::size_t p = 0; p < grads.size(); ++p) assert(grads[p].size() == sizes[p]);
  assert(rows >= 1 && x.size() == area(rows, shape_.inputs) && y.size() == static_cast<std::size_t>(rows));
  assert(!check_labels(y));

  const context c{shape_, precision_, threads(), probe};
  const int R = rows, I = shape_.inputs;
  const float Rf = static_cast<float>(R);
  const operand x_first = make_operand(c, x.data(), R, I, false, true);
  operand x_storage;
  double total = 0.0;

  if (shape_.kind == model_kind::mlp) {
    const int H = shape_.hidden, C = shape_.classes;
    const mlp_forward fw = forward_mlp(c, params, x_first);
    std::vector<float> g2(area(R, C));
    for (int r = 0; r < R; ++r) {
      const float label = y[static_cast<std::size_t>(r)];
      total += softmax_row(fw.z2.data() + static_cast<std::size_t>(r) * C, C, label, class_label(label, C),
                           g2.data() + static_cast<std::size_t>(r) * C, Rf);
    }
    column_sums(g2, R, C, grads[3]);
    operand h_storage;
    const std::vector<float> dw2 = matmul(c, "wgrad2", make_operand(c, g2.data(), R, C, true, true),
                                          second_of(c, fw.h_first, h_storage, fw.h.data(), R, H));
    std::copy(dw2.begin(), dw2.end(), grads[2].begin());
    std::vector<float> g1 = matmul(c, "dgrad2", make_operand(c, g2.data(), R, C, false, true),
                                   make_operand(c, params[2].data(), C, H, false, false));
    for (std::size_t i = 0; i < g1.size(); ++i)
      if (!(fw.z1[i] > 0.0f)) g1[i] = 0.0f;
    column_sums(g1, R, H, grads[1]);
    const std::vector<float> dw1 = matmul(c, "wgrad1", make_operand(c, g1.data(), R, H, true, true),
                                          second_of(c, x_first, x_storage, x.data(), R, I));
    std::copy(dw1.begin(), dw1.end(), grads[0].begin());
  } else {
    const std::vector<float> z = forward_linear(c, params, x_first);
    std::vector<float> g(static_cast<std::size_t>(R));
    for (int r = 0; r < R; ++r) {
      const float zr = z[static_cast<std::size_t>(r)], yr = y[static_cast<std::size_t>(r)];
      total += linear_row_loss(shape_.kind, zr, yr);
      g[static_cast<std::size_t>(r)] =
          shape_.kind == model_kind::logreg ? (-yr * sigmoid(-yr * zr)) / Rf : (zr - yr) / Rf;
    }
    column_sums(g, R, 1, grads[1]);
    const std::vector<float> dw = matmul(c, "wgrad1", make_operand(c, g.data(), 1, R, false, true),
                                         second_of(c, x_first, x_storage, x.data(), R, I));
    std::copy(dw.begin(), dw.end(), grads[0].begin());
  }
  return total / R;
}

std::vector<float> model::outputs(std::span<const std::span<const float>> params, std::span<const float> x,
                                  int rows) const {
  check_params(param_sizes(), params);
  assert(rows >= 1 && x.size() == area(rows, shape_.inputs));
  const context c{shape_, precision_, threads()};
  const operand xo = make_operand(c, x.data(), rows, shape_.inputs, false, true);
  if (shape_.kind == model_kind::mlp) return forward_mlp(c, params, xo).z2;
  return forward_linear(c, params, xo);
}

model::evaluation model::evaluate(std::span<const std::span<const float>> params, std::span<const float> x,
                                  std::span<const float> y, int rows) const {
  check_params(param_sizes(), params);
  assert(rows >= 1 && x.size() == area(rows, shape_.inputs) && y.size() == static_cast<std::size_t>(rows));
  assert(!check_labels(y));
  const context c{shape_, precision_, threads()};
  const int I = shape_.inputs;
  double total = 0.0;
  std::size_t right = 0;
  for (int r0 = 0; r0 < rows; r0 += kEvaluationBlock) {
    const int R = std::min(kEvaluationBlock, rows - r0);
    const operand xo = make_operand(c, x.data() + area(r0, I), R, I, false, true);
    const float* yb = y.data() + r0;
    if (shape_.kind == model_kind::mlp) {
      const int C = shape_.classes;
      const mlp_forward fw = forward_mlp(c, params, xo);
      for (int r = 0; r < R; ++r) {
        const float* z = fw.z2.data() + static_cast<std::size_t>(r) * C;
        const bool valid = class_label(yb[r], C);
        total += softmax_row(z, C, yb[r], valid, nullptr, 1.0f);
        const int best = static_cast<int>(std::max_element(z, z + C) - z);  // first maximum
        right += valid && best == static_cast<int>(yb[r]) ? 1 : 0;
      }
    } else {
      const std::vector<float> z = forward_linear(c, params, xo);
      for (int r = 0; r < R; ++r) {
        total += linear_row_loss(shape_.kind, z[static_cast<std::size_t>(r)], yb[r]);
        right += (z[static_cast<std::size_t>(r)] > 0.0f) == (yb[r] > 0.0f) ? 1 : 0;
      }
    }
  }
  return {total / rows, static_cast<double>(right) / rows};
}

}  // namespace fpemu::training
