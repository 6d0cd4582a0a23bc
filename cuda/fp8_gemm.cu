// The promoted FP8 GEMM (include/fpemu/cuda.hpp, promoted_fp8_gemm) on sm_90a: a kernel built
// for speed whose every rounding is the one tensor_core_gemm's wgmma kernel makes, so that both
// equal the emulator's h100 preset with promotion (gpu-check compares all three).
//
// Shape of the kernel (the usual Hopper GEMM, as in CUTLASS and DeepGEMM):
//  1. A block computes a 128 x BlockN tile of D (BlockN = 128, or 64 when the grid would leave
//     multiprocessors idle) with 384 threads: warpgroup 0 copies, warpgroups 1 and 2 each
//     accumulate 64 rows. Tiles are visited in groups of 16 block-rows so that the A and B tiles
//     one wave reads stay in L2.
//  2. Copying: one thread issues, per group g of K (128 bytes of fp8), two bulk tensor copies
//     (A: 128 x 128 bytes, B^T: BlockN x 128 bytes) into stage g % 6, 128-byte swizzled, which
//     complete on the stage's `full` barrier; it first waits for the stage's `empty` barrier.
//  3. Accumulating: per group, wait `full`, issue four wgmma m64nBlockNk32 on the stage (the
//     k-th at byte 32k of each row; the first with scale-d = 0: the chain starts at +0), wait
//     for them, release the stage (`empty`), then promote every accumulator:
//     R = fma(P, RNE(a_scale * b_scale), R), the emulator's promote() (tensor_core.hpp).
//  4. R is written to D from registers (two adjacent columns per store).
// Registers: the copying warpgroup gives its registers to the accumulating ones (setmaxnreg),
// which hold P and R: 2 x BlockN / 2 floats per thread.
#include <cuda.h>
#include <cuda_runtime.h>

#include <mutex>

#include "arch/sm90_tma.cuh"
#include "arch/sm90_wgmma.cuh"
#include "fp8_gemm.hpp"
#include "runtime.cuh"
#include "tensor_core.hpp"

namespace fpemu::cuda::detail {
namespace {

constexpr int block_m = 128, block_k = 128, stages = 6, threads = 384, group_rows = 16;

template <int BlockN>
constexpr int smem_bytes() {
  return stages * (block_m + BlockN) * block_k + 2 * stages * 8 + 1024;  // tiles, barriers, alignment
}

struct fp8_params {
  const float* a_scale;  // M x G, or null
  const float* b_scale;  // (N / 128) x G, or null
  float* d;
  int m, n, k;
  int* missing_arch;
};

enum class fp8_pair : std::uint8_t { e4m3_e4m3, e4m3_e5m2, e5m2_e4m3, e5m2_e5m2 };

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <fp8_pair Pair, int BlockN>
__device__ __forceinline__ void wgmma_k32(float (&acc)[BlockN / 2], std::uint64_t a, std::uint64_t b, int scale_d) {
  if constexpr (BlockN == 128) {
    if constexpr (Pair == fp8_pair::e4m3_e4m3) arch::sm90_wgmma_m64n128k32_f32_e4m3_e4m3(acc, a, b, scale_d);
    if constexpr (Pair == fp8_pair::e4m3_e5m2) arch::sm90_wgmma_m64n128k32_f32_e4m3_e5m2(acc, a, b, scale_d);
    if constexpr (Pair == fp8_pair::e5m2_e4m3) arch::sm90_wgmma_m64n128k32_f32_e5m2_e4m3(acc, a, b, scale_d);
    if constexpr (Pair == fp8_pair::e5m2_e5m2) arch::sm90_wgmma_m64n128k32_f32_e5m2_e5m2(acc, a, b, scale_d);
  } else {
    if constexpr (Pair == fp8_pair::e4m3_e4m3) arch::sm90_wgmma_m64n64k32_f32_e4m3_e4m3(acc, a, b, scale_d);
    if constexpr (Pair == fp8_pair::e4m3_e5m2) arch::sm90_wgmma_m64n64k32_f32_e4m3_e5m2(acc, a, b, scale_d);
    if constexpr (Pair == fp8_pair::e5m2_e4m3) arch::sm90_wgmma_m64n64k32_f32_e5m2_e4m3(acc, a, b, scale_d);
    if constexpr (Pair == fp8_pair::e5m2_e5m2) arch::sm90_wgmma_m64n64k32_f32_e5m2_e5m2(acc, a, b, scale_d);
  }
}
#endif

template <fp8_pair Pair, int BlockN>
__global__ void __launch_bounds__(threads, 1)
    sm90_wgmma_fp8_promote128_f32acc(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_bt,
                             fp8_params p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ std::uint8_t smem_raw[];
  // Swizzle atoms must start on 1024-byte boundaries.
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  constexpr int a_bytes = block_m * block_k, b_bytes = BlockN * block_k;
  std::uint8_t* a_tiles = smem;
  std::uint8_t* b_tiles = smem + stages * a_bytes;
  auto* full = reinterpret_cast<std::uint64_t*>(b_tiles + stages * b_bytes);
  std::uint64_t* empty = full + stages;

  // Step 1: the tile, grouped by 16 block-rows.
  const int tiles_m = p.m / block_m, tiles_n = p.n / BlockN;
  const int id = static_cast<int>(blockIdx.x);
  const int group = id / (group_rows * tiles_n), first_m = group * group_rows;
  const int rows_here = tiles_m - first_m < group_rows ? tiles_m - first_m : group_rows;
  const int tile_m = first_m + (id % (group_rows * tiles_n)) % rows_here;
  const int tile_n = (id % (group_rows * tiles_n)) / rows_here;
  const int m0 = tile_m * block_m, n0 = tile_n * BlockN;
  const int groups = p.k / block_k;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      arch::sm90_mbarrier_init(&full[s], 1);
      arch::sm90_mbarrier_init(&empty[s], 2 * 128);
    }
    arch::sm90_fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    // Step 2: copying.
    arch::sm90_setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      for (int g = 0; g < groups; ++g) {
        const int s = g % stages;
        if (g >= stages) arch::sm90_mbarrier_wait(&empty[s], static_cast<unsigned>(g / stages - 1) & 1u);
        arch::sm90_mbarrier_arrive_expect_tx(&full[s], a_bytes + b_bytes);
        arch::sm90_tma_load_2d(a_tiles + s * a_bytes, &map_a, &full[s], g * block_k, m0);
        arch::sm90_tma_load_2d(b_tiles + s * b_bytes, &map_bt, &full[s], g * block_k, n0);
      }
    }
    return;
  }

  // Step 3: accumulating, 64 rows per warpgroup.
  arch::sm90_setmaxnreg_inc<232>();
  constexpr int regs = BlockN / 2;
  const int t = static_cast<int>(threadIdx.x) - 128 * warpgroup;
  const int rows0 = 64 * (warpgroup - 1);
  // This thread's two rows of the fragment (wgmma_m64n_d: i with bit 1 clear, and set).
  const int row_lo = m0 + rows0 + wgmma_m64n_d(t, 0).row, row_hi = m0 + rows0 + wgmma_m64n_d(t, 2).row;
  float acc[regs], promoted[regs];
