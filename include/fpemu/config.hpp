// Build-wide switches shared by host and device code.
//
// FPEMU_HD marks every function of the rounding core so that the same source compiles for the
// host and, under nvcc, for the device. It is defined here and nowhere else.
#pragma once

#if defined(__CUDACC__)
#define FPEMU_HD __host__ __device__
#else
#define FPEMU_HD
#endif

// FPEMU_COLD keeps a rarely taken path (the general rounding core behind a short path) out of
// line, so that the short path stays small enough to inline into element-wise loops.
#if defined(__CUDACC__)
#define FPEMU_COLD __noinline__
#elif defined(__GNUC__)
#define FPEMU_COLD [[gnu::noinline, gnu::cold]]
#else
#define FPEMU_COLD
#endif
