// Fast GEMM accumulation kernels, each bitwise equal to the reference dot_accumulator loop of
// gemm.cpp for the models it accepts (tests/test_gemm.cpp compares them on every edge case and on
// every preset):
//
//  - fp32 format accumulator, nearest-even, no promotion, inputs whose values are floats:
//    s = fma(a, b, s) on the host FPU is exactly round(s + a*b), so a register-blocked FMA
//    microkernel that keeps K sequential per output is the reference, only faster;
//  - the block-FMA model with per-term truncation into an fp32-range accumulator (fp32, e8m13)
//    toward zero, for inputs of at most 5 exponent and 10 fraction bits (fp8, fp16, fp6, fp4):
//    products are exact floats, the alignment q = trunc(p * 2^(F-E)) is one exact scaling and a
//    truncating conversion, and the sum fits 24 bits. The kernel is only chosen when the formats'
//    exponent ranges keep every one of those steps exact;
//  - the same model in double lanes ("wide"), for sums of up to 53 bits (F = 25 in blocks of 32,
//    bf16 and tf32 inputs, a binding min_reference_exp, block scales of E8M0 or UE4M3 multiplied
//    into A and B): every product, scaling and truncation is exact in double, and so is the final
//    truncation onto the accumulator's grid (a power-of-two multiple of an integer); where the
//    data's exponent range keeps products and scalings normal floats, the products and their
//    truncation run in float lanes with int32 partial sums;
//  - exactly summed groups with their block scales (Blackwell mxf4, mxf4nvf4): each group's sum
//    is exact in double, and so is every aligned term after it, as in the wide kernel;
//  - the two-stage sum (AMD CDNA3) in double lanes: every alignment and F2 rounding is a floor of
//    an integer times a power of two, and the last rounding the host's double -> float;
//  - the pairwise model (AMD CDNA2): fp32 products and a tree of fp32 additions in nearest-even
//    are the host's own float operations, each followed by the flush to zero the model applies;
//  - exact block sums (AMD CDNA1): plain double sums where per-chunk bounds on the inputs' finest
//    quantum and their magnitudes prove every partial sum exact, else a TwoSum chain whose error
//    terms bound the exact sum tightly enough to certify the one nearest-even rounding into fp32.
// These leave NaN where an output's chain left the range in which they are exact (an overflow, a
// NaN, an exact sum too close to a tie); fast_accumulate computes those outputs by the model's own
// steps, so its results are complete.
// All run on the widest SIMD target the CPU has (Highway, chosen at run time); every lane is one
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
  bool float_lanes = false;  // the products ran in float lanes (wide and two-stage kernels, AVX-512)
};

// The block scales of a model with scale_block > 0, in the layout of gemm.hpp's scale_index for
// mx32 and nvfp4: A's as M rows of ceil(K / scale_block) codes, B's as N columns of as many. An
// empty span reads as scales of 1.
struct block_scale_codes {
  format fmt = formats::e8m0fnu;
  std::span<const std::uint32_t> a, b;
};

// The accumulator codes of A (M x K) times B (K x N) in natural K order starting at zero, or
// nothing when no fast kernel applies to these formats, model or values (non-finite inputs).
std::optional<accumulated> fast_accumulate(const format& fa, std::span<const std::uint32_t> a, const format& fb,
                                           std::span<const std::uint32_t> b, int M, int N, int K,
                                           const accumulator_model& model, int threads,
                                           const block_scale_codes& scales = {});

}  // namespace fpemu::analysis
