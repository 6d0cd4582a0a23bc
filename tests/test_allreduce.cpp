// AllReduce in an emulated datatype (analysis/casgd/allreduce.hpp): each algorithm's grouping against
// expressions written out by hand for small P, on data where the groupings give different bf16
// and fp16 results (counted, so the check is known to discriminate); exact integer sums in
// binary64 for P = 1..40; the input cast; error messages; the simulated collective; and C(P):
// reproducible per seed and never above the deterministic bound of the grouping.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/casgd/allreduce.hpp"
#include "fpemu/format.hpp"
#include "fpemu/spec.hpp"

using fpemu::expected;
using fpemu::format;
using fpemu::to_string;
namespace formats = fpemu::formats;
using namespace fpemu::casgd;

namespace {

using vectors = std::vector<std::vector<double>>;

constexpr std::array<allreduce_algorithm, 4> kAlgorithms = {
    allreduce_algorithm::ring, allreduce_algorithm::recursive_doubling, allreduce_algorithm::tree,
    allreduce_algorithm::sequential};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  return true;
}

std::vector<double> run(const vectors& v, allreduce_algorithm a, const precision& d) {
  const expected<std::vector<double>> r = allreduce(v, a, d);
  REQUIRE_MESSAGE(r.has_value(), r.message());
  return r.value();
}

// The expected result of one element, written from the header's description for the P used in
// the tests. r[p] is rank p's value already cast into the datatype; A is one rounded addition.
struct expect {
  const precision& d;
  double A(double a, double b) const { return add_in(d, a, b); }

  double seq(const std::vector<double>& r) const {
    double acc = r[0];
    for (std::size_t p = 1; p < r.size(); ++p) acc = A(acc, r[p]);
    return acc;
  }
  // Element i of L: its chunk c is the one with c L / P <= i < (c+1) L / P; the sum starts at
  // rank c and goes round the ring.
  double ring(const std::vector<double>& r, std::size_t i, std::size_t L) const {
    const std::size_t P = r.size();
    std::size_t c = 0;
    while (!((c * L) / P <= i && i < ((c + 1) * L) / P)) ++c;
    double acc = r[c];
    for (std::size_t j = 1; j < P; ++j) acc = A(acc, r[(c + j) % P]);
    return acc;
  }
  double rd(const std::vector<double>& v) const {
    switch (v.size()) {
      case 3: return A(A(v[0], v[2]), v[1]);                                 // P' = 2: rank 2 folds into 0
      case 5: return A(A(A(v[0], v[4]), v[1]), A(v[2], v[3]));               // P' = 4
      case 6: return A(A(A(v[0], v[4]), A(v[1], v[5])), A(v[2], v[3]));      // P' = 4
      case 8: return A(A(A(v[0], v[1]), A(v[2], v[3])), A(A(v[4], v[5]), A(v[6], v[7])));
      default: FAIL("no hand-written rd expression for P = " << v.size()); return 0;
    }
  }
  double tree(const std::vector<double>& v) const {
    switch (v.size()) {
      case 3: return A(A(v[0], v[1]), v[2]);
      case 5: {
        const double t1 = A(A(v[1], v[3]), v[4]);
        return A(A(v[0], t1), v[2]);
      }
      case 6: {
        const double t1 = A(A(v[1], v[3]), v[4]), t2 = A(v[2], v[5]);
        return A(A(v[0], t1), t2);
      }
      case 8: {
        const double t3 = A(v[3], v[7]);
        const double t1 = A(A(v[1], t3), v[4]), t2 = A(A(v[2], v[5]), v[6]);
        return A(A(v[0], t1), t2);
      }
      default: FAIL("no hand-written tree expression for P = " << v.size()); return 0;
    }
  }
};

// The most roundings any rank's value goes through: the n of the deterministic bound
// |v_hat - v| <= gamma_n(u) sum_p |v_p|.  seq, ring: P - 1. rd: one fold when P is not a power
// of two, then log2 P'. tree: at its own node a value meets up to two additions (left, right
// subtree); its subtree's sum then meets two at the parent when it is the left child of a node
// with a right child, else one; and so on to the root.
int roundings(allreduce_algorithm a, int P) {
  switch (a) {
    case allreduce_algorithm::sequential:
    case allreduce_algorithm::ring: return P - 1;
    case allreduce_algorithm::recursive_doubling: {
      int Pp = 1, levels = 0;
      while (Pp * 2 <= P) {
        Pp *= 2;
        ++levels;
      }
      return levels + (Pp < P ? 1 : 0);
    }
    case allreduce_algorithm::tree: {
      int worst = 0;
      for (int p = 0; p < P; ++p) {
        int n = (2 * p + 1 < P) + (2 * p + 2 < P);
        for (int q = p; q > 0; q = (q - 1) / 2) {
          const int parent = (q - 1) / 2;
          n += (q == 2 * parent + 1 && 2 * parent + 2 < P) ? 2 : 1;
        }
        worst = std::max(worst, n);
      }
      return worst;
    }
  }
  return 0;
}

