// Communication-avoiding SGD for generalized linear models with nine precision slots: Algorithm 1
// of Devarakonda et al., "Mixed-Precision Communication-Avoiding SGD for Generalized Linear Models
// on GPUs" (2026), on P ranks holding 1D column blocks of A (simulated in one process,
// or one rank per MPI process through the same `collective` interface, with identical bits).
//
// One outer iteration h, on every rank p (columns [lo_p, hi_p) of A):
//   rows   I = sb draws, i.i.d. uniform with replacement: draw k is row
//          floor(random_bits(seed, stream, h*s*b + k) * m / 2^64), so CA-SGD with s and
//          mini-batch SGD (s = 1) consume the same samples in the same order;
//   Y      the sampled rows of A_p rounded into u_A;
//   r_p    = Y x_p                  margin GEMV, kernel u_r;
//   G_p    = Y Y^T                  Gram GEMM, kernel u_G (only its strict block-lower part is
//                                   used and reduced; each entry is its own dot product);
//   r, G   AllReduce in u_AR_r and u_AR_G with the chosen algorithm;
//   inner  for j = 0..s-1, for each row i of batch j (u_c):
//            t = G_{i,<jb} . delta_<jb   (fma chain from zero, rounded into u_c each step)
//            z = round_c(r_i + alpha t)  (r_0 cast into u_c when j = 0)
//            delta_i = round_sigma(residual(z, y_i))   (evaluated in binary64, rounded once)
//   g_p    = Y^T delta                gradient GEMV, kernel u_g (delta rounded into its input);
//   x_p    = round_x(x_p + alpha g_p) (exact, one rounding: the fused GEMM epilogue)
// with alpha = eta / b as a binary64 number. With s = 1 this is mini-batch SGD.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/casgd/allreduce.hpp"
#include "analysis/casgd/bound.hpp"
#include "analysis/casgd/glm.hpp"
#include "analysis/casgd/precision.hpp"

namespace fpemu::casgd {

struct run_options {
  slots precision = all_binary64();
  loss_kind loss = loss_kind::logistic;
  int b = 32, s = 16, P = 1;
  double eta = 0.5;
  int outer = 200;
  std::uint64_t seed = 42;
  allreduce_algorithm algorithm = allreduce_algorithm::ring;
  int threads = 0;  // 0: all hardware threads (results do not depend on it)
};

// A message naming the first bad option and its valid range for data of m rows, n columns.
std::optional<std::string> check(const run_options& o, int m, int n);

// The column blocks of the ranks this process holds: rank p has columns
// [lo[p], lo[p+1]) with lo[p] = p*n/P (integer division), as row-major m x n_p binary64.
struct column_blocks {
  int m = 0, n = 0, P = 1, first_local = 0;
  std::vector<int> lo;                      // P + 1 boundaries
  std::vector<std::vector<double>> blocks;  // one per local rank
  std::vector<double> y;                    // every rank holds all labels
  int width(int p) const { return lo[static_cast<std::size_t>(p) + 1] - lo[static_cast<std::size_t>(p)]; }
};
column_blocks partition(const glm_data& d, int P, int first_local, int local_count);

using rank_vectors = std::vector<std::vector<double>>;  // one vector per local rank
rank_vectors zero_weights(const column_blocks& data);  // the starting point x = 0

struct outer_result {
  rank_vectors x;              // the weights after the iteration
  std::vector<double> delta;   // the residual history delta_hist (s*b)
  std::vector<std::int64_t> rows;  // the sampled rows
};

std::vector<std::int64_t> sample_rows(std::uint64_t seed, int m, std::int64_t first_draw, int count);

// One outer iteration h from x with the given slots; x and the result hold the local ranks.
outer_result outer_iteration(const column_blocks& data, const run_options& o, const slots& precision, int h,
                             const rank_vectors& x, collective& comm);

// F(x) in binary64 (margins per rank, summed in rank order, then the mean loss).
double loss_at(const column_blocks& data, loss_kind l, const rank_vectors& x, collective& comm);

// A whole run: o.outer outer iterations from x = 0 with o.precision. F is evaluated at h = 0,
// after every eval_every iterations (>= 1) and after the last; each value goes to `evaluated`.
// `before_outer` sees x before iteration h (a budget at a chosen iteration, progress). Returns
// the final weights of the local ranks.
struct run_hooks {
  std::function<void(int h, const rank_vectors& x)> before_outer;
  std::function<void(int h, double loss)> evaluated;
};
rank_vectors run(const column_blocks& data, const run_options& o, int eval_every, collective& comm,
                 const run_hooks& hooks = {});

// The local error of outer iteration h from x (Theorem 5.7): the slots' run against a binary64
// run from the same x and samples, next to every quantity of the budget. Simulated mode only
// (all ranks in this process). C_P is the AllReduce constant to use.
struct local_error {
  bound_terms terms;
  double measured = 0;  // ||x_hat^(s) - x^(s)||_2
  double C_P = 0, D_delta = 0;
  int h = 0;
};
expected<local_error> local_error_at(const column_blocks& data, const run_options& o, int h, const rank_vectors& x,
                                     double C_P);

}  // namespace fpemu::casgd
