// AllReduce in an emulated datatype, simulated in one process (allreduce.hpp), and the C(P)
// measurement of Figure 2 (Devarakonda et al. 2026).
//
// The simulation works on whole vectors, one rank vector at a time, so that every loop streams
// through memory; the grouping per element is exactly the one allreduce.hpp describes. Where the
// header lets two ranks form "the same sum" (rd), the operand order is fixed as well (lower
// block first), so that even NaN payloads agree with the MPI implementation, which uses the same
// order (allreduce_mpi.cpp).
#include "analysis/casgd/allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "fpemu/convert.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/random.hpp"

namespace fpemu::casgd {

std::string_view to_string(allreduce_algorithm a) {
  switch (a) {
    case allreduce_algorithm::ring: return "ring";
    case allreduce_algorithm::recursive_doubling: return "rd";
    case allreduce_algorithm::tree: return "tree";
    case allreduce_algorithm::sequential: return "seq";
  }
  return "?";
}

expected<allreduce_algorithm> parse_allreduce(std::string_view name) {
  if (name == "ring") return allreduce_algorithm::ring;
  if (name == "rd") return allreduce_algorithm::recursive_doubling;
  if (name == "tree") return allreduce_algorithm::tree;
  if (name == "seq") return allreduce_algorithm::sequential;
  return error{"unknown AllReduce algorithm '" + std::string(name) + "' (expected ring, rd, tree or seq)"};
}

namespace {

using vectors = std::vector<std::vector<double>>;

// out[i] = add_in(d, out[i], y[i]) for every element: one addition per element, the running
// value first.
void add_into(const precision& d, std::vector<double>& out, const std::vector<double>& y, std::size_t lo,
              std::size_t hi) {
  fpemu::casgd::add_into(d, std::span<double>(out).subspan(lo, hi - lo), std::span<const double>(y).subspan(lo, hi - lo));
}

// seq: ((v_0 + v_1) + v_2) + ... for every element.
std::vector<double> reduce_seq(const precision& d, const vectors& x) {
  std::vector<double> out = x[0];
  for (std::size_t p = 1; p < x.size(); ++p) add_into(d, out, x[p], 0, out.size());
  return out;
}

// ring: chunk c = [c L / P, (c+1) L / P) is reduced starting at rank c and travelling round the
// ring: ((v_c + v_{c+1}) + v_{c+2}) + ... + v_{c-1} (indices mod P).
std::vector<double> reduce_ring(const precision& d, const vectors& x) {
  const std::size_t P = x.size(), L = x[0].size();
  std::vector<double> out(L);
  for (std::size_t c = 0; c < P; ++c) {
    const std::size_t lo = c * L / P, hi = (c + 1) * L / P;
    std::copy(x[c].begin() + static_cast<std::ptrdiff_t>(lo), x[c].begin() + static_cast<std::ptrdiff_t>(hi),
              out.begin() + static_cast<std::ptrdiff_t>(lo));
    for (std::size_t j = 1; j < P; ++j) add_into(d, out, x[(c + j) % P], lo, hi);
  }
  return out;
}

// rd: with P' the largest power of two <= P, rank P'+i first adds into rank i; then for
// k = 1, 2, 4, ... < P' ranks i and i^k exchange and both add. By induction every rank of an
// aligned block of 2k ranks then holds the same bits, so the block's value is that of its first
// rank b: w_b + w_{b+k} (lower block first; both ranks use this order). x is consumed.
std::vector<double> reduce_rd(const precision& d, vectors& x) {
  const std::size_t P = x.size(), L = x[0].size();
  std::size_t Pp = 1;
  while (Pp * 2 <= P) Pp *= 2;
  for (std::size_t i = 0; i + Pp < P; ++i) add_into(d, x[i], x[Pp + i], 0, L);
  for (std::size_t k = 1; k < Pp; k *= 2)
    for (std::size_t b = 0; b < Pp; b += 2 * k) add_into(d, x[b], x[b + k], 0, L);
  return std::move(x[0]);
}

// tree: heap order, node p holds ((v_p + T_{2p+1}) + T_{2p+2}), absent children skipped. Nodes
// are finished from the last to the first, so both children are complete when p is. x is
// consumed.
std::vector<double> reduce_tree(const precision& d, vectors& x) {
  const std::size_t P = x.size(), L = x[0].size();
  for (std::size_t p = P; p-- > 0;) {
    if (2 * p + 1 < P) add_into(d, x[p], x[2 * p + 1], 0, L);
    if (2 * p + 2 < P) add_into(d, x[p], x[2 * p + 2], 0, L);
  }
  return std::move(x[0]);
}

class simulated final : public collective {
 public:
  explicit simulated(int P) : P_(P) {}
  int size() const override { return P_; }
  int first_local() const override { return 0; }
  int local_count() const override { return P_; }
  bool is_root() const override { return true; }

  std::vector<double> allreduce(std::span<const std::vector<double>> locals, allreduce_algorithm a,
                                const precision& datatype) override {
    check_locals(locals, true);
    expected<std::vector<double>> r = casgd::allreduce(locals, a, datatype);
    if (!r) throw std::invalid_argument("simulated allreduce: " + r.message());
    return std::move(r).value();
  }

