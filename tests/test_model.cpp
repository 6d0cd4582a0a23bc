// Training models: fp32 gradients against an independent double-precision implementation (itself
// checked by central finite differences), bf16/fp16 emulation bit for bit against a naive
// reference (round_float on every matmul input, sequential std::fma chains in float), the
// rounding actually applied, determinism of init and of thread counts, and create()'s errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "analysis/training/gemm_recipe.hpp"
#include "analysis/training/model.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/round_float.hpp"

using namespace fpemu;
using namespace fpemu::training;

namespace {

compute_precision precision_of(const format& f, int threads) {
  compute_precision p;
  p.matmul_inputs = f;
  p.threads = threads;
  return p;
}

// ---- Helpers --------------------------------------------------------------------------------------

std::vector<std::span<const float>> views(const std::vector<std::vector<float>>& v) {
  return {v.begin(), v.end()};
}
std::vector<std::span<float>> mutable_views(std::vector<std::vector<float>>& v) { return {v.begin(), v.end()}; }

std::vector<std::vector<float>> zeros_like(const std::vector<std::size_t>& sizes) {
  std::vector<std::vector<float>> g;
  for (std::size_t n : sizes) g.emplace_back(n, 0.0f);
  return g;
}

model make(const model_shape& s, const format& f = formats::fp32, int threads = 1) {
  const expected<model> m = model::create(s, precision_of(f, threads));
  REQUIRE_MESSAGE(m.has_value(), m.message());
  return *m;
}

struct problem {
  std::vector<std::vector<float>> params;
  std::vector<float> x, y;
  int rows = 0;
};

// Normal data and parameters (the mlp's weights of unit-ish scale so ReLUs are on both sides);
// labels suited to the kind.
problem random_problem(const model_shape& s, const std::vector<std::size_t>& sizes, int rows, std::uint64_t seed,
                       float weight_sigma = 0.5f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  problem p;
  p.rows = rows;
  for (std::size_t n : sizes) {
    std::vector<float> v(n);
    for (float& e : v) e = weight_sigma * normal(rng);
    p.params.push_back(std::move(v));
  }
  p.x.resize(static_cast<std::size_t>(rows) * s.inputs);
  for (float& e : p.x) e = normal(rng);
  for (int r = 0; r < rows; ++r) {
    switch (s.kind) {
      case model_kind::mlp: p.y.push_back(static_cast<float>(rng() % static_cast<unsigned>(s.classes))); break;
      case model_kind::logreg: p.y.push_back(rng() % 2 ? 1.0f : -1.0f); break;
      case model_kind::linreg: p.y.push_back(2.0f * normal(rng)); break;
    }
  }
  return p;
}

double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// ---- Independent double-precision implementation ----------------------------------------------------

struct double_result {
  double loss = 0;
  std::vector<std::vector<double>> grads;
};

double_result double_model(const model_shape& s, const std::vector<std::vector<double>>& P,
                           const std::vector<float>& xf, const std::vector<float>& y, int R) {
  const int I = s.inputs;
  auto x = [&](int r, int i) { return static_cast<double>(xf[static_cast<std::size_t>(r) * I + i]); };
  double_result out;
  for (const auto& p : P) out.grads.emplace_back(p.size(), 0.0);
  if (s.kind == model_kind::mlp) {
    const int H = s.hidden, C = s.classes;
    for (int r = 0; r < R; ++r) {
      std::vector<double> z1(H), h(H), z2(C, 0.0), p(C);
      for (int j = 0; j < H; ++j) {
        double a = P[1][j];
        for (int i = 0; i < I; ++i) a += P[0][static_cast<std::size_t>(j) * I + i] * x(r, i);
        z1[j] = a;
        h[j] = std::max(a, 0.0);
      }
      for (int c = 0; c < C; ++c) {
        double a = P[3][c];
        for (int j = 0; j < H; ++j) a += P[2][static_cast<std::size_t>(c) * H + j] * h[j];
        z2[c] = a;
      }
      const double m = *std::max_element(z2.begin(), z2.end());
      double s2 = 0;
      for (int c = 0; c < C; ++c) s2 += std::exp(z2[c] - m);
      const int label = static_cast<int>(y[r]);
      out.loss += (m + std::log(s2) - z2[label]) / R;
      std::vector<double> dh(H, 0.0);
      for (int c = 0; c < C; ++c) {
        const double g = (std::exp(z2[c] - m) / s2 - (c == label ? 1.0 : 0.0)) / R;
        out.grads[3][c] += g;
        for (int j = 0; j < H; ++j) {
          out.grads[2][static_cast<std::size_t>(c) * H + j] += g * h[j];
          dh[j] += g * P[2][static_cast<std::size_t>(c) * H + j];
        }
      }
      for (int j = 0; j < H; ++j) {
        const double g = z1[j] > 0 ? dh[j] : 0.0;
        out.grads[1][j] += g;
        for (int i = 0; i < I; ++i) out.grads[0][static_cast<std::size_t>(j) * I + i] += g * x(r, i);
      }
    }
  } else {
    for (int r = 0; r < R; ++r) {
      double z = P[1][0];
      for (int i = 0; i < I; ++i) z += P[0][i] * x(r, i);
      const double yr = y[r];
      double g;
      if (s.kind == model_kind::logreg) {
        out.loss += softplus(-yr * z) / R;
        g = -yr / (1.0 + std::exp(yr * z)) / R;
      } else {
        out.loss += 0.5 * (z - yr) * (z - yr) / R;
        g = (z - yr) / R;
      }
      out.grads[1][0] += g;
      for (int i = 0; i < I; ++i) out.grads[0][i] += g * x(r, i);
    }
  }
  return out;
}

std::vector<std::vector<double>> to_double(const std::vector<std::vector<float>>& p) {
  std::vector<std::vector<double>> d;
  for (const auto& v : p) d.emplace_back(v.begin(), v.end());
  return d;
}

// ---- Naive emulation reference (the arithmetic documented in model.hpp, written out) -----------------

struct naive {
  format f;
  float q(float v) const { return to_float(f, round_float(f, v).code); }
  std::vector<float> q(const std::vector<float>& v) const {
    std::vector<float> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = q(v[i]);
    return out;
  }
};

struct naive_result {
  std::vector<float> outputs;  // Z2 or z
  double loss = 0;
  std::vector<std::vector<float>> grads;
  double accuracy = 0;
};

naive_result naive_model(const model_shape& s, const format& f, const problem& pb) {
  const naive n{f};
  const int R = pb.rows, I = s.inputs;
  const float Rf = static_cast<float>(R);
  const std::vector<float> xq = n.q(pb.x);
  auto X = [&](int r, int i) { return xq[static_cast<std::size_t>(r) * I + i]; };
  naive_result out;
  double total = 0;
  int right = 0;
  if (s.kind == model_kind::mlp) {
    const int H = s.hidden, C = s.classes;
    const std::vector<float> w1 = n.q(pb.params[0]), w2 = n.q(pb.params[2]);
    const std::vector<float>&b1 = pb.params[1], &b2 = pb.params[3];
    std::vector<float> z1(static_cast<std::size_t>(R) * H), hq(z1.size()), z2(static_cast<std::size_t>(R) * C),
        g2(z2.size()), g2q(z2.size());
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < H; ++j) {
        float acc = 0.0f;
        for (int i = 0; i < I; ++i) acc = std::fma(X(r, i), w1[static_cast<std::size_t>(j) * I + i], acc);
        const float z = acc + b1[j];
        z1[static_cast<std::size_t>(r) * H + j] = z;
        hq[static_cast<std::size_t>(r) * H + j] = n.q(z > 0.0f || std::isnan(z) ? z : 0.0f);
      }
    for (int r = 0; r < R; ++r) {
      float* z = z2.data() + static_cast<std::size_t>(r) * C;
      for (int c = 0; c < C; ++c) {
        float acc = 0.0f;
        for (int j = 0; j < H; ++j)
          acc = std::fma(hq[static_cast<std::size_t>(r) * H + j], w2[static_cast<std::size_t>(c) * H + j], acc);
        z[c] = acc + b2[c];
      }
      float m = z[0];
      int best = 0;
      for (int c = 1; c < C; ++c)
        if (z[c] > m) {
          m = z[c];
          best = c;
        }
      const int label = static_cast<int>(pb.y[r]);
      right += best == label ? 1 : 0;
      double sd = 0;
      for (int c = 0; c < C; ++c) sd += std::exp(static_cast<double>(z[c]) - static_cast<double>(m));
      total += static_cast<double>(m) + std::log(sd) - static_cast<double>(z[label]);
      float sum = 0.0f;
      std::vector<float> e(C);
      for (int c = 0; c < C; ++c) {
        e[c] = std::exp(z[c] - m);
        sum += e[c];
      }
      for (int c = 0; c < C; ++c) {
        const float g = (e[c] / sum - (c == label ? 1.0f : 0.0f)) / Rf;
        g2[static_cast<std::size_t>(r) * C + c] = g;
        g2q[static_cast<std::size_t>(r) * C + c] = n.q(g);
      }
    }
    out.grads = {std::vector<float>(static_cast<std::size_t>(H) * I), std::vector<float>(H, 0.0f),
                 std::vector<float>(static_cast<std::size_t>(C) * H), std::vector<float>(C, 0.0f)};
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) out.grads[3][c] += g2[static_cast<std::size_t>(r) * C + c];
    for (int c = 0; c < C; ++c)
      for (int j = 0; j < H; ++j) {
        float acc = 0.0f;
        for (int r = 0; r < R; ++r)
          acc = std::fma(g2q[static_cast<std::size_t>(r) * C + c], hq[static_cast<std::size_t>(r) * H + j], acc);
        out.grads[2][static_cast<std::size_t>(c) * H + j] = acc;
      }
    std::vector<float> g1(static_cast<std::size_t>(R) * H), g1q(g1.size());
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < H; ++j) {
        float acc = 0.0f;
        for (int c = 0; c < C; ++c)
          acc = std::fma(g2q[static_cast<std::size_t>(r) * C + c], w2[static_cast<std::size_t>(c) * H + j], acc);
        const std::size_t rj = static_cast<std::size_t>(r) * H + j;
        g1[rj] = z1[rj] > 0.0f ? acc : 0.0f;
        g1q[rj] = n.q(g1[rj]);
      }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < H; ++j) out.grads[1][j] += g1[static_cast<std::size_t>(r) * H + j];
    for (int j = 0; j < H; ++j)
      for (int i = 0; i < I; ++i) {
        float acc = 0.0f;
        for (int r = 0; r < R; ++r) acc = std::fma(g1q[static_cast<std::size_t>(r) * H + j], X(r, i), acc);
        out.grads[0][static_cast<std::size_t>(j) * I + i] = acc;
      }
    out.outputs = z2;
  } else {
    const std::vector<float> w = n.q(pb.params[0]);
    const float b = pb.params[1][0];
    std::vector<float> z(R), g(R);
    out.grads = {std::vector<float>(I), std::vector<float>(1, 0.0f)};
    for (int r = 0; r < R; ++r) {
      float acc = 0.0f;
      for (int i = 0; i < I; ++i) acc = std::fma(X(r, i), w[i], acc);
      z[r] = acc + b;
      const float yr = pb.y[r];
      if (s.kind == model_kind::logreg) {
        const float t = -yr * z[r];
        const float sigma = t >= 0.0f ? 1.0f / (1.0f + std::exp(-t)) : std::exp(t) / (1.0f + std::exp(t));
        g[r] = (-yr * sigma) / Rf;
        total += softplus(static_cast<double>(t));
      } else {
        g[r] = (z[r] - yr) / Rf;
        const double d = static_cast<double>(z[r]) - static_cast<double>(yr);
        total += 0.5 * d * d;
      }
      right += (z[r] > 0.0f) == (yr > 0.0f) ? 1 : 0;
      out.grads[1][0] += g[r];
    }
    for (int i = 0; i < I; ++i) {
      float acc = 0.0f;
      for (int r = 0; r < R; ++r) acc = std::fma(n.q(g[r]), X(r, i), acc);
      out.grads[0][i] = acc;
    }
    out.outputs = z;
  }
  out.loss = total / R;
  out.accuracy = static_cast<double>(right) / R;
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
  return true;
}

