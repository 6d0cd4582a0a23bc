// analysis/casgd/cost_model: Table 2 of Devarakonda et al. 2026 (the alpha-beta-gamma costs of s
// SGD steps against one outer CA-SGD iteration) and its crossover, against values computed by
// hand from the paper's table and Equation 2, the paper's crossover equation written out here,
// and a brute-force search over s.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "analysis/casgd/cost_model.hpp"
#include "analysis/casgd/precision.hpp"

namespace fc = fpemu::casgd;

namespace {

bool close(double a, double b, double rel = 1e-14) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

// The paper's crossover equation (Section 4.2) as T_SGD - T_CA, with beta per Gram word = beta x
// its bytes and gamma for the Gram GEMM = gamma / its speedup:
//   alpha (s-1) 2 log2 P - gamma_G 2 (sb)^2 n_loc - gamma b^2 s(s-1) - beta_G (sb)^2 2(P-1)/P.
double paper_difference(double b, double s, double P, double n_loc, const fc::machine_costs& m,
                        const fc::cost_precisions& p) {
  const double sb = s * b;
  return m.alpha * (s - 1) * 2 * std::log2(P) - m.gamma / p.gram_speedup * 2 * sb * sb * n_loc -
         m.gamma * b * b * s * (s - 1) - m.beta * p.gram_bytes * sb * sb * 2 * (P - 1) / P;
}

}  // namespace

TEST_CASE("table_2: b=2 s=3 P=4 n_loc=5 == Table 2 and Equation 2 by hand") {
  // alpha 1e-6 s, beta 1e-9 s/byte, gamma 1e-12 s/flop; bf16 margin words (2 bytes), fp32 Gram
  // words (4 bytes), Gram at 16x. 2 log2 P = 4, 2(P-1)/P = 1.5, sb = 6.
  const fc::machine_costs m{1e-6, 1e-9, 1e-12};
  const fc::cost_precisions p{2, 4, 16};
  const fc::table_2_costs t = fc::table_2(2, 3, 4, 5, m, p);
  // SGD: F = 4 s b n_loc = 120, W = sb = 6, L = s = 3.
  CHECK(t.sgd.flops_gemv == 120);
  CHECK(t.sgd.flops_gram == 0);
  CHECK(t.sgd.flops_correction == 0);
  CHECK(t.sgd.words_margin == 6);
  CHECK(t.sgd.words_gram == 0);
  CHECK(t.sgd.messages == 3);
  CHECK(close(t.sgd.time_gamma, 1.2e-10));      // 1e-12 x 120
  CHECK(close(t.sgd.time_beta, 1.8e-8));        // 1e-9 x 2 bytes x 6 words x 1.5
  CHECK(close(t.sgd.time_alpha, 1.2e-5));       // 1e-6 x 3 messages x 4
  CHECK(close(t.sgd.total, 1.201812e-5));
  // CA-SGD: F = 2(sb)^2 n_loc + b^2 s(s-1) + 4 s b n_loc = 360 + 24 + 120, W = 6 + 36, L = 1.
  CHECK(t.ca.flops_gram == 360);
  CHECK(t.ca.flops_correction == 24);
  CHECK(t.ca.flops_gemv == 120);
  CHECK(t.ca.words_margin == 6);
  CHECK(t.ca.words_gram == 36);
  CHECK(t.ca.messages == 1);
  CHECK(close(t.ca.time_gamma, 1.665e-10));     // 1e-12 (120 + 24) + 1e-12 / 16 x 360
  CHECK(close(t.ca.time_beta, 2.34e-7));        // 1e-9 (2 x 6 + 4 x 36) x 1.5
  CHECK(close(t.ca.time_alpha, 4e-6));          // 1e-6 x 1 x 4
  CHECK(close(t.ca.total, 4.2341665e-6));
}

TEST_CASE("table_2: T_SGD - T_CA == the paper's crossover equation (300 random machines and shapes)") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, unit(rng)); };
  int checked = 0;
  for (int k = 0; k < 300; ++k) {
    const std::int64_t b = 1 + static_cast<std::int64_t>(rng() % 64), s = 1 + static_cast<std::int64_t>(rng() % 300);
    const std::int64_t P = 1 + static_cast<std::int64_t>(rng() % 512), n = 1 + static_cast<std::int64_t>(rng() % 20000);
    const fc::machine_costs m{log_uniform(1e-7, 1e-4), log_uniform(1e-12, 1e-8), log_uniform(1e-15, 1e-10)};
    const fc::cost_precisions p{static_cast<double>(1 << (rng() % 4)), static_cast<double>(1 << (rng() % 4)),
                                log_uniform(0.5, 32)};
    const fc::table_2_costs t = fc::table_2(b, s, P, n, m, p);
    const double want = paper_difference(static_cast<double>(b), static_cast<double>(s), static_cast<double>(P),
                                         static_cast<double>(n), m, p);
    // The difference cancels the GEMV and margin terms: compare to the size of the totals.
    CHECK(std::abs((t.sgd.total - t.ca.total) - want) <= 1e-13 * (t.sgd.total + t.ca.total));
    ++checked;
  }
  CHECK(checked == 300);
}

