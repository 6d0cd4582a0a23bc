// A-priori error bounds for summation and dot products (see bounds.hpp for the conventions).
//
// Papers: Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed. (2002); Higham & Mary,
// SISC 41(5) 2019; Connolly, Higham & Mary, SISC 43(1) 2021; Blanchard, Higham & Mary, SISC 42(3)
// 2020; Blanchard, Higham, Lopez, Mary & Pranesh, SISC 42(3) 2020; Ogita, Rump & Oishi, SISC 26(6)
// 2005. Where a paper gives only a first-order constant, or where its exact statement was not at
// hand, the bound here is derived from the standard model fl(x op y) = (x op y)(1 + d), |d| <= u,
// and the derivation is written next to the function, so the code can be checked without the
// paper.
//
// All arithmetic is on nonnegative doubles and rounded outward: every formula below is increasing
// in the quantities it adds and multiplies and decreasing in its denominators, so computing the
// former rounded up and the latter rounded down yields an upper bound of the real value.
#include "analysis/reference/bounds.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace fpemu::bounds {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this the FMA-based error terms may themselves underflow; there we just step outward.
constexpr double kTiny = 0x1p-900;

double next_down(double x) { return std::nextafter(x, -kInf); }

// ---- Directed arithmetic from round-to-nearest plus the exact error ---------------------------
// The nearest result r and the sign of the exact error (TwoSum, FMA remainder) give the
// correctly rounded upward or downward result, so no global rounding mode is touched.

double two_sum_err(double a, double b, double s) {
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}
double add_ru(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return s;
  return two_sum_err(a, b, s) > 0 ? next_up(s) : s;
}
double sub_rd(double a, double b) {
  const double s = a - b;
  if (!std::isfinite(s)) return s;
  return two_sum_err(a, -b, s) < 0 ? next_down(s) : s;
}
double mul_ru(double a, double b) {  // a, b >= 0
  const double r = a * b;
  if (!std::isfinite(r)) return r;
  if (r < kTiny) return (a == 0 || b == 0) ? 0.0 : next_up(r);
  return std::fma(a, b, -r) > 0 ? next_up(r) : r;
}
double mul_rd(double a, double b) {  // a, b >= 0
  const double r = a * b;
  if (!std::isfinite(r)) return r;
  if (r < kTiny) return r == 0 ? 0.0 : next_down(r);
  return std::fma(a, b, -r) < 0 ? next_down(r) : r;
}
double div_ru(double a, double b) {  // a >= 0, b > 0
  const double r = a / b;
  if (!std::isfinite(r)) return r;
  if (r < kTiny) return a == 0 ? 0.0 : next_up(r);
  // a - r*b is exact for r = RN(a/b); its sign is the sign of a/b - r.
  return std::fma(-r, b, a) > 0 ? next_up(r) : r;
}
double sqrt_ru(double x) {  // x >= 0
  const double r = std::sqrt(x);
  if (r < kTiny) return x == 0 ? 0.0 : next_up(r);
  return std::fma(-r, r, x) > 0 ? next_up(r) : r;
}
// exp and expm1 are not correctly rounded; glibc documents errors of at most a few ulps, and the
// factor 1 + 2^-50 covers 8 ulps.
double expm1_ru(double x) { return mul_ru(std::expm1(x), 1 + 0x1p-50); }
double exp_ru(double x) {
  const double r = mul_ru(std::exp(x), 1 + 0x1p-50);
  return r > 0 ? r : std::numeric_limits<double>::denorm_min();
}

// n as a double, rounded up (exact below 2^53).
double to_double_ru(std::uint64_t n) {
  const double d = static_cast<double>(n);
  if (d >= 0x1p64) return d;
  return static_cast<std::uint64_t>(d) < n ? next_up(d) : d;
}

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}
std::string num(std::uint64_t n) { return std::to_string(n); }

coefficient make_invalid(std::string name, std::string why) {
  return coefficient{kInf, false, std::move(why), std::move(name)};
}
coefficient make_valid(std::string name, double value, std::string condition) {
  return coefficient{value, true, std::move(condition), std::move(name)};
}

// "" when u is a usable bound on a relative error, else the reason.
std::string check_u(double u, const char* what) {
  if (u >= 0 && u < 1) return {};
  return std::string(what) + " = " + num(u) + " is not in [0, 1)";
}