double gamma_over_u(int n, double u) { return n / (1 - n * u); }

}  // namespace

TEST_CASE("algorithm names") {
  for (const allreduce_algorithm a : kAlgorithms) {
    const expected<allreduce_algorithm> back = parse_allreduce(to_string(a));
    REQUIRE(back.has_value());
    CHECK(*back == a);
  }
  CHECK(to_string(allreduce_algorithm::recursive_doubling) == "rd");
  CHECK(to_string(allreduce_algorithm::sequential) == "seq");
  const expected<allreduce_algorithm> bad = parse_allreduce("butterfly");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.message().find("'butterfly'") != std::string::npos);
  CHECK(bad.message().find("ring, rd, tree or seq") != std::string::npos);
}

TEST_CASE("the tree bound helper counts what the hand-written trees show") {
  // P = 5: v_3 goes (v_1 + v_3), + v_4, then T_1 into (v_0 + T_1), + T_2: 4 roundings.
  CHECK(roundings(allreduce_algorithm::tree, 1) == 0);
  CHECK(roundings(allreduce_algorithm::tree, 3) == 2);
  CHECK(roundings(allreduce_algorithm::tree, 5) == 4);
  CHECK(roundings(allreduce_algorithm::tree, 8) == 5);  // v_7: (v_3 + v_7), then 2 + 2
  CHECK(roundings(allreduce_algorithm::recursive_doubling, 5) == 3);
  CHECK(roundings(allreduce_algorithm::recursive_doubling, 8) == 3);
}

TEST_CASE("each algorithm's grouping, against hand-written expressions on discriminating data") {
  std::mt19937_64 rng(20240917);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> scale(-6, 6);
  int cases = 0;
  for (const format& f : {formats::bf16, formats::fp16}) {
    const precision d = of(f);
    const expect e{d};
    for (const int P : {3, 5, 6, 8}) {
      const std::size_t L = 2 * static_cast<std::size_t>(P) + 1;  // chunks of unequal length
      // differ[{a, b}]: draws on which algorithms a and b give different vectors.
      std::map<std::pair<int, int>, int> differ;
      constexpr int kDraws = 100;
      for (int draw = 0; draw < kDraws; ++draw) {
        // Values off the datatype's grid, over 13 binades: the input cast rounds them and the
        // groupings round differently.
        vectors v(static_cast<std::size_t>(P), std::vector<double>(L));
        for (auto& rank : v)
          for (double& x : rank) x = std::ldexp(normal(rng), scale(rng));
        std::array<std::vector<double>, 4> want;
        for (auto& w : want) w.resize(L);
        for (std::size_t i = 0; i < L; ++i) {
          std::vector<double> r(static_cast<std::size_t>(P));
          for (std::size_t p = 0; p < r.size(); ++p) r[p] = round_to(d, v[p][i]);
          want[0][i] = e.ring(r, i, L);
          want[1][i] = e.rd(r);
          want[2][i] = e.tree(r);
          want[3][i] = e.seq(r);
        }
        for (std::size_t k = 0; k < kAlgorithms.size(); ++k) {
          const std::vector<double> got = run(v, kAlgorithms[k], d);
          CHECK_MESSAGE(same_bits(got, want[k]), to_string(f) << " P = " << P << " "
                                                                << to_string(kAlgorithms[k]) << " draw " << draw);
          ++cases;
          for (std::size_t j = 0; j < k; ++j)
            if (!same_bits(want[j], want[k])) ++differ[{static_cast<int>(j), static_cast<int>(k)}];
        }
      }
      // The check discriminates: every pair of groupings disagrees on many draws, except tree
      // and seq at P = 3, which are the same grouping ((v_0 + v_1) + v_2).
      for (std::size_t k = 0; k < 4; ++k)
        for (std::size_t j = 0; j < k; ++j) {
          const int n = differ[{static_cast<int>(j), static_cast<int>(k)}];
          const bool same_grouping = P == 3 && kAlgorithms[j] == allreduce_algorithm::tree &&
                                     kAlgorithms[k] == allreduce_algorithm::sequential;
          INFO(to_string(f), " P = ", P, " ", to_string(kAlgorithms[j]), " vs ", to_string(kAlgorithms[k]));
          if (same_grouping)
            CHECK(n == 0);
          else
            CHECK(n >= kDraws / 4);
        }
    }
  }
  CHECK(cases == 2 * 4 * 100 * 4);
}

