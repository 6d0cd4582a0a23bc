// Tensor-core GEMMs on wgmma (sm_90a only; see tensor_core.cu for the shared contract and
// tensor_core_kernels.cuh for why this file has its own compilation target).
#include "arch/sm90_wgmma.cuh"
#include "tensor_core_kernels.cuh"

namespace fpemu::cuda::detail {
namespace {

// ---- sm90a: wgmma, one warpgroup (128 threads) per 64x64 output tile -----------------------

template <tc_kernel Kernel>
__device__ void wgmma_gemm(const tc_params& p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // One instruction's slices of A (64 rows of M) and B (64 rows of N), both K-major: 32 bytes
  // of K per row (k16 x 2 bytes or k32 x 1 byte), layout wgmma_slice_offset().
  __shared__ __align__(128) unsigned char smem_a[wgmma_slice_bytes];
  __shared__ __align__(128) unsigned char smem_b[wgmma_slice_bytes];
  constexpr int kk = instruction_k(Kernel);
  constexpr int bytes = 32 / kk;  // per element
  const int t = static_cast<int>(threadIdx.x);
  const int row0 = static_cast<int>(blockIdx.y) * 64, col0 = static_cast<int>(blockIdx.x) * 64;
  const std::uint64_t desc_a =
      wgmma_descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_a)), wgmma_lbo, wgmma_sbo);
  const std::uint64_t desc_b =
      wgmma_descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_b)), wgmma_lbo, wgmma_sbo);

  float acc[32], promoted[32];
  for (int i = 0; i < 32; ++i) {
    const frag_pos f = wgmma_m64n_d(t, i);
    acc[i] = c_at(p, row0 + f.row, col0 + f.col);
    promoted[i] = 0.0f;
  }
  int scale_d = p.c != nullptr ? 1 : 0;  // 0: D = A*B, the accumulator's old value unread
  for (int k0 = 0; k0 < p.k; k0 += kk) {
    __syncthreads();  // every thread has waited for the previous wgmma: its operands are free
    // 2 x 512 words of 4 bytes; word w holds row w / 8, K bytes 4*(w % 8) .. +3.
    for (int w = t; w < wgmma_slice_bytes / 4; w += 128) {
      const int r = w / 8, byte = 4 * (w % 8);
      std::uint32_t wa = 0, wb = 0;
      for (int j = 0; j < 4 / bytes; ++j) {
        const int k = k0 + byte / bytes + j, shift = 8 * bytes * j;
        const std::uint32_t mask = bytes == 2 ? 0xffffu : 0xffu;
        wa |= (p.a[static_cast<std::size_t>(row0 + r) * p.k + k] & mask) << shift;
        wb |= (p.b[static_cast<std::size_t>(k) * p.n + col0 + r] & mask) << shift;
      }
      *reinterpret_cast<std::uint32_t*>(smem_a + wgmma_slice_offset(r, byte)) = wa;
      *reinterpret_cast<std::uint32_t*>(smem_b + wgmma_slice_offset(r, byte)) = wb;
    }
    arch::sm90_fence_proxy_async_shared();  // generic-proxy stores -> wgmma's async proxy
    __syncthreads();

    arch::sm90_fence_operands(acc);
    arch::sm90_wgmma_fence();
    if constexpr (Kernel == tc_kernel::wgmma_f16) arch::sm90_wgmma_m64n64k16_f32_f16_f16(acc, desc_a, desc_b, scale_d);
    if constexpr (Kernel == tc_kernel::wgmma_bf16)
      arch::sm90_wgmma_m64n64k16_f32_bf16_bf16(acc, desc_a, desc_b, scale_d);
    if constexpr (Kernel == tc_kernel::wgmma_e4m3)
      arch::sm90_wgmma_m64n64k32_f32_e4m3_e4m3(acc, desc_a, desc_b, scale_d);
    if constexpr (Kernel == tc_kernel::wgmma_e4m3_e5m2)
      arch::sm90_wgmma_m64n64k32_f32_e4m3_e5m2(acc, desc_a, desc_b, scale_d);
    if constexpr (Kernel == tc_kernel::wgmma_e5m2_e4m3)
      arch::sm90_wgmma_m64n64k32_f32_e5m2_e4m3(acc, desc_a, desc_b, scale_d);
    if constexpr (Kernel == tc_kernel::wgmma_e5m2)
      arch::sm90_wgmma_m64n64k32_f32_e5m2_e5m2(acc, desc_a, desc_b, scale_d);
    arch::sm90_wgmma_commit_group();
    arch::sm90_wgmma_wait_group_0();
    arch::sm90_fence_operands(acc);
    scale_d = 1;

    if (p.promote_every > 0 && (k0 + kk) % p.promote_every == 0) {
      const int g = (k0 + kk) / p.promote_every - 1;
      for (int i = 0; i < 32; ++i) {
        const frag_pos f = wgmma_m64n_d(t, i);
        promoted[i] = __fmaf_rn(acc[i], scale_at(p, g, row0 + f.row, col0 + f.col), promoted[i]);
      }
      scale_d = 0;  // restart the chain at zero
    }
  }
  for (int i = 0; i < 32; ++i) {
    const frag_pos f = wgmma_m64n_d(t, i);
    p.d[static_cast<std::size_t>(row0 + f.row) * p.n + col0 + f.col] =
        __float_as_uint(p.promote_every > 0 ? promoted[i] : acc[i]);
  }
