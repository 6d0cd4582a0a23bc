// A-priori rounding error bounds for summation and dot products in low and mixed precision.
//
// Every bound is a relative coefficient c: |computed - exact| <= c * S, where S = sum |x_i| for
// a sum and S = sum |a_i * b_i| for a dot product, unless a function says otherwise. Papers
// implemented (the theorem or equation, and every derivation made for rigour, are written next
// to each function in bounds.cpp):
//   N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM 2002: gamma_n
//     (Lemma 3.1), dot products (section 3.1), recursive, pairwise, compensated summation (ch. 4).
//   N. J. Higham, T. Mary, "A new approach to probabilistic rounding error analysis", SISC 41(5),
//     2019 (gamma~_n(lambda) and its probability).
//   M. P. Connolly, N. J. Higham, T. Mary, "Stochastic rounding and its probabilistic backward
//     error analysis", SISC 43(1), 2021 (recursive summation with stochastic rounding).
//   P. Blanchard, N. J. Higham, T. Mary, "A class of fast and accurate summation algorithms",
//     SISC 42(3), 2020 (blocked summation).
//   P. Blanchard, N. J. Higham, F. Lopez, T. Mary, S. Pranesh, "Mixed precision block fused
//     multiply-add: error analysis and application to GPU tensor cores", SISC 42(3), 2020.
//   T. Ogita, S. M. Rump, S. Oishi, "Accurate sum and dot product", SISC 26(6), 2005 (their Sum2
//     is Neumaier's 1974 algorithm).
//
// What u means. Every function takes the bound u on the relative error of one operation,
// fl(x op y) = (x op y)(1 + d) with |d| <= u:
//   * round to nearest: u = 2^-p, the format's unit roundoff (fpemu::unit_roundoff);
//   * directed rounding (RZ, RU, RD) and stochastic rounding: |d| < 2^(1-p), so pass 2u;
//   * except stochastic_sum_deterministic and stochastic_sum_probabilistic, which take the
//     format's u = 2^-p and double it themselves;
//   * neumaier_sum is valid for round to nearest only (it relies on error-free transformations).
// The models assume no overflow and no underflow in multiplications (additions are exact in the
// gradual-underflow range; formats that flush subnormals to zero break the model).
//
// Rigour. Each coefficient is computed with every operation rounded outward (upward for the
// bound, downward for denominators and probabilities), so it bounds the exact real expression.
// Parameters out of range and bounds whose hypothesis fails give valid = false, value = +inf
// and a condition naming the value and the valid range; nothing throws.
#pragma once

#include <cstdint>
#include <string>

