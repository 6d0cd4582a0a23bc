// Theorem 5.9 of Devarakonda et al. 2026 applied to a CA-SGD run: the constants it names, computed
// for the GLM on its data where that is possible, and the radius (bound.hpp) next to the distance
// the run ends at.
//
// Assumptions 5.5 and 5.6 ask for a ball X_R = {||x|| <= R} holding every iterate and the
// minimiser x* of F, on which F is mu_F-strongly convex and L_F-smooth and the per-sample
// gradient's variance is at most sigma_g^2. As the paper does (Section 6), R is taken a
// posteriori: the smallest ball about 0 holding x* and the run's iterates. With rows of norm at
// most 1 (Assumption 5.1) and H = A^T A / m, on X_R:
//   linear    Hessian = H:   mu_F = lambda_min(H), L_F = lambda_max(H)                 (exact)
//   logistic  Hessian = A^T diag(sigma'(a_i^T x)) A / m with |a_i^T x| <= R, sigma' <= 1/4 and
//             decreasing in |.|:  mu_F >= sigma'(R) lambda_min(H), L_F <= lambda_max(H) / 4  (bounds)
// and sigma_g^2 >= E_i ||grad f_i(x) - grad F(x)||^2 through E_i ||grad f_i||^2 <= E_i delta_i^2:
//   logistic  |delta_i| = sigma(-y_i a_i^T x) <= sigma(R):   sigma_g^2 = sigma(R)^2         (bound)
//   linear    |delta_i| <= |y_i| + R:   sigma_g^2 = m^-1 sum_i (|y_i| + R)^2                (bound)
// Any larger L_F, smaller mu_F or larger sigma_g^2 keeps the theorem true, so bounds suffice.
// Reported beside them (not used by the theorem): the smallest Hessian eigenvalue and the
// gradient variance at x*, the constants of the usual asymptotic statements.
//
// x* is found by Newton's method in binary64 with a backtracking line search (one step for
// linear regression), on the dense n x n Hessian, with every eigenvalue from Eigen's dense
// symmetric eigensolver: the work is m n^2 per Newton step, so this is done for m n^2 <= 2^32
// (seconds); above that the constants are options.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/casgd/bound.hpp"
#include "analysis/casgd/glm.hpp"
#include "fpemu/expected.hpp"

namespace fpemu::casgd {

inline constexpr double curvature_work_limit = 0x1p32;  // m n^2

struct glm_curvature {
  std::vector<double> x_star;       // the minimiser of F
  double grad_norm = 0;             // ||grad F(x_star)||_2 where Newton's method stopped
  int newton_steps = 0;
  double lambda_min = 0, lambda_max = 0;  // extreme eigenvalues of A^T A / m
  double hessian_min = 0;           // smallest eigenvalue of the Hessian of F at x_star
  double sigma2_at_x_star = 0;      // m^-1 sum_i ||grad f_i(x*) - grad F(x*)||^2
  double mean_y2 = 0, mean_abs_y = 0;
};
// Errors: the Poisson loss (no Lipschitz residual), m n^2 above the limit, a singular A^T A / m
// (no unique minimiser), Newton's method not converging (separable data for logistic).
expected<glm_curvature> curvature_of(const glm_data& d, loss_kind l);

struct ball_constants {
  double R = 0, mu_F = 0, L_F = 0, sigma_g2 = 0;
};
ball_constants on_ball(const glm_curvature& c, loss_kind l, double R);

// Values given instead of the computed ones (or where none could be computed).
struct constant_overrides {
  std::optional<double> mu_F, L_F, sigma_g2;
};

struct convergence_report {
  std::optional<std::string> no_curvature;  // why the constants were not computed
  ball_constants constants;                 // R is 0 without x*
  bool mu_given = false, L_given = false, sigma_given = false;
  bool complete = false;       // all three constants known: terms is meaningful
  convergence_terms terms;
  double rho = 0;              // the local budget used
  std::int64_t M = 0;          // outer iterations run
  double x_star_norm = 0;      // ||x*||_2 = ||x_hat_0 - x*||_2 (runs start at 0)
  double rhs_at_M = 0;         // sqrt of Equation 9's right-hand side at M (NaN without x*)
  double measured = 0;         // ||x_hat_M - x*||_2 of the run (NaN without x*)
  // Not the theorem: the same formula with the constants at x* alone (the Hessian's smallest
  // eigenvalue and the gradient variance there, L_F as above), the neighbourhood an asymptotic
  // analysis near x* would give. Computed when x* is.
  bool have_local = false;
  double hessian_min = 0, sigma2_at_x_star = 0;
  convergence_terms local;           // with rho
  convergence_terms local_measured;  // with rho = the measured local error instead of its bound
};
// The theorem for a run of M outer iterations from x = 0 with step eta, batch b, CA length s,
// whose iterates had norms at most max_iterate_norm and which ended at x_final (all columns),
// with rho = the local budget of Theorem 5.7 (rho_measured: the local error it bounds, measured).
convergence_report apply_theorem_5_9(const expected<glm_curvature>& curvature, loss_kind l,
                                     const constant_overrides& given, double eta, int b, int s, double rho,
                                     double rho_measured, std::int64_t M, double max_iterate_norm,
                                     std::span<const double> x_final);

}  // namespace fpemu::casgd