std::uint64_t ceil_div(std::uint64_t n, std::uint64_t b) { return n / b + (n % b != 0 ? 1 : 0); }

// gamma_k(u) with its condition. `k_text` says what k is ("n-1", "ceil(log2 n)", ...).
struct gamma_value {
  double value = kInf;
  bool ok = false;
  std::string condition;
};
gamma_value gamma_of(std::uint64_t k, double u, const std::string& k_text) {
  // "n*u" and "gamma_n" for a plain symbol, "(n-1)*u" and "gamma_{n-1}" for an expression.
  const bool plain = k_text.size() == 1;
  const std::string lhs = plain ? k_text + "*u" : "(" + k_text + ")*u";
  const std::string sub = plain ? "gamma_" + k_text : "gamma_{" + k_text + "}";
  if (k == 0 || u == 0) return {0.0, true, lhs + " = 0 < 1"};
  const double kd = to_double_ru(k);
  // k*u < 1 decided exactly: r = RN(k*u) and the FMA error e give k*u = r + e.
  const double r = kd * u;
  const double e = std::fma(kd, u, -r);
  if (!(r < 1 || (r == 1 && e < 0))) {
    return {kInf, false,
            lhs + " = " + num(r) + " >= 1: " + sub + " is undefined (needs " + lhs +
                " < 1)"};
  }
  const double ku = mul_ru(kd, u);
  const double den = sub_rd(1.0, ku);
  // den <= 0 only when k*u is within an ulp of 1: the bound holds but exceeds 2^52.
  const double g = den > 0 ? div_ru(ku, den) : kInf;
  return {g, true, lhs + " = " + num(r) + " < 1"};
}

// (1 + g1)(1 + g2) - 1 = g1 + g2 + g1 g2.
double compose(double g1, double g2) { return add_ru(add_ru(g1, g2), mul_ru(g1, g2)); }

// lambda > 0, finite.
std::string check_lambda(double lambda) {
  if (lambda > 0 && std::isfinite(lambda)) return {};
  return "lambda = " + num(lambda) + " is not a finite number > 0";
}

// 2 exp(-lambda^2 (1-u)^2 / 2), rounded up: the failure probability 1 - P(lambda) of Higham &
// Mary's Theorem 2.4.
double hm_tail(double u, double lambda) {
  const double omu = sub_rd(1.0, u);
  const double x = mul_rd(mul_rd(lambda, lambda), mul_rd(omu, omu)) * 0.5;  // *0.5 is exact
  return mul_ru(2.0, exp_ru(-x));
}

// gamma~_k(lambda) = exp(lambda sqrt(k) u + k u^2 / (1-u)) - 1, rounded up.
double gamma_tilde(std::uint64_t k, double u, double lambda) {
  const double kd = to_double_ru(k);
  const double lin = mul_ru(mul_ru(lambda, sqrt_ru(kd)), u);
  const double quad = div_ru(mul_ru(kd, mul_ru(u, u)), sub_rd(1.0, u));
  return expm1_ru(add_ru(lin, quad));
}

// A Higham-Mary bound gamma~_k(lambda) that must hold for `events` products at once: by the
// union bound it fails with probability at most events * (1 - P(lambda)).
probabilistic hm_bound(std::uint64_t k, std::uint64_t events, double u, double lambda,
                       const std::string& name) {
  if (auto why = check_u(u, "u"); !why.empty()) return {make_invalid(name, why), 0.0, lambda};
  if (auto why = check_lambda(lambda); !why.empty()) return {make_invalid(name, why), 0.0, lambda};
  if (k == 0) return {make_valid(name, 0.0, "no rounding: exact"), 1.0, lambda};
  const double fail = mul_ru(to_double_ru(events), hm_tail(u, lambda));
  const double prob = std::max(0.0, sub_rd(1.0, fail));
  if (!(prob > 0)) {
    return {make_invalid(name, "probability bound " + num(sub_rd(1.0, fail)) +
                                   " <= 0: the bound says nothing (increase lambda)"),
            0.0, lambda};
  }
  return {make_valid(name, gamma_tilde(k, u, lambda),
                     "independent mean-zero rounding errors (Higham-Mary model); holds with "
                     "probability >= " + num(prob)),
          prob, lambda};
}

}  // namespace

