// The block-FMA model GEMM on CUDA cores: one thread per output element.
#include <cuda_runtime.h>

#include "emulated_gemm.hpp"
#include "runtime.cuh"

namespace fpemu::cuda {
namespace {

__global__ void emulated_gemm_kernel(block_fma_model model, format fa, format fb, const std::uint32_t* a,
                                     const std::uint32_t* b, std::uint32_t* d, int m, int n, int k) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int i = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i < m && j < n) d[static_cast<std::size_t>(i) * n + j] = emulated_gemm_element(model, fa, fb, a, b, n, k, i, j);
}

}  // namespace

namespace detail {

expected<std::vector<std::uint32_t>> launch_emulated_gemm(const block_fma_model& model, const format& fa,
                                                          const format& fb, int m, int n, int k,
                                                          std::span<const std::uint32_t> a,
                                                          std::span<const std::uint32_t> b) {
  auto d_a = device_buffer<std::uint32_t>::upload(a);
  if (!d_a) return error{d_a.message()};
  auto d_b = device_buffer<std::uint32_t>::upload(b);
  if (!d_b) return error{d_b.message()};
  auto d_d = device_buffer<std::uint32_t>::allocate(static_cast<std::size_t>(m) * n);
  if (!d_d) return error{d_d.message()};
  const dim3 threads(32, 8);
  const dim3 blocks((n + threads.x - 1) / threads.x, (m + threads.y - 1) / threads.y);
  emulated_gemm_kernel<<<blocks, threads>>>(model, fa, fb, d_a->get(), d_b->get(), d_d->get(), m, n, k);
  FPEMU_CUDA_TRY(check_launch("emulated_gemm_kernel"));
  return d_d->download();
}

}  // namespace detail
}  // namespace fpemu::cuda