// Equal bits, or both NaN (a NaN's payload and sign are not part of the model's contract).
bool same_or_both_nan(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i]))
      return false;
  return true;
}

struct run_result {
  double loss;
  std::vector<std::vector<float>> grads;
};

run_result run(const model& m, const problem& p) {
  run_result out{0, zeros_like(m.param_sizes())};
  const auto pv = views(p.params);
  const auto gv = mutable_views(out.grads);
  out.loss = m.loss_and_gradient(pv, p.x, p.y, p.rows, gv);
  return out;
}

const model_shape kSmall[] = {
    {model_kind::mlp, 7, 5, 3},
    {model_kind::logreg, 7, 0, 0},
    {model_kind::linreg, 7, 0, 0},
};

}  // namespace

TEST_CASE("names: model kinds parse and print; parameter names and sizes") {
  for (model_kind k : {model_kind::mlp, model_kind::logreg, model_kind::linreg}) {
    const auto parsed = parse_model_kind(to_string(k));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == k);
  }
  const auto bad = parse_model_kind("cnn");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.message().find("'cnn'") != std::string::npos);

  const model mlp = make({model_kind::mlp, 784, 256, 10});
  CHECK(mlp.param_names() == std::vector<std::string>{"W1", "b1", "W2", "b2"});
  CHECK(mlp.param_sizes() == std::vector<std::size_t>{256 * 784, 256, 10 * 256, 10});
  const model lr = make({model_kind::logreg, 30, 0, 0});
  CHECK(lr.param_names() == std::vector<std::string>{"w", "b"});
  CHECK(lr.param_sizes() == std::vector<std::size_t>{30, 1});
}

