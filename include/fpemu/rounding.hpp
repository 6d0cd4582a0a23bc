// How to round: the mode, the overflow policy and the number of random bits for stochastic
// rounding. Always passed explicitly; there is no global rounding state.
#pragma once

#include <cstdint>

#include "fpemu/config.hpp"

namespace fpemu {

enum class round_mode : std::uint8_t {
  nearest_even,      // rne: IEEE roundTiesToEven
  nearest_away,      // rna: IEEE roundTiesToAway
  toward_zero,       // rz
  toward_positive,   // ru
  toward_negative,   // rd
  to_odd,            // rto: truncate, then set the last significand bit if inexact
  stochastic,        // sr: round away with probability floor(d * 2^k) / 2^k, k = sr_bits
  stochastic_exact,  // sr with 64 random bits and the sticky bit: probability d to 2^-64
};

// What happens when the rounded value (precision p, unbounded exponent) exceeds the largest
// finite number of the format.
enum class overflow_policy : std::uint8_t {
  ieee,      // what IEEE 754 prescribes for the mode: infinity (NaN where the format has no
             // infinity, the largest finite where it has neither) or the largest finite
  saturate,  // always the largest finite of that sign; infinite inputs too (PTX .satfinite)
  nan,       // always NaN (formats with a NaN only)
};

// The modes that take random bits.
FPEMU_HD constexpr bool is_stochastic(round_mode m) {
  return m == round_mode::stochastic || m == round_mode::stochastic_exact;
}

struct rounding {
  round_mode mode = round_mode::nearest_even;
  overflow_policy overflow = overflow_policy::ieee;
  int sr_bits = 16;  // 1..32, used by round_mode::stochastic only

  friend constexpr bool operator==(const rounding&, const rounding&) = default;
};

}  // namespace fpemu
