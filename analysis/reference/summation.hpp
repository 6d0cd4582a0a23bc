// Reference summation routines: slow, obviously correct, and explicit about order and
// accumulator. Every result comes with the exact sum (exact_accumulator), the error, and the
// error bounds of analysis/reference/bounds.hpp evaluated for the method, so a report always prints the
// measured error next to what the theory allows.
//
// Methods (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., chapter 4):
//  recursive   s = round(s + x_i), i = 0..n-1, under any accumulator model (format, block-FMA
//              tensor-core model, exact), any rounding mode including stochastic
//  pairwise    halves summed recursively down to single terms, each addition rounded
//  blocked     blocks of b summed recursively, then the block sums summed recursively
//  kahan       compensated summation (Kahan 1965), every operation rounded in the accumulator
//  neumaier    Kahan-Babuska as improved by Neumaier (1974)
//  promoted    chunks of Nc summed in the low-precision accumulator, each chunk total added
//              into a high-precision register (fp32 by default): DeepSeek-V3's promotion
//  stochastic  recursive with stochastic rounding (k random bits, Philox keyed by seed/stream)
//
// Details (summation.cpp): recursive starts from s_1 = x_1 exactly for format and exact
// accumulators (the first rounding is of x_1 + x_2), block-FMA chains and promotion start from
// +0; pairwise and blocked start from the exact terms; kahan and neumaier start from s = c = 0.
// Every operation of pairwise, blocked, kahan and neumaier takes exact operands (an input wider
// than the accumulator is never rounded twice), and their k-th rounding takes
// random_bits(sr.seed, sr.stream, sr.first_index + k). stochastic keeps stochastic_exact when the
// accumulator asks for it, and otherwise uses k-bit stochastic rounding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/reference/bounds.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"

namespace fpemu::analysis {

enum class sum_method : std::uint8_t { recursive, pairwise, blocked, kahan, neumaier, promoted, stochastic };

std::string_view to_string(sum_method m);
expected<sum_method> parse_sum_method(std::string_view name);  // the names above

struct sum_options {
  sum_method method = sum_method::recursive;
  format input = formats::fp32;  // format of the summands' codes
  // The accumulator. pairwise, blocked, kahan and neumaier need kind == format; promoted uses
  // `acc` for the chunks (promote_every is set from `block`); stochastic forces the stochastic mode.
  accumulator_model acc{};
  int block = 32;                 // blocked: b; promoted: Nc
  format high = formats::fp32;    // promoted: the high-precision register
  rounding high_rounding{};       // its rounding (nearest-even)
  sr_stream sr{};                 // stochastic rounding bits
  double lambda = 3.0;            // probabilistic bounds: lambda (probability reported with it)
};

using bounds::bound_line;  // one bound next to the measured error

struct sum_result {
  format result_format;    // the format `code` is in
  std::uint32_t code = 0;  // the computed sum
  double value = 0;        // its value
  double exact = 0;        // the exact sum, rounded to nearest double
  double error = 0;        // computed - exact, computed exactly, then rounded to double
  double relative_error = 0;  // |error| / |exact| (inf when exact == 0 and error != 0)
  double abs_sum = 0;      // sum |x_i| (rounded to double)
  std::uint8_t flags = 0;  // union of IEEE flags raised by the accumulator
  // bounds[0] is the method's deterministic bound (probability 1); the lines after it are
  // probabilistic. A line is not valid where its hypothesis fails or the data break the standard
  // model (a NaN or infinite input, overflow, underflow, a block-FMA premise), with the reason.
  std::vector<bound_line> bounds;
};

// Sums n codes of options.input. Errors: invalid options (method/accumulator mismatch, block < 1,
// invalid formats or rounding), named with the valid range.
expected<sum_result> sum(std::span<const std::uint32_t> x, const sum_options& options);

// The accumulator's effective unit roundoff for bounds: u = 2^-p for round-to-nearest, 2u for
// directed, odd and stochastic rounding (the error of one rounding is below one ulp).
double effective_unit_roundoff(const format& f, round_mode mode);

}  // namespace fpemu::analysis