TEST_CASE("fp32 gradients == the double-precision implementation (checked by finite differences)") {
  for (const model_shape& s : kSmall) {
    CAPTURE(to_string(s.kind));
    const model m = make(s);
    const problem p = random_problem(s, m.param_sizes(), 9, 17);
    const auto P = to_double(p.params);
    const double_result want = double_model(s, P, p.x, p.y, p.rows);

    // The double gradient itself against central differences of the double loss.
    int checked = 0;
    for (std::size_t t = 0; t < P.size(); ++t)
      for (std::size_t i = 0; i < P[t].size(); ++i) {
        auto plus = P, minus = P;
        const double h = 1e-6;
        plus[t][i] += h;
        minus[t][i] -= h;
        const double fd =
            (double_model(s, plus, p.x, p.y, p.rows).loss - double_model(s, minus, p.x, p.y, p.rows).loss) / (2 * h);
        CHECK(std::fabs(fd - want.grads[t][i]) <= 1e-7 + 1e-6 * std::fabs(want.grads[t][i]));
        ++checked;
      }
    CHECK(checked == static_cast<int>(P.size() == 4 ? 7 * 5 + 5 + 3 * 5 + 3 : 8));

    const run_result got = run(m, p);
    CHECK(std::fabs(got.loss - want.loss) <= 1e-6 * std::fabs(want.loss));
    for (std::size_t t = 0; t < P.size(); ++t) {
      CAPTURE(t);
      double scale = 0;
      for (double g : want.grads[t]) scale = std::max(scale, std::fabs(g));
      REQUIRE(scale > 0);
      for (std::size_t i = 0; i < P[t].size(); ++i)
        CHECK(std::fabs(got.grads[t][i] - want.grads[t][i]) <= 1e-5 * scale);
    }
  }
}

