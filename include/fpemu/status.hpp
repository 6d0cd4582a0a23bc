// What every rounding reports: the code, the IEEE 754 status flags and the error direction.
#pragma once

#include <cstdint>

namespace fpemu {

// IEEE 754 exception flags, as bits so that they accumulate with |.
namespace flag {
inline constexpr std::uint8_t invalid = 1;
inline constexpr std::uint8_t divide_by_zero = 2;
inline constexpr std::uint8_t overflow = 4;
inline constexpr std::uint8_t underflow = 8;  // tiny after rounding and inexact
inline constexpr std::uint8_t inexact = 16;
}  // namespace flag

struct rounded {
  std::uint32_t code = 0;
  std::uint8_t flags = 0;
  // Sign of (result - exact value), like MPFR's ternary value; 0 when exact or NaN.
  std::int8_t direction = 0;

  friend constexpr bool operator==(const rounded&, const rounded&) = default;
};

}  // namespace fpemu
