// Theorem 5.7 of Devarakonda et al. 2026 (mixed-precision local error of one CA-SGD outer
// iteration): the amplification factor K_s (Equation 3), the source quantities T_g, T_r, T_G, T_c
// (Equation 4), the nine leading terms E_* (Equation 6), omega_*, tau_G,* and Omega_*.
//
// Everything is binary64 on the exact inputs: the bound describes the exact recurrence, so none
// of it is emulated. Each squared spectral norm is the largest eigenvalue of a symmetric positive
// semidefinite operator (M^T M, H_L^T H_L, Y Y^T or Y^T Y), found from the fixed positive start
// vector of a power iteration. We build the power iteration's Krylov space (Lanczos with full
// reorthogonalisation) rather than keep only its last vector: the top Ritz value is never below
// the power iteration's Rayleigh quotient at the same step, never above the eigenvalue, and it
// converges where power iteration stalls. For rows of unit norm without a common direction,
// Y Y^T has a Marchenko-Pastur edge whose leading eigenvalues are a fraction of a percent apart:
// on the Recipe C test data (2048 x 4096) power iteration is still moving at 2000 products and
// ends 4e-10 below ||Y||_2, while Lanczos stops after 78 products, 3e-13 below it (both against
// a dense eigensolver). K_s and ||H_L||_2 have well separated tops and need under ten products.
//
// Theorem 5.9's radius is a closed form (bound.hpp); a and 1 - a are computed through log1p and
// expm1 because mu_F eta can be far below the rounding unit (logistic regression far from the
// origin), where (1 - mu_F eta)^s would round to 1 and the radius to infinity.
#include "analysis/casgd/bound.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "analysis/casgd/precision.hpp"