// Higham 2002, Lemma 3.1: if |d_i| <= u, rho_i = +-1 and n u < 1, then
// prod (1 + d_i)^rho_i = 1 + theta_n with |theta_n| <= gamma_n = n u / (1 - n u).
coefficient gamma(std::uint64_t n, double u) {
  const std::string name = "gamma_n(u)";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  auto g = gamma_of(n, u, "n");
  return g.ok ? make_valid(name, g.value, g.condition) : make_invalid(name, g.condition);
}

// Higham & Mary 2019, Theorem 2.4: for independent random d_i of mean zero with |d_i| <= u and
// any lambda > 0, |prod (1 + d_i)^(+-1) - 1| <= gamma~_n(lambda) holds with probability at least
// P(lambda) = 1 - 2 exp(-lambda^2 (1-u)^2 / 2). (The 1 - 2n exp(...) form belongs to results
// that need n such products at once, e.g. their Theorem 3.1; see dot_probabilistic.)
probabilistic gamma_probabilistic(std::uint64_t n, double u, double lambda) {
  return hm_bound(n, 1, u, lambda, "gamma~_n(lambda)");
}

// Higham 2002, section 4.2: recursive summation gives s^ = sum x_i (1 + theta^(i)) with at most
// n-1 factors per term, so |s^ - s| <= gamma_{n-1}(u) sum |x_i|.
coefficient recursive_sum(std::uint64_t n, double u) {
  const std::string name = "gamma_{n-1}(u)";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  if (n <= 1) return make_valid(name, 0.0, "n = " + num(n) + " <= 1: no addition");
  auto g = gamma_of(n - 1, u, "n-1");
  return g.ok ? make_valid(name, g.value, g.condition) : make_invalid(name, g.condition);
}

// Higham 2002, section 4.2: in the balanced pairwise tree (halves of ceil/floor size, or pairs
// of neighbours with an odd one carried up) every term takes part in at most ceil(log2 n)
// additions, so Lemma 3.1 gives gamma_{ceil(log2 n)}. Implementations that sum a base case of
// several terms recursively (as NumPy does) need blocked_sum instead.
coefficient pairwise_sum(std::uint64_t n, double u) {
  const std::string name = "gamma_{ceil(log2 n)}(u)";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  if (n <= 1) return make_valid(name, 0.0, "n = " + num(n) + " <= 1: no addition");
  const auto depth = static_cast<std::uint64_t>(std::bit_width(n - 1));  // ceil(log2 n)
  auto g = gamma_of(depth, u, "ceil(log2 n)");
  return g.ok ? make_valid(name, g.value, g.condition) : make_invalid(name, g.condition);
}

// Blanchard, Higham & Mary 2020, section 2 (blocked summation, bound (b + n/b - 2) u to first
// order): a term takes at most b-1 roundings inside its block and at most q-1 = ceil(n/b)-1 in
// the recursive sum of the q block sums, so gamma_{b-1+q-1}. A block size above n is one block.
coefficient blocked_sum(std::uint64_t n, std::uint64_t b, double u) {
  const std::string name = "gamma_{b-1+ceil(n/b)-1}(u)";
  if (b == 0) return make_invalid(name, "block size b = 0 is not >= 1");
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  if (n <= 1) return make_valid(name, 0.0, "n = " + num(n) + " <= 1: no addition");
  const std::uint64_t be = std::min(b, n);
  auto g = gamma_of(be - 1 + ceil_div(n, be) - 1, u, "b-1+ceil(n/b)-1");
  return g.ok ? make_valid(name, g.value, g.condition) : make_invalid(name, g.condition);
}

