// GEMM on CUDA cores through the block-FMA tensor-core model, for formats the hardware lacks
// (e2m1fn, e3m2fn, user-defined): one thread per output, the model's block_fma_step over K in
// order, in blocks of model.block_size, each block's rounded result the next block's C,
// starting from +0. That is what analysis::gemm computes with an accumulator_model of kind
// block_fma and no promotion; tests/test_cuda_emulated_gemm.cpp checks it on the host.
#pragma once

#include <cstdint>

#include "fpemu/block_fma.hpp"
#include "fpemu/cuda.hpp"

namespace fpemu::cuda {

// A block is gathered into registers/local memory on the GPU, so its size is capped there.
inline constexpr int max_emulated_block = 64;

// D[i][j] for row-major A (m x k) and B (k x n) codes; model.block_size <= max_emulated_block.
FPEMU_HD constexpr std::uint32_t emulated_gemm_element(const block_fma_model& model, const format& fa, const format& fb,
                                                       const std::uint32_t* a, const std::uint32_t* b, int n, int k,
                                                       int i, int j) {
  std::uint32_t a_block[max_emulated_block] = {};
  std::uint32_t b_block[max_emulated_block] = {};
  std::uint32_t c = 0;  // +0 in model.acc
  for (int k0 = 0; k0 < k; k0 += model.block_size) {
    const int len = k - k0 < model.block_size ? k - k0 : model.block_size;
    for (int t = 0; t < len; ++t) {
      a_block[t] = a[static_cast<std::size_t>(i) * k + k0 + t];
      b_block[t] = b[static_cast<std::size_t>(k0 + t) * n + j];
    }
    c = block_fma_step(model, fa, a_block, fb, b_block, len, model.acc, c).code;
  }
  return c;
}

namespace detail {
// emulated_gemm.cu; "built without CUDA" otherwise. Arguments are checked by the caller.
expected<std::vector<std::uint32_t>> launch_emulated_gemm(const block_fma_model& model, const format& fa,
                                                          const format& fb, int m, int n, int k,
                                                          std::span<const std::uint32_t> a,
                                                          std::span<const std::uint32_t> b);
}  // namespace detail
}  // namespace fpemu::cuda
