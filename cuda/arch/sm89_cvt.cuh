// Hardware conversions from binary32 (PTX ISA, "cvt"), one value per instruction. Each wrapper
// exists only in the compilation passes whose target has the instruction; elsewhere it raises
// *unavailable (when not null) and returns 0, so a kernel run on such a target reports the fact instead of
// returning wrong codes. The packed x2 forms put the conversion of the second source operand
// in the low half of the result; the first operand is 0.
#pragma once

#include <cstdint>

namespace fpemu::cuda::arch {

// cvt.rn.satfinite.e4m3x2.f32 (sm_89+): OCP E4M3, nearest-even, out-of-range values and
// infinities to +-448, NaN to 0x7f.
__device__ inline std::uint32_t sm89_cvt_rn_satfinite_e4m3_f32(float x, int* unavailable) {
#if __CUDA_ARCH__ >= 890
  unsigned short d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(0.0f), "f"(x));
  return d & 0xffu;
#else
  if (unavailable != nullptr) *unavailable = 1;
  return 0;
#endif
}

// cvt.rn.satfinite.e5m2x2.f32 (sm_89+): OCP E5M2, nearest-even, saturating to +-57344.
__device__ inline std::uint32_t sm89_cvt_rn_satfinite_e5m2_f32(float x, int* unavailable) {
#if __CUDA_ARCH__ >= 890
  unsigned short d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(0.0f), "f"(x));
  return d & 0xffu;
#else
  if (unavailable != nullptr) *unavailable = 1;
  return 0;
#endif
}

// cvt.rn.bf16.f32 / cvt.rz.bf16.f32 (sm_80+).
__device__ inline std::uint32_t sm80_cvt_rn_bf16_f32(float x, int* unavailable) {
#if __CUDA_ARCH__ >= 800
  unsigned short d;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(d) : "f"(x));
  return d;
#else
  if (unavailable != nullptr) *unavailable = 1;
  return 0;
#endif
}
__device__ inline std::uint32_t sm80_cvt_rz_bf16_f32(float x, int* unavailable) {
#if __CUDA_ARCH__ >= 800
  unsigned short d;
  asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(d) : "f"(x));
  return d;
#else
  if (unavailable != nullptr) *unavailable = 1;
  return 0;
#endif
}

// cvt.rn.f16.f32 / cvt.rz.f16.f32 (every target fpemu builds for).
__device__ inline std::uint32_t cvt_rn_f16_f32(float x) {
  unsigned short d;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(d) : "f"(x));
  return d;
}
__device__ inline std::uint32_t cvt_rz_f16_f32(float x) {
  unsigned short d;
  asm("cvt.rz.f16.f32 %0, %1;" : "=h"(d) : "f"(x));
  return d;
}

}  // namespace fpemu::cuda::arch
