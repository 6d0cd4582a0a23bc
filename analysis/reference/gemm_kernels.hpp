// Fast GEMM accumulation kernels, each bitwise equal to the reference dot_accumulator loop of
// gemm.cpp for the models it accepts (tests/test_gemm.cpp compares them on every edge case):
//
//  - fp32 format accumulator, nearest-even, no promotion, inputs whose values are floats:
//    s = fma(a, b, s) on the host FPU is exactly round(s + a*b), so a register-blocked FMA
//    microkernel that keeps K sequential per output is the reference, only faster;
//  - the block-FMA model with per-term truncation into an fp32-range accumulator (fp32, e8m13)
//    toward zero, for inputs of at most 5 exponent and 10 fraction bits (fp8, fp16, fp6, fp4):
//    products are exact floats, the alignment q = trunc(p * 2^(F-E)) is one exact scaling and a
//    truncating conversion, and the sum fits 24 bits. The kernel is only chosen when the formats'
//    exponent ranges keep every one of those steps exact.
// Both run on the widest SIMD target the CPU has (Highway, chosen at run time); every lane is one
// output's chain in K order, so the target changes speed only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fpemu/accumulator.hpp"

namespace fpemu::analysis {

struct accumulated {
  format fmt;
  std::vector<std::uint32_t> codes;  // M x N accumulator codes, row-major
};

// The accumulator codes of A (M x K) times B (K x N) in natural K order starting at zero, or
// nothing when no fast kernel applies to these formats, model or values (non-finite inputs).
std::optional<accumulated> fast_accumulate(const format& fa, std::span<const std::uint32_t> a, const format& fb,
                                           std::span<const std::uint32_t> b, int M, int N, int K,
                                           const accumulator_model& model, int threads);

}  // namespace fpemu::analysis
