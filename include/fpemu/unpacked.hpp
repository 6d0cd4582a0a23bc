// An exact value on its way into the rounding core, and decoding a code into one.
//
// value = (-1)^negative * (sig + sticky * tiny) * 2^exp, where `sticky` says the true magnitude
// lies strictly between sig * 2^exp and (sig + 1) * 2^exp. Producers keep at least 66 bits
// below the final rounding position, so sticky only ever matters as "inexact".
#pragma once

#include <cstdint>

#include "fpemu/detail/bits.hpp"
#include "fpemu/format.hpp"

namespace fpemu {

enum class value_class : std::uint8_t { zero, finite, infinite, nan };

struct unpacked {
  value_class cls = value_class::zero;
  bool negative = false;
  bool signaling = false;  // NaN only: a signaling NaN raises `invalid` when consumed
  int exp = 0;
  detail::u128 sig = 0;
  bool sticky = false;
};

FPEMU_HD constexpr unpacked make_finite(bool negative, detail::u128 sig, int exp, bool sticky = false) {
  if (sig == 0 && !sticky) return unpacked{value_class::zero, negative};
  return unpacked{value_class::finite, negative, false, exp, sig, sticky};
}

// Decodes a code of format f. Bits above the format's width are ignored.
FPEMU_HD constexpr unpacked decode(const format& f, std::uint32_t code) {
  code &= code_mask(f);
  const bool negative = (code & sign_mask(f)) != 0;
  const std::uint32_t mag = code & magnitude_mask(f);
  const std::uint32_t field = mag >> f.frac_bits;
  const std::uint32_t frac = mag & frac_mask(f);

  switch (f.encoding) {
    case nonfinite::ieee:
      if (field == exp_field_max(f)) {
        if (frac == 0) return unpacked{value_class::infinite, negative};
        // Quiet NaNs have the top fraction bit set (IEEE 754-2008 6.2.1).
        return unpacked{value_class::nan, negative, (frac >> (f.frac_bits - 1)) == 0};
      }
      break;
    case nonfinite::fn:
      if (mag == magnitude_mask(f)) return unpacked{value_class::nan, negative};
      break;
    case nonfinite::fnuz:
      if (code == sign_mask(f)) return unpacked{value_class::nan, false};
      break;
    case nonfinite::finite: break;
  }
  if (field == 0 && f.has_zero) {
    if (!f.subnormals || frac == 0) return unpacked{value_class::zero, negative};
    return unpacked{value_class::finite, negative, false, emin(f) - f.frac_bits, frac};
  }
  const std::uint32_t sig = frac | (std::uint32_t{1} << f.frac_bits);
  return unpacked{value_class::finite, negative, false,
                  static_cast<int>(field) - f.bias - f.frac_bits, sig};
}

}  // namespace fpemu
