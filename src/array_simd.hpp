// Vector kernels behind the array functions (array.hpp), compiled for every SIMD target Highway
// knows and dispatched at run time to the best one the CPU has.
//
// They make no rounding decision of their own beyond the core's rule written for lanes: where a
// lane's input and result are both within the format's finite range (normal or subnormal, no
// overflow), the lane is rounded by adding an increment below its kept bits, as round_float
// does (round_float.hpp lists the increment of every mode); every other lane (zeros aside:
// infinities, NaNs, binary32 subnormal inputs, overflow, values far below the smallest
// subnormal) is handed to the scalar core with the same random bits. tests/test_array_simd.cpp
// checks every target bitwise against the core.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::simd {

// Whether the kernels round binary32 (from_double false) or binary64 values into f by r: signed
// formats with zero and gradual underflow, with fewer fraction bits than the input type, in
// every mode but stochastic_exact (which reads 64 random bits; the scalar loop does it).
bool can_encode(const format& f, const rounding& r, bool from_double);
// Whether every value of f is a binary32 value, so that codes can be decoded to floats (and
// floats rounded in place).
bool values_are_floats(const format& f);

// Where the random bits of in[0] come from: element i reads
// keystream_bits(seed, stream, first_index + i, array_random_width(r)). Unused unless r is
// stochastic.
struct keystream {
  std::uint64_t seed = 0;
  std::uint32_t stream = 0;
  std::uint64_t first_index = 0;
};

// In and out for [0, n). `codes`, `values` (the rounded value, for round-in-place) and `flags`
// may each be null. Returns the union of the flags.
std::uint8_t encode_floats(const format& f, const rounding& r, const float* in, std::size_t n, const keystream& random,
                           std::uint32_t* codes, float* values, std::uint8_t* flags);
std::uint8_t encode_doubles(const format& f, const rounding& r, const double* in, std::size_t n,
                            const keystream& random, std::uint32_t* codes, std::uint8_t* flags);

// codes -> binary32 values, for formats with values_are_floats(f).
void decode_floats(const format& f, const std::uint32_t* codes, std::size_t n, float* out);

// out[i] = keystream_bits(seed, stream, first + i, width) for i in [0, n); width 16 or 32.
void fill_keystream(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t n, int width,
                    std::uint32_t* out);

// For tests: the name of the target the kernels dispatch to now.
const char* target_name();

}  // namespace fpemu::simd