TEST_CASE("ring chunks: c L / P in integer arithmetic, chunk c starting at rank c") {
  // P = 3, L = 7: chunks [0,2), [2,4), [4,7), told apart by the rank each sum starts at.
  const precision bf16 = of(formats::bf16);
  const std::size_t L = 7;
  // In bf16, 1 + 2^-8 rounds (a tie) to 1, so a sum that meets the two 2^-8 terms before the 1
  // keeps them (2^-8 + 2^-8 = 2^-7, then 1 + 2^-7 is exact), one that meets the 1 first loses
  // both. Rank 0 holds 1 everywhere, ranks 1 and 2 hold 2^-8.
  vectors v(3, std::vector<double>(L, std::ldexp(1.0, -8)));
  v[0].assign(L, 1.0);
  const std::vector<double> got = run(v, allreduce_algorithm::ring, bf16);
  const double lost = 1.0, kept = 1.0 + std::ldexp(1.0, -7);
  // chunk 0 (i = 0, 1): (1 + a) + a = 1; chunk 1 (i = 2, 3): (a + a) + 1 = 1 + 2^-7;
  // chunk 2 (i = 4, 5, 6): (a + 1) + a = 1.
  const std::vector<double> want = {lost, lost, kept, kept, lost, lost, lost};
  CHECK(same_bits(got, want));
  // P > L: empty chunks are fine and every element still gets the full sum.
  vectors many(9, std::vector<double>(4, 1.0));
  CHECK(same_bits(run(many, allreduce_algorithm::ring, bf16), std::vector<double>(4, 9.0)));
}

TEST_CASE("binary64 with small integers: every algorithm gives the exact sum, P = 1..40") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> value(-1000, 1000);
  const std::size_t L = 7;  // fewer elements than ranks from P = 8 on: empty ring chunks
  int cases = 0;
  for (int P = 1; P <= 40; ++P) {
    vectors v(static_cast<std::size_t>(P), std::vector<double>(L));
    std::vector<double> exact(L, 0.0);
    for (auto& rank : v)
      for (std::size_t i = 0; i < L; ++i) {
        rank[i] = value(rng);
        exact[i] += rank[i];  // integers below 2^53: exact in any order
      }
    const std::vector<double> seq = run(v, allreduce_algorithm::sequential, binary64);
    CHECK(same_bits(seq, exact));
    for (const allreduce_algorithm a : kAlgorithms) {
      for (const precision& d : {binary64, of(formats::fp32)}) {  // |sum| <= 40000 < 2^24: fp32 too
        const std::vector<double> got = run(v, a, d);
        INFO("P = ", P, " ", to_string(a), " ", d.name());
        CHECK(same_bits(got, exact));
        CHECK(same_bits(got, seq));
        ++cases;
      }
    }
  }
  CHECK(cases == 40 * 4 * 2);
}

TEST_CASE("the input cast happens before any addition") {
  const precision bf16 = of(formats::bf16);
  // 1 + 2^-8 + 2^-20 rounds up to 1 + 2^-7 in bf16 (above the tie). Cast first, the sum with -1
  // is 2^-7; adding the uncast values would give 2^-8 + 2^-20, rounded to 2^-8.
  const vectors v = {{1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20)}, {-1.0}};
  for (const allreduce_algorithm a : kAlgorithms) CHECK(run(v, a, bf16)[0] == std::ldexp(1.0, -7));
  CHECK(round_to(bf16, (1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20)) - 1.0) == std::ldexp(1.0, -8));
  // One rank: the result is the cast input.
  const vectors one = {{1 + std::ldexp(1.0, -9), 3.0}};
  for (const allreduce_algorithm a : kAlgorithms) CHECK(same_bits(run(one, a, bf16), {1.0, 3.0}));
}

TEST_CASE("errors name the offending values") {
  const vectors none;
  const expected<std::vector<double>> empty = allreduce(none, allreduce_algorithm::ring, binary64);
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.message().find("P = 0") != std::string::npos);
  CHECK(empty.message().find("at least 1") != std::string::npos);

  const vectors ragged = {{1, 2, 3}, {1, 2, 3}, {1, 2}};
  for (const allreduce_algorithm a : kAlgorithms) {
    const expected<std::vector<double>> r = allreduce(ragged, a, of(formats::fp16));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.message().find("rank 2 has 2 elements") != std::string::npos);
    CHECK(r.message().find("rank 0 has 3") != std::string::npos);
  }
}

