// value.hpp, limits.hpp, eigen.hpp: fp<F> is the runtime core behind operators;
// std::numeric_limits<fp<F>> agrees with independent facts (the host's float, Eigen's half and
// bfloat16, ml_dtypes finfo, the OCP specs); Eigen products of fp<bf16> are the sequential
// bf16 sums of bf16 products.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <compare>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <string>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "fpemu/eigen.hpp"
#include "fpemu/io.hpp"
#include "fpemu/limits.hpp"
#include "fpemu/text.hpp"
#include "fpemu/value.hpp"

using namespace fpemu;

namespace {

constexpr rounding rne{};

bool same_double(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// Every code of a format up to 16 bits, or `count` random codes of a wider one (plus the
// first 256 codes and the last 256 positive codes).
template <format F>
std::vector<std::uint32_t> codes_of(int count, std::mt19937& rng) {
  std::vector<std::uint32_t> c;
  if (width(F) <= 16) {
    for (std::uint32_t i = 0; i <= code_mask(F); ++i) c.push_back(i);
  } else {
    for (std::uint32_t i = 0; i < 256; ++i) c.push_back(i);
    for (std::uint32_t i = 0; i < 256; ++i) c.push_back(magnitude_mask(F) - i);
    for (int i = 0; i < count; ++i) c.push_back(rng() & code_mask(F));
  }
  return c;
}

// The operators of fp<F> against the runtime functions on codes, for `pairs` operand pairs
// (every pair when the format has at most 8 bits). Returns the number of pairs checked.
template <format F>
std::uint64_t check_operators(int pairs, std::mt19937& rng) {
  using T = fp<F>;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ab;
  if (width(F) <= 8) {
    for (std::uint32_t a = 0; a <= code_mask(F); ++a)
      for (std::uint32_t b = 0; b <= code_mask(F); ++b) ab.emplace_back(a, b);
  } else {
    for (int i = 0; i < pairs; ++i) ab.emplace_back(rng() & code_mask(F), rng() & code_mask(F));
  }
  std::uint64_t n = 0;
  for (const auto& operands : ab) {
    const std::uint32_t a = operands.first, b = operands.second;  // not bindings: CAPTURE needs variables
    const T x = T::from_code(a), y = T::from_code(b);
    CAPTURE(a);
    CAPTURE(b);
    REQUIRE((x + y).code() == add(F, a, b, rne).code);
    REQUIRE((x - y).code() == sub(F, a, b, rne).code);
    REQUIRE((x * y).code() == mul(F, a, b, rne).code);
    REQUIRE((x / y).code() == div(F, a, b, rne).code);
    T z = x;
    z += y;
    REQUIRE(z.code() == (x + y).code());
    z = x;
    z -= y;
    REQUIRE(z.code() == (x - y).code());
    z = x;
    z *= y;
    REQUIRE(z.code() == (x * y).code());
    z = x;
    z /= y;
    REQUIRE(z.code() == (x / y).code());
    const T w = T::from_code(static_cast<std::uint32_t>(rng()) & code_mask(F));
    REQUIRE(fma(x, y, w).code() == fma(F, a, b, w.code(), rne).code);
    REQUIRE(minimum(x, y).code() == minimum(F, a, b).code);
    REQUIRE(maximum_number(x, y).code() == maximum_number(F, a, b).code);

    // Relations: the host's double relations on the exact values (NaN unordered, -0 == +0).
    const double dx = to_double(F, a), dy = to_double(F, b);
    REQUIRE((x == y) == (dx == dy));
    REQUIRE((x != y) == (dx != dy));
    REQUIRE((x < y) == (dx < dy));
    REQUIRE((x <= y) == (dx <= dy));
    REQUIRE((x > y) == (dx > dy));
    REQUIRE((x >= y) == (dx >= dy));
    REQUIRE((x <=> y) == (dx <=> dy));
    ++n;
  }
  return n;
}

// Unary operations on every code (or a sample): sqrt, next_up/down against the core; negate,
// abs and the predicates against the exact values.
template <format F>
std::uint64_t check_unary(std::mt19937& rng) {
  using T = fp<F>;
  std::uint64_t n = 0;
  for (const std::uint32_t c : codes_of<F>(100000, rng)) {
    CAPTURE(c);
    const T x = T::from_code(c);
    const double v = to_double(F, c);
    REQUIRE(sqrt(x).code() == sqrt(F, c, rne).code);
    REQUIRE(next_up(x).code() == next_up(F, c).code);
    REQUIRE(next_down(x).code() == next_down(F, c).code);
    REQUIRE(classify(x) == classify(F, c));
    REQUIRE(isnan(x) == std::isnan(v));
    REQUIRE(isinf(x) == std::isinf(v));
    REQUIRE(isfinite(x) == std::isfinite(v));
    REQUIRE(signbit(x) == std::signbit(v));
    if (std::isnan(v)) REQUIRE(std::isnan(static_cast<double>(x)));
    else REQUIRE(same_double(static_cast<double>(x), v));

    const double neg = to_double(F, (-x).code()), mag = to_double(F, abs(x).code());
    if (std::isnan(v)) {
      REQUIRE(std::isnan(neg));
      REQUIRE(std::isnan(mag));
      // Signed non-fnuz formats: negate is a sign-bit flip that keeps the payload.
      if (F.is_signed && F.encoding != nonfinite::fnuz) REQUIRE((-x).code() == (c ^ sign_mask(F)));
    } else if (!F.is_signed) {
      REQUIRE((v == 0 ? neg == 0 : (std::isnan(neg) || (!has_nan(F) && neg == 0))));
      REQUIRE(same_double(mag, v));
    } else if (v == 0 && F.encoding == nonfinite::fnuz) {
      REQUIRE(same_double(neg, 0.0));  // no -0
      REQUIRE(same_double(mag, 0.0));
    } else {
      REQUIRE(same_double(neg, -v));
      REQUIRE(same_double(mag, std::fabs(v)));
    }
    REQUIRE((+x).code() == c);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("fp<F> operators, fma, minimum, maximum_number and relations == the runtime core functions, 7 formats") {
  std::mt19937 rng(1);
  std::uint64_t n = 0;
  n += check_operators<formats::e4m3fn>(0, rng);
  n += check_operators<formats::e5m2fnuz>(0, rng);
  n += check_operators<formats::e8m0fnu>(0, rng);
  n += check_operators<formats::e2m1fn>(0, rng);
  n += check_operators<formats::bf16>(100000, rng);
  n += check_operators<formats::fp16>(100000, rng);
  n += check_operators<formats::e8m13>(100000, rng);
  CHECK(n == 3 * 65536 + 256 + 3 * 100000);
}

TEST_CASE("fp<F> sqrt, next_up/down, classify, negate, abs, isnan/isinf/isfinite/signbit on every code, 8 formats") {
  std::mt19937 rng(2);
  std::uint64_t n = 0;
  n += check_unary<formats::e4m3fn>(rng);
  n += check_unary<formats::e5m2>(rng);
  n += check_unary<formats::e4m3fnuz>(rng);
  n += check_unary<formats::e8m0fnu>(rng);
  n += check_unary<formats::e3m2fn>(rng);
  n += check_unary<formats::bf16>(rng);
  n += check_unary<formats::fp16>(rng);
  n += check_unary<formats::fp32>(rng);
  CHECK(n == 4 * 256 + 64 + 2 * 65536 + (512 + 100000));
}

TEST_CASE("fp<F> storage is the smallest unsigned integer that holds the code") {
  CHECK(std::is_same_v<e2m1fn_t::storage_type, std::uint8_t>);
  CHECK(std::is_same_v<e4m3fn_t::storage_type, std::uint8_t>);
  CHECK(std::is_same_v<e8m0fnu_t::storage_type, std::uint8_t>);
  CHECK(std::is_same_v<bf16_t::storage_type, std::uint16_t>);
  CHECK(std::is_same_v<fp16_t::storage_type, std::uint16_t>);
  CHECK(std::is_same_v<tf32_t::storage_type, std::uint32_t>);
  CHECK(std::is_same_v<e8m13_t::storage_type, std::uint32_t>);
  CHECK(std::is_same_v<fp32_t::storage_type, std::uint32_t>);
  CHECK(sizeof(e4m3fn_t) == 1);
  CHECK(sizeof(bf16_t) == 2);
  CHECK(sizeof(fp32_t) == 4);
  CHECK(std::is_trivially_copyable_v<bf16_t>);
  CHECK(e4m3fn_t().code() == 0);
  CHECK(e4m3fn_t::fmt == formats::e4m3fn);
  // Explicit only: no silent rounding.
  CHECK_FALSE(std::is_convertible_v<double, bf16_t>);
  CHECK_FALSE(std::is_convertible_v<bf16_t, double>);
  CHECK_FALSE(std::is_convertible_v<int, bf16_t>);
  CHECK_FALSE(std::is_convertible_v<fp32_t, bf16_t>);
}

TEST_CASE("fp<F> construction from double, float, integers and other formats == from()/convert() with RNE") {
  std::mt19937_64 rng(3);
  std::uint64_t n = 0;
  for (int i = 0; i < 200000; ++i) {
    // Random sign, a wide exponent range (subnormals, overflow) and random significand bits.
    const double x = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 360) - 220 - 53) *
                     (rng() & 1 ? -1.0 : 1.0);
    const float xf = static_cast<float>(x);
    CAPTURE(x);
    REQUIRE(bf16_t(x).code() == from(formats::bf16, x).code);
    REQUIRE(e4m3fn_t(x).code() == from(formats::e4m3fn, x).code);
    REQUIRE(e5m2fnuz_t(x).code() == from(formats::e5m2fnuz, x).code);
    REQUIRE(e8m0fnu_t(x).code() == from(formats::e8m0fnu, x).code);
    REQUIRE(e8m13_t(x).code() == from(formats::e8m13, x).code);
    REQUIRE(fp16_t(xf).code() == from(formats::fp16, xf).code);
    REQUIRE(fp32_t(x).code() == std::bit_cast<std::uint32_t>(xf));  // the host's RNE narrowing
    REQUIRE(fp32_t(xf).code() == std::bit_cast<std::uint32_t>(xf));
    REQUIRE(static_cast<float>(fp32_t(xf)) == xf);
    // Cross-format: one rounding from the exact source value.
    const fp32_t s(xf);
    REQUIRE(bf16_t(s).code() == convert(formats::bf16, formats::fp32, s.code()).code);
    REQUIRE(e4m3fn_t(s).code() == convert(formats::e4m3fn, formats::fp32, s.code()).code);
    REQUIRE(bf16_t(s).code() == bf16_t(static_cast<double>(xf)).code());
    REQUIRE(fp32_t(bf16_t(s)).code() == std::bit_cast<std::uint32_t>(static_cast<float>(bf16_t(s))));
    ++n;
  }
  CHECK(n == 200000);

  // Integers: exact where representable, rounded (ties to even) otherwise.
  CHECK(fp16_t(3).code() == 0x4200);
  CHECK(fp16_t(-2048).code() == 0xe800);
  CHECK(fp16_t(2049).code() == 0x6800);            // tie between 2048 (even) and 2050
  CHECK(fp16_t(65535u).code() == 0x7c00);          // rounds to 2^16: inf
  CHECK(e4m3fn_t(std::uint8_t{17}).code() == 0x58);  // tie between 16 (even) and 18
  CHECK(bf16_t(std::numeric_limits<std::int64_t>::min()).code() == 0xdf00);  // -2^63
  CHECK(bf16_t(std::numeric_limits<std::uint64_t>::max()).code() == 0x5f80);  // 2^64
  CHECK(isnan(e8m0fnu_t(0)));                       // no zero
  CHECK(e2m1fn_t(short{-100}).code() == 0x0f);      // saturates at -6: no inf, no NaN
  CHECK(static_cast<double>(e4m3fn_t(448)) == 448.0);
  CHECK(static_cast<float>(e8m13_t(1.0 / 3.0)) == static_cast<float>(to_double(formats::e8m13, e8m13_t(1.0 / 3.0).code())));
}

// What operator<< (io.hpp) prints, read back: at 17 significant digits and as a hex float the
// exact value (to_double is exact for these formats; to_decimal, the library's exact decimal,
// is a second witness), at the default precision 6 the value's 6 significant digits.
template <format F>
std::uint64_t check_printed(std::mt19937& rng) {
  std::uint64_t n = 0;
  for (std::uint32_t c : codes_of<F>(4096, rng)) {
    const fp<F> x = fp<F>::from_code(c);
    if (isnan(x)) continue;
    const double v = to_double(F, c);
    std::ostringstream exact, hex, brief;
    exact << std::setprecision(17) << x;
    hex << std::hexfloat << x;
    brief << x;
    CHECK(same_double(std::strtod(exact.str().c_str(), nullptr), v));
    CHECK(same_double(std::strtod(hex.str().c_str(), nullptr), v));
    CHECK(std::strtod(exact.str().c_str(), nullptr) == std::strtod(to_decimal(F, c).c_str(), nullptr));
    if (isinf(x)) {
      CHECK(same_double(std::strtod(brief.str().c_str(), nullptr), v));
    } else {
      CHECK(std::abs(std::strtod(brief.str().c_str(), nullptr) - v) <= std::abs(v) * 5e-6);
    }
#if defined(__cpp_lib_format)
    CHECK(same_double(std::strtod(std::format("{}", x).c_str(), nullptr), v));
    CHECK(std::format("{:a}", x) == std::format("{:a}", v));
#endif
    ++n;
  }
  return n;
}

TEST_CASE("operator<< and std::format print every non-NaN code of e4m3fn, bf16, fp16 and 4096 of fp32 exactly") {
  std::mt19937 rng(7);
  CHECK(check_printed<formats::e4m3fn>(rng) == 256 - 2);        // two NaN codes
  CHECK(check_printed<formats::bf16>(rng) == 65536 - 2 * 127);   // 2 * (2^7 - 1) NaN codes
  CHECK(check_printed<formats::fp16>(rng) == 65536 - 2 * 1023);  // 2 * (2^10 - 1) NaN codes
  CHECK(check_printed<formats::fp32>(rng) > 4300);  // 4608 codes, the 256 largest positive ones NaN
  std::ostringstream nan;
  nan << fp<formats::e4m3fn>(1000.0);  // overflow without infinity: NaN
  CHECK(nan.str() == "nan");
}

TEST_CASE("fp<F> is usable in constant expressions") {
  constexpr bf16_t one(1.0);
  constexpr bf16_t three = one + one + one;
  static_assert(three.code() == 0x4040);
  static_assert(sqrt(fp16_t(4.0)) == fp16_t(2.0));
  static_assert(-fp16_t(0.0) == fp16_t(0.0));
  static_assert((-fp16_t(0.0)).code() == 0x8000);
  static_assert((-e4m3fnuz_t(0.0)).code() == 0x00);
  static_assert(fp16_t(1.0) < fp16_t(2.0));
  static_assert(!(std::numeric_limits<fp16_t>::quiet_NaN() == std::numeric_limits<fp16_t>::quiet_NaN()));
  static_assert(std::numeric_limits<e4m3fn_t>::max().code() == 0x7e);
  CHECK(three.code() == 0x4040);
}

// ---- numeric_limits ----

namespace {
// Eigen declares its numeric_limits members `static const` without definitions, so they are
// read by value (a cast) rather than bound to doctest's reference parameters.
#define SAME_MEMBER(m) CHECK(LA::m == static_cast<std::remove_cv_t<decltype(LB::m)>>(LB::m))
template <class A, class B>
void same_static_members() {
  using LA = std::numeric_limits<A>;
  using LB = std::numeric_limits<B>;
  SAME_MEMBER(is_specialized);
  SAME_MEMBER(is_signed);
  SAME_MEMBER(is_integer);
  SAME_MEMBER(is_exact);
  SAME_MEMBER(has_infinity);
  SAME_MEMBER(has_quiet_NaN);
  SAME_MEMBER(has_signaling_NaN);
  SAME_MEMBER(digits);
  SAME_MEMBER(digits10);
  SAME_MEMBER(max_digits10);
  SAME_MEMBER(radix);
  SAME_MEMBER(min_exponent);
  SAME_MEMBER(min_exponent10);
  SAME_MEMBER(max_exponent);
  SAME_MEMBER(max_exponent10);
  SAME_MEMBER(round_style);
  SAME_MEMBER(is_modulo);
}
#undef SAME_MEMBER

template <class T>
std::uint32_t code(T x) {
  return x.code();
}
}  // namespace

TEST_CASE("numeric_limits<fp<fp32>> == numeric_limits<float>, every member, values bit for bit") {
  using L = std::numeric_limits<fp32_t>;
  using H = std::numeric_limits<float>;
  same_static_members<fp32_t, float>();
  CHECK(L::has_denorm == H::has_denorm);
  CHECK(L::has_denorm_loss == H::has_denorm_loss);
  CHECK(L::is_iec559 == H::is_iec559);
  CHECK(L::is_bounded == H::is_bounded);
  CHECK(L::traps == H::traps);
  CHECK(L::tinyness_before == H::tinyness_before);
  const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
  CHECK(code(L::min()) == bits(H::min()));
  CHECK(code(L::max()) == bits(H::max()));
  CHECK(code(L::lowest()) == bits(H::lowest()));
  CHECK(code(L::epsilon()) == bits(H::epsilon()));
  CHECK(code(L::round_error()) == bits(H::round_error()));
  CHECK(code(L::infinity()) == bits(H::infinity()));
  CHECK(code(L::quiet_NaN()) == bits(H::quiet_NaN()));
  CHECK(code(L::signaling_NaN()) == bits(H::signaling_NaN()));
  CHECK(code(L::denorm_min()) == bits(H::denorm_min()));
  CHECK(classify(L::signaling_NaN()) == fp_class::signaling_nan);
  CHECK(classify(L::quiet_NaN()) == fp_class::quiet_nan);
}

TEST_CASE("numeric_limits<fp16_t> and <bf16_t>: exponent and digit members == Eigen's half and bfloat16, values by code") {
  same_static_members<fp16_t, Eigen::half>();
  same_static_members<bf16_t, Eigen::bfloat16>();
  using H = std::numeric_limits<fp16_t>;
  using B = std::numeric_limits<bf16_t>;
  // IEEE binary16 (and Eigen::half's raw codes).
  CHECK(code(H::min()) == 0x0400);
  CHECK(code(H::max()) == 0x7bff);
  CHECK(code(H::lowest()) == 0xfbff);
  CHECK(code(H::epsilon()) == 0x1400);  // 2^-10
  CHECK(code(H::round_error()) == 0x3800);
  CHECK(code(H::infinity()) == 0x7c00);
  CHECK(code(H::quiet_NaN()) == 0x7e00);
  CHECK(code(H::signaling_NaN()) == 0x7d00);
  CHECK(code(H::denorm_min()) == 0x0001);
  CHECK(H::has_denorm == std::denorm_present);
  CHECK(H::is_iec559);  // binary16 is an IEEE 754 interchange format
  CHECK(H::digits == 11);
  CHECK(H::max_exponent10 == 4);
  // bfloat16: ml_dtypes finfo: max 3.3895e38 (0x7f7f), tiny 2^-126 (0x0080), eps 2^-7 (0x3c00).
  CHECK(code(B::min()) == 0x0080);
  CHECK(code(B::max()) == 0x7f7f);
  CHECK(code(B::lowest()) == 0xff7f);
  CHECK(code(B::epsilon()) == 0x3c00);
  CHECK(code(B::round_error()) == 0x3f00);
  CHECK(code(B::infinity()) == 0x7f80);
  CHECK(code(B::quiet_NaN()) == 0x7fc0);
  CHECK(classify(B::signaling_NaN()) == fp_class::signaling_nan);
  CHECK(code(B::denorm_min()) == 0x0001);
  CHECK(B::has_denorm == std::denorm_present);  // bf16 keeps subnormals (ml_dtypes smallest_subnormal 9.18e-41)
  CHECK(B::is_iec559);
  CHECK(B::digits == 8);
  CHECK(B::min_exponent10 == -37);
  CHECK(B::max_exponent10 == 38);
}

TEST_CASE("numeric_limits of the 8-bit and 4-bit formats == OCP specs and ml_dtypes finfo") {
  {
    // e4m3fn: OFP8: max 448, min normal 2^-6, min subnormal 2^-9, eps 2^-3, NaN S.1111.111.
    using L = std::numeric_limits<e4m3fn_t>;
    CHECK(L::is_signed);
    CHECK_FALSE(L::has_infinity);
    CHECK(L::has_quiet_NaN);
    CHECK_FALSE(L::has_signaling_NaN);
    CHECK(L::has_denorm == std::denorm_present);
    CHECK_FALSE(L::is_iec559);
    CHECK(L::digits == 4);
    CHECK(L::digits10 == 0);
    CHECK(L::max_digits10 == 3);
    CHECK(L::min_exponent == -5);   // finfo.minexp + 1
    CHECK(L::max_exponent == 9);    // finfo.maxexp
    CHECK(L::min_exponent10 == -1); // 10^-1 >= 2^-6 > 10^-2
    CHECK(L::max_exponent10 == 2);  // 100 <= 448 < 1000
    CHECK(code(L::max()) == 0x7e);
    CHECK(code(L::lowest()) == 0xfe);
    CHECK(code(L::min()) == 0x08);
    CHECK(code(L::denorm_min()) == 0x01);
    CHECK(code(L::epsilon()) == 0x20);
    CHECK(code(L::round_error()) == 0x30);
    CHECK(code(L::quiet_NaN()) == 0x7f);
    CHECK(code(L::infinity()) == 0x00);       // no infinity: T()
    CHECK(code(L::signaling_NaN()) == 0x00);  // no signaling NaN: T()
  }
  {
    // e5m2: OFP8, IEEE-like: max 57344, min normal 2^-14, min subnormal 2^-16, eps 2^-2.
    using L = std::numeric_limits<e5m2_t>;
    CHECK(L::has_infinity);
    CHECK(L::has_quiet_NaN);
    CHECK(L::has_signaling_NaN);
    CHECK(L::is_iec559);
    CHECK(L::digits == 3);
    CHECK(L::digits10 == 0);
    CHECK(L::max_digits10 == 2);
    CHECK(L::min_exponent == -13);
    CHECK(L::max_exponent == 16);
    CHECK(L::min_exponent10 == -4);
    CHECK(L::max_exponent10 == 4);
    CHECK(code(L::max()) == 0x7b);
    CHECK(code(L::lowest()) == 0xfb);
    CHECK(code(L::min()) == 0x04);
    CHECK(code(L::denorm_min()) == 0x01);
    CHECK(code(L::epsilon()) == 0x34);
    CHECK(code(L::infinity()) == 0x7c);
    CHECK(code(L::quiet_NaN()) == 0x7e);
    CHECK(code(L::signaling_NaN()) == 0x7d);
  }
  {
    // e8m0fnu: OCP MX: unsigned powers of two 2^-127..2^127, no zero, NaN 0xff; finfo eps 1.
    using L = std::numeric_limits<e8m0fnu_t>;
    CHECK_FALSE(L::is_signed);
    CHECK_FALSE(L::has_infinity);
    CHECK(L::has_quiet_NaN);
    CHECK_FALSE(L::has_signaling_NaN);
    CHECK(L::has_denorm == std::denorm_absent);
    CHECK_FALSE(L::is_iec559);
    CHECK(L::digits == 1);
    CHECK(L::digits10 == 0);
    CHECK(L::max_digits10 == 2);
    CHECK(L::min_exponent == -126);
    CHECK(L::max_exponent == 128);
    CHECK(L::min_exponent10 == -38);  // 2^-127 = 5.9e-39
    CHECK(L::max_exponent10 == 38);   // 2^127 = 1.7e38
    CHECK(code(L::min()) == 0x00);
    CHECK(code(L::lowest()) == 0x00);  // unsigned: the least value is 2^-127, not -max
    CHECK(code(L::max()) == 0xfe);
    CHECK(code(L::denorm_min()) == 0x00);
    CHECK(code(L::epsilon()) == 0x7f);
    CHECK(code(L::round_error()) == 0x7e);
    CHECK(code(L::quiet_NaN()) == 0xff);
  }
  {
    // e2m1fn: OCP MX FP4: 0, 0.5, 1, 1.5, 2, 3, 4, 6; no inf, no NaN.
    using L = std::numeric_limits<e2m1fn_t>;
    CHECK(L::is_signed);
    CHECK_FALSE(L::has_infinity);
    CHECK_FALSE(L::has_quiet_NaN);
    CHECK_FALSE(L::has_signaling_NaN);
    CHECK(L::has_denorm == std::denorm_present);
    CHECK_FALSE(L::is_iec559);
    CHECK(L::digits == 2);
    CHECK(L::digits10 == 0);
    CHECK(L::max_digits10 == 2);
    CHECK(L::min_exponent == 1);  // finfo.minexp 0, + 1
    CHECK(L::max_exponent == 3);
    CHECK(L::min_exponent10 == 0);  // min normal 1 = 10^0
    CHECK(L::max_exponent10 == 0);  // 6 < 10
    CHECK(code(L::max()) == 0x7);
    CHECK(code(L::lowest()) == 0xf);
    CHECK(code(L::min()) == 0x2);
    CHECK(code(L::denorm_min()) == 0x1);
    CHECK(code(L::epsilon()) == 0x1);
    CHECK(code(L::round_error()) == 0x1);
    CHECK(code(L::quiet_NaN()) == 0x0);
    CHECK(code(L::infinity()) == 0x0);
  }
}

TEST_CASE("numeric_limits exponent10 members are exact floor/ceil of log10 for every named format") {
  // max_exponent10 = floor(log10(max)), min_exponent10 = ceil(log10(min normal)), checked with
  // the host's log10 on the exact values (none of them is within rounding of a power of ten).
  int n = 0;
  const auto check_one = [&n](auto limits_tag) {
    using L = decltype(limits_tag);
    const double mx = static_cast<double>(L::max()), mn = static_cast<double>(L::min());
    CHECK(L::max_exponent10 == static_cast<int>(std::floor(std::log10(mx))));
    CHECK(L::min_exponent10 == static_cast<int>(std::ceil(std::log10(mn))));
    CHECK(L::max_exponent == std::ilogb(mx) + 1);
    CHECK(L::min_exponent == std::ilogb(mn) + 1);
    CHECK(L::digits10 == static_cast<int>(std::floor((L::digits - 1) * std::log10(2.0))));
    CHECK(L::max_digits10 == static_cast<int>(std::ceil(1 + L::digits * std::log10(2.0))));
    ++n;
  };
  check_one(std::numeric_limits<e4m3fn_t>{});
  check_one(std::numeric_limits<e5m2_t>{});
  check_one(std::numeric_limits<e4m3fnuz_t>{});
  check_one(std::numeric_limits<e5m2fnuz_t>{});
  check_one(std::numeric_limits<bf16_t>{});
  check_one(std::numeric_limits<fp16_t>{});
  check_one(std::numeric_limits<tf32_t>{});
  check_one(std::numeric_limits<fp32_t>{});
  check_one(std::numeric_limits<e8m13_t>{});
  check_one(std::numeric_limits<e2m3fn_t>{});
  check_one(std::numeric_limits<e3m2fn_t>{});
  check_one(std::numeric_limits<e2m1fn_t>{});
  check_one(std::numeric_limits<e8m0fnu_t>{});
  // A format whose range reaches binary64's: 2^1023 and 2^-1022 (digits of a 52-bit-ish float).
  check_one(std::numeric_limits<fp<format{11, 20, 1023, true, nonfinite::ieee, true, true}>>{});
  CHECK(n == 14);
}

// ---- Eigen ----

namespace {
// The reference for one element of A * B: products rounded to bf16, summed left to right with
// one bf16 rounding per addition, using the core functions directly.
std::uint32_t sequential_dot(const std::vector<std::uint32_t>& row, const std::vector<std::uint32_t>& col) {
  std::uint32_t acc = mul(formats::bf16, row[0], col[0], rne).code;
  for (std::size_t k = 1; k < row.size(); ++k)
    acc = add(formats::bf16, acc, mul(formats::bf16, row[k], col[k], rne).code, rne).code;
  return acc;
}

template <class MA, class MB>
int check_product(const MA& a, const MB& b) {
  const auto c = (a * b).eval();
  REQUIRE(c.rows() == a.rows());
  REQUIRE(c.cols() == b.cols());
  int n = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < b.cols(); ++j) {
      std::vector<std::uint32_t> row, col;
      double bound = 0, exact = 0;
      for (Eigen::Index k = 0; k < a.cols(); ++k) {
        row.push_back(a(i, k).code());
        col.push_back(b(k, j).code());
        const double p = static_cast<double>(a(i, k)) * static_cast<double>(b(k, j));
        exact += p;  // exact in binary64: 16-bit products of bf16 values over a small range
        bound += std::fabs(p);
      }
      CAPTURE(i);
      CAPTURE(j);
      CHECK(c(i, j).code() == sequential_dot(row, col));
      // Also close to the float product: |error| <= gamma_4 * sum |a_ik b_kj|, u = 2^-8.
      float fsum = 0;
      for (Eigen::Index k = 0; k < a.cols(); ++k) fsum += static_cast<float>(a(i, k)) * static_cast<float>(b(k, j));
      const double u = std::ldexp(1.0, -8), gamma = 4 * u / (1 - 4 * u);
      CHECK(std::fabs(static_cast<double>(c(i, j)) - exact) <= gamma * bound);
      CHECK(std::fabs(static_cast<double>(c(i, j)) - fsum) <= gamma * bound + 1e-6 * bound);
      ++n;
    }
  return n;
}
}  // namespace

TEST_CASE("Eigen: bf16 3x4 * 4x2 (fixed and dynamic sizes) == sequential RNE bf16 sums of bf16 products") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Eigen::Matrix<bf16_t, 3, 4> a;
  Eigen::Matrix<bf16_t, 4, 2> b;
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k) a(i, k) = bf16_t(dist(rng));
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 2; ++j) b(k, j) = bf16_t(dist(rng));
  // Row 0 and column 0 make the order visible: 1 + 2^-8 + 2^-8 + 2^-8 is 1 summed left to right
  // (each 2^-8 is a tie that goes to the even 1) but 1 + 2^-7 summed as a pairwise tree.
  const double tiny = std::ldexp(1.0, -8);
  a(0, 0) = bf16_t(1.0);
  a(0, 1) = bf16_t(tiny);
  a(0, 2) = bf16_t(tiny);
  a(0, 3) = bf16_t(tiny);
  for (int k = 0; k < 4; ++k) b(k, 0) = bf16_t(1.0);

  int n = check_product(a, b);
  const Eigen::Matrix<bf16_t, Eigen::Dynamic, Eigen::Dynamic> ad = a, bd = b;
  n += check_product(ad, bd);
  CHECK(n == 12);
  CHECK((a * b)(0, 0).code() == 0x3f80);  // the visible-order element: exactly 1
  CHECK((ad * bd)(0, 0).code() == 0x3f80);
  // Row-vector sums follow the same order.
  CHECK(a.row(0).sum().code() == 0x3f80);
}

