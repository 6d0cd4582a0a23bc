// Internal to cuda/: the launcher of the promoted FP8 GEMM kernel (fp8_gemm.cu, sm_90a only);
// fp8_gemm_api.cpp checks the arguments and the device first.
#pragma once

#include "fpemu/cuda.hpp"

namespace fpemu::cuda::detail {

// Queues the kernel on `stream` (a cudaStream_t). The kernel sets *missing_arch (when not null)
// if the device ran a pass without sm_90a code.
expected<void> launch_promoted_fp8_gemm(const fp8_gemm_device_args& g, int multiprocessors, int* missing_arch,
                                        void* stream);
// Host vectors (checked): uploads, runs the kernel, waits, returns D as binary32 bit patterns.
expected<std::vector<std::uint32_t>> run_promoted_fp8_gemm(const fp8_gemm_args& g, int multiprocessors);

}  // namespace fpemu::cuda::detail