TEST_CASE("the simulated collective") {
  auto c = simulated_collective(4);
  CHECK(c->size() == 4);
  CHECK(c->first_local() == 0);
  CHECK(c->local_count() == 4);
  CHECK(c->is_root());

  // binary64 in rank order: ((2^53 + 1) + 1) - 2^53 = 0 (each 2^53 + 1 is a tie, to even 2^53);
  // pairwise would give 1, the reverse order 2 (the exact sum).
  const double big = std::ldexp(1.0, 53);
  const vectors v = {{big, 1.0}, {1.0, 2.0}, {1.0, 3.0}, {-big, 4.0}};
  CHECK(same_bits(c->sum_in_rank_order(v), {0.0, 10.0}));

  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  vectors w(4, std::vector<double>(9));
  for (auto& rank : w)
    for (double& x : rank) x = normal(rng);
  for (const allreduce_algorithm a : kAlgorithms)
    for (const precision& d : {binary64, of(formats::bf16), of(formats::fp16)})
      CHECK(same_bits(c->allreduce(w, a, d), run(w, a, d)));

  // Blocks of different lengths, concatenated in rank order.
  const vectors blocks = {{1, 2}, {}, {3}, {4, 5, 6}};
  CHECK(same_bits(c->gather(blocks), {1, 2, 3, 4, 5, 6}));

  // Not one vector per rank, or vectors of different lengths: programming errors.
  const vectors three = {{1}, {2}, {3}};
  CHECK_THROWS_AS(c->allreduce(three, allreduce_algorithm::ring, binary64), std::invalid_argument);
  CHECK_THROWS_AS(c->gather(three), std::invalid_argument);
  const vectors ragged = {{1}, {2}, {3}, {4, 5}};
  CHECK_THROWS_AS(c->allreduce(ragged, allreduce_algorithm::sequential, binary64), std::invalid_argument);
  CHECK_THROWS_AS(c->sum_in_rank_order(ragged), std::invalid_argument);
  auto none = simulated_collective(0);
  CHECK_THROWS_AS(none->sum_in_rank_order(vectors{}), std::invalid_argument);
}

TEST_CASE("C(P): reproducible per seed, 0 without additions, never above the grouping's bound") {
  const precision bf16 = of(formats::bf16);
  const cp_measurement a = measure_cp(8, allreduce_algorithm::ring, bf16, 64, 2, 5);
  const cp_measurement b = measure_cp(8, allreduce_algorithm::ring, bf16, 64, 2, 5);
  const cp_measurement other = measure_cp(8, allreduce_algorithm::ring, bf16, 64, 2, 6);
  CHECK(a.c_max == b.c_max);
  CHECK(a.elements == b.elements);
  CHECK(a.elements == 2 * 64);
  CHECK(a.P == 8);
  CHECK(a.datatype == "bf16");
  CHECK(a.c_max > 0);
  CHECK(other.c_max != a.c_max);

  // P = 1: nothing is added and the reference is the cast data: C = 0 in every datatype.
  for (const precision& d : {binary64, bf16, of(formats::fp16), of(formats::fp32)})
    for (const allreduce_algorithm alg : kAlgorithms) CHECK(measure_cp(1, alg, d, 100, 2, 1).c_max == 0);
  // Arguments below 1 check nothing.
  CHECK(measure_cp(0, allreduce_algorithm::ring, bf16, 10, 1, 1).elements == 0);
  CHECK(measure_cp(4, allreduce_algorithm::ring, bf16, 0, 1, 1).elements == 0);
  CHECK(measure_cp(4, allreduce_algorithm::ring, bf16, 10, 0, 1).elements == 0);

  // The deterministic worst case: |v_hat - v| <= gamma_n(u) sum_p |v_p| with n the most
  // roundings on any term's path, so C(P) <= gamma_n(u) / u. The measurement's reference is the
  // sum of the cast data, so the input cast adds nothing. Binary64 included (u = 2^-53).
  int cases = 0;
  for (const precision& d : {binary64, of(formats::fp32), bf16, of(formats::fp16)})
    for (const int P : {2, 3, 5, 8, 13, 16, 33, 64})
      for (const allreduce_algorithm alg : kAlgorithms) {
        const cp_measurement m = measure_cp(P, alg, d, 128, 2, 42);
        const int n = roundings(alg, P);
        INFO(d.name(), " P = ", P, " ", to_string(alg), ": C = ", m.c_max, ", n = ", n);
        CHECK(m.elements == 256);
        CHECK(m.c_max > 0);  // something was rounded
        CHECK(m.c_max <= gamma_over_u(n, d.unit_roundoff()));
        if (P == 2) CHECK(m.c_max <= 1);  // one rounding of v_0 + v_1
        ++cases;
      }
  CHECK(cases == 4 * 8 * 4);
}