TEST_CASE("bf16 and fp16 compute == the naive reference bit for bit: outputs, loss, gradients, evaluation") {
  const model_shape shapes[] = {
      {model_kind::mlp, 7, 5, 3},
      {model_kind::mlp, 40, 35, 4},  // wide enough for the vector kernel's 16-column tiles
      {model_kind::logreg, 33, 0, 0},
      {model_kind::linreg, 33, 0, 0},
  };
  int compared = 0;
  for (const format& f : {formats::bf16, formats::fp16}) {
    for (const model_shape& s : shapes) {
      CAPTURE(to_string(s.kind));
      CAPTURE(s.inputs);
      CAPTURE(f.frac_bits);
      const model m = make(s, f, 2);
      const problem p = random_problem(s, m.param_sizes(), 21, 5 + static_cast<std::uint64_t>(s.inputs));
      const naive_result want = naive_model(s, f, p);
      const auto pv = views(p.params);
      CHECK(same_bits(m.outputs(pv, p.x, p.rows), want.outputs));
      const run_result got = run(m, p);
      CHECK(std::bit_cast<std::uint64_t>(got.loss) == std::bit_cast<std::uint64_t>(want.loss));
      for (std::size_t t = 0; t < got.grads.size(); ++t) {
        CAPTURE(t);
        CHECK(same_bits(got.grads[t], want.grads[t]));
        compared += static_cast<int>(got.grads[t].size());
      }
      const model::evaluation e = m.evaluate(pv, p.x, p.y, p.rows);
      CHECK(std::bit_cast<std::uint64_t>(e.loss) == std::bit_cast<std::uint64_t>(want.loss));
      CHECK(e.accuracy == want.accuracy);
    }
  }
  CHECK(compared > 2 * (40 * 35 + 35 + 4 * 35 + 4));
}