// Kahan's compensated summation (Higham 2002, Algorithm 4.2):
//   s_1 = x_1, e_1 = 0; for i = 2..n: y_i = fl(x_i + e_{i-1}), s_i = fl(s_{i-1} + y_i),
//   e_i = fl(fl(s_{i-1} - s_i) + y_i); return s_n.
// Higham's (4.8) |E_n| <= (2u + O(n u^2)) sum|x_i| (from Knuth, TAOCP vol. 2, 4.2.2) has no
// explicit O(n u^2) constant, and its 2u uses round-to-nearest exactness arguments. This is a
// closed form from the standard model alone (so it holds for any rounding with |d| <= u):
//   Let y_i = (x_i + e_{i-1})(1 + eta_i), t_i = s_{i-1} + y_i - s_i (|t_i| <= u|s_{i-1} + y_i|),
//   fl(s_{i-1} - s_i) = (t_i - y_i)(1 + beta_i), e_i = (t_i + beta_i (t_i - y_i))(1 + g_i).
//   Then |e_i| <= (1+u)^2 |t_i| + u(1+u)|y_i| and eps_i := e_i - t_i satisfies
//   |eps_i| <= u(2+u)|t_i| + u(1+u)|y_i|. With S_i = x_1 + ... + x_i and r_i = s_i + e_i - S_i:
//   r_1 = 0, r_i = r_{i-1} + eta_i (x_i + e_{i-1}) + eps_i, s_{i-1} + y_i = S_i + r_{i-1} +
//   eta_i (x_i + e_{i-1}), and the result is s_n - S_n = r_{n-1} + eta_n (x_n + e_{n-1}) - t_n.
//   Induction on i <= n-1 with |e_i| <= E S, |r_i| <= R S, |t_i| <= T S (S = sum|x_j|,
//   m = n-2, a = u + u(1+u)^2 the coefficient of |x_k| and |e_{k-1}| in |r_i|) closes when
//     T = u (1 + u + R + u E),  E = (1+u)^2 (T + u + u E),  R = a + m (a E + u(2+u) T),
//   a linear system: with p = (1+u)^2 / (1 - u(1+u)^2), E = p (T + u) and
//     T = [u(1+u) + u a + m a p u^2 + u^3 p] / [1 - m u (a p + u(2+u)) - u^2 p].
//   The final step gives |s_n - S_n| <= (R + u E + T) S (the |x_k| terms still sum to <= a S).
// To first orders this is 3u + 6 n u^2; it is valid while both denominators are positive (about
// 4 n u^2 < 1: n < 16384 for bf16, 2^20 for fp16), which is far beyond gamma_{n-1}'s n u < 1.
coefficient kahan_sum(std::uint64_t n, double u) {
  const std::string name = "kahan_bound(n,u) = 3u + 6nu^2 + ...";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  if (n <= 1) return make_valid(name, 0.0, "n = " + num(n) + " <= 1: no addition");
  // n = 2: y_2 = x_2 exactly (e_1 = 0) and s_2 = fl(x_1 + x_2), one rounding.
  if (n == 2) return make_valid(name, u, "n = 2: one rounding");
  const double opu = add_ru(1.0, u);
  const double opu2 = mul_ru(opu, opu);
  const double u2 = mul_ru(u, u);
  const double a = add_ru(u, mul_ru(u, opu2));
  const double d1 = sub_rd(1.0, mul_ru(u, opu2));
  if (!(d1 > 0)) return make_invalid(name, "u(1+u)^2 >= 1 for u = " + num(u));
  const double p = div_ru(opu2, d1);
  const double md = to_double_ru(n - 2);
  const double u2pu = mul_ru(u, add_ru(2.0, u));  // u(2+u)
  const double numer = add_ru(add_ru(mul_ru(u, opu), mul_ru(u, a)),
                              add_ru(mul_ru(mul_ru(md, mul_ru(a, p)), u2), mul_ru(mul_ru(u2, u), p)));
  const double load = add_ru(mul_ru(mul_ru(md, u), add_ru(mul_ru(a, p), u2pu)), mul_ru(u2, p));
  const double d2 = sub_rd(1.0, load);
  const std::string cond = "(n-2)u(a p + u(2+u)) + u^2 p = " + num(load);
  if (!(d2 > 0)) return make_invalid(name, cond + " >= 1: Kahan bound undefined (needs < 1, about 4 n u^2 < 1)");
  const double T = div_ru(numer, d2);
  const double E = mul_ru(p, add_ru(T, u));
  const double R = add_ru(a, mul_ru(md, add_ru(mul_ru(a, E), mul_ru(u2pu, T))));
  return make_valid(name, add_ru(add_ru(R, mul_ru(u, E)), T), cond + " < 1");
}

