// Runtime-format functions over spans: round arrays of doubles or floats into codes or in
// place, decode codes, and apply arithmetic element-wise, for sweeps over formats and modes.
//
// Results are the core's, bit for bit, on every path: vector kernels (Highway, dispatched to the
// best SIMD target of the CPU) where they cover the format and mode, the scalar core elsewhere,
// spread over a thread pool for long arrays. Stochastic rounding takes element i's random bits
// from keystream_bits(seed, stream, first_index + i, array_random_width(r)) (random.hpp), so
// results do not depend on thread count, vector width or how an array is split.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/random.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu {

// Threads for arrays of 65536 elements or more; 0 (the default) means all hardware threads.
// Results never depend on it.
void set_array_threads(int n);
int array_threads();

enum class array_op : std::uint8_t { add, sub, mul, div };

// Each returns the union of the status flags raised, or an error naming the mismatched sizes
// or the invalid rounding. `flags`, when not empty, receives the flags of each element.
expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint32_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint32_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
// The same into storage-width codes, as ml_dtypes and PyTorch keep them: a byte per code for
// formats of at most 8 bits (FP8, FP6, FP4), two bytes for at most 16 (bf16, fp16). Fewer bytes
// to write make these the fastest way to round a large array; the error names a format whose
// codes do not fit.
expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint16_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint16_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint8_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint8_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
// Stochastic rounding (r.mode sr) with the random bits given rather than drawn from a keystream:
// element i reads random[i], its low r.sr_bits bits, as round() reads its `random` argument, so
// that a caller with a random source of its own still gets the vector kernels. The error names
// another mode, or a `random` whose size is not in's.
expected<std::uint8_t> round_array_given_bits(const format& f, std::span<const float> in, std::span<std::uint32_t> out,
                                              const rounding& r, std::span<const std::uint32_t> random,
                                              std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array_given_bits(const format& f, std::span<const float> in, std::span<std::uint16_t> out,
                                              const rounding& r, std::span<const std::uint32_t> random,
                                              std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array_given_bits(const format& f, std::span<const float> in, std::span<std::uint8_t> out,
                                              const rounding& r, std::span<const std::uint32_t> random,
                                              std::span<std::uint8_t> flags = {});
expected<std::uint8_t> convert_array(const format& to, const format& from, std::span<const std::uint32_t> in,
                                     std::span<std::uint32_t> out, const rounding& r = {}, sr_stream sr = {},
                                     std::span<std::uint8_t> flags = {});
// The element types that hold codes: 32 bits for any format, or storage width.
template <class T>
concept code_word =
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::uint32_t>;
// The same from and into codes of any of those widths, each wide enough for its format's codes
// (the error names one that is not): nine pairs of widths, hence a template, which the library
// defines for each.
template <code_word In, code_word Out>
expected<std::uint8_t> convert_array(const format& to, const format& from, std::span<const In> in, std::span<Out> out,
                                     const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
// x[i] becomes the value of round(f, x[i]) as a binary32: what simulation users want. Every value
// of f must be a binary32 value (signed, with zero and subnormals, 1..22 fraction bits, normal
// exponents within binary32's normal range); the error says so otherwise.
expected<std::uint8_t> round_in_place(const format& f, std::span<float> x, const rounding& r = {}, sr_stream sr = {},
                                      std::span<std::uint8_t> flags = {});
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint32_t> codes, std::span<double> out);
// As binary32 values, for the formats round_in_place accepts.
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint32_t> codes, std::span<float> out);
// The same from storage-width codes (the error names a format whose codes do not fit).
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint16_t> codes, std::span<double> out);
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint16_t> codes, std::span<float> out);
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint8_t> codes, std::span<double> out);
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint8_t> codes, std::span<float> out);
expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint32_t> a,
                             std::span<const std::uint32_t> b, std::span<std::uint32_t> out, const rounding& r = {},
                             sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                 std::span<const std::uint32_t> c, std::span<std::uint32_t> out,
                                 const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint32_t> a, std::span<std::uint32_t> out,
                                  const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
// The same on storage-width codes (as round_array's: a byte per code up to 8 bits, two up to 16),
// with the same results: a third to a half of the bytes to move, which is what bounds these
// ops on large arrays. The error names a format whose codes do not fit.
expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint16_t> a,
                             std::span<const std::uint16_t> b, std::span<std::uint16_t> out, const rounding& r = {},
                             sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                                 std::span<const std::uint16_t> c, std::span<std::uint16_t> out,
                                 const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint16_t> a, std::span<std::uint16_t> out,
                                  const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint8_t> a,
                             std::span<const std::uint8_t> b, std::span<std::uint8_t> out, const rounding& r = {},
                             sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                                 std::span<const std::uint8_t> c, std::span<std::uint8_t> out,
                                 const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint8_t> a, std::span<std::uint8_t> out,
                                  const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});

}  // namespace fpemu
