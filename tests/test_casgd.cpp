// CA-SGD (analysis/casgd/run.hpp): Table 3's recipes and slot parsing, the binary64 equivalence of
// CA-SGD and s steps of mini-batch SGD on the same samples (Devarakonda et al. 2026, Algorithm 1),
// one outer iteration of Recipe C against an independent float implementation, bit-identity across
// ranks' simulation choices and thread counts, Theorem 5.7's budget against the measured local
// error on random problems, and the data layer (losses, residuals, synthetic data, label errors
// with line numbers).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/casgd/run.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::casgd;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<double> flat(const rank_vectors& x) {
  std::vector<double> out;
  for (const auto& v : x) out.insert(out.end(), v.begin(), v.end());
  return out;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num) / std::sqrt(den);
}

// H outer iterations from zero; returns the flat weights.
std::vector<double> run(const glm_data& d, run_options o, int H) {
  const column_blocks data = partition(d, o.P, 0, o.P);
  auto comm = simulated_collective(o.P);
  rank_vectors x = zero_weights(data);
  for (int h = 0; h < H; ++h) x = outer_iteration(data, o, o.precision, h, x, *comm).x;
  return flat(x);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("fpemu_test_casgd_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("recipes A-I are Table 3's columns") {
  const slots c = *recipe('C');
  CHECK(c.describe() == "u_A=bf16 u_G=b u_r=b u_c=fp32 u_sigma=fp32 u_g=b u_AR_r=bf16 u_AR_G=fp32 u_x=fp32");
  CHECK(recipe('d')->describe() == "u_A=bf16 u_G=b u_r=b u_c=fp32 u_sigma=fp32 u_g=b u_AR_r=bf16 u_AR_G=bf16 u_x=fp32");
  CHECK(recipe('F')->describe() == "u_A=fp16 u_G=ha u_r=ha u_c=fp32 u_sigma=fp32 u_g=ha u_AR_r=fp16 u_AR_G=fp32 u_x=fp32");
  CHECK(recipe('G')->describe() == "u_A=fp32 u_G=t u_r=t u_c=tf32 u_sigma=fp32 u_g=t u_AR_r=fp32 u_AR_G=fp32 u_x=fp32");
  CHECK(recipe('I')->describe() == "u_A=bf16 u_G=b u_r=b u_c=bf16 u_sigma=bf16 u_g=b u_AR_r=bf16 u_AR_G=bf16 u_x=bf16");
  int count = 0;
  for (char l : recipe_letters) count += recipe(l).has_value();
  CHECK(count == 9);
  CHECK(contains(recipe('J').message(), "expected one of A B C D E F G H I"));
  CHECK(contains(parse_recipe("CC").message(), "'CC'"));

  // Equation 8: bf16 inputs with fp32 accumulation charge 2 u_bf16 + gamma_n(u_fp32).
  CHECK(higham_factor(c.G, 256) == doctest::Approx(2 * 0x1p-8 + gamma(256, 0x1p-24)).epsilon(1e-15));
  CHECK(higham_factor(recipe('F')->G, 256) == doctest::Approx(gamma(256, 0x1p-11)).epsilon(1e-15));
  CHECK(higham_factor(recipe('A')->G, 256) == doctest::Approx(gamma(256, 0x1p-24)).epsilon(1e-15));
  CHECK(std::isinf(gamma(4096, 0x1p-11)));
}

TEST_CASE("slot overrides: formats, kernels, presets and their errors") {
  slots s = *recipe('C');
  s = *with_slot(s, "u_c=fp16");
  CHECK(s.c.name() == "fp16");
  s = *with_slot(s, "x=fp64");
  CHECK(s.x.is_binary64());
  s = *with_slot(s, "u_G=fp16,fp16,fp32");
  CHECK(s.G.input.name() == "fp16");
  CHECK(s.G.acc->acc == formats::fp16);
  CHECK(s.G.output.name() == "fp32");
  s = *with_slot(s, "u_r=e4m3fn,h100-e4m3");
  CHECK(s.r.acc->kind == accumulator_kind::block_fma);
  s = *with_slot(s, "u_g=fp64");
  CHECK(!s.g.acc.has_value());
  CHECK(contains(with_slot(s, "u_q=fp32").message(), "unknown precision slot 'u_q'"));
  CHECK(contains(with_slot(s, "u_c").message(), "NAME=PRECISION"));
  CHECK(contains(with_slot(s, "u_c=bogus").message(), "u_c:"));
  CHECK(contains(with_slot(s, "u_G=bf16,nonsense").message(), "accumulator 'nonsense'"));
  CHECK(contains(with_slot(s, "u_G=a,b,c,d").message(), "more than three fields"));
  run_options o;
  o.precision = *with_slot(*recipe('C'), "u_G=fp64,fp32");
  CHECK(contains(check(o, 100, 10).value_or(""), "needs a format for its inputs"));
}

TEST_CASE("round_to and fma_in agree with the core, fast paths included") {
  int cases = 0;
  for (const format& f : {formats::fp32, formats::bf16, formats::fp16, formats::e4m3fn, formats::tf32}) {
    const casgd::precision p = of(f);
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const double a = std::ldexp(static_cast<double>(random_bits(7, 1, i) >> 11), -53) * 8 - 4;
      const double b = std::ldexp(static_cast<double>(random_bits(7, 2, i) >> 11), -53) * 8 - 4;
      // Operands in the format (as the engine's are), then the fused operation.
      const double fa = round_to(p, a), fb = round_to(p, b), fc = round_to(p, a * b);
      CHECK(fa == to_double(f, from(f, a).code));
      const double expect = to_double(f, round_exact(f, exact_fma(unpack(fa), unpack(fb), unpack(fc), round_mode::nearest_even), {}, 0).code);
      const double got = fma_in(p, fa, fb, fc);
      if (!(got == expect || (std::isnan(got) && std::isnan(expect)))) {
        FAIL_CHECK(fpemu::to_string(f) << " fma(" << fa << ", " << fb << ", " << fc << ") = " << got << ", core " << expect);
      }
      ++cases;
    }
  }
  CHECK(cases == 100000);
  CHECK(fma_in(binary64, 0.1, 3.0, 1.0) == std::fma(0.1, 3.0, 1.0));
}