TEST_CASE("ReLU at exactly zero passes no gradient; overflowing inputs and sums follow the reference") {
  SUBCASE("z1 == 0 everywhere: W1 = 0, b1 = 0") {
    const model_shape s{model_kind::mlp, 7, 5, 3};
    const model m = make(s, formats::bf16);
    problem p = random_problem(s, m.param_sizes(), 9, 3);
    std::fill(p.params[0].begin(), p.params[0].end(), 0.0f);
    std::fill(p.params[1].begin(), p.params[1].end(), 0.0f);
    const run_result got = run(m, p);
    const naive_result want = naive_model(s, formats::bf16, p);
    CHECK(std::bit_cast<std::uint64_t>(got.loss) == std::bit_cast<std::uint64_t>(want.loss));
    CHECK(std::all_of(got.grads[0].begin(), got.grads[0].end(), [](float v) { return v == 0.0f; }));
    CHECK(std::all_of(got.grads[1].begin(), got.grads[1].end(), [](float v) { return v == 0.0f; }));
    for (std::size_t t = 0; t < got.grads.size(); ++t) CHECK(same_bits(got.grads[t], want.grads[t]));
  }
  SUBCASE("a weight beyond fp16's range becomes inf: gemm's reference loop takes over") {
    const model_shape s{model_kind::mlp, 7, 5, 3};
    const model m = make(s, formats::fp16);
    problem p = random_problem(s, m.param_sizes(), 9, 4);
    p.params[0][3] = 1e6f;
    const run_result got = run(m, p);
    const naive_result want = naive_model(s, formats::fp16, p);
    CHECK_FALSE(std::isfinite(got.loss));
    CHECK(same_or_both_nan(m.outputs(views(p.params), p.x, p.rows), want.outputs));
    for (std::size_t t = 0; t < got.grads.size(); ++t) {
      CAPTURE(t);
      CHECK(same_or_both_nan(got.grads[t], want.grads[t]));
    }
  }
  SUBCASE("finite bf16 inputs whose products overflow fp32") {
    const model_shape s{model_kind::linreg, 33, 0, 0};
    const model m = make(s, formats::bf16);
    problem p = random_problem(s, m.param_sizes(), 5, 6);
    for (int i = 0; i < 33; ++i) p.x[static_cast<std::size_t>(i)] = (i % 2 ? 1e30f : -1e30f);
    for (int i = 0; i < 4; ++i) p.params[0][static_cast<std::size_t>(i)] = 1e10f;
    const run_result got = run(m, p);
    const naive_result want = naive_model(s, formats::bf16, p);
    CHECK_FALSE(std::isfinite(got.loss));
    const std::vector<float> z = m.outputs(views(p.params), p.x, p.rows);
    CHECK_FALSE(std::isfinite(z[0]));
    CHECK(std::isfinite(z[1]));
    CHECK(same_or_both_nan(z, want.outputs));
    for (std::size_t t = 0; t < got.grads.size(); ++t) CHECK(same_or_both_nan(got.grads[t], want.grads[t]));
  }
}

TEST_CASE("evaluate() in blocks of rows == the naive reference over 2500 rows") {
  const model_shape s{model_kind::mlp, 6, 4, 3};
  const model m = make(s, formats::bf16, 2);
  problem p = random_problem(s, m.param_sizes(), 2500, 99, 1.0f);
  const naive_result want = naive_model(s, formats::bf16, p);
  const model::evaluation e = m.evaluate(views(p.params), p.x, p.y, p.rows);
  CHECK(std::bit_cast<std::uint64_t>(e.loss) == std::bit_cast<std::uint64_t>(want.loss));
  CHECK(e.accuracy == want.accuracy);
  CHECK(e.accuracy > 0.0);
  CHECK(e.accuracy < 1.0);
}

TEST_CASE("bf16 compute rounds: its loss and gradients differ from fp32's, but stay close") {
  for (const model_shape& s : {model_shape{model_kind::mlp, 30, 20, 5}, model_shape{model_kind::logreg, 30, 0, 0}}) {
    CAPTURE(to_string(s.kind));
    const model m32 = make(s), m16 = make(s, formats::bf16);
    const problem p = random_problem(s, m32.param_sizes(), 16, 23);
    const run_result a = run(m32, p), b = run(m16, p);
    CHECK(a.loss != b.loss);
    CHECK(std::fabs(a.loss - b.loss) <= 0.05 * std::fabs(a.loss));
    CHECK_FALSE(same_bits(a.grads[0], b.grads[0]));
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < a.grads[0].size(); ++i) {
      diff += std::pow(a.grads[0][i] - b.grads[0][i], 2);
      norm += std::pow(a.grads[0][i], 2);
    }
    CHECK(std::sqrt(diff) <= 0.05 * std::sqrt(norm));
  }
}