namespace fpemu::casgd {

namespace {

using Eigen::Index;
using Eigen::VectorXd;
using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double stop_change = 1e-12;
constexpr Index max_steps = 2000;

// Largest eigenvalue of the symmetric positive semidefinite operator `apply` of size dim.
// Stops when the top Ritz value has changed by at most 1e-12 relative on two consecutive steps
// (it rises monotonically, and one flat step can be a pause before the next eigenvector is
// found), when the Krylov space is invariant (the value is then exact; the zero operator ends
// here at 0), or when it spans the whole space.
template <class Apply>
double top_eigenvalue(Index dim, Apply&& apply) {
  const Index cap = std::min(dim, max_steps);
  std::vector<VectorXd> basis;
  std::vector<double> diag, offdiag;
  VectorXd q = VectorXd::Constant(dim, 1 / std::sqrt(static_cast<double>(dim)));
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tri;
  double theta = 0, previous = 0;
  int flat = 0;
  for (Index k = 0; k < cap; ++k) {
    basis.push_back(q);
    VectorXd w = apply(q);
    const double a = q.dot(w);
    diag.push_back(a);
    // Two passes of Gram-Schmidt against the whole basis: they subtract the three-term
    // recurrence's a q_k + b q_{k-1} and the rounding drift that would bring back ghost copies
    // of converged eigenvalues.
    for (int pass = 0; pass < 2; ++pass)
      for (const VectorXd& v : basis) w -= v.dot(w) * v;
    const double b = w.norm();
    tri.computeFromTridiagonal(Eigen::Map<const VectorXd>(diag.data(), k + 1),
                               Eigen::Map<const VectorXd>(offdiag.data(), k), Eigen::EigenvaluesOnly);
    theta = std::max(tri.eigenvalues().maxCoeff(), 0.0);
    if (k > 0 && theta - previous <= stop_change * theta) {
      if (++flat == 2) break;
    } else {
      flat = 0;
    }
    if (b <= 1e-15 * std::max(theta, std::abs(a))) break;
    offdiag.push_back(b);
    q = w / b;
    previous = theta;
  }
  return theta;
}

// x * y where an infinite factor (a Higham factor outside its domain, q u >= 1) makes the product
// infinite even against a zero source: the theorem then gives no bound, which must not read 0
// or NaN.
double times(double x, double y) {
  if (std::isinf(x) || std::isinf(y)) return std::numeric_limits<double>::infinity();
  return x * y;
}

}  // namespace

bound_terms theorem_5_7(const bound_inputs& in) {
  assert(in.b >= 1 && in.s >= 1 && in.n >= 1);
  const Index b = in.b, s = in.s, sb = s * b, n = in.n;
  assert(static_cast<Index>(in.Y.size()) == sb * n);
  assert(static_cast<Index>(in.d.size()) == sb);
  assert(static_cast<Index>(in.x.size()) == n);
  assert(static_cast<Index>(in.x_next.size()) == n);

  const Eigen::Map<const row_matrix> Y(in.Y.data(), sb, n);
  const Eigen::Map<const VectorXd> d(in.d.data(), sb), x(in.x.data(), n), x_next(in.x_next.data(), n);
  const row_matrix absY = Y.cwiseAbs();
  const VectorXd abs_d = d.cwiseAbs();

  // Only the lower triangle of G = Y Y^T is needed: its diagonal blocks for ||Y||_2, the strict
  // block-lower part for K_s and T_c. |y_a . y_b| does not factor through |Y|, so |G_L| has to
  // be formed; this product (sb^2 n / 2 multiply-adds) is the cost of the whole calculator.
  row_matrix G = row_matrix::Zero(sb, sb);
  G.selfadjointView<Eigen::Lower>().rankUpdate(Y);
  G.triangularView<Eigen::StrictlyUpper>() = G.transpose();  // a plain GEMV for ||Y||_2 below

  bound_terms t;
  // ||Y||_2^2 is the top eigenvalue of Y Y^T or of Y^T Y, whichever is smaller.
  if (sb <= n) {
    t.norm_Y = std::sqrt(top_eigenvalue(sb, [&](const VectorXd& v) -> VectorXd {
      return G * v;
    }));
  } else {
    t.norm_Y = std::sqrt(top_eigenvalue(n, [&](const VectorXd& v) -> VectorXd {
      return Y.transpose() * (Y * v);
    }));
  }

  // From here G holds |G|, and only its strict block-lower part is read; the Frobenius norms of
  // T_c are the same for G and |G|.
  G = G.cwiseAbs();
  const auto GL_block_row = [&](Index j) { return G.block(j * b, 0, b, j * b); };  // |G_{j,0:j-1}|

  // M = (I - c |G_L|)^{-1} with c = L_sigma alpha. |G_L| is strictly block lower, so M is unit
  // block lower triangular (the terminating Neumann series I + c|G_L| + ... + (c|G_L|)^{s-1}) and
  // applying M or M^T is a block substitution; M itself is never formed.
  const double c = in.L_sigma * in.alpha;
  const auto apply_M = [&](const VectorXd& v) {
    VectorXd w = v;
    for (Index j = 1; j < s; ++j) w.segment(j * b, b).noalias() += c * (GL_block_row(j) * w.head(j * b));
    return w;
  };
  const auto apply_MT = [&](const VectorXd& v) {
    VectorXd w = v;
    for (Index j = s - 1; j >= 1; --j)
      w.head(j * b).noalias() += c * (GL_block_row(j).transpose() * w.segment(j * b, b));
    return w;
  };
  t.K_s = std::sqrt(top_eigenvalue(sb, [&](const VectorXd& v) -> VectorXd { return apply_MT(apply_M(v)); }));

  // H_L v: block j is sum_{i<j} |Y_j| |Y_i|^T v_i = |Y_j| (sum_{i<j} |Y_i|^T v_i), a prefix sum
  // of |Y_i|^T v_i, so H_L (sb x sb) is never formed; H_L^T v uses the suffix sums. The mask is
  // why this is not |Y| (|Y|^T v).
  const auto apply_H = [&](const VectorXd& v) {
    VectorXd out = VectorXd::Zero(sb), prefix = VectorXd::Zero(n);
    for (Index j = 0; j < s; ++j) {
      out.segment(j * b, b).noalias() = absY.middleRows(j * b, b) * prefix;
      prefix.noalias() += absY.middleRows(j * b, b).transpose() * v.segment(j * b, b);
    }
    return out;
  };
  const auto apply_HT = [&](const VectorXd& v) {
    VectorXd out = VectorXd::Zero(sb), suffix = VectorXd::Zero(n);
    for (Index j = s - 1; j >= 0; --j) {
      out.segment(j * b, b).noalias() = absY.middleRows(j * b, b) * suffix;
      suffix.noalias() += absY.middleRows(j * b, b).transpose() * v.segment(j * b, b);
    }
    return out;
  };
  t.norm_H_L = std::sqrt(top_eigenvalue(sb, [&](const VectorXd& v) -> VectorXd { return apply_HT(apply_H(v)); }));

  // Equation 4.
  t.T_g = (absY.transpose() * abs_d).norm();
  t.T_r = (absY * x.cwiseAbs()).norm();
  t.T_G = apply_H(abs_d).norm();
  double Tc2 = 0;
  for (Index j = 1; j < s; ++j) {
    const double term = static_cast<double>(j * b) * GL_block_row(j).norm() * d.head(j * b).norm();
    Tc2 += term * term;
  }
  t.T_c = std::sqrt(Tc2);

  // Equation 6. The common factor a ||Y||_2 K_s L_sigma multiplies every term that passes
  // through the inner s-step recurrence; E_ug and the T_g part of E_uA arise after it.
  const double a = in.alpha;
  const double inner = a * t.norm_Y * t.K_s * in.L_sigma;  // a ||Y|| K L
  const double inner2 = a * inner;                          // a^2 ||Y|| K L
  auto& E = t.E;
  E[static_cast<int>(slot::A)] = inner * in.u_A * t.T_r + 2 * inner2 * in.u_A * t.T_G + a * in.u_A * t.T_g;
  E[static_cast<int>(slot::G)] = times(inner2 * t.T_G, in.gamma_G);
  E[static_cast<int>(slot::r)] = times(inner * t.T_r, in.gamma_r);
  E[static_cast<int>(slot::c)] = inner * in.u_c * t.T_r + 2 * inner2 * in.u_c * t.T_G + inner2 * in.u_c * t.T_c;
  E[static_cast<int>(slot::sigma)] =
      a * t.norm_Y * t.K_s * in.C_delta * in.u_sigma * in.D_delta * std::sqrt(static_cast<double>(sb));
  E[static_cast<int>(slot::g)] = times(a * t.T_g, in.gamma_g);
  E[static_cast<int>(slot::AR_r)] = inner * in.C_P * in.u_AR_r * t.T_r;
  E[static_cast<int>(slot::AR_G)] = inner2 * in.C_P * in.u_AR_G * t.T_G;
  E[static_cast<int>(slot::x)] = in.u_x * (x_next.norm() + a * (Y.transpose() * d).norm());

  t.omega = std::max({in.u_A, in.gamma_r, in.gamma_G, in.gamma_c, in.gamma_g, in.C_P * in.u_AR_r,
                      in.C_P * in.u_AR_G, in.u_sigma, in.u_x});
  t.tau_G = times(t.K_s * in.L_sigma * a * t.norm_H_L, 2 * in.u_A + in.gamma_G + in.C_P * in.u_AR_G);
  t.Omega = std::max(t.omega, t.tau_G);
  for (double e : E) t.sum += e;
  t.bound = (1 + t.Omega) * t.sum;
  t.valid = t.omega <= 0.5 && t.tau_G <= 0.5;
  return t;
}

convergence_terms theorem_5_9(const convergence_inputs& in) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  convergence_terms t;
  t.rho = in.rho;
  t.step_ok = in.eta * in.L_F <= 1;
  t.radius = t.radius_exact = inf;
  const double mu_eta = in.mu_F * in.eta;
  if (!(in.mu_F > 0) || !(mu_eta <= 1) || in.b < 1 || in.s < 1 || !(in.sigma_g2 >= 0) || !(in.rho >= 0)) return t;
  const double log_a = in.s * std::log1p(-mu_eta);  // -infinity when mu_F eta = 1
  t.a = std::exp(log_a);
  t.one_minus_a = -std::expm1(log_a);
  t.nu_s = in.eta * in.sigma_g2 * t.one_minus_a / (in.mu_F * in.b);
  t.radius_exact = std::sqrt(t.nu_s / t.one_minus_a);
  const double rho2 = in.rho * in.rho;
  if (in.chi > 0) {
    t.chi = in.chi;
  } else if (rho2 == 0) {
    t.chi = 0;  // the infimum, approached as chi -> 0: (1 + 1/chi) rho^2 is 0 throughout
  } else if (t.a == 0) {
    t.chi = t.nu_s > 0 ? in.rho / std::sqrt(t.nu_s) : inf;  // q = 0 whatever chi is
  } else {
    // (nu + a rho^2) chi^2 + 2 a rho^2 chi - (1 - a) rho^2 = 0: the positive root, in the form
    // that does not cancel.
    const double P = t.nu_s + t.a * rho2, Q = t.a * rho2, R = t.one_minus_a * rho2;
    t.chi = R / (Q + std::sqrt(Q * Q + P * R));
  }
  t.q = std::isinf(t.chi) ? (t.a == 0 ? 0 : inf) : (1 + t.chi) * t.a;
  t.one_minus_q = std::isinf(t.chi) ? 1 - t.q : t.one_minus_a - t.chi * t.a;
  if (std::isinf(t.chi))
    t.N = rho2;  // a = 0, nu = 0: (1 + chi) nu_s = 0 and (1 + 1/chi) rho^2 = rho^2
  else
    t.N = (1 + t.chi) * t.nu_s + (t.chi > 0 ? (1 + 1 / t.chi) * rho2 : 0);
  if (t.one_minus_q > 0) t.radius = std::sqrt(t.N / t.one_minus_q);
  t.valid = in.mu_F <= in.L_F && t.step_ok && t.one_minus_q > 0;
  return t;
}

double theorem_5_9_rhs(const convergence_terms& t, std::int64_t M, double dist0_sq) {
  if (M <= 0) return dist0_sq;
  if (!(t.one_minus_q > 0)) return std::numeric_limits<double>::infinity();
  const double log_qM = static_cast<double>(M) * std::log1p(-t.one_minus_q);  // -infinity when q = 0
  const double qM = std::exp(log_qM), one_minus_qM = -std::expm1(log_qM);
  return qM * dist0_sq + one_minus_qM / t.one_minus_q * t.N;
}

}  // namespace fpemu::casgd
