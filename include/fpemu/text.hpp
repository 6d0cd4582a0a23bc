// Decimal and hexadecimal text to and from exact values.
//
// parse_number reads the exact value of a decimal ("0.1", "-1.5e-3"), C99 hex-float
// ("0x1.8p-3") or special ("inf", "-inf", "nan") string; it keeps enough bits plus a sticky bit
// that rounding the result into any format, in any mode, is correct: "0.1" goes straight to
// e4m3fn without passing through a double.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"
#include "fpemu/status.hpp"
#include "fpemu/unpacked.hpp"

namespace fpemu {

expected<unpacked> parse_number(std::string_view text);

// Rounds text into format f (parse_number, then one rounding).
expected<rounded> from_string(const format& f, std::string_view text, const rounding& r = {},
                              std::uint64_t random = 0);

// The exact decimal value of a code: every digit, no rounding ("0.1015625", "448",
// "1.40129846432481707092372958328991613128026194187651577175706828388979108268586060148663818836212158203125e-45").
// Positional notation for decimal exponents -6..20, scientific otherwise; "inf", "-inf", "nan".
std::string to_decimal(const format& f, std::uint32_t code);

// The same for an exact unpacked value that has no sticky bit.
std::string to_decimal(const unpacked& x);

// C99 hex-float text of a code ("0x1.cp+8"); exact.
std::string to_hex_float(const format& f, std::uint32_t code);

// Bad input as an error message shows it: control bytes as \xNN (a NUL would end a C-string
// message early, an escape sequence would reach the terminal) and, past max_chars characters, cut
// with the input's length noted, so that a huge or binary token still gives one short line.
std::string printable(std::string_view text, std::size_t max_chars = std::string_view::npos);

}  // namespace fpemu