TEST_CASE("crossover_of == brute-force search over s (400 random machines and shapes); s* is 2 or none") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, unit(rng)); };
  constexpr std::int64_t search = 20000;
  int with_crossover = 0, without = 0, s_max_compared = 0;
  for (int k = 0; k < 400; ++k) {
    const std::int64_t b = 1 + static_cast<std::int64_t>(rng() % 64);
    const std::int64_t P = 1 + static_cast<std::int64_t>(rng() % 512), n = 1 + static_cast<std::int64_t>(rng() % 20000);
    const fc::machine_costs m{log_uniform(1e-8, 1e-4), log_uniform(1e-13, 1e-8), log_uniform(1e-16, 1e-10)};
    const fc::cost_precisions p{2, static_cast<double>(1 << (rng() % 4)), log_uniform(0.5, 32)};
    std::int64_t first = 0, last = 0;
    for (std::int64_t s = 2; s <= search; ++s)
      if (paper_difference(static_cast<double>(b), static_cast<double>(s), static_cast<double>(P), static_cast<double>(n),
                           m, p) > 0) {
        if (first == 0) first = s;
        last = s;
      }
    const fc::crossover c = fc::crossover_of(b, P, n, m, p);
    if (first == 0) {
      CHECK_FALSE(c.s_star.has_value());
      ++without;
      continue;
    }
    ++with_crossover;
    REQUIRE(c.s_star.has_value());
    CHECK(*c.s_star == first);
    CHECK(first == 2);  // the interval of cheaper s always starts at 2 (cost_model.hpp)
    CHECK(c.root_lo <= 2);
    if (last < search) {
      CHECK(c.s_max == static_cast<double>(last));
      CHECK(c.root_hi >= static_cast<double>(last));
      CHECK(c.root_hi <= static_cast<double>(last + 1));
      ++s_max_compared;
    } else {
      CHECK(c.s_max >= static_cast<double>(search));
    }
    // table_2's own totals agree at both ends.
    const fc::table_2_costs at_first = fc::table_2(b, first, P, n, m, p), at_last = fc::table_2(b, last, P, n, m, p);
    CHECK(at_first.ca.total < at_first.sgd.total);
    CHECK(at_last.ca.total < at_last.sgd.total);
  }
  CHECK(with_crossover + without == 400);
  CHECK(with_crossover >= 50);
  CHECK(without >= 50);
  CHECK(s_max_compared >= 50);
}

TEST_CASE("crossover_of: no latency (P = 1 or alpha = 0) is never cheaper; no bandwidth or flops is always") {
  const fc::cost_precisions p{4, 4, 1};
  CHECK_FALSE(fc::crossover_of(8, 1, 100, {1e-5, 1e-10, 1e-12}, p).s_star.has_value());
  CHECK_FALSE(fc::crossover_of(8, 16, 100, {0, 1e-10, 1e-12}, p).s_star.has_value());
  const fc::crossover free = fc::crossover_of(8, 16, 100, {1e-5, 0, 0}, p);
  REQUIRE(free.s_star.has_value());
  CHECK(*free.s_star == 2);
  CHECK(std::isinf(free.s_max));
}

TEST_CASE("cost_precisions_of Table 3's recipes: word bytes from u_AR_r and u_AR_G, Gram speedup from u_G") {
  const auto of = [](char r) { return fc::cost_precisions_of(*fc::recipe(r)); };
  const fc::cost_precisions A = of('A'), C = of('C'), D = of('D'), F = of('F'), G = of('G');
  CHECK((A.margin_bytes == 4 && A.gram_bytes == 4 && A.gram_speedup == 1));   // f everywhere
  CHECK((C.margin_bytes == 2 && C.gram_bytes == 4 && C.gram_speedup == 16));  // bf16 margin AR, fp32 Gram AR, b
  CHECK((D.margin_bytes == 2 && D.gram_bytes == 2 && D.gram_speedup == 16));  // D casts the Gram AR to bf16
  CHECK((F.margin_bytes == 2 && F.gram_speedup == 16));                       // ha: fp16 in, fp16 accumulation
  CHECK((G.margin_bytes == 4 && G.gram_speedup == 8));                        // t: tf32 tensor cores
  CHECK(fc::word_bytes(fc::binary64) == 8);
  CHECK(fc::word_bytes(*fc::parse_precision("e4m3fn")) == 1);
  CHECK(fc::word_bytes(*fc::parse_precision("tf32")) == 4);
  CHECK(fc::gram_speedup(fc::all_binary64().G) == 0.5);
}

TEST_CASE("crossover_of: a cheaper Gram (Recipe D against A) widens the range of s where CA-SGD pays") {
  // P = 64 ranks of n_loc = 4096 columns, b = 8, the default machine: the Gram terms dominate
  // the right-hand side of the crossover equation, and mixed precision moves s_max up.
  const fc::machine_costs m;
  const fc::crossover a = fc::crossover_of(8, 64, 4096, m, fc::cost_precisions_of(*fc::recipe('A')));
  const fc::crossover d = fc::crossover_of(8, 64, 4096, m, fc::cost_precisions_of(*fc::recipe('D')));
  REQUIRE((a.s_star.has_value() && d.s_star.has_value()));
  CHECK(d.s_max > 1.5 * a.s_max);
  CHECK(d.root_lo < a.root_lo);  // and the real crossover below 2 moves to smaller s, as the paper says
}