TEST_CASE("determinism: init is a function of the seed; results do not depend on the thread count") {
  const model_shape s{model_kind::mlp, 50, 24, 10};
  const model m1 = make(s, formats::bf16, 1), m2 = make(s, formats::bf16, 2);
  const auto a = m1.init(42), b = m1.init(42), c = m1.init(43);
  CHECK(a == b);
  CHECK(a[0] != c[0]);
  CHECK(a[2] != c[2]);
  CHECK(m2.init(42) == a);
  // Biases zero; weights within the documented bounds and not degenerate.
  CHECK(std::all_of(a[1].begin(), a[1].end(), [](float v) { return v == 0.0f; }));
  CHECK(std::all_of(a[3].begin(), a[3].end(), [](float v) { return v == 0.0f; }));
  const float bound1 = static_cast<float>(std::sqrt(6.0 / 50)), bound2 = static_cast<float>(std::sqrt(6.0 / 34));
  CHECK(std::all_of(a[0].begin(), a[0].end(), [&](float v) { return std::fabs(v) <= bound1; }));
  CHECK(std::all_of(a[2].begin(), a[2].end(), [&](float v) { return std::fabs(v) <= bound2; }));
  CHECK(*std::max_element(a[0].begin(), a[0].end()) > 0.9f * bound1);
  CHECK(*std::min_element(a[0].begin(), a[0].end()) < -0.9f * bound1);
  double mean = 0;
  for (float v : a[0]) mean += v;
  CHECK(std::fabs(mean / static_cast<double>(a[0].size())) < 0.05 * bound1);
  // Linear models start at zero.
  const auto lin = make({model_kind::linreg, 5, 0, 0}).init(42);
  CHECK(lin == std::vector<std::vector<float>>{std::vector<float>(5, 0.0f), std::vector<float>(1, 0.0f)});

  problem p = random_problem(s, m1.param_sizes(), 37, 8);
  p.params = a;
  const run_result r1 = run(m1, p), r2 = run(m2, p);
  CHECK(std::bit_cast<std::uint64_t>(r1.loss) == std::bit_cast<std::uint64_t>(r2.loss));
  for (std::size_t t = 0; t < r1.grads.size(); ++t) CHECK(same_bits(r1.grads[t], r2.grads[t]));
  const run_result again = run(m2, p);
  for (std::size_t t = 0; t < r1.grads.size(); ++t) CHECK(same_bits(again.grads[t], r2.grads[t]));
}

TEST_CASE("labels: check_labels() names the first label that does not suit the model") {
  const model mlp = make({model_kind::mlp, 4, 3, 3});
  CHECK_FALSE(mlp.check_labels(std::vector<float>{0, 1, 2, 2}).has_value());
  const auto out_of_range = mlp.check_labels(std::vector<float>{0, 3, 1});
  REQUIRE(out_of_range.has_value());
  CHECK(out_of_range->find("label 1 is 3") != std::string::npos);
  CHECK(mlp.check_labels(std::vector<float>{0.5f}).has_value());
  CHECK(mlp.check_labels(std::vector<float>{-1.0f}).has_value());
  const model lr = make({model_kind::logreg, 4, 0, 0});
  CHECK_FALSE(lr.check_labels(std::vector<float>{-1, 1, 1}).has_value());
  const auto zero = lr.check_labels(std::vector<float>{1, 0});
  REQUIRE(zero.has_value());
  CHECK(zero->find("label 1 is 0") != std::string::npos);
  const model lin = make({model_kind::linreg, 4, 0, 0});
  CHECK_FALSE(lin.check_labels(std::vector<float>{-3.5f, 7}).has_value());
  CHECK(lin.check_labels(std::vector<float>{NAN}).has_value());
}

TEST_CASE("create() errors name the offending value") {
  auto fails = [](const model_shape& s, const format& f, const std::string& needle) {
    const expected<model> m = model::create(s, precision_of(f, 1));
    REQUIRE_FALSE(m.has_value());
    CAPTURE(m.message());
    CHECK(m.message().find(needle) != std::string::npos);
  };
  fails({model_kind::mlp, 784, 0, 10}, formats::fp32, "hidden = 0");
  fails({model_kind::mlp, -1, 256, 10}, formats::fp32, "inputs = -1");
  fails({model_kind::logreg, -1, 0, 0}, formats::fp32, "inputs = -1");
  fails({model_kind::mlp, 784, 256, 1}, formats::fp32, "classes = 1");
  fails({model_kind::mlp, 784, 256, 10}, format{11, 20, 1023}, "11 exponent bits");
  fails({model_kind::mlp, 784, 256, 10}, format{8, 23, 100}, "bias 100");
  fails({model_kind::mlp, 784, 256, 10}, formats::e8m0fnu, "signed");
  // Hidden and classes do not matter to the linear models; narrow formats are fine.
  CHECK(model::create({model_kind::linreg, 3, 0, 0}, precision_of(formats::e4m3fn, 1)).has_value());
  CHECK(model::create({model_kind::mlp, 3, 2, 2}, precision_of(formats::tf32, 1)).has_value());
}

// ---- GEMM recipes (FP8 training) -----------------------------------------------------------------

