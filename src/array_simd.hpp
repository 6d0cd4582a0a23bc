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
// every mode; stochastic_exact from binary32 only (a binary64 lane may need all 64 random bits,
// the scalar loop does it).
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
  const std::uint32_t* given = nullptr;  // when set, element i reads given[i] instead (mode sr only)
};

// Where codes go: one code per element in 1, 2 or 4 bytes (the caller checks that the format's
// codes fit), or nowhere. Storage-width codes (a byte per FP8 code) write a quarter or half of
// the bytes of 32-bit ones, which is what bounds large arrays on more than one thread.
struct code_sink {
  void* data = nullptr;
  int bytes = 4;
  code_sink(std::nullptr_t = nullptr) {}
  code_sink(std::uint32_t* p) : data(p), bytes(4) {}
  code_sink(std::uint16_t* p) : data(p), bytes(2) {}
  code_sink(std::uint8_t* p) : data(p), bytes(1) {}
  // The sink of element i onwards.
  code_sink at(std::size_t i) const {
    code_sink s = *this;
    if (data) s.data = static_cast<std::byte*>(data) + i * static_cast<std::size_t>(bytes);
    return s;
  }
};

// In and out for [0, n). `codes`, `values` (the rounded value, for round-in-place) and `flags`
// may each be null. Returns the union of the flags.
std::uint8_t encode_floats(const format& f, const rounding& r, const float* in, std::size_t n, const keystream& random,
                           code_sink codes, float* values, std::uint8_t* flags);
std::uint8_t encode_doubles(const format& f, const rounding& r, const double* in, std::size_t n,
                            const keystream& random, code_sink codes, std::uint8_t* flags);

// codes -> binary32 values, for formats with values_are_floats(f). `stream`: with non-temporal
// stores, which write the output past the caches without reading it first (for outputs larger
// than the caches, which nothing reads soon: a third less memory traffic).
void decode_floats(const format& f, const std::uint32_t* codes, std::size_t n, float* out, bool stream = false);

// out[i] = keystream_bits(seed, stream, first + i, width) for i in [0, n), width 16 or 32; width
// 64 gives the high 32 of each element's 64 bits (what sr-exact reads for shifts up to 32).
void fill_keystream(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t n, int width,
                    std::uint32_t* out);

// For tests: the name of the target the kernels dispatch to now.
const char* target_name();

}  // namespace fpemu::simd