TEST_CASE("binary64 CA-SGD equals s steps of mini-batch SGD on the same samples to 1e-12") {
  int cases = 0;
  for (loss_kind l : {loss_kind::logistic, loss_kind::linear, loss_kind::poisson}) {
    const glm_data d = synthetic(600, 24, l, 3);
    for (int s : {2, 5, 16})
      for (int P : {1, 3, 4}) {
        run_options o;
        o.loss = l;
        o.b = 4;
        o.s = s;
        o.P = P;
        o.eta = l == loss_kind::poisson ? 0.05 : 0.5;
        o.seed = 11;
        const int H = 6;
        const std::vector<double> ca = run(d, o, H);
        run_options sgd = o;
        sgd.s = 1;
        const std::vector<double> ref = run(d, sgd, H * s);
        const double rel = relative_difference(ca, ref);
        CHECK_MESSAGE(rel <= 1e-12, to_string(l) << " s=" << s << " P=" << P << ": relative difference " << rel);
        CHECK(relative_difference(ref, std::vector<double>(ref.size(), 0.0)) > 0);  // it moved
        ++cases;
      }
  }
  CHECK(cases == 27);
}

TEST_CASE("sampling: i.i.d. rows keyed by (seed, draw); CA-SGD and SGD draw the same rows") {
  const std::vector<std::int64_t> a = sample_rows(5, 1000, 64, 32), b = sample_rows(5, 1000, 0, 96);
  CHECK(std::equal(a.begin(), a.end(), b.begin() + 64));
  std::vector<int> hits(10, 0);
  const std::vector<std::int64_t> many = sample_rows(9, 10, 0, 100000);
  for (std::int64_t r : many) {
    REQUIRE((r >= 0 && r < 10));
    ++hits[static_cast<std::size_t>(r)];
  }
  for (int h : hits) CHECK(std::abs(h - 10000) < 600);  // 6 sigma
}