#pragma unroll
  for (int i = 0; i < regs; ++i) promoted[i] = 0.0f;

  for (int g = 0; g < groups; ++g) {
    const int s = g % stages;
    const float sa_lo = p.a_scale == nullptr ? 1.0f : p.a_scale[static_cast<std::size_t>(row_lo) * groups + g];
    const float sa_hi = p.a_scale == nullptr ? 1.0f : p.a_scale[static_cast<std::size_t>(row_hi) * groups + g];
    const float sb = p.b_scale == nullptr ? 1.0f : p.b_scale[static_cast<std::size_t>(n0 / 128) * groups + g];
    arch::sm90_mbarrier_wait(&full[s], static_cast<unsigned>(g / stages) & 1u);

    const std::uint32_t a_base = arch::smem_address(a_tiles + s * a_bytes + rows0 * block_k);
    const std::uint32_t b_base = arch::smem_address(b_tiles + s * b_bytes);
    arch::sm90_fence_operands(acc);
    arch::sm90_wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k)
      wgmma_k32<Pair, BlockN>(acc, wgmma_descriptor_b128(a_base + 32 * k), wgmma_descriptor_b128(b_base + 32 * k),
                              k == 0 ? 0 : 1);
    arch::sm90_wgmma_commit_group();
    arch::sm90_wgmma_wait_group<0>();
    arch::sm90_fence_operands(acc);
    arch::sm90_mbarrier_arrive(&empty[s]);

    const float scale_lo = __fmul_rn(sa_lo, sb), scale_hi = __fmul_rn(sa_hi, sb);
#pragma unroll
    for (int i = 0; i < regs; ++i) promoted[i] = __fmaf_rn(acc[i], (i >> 1) & 1 ? scale_hi : scale_lo, promoted[i]);
  }

  // Step 4: D from registers.
#pragma unroll
  for (int i = 0; i < regs; i += 2) {
    const frag_pos f = wgmma_m64n_d(t, i);
    *reinterpret_cast<float2*>(p.d + static_cast<std::size_t>(m0 + rows0 + f.row) * p.n + n0 + f.col) =
        make_float2(promoted[i], promoted[i + 1]);
  }
#else
  if (threadIdx.x == 0 && blockIdx.x == 0) *p.missing_arch = 1;
#endif
}

// cuTensorMapEncodeTiled from the driver, found through the runtime (no link against libcuda).
using encode_tiled_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

