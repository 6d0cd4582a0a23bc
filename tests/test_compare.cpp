// compare.hpp: compare_quiet/compare_signaling, minimum/maximum(_number), next_up/next_down
// and classify, against a reference built only from the exact values of the codes (to_double)
// and the rules of IEEE 754-2019 (5.3.1, 5.6.1, 5.7.2, 5.11, 9.6):
//  - every code pair of the formats up to 8 bits;
//  - every code of bf16 and fp16 for next_up/next_down/classify, and each code against a set
//    of boundary codes plus random pairs for the comparisons;
//  - fp32: next_up/next_down against std::nextafter and comparisons against the host's float
//    operators, on ~1e6 random codes and the boundaries.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <ios>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fpemu/compare.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/format.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;

namespace {

// ---- The reference: values, IEEE 754 rules, nothing from compare.hpp ----

bool same_double(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// IEEE 754-2019 6.2.1: a NaN is signaling when the first bit of its trailing significand is 0.
// Only the ieee encoding has more than one NaN code.
bool ref_signaling(const format& f, std::uint32_t code) {
  if (f.encoding != nonfinite::ieee) return false;
  const std::uint32_t field = (code >> f.frac_bits) & ((1u << f.exp_bits) - 1);
  const std::uint32_t frac = code & ((1u << f.frac_bits) - 1);
  return field == (1u << f.exp_bits) - 1 && frac != 0 && (frac >> (f.frac_bits - 1)) == 0;
}

ordering ref_order(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return ordering::unordered;
  if (a < b) return ordering::less;
  if (a > b) return ordering::greater;
  return ordering::equal;
}

// Total order of non-NaN values in which -0 < +0 (IEEE 754-2019 9.6).
bool less_signed_zero(double a, double b) {
  if (a == 0 && b == 0) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

// Facts about a format read from its decoded values.
struct format_facts {
  format f;
  std::uint64_t codes = 0;
  std::vector<double> values;   // value of each code
  std::vector<double> sorted;   // distinct non-NaN values, ascending, -0 and +0 merged
  bool has_nan = false, has_negative_zero = false;
  double min_normal_value = 0;  // the smallest positive value with a non-zero exponent field
};

format_facts facts_of(const format& f) {
  format_facts r;
  r.f = f;
  r.codes = std::uint64_t{1} << width(f);
  for (std::uint64_t c = 0; c < r.codes; ++c) {
    const double v = to_double(f, static_cast<std::uint32_t>(c));
    r.values.push_back(v);
    if (std::isnan(v)) {
      r.has_nan = true;
      continue;
    }
    if (v == 0 && std::signbit(v)) r.has_negative_zero = true;
    r.sorted.push_back(v == 0 ? 0.0 : v);
    const std::uint64_t field = (c >> f.frac_bits) & ((1u << f.exp_bits) - 1);
    const bool normal_field = !f.has_zero || field != 0;
    if (v > 0 && normal_field && (r.min_normal_value == 0 || v < r.min_normal_value)) r.min_normal_value = v;
  }
  std::sort(r.sorted.begin(), r.sorted.end());
  r.sorted.erase(std::unique(r.sorted.begin(), r.sorted.end()), r.sorted.end());
  return r;
}

// IEEE 754-2019 5.3.1 nextUp/nextDown from the sorted values. Where no greater (smaller) value
// exists and x is finite (the largest finite of a format without infinity, or the least value
// of an unsigned format), the result is NaN, or x itself in a format without NaN: the
// documented choice of compare.hpp, which IEEE 754 (whose formats all have infinities) does not
// cover.
double ref_next(const format_facts& t, double x, bool up) {
  if (std::isnan(x)) return x;
  if (std::isinf(x) && (x > 0) == up) return x;
  double r;
  if (up) {
    const auto it = std::upper_bound(t.sorted.begin(), t.sorted.end(), x);
    if (it == t.sorted.end()) return t.has_nan ? std::numeric_limits<double>::quiet_NaN() : x;
    r = *it;
  } else {
    const auto it = std::lower_bound(t.sorted.begin(), t.sorted.end(), x);
    if (it == t.sorted.begin()) return t.has_nan ? std::numeric_limits<double>::quiet_NaN() : x;
    r = *(it - 1);
  }
  // A zero result: nextUp(-minSub) = -0, nextDown(+minSub) = +0.
  if (r == 0) return x < 0 && t.has_negative_zero ? -0.0 : 0.0;
  return r;
}

fp_class ref_class(const format_facts& t, std::uint32_t code) {
  const double v = t.values[code];
  if (std::isnan(v)) return ref_signaling(t.f, code) ? fp_class::signaling_nan : fp_class::quiet_nan;
  const bool neg = std::signbit(v);
  if (std::isinf(v)) return neg ? fp_class::negative_infinity : fp_class::positive_infinity;
  if (v == 0) return neg ? fp_class::negative_zero : fp_class::positive_zero;
  if (std::fabs(v) < t.min_normal_value) return neg ? fp_class::negative_subnormal : fp_class::positive_subnormal;
  return neg ? fp_class::negative_normal : fp_class::positive_normal;
}

// Checks every comparison-type operation on one pair against the reference; returns the
// number of mismatches (reported through doctest with both codes).
int check_pair(const format_facts& t, std::uint32_t a, std::uint32_t b) {
  const format& f = t.f;
  const double x = t.values[a], y = t.values[b];
  const bool xn = std::isnan(x), yn = std::isnan(y);
  const bool any_snan = ref_signaling(f, a) || ref_signaling(f, b);
  int bad = 0;
  const auto fail = [&](const char* what, const std::string& detail) {
    ++bad;
    FAIL_CHECK(what << " " << to_string(f) << " a=0x" << std::hex << a << " b=0x" << b << std::dec << " (" << x
                    << ", " << y << "): " << detail);
  };

  const comparison q = compare_quiet(f, a, b);
  if (q.order != ref_order(x, y)) fail("compare_quiet order", "");
  if (q.flags != (any_snan ? flag::invalid : 0)) fail("compare_quiet flags", std::to_string(q.flags));
  const comparison s = compare_signaling(f, a, b);
  if (s.order != ref_order(x, y)) fail("compare_signaling order", "");
  if (s.flags != (xn || yn ? flag::invalid : 0)) fail("compare_signaling flags", std::to_string(s.flags));

  const std::uint8_t min_max_flags = any_snan ? flag::invalid : 0;
  for (int which = 0; which < 4; ++which) {
    const bool is_min = which % 2 == 0, number = which >= 2;
    const rounded r = which == 0   ? minimum(f, a, b)
                      : which == 1 ? maximum(f, a, b)
                      : which == 2 ? minimum_number(f, a, b)
                                   : maximum_number(f, a, b);
    const char* name = which == 0 ? "minimum" : which == 1 ? "maximum" : which == 2 ? "minimum_number" : "maximum_number";
    const double got = t.values[r.code & code_mask(f)];
    if (r.flags != min_max_flags) fail(name, "flags " + std::to_string(r.flags));
    if (xn || yn) {
      if (number && !(xn && yn)) {
        // The number, unchanged (the very code).
        if (r.code != (xn ? b : a)) fail(name, "expected the non-NaN operand");
      } else if (!std::isnan(got) || ref_signaling(f, r.code)) {
        fail(name, "expected a quiet NaN");
      }
      continue;
    }
    const bool x_first = is_min ? !less_signed_zero(y, x) : !less_signed_zero(x, y);
    if (!same_double(got, x_first ? x : y)) fail(name, "got " + std::to_string(got));
  }
  return bad;
}

int check_code(const format_facts& t, std::uint32_t a) {
  const format& f = t.f;
  const double x = t.values[a];
  int bad = 0;
  for (const bool up : {true, false}) {
    const rounded r = up ? next_up(f, a) : next_down(f, a);
    const double want = ref_next(t, x, up);
    const double got = t.values[r.code & code_mask(f)];
    const bool ok = std::isnan(want) ? std::isnan(got) && !ref_signaling(f, r.code) : same_double(got, want);
    const std::uint8_t want_flags = ref_signaling(f, a) ? flag::invalid : 0;
    if (!ok || r.flags != want_flags) {
      ++bad;
      FAIL_CHECK(std::string(up ? "next_up " : "next_down ") << to_string(f) << " 0x" << std::hex << a << " -> 0x" << r.code
                                                  << std::dec << ": got " << got << ", want " << want);
    }
  }
  if (classify(f, a) != ref_class(t, a)) {
    ++bad;
    FAIL_CHECK("classify " << to_string(f) << " 0x" << std::hex << a << std::dec << " (" << x << ")");
  }
  return bad;
}

}  // namespace

TEST_CASE("formats up to 8 bits: every code pair, compare/minimum/maximum(_number) == IEEE 754 on the exact values") {
  const format small[] = {formats::e4m3fn, formats::e5m2,   formats::e4m3fnuz, formats::e5m2fnuz,
                          formats::e8m0fnu, formats::e2m3fn, formats::e3m2fn,   formats::e2m1fn};
  std::uint64_t pairs = 0;
  int bad = 0;
  for (const format& f : small) {
    const format_facts t = facts_of(f);
    for (std::uint32_t a = 0; a < t.codes; ++a)
      for (std::uint32_t b = 0; b < t.codes; ++b) {
        bad += check_pair(t, a, b);
        ++pairs;
        if (bad > 20) return;
      }
  }
  CHECK(bad == 0);
  CHECK(pairs == 5 * 65536 + 2 * 4096 + 256);
}

TEST_CASE("formats up to 16 bits (named and user): every code, next_up/next_down/classify == IEEE 754 on the exact values") {
  std::vector<format> fs = {formats::e4m3fn, formats::e5m2,   formats::e4m3fnuz, formats::e5m2fnuz, formats::e8m0fnu,
                            formats::e2m3fn, formats::e3m2fn, formats::e2m1fn,   formats::bf16,     formats::fp16};
  // nosub (flushed codes read as zero), unsigned with zero, fn with nosub.
  for (const char* spec : {"e5m10:bias=14:nosub", "e3m2:unsigned", "e4m3:fn:nosub", "e5m2:finite:unsigned"})
    fs.push_back(parse_format(spec).value());
  std::uint64_t codes = 0;
  int bad = 0;
  for (const format& f : fs) {
    const format_facts t = facts_of(f);
    for (std::uint32_t a = 0; a < t.codes; ++a) {
      bad += check_code(t, a);
      ++codes;
      if (bad > 20) return;
    }
  }
  CHECK(bad == 0);
  CHECK(codes == 5 * 256 + 2 * 64 + 16 + 2 * 65536 + 65536 + 32 + 256 + 128);
}

TEST_CASE("bf16 and fp16: each code against boundary codes, plus 2e5 random pairs, compare/min/max == IEEE 754") {
  std::mt19937_64 rng(20240611);
  std::uint64_t pairs = 0;
  int bad = 0;
  for (const format& f : {formats::bf16, formats::fp16}) {
    const format_facts t = facts_of(f);
    const std::uint32_t m = f.frac_bits;
    // Zeros, smallest subnormals, largest subnormal, smallest normal, one, largest finite,
    // infinities, quiet and signaling NaNs, of both signs.
    std::vector<std::uint32_t> edges;
    const std::uint32_t exp_all = ((1u << f.exp_bits) - 1) << m;
    for (std::uint32_t mag : {0u, 1u, 2u, (1u << m) - 1, 1u << m, (1u << m) + 1, static_cast<std::uint32_t>(f.bias) << m,
                              exp_all - 1, exp_all, exp_all | 1, exp_all | (1u << (m - 1))})
      for (std::uint32_t sign : {0u, sign_mask(f)}) edges.push_back(sign | mag);
    CHECK(edges.size() == 22);
    for (std::uint32_t a = 0; a < t.codes; ++a)
      for (std::uint32_t e : edges) {
        bad += check_pair(t, a, e) + check_pair(t, e, a);
        pairs += 2;
      }
    for (int i = 0; i < 100000; ++i) {
      const auto a = static_cast<std::uint32_t>(rng() & 0xffff);
      // Half the partners are near a (same binade), half anywhere.
      const auto b = i % 2 ? static_cast<std::uint32_t>(rng() & 0xffff) : static_cast<std::uint32_t>((a + rng() % 5 - 2) & 0xffff);
      bad += check_pair(t, a, b);
      ++pairs;
    }
    if (bad > 20) break;
  }
  CHECK(bad == 0);
  CHECK(pairs == 2 * (65536 * 22 * 2 + 100000));
}

namespace {
float as_float(std::uint32_t c) { return std::bit_cast<float>(c); }
std::uint32_t code_of(float x) { return std::bit_cast<std::uint32_t>(x); }

std::vector<std::uint32_t> fp32_boundaries() {
  std::vector<std::uint32_t> v;
  for (std::uint32_t mag : {0x00000000u, 0x00000001u, 0x00000002u, 0x007ffffeu, 0x007fffffu, 0x00800000u, 0x00800001u,
                            0x3f7fffffu, 0x3f800000u, 0x3f800001u, 0x7f7ffffeu, 0x7f7fffffu, 0x7f800000u, 0x7f800001u,
                            0x7fc00000u, 0x7fffffffu})
    for (std::uint32_t sign : {0u, 0x80000000u}) v.push_back(sign | mag);
  return v;
}
}  // namespace

TEST_CASE("fp32: next_up/next_down == std::nextafter on 1e6 random codes and the boundaries") {
  std::mt19937 rng(7);
  std::vector<std::uint32_t> codes = fp32_boundaries();
  for (int i = 0; i < 1000000; ++i) codes.push_back(rng());
  int bad = 0;
  std::uint64_t n = 0;
  const float inf = std::numeric_limits<float>::infinity();
  for (const std::uint32_t c : codes) {
    const float x = as_float(c);
    for (const bool up : {true, false}) {
      const rounded r = up ? next_up(formats::fp32, c) : next_down(formats::fp32, c);
      const float want = std::nextafter(x, up ? inf : -inf);
      const bool ok = std::isnan(want) ? std::isnan(as_float(r.code)) && (r.code & 0x00400000u) != 0
                                       : r.code == code_of(want);
      // A signaling NaN operand raises invalid (IEEE 754-2019 5.3.1).
      const std::uint8_t want_flags = std::isnan(x) && (c & 0x00400000u) == 0 ? flag::invalid : 0;
      if (!ok || r.flags != want_flags) {
        ++bad;
        FAIL_CHECK(std::string(up ? "next_up" : "next_down") << " 0x" << std::hex << c << " -> 0x" << r.code << ", nextafter 0x"
                                                  << code_of(want));
      }
      ++n;
    }
    if (bad > 20) break;
  }
  CHECK(bad == 0);
  CHECK(n == 2 * (1000000 + 32));
}

TEST_CASE("fp32: compare_quiet/compare_signaling == the host's float relations on 1e6 random pairs and boundary pairs") {
  std::mt19937 rng(11);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  const auto edges = fp32_boundaries();
  for (auto a : edges)
    for (auto b : edges) pairs.emplace_back(a, b);
  for (int i = 0; i < 1000000; ++i) {
    const std::uint32_t a = rng();
    const std::uint32_t b = i % 2 ? rng() : a + (rng() % 9) - 4;  // half of them neighbours
    pairs.emplace_back(a, b);
  }
  int bad = 0;
  std::uint64_t n = 0;
  for (const auto& [a, b] : pairs) {
    const float x = as_float(a), y = as_float(b);
    const ordering want = std::isnan(x) || std::isnan(y) ? ordering::unordered
                          : x < y                        ? ordering::less
                          : x > y                        ? ordering::greater
                                                         : ordering::equal;
    const bool snan = (std::isnan(x) && (a & 0x00400000u) == 0) || (std::isnan(y) && (b & 0x00400000u) == 0);
    const comparison q = compare_quiet(formats::fp32, a, b);
    const comparison s = compare_signaling(formats::fp32, a, b);
    const bool ok = q.order == want && s.order == want && q.flags == (snan ? flag::invalid : 0) &&
                    s.flags == (want == ordering::unordered ? flag::invalid : 0);
    if (!ok) {
      ++bad;
      FAIL_CHECK("fp32 compare 0x" << std::hex << a << " 0x" << b);
      if (bad > 20) break;
    }
    ++n;
  }
  CHECK(bad == 0);
  CHECK(n == 32 * 32 + 1000000);
}

TEST_CASE("next_up/next_down edge cases spelled out: IEEE 754 5.3.1 and the formats without infinity") {
  // nextUp(-minSub) = -0 and nextDown(+minSub) = +0; fnuz has no -0, so +0.
  CHECK(next_up(formats::fp16, 0x8001).code == 0x8000);
  CHECK(next_down(formats::fp16, 0x0001).code == 0x0000);
  CHECK(next_up(formats::e4m3fnuz, 0x81).code == 0x00);
  // From either zero: the smallest subnormal of the direction's sign.
  CHECK(next_up(formats::fp16, 0x8000).code == 0x0001);
  CHECK(next_down(formats::fp16, 0x0000).code == 0x8001);
  // Infinities: nextUp(+inf) = +inf, nextUp(-inf) = -max.
  CHECK(next_up(formats::fp16, 0x7c00).code == 0x7c00);
  CHECK(next_up(formats::fp16, 0xfc00).code == 0xfbff);
  CHECK(next_down(formats::fp16, 0x7c00).code == 0x7bff);
  // Largest finite without infinity: NaN where the format has one, unchanged where it has none.
  CHECK(next_up(formats::e4m3fn, 0x7e).code == 0x7f);
  CHECK(next_down(formats::e4m3fn, 0xfe).code == 0xff);
  CHECK(next_up(formats::e4m3fnuz, 0x7f).code == 0x80);
  CHECK(next_up(formats::e2m1fn, 0x07).code == 0x07);
  CHECK(next_down(formats::e2m1fn, 0x0f).code == 0x0f);
  // e8m0fnu: no zero, no sign: below 2^-127 there is nothing.
  CHECK(next_down(formats::e8m0fnu, 0x00).code == 0xff);
  CHECK(next_up(formats::e8m0fnu, 0x00).code == 0x01);
  CHECK(next_up(formats::e8m0fnu, 0xfe).code == 0xff);
  // A signaling NaN is quieted and raises invalid.
  CHECK(next_up(formats::fp16, 0x7d00).code == 0x7e00);
  CHECK(next_up(formats::fp16, 0x7d00).flags == flag::invalid);
}
