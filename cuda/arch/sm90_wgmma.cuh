// Inline-PTX wrappers of the sm_90a warpgroup tensor-core instructions (PTX ISA 9.7.15), one per
// instruction, named after its PTX contract, plus the fences and group waits they need.
//
// wgmma exists only for the arch-specific target sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); the
// wrappers are defined only in that device pass, so a caller outside the same guard fails to
// compile rather than trapping at run time.
//
// Every wrapper: D (64x64 fp32, 32 registers per thread, layout in tensor_core.hpp) =
// A (64xK from shared memory, descriptor a) * B (Kx64 from shared memory, descriptor b) + (scale_d
// ? D : 0). Both operands K-major (imm-trans 0; fp8 has no transpose operands and is K-major only).
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

namespace fpemu::cuda::arch {

// The 32 accumulator registers as in/out operands %0..%31; %32, %33 the descriptors, %34 scale-d.
#define FPEMU_WGMMA_D32 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
  "%23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FPEMU_WGMMA_D32_OPERANDS(d)                                                                              \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),    \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),     \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),    \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
// scale-d is a predicate operand: set it from a register inside the asm block.
#define FPEMU_WGMMA(shape_types, tail)                                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned." shape_types " " \
               FPEMU_WGMMA_D32 ", %32, %33, p, 1, 1" tail ";\n}\n"                                      \
               : FPEMU_WGMMA_D32_OPERANDS(d)                                                            \
               : "l"(a), "l"(b), "r"(scale_d)                                                           \
               : "memory")

// 16-bit inputs: imm-scale-a = imm-scale-b = 1 (no negation), imm-trans-a = imm-trans-b = 0.
__device__ __forceinline__ void sm90_wgmma_m64n64k16_f32_f16_f16(float (&d)[32], std::uint64_t a, std::uint64_t b,
                                                                 int scale_d) {
  FPEMU_WGMMA("m64n64k16.f32.f16.f16", ", 0, 0");
}
__device__ __forceinline__ void sm90_wgmma_m64n64k16_f32_bf16_bf16(float (&d)[32], std::uint64_t a, std::uint64_t b,
                                                                   int scale_d) {
  FPEMU_WGMMA("m64n64k16.f32.bf16.bf16", ", 0, 0");
}
// fp8 inputs (PTX ISA, wgmma.mma_async: .atype/.btype each .e4m3 or .e5m2, K-major only).
__device__ __forceinline__ void sm90_wgmma_m64n64k32_f32_e4m3_e4m3(float (&d)[32], std::uint64_t a,
                                                                   std::uint64_t b, int scale_d) {
  FPEMU_WGMMA("m64n64k32.f32.e4m3.e4m3", "");
}
__device__ __forceinline__ void sm90_wgmma_m64n64k32_f32_e4m3_e5m2(float (&d)[32], std::uint64_t a,
                                                                   std::uint64_t b, int scale_d) {
  FPEMU_WGMMA("m64n64k32.f32.e4m3.e5m2", "");
}
__device__ __forceinline__ void sm90_wgmma_m64n64k32_f32_e5m2_e4m3(float (&d)[32], std::uint64_t a,
                                                                   std::uint64_t b, int scale_d) {
  FPEMU_WGMMA("m64n64k32.f32.e5m2.e4m3", "");
}
__device__ __forceinline__ void sm90_wgmma_m64n64k32_f32_e5m2_e5m2(float (&d)[32], std::uint64_t a,
                                                                   std::uint64_t b, int scale_d) {
  FPEMU_WGMMA("m64n64k32.f32.e5m2.e5m2", "");
}

#undef FPEMU_WGMMA
#undef FPEMU_WGMMA_D32_OPERANDS
#undef FPEMU_WGMMA_D32

// m64n128k32 with fp8 inputs: D is 64x128 fp32, 64 registers per thread (the same fragment
// layout, wgmma_m64n_d, with i up to 63); %64, %65 the descriptors, %66 scale-d.
#define FPEMU_WGMMA_D64                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "     \
  "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, " \
  "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define FPEMU_F(i) "+f"(d[i])
#define FPEMU_F8(i) FPEMU_F(i), FPEMU_F(i + 1), FPEMU_F(i + 2), FPEMU_F(i + 3), FPEMU_F(i + 4), FPEMU_F(i + 5), \
                    FPEMU_F(i + 6), FPEMU_F(i + 7)
#define FPEMU_WGMMA_N128(types)                                                                                 \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k32.f32." types \
               " " FPEMU_WGMMA_D64 ", %64, %65, p, 1, 1;\n}\n"                                                  \
               : FPEMU_F8(0), FPEMU_F8(8), FPEMU_F8(16), FPEMU_F8(24), FPEMU_F8(32), FPEMU_F8(40), FPEMU_F8(48), \
                 FPEMU_F8(56)                                                                                   \
               : "l"(a), "l"(b), "r"(scale_d)                                                                   \
               : "memory")

__device__ __forceinline__ void sm90_wgmma_m64n128k32_f32_e4m3_e4m3(float (&d)[64], std::uint64_t a,
                                                                    std::uint64_t b, int scale_d) {
  FPEMU_WGMMA_N128("e4m3.e4m3");
}
__device__ __forceinline__ void sm90_wgmma_m64n128k32_f32_e4m3_e5m2(float (&d)[64], std::uint64_t a,
                                                                    std::uint64_t b, int scale_d) {
  FPEMU_WGMMA_N128("e4m3.e5m2");
}
__device__ __forceinline__ void sm90_wgmma_m64n128k32_f32_e5m2_e4m3(float (&d)[64], std::uint64_t a,
                                                                    std::uint64_t b, int scale_d) {
  FPEMU_WGMMA_N128("e5m2.e4m3");
}
__device__ __forceinline__ void sm90_wgmma_m64n128k32_f32_e5m2_e5m2(float (&d)[64], std::uint64_t a,
                                                                    std::uint64_t b, int scale_d) {
  FPEMU_WGMMA_N128("e5m2.e5m2");
}

#undef FPEMU_WGMMA_N128
#undef FPEMU_F8
#undef FPEMU_F
#undef FPEMU_WGMMA_D64

// Orders the accumulator registers' earlier accesses before the next wgmma (PTX ISA, wgmma.fence).
__device__ __forceinline__ void sm90_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void sm90_wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until no wgmma group of this thread is pending: the accumulators are readable and the
// shared-memory operands may be overwritten.
__device__ __forceinline__ void sm90_wgmma_wait_group_0() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Makes generic-proxy stores to shared memory visible to the async proxy that wgmma reads
// through (PTX ISA, "Async proxy" and membar/fence: fence.proxy.async).
__device__ __forceinline__ void sm90_fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// An empty asm that claims to read and write every accumulator register: the compiler may not
// move accesses to them across it (the wgmma writes them asynchronously, at wait_group).
template <int N>
__device__ __forceinline__ void sm90_fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Waits until at most N wgmma groups of this thread are pending.
template <int N>
__device__ __forceinline__ void sm90_wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

}  // namespace fpemu::cuda::arch

#endif  // __CUDA_ARCH_FEAT_SM90_ALL
