// analysis/casgd_bound: Theorem 5.7 of Devarakonda et al. 2026 (the local error budget of one
// CA-SGD outer iteration) against a dense reference, its structure (s = 1, linearity of each E_* in
// its own unit roundoff), and the paper's Recipe C figures; Theorem 5.9's radius against a direct
// evaluation of its Equation 9 and a search over chi, and the GLM constants it needs
// (analysis/casgd/convergence) against an SVD least-squares solve and the gradient.
//
// The reference builds every matrix explicitly with plain loops (G, the mask of G_L, H_L, the
// inverse of I - L_sigma alpha |G_L| by LU) and takes 2-norms from Eigen's JacobiSVD, so it shares
// neither the block substitutions, the prefix sums nor the Lanczos iteration of the
// implementation.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "analysis/casgd/bound.hpp"
#include "analysis/casgd/convergence.hpp"
#include "analysis/casgd/glm.hpp"
#include "analysis/casgd/precision.hpp"
#include "fpemu/random.hpp"

namespace fc = fpemu::casgd;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// A standard normal from Philox bits (Box-Muller on two 53-bit uniforms in (0, 1)).
double normal(std::uint64_t seed, std::uint32_t stream, std::uint64_t i) {
  const std::uint64_t r0 = fpemu::random_bits(seed, stream, 2 * i), r1 = fpemu::random_bits(seed, stream, 2 * i + 1);
  const double u0 = (static_cast<double>(r0 >> 11) + 0.5) * 0x1p-53;
  const double u1 = static_cast<double>(r1 >> 11) * 0x1p-53;
  return std::sqrt(-2 * std::log(u0)) * std::cos(2 * std::numbers::pi * u1);
}

struct problem {
  int b = 0, s = 0, n = 0;
  std::vector<double> Y, d, x, x_next;
  fc::bound_inputs in;

  problem() = default;
  problem(const problem&) = delete;  // `in` would still view the original's vectors
  problem(problem&&) = default;      // a moved vector keeps its buffer, so `in` stays valid

  // Points `in` at the vectors; call again after resizing or reassigning one.
  void bind() {
    in.b = b;
    in.s = s;
    in.n = n;
    in.Y = Y;
    in.d = d;
    in.x = x;
    in.x_next = x_next;
  }
};

// Random data with N(0,1) entries (nothing normalised: the reference must not rely on the
// assumptions), some nonzero value in every slot, and a step large enough that K_s is well above 1.
problem random_problem(int b, int s, int n, std::uint64_t seed) {
  problem p;
  p.b = b;
  p.s = s;
  p.n = n;
  const int sb = s * b;
  for (int i = 0; i < sb * n; ++i) p.Y.push_back(normal(seed, 0, static_cast<std::uint64_t>(i)));
  for (int i = 0; i < sb; ++i) p.d.push_back(std::tanh(normal(seed, 1, static_cast<std::uint64_t>(i))));
  for (int i = 0; i < n; ++i) p.x.push_back(normal(seed, 2, static_cast<std::uint64_t>(i)));
  for (int i = 0; i < n; ++i) p.x_next.push_back(normal(seed, 3, static_cast<std::uint64_t>(i)));
  fc::bound_inputs& in = p.in;
  in.alpha = 0.4;
  in.L_sigma = 0.75;
  in.D_delta = 1.5;
  in.C_delta = 1.25;
  in.C_P = 9.6;
  in.u_A = 0x1p-8;
  in.u_c = 0x1p-24;
  in.u_sigma = 0x1p-11;
  in.u_AR_r = 0x1p-8;
  in.u_AR_G = 0x1p-24;
  in.u_x = 0x1p-24;
  in.gamma_r = fc::gamma(n, 0x1p-11);
  in.gamma_G = fc::gamma(n, 0x1p-8);
  in.gamma_g = fc::gamma(sb, 0x1p-24);
  in.gamma_c = fc::gamma((s - 1) * b, 0x1p-24);
  p.bind();
  return p;
}