#else
  flag_missing_arch(p);
#endif
}

__global__ void __launch_bounds__(128) sm90_wgmma_f16_f32acc(tc_params p) { wgmma_gemm<tc_kernel::wgmma_f16>(p); }
__global__ void __launch_bounds__(128) sm90_wgmma_bf16_f32acc(tc_params p) { wgmma_gemm<tc_kernel::wgmma_bf16>(p); }
__global__ void __launch_bounds__(128) sm90_wgmma_e4m3_f32acc(tc_params p) { wgmma_gemm<tc_kernel::wgmma_e4m3>(p); }
__global__ void __launch_bounds__(128) sm90_wgmma_e4m3_e5m2_f32acc(tc_params p) {
  wgmma_gemm<tc_kernel::wgmma_e4m3_e5m2>(p);
}
__global__ void __launch_bounds__(128) sm90_wgmma_e5m2_e4m3_f32acc(tc_params p) {
  wgmma_gemm<tc_kernel::wgmma_e5m2_e4m3>(p);
}
__global__ void __launch_bounds__(128) sm90_wgmma_e5m2_f32acc(tc_params p) { wgmma_gemm<tc_kernel::wgmma_e5m2>(p); }

}  // namespace

expected<std::vector<std::uint32_t>> launch_sm90_wgmma(const tc_problem& p) {
  const dim3 grid(static_cast<unsigned>(p.n / 64), static_cast<unsigned>(p.m / 64));
  const char* missing =
      "this build has no sm_90a code for wgmma (the device ran the sm_90 code; wgmma needs the arch-specific "
      "target compute_90a/sm_90a)";
  switch (p.kernel) {
    case tc_kernel::wgmma_f16: return run(p, sm90_wgmma_f16_f32acc, "sm90_wgmma_f16_f32acc", grid, 128, missing);
    case tc_kernel::wgmma_bf16: return run(p, sm90_wgmma_bf16_f32acc, "sm90_wgmma_bf16_f32acc", grid, 128, missing);
    case tc_kernel::wgmma_e4m3: return run(p, sm90_wgmma_e4m3_f32acc, "sm90_wgmma_e4m3_f32acc", grid, 128, missing);
    case tc_kernel::wgmma_e4m3_e5m2:
      return run(p, sm90_wgmma_e4m3_e5m2_f32acc, "sm90_wgmma_e4m3_e5m2_f32acc", grid, 128, missing);
    case tc_kernel::wgmma_e5m2_e4m3:
      return run(p, sm90_wgmma_e5m2_e4m3_f32acc, "sm90_wgmma_e5m2_e4m3_f32acc", grid, 128, missing);
    case tc_kernel::wgmma_e5m2: return run(p, sm90_wgmma_e5m2_f32acc, "sm90_wgmma_e5m2_f32acc", grid, 128, missing);
    default: return error{"launch_sm90_wgmma: not a wgmma kernel"};
  }
}

}  // namespace fpemu::cuda::detail
