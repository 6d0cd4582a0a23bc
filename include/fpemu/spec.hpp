// Names and text specs of formats, rounding modes and overflow policies.
//
// Format spec grammar (each option explained in docs/formats.md):
//   spec    := NAME | "e" EXP "m" FRAC { ":" option }
//   option  := "bias=" INT | "nosub" | "ieee" | "fn" | "fnuz" | "finite" | "unsigned" | "nozero"
// NAME is one of the named formats (e4m3fn, bf16, ...). Defaults for eXmY: IEEE encoding,
// subnormals, signed, bias 2^(EXP-1) - 1 (2^(EXP-1) with fnuz).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "fpemu/compare.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu {

// The named formats (format.hpp's table), in its order.
inline std::span<const named_format> named_formats() { return named_format_table; }

// Checks that a format is one fpemu supports; the message names the field and its valid range.
std::optional<std::string> check(const format& f);

expected<format> parse_format(std::string_view spec);

// The canonical spec of a format: its name if it has one, else "eXmY" plus the options that
// differ from the defaults. parse_format(to_string(f)) == f.
std::string to_string(const format& f);

expected<round_mode> parse_round_mode(std::string_view name);  // rne rna rz ru rd rto sr sr-exact
std::string_view to_string(round_mode m);
expected<overflow_policy> parse_overflow_policy(std::string_view name);  // ieee saturate nan
std::string_view to_string(overflow_policy p);

// Checks a rounding against a format: sr_bits in 1..32, policy `nan` needs a format with NaN.
std::optional<std::string> check(const format& f, const rounding& r);

std::string_view to_string(nonfinite e);  // ieee fn fnuz finite
std::string_view to_string(fp_class c);   // positive_normal, quiet_nan, ...

// "inexact,underflow" or "-" for no flags, in IEEE order.
std::string flags_to_string(unsigned flags);

}  // namespace fpemu
