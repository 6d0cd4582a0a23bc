// AllReduce in an emulated datatype with an explicit reduction order, simulated in one process
// or run on real MPI ranks with bit-identical results (Devarakonda et al. 2026, Assumption 5.4
// and Figure 2).
//
// Every algorithm first rounds each rank's vector into the datatype (the input cast that C(P)
// absorbs), then combines with additions rounded into the datatype (nearest-even, as collective
// libraries do). Floating-point addition is commutative, so only the grouping matters:
//
//   seq   rank 0 + rank 1, then + rank 2, ... in rank order, for every element;
//   ring  reduce-scatter then all-gather (NCCL/MPICH ring): the vector is cut into P chunks
//         (chunk c = elements [c*L/P, (c+1)*L/P) in integer arithmetic); chunk c starts at rank c
//         and travels round the ring, sum = ((v_c + v_{c+1}) + v_{c+2}) + ... (indices mod P);
//   rd    recursive doubling: with P' the largest power of two <= P, rank P'+i first adds into
//         rank i (v_i + v_{P'+i}); then for k = 1, 2, 4, ... < P' ranks i and i^k exchange and
//         both form the same sum; the extra ranks receive the result;
//   tree  binary tree in heap order: node p holds ((v_p + T_{2p+1}) + T_{2p+2}), where T_q is
//         node q's subtree sum (absent children are skipped); the root's sum is broadcast.
//
// C(P) (Figure 2): the largest |v_hat - v| / (u * sum_p |v_p|) over the elements, with v the
// exact sum of the (already cast) rank vectors and u the datatype's unit roundoff.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/casgd/precision.hpp"
#include "fpemu/expected.hpp"

namespace fpemu::casgd {

enum class allreduce_algorithm : std::uint8_t { ring, recursive_doubling, tree, sequential };
std::string_view to_string(allreduce_algorithm a);                 // ring rd tree seq
expected<allreduce_algorithm> parse_allreduce(std::string_view name);  // ring rd tree seq

// The reduction of P rank vectors (all of one length) in the datatype under the algorithm.
// An error names mismatched lengths or P < 1.
expected<std::vector<double>> allreduce(std::span<const std::vector<double>> rank_vectors,
                                        allreduce_algorithm a, const precision& datatype);

// Ranks as the CA-SGD engine sees them. The simulated collective holds every rank in one
// process; the MPI collective (allreduce_mpi.hpp) holds one. Both give identical bits.
class collective {
 public:
  virtual ~collective() = default;
  virtual int size() const = 0;          // P
  virtual int first_local() const = 0;   // ranks first_local() .. first_local()+local_count()-1
  virtual int local_count() const = 0;   // live in this process
  // locals[i] is rank first_local()+i's vector; returns the reduced vector (the same on every
  // rank), computed by the algorithm in the datatype. Vectors of different lengths, or not one
  // per local rank, are a programming error: std::invalid_argument.
  virtual std::vector<double> allreduce(std::span<const std::vector<double>> locals, allreduce_algorithm a,
                                        const precision& datatype) = 0;
  // sum_p v_p in binary64 in rank order 0..P-1 (diagnostics such as the loss; not emulated).
  virtual std::vector<double> sum_in_rank_order(std::span<const std::vector<double>> locals) = 0;
  // The rank blocks concatenated in rank order, on every rank (for reporting the weights).
  virtual std::vector<double> gather(std::span<const std::vector<double>> locals) = 0;
  virtual bool is_root() const = 0;  // the process that prints and writes files
};

std::unique_ptr<collective> simulated_collective(int P);

// C(P) of one algorithm and datatype over `trials` sets of P random rank vectors of `length`
// elements, each N(0,1) (signed; the exact sum then cancels the way gradients do) rounded into
// the datatype, keyed by seed. Returns the largest ratio observed: infinity or NaN when a sum
// overflowed the datatype. P, length or trials below 1 check nothing (elements 0).
struct cp_measurement {
  int P = 0;
  allreduce_algorithm algorithm{};
  std::string datatype;
  double c_max = 0;           // the largest ratio over every element of every trial
  long elements = 0;          // elements checked
};
cp_measurement measure_cp(int P, allreduce_algorithm a, const precision& datatype, int length, int trials,
                          std::uint64_t seed);
// The worst-case trace bound the paper uses when no measurement is given; its direct NCCL
// measurements (Figure 2, Devarakonda et al. 2026) reach it.
inline double cp_worst_case(int P) { return 2.4 * P; }
// The power-law fit to those NCCL measurements (Figure 2): about 100 at P = 256.
inline double cp_nccl_fit(int P) { return 4.62 * std::pow(static_cast<double>(P), 0.56); }

}  // namespace fpemu::casgd