TEST_CASE("one Recipe C outer iteration equals an independent float implementation, bit for bit") {
  const glm_data d = synthetic(300, 20, loss_kind::logistic, 5);
  run_options o;
  o.precision = *recipe('C');
  o.b = 3;
  o.s = 4;
  o.P = 1;
  o.eta = 0.7;
  o.seed = 2;
  const column_blocks data = partition(d, 1, 0, 1);
  auto comm = simulated_collective(1);
  // Start from a non-zero x in fp32.
  rank_vectors x = zero_weights(data);
  for (std::size_t c = 0; c < x[0].size(); ++c) x[0][c] = static_cast<float>(0.3 * std::sin(static_cast<double>(c) + 1));
  const int h = 3;
  const outer_result got = outer_iteration(data, o, o.precision, h, x, *comm);

  const int b = o.b, s = o.s, sb = b * s, n = d.n;
  const std::vector<std::int64_t> rows = sample_rows(o.seed, d.m, static_cast<std::int64_t>(h) * sb, sb);
  auto bf16 = [](double v) { return static_cast<float>(to_double(formats::bf16, from(formats::bf16, v).code)); };
  std::vector<float> Y(static_cast<std::size_t>(sb * n));
  for (int k = 0; k < sb; ++k)
    for (int c = 0; c < n; ++c) Y[static_cast<std::size_t>(k * n + c)] = bf16(d.A[static_cast<std::size_t>(rows[static_cast<std::size_t>(k)] * n + c)]);
  std::vector<float> r(static_cast<std::size_t>(sb)), G(static_cast<std::size_t>(sb * sb));
  for (int k = 0; k < sb; ++k) {
    float acc = 0;
    for (int c = 0; c < n; ++c) acc = std::fma(Y[static_cast<std::size_t>(k * n + c)], bf16(x[0][static_cast<std::size_t>(c)]), acc);
    r[static_cast<std::size_t>(k)] = bf16(acc);  // the bf16 margin AllReduce (P = 1: its input cast)
    for (int j = 0; j < sb; ++j) {
      float g = 0;
      for (int c = 0; c < n; ++c) g = std::fma(Y[static_cast<std::size_t>(k * n + c)], Y[static_cast<std::size_t>(j * n + c)], g);
      G[static_cast<std::size_t>(k * sb + j)] = g;
    }
  }
  const double alpha = o.eta / b;
  std::vector<float> delta(static_cast<std::size_t>(sb));
  for (int k = 0; k < sb; ++k) {
    float z = r[static_cast<std::size_t>(k)];
    const int j = k / b;
    if (j > 0) {
      float t = 0;
      for (int c = 0; c < j * b; ++c) t = std::fma(G[static_cast<std::size_t>(k * sb + c)], delta[static_cast<std::size_t>(c)], t);
      // z + alpha t with alpha a double: exact, then one rounding to fp32.
      z = static_cast<float>(to_double(formats::fp32, round_exact(formats::fp32, exact_fma(unpack(alpha), unpack(t), unpack(z), round_mode::nearest_even), {}, 0).code));
    }
    delta[static_cast<std::size_t>(k)] = static_cast<float>(residual(loss_kind::logistic, z, d.y[static_cast<std::size_t>(rows[static_cast<std::size_t>(k)])]));
  }
  CHECK(std::equal(delta.begin(), delta.end(), got.delta.begin(), [](float a, double b2) { return static_cast<double>(a) == b2; }));
  int same = 0;
  for (int c = 0; c < n; ++c) {
    float g = 0;
    for (int k = 0; k < sb; ++k) g = std::fma(Y[static_cast<std::size_t>(k * n + c)], bf16(delta[static_cast<std::size_t>(k)]), g);
    const double want = to_double(formats::fp32, round_exact(formats::fp32, exact_fma(unpack(alpha), unpack(g), unpack(x[0][static_cast<std::size_t>(c)]), round_mode::nearest_even), {}, 0).code);
    same += got.x[0][static_cast<std::size_t>(c)] == want;
  }
  CHECK(same == n);
}

TEST_CASE("results do not depend on the thread count; P changes only the rounding, not the math") {
  const glm_data d = synthetic(400, 32, loss_kind::logistic, 8);
  run_options o;
  o.precision = *recipe('D');
  o.b = 4;
  o.s = 8;
  o.P = 4;
  o.eta = 0.5;
  o.threads = 1;
  const std::vector<double> one = run(d, o, 5);
  o.threads = 3;
  CHECK(run(d, o, 5) == one);
  for (allreduce_algorithm a : {allreduce_algorithm::ring, allreduce_algorithm::recursive_doubling,
                                allreduce_algorithm::tree, allreduce_algorithm::sequential}) {
    o.algorithm = a;
    const std::vector<double> w = run(d, o, 5);
    CHECK(relative_difference(w, one) < 0.05);  // bf16 AllReduces: close, and
  }
  o.precision = all_binary64();
  o.algorithm = allreduce_algorithm::ring;
  const std::vector<double> p4 = run(d, o, 5);
  o.P = 1;
  CHECK(relative_difference(run(d, o, 5), p4) < 1e-13);
}

