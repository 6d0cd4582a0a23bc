// The AllReduce of allreduce.hpp on MPI ranks, one rank per process (allreduce_mpi.hpp).
//
// Bit-identity with simulated_collective(P): every emulated value is exactly a double, so the
// ranks exchange MPI_DOUBLE values with point-to-point messages (copies, never arithmetic) and
// each rank performs, with add_in(datatype, ...), exactly the additions the simulation performs
// for it: same schedule, same grouping, and even the same operand order (the running value or
// the lower block first), so that NaN payloads agree too. MPI_SUM is never used on emulated data:
// its order is the library's. Broadcasts and all-gathers only copy values.
//
// MPI's default error handler (MPI_ERRORS_ARE_FATAL) aborts the job on a communication error, so
// return codes after MPI_Init are not checked. Mismatched vector lengths are detected collectively
// (every rank throws the same std::invalid_argument), so no rank is left waiting.
#include "analysis/casgd/allreduce_mpi.hpp"

// Only the C API is used: skip the deprecated C++ bindings (and their warnings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fpemu::casgd {
namespace {

// Tags of the message kinds; within one kind MPI's non-overtaking rule orders the messages.
enum tag : int { tag_seq = 11, tag_ring_reduce, tag_ring_gather, tag_rd_fold, tag_rd_butterfly, tag_rd_result, tag_tree };

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

class mpi_world final : public collective {
 public:
  mpi_world(int rank, int size) : rank_(rank), size_(size) {}
  int size() const override { return size_; }
  int first_local() const override { return rank_; }
  int local_count() const override { return 1; }
  bool is_root() const override { return rank_ == 0; }

  std::vector<double> allreduce(std::span<const std::vector<double>> locals, allreduce_algorithm a,
                                const precision& datatype) override {
    const int L = common_length(locals, "allreduce");
    // The input cast, locally: what enters the collective is the datatype's value.
    std::vector<double> x(static_cast<std::size_t>(L));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(datatype, locals[0][i]);
    if (size_ == 1) return x;
    switch (a) {
      case allreduce_algorithm::sequential: seq(datatype, x); break;
      case allreduce_algorithm::ring: ring(datatype, x); break;
      case allreduce_algorithm::recursive_doubling: rd(datatype, x); break;
      case allreduce_algorithm::tree: tree(datatype, x); break;
    }
    return x;
  }

  std::vector<double> sum_in_rank_order(std::span<const std::vector<double>> locals) override {
    const int L = common_length(locals, "sum_in_rank_order");
    const auto n = static_cast<std::size_t>(L);
    std::vector<double> all(n * static_cast<std::size_t>(size_));
    MPI_Allgather(locals[0].data(), L, MPI_DOUBLE, all.data(), L, MPI_DOUBLE, MPI_COMM_WORLD);
    std::vector<double> acc(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t p = 1; p < static_cast<std::size_t>(size_); ++p)
      for (std::size_t i = 0; i < n; ++i) acc[i] += all[p * n + i];
    return acc;
  }

  std::vector<double> gather(std::span<const std::vector<double>> locals) override {
    check_one_local(locals);
    const int mine = count_of(locals[0].size(), "gather");
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    long long total = 0;
    for (std::size_t p = 0; p < counts.size(); ++p) {
      if (total > INT_MAX) throw std::invalid_argument("gather: more than INT_MAX elements in all");
      displs[p] = static_cast<int>(total);
      total += counts[p];
    }
    std::vector<double> out(static_cast<std::size_t>(total));
    MPI_Allgatherv(locals[0].data(), mine, MPI_DOUBLE, out.data(), counts.data(), displs.data(), MPI_DOUBLE,
                   MPI_COMM_WORLD);
    return out;
  }

 private:
  int rank_, size_;

  static void check_one_local(std::span<const std::vector<double>> locals) {
    if (locals.size() != 1)
      throw std::invalid_argument("an MPI rank holds one rank vector, given " + std::to_string(locals.size()));
  }

