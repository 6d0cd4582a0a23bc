// Exact dot products in plain double arithmetic, vectorised: the fastest path of the exact
// references behind `fpemu gemm` reports (dot_analysis.cpp's exact_outputs), ahead of fixed_dot.
//
// Why a double sum can be exact. Let vector a hold doubles whose non-zero values are integer
// multiples of 2^low_a below 2^top_a in magnitude, and b likewise. Every product a_k b_k is then
// a multiple of 2^E0, E0 = low_a + low_b, below 2^(top_a + top_b), and every partial sum of at
// most K of them a multiple of 2^E0 below K 2^(top_a + top_b) < 2^(top_a + top_b + bit_length(K)):
// n 2^E0 with |n| < 2^span, span = top_a + top_b + bit_length(K) - E0. With span <= 53, E0 >= -1074
// (the last bit of the subnormals) and top_a + top_b + bit_length(K) <= 1024, each such value is a
// double, so every multiplication, addition or fused multiply-add of the dot product returns its
// exact result: the sum is exact in any order, with or without contraction, in any vector width.
// The same holds for sum_k |a_k b_k|. Pairs outside that (or with a zero sum, whose sign
// exact_accumulator tracks and a double sum does not) are left to fixed_dot and exact_accumulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fpemu::analysis {

// n vectors of K doubles each, each value exact (or its vector marked not exact by the caller: a
// value that could not be made a double exactly): vector-major, values[v K .. v K + K - 1], as A's
// rows are stored, or k-major, vector v's k-th value at values[k n + v], as B's columns are.
class double_vectors {
 public:
  // `exact[v]`: vector v's doubles are its exact values (every one finite).
  double_vectors(std::vector<double> values, std::vector<char> exact, int n, int K, bool k_major = false);

  int count() const { return n_; }
  int k() const { return k_; }
  bool k_major() const { return k_major_; }
  // Vector v's values: vector-major vectors only.
  const double* vector(int v) const { return &values_[static_cast<std::size_t>(v) * static_cast<std::size_t>(k_)]; }
  // The values of vectors v0, v0 + 1, ... at k: k-major vectors only.
  const double* at_k(int k, int v0) const { return &values_[static_cast<std::size_t>(k) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(v0)]; }

  // Whether double_gemm's sums for vector i of a and vector j of b are exact: both vectors exact,
  // each with a non-zero value, and the span condition at the top.
  friend bool double_dot_exact(const double_vectors& a, int i, const double_vectors& b, int j);

 private:
  int n_ = 0, k_ = 0;
  bool k_major_ = false;
  std::vector<double> values_;
  std::vector<char> ok_;         // per vector: exact, finite, some value non-zero
  std::vector<int> low_, top_;   // per vector: min last-bit exponent, max exponent above the lead
};

bool double_dot_exact(const double_vectors& a, int i, const double_vectors& b, int j);

// x y as a double when that is x y exactly, else false (conservative below 2^-900, where the
// residual test cannot see every inexact product).
bool exact_double_product(double x, double y, double& product);

// B's vectors packed for double_gemm: panels of kPanel vectors, interleaved by k, zero-padded.
class double_panels {
 public:
  static constexpr int kPanel = 16;
  explicit double_panels(const double_vectors& b);
  int count() const { return n_; }
  int k() const { return k_; }
  const double* panel(int p) const {
    return &packed_[static_cast<std::size_t>(p) * static_cast<std::size_t>(k_) * kPanel];
  }

 private:
  int n_ = 0, k_ = 0;
  std::vector<double> packed_;
};

// For rows r0 .. r1 - 1 of a and every vector j of b: sum[(i - r0) N + j] = sum_k a_ik b_jk and
// mag[(i - r0) N + j] = sum_k |a_ik b_jk|, summed in double in an unspecified order (exact where
// double_dot_exact holds; otherwise meaningless). Runs on the calling thread, with the widest
// SIMD target the CPU has.
void double_gemm(const double_vectors& a, int r0, int r1, const double_panels& b, std::span<double> sum,
                 std::span<double> mag);

}  // namespace fpemu::analysis