// Zero padding to a square leaves the singular values as they are and lets the two-sided Jacobi
// SVD run without its QR preconditioner.
double norm2(const MatrixXd& m) {
  const Eigen::Index k = std::max(m.rows(), m.cols());
  MatrixXd square = MatrixXd::Zero(k, k);
  square.topLeftCorner(m.rows(), m.cols()) = m;
  return Eigen::JacobiSVD<MatrixXd, Eigen::NoQRPreconditioner>(square).singularValues()(0);
}

struct reference {
  double K_s = 0, norm_Y = 0, norm_H_L = 0, T_g = 0, T_r = 0, T_G = 0, T_c = 0, norm_Yt_d = 0;
};

// Definitions of Section 5.2 written out entry by entry.
reference dense_reference(const fc::bound_inputs& in) {
  const int b = in.b, s = in.s, sb = s * b, n = in.n;
  MatrixXd Y(sb, n);
  for (int i = 0; i < sb; ++i)
    for (int k = 0; k < n; ++k) Y(i, k) = in.Y[static_cast<std::size_t>(i * n + k)];
  MatrixXd absGL = MatrixXd::Zero(sb, sb), HL = MatrixXd::Zero(sb, sb), G(sb, sb);
  for (int r = 0; r < sb; ++r)
    for (int c = 0; c < sb; ++c) {
      double g = 0, h = 0;
      for (int k = 0; k < n; ++k) {
        g += Y(r, k) * Y(c, k);
        h += std::fabs(Y(r, k)) * std::fabs(Y(c, k));
      }
      G(r, c) = g;
      if (c / b < r / b) {  // strictly below the diagonal block of r
        absGL(r, c) = std::fabs(g);
        HL(r, c) = h;
      }
    }
  const MatrixXd I = MatrixXd::Identity(sb, sb);
  reference ref;
  ref.K_s = norm2((I - in.L_sigma * in.alpha * absGL).partialPivLu().inverse());
  ref.norm_Y = norm2(Y);
  ref.norm_H_L = norm2(HL);
  VectorXd d(sb), abs_d(sb), abs_x(n);
  for (int i = 0; i < sb; ++i) d(i) = in.d[static_cast<std::size_t>(i)];
  for (int k = 0; k < n; ++k) abs_x(k) = std::fabs(in.x[static_cast<std::size_t>(k)]);
  abs_d = d.cwiseAbs();
  const MatrixXd absY = Y.cwiseAbs();
  ref.T_g = (absY.transpose() * abs_d).norm();
  ref.T_r = (absY * abs_x).norm();
  ref.T_G = (HL * abs_d).norm();
  double sum = 0;
  for (int j = 1; j < s; ++j) {
    double frob2 = 0, d2 = 0;
    for (int r = j * b; r < (j + 1) * b; ++r)
      for (int c = 0; c < j * b; ++c) frob2 += G(r, c) * G(r, c);
    for (int i = 0; i < j * b; ++i) d2 += d(i) * d(i);
    const double term = j * b * std::sqrt(frob2) * std::sqrt(d2);
    sum += term * term;
  }
  ref.T_c = std::sqrt(sum);
  ref.norm_Yt_d = (Y.transpose() * d).norm();
  return ref;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

constexpr int slot_of(fc::slot s) { return static_cast<int>(s); }

// Equation 6 from the reference's quantities.
std::array<double, 9> equation_6(const fc::bound_inputs& in, const reference& r, double norm_x_next) {
  const double a = in.alpha, K = r.K_s, L = in.L_sigma, nY = r.norm_Y;
  std::array<double, 9> E{};
  E[slot_of(fc::slot::A)] = a * nY * K * L * in.u_A * r.T_r + 2 * a * a * nY * K * L * in.u_A * r.T_G + a * in.u_A * r.T_g;
  E[slot_of(fc::slot::r)] = a * nY * K * L * in.gamma_r * r.T_r;
  E[slot_of(fc::slot::AR_r)] = a * nY * K * L * in.C_P * in.u_AR_r * r.T_r;
  E[slot_of(fc::slot::G)] = a * a * nY * K * L * in.gamma_G * r.T_G;
  E[slot_of(fc::slot::AR_G)] = a * a * nY * K * L * in.C_P * in.u_AR_G * r.T_G;
  E[slot_of(fc::slot::c)] = a * nY * K * L * in.u_c * r.T_r + 2 * a * a * nY * K * L * in.u_c * r.T_G +
                            a * a * nY * K * L * in.u_c * r.T_c;
  E[slot_of(fc::slot::sigma)] = a * nY * K * in.C_delta * in.u_sigma * in.D_delta * std::sqrt(in.s * in.b);
  E[slot_of(fc::slot::g)] = a * in.gamma_g * r.T_g;
  E[slot_of(fc::slot::x)] = in.u_x * (norm_x_next + a * r.norm_Yt_d);
  return E;
}

bool close(double got, double want, double rel = 1e-9) {
  return std::fabs(got - want) <= rel * std::fabs(want);
}

}  // namespace

