// Counter-based random bits for stochastic rounding: Philox-4x32-10 (Salmon, Moraes, Dror,
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), as in Random123 and cuRAND.
//
// The bits for element i of stream s under seed k are a pure function of (k, s, i): the result
// of a stochastic rounding never depends on thread count, vector width, or CPU versus GPU.
//
// One stream, two layouts. Under (seed, stream) the stream is the sequence of 128-bit Philox
// blocks b = 0, 1, 2, ... (philox_block). Who reads it, and how:
//  - one rounding after another (accumulators, GEMM epilogues): rounding i reads
//    random_bits(seed, stream, i), the low 64 bits of block i;
//  - arrays (round_array and the array functions, the SIMD kernels, the CUDA conversion kernel,
//    the optimizers' stored tensors, the fused CUDA optimizer): element i reads
//    keystream_bits(seed, stream, i, width), `width` bits packed 128 / width to a block, so that
//    a vector unit spends one Philox evaluation on 8 elements.
// Both are keyed by sr_stream {seed, stream, first_index}: the k-th rounding or element of a
// call reads index first_index + k. The layouts are fixed: recorded results (tests, notebooks,
// GPU checks) depend on them.
#pragma once

#include <array>
#include <cstdint>

#include "fpemu/config.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu {

// The key of a stochastic rounding's random bits: element (or rounding) k of a call draws the
// bits of index first_index + k in stream `stream` under `seed`, in the layout of its reader
// (above).
struct sr_stream {
  std::uint64_t seed = 0;
  std::uint32_t stream = 0;
  std::uint64_t first_index = 0;
};

using philox_counter = std::array<std::uint32_t, 4>;
using philox_key = std::array<std::uint32_t, 2>;

// Philox's multipliers and Weyl key increments (the vector rounds, fpemu/detail/philox-inl.h, use
// them too).
inline constexpr std::uint32_t philox_m0 = 0xD2511F53, philox_m1 = 0xCD9E8D57;
inline constexpr std::uint32_t philox_w0 = 0x9E3779B9, philox_w1 = 0xBB67AE85;

FPEMU_HD constexpr philox_counter philox4x32_10(philox_counter ctr, philox_key key) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{philox_m0} * ctr[0];
    const std::uint64_t p1 = std::uint64_t{philox_m1} * ctr[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
    key = {key[0] + philox_w0, key[1] + philox_w1};
  }
  return ctr;
}

// Philox block `counter` of stream `stream`: counter (counter lo, counter hi, stream, word3), key =
// seed. word3 is 0 but for the low words of sr-exact's array keystream (keystream_bits, width 64).
FPEMU_HD constexpr philox_counter philox_block(std::uint64_t seed, std::uint32_t stream, std::uint64_t counter,
                                               std::uint32_t word3 = 0) {
  return philox4x32_10({static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32), stream, word3},
                       {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

// 64 random bits for (seed, stream, index): the first two words of block `index`. Stochastic
// rounding with k <= 32 bits uses the low k bits (the first Philox word).
FPEMU_HD constexpr std::uint64_t random_bits(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const philox_counter out = philox_block(seed, stream, index);
  return std::uint64_t{out[0]} | (std::uint64_t{out[1]} << 32);
}

// The random bits of element `index` of a stochastically rounded array (round_array, apply, ...):
// a Philox keystream in which one 128-bit block serves 128 / width elements, so that a vector
// unit spends one Philox evaluation on 8 elements (width 16), not one per element. Blocks are
// taken in groups of 16 (counters 16g .. 16g+15); element l of group g reads piece l / 16 of
// block 16g + l % 16, piece j being bits [j*width, (j+1)*width) of out[0] | out[1] << 32 |
// out[2] << 64 | out[3] << 96. A vector of 4, 8 or 16 lanes thus fills whole pieces of
// consecutive blocks, and the bits stay a pure function of (seed, stream, index).
// width: 16, 32 or 64 (array_random_width). Width 64 (sr-exact) is two keystreams of width 32:
// element i's high word is keystream_bits(seed, stream, i, 32), its low word the same piece of the
// blocks whose counter word 3 is 1. The high word decides the rounding but in one lane in 2^32
// (array_simd.cpp, ExactUnits), so the vector kernels make the high words alone, four to a block,
// and the low word only where it is read: half the Philox work of packing 64 bits two to a block.
// keystream_block and keystream_piece (widths 16 and 32) are the two halves, for code that
// computes each Philox block once and hands its pieces to several elements (the CUDA conversion
// kernel).
FPEMU_HD constexpr std::uint64_t keystream_block(std::uint64_t index, int width) {
  const std::uint64_t per_group = 16 * static_cast<std::uint64_t>(128 / width);
  return index / per_group * 16 + index % 16;
}

// Element `index`'s bits out of its block's Philox output `out`.
FPEMU_HD constexpr std::uint64_t keystream_piece(const philox_counter& out, std::uint64_t index, int width) {
  const std::uint64_t per_group = 16 * static_cast<std::uint64_t>(128 / width);
  const int bit = static_cast<int>(index % per_group / 16) * width;
  const std::uint64_t half = bit < 64 ? (std::uint64_t{out[0]} | (std::uint64_t{out[1]} << 32))
                                      : (std::uint64_t{out[2]} | (std::uint64_t{out[3]} << 32));
  return (half >> (bit % 64)) & ((std::uint64_t{1} << width) - 1);
}

FPEMU_HD constexpr std::uint64_t keystream_bits(std::uint64_t seed, std::uint32_t stream, std::uint64_t index,
                                                int width) {
  if (width == 64) {
    const std::uint64_t block = keystream_block(index, 32);
    return keystream_piece(philox_block(seed, stream, block), index, 32) << 32 |
           keystream_piece(philox_block(seed, stream, block, 1), index, 32);
  }
  return keystream_piece(philox_block(seed, stream, keystream_block(index, width)), index, width);
}

// Bits per element the array functions draw: as few as the rounding reads.
FPEMU_HD constexpr int array_random_width(const rounding& r) {
  if (r.mode == round_mode::stochastic_exact) return 64;
  return r.sr_bits <= 16 ? 16 : 32;
}

}  // namespace fpemu