// Neumaier 1974 (Kahan-Babuska-Neumaier): s_i = fl(s_{i-1} + x_i) with its exact error from
// FastTwoSum on the larger-magnitude operand, errors summed recursively in c, result fl(s + c).
// In round to nearest this computes exactly the same as Sum2 of Ogita, Rump & Oishi 2005
// (cascaded TwoSum), whose Proposition 4.5 states, for n u < 1 (also with underflow),
//   |res - s| <= u |s| + gamma_{n-1}(u)^2 sum|x_i|.
// |s| <= sum|x_i| folds this into one coefficient u + gamma_{n-1}^2 of sum|x_i|; callers with a
// known |s| << sum|x| may use u|s| + (value - u) sum|x| instead. Directed or stochastic rounding
// breaks the error-free transformations: there this bound does not apply.
coefficient neumaier_sum(std::uint64_t n, double u) {
  const std::string name = "u + gamma_{n-1}(u)^2";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  if (n <= 1) return make_valid(name, 0.0, "n = " + num(n) + " <= 1: no addition");
  auto hyp = gamma_of(n, u, "n");  // the proposition's hypothesis n u < 1
  if (!hyp.ok) return make_invalid(name, hyp.condition + " (Ogita-Rump-Oishi Prop. 4.5 needs n*u < 1)");
  auto g = gamma_of(n - 1, u, "n-1");
  return make_valid(name, add_ru(u, mul_ru(g.value, g.value)), hyp.condition + "; round to nearest only");
}

// Two-level summation: each term takes at most nc-1 roundings in its chunk (u_low) and the chunk
// total at most q = ceil(n/nc) in the high-precision accumulator (q-1 when it starts at zero;
// one more covers an accumulator with an initial value). Lemma 3.1 applied to each precision
// (as in Higham's Lemma 3.3 for products of such factors) gives
// |prod (1+d_k) - 1| <= (1 + gamma_{nc-1}(u_low))(1 + gamma_q(u_high)) - 1.
coefficient promoted_sum(std::uint64_t n, std::uint64_t nc, double u_low, double u_high) {
  const std::string name = "(1+gamma_{nc-1}(u_low))(1+gamma_{ceil(n/nc)}(u_high))-1";
  if (nc == 0) return make_invalid(name, "chunk size nc = 0 is not >= 1");
  if (auto why = check_u(u_low, "u_low"); !why.empty()) return make_invalid(name, why);
  if (auto why = check_u(u_high, "u_high"); !why.empty()) return make_invalid(name, why);
  if (n == 0) return make_valid(name, 0.0, "n = 0: empty sum");
  const std::uint64_t ne = std::min(nc, n);
  auto g1 = gamma_of(ne - 1, u_low, "nc-1");
  auto g2 = gamma_of(ceil_div(n, ne), u_high, "ceil(n/nc)");
  const std::string cond = g1.condition + "; " + g2.condition;
  if (!g1.ok || !g2.ok) return make_invalid(name, cond);
  return make_valid(name, compose(g1.value, g2.value), cond);
}

// Stochastic rounding lands on one of the two neighbours of x, both within ulp(x) <= 2u|x|, so
// |d| < 2u per operation and recursive summation gives gamma_{n-1}(2u).
coefficient stochastic_sum_deterministic(std::uint64_t n, double u) {
  const std::string name = "gamma_{n-1}(2u)";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  if (auto why = check_u(2 * u, "2u"); !why.empty()) return make_invalid(name, why);
  if (n <= 1) return make_valid(name, 0.0, "n = " + num(n) + " <= 1: no addition");
  auto g = gamma_of(n - 1, 2 * u, "n-1");
  return g.ok ? make_valid(name, g.value, g.condition + " (with 2u)") : make_invalid(name, g.condition + " (with 2u)");
}