TEST_CASE("theorem_5_7: K_s, ||Y||_2, ||H_L||_2, T_* and E_* == dense reference (LU inverse, JacobiSVD)") {
  struct shape {
    int b, s, n;
  };
  // sb > n, sb < n (the two ways ||Y||_2 is found), b = 1, and one block per step of s.
  const shape shapes[] = {{2, 3, 5}, {4, 2, 11}, {3, 5, 7}, {1, 6, 4}, {2, 8, 30}};
  int cases = 0;
  for (const shape& sh : shapes) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      problem p = random_problem(sh.b, sh.s, sh.n, seed);
      const fc::bound_terms t = fc::theorem_5_7(p.in);
      const reference r = dense_reference(p.in);
      INFO("b=" << sh.b << " s=" << sh.s << " n=" << sh.n << " seed=" << seed);
      CHECK(r.K_s > 1.5);  // the Neumann series is exercised, not just the identity
      CHECK(close(t.K_s, r.K_s));
      CHECK(close(t.norm_Y, r.norm_Y));
      CHECK(close(t.norm_H_L, r.norm_H_L));
      CHECK(close(t.T_g, r.T_g));
      CHECK(close(t.T_r, r.T_r));
      CHECK(close(t.T_G, r.T_G));
      CHECK(close(t.T_c, r.T_c));
      const std::array<double, 9> E = equation_6(p.in, r, norm(p.x_next));
      double sum = 0;
      for (int k = 0; k < 9; ++k) {
        INFO("slot " << fc::to_string(static_cast<fc::slot>(k)));
        CHECK(E[static_cast<std::size_t>(k)] > 0);
        CHECK(close(t.E[static_cast<std::size_t>(k)], E[static_cast<std::size_t>(k)]));
        sum += E[static_cast<std::size_t>(k)];
      }
      CHECK(close(t.sum, sum));
      const fc::bound_inputs& in = p.in;
      const double omega = std::max({in.u_A, in.gamma_r, in.gamma_G, in.gamma_c, in.gamma_g, in.C_P * in.u_AR_r,
                                     in.C_P * in.u_AR_G, in.u_sigma, in.u_x});
      const double tau = r.K_s * in.L_sigma * in.alpha * (2 * in.u_A + in.gamma_G + in.C_P * in.u_AR_G) * r.norm_H_L;
      CHECK(t.omega == omega);
      CHECK(close(t.tau_G, tau));
      CHECK(close(t.Omega, std::max(omega, tau)));
      CHECK(close(t.bound, (1 + std::max(omega, tau)) * sum));
      CHECK(t.valid == (omega <= 0.5 && tau <= 0.5));
      ++cases;
    }
  }
  CHECK(cases == 15);
}

TEST_CASE("theorem_5_7: s = 1 has no block-lower part: K_s = 1, ||H_L||_2 = T_G = T_c = 0") {
  int cases = 0;
  for (int b : {1, 4, 9}) {
    problem p = random_problem(b, 1, 6, 7);
    const fc::bound_terms t = fc::theorem_5_7(p.in);
    CHECK(t.K_s == doctest::Approx(1).epsilon(1e-14));
    CHECK(t.norm_H_L == 0);
    CHECK(t.T_G == 0);
    CHECK(t.T_c == 0);
    CHECK(t.E[slot_of(fc::slot::G)] == 0);
    CHECK(t.E[slot_of(fc::slot::AR_G)] == 0);
    CHECK(t.tau_G == 0);
    CHECK(close(t.norm_Y, dense_reference(p.in).norm_Y));
    ++cases;
  }
  CHECK(cases == 3);
}