namespace fpemu::bounds {

struct coefficient {
  double value = 0;       // +inf when not valid
  bool valid = false;     // the bound's validity condition holds
  std::string condition;  // the validity condition as evaluated, or why it fails
  std::string name;       // short name, e.g. "gamma_{n-1}(u)"
};

// A bound that holds with at least a given probability (under the stated probabilistic model).
struct probabilistic {
  coefficient c;
  double probability = 0;  // lower bound on the probability that the bound holds
  double lambda = 0;
};

// ---- The basic constants ---------------------------------------------------------------------

// gamma_n(u) = n u / (1 - n u), valid iff n u < 1 (Higham, Lemma 3.1): |prod (1+d_i)^(+-1) - 1|
// <= gamma_n(u) for n factors with |d_i| <= u.
coefficient gamma(std::uint64_t n, double u);

// gamma~_n(lambda) = exp(lambda sqrt(n) u + n u^2 / (1-u)) - 1 bounds |prod (1+d_i)^(+-1) - 1|
// for n independent mean-zero d_i with |d_i| <= u with probability at least
// P(lambda) = 1 - 2 exp(-lambda^2 (1-u)^2 / 2) (Higham & Mary 2019, Theorem 2.4).
probabilistic gamma_probabilistic(std::uint64_t n, double u, double lambda);

// ---- Summation of n terms ----------------------------------------------------------------------

coefficient recursive_sum(std::uint64_t n, double u);                 // gamma_{n-1}(u)
coefficient pairwise_sum(std::uint64_t n, double u);                  // gamma_{ceil(log2 n)}(u)
// Blocks of b summed recursively, then the block sums summed recursively:
// gamma_{b-1 + ceil(n/b)-1}(u).
coefficient blocked_sum(std::uint64_t n, std::uint64_t b, double u);
// Kahan's compensated summation (Higham Algorithm 4.2). Higham's (4.8) is 2u + O(n u^2); this is
// a closed form derived from the standard model alone (3u + 6 n u^2 + O(u^2) to first orders,
// valid while about 4 n u^2 < 1), so it also holds for directed and stochastic rounding with 2u.
coefficient kahan_sum(std::uint64_t n, double u);
// Neumaier's summation (Kahan-Babuska-Neumaier) with the correction added at the end, round to
// nearest: |E| <= u |s| + gamma_{n-1}(u)^2 S (Ogita, Rump, Oishi 2005, Proposition 4.5). Since
// |s| <= S, the returned coefficient is u + gamma_{n-1}(u)^2, valid iff n u < 1.
coefficient neumaier_sum(std::uint64_t n, double u);
// Chunks of nc terms summed recursively in a low-precision accumulator (u_low), each chunk total
// added recursively into a high-precision accumulator (u_high):
// (1 + gamma_{nc-1}(u_low)) (1 + gamma_{ceil(n/nc)}(u_high)) - 1.
coefficient promoted_sum(std::uint64_t n, std::uint64_t nc, double u_low, double u_high);
// Recursive summation with stochastic rounding; u = 2^-p of the format. The per-operation error
// is < 2u, so the deterministic bound is gamma_{n-1}(2u).
coefficient stochastic_sum_deterministic(std::uint64_t n, double u);
// Connolly, Higham, Mary 2021: |s^ - s| <= lambda sqrt(v gamma_{2n}(v)) S with v = 2u, with
// probability at least 1 - 2 exp(-lambda^2 / 2), independent of n. Needs unbiased stochastic
// rounding (mode stochastic_exact); k-bit stochastic rounding is biased by up to 2^-k ulp.
probabilistic stochastic_sum_probabilistic(std::uint64_t n, double u, double lambda);
// Higham & Mary 2019 applied to recursive summation: gamma~_{n-1}(lambda), probability at least
// 1 - (n-1)(1 - P(lambda)). A statement about their model of independent mean-zero errors.
probabilistic recursive_sum_probabilistic(std::uint64_t n, double u, double lambda);

// ---- Dot products a . b of length n -------------------------------------------------------------

// gamma_n(u) (Higham, section 3.1, eq. (3.5)); covers rounded or exact products, with or
// without FMA, in any summation order.
coefficient dot(std::uint64_t n, double u);
// Higham & Mary 2019, Theorem 3.1: gamma~_n(lambda) with probability at least
// Q(lambda, n) = 1 - n (1 - P(lambda)).
probabilistic dot_probabilistic(std::uint64_t n, double u, double lambda);
// Inputs rounded to a low format (u_in, relative to the exact unrounded inputs), then multiplied
// and accumulated in a format with u_acc:
// 2 u_in + u_in^2 + gamma_n(u_acc) (1 + u_in)^2, relative to sum |a_i b_i| of the exact inputs.
coefficient dot_lowprec_inputs(std::uint64_t n, double u_in, double u_acc);
// A dot product of length n computed as a chain of ceil(n/b) mixed-precision block FMAs
// (Blanchard, Higham, Lopez, Mary, Pranesh 2020): each block takes the accumulator and b exact
// products, sums these b+1 terms in any order with every addition rounded to precision u_int
// (u_int = 0: exact internal sum), and rounds the block result to the accumulator (u_acc):
// (1 + gamma_n(u_int)) (1 + gamma_{ceil(n/b)}(u_acc)) - 1.
coefficient block_fma_dot(std::uint64_t n, std::uint64_t b, double u_int, double u_acc);
// Tensor-core model with alignment and truncation: per block of b products plus the accumulator,
// E is at most floor(log2) of the largest term, every term is truncated toward zero to a
// multiple of 2^(E - frac_bits), the truncated terms are added exactly, and the result is rounded
// to the accumulator (u_acc; pass 2u for RZ). With w = (min(b, n) + 1) 2^-frac_bits:
// (1 + gamma_{ceil(n/b)}(w)) (1 + gamma_{ceil(n/b)}(u_acc)) - 1.
coefficient truncating_block_dot(std::uint64_t n, std::uint64_t b, int frac_bits, double u_acc);
// The same chain where each block maps its terms to t_j (1 + theta_j), |theta_j| <= w, and then
// rounds twice, relatively u_mid (0: once) and u_acc:
// (1 + gamma_q(w)) (1 + gamma_q(u_mid)) (1 + gamma_q(u_acc)) - 1, q = ceil(n/b). The caller
// derives w for its model (dot_analysis.cpp, block_model_bound).
coefficient staged_block_dot(std::uint64_t n, std::uint64_t b, double w, double u_mid, double u_acc);

// ---- Bounds next to measured errors --------------------------------------------------------------

// One bound next to a measured error: absolute = coefficient * S, rounded up (+inf when not
// valid), S the sum of magnitudes the coefficient multiplies.
struct bound_line {
  std::string name;
  double coefficient = 0;
  double absolute = 0;
  bool valid = false;
  std::string condition;
  double probability = 1.0;  // < 1 for probabilistic bounds
};
bound_line make_bound_line(const coefficient& c, double scale, double probability = 1.0);
// Voids a valid line where the data break its model: "; not valid here: <why>" is appended.
void invalidate(bound_line& line, const std::string& why);

// ---- Outward-rounded arithmetic on nonnegative doubles -------------------------------------------
// For callers that compose bounds of their own: each result is the exact value rounded up
// (down for *_down), computed from the nearest result and its exact error, without touching the
// rounding mode.
double next_up(double x);
double add_up(double a, double b);
double sub_down(double a, double b);
double mul_up(double a, double b);
double div_up(double a, double b);
double compose_up(double a, double b);  // (1 + a)(1 + b) - 1

}  // namespace fpemu::bounds
