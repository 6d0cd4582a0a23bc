// Vector kernels behind the array functions (array.hpp), compiled for every SIMD target Highway
// knows and dispatched at run time to the best one the CPU has.
//
// They make no rounding decision of their own beyond the core's rule written for lanes: where a
// lane's input and result are both within the format's finite range (normal or subnormal, no
// overflow), the lane is rounded by adding an increment below its kept bits, as round_float
// does (round_float.hpp lists the increment of every mode), or, below the normal range, scaled
// to units of the subnormal quantum and rounded by the instruction of the mode; lanes that
// overflow, infinite inputs and quiet NaN inputs take the core's result for their sign,
// computed once per call; the few others (signaling NaNs, binary32 subnormal inputs in some
// modes) are handed to the scalar core with the same random bits. tests/test_array_simd.cpp
// checks every target bitwise against the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fpemu/format.hpp"
#include "fpemu/random.hpp"
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

// Where codes go (code_sink) or come from (code_source): one code per element in 1, 2 or 4
// bytes (the caller checks that the format's codes fit), or nowhere. Storage-width codes (a byte
// per FP8 code) move a quarter or half of the bytes of 32-bit ones, which is what bounds large
// arrays.
template <class Void>
struct code_array {
  Void* data = nullptr;
  int bytes = 4;
  code_array(std::nullptr_t = nullptr) {}
  template <class Code>
    requires(std::is_convertible_v<Code*, Void*> && std::is_unsigned_v<Code> &&
             !std::is_same_v<std::remove_const_t<Code>, bool> && (sizeof(Code) == 1 || sizeof(Code) == 2 ||
                                                                  sizeof(Code) == 4))
  code_array(Code* p) : data(p), bytes(static_cast<int>(sizeof(Code))) {}
  // The codes of element i onwards.
  code_array at(std::size_t i) const {
    using Byte = std::conditional_t<std::is_const_v<Void>, const std::byte, std::byte>;
    code_array s = *this;
    if (data) s.data = static_cast<Byte*>(data) + i * static_cast<std::size_t>(bytes);
    return s;
  }
  // Code i, one at a time.
  std::uint32_t operator[](std::size_t i) const {
    const void* p = at(i).data;
    if (bytes == 1) return *static_cast<const std::uint8_t*>(p);
    if (bytes == 2) return *static_cast<const std::uint16_t*>(p);
    return *static_cast<const std::uint32_t*>(p);
  }
};
using code_sink = code_array<void>;
using code_source = code_array<const void>;

// In and out for [0, n). `codes`, `values` (the rounded value, for round-in-place) and `flags`
// may each be null. Returns the union of the flags.
std::uint8_t encode_floats(const format& f, const rounding& r, const float* in, std::size_t n, const keystream& random,
                           code_sink codes, float* values, std::uint8_t* flags);
std::uint8_t encode_doubles(const format& f, const rounding& r, const double* in, std::size_t n,
                            const keystream& random, code_sink codes, std::uint8_t* flags);

// codes -> binary32 values, for formats with values_are_floats(f). `stream`: with non-temporal
// stores, which write the output past the caches without reading it first (for outputs larger
// than the caches, which nothing reads soon: a third less memory traffic). `non_finite`, where
// not null, receives whether a value is an infinity or a NaN.
void decode_floats(const format& f, code_source codes, std::size_t n, float* out, bool stream = false,
                   bool* non_finite = nullptr);
// The same as the values' bits (codes of binary32, for convert_array); returns whether a value is
// an infinity or a NaN.
bool decode_binary32(const format& f, code_source codes, std::size_t n, std::uint32_t* out, bool stream = false);
// The same as binary64 values (each exact there).
void decode_doubles(const format& f, code_source codes, std::size_t n, double* out, bool stream = false);

// out[i] = keystream_bits(seed, stream, first + i, width) for i in [0, n), width 16 or 32; width
// 64 gives the high 32 of each element's 64 bits (the keystream of width 32: what sr-exact reads
// for shifts up to 32, and but in one lane in 2^32 beyond).
// The kernels fill it keystream_chunk elements at a time (4 KiB, in L1), just before they use
// them, so that Philox's arithmetic overlaps the memory traffic of the rounding. Made beside the
// rounding instead (a Philox group ahead inside the encode kernel's loop) or in chunks of 128,
// the stochastic modes ran 0.68-0.99x as fast in median on a Zen 4 core
// (bench/results/stochastic-keystream-fused-2026-12-02-zen4-lib-ab.md).
inline constexpr std::size_t keystream_chunk = 1024;
void fill_keystream(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::size_t n, int width,
                    std::uint32_t* out);

// Whether the floating-point environment rounds to nearest (the kernels' hardware roundings
// assume it), and whether it neither flushes subnormal results to zero nor reads subnormal
// inputs as zero (x86's FTZ and DAZ).
bool rounds_to_nearest();
bool keeps_subnormals();