TEST_CASE("Theorem 5.7: measured local error <= budget on random problems, every recipe") {
  int checked = 0, hypothesis_failed = 0;
  for (std::uint64_t trial = 0; trial < 24; ++trial) {
    const loss_kind l = trial % 2 ? loss_kind::linear : loss_kind::logistic;
    const int n = 8 + static_cast<int>(random_bits(trial, 1, 0) % 24);
    const glm_data d = synthetic(200, n, l, trial + 100);
    run_options o;
    o.loss = l;
    o.b = 1 + static_cast<int>(random_bits(trial, 1, 1) % 4);
    o.s = 1 + static_cast<int>(random_bits(trial, 1, 2) % 6);
    o.P = 1 + static_cast<int>(random_bits(trial, 1, 3) % 4);
    o.eta = 0.1 + 0.9 * static_cast<double>(random_bits(trial, 1, 4) % 100) / 100;
    o.seed = trial;
    o.algorithm = static_cast<allreduce_algorithm>(trial % 4);
    const column_blocks data = partition(d, o.P, 0, o.P);
    auto comm = simulated_collective(o.P);
    for (char letter : recipe_letters) {
      o.precision = *recipe(letter);
      // A few outer iterations in the recipe's precision first, so x is not zero.
      rank_vectors x = zero_weights(data);
      for (int h = 0; h < 3; ++h) x = outer_iteration(data, o, o.precision, h, x, *comm).x;
      const local_error e = *local_error_at(data, o, 3, x, cp_worst_case(o.P));
      if (!e.terms.valid) {
        ++hypothesis_failed;
        continue;
      }
      CHECK_MESSAGE(e.measured <= e.terms.bound, "recipe " << letter << " trial " << trial << ": measured " << e.measured
                                                            << " > bound " << e.terms.bound);
      CHECK(e.measured > 0);  // the recipes round somewhere
      ++checked;
    }
  }
  MESSAGE("budget checked on " << checked << " (recipe, problem) pairs; hypothesis failed on " << hypothesis_failed);
  CHECK(checked >= 150);
}

TEST_CASE("the budget refuses Poisson and runs only with every rank local") {
  const glm_data d = synthetic(100, 8, loss_kind::poisson, 1);
  run_options o;
  o.loss = loss_kind::poisson;
  o.precision = *recipe('C');
  o.b = 2;
  o.s = 2;
  const column_blocks data = partition(d, 1, 0, 1);
  CHECK(contains(local_error_at(data, o, 0, zero_weights(data), 2.4).message(), "Lipschitz"));
  const column_blocks part = partition(d, 2, 1, 1);
  o.loss = loss_kind::logistic;
  o.P = 2;
  CHECK(contains(local_error_at(part, o, 0, zero_weights(part), 2.4).message(), "simulated mode"));
}

TEST_CASE("losses and residuals: delta = -dL/dr, Lipschitz constants, overflow-free logistic") {
  int cases = 0;
  for (loss_kind l : {loss_kind::logistic, loss_kind::linear, loss_kind::poisson})
    for (double r : {-3.0, -0.5, 0.0, 0.7, 2.5})
      for (double y : {-1.0, 1.0, 2.0}) {
        if (l == loss_kind::poisson && y < 0) continue;
        const double hstep = 1e-5;
        const double numeric = -(loss_value(l, r + hstep, y) - loss_value(l, r - hstep, y)) / (2 * hstep);
        CHECK(residual(l, r, y) == doctest::Approx(numeric).epsilon(1e-7));
        ++cases;
      }
  CHECK(cases == 40);
  CHECK(loss_value(loss_kind::logistic, 800, -1) == doctest::Approx(800));
  CHECK(loss_value(loss_kind::logistic, 800, 1) == 0);
  CHECK(residual(loss_kind::logistic, -800, 1) == 1);
  CHECK(lipschitz(loss_kind::logistic) == 0.25);
  CHECK(lipschitz(loss_kind::linear) == 1);
  CHECK(std::isinf(lipschitz(loss_kind::poisson)));
  CHECK(contains(parse_loss("hinge").message(), "expected logistic, linear or poisson"));
}

