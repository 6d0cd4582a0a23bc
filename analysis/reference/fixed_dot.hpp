// Exact dot products in one 128-bit fixed point: the fast path of the exact references behind
// `fpemu gemm`/`dot` reports and training's GEMM probes (dot_analysis.cpp's exact_outputs).
//
// A value m 2^e with |m| < 2^31 (every code of a format of <= 31 significant bits, times a
// power-of-two or fp32 scale whose significand fits beside it) multiplies another into an int64
// product m_a m_b 2^(e_a + e_b). A dot product of K such products whose exponents and magnitudes
// span W bits from the lowest product exponent E0, W + ceil(log2(K + 1)) <= 126, is
// sum_k (m_a m_b) << (e_a + e_b - E0) in a signed 128-bit integer without overflow, and the value
// is that integer times 2^E0: exact, as exact_accumulator's sum is, at a few nanoseconds a product
// instead of its limb-by-limb additions. Outside that (non-finite or inexact inputs, wider
// significands, a wider span, an exact zero whose sign exact_accumulator tracks) fixed_dot returns
// nothing and the caller runs exact_accumulator.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fpemu/unpacked.hpp"

namespace fpemu::analysis {

struct fixed_dot_result {
  unpacked sum;        // sum_k a_k b_k, exactly
  unpacked magnitude;  // sum_k |a_k b_k|, exactly
};

// n vectors of K values each (vector v: values[v K .. v K + K - 1]) as integers m 2^e.
class fixed_vectors {
 public:
  fixed_vectors(std::span<const unpacked> values, int n, int K);

  // The dot product of vector i of a with vector j of b (the same K), or nothing (see the top).
  friend std::optional<fixed_dot_result> fixed_dot(const fixed_vectors& a, int i, const fixed_vectors& b, int j);

 private:
  int k_ = 0;
  std::vector<std::int64_t> m_;  // signed significands, |m| < 2^31; 0 for zeros
  std::vector<int> e_;           // exponents; a zero takes its vector's lowest
  std::vector<int> low_, top_;   // per vector: min e, max (e + bit length of |m|) over non-zeros
  std::vector<char> ok_;         // per vector: every value finite, exact and narrow enough
};

std::optional<fixed_dot_result> fixed_dot(const fixed_vectors& a, int i, const fixed_vectors& b, int j);

}  // namespace fpemu::analysis
