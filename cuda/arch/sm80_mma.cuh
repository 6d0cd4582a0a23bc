// Inline-PTX wrappers of the sm_80 warp-level tensor-core instructions, one per instruction,
// named after its PTX contract. D = A*B + C with the accumulator in place (C = D), fp32
// accumulation. Operand registers follow the PTX ISA sections "Matrix Fragments for mma.m16n8k8"
// (.tf32) and "Matrix Fragments for mma.m16n8k16 with floating point type"; tensor_core.hpp
// has the index maps, tested on the host.
//
// Only defined in device passes for sm_80 and later: a caller outside the same guard fails to
// compile rather than trapping at run time.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

namespace fpemu::cuda::arch {

// a: four .f16x2 registers (a0..a7), b: two .f16x2 (b0..b3), lower half = even element.
__device__ __forceinline__ void sm80_mma_m16n8k16_f32_f16_f16_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                                                  const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void sm80_mma_m16n8k16_f32_bf16_bf16_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                                                    const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// a: four .b32 registers holding one tf32 each (a binary32 pattern; the hardware ignores the
// low 13 bits), b: two.
__device__ __forceinline__ void sm80_mma_m16n8k8_f32_tf32_tf32_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                                                   const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace fpemu::cuda::arch

#endif  // __CUDA_ARCH__ >= 800
