// Theorem 5.9 of Devarakonda et al. 2026 for a run: the minimiser x*, the curvature and variance
// constants on the ball X_R, and the radius next to the measured distance (convergence.hpp).
#include "analysis/casgd/convergence.hpp"

// GCC 12 reports 'result may be used uninitialized' inside Eigen 3.4's selfadjoint and triangular
// matrix-vector kernels that SelfAdjointEigenSolver's tridiagonalisation instantiates: a false
// positive in the library's code (the buffer is allocated and written before the call).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Dense>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace fpemu::casgd {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int max_newton_steps = 100;

// sigma'(r) = sigma(r) (1 - sigma(r)), from e^{-|r|} so that it neither cancels nor overflows.
double sigmoid_slope(double r) {
  const double e = std::exp(-std::abs(r));
  return e / ((1 + e) * (1 + e));
}

// (1/m) A^T diag(w) A, lower triangle.
MatrixXd weighted_gram(const Eigen::Map<const row_matrix>& A, const VectorXd& w) {
  const row_matrix B = A.array().colwise() * w.cwiseSqrt().array();
  MatrixXd H = MatrixXd::Zero(A.cols(), A.cols());
  H.selfadjointView<Eigen::Lower>().rankUpdate(B.transpose(), 1.0 / static_cast<double>(A.rows()));
  return H;
}

Eigen::VectorXd eigenvalues(const MatrixXd& lower) {
  return Eigen::SelfAdjointEigenSolver<MatrixXd>(lower, Eigen::EigenvaluesOnly).eigenvalues();  // ascending
}

}  // namespace

expected<glm_curvature> curvature_of(const glm_data& d, loss_kind l) {
  if (!std::isfinite(lipschitz(l)))
    return error{"Theorem 5.9 covers residuals with a Lipschitz constant (logistic, linear); the " +
                 std::string(to_string(l)) + " residual has none"};
  const double m = d.m, n = d.n;
  if (d.m < d.n)
    return error{"m = " + std::to_string(d.m) + " rows < n = " + std::to_string(d.n) +
                 " columns: A^T A / m is singular and F has no unique minimiser"};
  if (m * n * n > curvature_work_limit)
    return error{"m n^2 = " + std::to_string(m * n * n) + " is above 2^32 (" + std::to_string(d.m) + " x " +
                 std::to_string(d.n) + "): the dense Newton solve for x* would take minutes"};
  const Eigen::Map<const row_matrix> A(d.A.data(), d.m, d.n);
  const Eigen::Map<const VectorXd> y(d.y.data(), d.m);
  glm_curvature c;
  c.mean_y2 = y.squaredNorm() / m;
  c.mean_abs_y = y.cwiseAbs().sum() / m;

  const VectorXd gram = eigenvalues(weighted_gram(A, VectorXd::Ones(d.m)));
  c.lambda_min = gram(0);
  c.lambda_max = gram(d.n - 1);
  if (!(c.lambda_min > 1e-13 * c.lambda_max))
    return error{"A^T A / m is singular (smallest eigenvalue " + std::to_string(c.lambda_min) +
                 "): F has no unique minimiser"};

  // Damped Newton from 0: the step solves H p = -grad F; the line search halves t until
  // F(x + t p) <= F(x) - 1e-4 t lambda^2 (lambda^2 = -grad F . p, the Newton decrement). It stops
  // when lambda^2 <= 1e-26: F is then within 1e-26 of its minimum, and x within about
  // 1e-13 / sqrt(lambda_min) of x*.
  const auto residuals = [&](const VectorXd& x) {
    const VectorXd r = A * x;
    VectorXd delta(d.m), w(d.m);
    for (int i = 0; i < d.m; ++i) {
      delta(i) = residual(l, r(i), y(i));
      w(i) = l == loss_kind::logistic ? sigmoid_slope(r(i)) : 1.0;
    }
    return std::pair{delta, w};
  };
  const auto F = [&](const VectorXd& x) {
    const VectorXd r = A * x;
    double sum = 0;
    for (int i = 0; i < d.m; ++i) sum += loss_value(l, r(i), y(i));
    return sum / m;
  };
  VectorXd x = VectorXd::Zero(d.n);
  bool converged = false;
  for (; c.newton_steps < max_newton_steps; ++c.newton_steps) {
    const auto [delta, w] = residuals(x);
    const VectorXd grad = -(A.transpose() * delta) / m;
    const VectorXd p = weighted_gram(A, w).selfadjointView<Eigen::Lower>().ldlt().solve(-grad);
    const double decrement = -grad.dot(p);
    if (!(decrement > 1e-26)) {
      converged = std::isfinite(decrement);
      break;
    }
    const double F0 = F(x);
    double t = 1;
    while (F(x + t * p) > F0 - 1e-4 * t * decrement && t > 1e-12) t /= 2;
    x += t * p;
  }
  const auto [delta, w] = residuals(x);
  const VectorXd grad = -(A.transpose() * delta) / m;
  c.grad_norm = grad.norm();
  if (!converged)
    return error{"Newton's method found no minimiser of F in " + std::to_string(max_newton_steps) +
                 " steps (||x|| = " + std::to_string(x.norm()) + "): the data may be separable"};
  c.hessian_min = l == loss_kind::linear ? c.lambda_min : eigenvalues(weighted_gram(A, w))(0);
  if (!(c.hessian_min > 1e-13 * c.lambda_max))
    return error{"the Hessian at Newton's end point is singular (||x|| = " + std::to_string(x.norm()) +
                 "): the data may be separable, and F then has no minimiser"};
  // ||a_i|| is 1 (or 0 for an all-zero row): the sum of delta_i^2 ||a_i||^2 needs the norms.
  double s2 = 0;
  for (int i = 0; i < d.m; ++i) s2 += delta(i) * delta(i) * A.row(i).squaredNorm();
  c.sigma2_at_x_star = std::max(0.0, s2 / m - grad.squaredNorm());
  c.x_star.assign(x.data(), x.data() + d.n);
  return c;
}

