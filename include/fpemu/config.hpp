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
