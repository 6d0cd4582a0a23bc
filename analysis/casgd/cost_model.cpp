// Table 2 and the crossover s* of Devarakonda et al. 2026 (Section 4.2); see cost_model.hpp.
#include "analysis/casgd/cost_model.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace fpemu::casgd {

double word_bytes(const precision& p) {
  if (!p.fmt) return 8;
  const int bits = width(*p.fmt);
  return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
}

double gram_speedup(const kernel_precision& k) {
  if (!k.input.fmt || !k.acc) return 0.5;
  if (k.acc->kind == accumulator_kind::format && width(k.acc->acc) > 32) return 0.5;
  const int bits = width(*k.input.fmt);
  return bits > 19 ? 1 : bits > 16 ? 8 : 16;
}

cost_precisions cost_precisions_of(const slots& s) {
  return {word_bytes(s.AR_r), word_bytes(s.AR_G), gram_speedup(s.G)};
}

namespace {

double two_log2(std::int64_t P) { return 2 * std::log2(static_cast<double>(P)); }
double ring_factor(std::int64_t P) { return 2.0 * static_cast<double>(P - 1) / static_cast<double>(P); }

void total(side_cost& c, const machine_costs& m, const cost_precisions& p, std::int64_t P) {
  c.time_gamma = m.gamma * (c.flops_gemv + c.flops_correction) + m.gamma / p.gram_speedup * c.flops_gram;
  c.time_beta = m.beta * (p.margin_bytes * c.words_margin + p.gram_bytes * c.words_gram) * ring_factor(P);
  c.time_alpha = m.alpha * c.messages * two_log2(P);
  c.total = c.time_gamma + c.time_beta + c.time_alpha;
}

}  // namespace

table_2_costs table_2(std::int64_t b, std::int64_t s, std::int64_t P, std::int64_t n_loc, const machine_costs& m,
                      const cost_precisions& p) {
  assert(b >= 1 && s >= 1 && P >= 1 && n_loc >= 1 && p.gram_speedup > 0);
  const double bd = static_cast<double>(b), sd = static_cast<double>(s), n = static_cast<double>(n_loc);
  const double sb = sd * bd;
  table_2_costs t;
  t.sgd.flops_gemv = 4 * sb * n;
  t.sgd.words_margin = sb;
  t.sgd.messages = sd;
  t.ca.flops_gemv = 4 * sb * n;
  t.ca.flops_gram = 2 * sb * sb * n;
  t.ca.flops_correction = bd * bd * sd * (sd - 1);
  t.ca.words_margin = sb;
  t.ca.words_gram = sb * sb;
  t.ca.messages = 1;
  total(t.sgd, m, p, P);
  total(t.ca, m, p, P);
  return t;
}

crossover crossover_of(std::int64_t b, std::int64_t P, std::int64_t n_loc, const machine_costs& m,
                       const cost_precisions& p) {
  assert(b >= 1 && P >= 1 && n_loc >= 1 && p.gram_speedup > 0);
  // T_SGD - T_CA = f(s) = la (s - 1) - A s^2 - B s (s - 1)
  //             = -(A + B) s^2 + (la + B) s - la,
  // la = 2 alpha log2 P, A = b^2 (2 n_loc gamma_G + beta_G 2(P-1)/P), B = gamma b^2.
  const double b2 = static_cast<double>(b) * static_cast<double>(b);
  const double la = m.alpha * two_log2(P);
  const double A = b2 * (2 * static_cast<double>(n_loc) * m.gamma / p.gram_speedup + m.beta * p.gram_bytes * ring_factor(P));
  const double B = m.gamma * b2;
  const auto f = [&](double s) { return la * (s - 1) - A * s * s - B * s * (s - 1); };
  crossover c;
  c.root_lo = c.root_hi = std::numeric_limits<double>::quiet_NaN();
  double lo = 1, hi = std::numeric_limits<double>::infinity();
  if (A + B > 0) {
    const double disc = (la + B) * (la + B) - 4 * (A + B) * la;
    if (disc < 0) return c;
    const double root = std::sqrt(disc);
    // Both roots are >= 0 (their product la / (A + B) and sum (la + B) / (A + B) are); the
    // smaller one from the product, which does not cancel.
    hi = ((la + B) + root) / (2 * (A + B));
    lo = hi > 0 ? la / ((A + B) * hi) : 0;
  } else if (!(la > 0)) {
    return c;  // f = 0 for every s: never cheaper
  }
  c.root_lo = lo;
  c.root_hi = hi;
  if (!(la > 0)) return c;  // P = 1 or alpha = 0: no latency to save, f <= 0 for every s
  // f > 0 exactly on (lo, hi); the integers inside it, settled by evaluating f next to the
  // rounded roots (rounding moves a root by far less than 1).
  double first = std::max(2.0, std::floor(lo) + 1);
  while (first > 2 && f(first - 1) > 0) --first;
  while (first <= hi && !(f(first) > 0)) ++first;
  if (!(first <= hi) || !(f(first) > 0)) return c;
  double last = hi;
  if (std::isfinite(hi)) {
    last = std::max(first, std::ceil(hi) - 1);
    while (f(last + 1) > 0) ++last;
    while (last > first && !(f(last) > 0)) --last;
  }
  c.s_star = static_cast<std::int64_t>(first);
  c.s_max = last;
  return c;
}

}  // namespace fpemu::casgd
