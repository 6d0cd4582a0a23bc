// The physical limit the emulated GEMMs are measured against: Eigen's FP32 GEMM, in a translation
// unit of its own built for the host CPU (-march=native), so that it uses the machine's widest
// FMA units, while the library and the benchmarks around it are built as users get them (runtime
// SIMD dispatch, no host-specific flags).
#pragma once

namespace fpemu::bench {

// C (M x N) = A (M x K, row-major) * B (K x N, row-major), single-threaded, C column-major.
void native_sgemm(const float* a, const float* b, float* c, int m, int n, int k);

}  // namespace fpemu::bench
