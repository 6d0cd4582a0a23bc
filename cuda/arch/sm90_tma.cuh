// Inline-PTX wrappers of the sm_90 pipeline instructions (PTX ISA 9.7.9.25 cp.async.bulk.tensor,
// 9.7.13.15 mbarrier, 9.7.19.5 setmaxnreg), one per instruction, named after its PTX contract.
// The bulk tensor copy ("TMA") and mbarrier exist from sm_90; setmaxnreg needs sm_90a, so these
// are defined only in the sm_90a pass, as the wgmma wrappers are.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

namespace fpemu::cuda::arch {

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// mbarrier.init: `count` arrivals complete a phase.
__device__ __forceinline__ void sm90_mbarrier_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (the copy engine completes on them).
__device__ __forceinline__ void sm90_fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` of bulk copies completing on this phase.
__device__ __forceinline__ void sm90_mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void sm90_mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
// Waits until the phase with parity `parity` has completed.
__device__ __forceinline__ void sm90_mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}

// cp.async.bulk.tensor.2d: the box at (x, y) of the tensor map (x the inner, contiguous
// coordinate) into shared memory at `dst`, completing `bar`'s transaction count.
__device__ __forceinline__ void sm90_tma_load_2d(void* dst, const void* tensor_map, std::uint64_t* bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_address(dst)),
      "l"(tensor_map), "r"(smem_address(bar)), "r"(x), "r"(y)
      : "memory");
}

// Hands registers between the warpgroups of a block (sm_90a): the copying warpgroup needs few,
// the accumulating ones many.
template <unsigned N>
__device__ __forceinline__ void sm90_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <unsigned N>
__device__ __forceinline__ void sm90_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace fpemu::cuda::arch

#endif  // __CUDA_ARCH_FEAT_SM90_ALL