TEST_CASE("Eigen: NumTraits<fp<F>> members and the functions Eigen reaches by ADL") {
  using NT = Eigen::NumTraits<bf16_t>;
  CHECK(NT::IsComplex == 0);
  CHECK(NT::IsInteger == 0);
  CHECK(NT::IsSigned == 1);
  CHECK(Eigen::NumTraits<e8m0fnu_t>::IsSigned == 0);
  CHECK(NT::RequireInitialization == 0);
  CHECK(NT::epsilon().code() == 0x3c00);
  CHECK(NT::highest().code() == 0x7f7f);
  CHECK(NT::lowest().code() == 0xff7f);
  CHECK(Eigen::NumTraits<e8m0fnu_t>::lowest().code() == 0x00);
  CHECK(NT::digits10() == 2);
  CHECK(NT::digits() == 8);
  CHECK(static_cast<double>(NT::dummy_precision()) == std::ldexp(1.0, -5));
  CHECK(static_cast<double>(Eigen::NumTraits<fp32_t>::dummy_precision()) == std::ldexp(1.0, -17));
  CHECK(isnan(NT::quiet_NaN()));
  CHECK(isinf(NT::infinity()));

  Eigen::Matrix<bf16_t, 2, 2> m;
  m << bf16_t(3.0), bf16_t(-4.0), bf16_t(0.0), bf16_t(1.0);
  CHECK(m.cwiseAbs()(0, 1).code() == bf16_t(4.0).code());
  CHECK(m.row(0).norm().code() == bf16_t(5.0).code());  // sqrt(9 + 16)
  CHECK(m.maxCoeff().code() == bf16_t(3.0).code());
  CHECK(m.minCoeff().code() == bf16_t(-4.0).code());
  CHECK(m.isApprox(m));
  CHECK(m.allFinite());
  m(1, 0) = std::numeric_limits<bf16_t>::infinity();
  CHECK_FALSE(m.allFinite());
  CHECK(Eigen::numext::isfinite(bf16_t(1.0)));
  CHECK(Eigen::numext::sqrt(bf16_t(4.0)).code() == bf16_t(2.0).code());
}

TEST_CASE("Eigen: a 8x8 dynamic product (Eigen's blocked GEMM path) compiles and stays within the bf16 error bound") {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Eigen::Matrix<bf16_t, Eigen::Dynamic, Eigen::Dynamic> a(8, 8), b(8, 8);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      a(i, j) = bf16_t(dist(rng));
      b(i, j) = bf16_t(dist(rng));
    }
  const Eigen::Matrix<bf16_t, Eigen::Dynamic, Eigen::Dynamic> c = a * b;
  int n = 0;
  const double u = std::ldexp(1.0, -8), gamma = 9 * u / (1 - 9 * u);  // 8 terms, one product each, + alpha
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      double exact = 0, bound = 0;
      for (int k = 0; k < 8; ++k) {
        const double p = static_cast<double>(a(i, k)) * static_cast<double>(b(k, j));
        exact += p;
        bound += std::fabs(p);
      }
      CHECK(std::fabs(static_cast<double>(c(i, j)) - exact) <= gamma * bound);
      ++n;
    }
  CHECK(n == 64);
}