// Connolly, Higham & Mary 2021, section 4 (recursive summation with stochastic rounding): the
// bound lambda sqrt(u gamma_{2n}(u)) sum|x_i| with probability at least 1 - 2 exp(-lambda^2/2),
// for errors |d| <= u that are mean independent (E[d_k | d_1..d_{k-1}] = 0, which unbiased SR
// gives). Their text was not at hand when this was written, so here is the argument, with
// v = 2u the SR bound: the forward error E_k = s^_k - S_k is a martingale, E_k - E_{k-1} =
// d_k (s^_{k-1} + x_k), and |s^_{k-1} + x_k| <= (1+v)^(k-2) S deterministically. Azuma-Hoeffding
// with c_k = v (1+v)^(k-2) S gives |E_n| <= lambda sqrt(sum c_k^2) with probability >=
// 1 - 2 exp(-lambda^2/2), and sum_{k=2..n} c_k^2 = v S^2 ((1+v)^(2n-2) - 1) / (2 + v)
// <= v gamma_{2n}(v) S^2. So the paper's form with v = 2u is a rigorous bound (looser than the
// argument needs by about sqrt(2)); it needs 2n v < 1.
probabilistic stochastic_sum_probabilistic(std::uint64_t n, double u, double lambda) {
  const std::string name = "lambda*sqrt(2u*gamma_{2n}(2u))";
  if (auto why = check_u(u, "u"); !why.empty()) return {make_invalid(name, why), 0.0, lambda};
  if (auto why = check_u(2 * u, "2u"); !why.empty()) return {make_invalid(name, why), 0.0, lambda};
  if (auto why = check_lambda(lambda); !why.empty()) return {make_invalid(name, why), 0.0, lambda};
  if (n <= 1) return {make_valid(name, 0.0, "n <= 1: no addition"), 1.0, lambda};
  if (n > (std::uint64_t{1} << 62)) return {make_invalid(name, "n = " + num(n) + " is too large"), 0.0, lambda};
  const double v = 2 * u;
  auto g = gamma_of(2 * n, v, "2n");
  const double fail = mul_ru(2.0, exp_ru(-mul_rd(lambda, lambda) * 0.5));
  const double prob = sub_rd(1.0, fail);
  if (!g.ok) return {make_invalid(name, g.condition + " (with v = 2u)"), 0.0, lambda};
  if (!(prob > 0)) return {make_invalid(name, "1 - 2exp(-lambda^2/2) = " + num(prob) + " <= 0: increase lambda"), 0.0, lambda};
  const double c = mul_ru(lambda, sqrt_ru(mul_ru(v, g.value)));
  return {make_valid(name, c, g.condition + " (with v = 2u); unbiased SR; probability >= " + num(prob)),
          prob, lambda};
}

// Higham & Mary 2019 for recursive summation: term x_i carries a product of at most n-1 factors,
// and there are n-1 distinct products (x_1 and x_2 share one), hence the union bound.
probabilistic recursive_sum_probabilistic(std::uint64_t n, double u, double lambda) {
  if (n <= 1) return hm_bound(0, 0, u, lambda, "gamma~_{n-1}(lambda)");
  return hm_bound(n - 1, n - 1, u, lambda, "gamma~_{n-1}(lambda)");
}

// Higham 2002, section 3.1, eq. (3.5): |a.b - fl(a.b)| <= gamma_n(u) sum|a_i b_i| (each product
// carries its own rounding and at most n-1 addition roundings; fewer with an FMA or exact
// products, so the bound covers those too, in any order).
coefficient dot(std::uint64_t n, double u) {
  const std::string name = "gamma_n(u)";
  if (auto why = check_u(u, "u"); !why.empty()) return make_invalid(name, why);
  auto g = gamma_of(n, u, "n");
  return g.ok ? make_valid(name, g.value, g.condition) : make_invalid(name, g.condition);
}

// Higham & Mary 2019, Theorem 3.1 (inner products): |delta a| <= gamma~_n(lambda)|a| with
// probability at least Q(lambda, n) = 1 - n (1 - P(lambda)).
probabilistic dot_probabilistic(std::uint64_t n, double u, double lambda) {
  return hm_bound(n, n, u, lambda, "gamma~_n(lambda)");
}