namespace {

// x (rows x cols, row-major) transposed, for operands built by hand.
std::vector<float> transposed_floats(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> t(x.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[static_cast<std::size_t>(j) * rows + i] = x[static_cast<std::size_t>(i) * cols + j];
  return t;
}

// A B by gemm() of quantise()d operands in the layouts of A and B, fp32 out, as floats.
std::vector<float> scaled_product(const std::vector<float>& a, int M, int K, const std::vector<float>& b, int N,
                                  const gemm_recipe& r) {
  const auto qa = analysis::quantise(a, M, K, *r.inputs, r.scaling, true);
  const auto qb = analysis::quantise(b, K, N, *r.inputs, r.scaling, false);
  REQUIRE(qa.has_value());
  REQUIRE(qb.has_value());
  analysis::gemm_options o;
  o.acc = *r.acc;
  o.threads = 1;
  const auto d = analysis::gemm(*qa, *qb, {}, o);
  REQUIRE_MESSAGE(d.has_value(), d.message());
  std::vector<float> out(d->size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::bit_cast<float>((*d)[i]);
  return out;
}

}  // namespace

TEST_CASE("gemm recipes: the named ones are rows of the grammar; a bad part is named with what would do") {
  const gemm_recipe ds = parse_gemm_recipe("fp8-deepseek").value();
  CHECK(ds.inputs == formats::e4m3fn);
  CHECK(ds.scaling == analysis::scaling::tile_1x128);
  REQUIRE(ds.acc.has_value());
  CHECK(ds.acc->promote_every == 128);
  CHECK(ds.acc->kind == accumulator_kind::block_fma);
  const gemm_recipe fast = parse_gemm_recipe("fp8-fastaccum").value();
  CHECK(fast.scaling == analysis::scaling::per_tensor);
  CHECK(fast.acc->promote_every == 0);
  // A group scaling promotes a format accumulator every group (gemm.hpp's model_for_scaling).
  CHECK(parse_gemm_recipe("bf16/tile128/fp32").value().acc->promote_every == 128);
  // fp32 nearest-even without scaling is the model's default path.
  CHECK_FALSE(parse_gemm_recipe("weights").value().acc.has_value());
  CHECK_FALSE(parse_gemm_recipe("weights").value().inputs.has_value());
  CHECK_FALSE(parse_gemm_recipe("bf16/none/fp32").value().acc.has_value());
  for (const auto& named : gemm_recipes()) CHECK(parse_gemm_recipe(named.spec).has_value());
  const std::pair<const char*, const char*> bad[] = {
      {"bogus", "expected a name (weights, bf16, fp8-fastaccum"},
      {"e4m3fn/tile128", "FORMAT/SCALING/ACCUMULATOR"},
      {"e4m3fn/tile128/fp32/x", "FORMAT/SCALING/ACCUMULATOR"},
      {"q8/none/fp32", "unknown format 'q8'"},
      {"e4m3fn/tile64/fp32", "unknown scaling 'tile64'"},
      {"e4m3fn/none/h100-bogus", "h100-bogus"},
      {"bf16/none/h100-e4m3", "takes inputs"},
      {"e4m3fn/mx32/h100-e4m3-deepseek", "promotion interval"},
  };
  for (const auto& [spec_text, says] : bad) {
    const std::string spec = spec_text;
    CAPTURE(spec);
    const auto r = parse_gemm_recipe(spec);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.message().find(says) != std::string::npos);
  }
  // "weights" with a preset is checked against the policy's format when the model is made.
  const gemm_recipe w = parse_gemm_recipe("weights/tensor/h100-e4m3").value();
  CHECK(compute_precision_for(w, formats::e4m3fn, 1).has_value());
  const auto wrong = compute_precision_for(w, formats::bf16, 1);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.message().find("takes inputs") != std::string::npos);
}

TEST_CASE("FP8 recipes: the mlp's five GEMMs are gemm() of quantise()d operands, activations first, weights second") {
  const model_shape s{model_kind::mlp, 150, 140, 4};  // K of 150, 140 and the batch cross a 128-group
  const int R = 131;
  for (const std::string name : {"fp8-deepseek", "fp8-fastaccum", "e5m2/mx32/fp32"}) {
    CAPTURE(name);
    const gemm_recipe r = parse_gemm_recipe(name).value();
    const model m = model::create(s, compute_precision_for(r, formats::fp32, 2).value()).value();
    const problem p = random_problem(s, m.param_sizes(), R, 5);
    auto g = zeros_like(m.param_sizes());
    const double loss = m.loss_and_gradient(views(p.params), p.x, p.y, R, mutable_views(g));

    // By hand, model.hpp's steps with every product through scaled_product.
    const int I = s.inputs, H = s.hidden, C = s.classes;
    std::vector<float> z1 = scaled_product(p.x, R, I, transposed_floats(p.params[0], H, I), H, r), h(z1.size());
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < H; ++j) {
        float& z = z1[static_cast<std::size_t>(i) * H + j];
        z += p.params[1][static_cast<std::size_t>(j)];
        h[static_cast<std::size_t>(i) * H + j] = z > 0.0f ? z : 0.0f;
      }
    std::vector<float> z2 = scaled_product(h, R, H, transposed_floats(p.params[2], C, H), C, r), g2(z2.size());
    double want_loss = 0;
    for (int i = 0; i < R; ++i) {
      float* z = z2.data() + static_cast<std::size_t>(i) * C;
      for (int c = 0; c < C; ++c) z[c] += p.params[3][static_cast<std::size_t>(c)];
      const float mx = *std::max_element(z, z + C);
      float sum = 0;
      double sd = 0;
      for (int c = 0; c < C; ++c) {
        sum += std::exp(z[c] - mx);
        sd += std::exp(static_cast<double>(z[c]) - mx);
      }
      const int label = static_cast<int>(p.y[static_cast<std::size_t>(i)]);
      want_loss += static_cast<double>(mx) + std::log(sd) - z[label];
      for (int c = 0; c < C; ++c)
        g2[static_cast<std::size_t>(i) * C + c] =
            (std::exp(z[c] - mx) / sum - (c == label ? 1.0f : 0.0f)) / static_cast<float>(R);
    }
    CHECK(loss == want_loss / R);
    const std::vector<float> dw2 = scaled_product(transposed_floats(g2, R, C), C, R, h, H, r);
    std::vector<float> g1 = scaled_product(g2, R, C, p.params[2], H, r);
    for (std::size_t i = 0; i < g1.size(); ++i)
      if (!(z1[i] > 0.0f)) g1[i] = 0.0f;
    const std::vector<float> dw1 = scaled_product(transposed_floats(g1, R, H), H, R, p.x, I, r);
    CHECK(g[2] == dw2);
    CHECK(g[0] == dw1);
  }
}