expected<encode_tiled_fn> encode_tiled() {
  static std::once_flag once;
  static void* fn = nullptr;
  static cudaError_t status = cudaSuccess;
  std::call_once(once, [] {
    cudaDriverEntryPointQueryResult found{};
    status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (status == cudaSuccess && found != cudaDriverEntryPointSuccess) status = cudaErrorSymbolNotFound;
  });
  if (status != cudaSuccess) return cuda_error(status, "cuTensorMapEncodeTiled");
  return reinterpret_cast<encode_tiled_fn>(fn);
}

// A rows x 128-byte-box map of a rows x k byte matrix, 128-byte swizzled.
expected<CUtensorMap> tile_map(const void* base, int rows, int k, int box_rows) {
  auto encode = encode_tiled();
  if (!encode) return error{encode.message()};
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(block_k), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = (*encode)(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box,
                               element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return error{"cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) + ") for a " +
                 std::to_string(rows) + " x " + std::to_string(k) + " fp8 matrix"};
  return map;
}

template <fp8_pair Pair, int BlockN>
expected<void> queue(const fp8_gemm_device_args& g, int* missing_arch, cudaStream_t stream) {
  auto map_a = tile_map(g.a_codes, g.m, g.k, block_m);
  if (!map_a) return error{map_a.message()};
  auto map_bt = tile_map(g.bt_codes, g.n, g.k, BlockN);
  if (!map_bt) return error{map_bt.message()};
  const auto kernel = sm90_wgmma_fp8_promote128_f32acc<Pair, BlockN>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<BlockN>());
      e != cudaSuccess)
    return cuda_error(e, "cudaFuncSetAttribute(sm90_wgmma_fp8_promote128_f32acc)");
  const fp8_params p{g.a_scale, g.b_scale, g.d, g.m, g.n, g.k, missing_arch};
  const auto blocks = static_cast<unsigned>((g.m / block_m) * (g.n / BlockN));
  kernel<<<blocks, threads, smem_bytes<BlockN>(), stream>>>(*map_a, *map_bt, p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e, "sm90_wgmma_fp8_promote128_f32acc");
  return {};
}

template <int BlockN>
expected<void> queue_pair(const fp8_gemm_device_args& g, int* missing_arch, cudaStream_t stream) {
  const bool a4 = g.a == formats::e4m3fn, b4 = g.b == formats::e4m3fn;
  if (a4 && b4) return queue<fp8_pair::e4m3_e4m3, BlockN>(g, missing_arch, stream);
  if (a4) return queue<fp8_pair::e4m3_e5m2, BlockN>(g, missing_arch, stream);
  if (b4) return queue<fp8_pair::e5m2_e4m3, BlockN>(g, missing_arch, stream);
  return queue<fp8_pair::e5m2_e5m2, BlockN>(g, missing_arch, stream);
}

}  // namespace

expected<void> launch_promoted_fp8_gemm(const fp8_gemm_device_args& g, int multiprocessors, int* missing_arch,
                                        void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  // 128-wide tiles unless they would leave multiprocessors idle (skinny shapes).
  if ((g.m / block_m) * (g.n / 128) >= multiprocessors) return queue_pair<128>(g, missing_arch, s);
  return queue_pair<64>(g, missing_arch, s);
}

expected<std::vector<std::uint32_t>> run_promoted_fp8_gemm(const fp8_gemm_args& g, int multiprocessors) {
  const std::vector<std::uint8_t> a(g.a_codes.begin(), g.a_codes.end()), bt(g.bt_codes.begin(), g.bt_codes.end());
  auto d_a = device_buffer<std::uint8_t>::upload(a);
  if (!d_a) return error{d_a.message()};
  auto d_bt = device_buffer<std::uint8_t>::upload(bt);
  if (!d_bt) return error{d_bt.message()};
  auto d_sa = device_buffer<float>::upload(g.a_scale);
  if (!d_sa) return error{d_sa.message()};
  auto d_sb = device_buffer<float>::upload(g.b_scale);
  if (!d_sb) return error{d_sb.message()};
  auto d_d = device_buffer<std::uint32_t>::allocate(static_cast<std::size_t>(g.m) * g.n);
  if (!d_d) return error{d_d.message()};
  const int zero = 0;
  auto flag = device_buffer<int>::upload(std::span<const int>(&zero, 1));
  if (!flag) return error{flag.message()};
  fp8_gemm_device_args dg{g.a, g.b, g.m, g.n, g.k, d_a->get(), d_bt->get(), d_sa->get(), d_sb->get(),
                          reinterpret_cast<float*>(d_d->get())};
  FPEMU_CUDA_TRY(launch_promoted_fp8_gemm(dg, multiprocessors, flag->get(), nullptr));
  FPEMU_CUDA_TRY(check_launch("sm90_wgmma_fp8_promote128_f32acc"));
  int missing = 0;
  FPEMU_CUDA_TRY(flag->download(std::span<int>(&missing, 1)));
  if (missing != 0) return error{"promoted_fp8_gemm: this build has no sm_90a code for the kernel"};
  return d_d->download();
}

}  // namespace fpemu::cuda::detail