  static int count_of(std::size_t n, const char* what) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) +
                                  " elements exceed MPI's int count (valid <= " + std::to_string(INT_MAX) + ")");
    return static_cast<int>(n);
  }

  // The length every rank passed; differing lengths throw on every rank alike.
  int common_length(std::span<const std::vector<double>> locals, const char* what) const {
    check_one_local(locals);
    const int mine = count_of(locals[0].size(), what);
    int range[2] = {mine, -mine}, all[2] = {0, 0};  // {max, -min}: integers, so MPI_MAX is exact
    MPI_Allreduce(range, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] != -all[1])
      throw std::invalid_argument(std::string(what) + ": rank vectors differ in length (" + std::to_string(-all[1]) +
                                  " to " + std::to_string(all[0]) + " elements; all P = " + std::to_string(size_) +
                                  " must be equal; rank " + std::to_string(rank_) + " has " + std::to_string(mine) +
                                  ")");
    return mine;
  }

  void send(const double* v, int n, int to, int t) const { MPI_Send(v, n, MPI_DOUBLE, to, t, MPI_COMM_WORLD); }
  void recv(double* v, int n, int from, int t) const {
    MPI_Recv(v, n, MPI_DOUBLE, from, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  void broadcast(std::vector<double>& x, int root) const {
    MPI_Bcast(x.data(), static_cast<int>(x.size()), MPI_DOUBLE, root, MPI_COMM_WORLD);
  }

  // seq: the running sum passes along the chain 0 -> 1 -> ... -> P-1, each rank adding its own
  // vector (running sum first); the last rank broadcasts.
  void seq(const precision& d, std::vector<double>& x) const {
    const int L = static_cast<int>(x.size());
    if (rank_ > 0) {
      std::vector<double> acc(x.size());
      recv(acc.data(), L, rank_ - 1, tag_seq);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = add_in(d, acc[i], x[i]);
    }
    if (rank_ + 1 < size_) send(x.data(), L, rank_ + 1, tag_seq);
    broadcast(x, size_ - 1);
  }

  // ring: reduce-scatter then all-gather. At step j = 1..P-1 rank r passes its partial sum of
  // chunk r-j+1 to the right and adds its own elements to the left neighbour's partial of chunk
  // r-j (partial first), so chunk c is ((v_c + v_{c+1}) + ...) + v_{c-1} and ends complete at
  // rank c-1. The all-gather then passes the complete chunks round the ring in P-1 copies.
  void ring(const precision& d, std::vector<double>& x) const {
    const std::uint64_t P = static_cast<std::uint64_t>(size_), L = x.size(), r = static_cast<std::uint64_t>(rank_);
    const auto lo = [&](std::uint64_t c) { return static_cast<std::size_t>(c * L / P); };
    const auto count = [&](std::uint64_t c) { return static_cast<int>((c + 1) * L / P - c * L / P); };
    const int right = static_cast<int>((r + 1) % P), left = static_cast<int>((r + P - 1) % P);
    std::vector<double> buf(L / P + 1);
    for (std::uint64_t j = 1; j < P; ++j) {
      const std::uint64_t out = (r + P - j + 1) % P, in = (r + P - j) % P;
      MPI_Sendrecv(x.data() + lo(out), count(out), MPI_DOUBLE, right, tag_ring_reduce, buf.data(), count(in),
                   MPI_DOUBLE, left, tag_ring_reduce, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double* mine = x.data() + lo(in);
      for (int i = 0; i < count(in); ++i) mine[i] = add_in(d, buf[static_cast<std::size_t>(i)], mine[i]);
    }
    for (std::uint64_t j = 0; j + 1 < P; ++j) {
      const std::uint64_t out = (r + 1 + P - j) % P, in = (r + P - j) % P;
      MPI_Sendrecv(x.data() + lo(out), count(out), MPI_DOUBLE, right, tag_ring_gather, x.data() + lo(in), count(in),
                   MPI_DOUBLE, left, tag_ring_gather, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  // rd: rank P'+i sends to rank i, which adds it (v_i + v_{P'+i}); the butterfly over
  // k = 1, 2, ... < P' has ranks r and r^k swap and both add, the lower block's value first;
  // the extra ranks then receive the result.
  void rd(const precision& d, std::vector<double>& x) const {
    const int L = static_cast<int>(x.size());
    int Pp = 1;
    while (Pp <= size_ / 2) Pp *= 2;
    std::vector<double> buf(x.size());
    if (rank_ >= Pp) {
      send(x.data(), L, rank_ - Pp, tag_rd_fold);
      recv(x.data(), L, rank_ - Pp, tag_rd_result);
      return;
    }
    if (rank_ + Pp < size_) {
      recv(buf.data(), L, rank_ + Pp, tag_rd_fold);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = add_in(d, x[i], buf[i]);
    }
    for (int k = 1; k < Pp; k *= 2) {
      const int partner = rank_ ^ k;
      MPI_Sendrecv(x.data(), L, MPI_DOUBLE, partner, tag_rd_butterfly, buf.data(), L, MPI_DOUBLE, partner,
                   tag_rd_butterfly, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const bool lower = (rank_ & k) == 0;
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = lower ? add_in(d, x[i], buf[i]) : add_in(d, buf[i], x[i]);
    }
    if (rank_ + Pp < size_) send(x.data(), L, rank_ + Pp, tag_rd_result);
  }

  // tree: node p adds its left then its right subtree's sum to its own vector and sends the
  // result to its parent (p-1)/2; the root broadcasts.
  void tree(const precision& d, std::vector<double>& x) const {
    const int L = static_cast<int>(x.size());
    std::vector<double> buf(x.size());
    for (const int child : {2 * rank_ + 1, 2 * rank_ + 2}) {
      if (child >= size_) break;
      recv(buf.data(), L, child, tag_tree);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = add_in(d, x[i], buf[i]);
    }
    if (rank_ > 0) send(x.data(), L, (rank_ - 1) / 2, tag_tree);
    broadcast(x, 0);
  }
};

}  // namespace

expected<std::unique_ptr<collective>> mpi_collective() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return error{"MPI was already finalised in this process and cannot be started again"};
    if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return error{"MPI_Init failed"};
    std::atexit(finalize_at_exit);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<collective>(std::make_unique<mpi_world>(rank, size));
}

}  // namespace fpemu::casgd