TEST_CASE("theorem_5_7: each E_* is linear in its own roundoff and zero without it") {
  // The roundoff (or Higham factor) that each E_* carries, in slot order.
  using field = double fc::bound_inputs::*;
  const std::array<field, 9> own{&fc::bound_inputs::u_A,    &fc::bound_inputs::gamma_G, &fc::bound_inputs::gamma_r,
                                 &fc::bound_inputs::u_c,    &fc::bound_inputs::u_sigma, &fc::bound_inputs::gamma_g,
                                 &fc::bound_inputs::u_AR_r, &fc::bound_inputs::u_AR_G,  &fc::bound_inputs::u_x};
  const problem base = random_problem(3, 4, 9, 11);
  const fc::bound_terms t0 = fc::theorem_5_7(base.in);
  int cases = 0;
  for (int k = 0; k < 9; ++k) {
    INFO("slot " << fc::to_string(static_cast<fc::slot>(k)));
    REQUIRE(t0.E[static_cast<std::size_t>(k)] > 0);
    for (double factor : {2.0, 0.0}) {
      fc::bound_inputs in = base.in;
      in.*own[static_cast<std::size_t>(k)] *= factor;
      const fc::bound_terms t = fc::theorem_5_7(in);
      // Scaling by 2 (or 0) commutes exactly with every rounding of the products, so equality is
      // exact, and the other eight terms are bit-for-bit unchanged.
      for (int j = 0; j < 9; ++j) {
        const auto jj = static_cast<std::size_t>(j);
        CHECK(t.E[jj] == (j == k ? factor * t0.E[jj] : t0.E[jj]));
      }
      ++cases;
    }
  }
  CHECK(cases == 18);
}

TEST_CASE("theorem_5_7: a Higham factor outside its domain gives an infinite term, never 0 or NaN") {
  problem p = random_problem(2, 3, 5, 5);
  p.x.assign(p.x.size(), 0.0);  // T_r = 0: the term has a zero source and an infinite factor
  p.bind();
  p.in.gamma_r = fc::gamma(1L << 20, 0x1p-8);
  REQUIRE(std::isinf(p.in.gamma_r));
  const fc::bound_terms t = fc::theorem_5_7(p.in);
  CHECK(t.T_r == 0);
  CHECK(std::isinf(t.E[slot_of(fc::slot::r)]));
  CHECK(std::isinf(t.bound));
  CHECK(!t.valid);
}