// Element-wise arithmetic (array_ops.cpp, where the argument for it is written): each lane
// forms the exact result, or the exact result rounded to odd at binary32's or binary64's
// precision, which the encode kernels above then round once into the format as the core rounds
// the exact result.
enum class lane_op : std::uint8_t { add, sub, mul, div, fma, sqrt };
// Which lanes cover op on f by r, for every finite operand: binary32 ones, binary64 ones, or
// none (the core then does every element).
enum class op_path : std::uint8_t { core, binary32, binary64 };
op_path op_lanes(lane_op op, const format& f, const rounding& r);
// out[i] = op(a[i], b[i], c[i]) for i in [0, n), n < 2^24, on codes of f at any width (op_lanes
// not core; b and c are read by the ops that take them); a NaN result is a quiet NaN with the
// core's sign.
// Lanes left to the core (values out of the range binary32 lanes cover exactly, an inexact lane
// under sr-exact) get 0; they and the lanes whose arithmetic raised a flag (invalid,
// divide-by-zero: to be or-ed into their encoding's) are listed in `special`, in order, each as
// its index | flags << kLaneIndexBits (no flags: the core's); returns how many. `codes`: where
// the caller will store the n codes next (prefetched for writing), or any readable n-element
// array.
// An entry whose flags are kInfiniteQuotient (no union of flags has that bit) is x / 0, x
// finite and nonzero, in a format whose infinity rounds with a flag (none, or policy saturate):
// its result is the core's for that sign, one for every such lane, which the caller puts in.
// `raised`, for a caller that keeps only the union of the flags: where not null, the lanes whose
// only special is a flag are not listed, and their flags are or-ed into *raised.
inline constexpr int kLaneIndexBits = 24;
inline constexpr std::uint32_t kLaneIndexMask = (std::uint32_t{1} << kLaneIndexBits) - 1;
inline constexpr std::uint8_t kInfiniteQuotient = 0x80;
std::size_t op_floats(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
                      const rounding& r, float* out, std::uint32_t* special, code_sink codes,
                      std::uint8_t* raised = nullptr);
std::size_t op_doubles(lane_op op, const format& f, code_source a, code_source b, code_source c, std::size_t n,
                       const rounding& r, double* out, std::uint32_t* special, code_sink codes,
                       std::uint8_t* raised = nullptr);

// The same for fp16 or bf16 codes into two-byte codes of the same format in one pass
// (array_ops.cpp: OnePassRun), where one_pass_ops(op, f, r): lanes serve the op, f is fp16 or bf16
// (on every SIMD target), r rounds to nearest-even, toward zero, up or down, or stochastically with
// up to 16 random bits, under policy ieee. From element i
// on, out[j] = op(a[j], b[j], c[j]) (element j's random bits those of element j of `random`) for
// the vectors whose elements raise no flag outside `seen` (a union of flags) and need not go
// to the core; returns where it stopped: at the first other vector, which the caller does by
// op_floats or op_doubles and the encode kernels, or at end's last whole vector. Raises no flag
// itself.
bool one_pass_ops(lane_op op, const format& f, const rounding& r);
std::size_t one_pass_op(lane_op op, const format& f, const rounding& r, const sr_stream& random,
                        const std::uint16_t* a, const std::uint16_t* b, const std::uint16_t* c, std::size_t i,
                        std::size_t end, std::uint16_t* out, std::uint8_t seen);

// A table of an op's results on codes of at most 8 bits (array.cpp makes them): entries
// code | flags << 8, at x for one operand, x << 8 | y for two, and rows[x << 8 | y] << 8 | z for
// three (fma: `rows` names the row of results over z that the pair (x, y) reads), with x, y and z
// the operands' low bytes. In stochastic rounding with k <= 16 random bits (one or two operands),
// four entries at 4 x that index: the results for random bits 0 and 2^k - 1, and the last random
// value whose result has the first one's code, and the last whose result has its flags (0xffff
// where the two agree): element i's result is the second one's code where its random value r is
// above the former, else the first one's, and likewise for the flags. With them, one word an
// index holds the same where the second result is the first one's entry plus 1 (its code one up,
// a carry into the magnitude, with the same flags) or the first one's: the first one's entry, and
// the last random value with its code in the high half, so that element i's entry is that entry
// plus (r > the high half); elsewhere (as where the carry overflows or ends underflow, or where a
// negative result rounds to +0 in a format without -0) bit 15 is set, and the four entries tell.
// Without random bits, the entries and the rows end in a spare element (a kernel reads 16-bit
// elements as 32-bit words).
struct result_table_view {
  int operands;                  // 1, 2 or 3
  int random_bits;               // k, for stochastic rounding; else 0
  const std::uint16_t* entries;  // code | flags << 8 (four per index with random_bits)
  const std::uint16_t* rows;     // three operands only
  const std::uint32_t* words;    // random_bits only: one per index
};
// How look_up reads the entries of two or three operands without random bits on AVX2 and AVX-512:
// by the loads or the gathers that were faster on the CPU it runs on, or (for tests) as named.
enum class table_reads { by_cpu, gathers, loads };
// out[i] = the entry of (a[i], b[i], c[i]) & 0xff for i in [0, n) (b and c read where the table
// takes them; with random bits, the result of element i's random value, the low k bits of
// random[i]); flags[i] (if not null) the entry's high byte; returns the union of the high bytes.
// a, b, c and out hold codes of one width.
std::uint8_t look_up(const result_table_view& table, code_source a, code_source b, code_source c, std::size_t n,
                     code_sink out, std::uint8_t* flags, const std::uint32_t* random = nullptr,
                     table_reads reads = table_reads::by_cpu);

// For tests: whether the array functions (array.cpp) hold a table of results of op, f and r.
bool has_table(lane_op op, const format& f, const rounding& r);

// For tests: the name of the target the kernels dispatch to now.
const char* target_name();

}  // namespace fpemu::simd
