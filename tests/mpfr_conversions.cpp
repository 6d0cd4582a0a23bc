// Conversions from binary64 into every named format and a few user formats against the MPFR
// oracle, bit for bit (code, flags, direction), in every rounding mode and overflow policy, at
// the boundary patterns where conversions go wrong:
//   every representable value and its binary64 neighbours (nextafter), every midpoint between
//   adjacent representable values and its neighbours (largest subnormal / smallest normal
//   included), the overflow threshold (max finite + half an ulp) and its neighbours, values far
//   above it, tiny values around half the smallest subnormal and far below it, +-0, +-inf,
//   quiet and signaling NaNs of both signs.
// Formats of more than 2^17 positive values (tf32, fp32, e8m13, e11m20) use the first and last
// two values of every binade plus 2^15 random adjacent pairs instead of every value.
// Conversions between the small formats are in mpfr_small_formats.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "oracle_support.hpp"

using namespace oracle_test;
namespace oracle = fpemu::mpfr_oracle;

namespace {

// The positive finite values of f, sorted, read with the oracle's own decoder.
std::vector<double> positive_values(const format& f) {
  std::vector<double> v;
  const std::uint32_t mags = std::uint32_t{1} << (f.exp_bits + f.frac_bits);
  for (std::uint32_t m = 0; m < mags; ++m) {
    const auto d = oracle::decode_code(f, m);
    if (d.cls == oracle::decoded::kind::finite && d.value > 0) v.push_back(d.value);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Sampled positive values of a wide format: the first two and last two values of every binade
// (with the subnormal range's), and both ends of 2^15 random adjacent pairs.
std::vector<double> sampled_values(const format& f) {
  std::vector<double> v;
  const std::uint32_t frac_top = fpemu::frac_mask(f);
  const std::uint32_t fields = std::uint32_t{1} << f.exp_bits;
  for (std::uint32_t field = 0; field < fields; ++field) {
    for (std::uint32_t frac : {0u, 1u, 2u, frac_top - 1, frac_top}) {
      const auto d = oracle::decode_code(f, (field << f.frac_bits) | frac);
      if (d.cls == oracle::decoded::kind::finite && d.value > 0) v.push_back(d.value);
    }
  }
  const std::uint32_t mags = std::uint32_t{1} << (f.exp_bits + f.frac_bits);
  for (std::uint64_t i = 0; i < (1u << 15); ++i) {
    const std::uint32_t m = static_cast<std::uint32_t>(fpemu::random_bits(0xc0de, 3, i)) % mags;
    for (std::uint32_t c : {m, m + 1}) {
      const auto d = oracle::decode_code(f, c);
      if (d.cls == oracle::decoded::kind::finite && d.value > 0) v.push_back(d.value);
    }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

void push_with_neighbours(std::vector<double>& out, double x) {
  out.push_back(x);
  out.push_back(std::nextafter(x, 0.0));
  out.push_back(std::nextafter(x, std::numeric_limits<double>::infinity()));
}

// The positive probes of f (negative ones are their negations).
std::vector<double> probes(const format& f, bool sampled) {
  const std::vector<double> vals = sampled ? sampled_values(f) : positive_values(f);
  std::vector<double> out;
  for (const double v : vals) push_with_neighbours(out, v);
  for (std::size_t i = 0; i + 1 < vals.size(); ++i) {
    // The midpoint of two adjacent values of f (exact in binary64: one more bit). In a sampled
    // list, only pairs whose gap is the spacing of f at the lower value are adjacent.
    const double gap = vals[i + 1] - vals[i];
    const int e = std::max(std::ilogb(vals[i]), static_cast<int>(fpemu::emin(f)));
    const double spacing = std::ldexp(1.0, e - f.frac_bits);
    if (gap == spacing) push_with_neighbours(out, (vals[i] + vals[i + 1]) / 2);
  }
  const double maxv = vals.back(), minv = vals.front();
  // The next p-bit number above the largest finite value (480 for e4m3fn, 2^(emax+1) for most),
  // the overflow threshold halfway to it, and values beyond.
  const double ulp_max = std::ldexp(1.0, std::ilogb(maxv) - f.frac_bits);
  const double next = maxv + ulp_max;
  push_with_neighbours(out, maxv + ulp_max / 2);
  if (std::isfinite(next)) {
    push_with_neighbours(out, next);
    push_with_neighbours(out, 2 * next);
  }
  push_with_neighbours(out, std::numeric_limits<double>::max());
  // Tiny values: half the smallest positive value (a tie between it and zero), a quarter, far
  // below, and the binary64 extremes.
  push_with_neighbours(out, minv / 2);
  push_with_neighbours(out, minv / 4);
  push_with_neighbours(out, minv * 0.75);
  push_with_neighbours(out, std::ldexp(minv, -40));
  out.push_back(std::numeric_limits<double>::denorm_min());
  out.push_back(std::numeric_limits<double>::min());
  out.push_back(0.0);
  out.push_back(std::numeric_limits<double>::infinity());
  out.push_back(std::bit_cast<double>(0x7ff8000000000000ull));  // quiet NaN
  out.push_back(std::bit_cast<double>(0x7ff0000000000001ull));  // signaling NaN
  out.push_back(std::bit_cast<double>(0x7ff4000000000000ull));  // signaling NaN
  out.erase(std::remove_if(out.begin(), out.end(), [](double x) { return std::isfinite(x) && x < 0; }), out.end());
  return out;
}

std::string show_double(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (%.17g)", x, x);
  return buf;
}

void check_format(const named& nf) {
  const format& f = nf.fmt;
  REQUIRE_MESSAGE(!fpemu::check(f).has_value(), nf.name);
  const bool sampled = fpemu::width(f) - (f.is_signed ? 1 : 0) > 17;
  const std::vector<double> positive = probes(f, sampled);
  const auto& modes = all_modes();
  const auto policies = policies_for(f);
  checker chk("mpfr_conversions: double -> " + nf.name);
  oracle::oracle o;
  std::uint64_t index = 0, count = 0;
  for (const double p : positive) {
    for (const double x : {p, -p}) {
      ++count;
      o.exact_double(x);
      compare_modes(
          chk, o, f, modes, policies, index++,
          [&](const rounding& r, std::uint64_t random) { return fpemu::from(f, x, r, random); },
          [&] { return "double " + show_double(x) + " -> " + nf.name; });
    }
  }
  CHECK(count == 2 * positive.size());
  chk.finish(count * policy_mode_count(f, modes), std::to_string(count) + " doubles x " + std::to_string(modes.size()) +
                                                     " modes x " + std::to_string(policies.size()) + " policies");
}

}  // namespace

TEST_CASE("from double into every named format: values, midpoints, overflow threshold, tiny values, specials and "
          "their neighbours, every mode and policy == MPFR") {
  for (const auto& n : fpemu::named_formats()) check_format({std::string(n.name), n.fmt});
}

TEST_CASE("from double into user formats (IEEE 8-bit, flush-to-zero, unsigned, binary64 range): boundary doubles, "
          "every mode and policy == MPFR") {
  for (const char* spec : {"e3m4", "e4m3:nosub", "e5m10:nosub", "e4m4:unsigned", "e3m3:unsigned:nosub:fn",
                           "e11m20", "e11m4:nosub:fn:bias=1024", "e6m1:finite"})
    check_format(user_format(spec));
}
