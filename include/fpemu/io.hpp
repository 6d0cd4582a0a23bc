// Emulated values in streams and in std::format.
//
// A value prints as the binary64 number it is: every value of a format fp<F> can hold is a
// binary64 value (value.hpp), so the conversion is exact and the stream's own settings
// (precision, fixed/scientific, std::hexfloat) or a std::format spec for double apply unchanged,
// as they do for float. `std::cout << fp<bf16>(0.1)` prints 0.100098 at the default precision 6,
// with std::hexfloat the exact 0x1.9ap-4. Every digit of the exact decimal value is
// to_decimal(F, x.code()) (text.hpp, in the library).
//
// Header-only, like the rest of fp<F>; it is kept out of value.hpp because the core includes no
// iostream (it also compiles for the device).
#pragma once

#include <ostream>
#include <version>

#include "fpemu/value.hpp"

#if defined(__cpp_lib_format)
#include <format>
#endif

namespace fpemu {

template <format F, class CharT, class Traits>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os, fp<F> x) {
  return os << static_cast<double>(x);
}

}  // namespace fpemu

// std::format("{:.3e}", x): the spec of double. Standard libraries without <format> (GCC 12's,
// Debian 12's default) see only operator<<.
#if defined(__cpp_lib_format)
template <fpemu::format F, class CharT>
struct std::formatter<fpemu::fp<F>, CharT> : std::formatter<double, CharT> {
  template <class Context>
  auto format(fpemu::fp<F> x, Context& ctx) const {
    return std::formatter<double, CharT>::format(static_cast<double>(x), ctx);
  }
};
#endif