// The Recipe C neighborhood of Section 5.3: (b, s, P, n_loc, eta) = (32, 64, 16, 256, 0.5), logistic
// (L_sigma = 1/4, D_delta = 1), C(P) = 2.4 P, on 2048 x 4096 N(0,1) rows normalised to unit norm
// (Assumption 5.1), x with ||x||_2 about 1, d the logistic residual y (1 - sigma(y Y x)) for labels
// +-1, x^(s) = x + alpha Y^T d. This run gives (x86-64, GCC 12, debugoptimized, Eigen 3.4):
//   Omega_C = omega = C(16) u_AR_r = 38.4 * 2^-8 = 0.15, tau_G = 0.0529,
//   K_s = 1.0512, ||Y||_2 = 1.7064, ||H_L||_2 = 823.4,
//   T_g = 816.9, T_r = 29.04, T_G = 1.683e4, T_c = 6.504e5,
//   E_uA 6.50e-2 (alpha u_A T_g 4.99e-2 of it), E_uG 1.44e-2, E_ur 1.59e-3, E_uc 4.48e-6,
//   E_usigma 7.56e-8, E_ug 1.013e-1, E_uAR_r 3.05e-2, E_uAR_G 4.22e-6, E_ux 8.53e-8,
//   S_C = sum 0.2129, rho_C = (1 + Omega_C) S_C = 0.2448,
// theorem_5_7 taking 1.1 s, 0.9 s of it the Gram product (sb^2 n / 2 multiply-adds).
// The first-order terms are led by the bf16 gradient GEMV (gamma_g = 2 u_bf16 + gamma_2048(u_fp32))
// and bf16 storage of Y, not by the margin AllReduce that sets Omega_C.
TEST_CASE("theorem_5_7: Recipe C at (b, s, P, n_loc, eta) = (32, 64, 16, 256, 0.5): Omega_C <= 0.16, hypothesis holds") {
  constexpr int b = 32, s = 64, P = 16, n_loc = 256, sb = s * b, n = P * n_loc;
  constexpr double eta = 0.5;
  const auto rc = fc::recipe('C');
  REQUIRE(rc);
  const double u_bf16 = 0x1p-8, u_fp32 = 0x1p-24;
  const double C_P = 2.4 * P;
  CHECK(C_P * u_bf16 == doctest::Approx(0.15));  // the paper's C(16) u_16 ~ 1.5e-1

  problem p;
  p.b = b;
  p.s = s;
  p.n = n;
  p.Y.resize(static_cast<std::size_t>(sb) * n);
  for (int i = 0; i < sb; ++i) {
    double* row = p.Y.data() + static_cast<std::size_t>(i) * n;
    double r2 = 0;
    for (int k = 0; k < n; ++k) {
      row[k] = normal(42, 0, static_cast<std::uint64_t>(i) * n + k);
      r2 += row[k] * row[k];
    }
    for (int k = 0; k < n; ++k) row[k] /= std::sqrt(r2);
  }
  for (int k = 0; k < n; ++k) p.x.push_back(normal(42, 1, static_cast<std::uint64_t>(k)) / std::sqrt(n));
  const double alpha = eta / b;
  for (int i = 0; i < sb; ++i) {
    double margin = 0;
    for (int k = 0; k < n; ++k) margin += p.Y[static_cast<std::size_t>(i) * n + k] * p.x[static_cast<std::size_t>(k)];
    const double y = (fpemu::random_bits(42, 2, static_cast<std::uint64_t>(i)) & 1) ? 1.0 : -1.0;
    p.d.push_back(y * (1 - 1 / (1 + std::exp(-y * margin))));
  }
  p.x_next = p.x;
  for (int i = 0; i < sb; ++i)
    for (int k = 0; k < n; ++k)
      p.x_next[static_cast<std::size_t>(k)] += alpha * p.Y[static_cast<std::size_t>(i) * n + k] * p.d[static_cast<std::size_t>(i)];

  fc::bound_inputs& in = p.in;
  in.alpha = alpha;
  in.L_sigma = 0.25;
  in.D_delta = 1;
  in.C_delta = 1;
  in.C_P = C_P;
  in.u_A = rc->A.unit_roundoff();
  in.u_c = rc->c.unit_roundoff();
  in.u_sigma = rc->sigma.unit_roundoff();
  in.u_AR_r = rc->AR_r.unit_roundoff();
  in.u_AR_G = rc->AR_G.unit_roundoff();
  in.u_x = rc->x.unit_roundoff();
  in.gamma_r = fc::higham_factor(rc->r, n_loc);
  in.gamma_G = fc::higham_factor(rc->G, n_loc);
  in.gamma_g = fc::higham_factor(rc->g, sb);
  in.gamma_c = fc::gamma((s - 1) * b, in.u_c);
  p.bind();
  // Table 3's column C: bf16 storage and kernels, fp32 inner correction, residual, Gram
  // AllReduce and weights.
  CHECK(in.u_A == u_bf16);
  CHECK(in.u_AR_r == u_bf16);
  CHECK(in.u_c == u_fp32);
  CHECK(in.u_sigma == u_fp32);
  CHECK(in.u_AR_G == u_fp32);
  CHECK(in.u_x == u_fp32);
  CHECK(in.gamma_G == doctest::Approx(2 * u_bf16 + fc::gamma(n_loc, u_fp32)).epsilon(1e-15));  // Equation 8

  const fc::bound_terms t = fc::theorem_5_7(in);
  CHECK(t.Omega <= 1.6e-1);  // the paper's Omega_C <= 1.6e-1
  CHECK(t.omega == doctest::Approx(C_P * u_bf16));  // the margin AllReduce dominates
  CHECK(t.tau_G < t.omega);
  CHECK(t.valid);
  // Assumption 5.1 gives ||Y||_2 <= sqrt(sb); K_s is close to 1 at this step.
  CHECK(t.norm_Y <= std::sqrt(sb));
  CHECK(t.K_s >= 1);
  CHECK(t.K_s < 1.2);
  for (double e : t.E) CHECK(std::isfinite(e));
  CHECK(std::isfinite(t.bound));
  // The values above, so that a change in the data or the evaluation shows here (they are this
  // implementation's, not the paper's: the paper does not print its data).
  CHECK(t.K_s == doctest::Approx(1.0511960559606).epsilon(1e-9));
  CHECK(t.tau_G == doctest::Approx(0.0528886).epsilon(1e-5));
  CHECK(t.sum == doctest::Approx(0.212865).epsilon(1e-5));
}

