// Bit helpers and the 128-bit unsigned integer the core computes with.
//
// The core keeps every intermediate value exactly in a 128-bit significand (a product of two
// 32-bit significands plus 64 bits of headroom for alignment and stochastic-rounding bits), so
// it never rounds twice. g++ and nvcc both provide unsigned __int128 on x86-64 hosts and on the
// device; it is wrapped here so that the choice is made once.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "fpemu/config.hpp"

namespace fpemu::detail {

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

// Bit counts of 32- and 64-bit words, for every function that may run on a GPU. nvcc (13.0, with
// libstdc++ 12) compiles std::countr_zero of any width and the 64-bit std::countl_zero and
// std::bit_width in *device* code to constants (32 or 64, 0): the __builtin_ctz*/__builtin_clzl
// they call are host-only there, and the warning is silenced inside a system header. On an H100
// that made every subnormal result of the core 0 (`fpemu gpu-check`, 2026-11-25). So the device
// pass calls CUDA's own instructions outside constant evaluation, and std:: everywhere else;
// headers compiled for the device use these, never <bit>'s counters (tests/test_device_bit_counts.py).
template <class T>
FPEMU_HD constexpr int countl_zero(T x) {
  static_assert(std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>);
#if defined(__CUDA_ARCH__)
  if (!std::is_constant_evaluated()) {
    if constexpr (sizeof(T) == 8) return __clzll(static_cast<long long>(x));
    return __clz(static_cast<int>(x));
  }
#endif
  return std::countl_zero(x);
}

template <class T>
FPEMU_HD constexpr int countr_zero(T x) {
  static_assert(std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>);
#if defined(__CUDA_ARCH__)
  if (!std::is_constant_evaluated()) {
    if (x == 0) return static_cast<int>(8 * sizeof(T));
    if constexpr (sizeof(T) == 8) return __ffsll(static_cast<long long>(x)) - 1;
    return __ffs(static_cast<int>(x)) - 1;
  }
#endif
  return std::countr_zero(x);
}

// Bits needed to write x: 0 for zero.
template <class T>
FPEMU_HD constexpr int bit_width(T x) {
  return static_cast<int>(8 * sizeof(T)) - countl_zero(x);
}

// Number of leading zero bits; 128 for zero.
FPEMU_HD constexpr int clz128(u128 x) {
  const auto hi = static_cast<std::uint64_t>(x >> 64), lo = static_cast<std::uint64_t>(x);
  return hi != 0 ? countl_zero(hi) : 64 + countl_zero(lo);
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