// a^_i = a_i (1 + alpha_i), b^_i = b_i (1 + beta_i), |alpha|, |beta| <= u_in. Then
// |a^.b^ - a.b| <= sum |a_i b_i| |(1+alpha_i)(1+beta_i) - 1| <= (2u_in + u_in^2) sum|a_i b_i|,
// and the dot of the rounded inputs errs by at most gamma_n(u_acc) sum|a^_i b^_i| <=
// gamma_n(u_acc)(1+u_in)^2 sum|a_i b_i|. To first order 2u_in + n u_acc, the form of the
// input-conversion term 2u_low + u_low^2 in Blanchard et al. 2020.
coefficient dot_lowprec_inputs(std::uint64_t n, double u_in, double u_acc) {
  const std::string name = "2u_in+u_in^2+gamma_n(u_acc)(1+u_in)^2";
  if (auto why = check_u(u_in, "u_in"); !why.empty()) return make_invalid(name, why);
  if (auto why = check_u(u_acc, "u_acc"); !why.empty()) return make_invalid(name, why);
  if (n == 0) return make_valid(name, 0.0, "n = 0: empty dot product");
  auto g = gamma_of(n, u_acc, "n");
  if (!g.ok) return make_invalid(name, g.condition + " (with u_acc)");
  const double opu = add_ru(1.0, u_in);
  const double in = add_ru(mul_ru(2.0, u_in), mul_ru(u_in, u_in));
  return make_valid(name, add_ru(in, mul_ru(g.value, mul_ru(opu, opu))), g.condition + " (with u_acc)");
}

// Blanchard, Higham, Lopez, Mary & Pranesh 2020: a block FMA D = C + AB with exact products whose
// b+1 terms are summed in precision u and the result rounded to u_FMA; matrix multiplication by a
// chain of n/b such block FMAs has, to first order, error (n u + (n/b) u_FMA)|A||B| (plus
// 2u_low + u_low^2 when A and B are first rounded; see dot_lowprec_inputs). Derived here under
// their model, to all orders: block k sums m_k products and the incoming accumulator (m_k + 1
// terms, m_k additions) in any order, so a term goes through at most m_k internal roundings, then
// one rounding to u_acc. Even adding the first block's zero accumulator rounds: an exact product
// (2p bits) need not fit the internal precision (the tests found this double rounding when the
// bound used n-1). A product of the first block therefore meets at most m_1 + ... + m_q = n
// internal and q = ceil(n/b) accumulator roundings, a later block fewer, and
// |prod - 1| <= (1 + gamma_n(u_int))(1 + gamma_q(u_acc)) - 1.
coefficient block_fma_dot(std::uint64_t n, std::uint64_t b, double u_int, double u_acc) {
  const std::string name = "(1+gamma_n(u_int))(1+gamma_{ceil(n/b)}(u_acc))-1";
  if (b == 0) return make_invalid(name, "block size b = 0 is not >= 1");
  if (auto why = check_u(u_int, "u_int"); !why.empty()) return make_invalid(name, why);
  if (auto why = check_u(u_acc, "u_acc"); !why.empty()) return make_invalid(name, why);
  if (n == 0) return make_valid(name, 0.0, "n = 0: empty dot product");
  const std::uint64_t be = std::min(b, n);
  auto g1 = gamma_of(n, u_int, "n");
  auto g2 = gamma_of(ceil_div(n, be), u_acc, "ceil(n/b)");
  const std::string cond = g1.condition + " (with u_int); " + g2.condition + " (with u_acc)";
  if (!g1.ok || !g2.ok) return make_invalid(name, cond);
  return make_valid(name, compose(g1.value, g2.value), cond);
}