namespace {

// Equation 9 of Theorem 5.9 written out with pow, for a given chi.
struct direct_9 {
  double a, nu, q, N;
};
direct_9 equation_9(double eta, int b, int s, double mu, double sigma2, double rho, double chi) {
  direct_9 d{};
  d.a = std::pow(1 - mu * eta, s);
  d.nu = eta * sigma2 * (1 - d.a) / (mu * b);
  d.q = (1 + chi) * d.a;
  d.N = (1 + chi) * d.nu + (1 + 1 / chi) * rho * rho;
  return d;
}

}  // namespace

TEST_CASE("theorem_5_9: radius, q, nu_s and Equation 9 at M == direct evaluation; the chosen chi minimises the radius") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, unit(rng)); };
  int cases = 0;
  for (int k = 0; k < 200; ++k) {
    const int b = 1 + static_cast<int>(rng() % 64), s = 1 + static_cast<int>(rng() % 64);
    const double L = log_uniform(1e-3, 1), eta = (0.05 + 0.95 * unit(rng)) / L, mu = L * log_uniform(1e-4, 1);
    const double sigma2 = log_uniform(1e-4, 10), rho = log_uniform(1e-6, 1);
    // A chi given: every quantity as Equation 9 writes it.
    const double a_direct = std::pow(1 - mu * eta, s);
    const double chi = (1 / a_direct - 1) * unit(rng) * 0.98 + 1e-9;
    const fc::convergence_terms t = fc::theorem_5_9({eta, b, s, mu, L, sigma2, rho, chi});
    const direct_9 d = equation_9(eta, b, s, mu, sigma2, rho, chi);
    CHECK(close(t.a, d.a, 1e-12));
    CHECK(close(t.nu_s, d.nu, 1e-9));
    CHECK(close(t.q, d.q, 1e-12));
    CHECK(close(t.N, d.N, 1e-9));
    CHECK(close(t.radius, std::sqrt(d.N / (1 - d.q)), 1e-6));
    CHECK(t.valid);
    for (const int M : {0, 1, 7, 200}) {
      const double x0 = log_uniform(1e-2, 1e2);
      const double want = std::pow(d.q, M) * x0 * x0 + (1 - std::pow(d.q, M)) / (1 - d.q) * d.N;
      CHECK(close(fc::theorem_5_9_rhs(t, M, x0 * x0), want, 1e-6));
    }
    // Large M: Equation 9's right side tends to radius^2.
    CHECK(close(fc::theorem_5_9_rhs(t, std::int64_t{1} << 50, 1.0), t.radius * t.radius, 1e-6));
    // chi left free: no chi on a fine log grid over (0, 1/a - 1) gives a smaller radius, and the
    // best one on the grid is within 0.1% of it.
    const fc::convergence_terms best = fc::theorem_5_9({eta, b, s, mu, L, sigma2, rho, 0});
    double grid_min = std::numeric_limits<double>::infinity();
    const double top = 1 / d.a - 1;
    for (int i = 1; i < 20000; ++i) {
      const double c = top * std::pow(1e-30, 1 - i / 20000.0);  // log grid from 1e-30 top to top
      const direct_9 e = equation_9(eta, b, s, mu, sigma2, rho, c);
      if (e.q < 1) grid_min = std::min(grid_min, std::sqrt(e.N / (1 - e.q)));
    }
    CHECK(best.radius <= grid_min * (1 + 1e-9));
    CHECK(best.radius >= grid_min * (1 - 1e-3));
    CHECK(best.radius >= best.radius_exact);
    CHECK(close(best.radius_exact, std::sqrt(d.nu / (1 - d.a)), 1e-6));
    ++cases;
  }
  CHECK(cases == 200);
}

