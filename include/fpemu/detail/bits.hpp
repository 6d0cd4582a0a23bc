// Bit helpers and the 128-bit unsigned integer the core computes with.
//
// The core keeps every intermediate value exactly in a 128-bit significand (a product of two
// 32-bit significands plus 64 bits of headroom for alignment and stochastic-rounding bits), so
// it never rounds twice. g++ and nvcc both provide unsigned __int128 on x86-64 hosts and on the
// device; it is wrapped here so that the choice is made once.
#pragma once

#include <bit>
#include <cstdint>

#include "fpemu/config.hpp"

namespace fpemu::detail {

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

// Number of leading zero bits; 128 for zero. std::countl_zero is constexpr and compiles to one
// instruction on x86-64 (lzcnt/bsr); nvcc accepts it in device code with relaxed constexpr.
FPEMU_HD constexpr int clz128(u128 x) {
  const auto hi = static_cast<std::uint64_t>(x >> 64), lo = static_cast<std::uint64_t>(x);
  return hi != 0 ? std::countl_zero(hi) : 64 + std::countl_zero(lo);
}

// Index of the most significant set bit (0..127); x must be non-zero.
FPEMU_HD constexpr int msb128(u128 x) { return 127 - clz128(x); }

// x >> n for any n >= 0, with every bit shifted out OR-ed into bit 0 ("jamming"). Used when an
// operand is aligned far below the rounding position: the jammed bit keeps the information
// "strictly between two values" without the lost bits.
FPEMU_HD constexpr u128 shift_right_jam(u128 x, int n) {
  if (n <= 0) return x;
  if (n >= 128) return x != 0 ? 1 : 0;
  const u128 lost = x & ((u128{1} << n) - 1);
  return (x >> n) | (lost != 0 ? 1 : 0);
}

FPEMU_HD constexpr u128 low_mask(int n) {  // the n lowest bits set, 0 <= n <= 128
  return n >= 128 ? ~u128{0} : (u128{1} << n) - 1;
}

}  // namespace fpemu::detail