// Alignment-and-truncation model of tensor cores (the register of NVIDIA's FP8/FP16 tensor cores
// aligns the b products and the accumulator to the largest exponent, keeps frac_bits bits below
// it, and adds). Derivation: 2^E <= max|t_j| (E is floor(log2) of the largest term, or any lower
// reference such as the sum of the operands' exponents, since |a b| >= 2^(e_a + e_b)). A term
// truncated toward zero to a multiple of 2^(E-F) loses less than min(|t_j|, 2^(E-F)), so the k
// terms of a block lose less than k 2^(E-F) <= k 2^-F max|t_j| <= w sum|t_j|, w = k 2^-F, with
// k <= min(b, n) + 1. An absolute error below w sum|t_j| is sum t_j theta_j with |theta_j| <= w
// (theta_j = Delta sign(t_j) / sum|t_j|), so a block maps its terms to t_j (1 + theta_j)(1 + d),
// |d| <= u_acc. The accumulator carries earlier terms into later blocks, so a product meets at
// most q = ceil(n/b) such pairs of factors: |prod - 1| <= (1+w)^q (1+u_acc)^q - 1
// <= (1 + gamma_q(w))(1 + gamma_q(u_acc)) - 1.
coefficient truncating_block_dot(std::uint64_t n, std::uint64_t b, int frac_bits, double u_acc) {
  const std::string name = "(1+gamma_q(w))(1+gamma_q(u_acc))-1, q=ceil(n/b), w=(b+1)2^-F";
  if (b == 0) return make_invalid(name, "block size b = 0 is not >= 1");
  if (frac_bits < 0 || frac_bits > 1000) {
    return make_invalid(name, "frac_bits = " + std::to_string(frac_bits) + " is not in [0, 1000]");
  }
  if (auto why = check_u(u_acc, "u_acc"); !why.empty()) return make_invalid(name, why);
  if (n == 0) return make_valid(name, 0.0, "n = 0: empty dot product");
  const std::uint64_t be = std::min(b, n);
  const std::uint64_t q = ceil_div(n, be);
  const double w = mul_ru(to_double_ru(be + 1), std::ldexp(1.0, -frac_bits));
  if (!(w < 1)) return make_invalid(name, "w = (b+1)*2^-F = " + num(w) + " >= 1: truncation can lose a whole block");
  auto g1 = gamma_of(q, w, "ceil(n/b)");
  auto g2 = gamma_of(q, u_acc, "ceil(n/b)");
  const std::string cond = g1.condition + " (with w = " + num(w) + "); " + g2.condition + " (with u_acc)";
  if (!g1.ok || !g2.ok) return make_invalid(name, cond);
  return make_valid(name, compose(g1.value, g2.value), cond);
}

coefficient staged_block_dot(std::uint64_t n, std::uint64_t b, double w, double u_mid, double u_acc) {
  const std::string name = "(1+gamma_q(w))(1+gamma_q(u_mid))(1+gamma_q(u_acc))-1, q=ceil(n/b)";
  if (b == 0) return make_invalid(name, "block size b = 0 is not >= 1");
  if (!(w >= 0 && w < 1)) return make_invalid(name, "w = " + num(w) + " is not in [0, 1): alignment can lose a whole block");
  if (u_mid != 0)
    if (auto why = check_u(u_mid, "u_mid"); !why.empty()) return make_invalid(name, why);
  if (auto why = check_u(u_acc, "u_acc"); !why.empty()) return make_invalid(name, why);
  if (n == 0) return make_valid(name, 0.0, "n = 0: empty dot product");
  const std::uint64_t q = ceil_div(n, std::min(b, n));
  auto g1 = gamma_of(q, w, "ceil(n/b)");
  auto g2 = gamma_of(q, u_mid, "ceil(n/b)");
  auto g3 = gamma_of(q, u_acc, "ceil(n/b)");
  const std::string cond = g1.condition + " (with w = " + num(w) + "); " + g2.condition + " (with u_mid = " +
                           num(u_mid) + "); " + g3.condition + " (with u_acc)";
  if (!g1.ok || !g2.ok || !g3.ok) return make_invalid(name, cond);
  return make_valid(name, compose(compose(g1.value, g2.value), g3.value), cond);
}

bound_line make_bound_line(const coefficient& c, double scale, double probability) {
  bound_line line{c.name, c.value, kInf, c.valid, c.condition, probability};
  if (!(scale >= 0)) {
    line.valid = false;
    line.condition = "scale = " + num(scale) + " is not >= 0";
    return line;
  }
  if (c.valid) line.absolute = mul_ru(c.value, scale);
  return line;
}

void invalidate(bound_line& line, const std::string& why) {
  if (!line.valid) return;
  line.valid = false;
  line.absolute = kInf;
  line.condition += "; not valid here: " + why;
}

double next_up(double x) { return std::nextafter(x, kInf); }
double add_up(double a, double b) { return add_ru(a, b); }
double sub_down(double a, double b) { return sub_rd(a, b); }
double mul_up(double a, double b) { return mul_ru(a, b); }
double div_up(double a, double b) { return div_ru(a, b); }
double compose_up(double a, double b) { return compose(a, b); }

}  // namespace fpemu::bounds