TEST_CASE("synthetic data: deterministic, unit rows, labels of the loss; the feature matrix is shared") {
  const glm_data a = synthetic(500, 40, loss_kind::logistic, 4), b = synthetic(500, 40, loss_kind::poisson, 4);
  CHECK(a.A == b.A);
  CHECK(a.A == synthetic(500, 40, loss_kind::logistic, 4).A);
  CHECK(a.A != synthetic(500, 40, loss_kind::logistic, 5).A);
  int rows = 0;
  for (int i = 0; i < a.m; ++i) {
    double ss = 0;
    for (int j = 0; j < a.n; ++j) ss += a.A[static_cast<std::size_t>(i * a.n + j)] * a.A[static_cast<std::size_t>(i * a.n + j)];
    CHECK(ss == doctest::Approx(1).epsilon(1e-14));
    ++rows;
  }
  CHECK(rows == 500);
  int positive = 0;
  for (double y : a.y) {
    CHECK((y == 1 || y == -1));
    positive += y == 1;
  }
  CHECK((positive > 150 && positive < 350));
  for (double y : b.y) CHECK((y >= 0 && y == std::floor(y)));
  CHECK(contains(load_data("synth:10", loss_kind::linear, 1).message(), "synth:M,N"));
  CHECK(contains(load_data("synth:0,5", loss_kind::linear, 1).message(), "at least 1"));
}

TEST_CASE("data files: heart_scale, CSV, and bad files with the line number") {
  auto heart = load_data("heart_scale", loss_kind::logistic, 1);
  REQUIRE_MESSAGE(heart.has_value(), (heart ? "" : heart.message()));
  CHECK(heart->m == 270);
  CHECK(heart->n == 13);
  const std::string poisson_msg = load_data("heart_scale", loss_kind::poisson, 1).message();
  CHECK(contains(poisson_msg, "heart_scale:2: label -1 is not valid for poisson regression"));

  const std::string bad_label = write_temp("labels.svm", "1 1:0.5\n-1 2:1\n\n0 1:3\n");
  CHECK(contains(load_data(bad_label, loss_kind::logistic, 1).message(), ":4: label 0 is not valid for logistic"));
  const std::string malformed = write_temp("malformed.svm", "1 1:0.5\n1 2:x\n");
  CHECK(contains(load_data(malformed, loss_kind::logistic, 1).message(), ":2:"));
  const std::string empty = write_temp("empty.svm", "# nothing\n\n");
  CHECK(contains(load_data(empty, loss_kind::linear, 1).message(), "no data rows"));
  const std::string csv = write_temp("ok.csv", "y,a,b\n3,3,4\n0.5,0,2\n");
  auto c = load_data(csv, loss_kind::linear, 1);
  REQUIRE_MESSAGE(c.has_value(), (c ? "" : c.message()));
  CHECK(c->A == std::vector<double>{0.6, 0.8, 0, 1});
  CHECK(c->y == std::vector<double>{3, 0.5});
  const std::string csv_bad = write_temp("bad.csv", "y,a\n1.5,3\n");
  CHECK(contains(load_data(csv_bad, loss_kind::poisson, 1).message(), ":2: label 1.5 is not valid for poisson"));
  CHECK(contains(load_data("/nonexistent/file.svm", loss_kind::linear, 1).message(), "no such file"));
  for (const std::string& p : {bad_label, malformed, empty, csv, csv_bad}) std::filesystem::remove(p);
}

TEST_CASE("options are checked with their ranges") {
  run_options o;
  CHECK(!check(o, 100, 10).has_value());
  o.P = 11;
  CHECK(contains(check(o, 100, 10).value_or(""), "--P 11 is out of range (1..n = 10"));
  o.P = 1;
  o.eta = std::nan("");
  CHECK(contains(check(o, 100, 10).value_or(""), "--eta"));
  o.eta = 0.5;
  o.s = 1000;
  o.b = 100;
  CHECK(contains(check(o, 100, 10).value_or(""), "s*b = 100000"));
}