TEST_CASE("theorem_5_9: limits (rho = 0, mu_F eta = 1, mu_F eta below the rounding unit) and failed hypotheses") {
  // rho = 0: the infimum over chi is nu_s / (1 - a), the exact-arithmetic neighbourhood.
  const fc::convergence_terms r0 = fc::theorem_5_9({0.5, 4, 8, 0.1, 1, 2, 0, 0});
  CHECK(close(r0.radius, r0.radius_exact, 1e-15));
  CHECK(close(r0.radius, std::sqrt(0.5 * 2 / (0.1 * 4)), 1e-12));  // nu/(1-a) = eta sigma^2 / (mu b)
  // mu_F eta = 1: a = 0, q = 0, and the radius is sqrt(nu) + rho with nu = eta sigma^2 / (mu b).
  const fc::convergence_terms a0 = fc::theorem_5_9({0.5, 4, 8, 2, 2, 3, 0.25, 0});
  CHECK(a0.a == 0);
  CHECK(close(a0.radius, std::sqrt(0.5 * 3 / (2.0 * 4)) + 0.25, 1e-12));
  CHECK(close(fc::theorem_5_9_rhs(a0, 3, 100), a0.radius * a0.radius, 1e-12));  // q^M = 0
  // mu_F eta = 1e-30: (1 - mu eta)^s rounds to 1, yet the radius is finite, sqrt(eta sigma^2 / (mu b)).
  const fc::convergence_terms tiny = fc::theorem_5_9({0.5, 32, 16, 2e-30, 1e-2, 1, 1e-3, 0});
  CHECK(std::isfinite(tiny.radius));
  CHECK(close(tiny.radius_exact, std::sqrt(0.5 * 1 / (2e-30 * 32)), 1e-9));
  CHECK(tiny.valid);
  // eta L_F > 1 breaks Assumption 5.6; mu_F = 0 gives no contraction.
  const fc::convergence_terms big_step = fc::theorem_5_9({2, 4, 8, 0.1, 1, 2, 0.1, 0});
  CHECK_FALSE(big_step.step_ok);
  CHECK_FALSE(big_step.valid);
  const fc::convergence_terms flat = fc::theorem_5_9({0.5, 4, 8, 0, 1, 2, 0.1, 0});
  CHECK_FALSE(flat.valid);
  CHECK(std::isinf(flat.radius));
}

TEST_CASE("curvature_of linear regression: x* == the QR least-squares solution, mu_F and L_F == squared singular values / m") {
  const fc::glm_data d = fc::synthetic(300, 12, fc::loss_kind::linear, 3);
  const auto c = fc::curvature_of(d, fc::loss_kind::linear);
  REQUIRE(c.has_value());
  MatrixXd A(d.m, d.n);
  VectorXd y(d.m);
  for (int i = 0; i < d.m; ++i) {
    y(i) = d.y[static_cast<std::size_t>(i)];
    for (int k = 0; k < d.n; ++k) A(i, k) = d.A[static_cast<std::size_t>(i * d.n + k)];
  }
  // Least squares by Householder QR with column pivoting, singular values from a Jacobi SVD of A
  // padded to a square as in norm2: neither forms A^T A.
  const VectorXd ls = A.colPivHouseholderQr().solve(y);
  double worst = 0;
  for (int k = 0; k < d.n; ++k) worst = std::max(worst, std::abs(c->x_star[static_cast<std::size_t>(k)] - ls(k)));
  CHECK(worst <= 1e-10 * ls.norm());
  MatrixXd square = MatrixXd::Zero(d.m, d.m);
  square.topLeftCorner(d.m, d.n) = A;
  const VectorXd sv = Eigen::JacobiSVD<MatrixXd, Eigen::NoQRPreconditioner>(square).singularValues();
  CHECK(close(c->lambda_max, sv(0) * sv(0) / d.m, 1e-10));
  CHECK(close(c->lambda_min, sv(d.n - 1) * sv(d.n - 1) / d.m, 1e-10));
  CHECK(c->hessian_min == c->lambda_min);
  // On the ball: exact mu and L, sigma^2 = mean (|y| + R)^2.
  const fc::ball_constants k = fc::on_ball(*c, fc::loss_kind::linear, 2.0);
  CHECK(k.mu_F == c->lambda_min);
  CHECK(k.L_F == c->lambda_max);
  double want = 0;
  for (int i = 0; i < d.m; ++i) want += (std::abs(y(i)) + 2) * (std::abs(y(i)) + 2);
  CHECK(close(k.sigma_g2, want / d.m, 1e-12));
  // The variance at x*: m^-1 sum delta_i^2 (rows of unit norm, grad F(x*) = 0).
  const VectorXd r = y - A * ls;
  CHECK(close(c->sigma2_at_x_star, r.squaredNorm() / d.m, 1e-8));
}