TEST_CASE("the GEMM probe: one record per GEMM; without rounding both errors agree, with FP8 rounding dominates") {
  const model_shape s{model_kind::mlp, 300, 200, 10};
  const int R = 64;
  const problem p = random_problem(s, make(s).param_sizes(), R, 9);
  auto probe_with = [&](const char* recipe) {
    const model m = model::create(s, compute_precision_for(parse_gemm_recipe(recipe).value(), formats::fp32, 1).value()).value();
    auto g = zeros_like(m.param_sizes());
    gemm_probe probe{5, {}};
    m.loss_and_gradient(views(p.params), p.x, p.y, R, mutable_views(g), &probe);
    auto plain = zeros_like(m.param_sizes());
    m.loss_and_gradient(views(p.params), p.x, p.y, R, mutable_views(plain));
    CHECK(plain == g);  // probing changes nothing
    return probe.errors;
  };
  const auto fp32 = probe_with("weights");
  REQUIRE(fp32.size() == 5);
  const char* layers[] = {"fprop1", "fprop2", "wgrad2", "dgrad2", "wgrad1"};
  const int K[] = {300, 200, R, 10, R};
  for (int i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(fp32[static_cast<std::size_t>(i)].layer == layers[i]);
    CHECK(fp32[static_cast<std::size_t>(i)].K == K[i]);
    CHECK(fp32[static_cast<std::size_t>(i)].rows == 5);
    // fp32 operands are not rounded: both references are the same product; an fp32 chain of K
    // products errs by at most gamma_K(2^-24) normwise (well below 1e-4 here), and does err.
    CHECK(fp32[static_cast<std::size_t>(i)].normwise_original == fp32[static_cast<std::size_t>(i)].normwise_quantised);
    CHECK(fp32[static_cast<std::size_t>(i)].normwise_quantised < 1e-4);
  }
  CHECK(fp32[0].normwise_quantised > 0);
  const auto fp8 = probe_with("fp8-deepseek");
  REQUIRE(fp8.size() == 5);
  for (const gemm_error& e : fp8) {
    CAPTURE(e.layer);
    // e4m3fn's unit roundoff is 2^-4: rounding the operands costs percents; promotion keeps the
    // accumulation two orders below.
    CHECK(e.normwise_original > 0.005);
    CHECK(e.normwise_original < 0.2);
    CHECK(e.normwise_quantised < e.normwise_original / 50);
  }
  // Inputs of order 1e-4 lie below half e4m3fn's smallest subnormal (2^-10): unscaled, X rounds to
  // zero and so does fprop1's product (error 1); a scale per 1x128 tile keeps them.
  problem small = p;
  for (float& v : small.x) v *= 1e-4f;
  auto fprop1_error = [&](const char* recipe) {
    const model m = model::create(s, compute_precision_for(parse_gemm_recipe(recipe).value(), formats::fp32, 1).value()).value();
    auto g = zeros_like(m.param_sizes());
    gemm_probe probe{5, {}};
    m.loss_and_gradient(views(small.params), small.x, small.y, R, mutable_views(g), &probe);
    return probe.errors.front().normwise_original;
  };
  CHECK(fprop1_error("fp8-unscaled") == 1.0);
  CHECK(fprop1_error("fp8-deepseek") < 0.2);
}
