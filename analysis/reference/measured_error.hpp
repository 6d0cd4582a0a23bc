// The measured error of a computed result against its exact value: what every report of a sum,
// a dot product or a GEMM prints next to its bounds, computed in one place so that the reports
// agree.
//
// The exact value is held in an exact_accumulator (every term and product added without
// rounding); the error computed - exact is formed exactly there and rounded once to the nearest
// double, so it is the true error to within half an ulp of binary64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpemu/exact_accumulator.hpp"
#include "fpemu/status.hpp"
#include "fpemu/unpacked.hpp"

namespace fpemu::analysis {

// computed - exact, formed exactly, rounded to the nearest double (+0 when equal).
double measured_error(const exact_accumulator& exact, const unpacked& computed);

// |error| / |exact|, with 0/0 = 0, x/0 = +inf and NaN when either is NaN.
double relative_error(double error, double exact);

// The exact value rounded up to a double: for the S of a bound c * S, which must cover the real S.
double upper_double(const exact_accumulator& acc);

// Why IEEE flags raised by a computation void the standard model fl(x op y) = (x op y)(1 + d)
// behind every bound, or "" when they do not (only inexact raised).
std::string flags_break_model(std::uint8_t flags);
// The flags flags_break_model reads.
inline constexpr std::uint8_t model_breaking_flags = flag::invalid | flag::overflow | flag::underflow;

// The q-quantile (0 < q <= 1) of errors v by the nearest rank, the ceil(q n)-th smallest, NaN
// ranking above every number (a diverged run's error); 0 for none. Reports give the median and a
// high quantile beside the mean, which a few near-cancelling samples (a tiny exact value, a huge
// relative error) dominate.
double quantile(std::vector<double> v, double q);

}  // namespace fpemu::analysis