TEST_CASE("curvature_of logistic regression: grad F(x*) = 0 (computed here), F(x*) below nearby points, the bounds on X_R") {
  const fc::glm_data d = fc::synthetic(400, 10, fc::loss_kind::logistic, 4);
  const auto c = fc::curvature_of(d, fc::loss_kind::logistic);
  REQUIRE(c.has_value());
  const auto F = [&](const std::vector<double>& x) {
    double sum = 0;
    for (int i = 0; i < d.m; ++i) {
      double r = 0;
      for (int k = 0; k < d.n; ++k) r += d.A[static_cast<std::size_t>(i * d.n + k)] * x[static_cast<std::size_t>(k)];
      sum += std::log1p(std::exp(-d.y[static_cast<std::size_t>(i)] * r));
    }
    return sum / d.m;
  };
  std::vector<double> grad(static_cast<std::size_t>(d.n), 0.0);
  for (int i = 0; i < d.m; ++i) {
    double r = 0;
    for (int k = 0; k < d.n; ++k) r += d.A[static_cast<std::size_t>(i * d.n + k)] * c->x_star[static_cast<std::size_t>(k)];
    const double yi = d.y[static_cast<std::size_t>(i)], delta = yi / (1 + std::exp(yi * r));
    for (int k = 0; k < d.n; ++k) grad[static_cast<std::size_t>(k)] -= d.A[static_cast<std::size_t>(i * d.n + k)] * delta / d.m;
  }
  CHECK(norm(grad) <= 1e-12);
  const double F_star = F(c->x_star);
  int probes = 0;
  for (int k = 0; k < d.n; ++k)
    for (const double step : {-1e-3, 1e-3}) {
      std::vector<double> x = c->x_star;
      x[static_cast<std::size_t>(k)] += step;
      CHECK(F(x) > F_star);
      ++probes;
    }
  CHECK(probes == 2 * d.n);
  // mu_F = sigma'(R) lambda_min <= the Hessian's smallest eigenvalue at x* when ||x*|| <= R.
  const double R = norm(c->x_star) * 1.5;
  const fc::ball_constants k = fc::on_ball(*c, fc::loss_kind::logistic, R);
  const double sig = 1 / (1 + std::exp(-R)), sig_minus = 1 / (1 + std::exp(R));  // sigma(R), sigma(-R)
  CHECK(close(k.mu_F, sig * sig_minus * c->lambda_min, 1e-9));
  CHECK(k.mu_F <= c->hessian_min);
  CHECK(c->hessian_min <= c->lambda_max / 4);
  CHECK(close(k.L_F, c->lambda_max / 4, 1e-15));
  CHECK(close(k.sigma_g2, sig * sig, 1e-15));
}

TEST_CASE("curvature_of: errors for Poisson, m < n and work above the limit") {
  CHECK(fc::curvature_of(fc::synthetic(50, 4, fc::loss_kind::poisson, 1), fc::loss_kind::poisson).message().find("Lipschitz") !=
        std::string::npos);
  CHECK(fc::curvature_of(fc::synthetic(8, 12, fc::loss_kind::linear, 1), fc::loss_kind::linear).message().find("m = 8 rows < n = 12") !=
        std::string::npos);
  fc::glm_data big;  // only the shape is read before the refusal
  big.m = 1 << 20;
  big.n = 128;
  CHECK(fc::curvature_of(big, fc::loss_kind::linear).message().find("above 2^32") != std::string::npos);
}