ball_constants on_ball(const glm_curvature& c, loss_kind l, double R) {
  ball_constants k;
  k.R = R;
  if (l == loss_kind::linear) {
    k.mu_F = c.lambda_min;
    k.L_F = c.lambda_max;
    k.sigma_g2 = c.mean_y2 + 2 * R * c.mean_abs_y + R * R;
  } else {
    k.mu_F = sigmoid_slope(R) * c.lambda_min;
    k.L_F = c.lambda_max / 4;
    const double sig = 1 / (1 + std::exp(-R));
    k.sigma_g2 = sig * sig;
  }
  return k;
}

convergence_report apply_theorem_5_9(const expected<glm_curvature>& curvature, loss_kind l,
                                     const constant_overrides& given, double eta, int b, int s, double rho,
                                     double rho_measured, std::int64_t M, double max_iterate_norm,
                                     std::span<const double> x_final) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  convergence_report r;
  r.M = M;
  r.rho = rho;
  r.rhs_at_M = r.measured = nan;
  r.constants.R = max_iterate_norm;
  if (curvature) {
    const std::vector<double>& xs = curvature->x_star;
    double ss = 0;
    for (double v : xs) ss += v * v;
    r.x_star_norm = std::sqrt(ss);
    r.constants = on_ball(*curvature, l, std::max(max_iterate_norm, r.x_star_norm));
  } else {
    r.no_curvature = curvature.message();
    r.x_star_norm = nan;
  }
  if (given.mu_F) r.constants.mu_F = *given.mu_F, r.mu_given = true;
  if (given.L_F) r.constants.L_F = *given.L_F, r.L_given = true;
  if (given.sigma_g2) r.constants.sigma_g2 = *given.sigma_g2, r.sigma_given = true;
  r.complete = curvature.has_value() || (r.mu_given && r.L_given && r.sigma_given);
  if (!r.complete) return r;
  r.terms = theorem_5_9({eta, b, s, r.constants.mu_F, r.constants.L_F, r.constants.sigma_g2, rho, 0});
  if (curvature) {
    const std::vector<double>& xs = curvature->x_star;
    r.rhs_at_M = std::sqrt(theorem_5_9_rhs(r.terms, M, r.x_star_norm * r.x_star_norm));
    double ss = 0;
    for (std::size_t i = 0; i < xs.size() && i < x_final.size(); ++i) ss += (x_final[i] - xs[i]) * (x_final[i] - xs[i]);
    r.measured = std::sqrt(ss);
    r.have_local = true;
    r.hessian_min = curvature->hessian_min;
    r.sigma2_at_x_star = curvature->sigma2_at_x_star;
    r.local = theorem_5_9({eta, b, s, curvature->hessian_min, r.constants.L_F, curvature->sigma2_at_x_star, rho, 0});
    r.local_measured =
        theorem_5_9({eta, b, s, curvature->hessian_min, r.constants.L_F, curvature->sigma2_at_x_star, rho_measured, 0});
  }
  return r;
}

}  // namespace fpemu::casgd
