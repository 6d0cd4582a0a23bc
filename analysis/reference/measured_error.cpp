// The measured error of a computed result (see measured_error.hpp).
#include "analysis/reference/measured_error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/reference/bounds.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/status.hpp"

namespace fpemu::analysis {

double measured_error(const exact_accumulator& exact, const unpacked& computed) {
  exact_accumulator diff = exact;
  diff.subtract(computed);
  const double e = -diff.to_double();  // exact - computed, rounded once, negated (exact)
  return e == 0 ? 0.0 : e;
}

double relative_error(double error, double exact) {
  if (std::isnan(error) || std::isnan(exact)) return std::numeric_limits<double>::quiet_NaN();
  if (exact == 0) return error == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs(error) / std::fabs(exact);
}

double upper_double(const exact_accumulator& acc) {
  const double d = acc.to_double();
  if (!std::isfinite(d)) return d;
  exact_accumulator rest = acc;
  rest.subtract(unpack(d));
  return !rest.is_zero() && !rest.value().negative ? bounds::next_up(d) : d;
}

std::string flags_break_model(std::uint8_t flags) {
  if (flags & flag::invalid) return "an invalid operation was raised";
  if (flags & flag::overflow) return "the accumulator overflowed";
  if (flags & flag::underflow) return "a rounding underflowed (the relative error model does not hold)";
  return {};
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  const std::size_t at = std::clamp<std::size_t>(rank, 1, v.size()) - 1;
  // NaN ranks above every number (a strict weak order, which nth_element needs).
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end(),
                   [](double a, double b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
  return v[at];
}

}  // namespace fpemu::analysis
