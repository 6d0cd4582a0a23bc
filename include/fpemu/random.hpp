// Counter-based random bits for stochastic rounding: Philox-4x32-10 (Salmon, Moraes, Dror,
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), as in Random123 and cuRAND.
//
// The bits for element i of stream s under seed k are a pure function of (k, s, i): the result
// of a stochastic rounding never depends on thread count, vector width, or CPU versus GPU.
#pragma once

#include <array>
#include <cstdint>

#include "fpemu/config.hpp"

namespace fpemu {

using philox_counter = std::array<std::uint32_t, 4>;
using philox_key = std::array<std::uint32_t, 2>;

FPEMU_HD constexpr philox_counter philox4x32_10(philox_counter ctr, philox_key key) {
  constexpr std::uint32_t m0 = 0xD2511F53, m1 = 0xCD9E8D57;  // multipliers
  constexpr std::uint32_t w0 = 0x9E3779B9, w1 = 0xBB67AE85;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{m0} * ctr[0];
    const std::uint64_t p1 = std::uint64_t{m1} * ctr[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
    key = {key[0] + w0, key[1] + w1};
  }
  return ctr;
}

// 64 random bits for (seed, stream, index): counter (index lo, index hi, stream, 0), key = seed.
// Stochastic rounding with k <= 32 bits uses the low k bits (the first Philox word).
FPEMU_HD constexpr std::uint64_t random_bits(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const philox_counter out = philox4x32_10(
      {static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), stream, 0},
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
  return std::uint64_t{out[0]} | (std::uint64_t{out[1]} << 32);
}

}  // namespace fpemu
