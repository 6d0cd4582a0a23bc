// The local error budget of one CA-SGD outer iteration: Theorem 5.7 of Devarakonda et al. 2026
// (mixed-precision local error), its nine leading terms E_*, the source quantities T_g, T_r, T_G,
// T_c (Equation 4), the amplification factor K_s (Equation 3), omega_*, tau_G,* and Omega_*;
// and the radius of Theorem 5.9 (SGD convergence) that such a budget buys.
//
// Inputs are the exact quantities of the local comparison: the sampled rows Y (unrounded), the
// exact residual history d and the exact end point x^(s) of a binary64 run from the same x with
// the same samples. Norms ||.||_2 of matrices are computed from a power iteration's Krylov space
// (Lanczos) run to a relative change below 1e-12 (the largest singular value; Y is sb x n with
// sb, n up to a few thousand).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fpemu::casgd {

struct bound_inputs {
  int b = 0, s = 0;          // batch size and CA length; Y has s*b rows
  int n = 0;                 // columns of Y (all ranks together)
  std::span<const double> Y;       // s*b x n, row-major, exact sampled rows (rows of A)
  std::span<const double> d;       // s*b exact residual history (d_0; ...; d_{s-1})
  std::span<const double> x_next;  // n, exact x^(s)
  std::span<const double> x;       // n, the common starting point
  double alpha = 0;          // eta / b
  double L_sigma = 0;        // Lipschitz constant of the residual (1/4 logistic, 1 linear)
  double D_delta = 0;        // bound on |delta| in the local comparison
  double C_delta = 1;        // |fl(delta) - delta| <= C_delta u D_delta
  double C_P = 0;            // AllReduce constant C(P), measured or 2.4 P
  // Unit roundoffs of the six storage/elementwise slots and the collectives.
  double u_A = 0, u_c = 0, u_sigma = 0, u_AR_r = 0, u_AR_G = 0, u_x = 0;
  // Higham factors of the three kernels: gamma_r and gamma_G over n_loc, gamma_g over s*b.
  double gamma_r = 0, gamma_G = 0, gamma_g = 0;
  double gamma_c = 0;        // gamma_{(s-1)b}(u_c), for omega
};

struct bound_terms {
  // E_uA, E_uG, E_ur, E_uc, E_usigma, E_ug, E_uAR_r, E_uAR_G, E_ux: the order of casgd::slot.
  std::array<double, 9> E{};
  double K_s = 0, T_g = 0, T_r = 0, T_G = 0, T_c = 0;
  double norm_Y = 0;     // ||Y||_2
  double norm_H_L = 0;   // ||H_L||_2
  double omega = 0, tau_G = 0, Omega = 0;
  double sum = 0;        // sum of the nine E
  double bound = 0;      // (1 + C_loc Omega) * sum with C_loc = 1 (the theorem leaves C_loc open)
  bool valid = false;    // omega and tau_G both at most 1/2 (the theorem's hypothesis)
};

// Computes every quantity of Theorem 5.7 from the inputs. Asserts on inconsistent sizes (the
// engine builds the inputs; users never do).
bound_terms theorem_5_7(const bound_inputs& in);

// Theorem 5.9 (SGD convergence). If every finite-precision outer iteration is the exact CA-SGD
// block (s SGD steps of size eta <= 1/L_F on F, mu_F-strongly convex and L_F-smooth on X_R,
// gradient variance sigma_g^2 / b) plus an error of norm at most rho, then with
//     a = (1 - mu_F eta)^s,   nu_s = eta sigma_g^2 (1 - a) / (mu_F b),   q = (1 + chi) a < 1,
//     E||x_hat_M - x*||^2 <= q^M ||x_hat_0 - x*||^2 + (1 - q^M)/(1 - q) N,
//     N = (1 + chi) nu_s + (1 + 1/chi) rho^2                                   (Equation 9)
// for any chi > 0. The radius is the square root of the M -> infinity limit N / (1 - q): the
// neighbourhood of x* whose mean-square the iterates end in. It is minimised over chi in closed
// form: d/dchi [N / (1 - q)] = 0 reduces to (nu_s + a rho^2) chi^2 + 2 a rho^2 chi - (1 - a) rho^2
// = 0 (the cubic terms cancel), whose positive root is taken. With rho = 0 the infimum is the
// limit chi -> 0, nu_s / (1 - a); with a = 0 (mu_F eta = 1) it is (sqrt(nu_s) + rho)^2.
struct convergence_inputs {
  double eta = 0;
  int b = 0, s = 0;
  double mu_F = 0, L_F = 0, sigma_g2 = 0;
  double rho = 0;  // a uniform bound on Theorem 5.7's budget
  double chi = 0;  // > 0: use it; 0: the chi that minimises the radius
};
struct convergence_terms {
  double a = 1, nu_s = 0, chi = 0, q = 1, rho = 0;
  double one_minus_a = 0, one_minus_q = 0;  // kept apart: a and q can be within 1e-30 of 1
  double N = 0;              // (1 + chi) nu_s + (1 + 1/chi) rho^2
  double radius = 0;         // sqrt(N / (1 - q)); infinity when q >= 1
  double radius_exact = 0;   // the same with rho = 0: exact arithmetic's neighbourhood, sqrt(nu_s / (1 - a))
  bool step_ok = false;      // eta L_F <= 1 (Assumption 5.6)
  bool valid = false;        // 0 < mu_F <= L_F, step_ok and q < 1
};
convergence_terms theorem_5_9(const convergence_inputs& in);
// Equation 9's right-hand side after M outer iterations from ||x_hat_0 - x*||^2 = dist0_sq.
double theorem_5_9_rhs(const convergence_terms& t, std::int64_t M, double dist0_sq);

}  // namespace fpemu::casgd