  std::vector<double> sum_in_rank_order(std::span<const std::vector<double>> locals) override {
    check_locals(locals, true);
    std::vector<double> acc = locals[0];
    for (std::size_t p = 1; p < locals.size(); ++p)
      for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += locals[p][i];
    return acc;
  }

  std::vector<double> gather(std::span<const std::vector<double>> locals) override {
    check_locals(locals, false);
    std::vector<double> out;
    for (const std::vector<double>& v : locals) out.insert(out.end(), v.begin(), v.end());
    return out;
  }

 private:
  int P_;

  void check_locals(std::span<const std::vector<double>> locals, bool same_length) const {
    if (locals.size() != static_cast<std::size_t>(P_))
      throw std::invalid_argument("simulated collective of " + std::to_string(P_) + " ranks given " +
                                  std::to_string(locals.size()) + " rank vectors");
    if (locals.empty()) throw std::invalid_argument("a collective of P = 0 ranks: P must be at least 1");
    if (!same_length) return;
    for (std::size_t p = 1; p < locals.size(); ++p)
      if (locals[p].size() != locals[0].size())
        throw std::invalid_argument("rank " + std::to_string(p) + "'s vector has " +
                                    std::to_string(locals[p].size()) + " elements, rank 0's " +
                                    std::to_string(locals[0].size()));
  }
};

// A standard normal value keyed by (seed, stream, index): Box-Muller on two 53-bit uniforms
// from Philox, so the data depends on the seed alone (and on the host's log/cos).
double normal(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const std::uint64_t a = random_bits(seed, stream, 2 * index), b = random_bits(seed, stream, 2 * index + 1);
  const double u1 = std::ldexp(static_cast<double>((a >> 11) + 1), -53);  // (0, 1]: log is finite
  const double u2 = std::ldexp(static_cast<double>(b >> 11), -53);        // [0, 1)
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

}  // namespace

expected<std::vector<double>> allreduce(std::span<const std::vector<double>> rank_vectors, allreduce_algorithm a,
                                        const precision& datatype) {
  if (rank_vectors.empty()) return error{"AllReduce over P = 0 ranks: P must be at least 1"};
  const std::size_t L = rank_vectors[0].size();
  for (std::size_t p = 1; p < rank_vectors.size(); ++p)
    if (rank_vectors[p].size() != L)
      return error{"AllReduce vectors differ in length: rank " + std::to_string(p) + " has " +
                   std::to_string(rank_vectors[p].size()) + " elements, rank 0 has " + std::to_string(L) +
                   " (all P = " + std::to_string(rank_vectors.size()) + " must be equal)"};
  // The input cast: each rank's vector enters the collective in the datatype.
  vectors x(rank_vectors.size());
  for (std::size_t p = 0; p < x.size(); ++p) {
    x[p].resize(L);
    for (std::size_t i = 0; i < L; ++i) x[p][i] = round_to(datatype, rank_vectors[p][i]);
  }
  switch (a) {
    case allreduce_algorithm::sequential: return reduce_seq(datatype, x);
    case allreduce_algorithm::ring: return reduce_ring(datatype, x);
    case allreduce_algorithm::recursive_doubling: return reduce_rd(datatype, x);
    case allreduce_algorithm::tree: return reduce_tree(datatype, x);
  }
  return error{"unknown AllReduce algorithm"};
}

std::unique_ptr<collective> simulated_collective(int P) { return std::make_unique<simulated>(P); }

cp_measurement measure_cp(int P, allreduce_algorithm a, const precision& datatype, int length, int trials,
                          std::uint64_t seed) {
  cp_measurement m;
  m.P = P;
  m.algorithm = a;
  m.datatype = datatype.name();
  if (P < 1 || length < 1 || trials < 1) return m;
  const auto np = static_cast<std::size_t>(P), L = static_cast<std::size_t>(length);
  const double u = datatype.unit_roundoff();
  vectors v(np, std::vector<double>(L));
  for (int t = 0; t < trials && !interrupted(); ++t) {
    // Trial t is Philox stream t; rank p's element i is index p L + i.
    for (std::size_t p = 0; p < np; ++p)
      for (std::size_t i = 0; i < L; ++i)
        v[p][i] = round_to(datatype, normal(seed, static_cast<std::uint32_t>(t), p * L + i));
    const expected<std::vector<double>> got = allreduce(v, a, datatype);
    if (!got) throw std::logic_error("measure_cp: " + got.message());  // P >= 1, equal lengths
    for (std::size_t i = 0; i < L; ++i) {
      // v_hat - v exactly in the Kulisch accumulator (the order of its terms cannot matter),
      // rounded once to a double; sum |v_p| in binary64 is within (P-1) 2^-53 relative of the
      // exact one, far below the digits C(P) is reported with.
      exact_accumulator err;
      err.add(unpack((*got)[i]));
      double abs_sum = 0;
      for (std::size_t p = 0; p < np; ++p) {
        err.add(unpack(-v[p][i]));
        abs_sum += std::fabs(v[p][i]);
      }
      if (abs_sum == 0) continue;  // every v_p is 0: so are v and v_hat, and the ratio says nothing
      ++m.elements;
      // Written so that a NaN ratio (overflow in a format without infinities) is kept, not lost.
      const double ratio = std::fabs(err.to_double()) / (u * abs_sum);
      if (!(ratio <= m.c_max)) m.c_max = ratio;
    }
  }
  return m;
}

}  // namespace fpemu::casgd
