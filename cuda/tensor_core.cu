// Tensor-core GEMMs on the real instructions: D = A*B accumulated by mma.sync (sm_80+) or wgmma
// (sm_90a) in fp32, each instruction's D the next one's C over all of K ("fast accumulation"),
// or, with promotion, every promote_every products the partial folded into an fp32 register,
// R = fma(partial, a_scale*b_scale, R) in round-to-nearest-even, and the chain restarted at
// zero (DeepSeek-V3, arXiv 2412.19437 3.3.2). These kernels measure the hardware; their results
// are compared with the emulator's presets (docs/architecture.md), they do not emulate.
//
// The fragment maps, the shared-memory layout and the promotion step live in tensor_core.hpp
// (tested on the host); the PTX is in arch/sm80_mma.cuh and arch/sm90_wgmma.cuh. This file has
// the mma.sync kernels; the wgmma ones are in tensor_core_sm90a.cu.
#include "arch/sm80_mma.cuh"
#include "tensor_core_kernels.cuh"

namespace fpemu::cuda::detail {
namespace {

// ---- sm80: mma.sync, one warp per 16x8 output tile ------------------------------------------

enum class mma_op : std::uint8_t { f16, bf16, tf32 };

constexpr unsigned mma_warps_per_block = 4;

template <mma_op Op>
__device__ void mma_sync_gemm(const tc_params& p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kk = Op == mma_op::tf32 ? 8 : 16;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int tile_col = static_cast<int>(blockIdx.x * mma_warps_per_block + threadIdx.x / 32);
  if (tile_col * 8 >= p.n) return;  // the whole warp leaves together
  const int row0 = static_cast<int>(blockIdx.y) * 16, col0 = tile_col * 8;
  auto a_at = [&](int r, int k) { return p.a[static_cast<std::size_t>(row0 + r) * p.k + k]; };
  auto b_at = [&](int k, int c) { return p.b[static_cast<std::size_t>(k) * p.n + col0 + c]; };

  float acc[4], promoted[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < 4; ++i) {
    const frag_pos c = mma_m16n8_c(lane, i);
    acc[i] = c_at(p, row0 + c.row, col0 + c.col);
  }
  for (int k0 = 0; k0 < p.k; k0 += kk) {
    std::uint32_t a[4], b[2];
    if constexpr (Op == mma_op::tf32) {
      for (int i = 0; i < 4; ++i) {
        const frag_pos f = mma_m16n8k8_a(lane, i);
        a[i] = a_at(f.row, k0 + f.col);
      }
      for (int i = 0; i < 2; ++i) {
        const frag_pos f = mma_m16n8k8_b(lane, i);
        b[i] = b_at(k0 + f.row, f.col);
      }
      arch::sm80_mma_m16n8k8_f32_tf32_tf32_f32(acc, a, b);
    } else {
      // Two 16-bit elements per register, the even one in the low half.
      for (int r = 0; r < 4; ++r) {
        const frag_pos lo = mma_m16n8k16_a(lane, 2 * r), hi = mma_m16n8k16_a(lane, 2 * r + 1);
        a[r] = (a_at(lo.row, k0 + lo.col) & 0xffffu) | (a_at(hi.row, k0 + hi.col) << 16);
      }
      for (int r = 0; r < 2; ++r) {
        const frag_pos lo = mma_m16n8k16_b(lane, 2 * r), hi = mma_m16n8k16_b(lane, 2 * r + 1);
        b[r] = (b_at(k0 + lo.row, lo.col) & 0xffffu) | (b_at(k0 + hi.row, hi.col) << 16);
      }
      if constexpr (Op == mma_op::f16)
        arch::sm80_mma_m16n8k16_f32_f16_f16_f32(acc, a, b);
      else
        arch::sm80_mma_m16n8k16_f32_bf16_bf16_f32(acc, a, b);
    }
    if (p.promote_every > 0 && (k0 + kk) % p.promote_every == 0) {
      const int g = (k0 + kk) / p.promote_every - 1;
      for (int i = 0; i < 4; ++i) {
        const frag_pos c = mma_m16n8_c(lane, i);
        promoted[i] = __fmaf_rn(acc[i], scale_at(p, g, row0 + c.row, col0 + c.col), promoted[i]);
        acc[i] = 0.0f;  // the next instruction's C: the chain restarts at +0
      }
    }
  }
  for (int i = 0; i < 4; ++i) {
    const frag_pos c = mma_m16n8_c(lane, i);
    p.d[static_cast<std::size_t>(row0 + c.row) * p.n + col0 + c.col] =
        __float_as_uint(p.promote_every > 0 ? promoted[i] : acc[i]);
  }
#else
  flag_missing_arch(p);
#endif
}

__global__ void sm80_mma_sync_f16_f32acc(tc_params p) { mma_sync_gemm<mma_op::f16>(p); }
__global__ void sm80_mma_sync_bf16_f32acc(tc_params p) { mma_sync_gemm<mma_op::bf16>(p); }
__global__ void sm80_mma_sync_tf32_f32acc(tc_params p) { mma_sync_gemm<mma_op::tf32>(p); }

}  // namespace

expected<std::vector<std::uint32_t>> launch_sm80_mma_sync(const tc_problem& p) {
  const dim3 grid((static_cast<unsigned>(p.n / 8) + mma_warps_per_block - 1) / mma_warps_per_block,
                  static_cast<unsigned>(p.m / 16));
  const unsigned threads = 32 * mma_warps_per_block;
  const char* missing = "this build has no sm_80 (or later) code for mma.sync on this device";
  switch (p.kernel) {
    case tc_kernel::mma_f16: return run(p, sm80_mma_sync_f16_f32acc, "sm80_mma_sync_f16_f32acc", grid, threads, missing);
    case tc_kernel::mma_bf16:
      return run(p, sm80_mma_sync_bf16_f32acc, "sm80_mma_sync_bf16_f32acc", grid, threads, missing);
    case tc_kernel::mma_tf32:
      return run(p, sm80_mma_sync_tf32_f32acc, "sm80_mma_sync_tf32_f32acc", grid, threads, missing);
    default: return error{"launch_sm80_mma_sync: not an mma.sync kernel"};
  }
}

}  // namespace fpemu::cuda::detail
