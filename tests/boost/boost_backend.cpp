// fpemu::mp::backend on its own: flags, modes, conversions, the exact operations, limits, fma and
// text, each against MPFR (the oracle of analysis/oracle, or mpfr_backend.hpp) or exact facts.
#include <doctest/doctest.h>

#include <boost/math/tools/rational.hpp>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "analysis/oracle/mpfr_oracle.hpp"
#include "fpemu/boost_multiprecision.hpp"
#include "mpfr_backend.hpp"
#include "traced.hpp"

namespace {

namespace F = fpemu::formats;
namespace flag = fpemu::flag;
using boost::multiprecision::number;
using fpemu::round_mode;
using fpemu::rounding;
template <fpemu::format Fmt, fpemu::rounding R = fpemu::rounding{}>
using emulated = number<fpemu::mp::backend<Fmt, R>>;
template <fpemu::format Fmt, fpemu::rounding R = fpemu::rounding{}>
using reference = number<boost_test::mpfr_backend<Fmt, R>>;

template <class N>
N of_code(std::uint32_t code) {
  using backend = typename N::backend_type;
  return N(backend::from_code(code));
}
template <class N>
std::uint8_t flags(const N& x) {
  return x.backend().flags();
}

// Counts and the first few failures, printed; then the count and no failure are checked.
class tally {
 public:
  explicit tally(std::string what) : what_(std::move(what)) {}
  void check(bool ok, const std::string& describe) {
    ++cases_;
    if (!ok && failures_++ < 8) std::printf("MISMATCH %s: %s\n", what_.c_str(), describe.c_str());
  }
  template <class Describe>
  void check_lazy(bool ok, Describe&& describe) {
    ++cases_;
    if (!ok && failures_++ < 8) std::printf("MISMATCH %s: %s\n", what_.c_str(), describe().c_str());
  }
  void finish(std::uint64_t expected) {
    std::printf("%s: %" PRIu64 " cases, %" PRIu64 " mismatches\n", what_.c_str(), cases_, failures_);
    std::fflush(stdout);
    CHECK_MESSAGE(cases_ == expected, what_ << ": ran " << cases_ << " cases, expected " << expected);
    CHECK_MESSAGE(failures_ == 0, what_ << ": " << failures_ << " mismatches");
  }

 private:
  std::string what_;
  std::uint64_t cases_ = 0, failures_ = 0;
};

}  // namespace

TEST_CASE("backend flags: none for exact computations; each raised flag carried into every result computed from it") {
  using e4 = emulated<F::e4m3fn>;
  using b16 = emulated<F::bf16>;

  const e4 a = 3, b = 4;
  const e4 c = a * b + 1;  // 13 = 1.101b * 2^3
  CHECK(c == 13);
  CHECK(flags(c) == 0);
  CHECK(flags(sqrt(e4(16))) == 0);
  CHECK(flags(e4(0.5)) == 0);
  // A Boost.Math algorithm whose every step is exact: p(x) = 1 + 2x + 3x^2 at x = 2 in bf16.
  const int coefficients[] = {1, 2, 3};
  const b16 p = boost::math::tools::evaluate_polynomial(coefficients, b16(2));
  CHECK(p == 17);
  CHECK(flags(p) == 0);

  const e4 third = e4(1) / 3;
  CHECK(flags(third) == flag::inexact);
  CHECK(flags(sqrt(e4(2))) == flag::inexact);
  CHECK(flags(e4(0.1)) == flag::inexact);
  CHECK(flags(e4("0.1")) == flag::inexact);
  const e4 d = c + third;  // inexact through `third`, whatever the sum does
  CHECK((flags(d) & flag::inexact) != 0);
  CHECK(flags(c) == 0);  // operands keep their own flags

  // e4m3fn has no infinity: 448 * 2 overflows to NaN (ieee policy); bf16 to infinity.
  const e4 o = std::numeric_limits<e4>::max() * 2;
  CHECK(isnan(o));
  CHECK(flags(o) == (flag::overflow | flag::inexact));
  const b16 ob = std::numeric_limits<b16>::max() * 2;
  CHECK(isinf(ob));
  CHECK(flags(ob) == (flag::overflow | flag::inexact));
  CHECK(flags(ob - ob) == (flag::invalid | flag::overflow | flag::inexact));
  CHECK(flags(e4(1e10)) == (flag::overflow | flag::inexact));

  const b16 u = std::numeric_limits<b16>::denorm_min() / 4;
  CHECK(u == 0);
  CHECK(flags(u) == (flag::underflow | flag::inexact));
  const b16 z = b16(1) / b16(0);
  CHECK(isinf(z));
  CHECK(flags(z) == flag::divide_by_zero);
  CHECK(flags(b16(0) / b16(0)) == flag::invalid);
  CHECK(flags(e4(1) / e4(0)) == flag::divide_by_zero);  // the infinite result is stored as NaN

  // Sticky along the data flow, and cleared on request.
  b16 w = z;
  w = w * 0 + 5;  // inf * 0 is invalid; NaN + 5 stays NaN
  CHECK(flags(w) == (flag::divide_by_zero | flag::invalid));
  w.backend().clear_flags();
  CHECK(flags(w) == 0);
  CHECK(flags(-third) == flag::inexact);
  CHECK(flags(abs(third)) == flag::inexact);
}

namespace {

// Every pair of codes through +, -, *, / and every code through sqrt, and random triples through
// fma, in the backend with rounding R: code and flags == the MPFR oracle's.
template <fpemu::format Fmt, fpemu::rounding R>
void against_oracle(const char* name, const char* mode) {
  namespace oracle = fpemu::mpfr_oracle;
  using N = emulated<Fmt, R>;
  const std::uint32_t n = std::uint32_t{1} << fpemu::width(Fmt);
  tally t(std::string("backend vs oracle ") + name + " " + mode);
  const auto compare = [&](const N& got, const fpemu::rounded& want, const char* op, std::uint32_t x, std::uint32_t y) {
    t.check_lazy(got.backend().code() == want.code && flags(got) == want.flags, [&] {
      char text[160];
      std::snprintf(text, sizeof text, "%s(0x%x, 0x%x): backend 0x%x flags %u, oracle 0x%x flags %u", op, x, y,
                    got.backend().code(), flags(got), want.code, want.flags);
      return std::string(text);
    });
  };
  for (std::uint32_t a = 0; a < n; ++a) {
    const N x = of_code<N>(a);
    compare(sqrt(x), oracle::sqrt(Fmt, a, R), "sqrt", a, 0);
    for (std::uint32_t b = 0; b < n; ++b) {
      const N y = of_code<N>(b);
      compare(x + y, oracle::add(Fmt, a, b, R), "add", a, b);
      compare(x - y, oracle::sub(Fmt, a, b, R), "sub", a, b);
      compare(x * y, oracle::mul(Fmt, a, b, R), "mul", a, b);
      compare(x / y, oracle::div(Fmt, a, b, R), "div", a, b);
    }
  }
  constexpr int kTriples = 20000;
  std::mt19937_64 rng(0xf3a);
  for (int i = 0; i < kTriples; ++i) {
    const auto a = static_cast<std::uint32_t>(rng() % n), b = static_cast<std::uint32_t>(rng() % n),
               c = static_cast<std::uint32_t>(rng() % n);
    compare(fpemu::mp::fma(of_code<N>(a), of_code<N>(b), of_code<N>(c)), oracle::fma(Fmt, a, b, c, R), "fma", a, b);
  }
  t.finish(std::uint64_t{n} * n * 4 + n + kTriples);
}

template <fpemu::format Fmt>
void against_oracle_every_mode(const char* name) {
  against_oracle<Fmt, rounding{round_mode::nearest_even}>(name, "rne");
  against_oracle<Fmt, rounding{round_mode::nearest_away}>(name, "rna");
  against_oracle<Fmt, rounding{round_mode::toward_zero}>(name, "rz");
  against_oracle<Fmt, rounding{round_mode::toward_positive}>(name, "ru");
  against_oracle<Fmt, rounding{round_mode::toward_negative}>(name, "rd");
  against_oracle<Fmt, rounding{round_mode::to_odd}>(name, "rto");
  against_oracle<Fmt, rounding{round_mode::nearest_even, fpemu::overflow_policy::saturate}>(name, "rne saturate");
  against_oracle<Fmt, rounding{round_mode::toward_positive, fpemu::overflow_policy::nan}>(name, "ru nan");
}

}  // namespace

TEST_CASE("backend results and flags in every deterministic mode == MPFR oracle: all e4m3fn and e5m2 pairs") {
  against_oracle_every_mode<F::e4m3fn>("e4m3fn");
  against_oracle_every_mode<F::e5m2>("e5m2");
}

TEST_CASE(
    "backend conversions round once: long double, 64-bit integers and text where a detour through double rounds "
    "twice") {
  using b16 = emulated<F::bf16>;
  using f32 = emulated<F::fp32>;
  // 1 + 2^-8 + 2^-63: above the midpoint 1 + 2^-8 of bf16's 1 and 1 + 2^-7. Through double the
  // 2^-63 is lost and the tie goes to even, 1.
  const long double above_tie = 1.0L + std::ldexp(1.0L, -8) + std::ldexp(1.0L, -63);
  CHECK(b16(above_tie) == 1.0078125);
  CHECK(b16(static_cast<double>(above_tie)) == 1);
  // 2^63 + 2^39 + 1 into fp32: above the midpoint of 2^63 and 2^63 + 2^40.
  const unsigned long long big = (1ull << 63) + (1ull << 39) + 1;
  CHECK(f32(big) == std::ldexp(1.0, 63) + std::ldexp(1.0, 40));
  CHECK(f32(static_cast<double>(big)) == std::ldexp(1.0, 63));
  CHECK(f32(-static_cast<long long>((1ull << 62) + (1ull << 38) + 1)) == -(std::ldexp(1.0, 62) + std::ldexp(1.0, 39)));
  CHECK(b16("1.00390625000000000001") == 1.0078125);
  CHECK(b16(1.00390625000000000001) == 1);  // the literal is already the tie
  CHECK(b16("0x1.01p0") == 1);              // an exact tie in hex: to even
  CHECK(isinf(b16("inf")));
  CHECK(isnan(b16("nan")));
  CHECK_THROWS_AS(b16("one"), std::runtime_error);
}

namespace {

// Random long doubles (64-bit significands), 64-bit integers and decimal strings into Fmt, in R:
// backend code == mpfr_backend's (mpfr_set_ld, mpfr_set_si/ui, mpfr_strtofr).
template <fpemu::format Fmt, fpemu::rounding R>
void conversions_against_mpfr(const char* name, tally& t, std::mt19937_64& rng) {
  using E = emulated<Fmt, R>;
  using M = reference<Fmt, R>;
  const auto same = [&](const E& e, const M& m, const std::string& what) {
    const bool ok = boost_test::key(e.backend()) == boost_test::key(m.backend());
    t.check_lazy(ok, [&] { return std::string(name) + " " + what; });
  };
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t r = rng();
    const int e = static_cast<int>(rng() % 300) - 200;
    const long double ld = std::ldexp(static_cast<long double>(r), e - 63) * ((rng() & 1) != 0 ? -1 : 1);
    char text[64];
    std::snprintf(text, sizeof text, "%La", ld);
    same(E(ld), M(ld), std::string("long double ") + text);
    const auto ll = static_cast<long long>(r >> (rng() % 64));
    same(E(ll), M(ll), "long long " + std::to_string(ll));
    same(E(static_cast<unsigned long long>(r)), M(static_cast<unsigned long long>(r)), "unsigned " + std::to_string(r));
    std::snprintf(text, sizeof text, "%.*Le", static_cast<int>(rng() % 25), ld);
    same(E(text), M(text), std::string("text ") + text);
  }
}

}  // namespace

TEST_CASE(
    "backend conversions == MPFR: random long doubles, 64-bit integers and decimal text into bf16, fp16, e4m3fn, rne "
    "rz ru rd") {
  tally t("backend conversions vs mpfr");
  std::mt19937_64 rng(0xc0e7);
  conversions_against_mpfr<F::bf16, rounding{}>("bf16 rne", t, rng);
  conversions_against_mpfr<F::bf16, rounding{round_mode::toward_zero}>("bf16 rz", t, rng);
  conversions_against_mpfr<F::fp16, rounding{round_mode::toward_positive}>("fp16 ru", t, rng);
  conversions_against_mpfr<F::fp16, rounding{round_mode::toward_negative}>("fp16 rd", t, rng);
  conversions_against_mpfr<F::e4m3fn, rounding{}>("e4m3fn rne", t, rng);
  t.finish(5 * 2000 * 4);
}

namespace {

// negate, abs, floor, ceil, trunc, round, frexp and ldexp on every code == MPFR; none of them
// raises a flag where the result is a value of the format.
template <fpemu::format Fmt, fpemu::rounding R>
void exact_operations(const char* name) {
  using E = emulated<Fmt, R>;
  using M = reference<Fmt, R>;
  tally t(std::string("exact operations ") + name);
  const std::uint32_t n = std::uint32_t{1} << fpemu::width(Fmt);
  for (std::uint32_t c = 0; c < n; ++c) {
    const E x = of_code<E>(c);
    M y;
    y = static_cast<double>(x);  // exact
    const auto same = [&](const E& e, const M& m, const char* what, bool exact) {
      const bool ok = boost_test::key(e.backend()) == boost_test::key(m.backend()) && (!exact || flags(e) == 0);
      t.check_lazy(ok, [&] {
        char text[128];
        std::snprintf(text, sizeof text, "%s(0x%x): 0x%x flags %u, mpfr 0x%x", what, c, e.backend().code(), flags(e),
                      m.backend().code());
        return std::string(text);
      });
    };
    same(-x, -y, "negate", true);
    same(abs(x), abs(y), "abs", true);
    same(floor(x), floor(y), "floor", true);
    same(ceil(x), ceil(y), "ceil", true);
    same(trunc(x), trunc(y), "trunc", true);
    same(round(x), round(y), "round", true);
    int ex = 0, ey = 0;
    const E fx = frexp(x, &ex);
    const M fy = frexp(y, &ey);
    same(fx, fy, "frexp", true);
    t.check(ex == ey, std::string("frexp exponent of ") + boost_test::show(Fmt, c));
    for (const int k : {-40, -3, 1, 7, 200}) same(ldexp(x, k), ldexp(y, k), "ldexp", false);
  }
  t.finish(std::uint64_t{n} * (6 + 2 + 5));
}

}  // namespace

TEST_CASE(
    "backend negate, abs, floor, ceil, trunc, round, frexp, ldexp: every bf16 and fp16 code == MPFR, no flags where "
    "exact") {
  exact_operations<F::bf16, rounding{}>("bf16 rne");
  exact_operations<F::bf16, rounding{round_mode::toward_negative}>("bf16 rd");
  exact_operations<F::fp16, rounding{round_mode::toward_zero}>("fp16 rz");
}

TEST_CASE(
    "backend comparisons are IEEE and exact: all e4m3fn pairs, and bf16 values against the doubles between them") {
  using E = emulated<F::e4m3fn>;
  using M = reference<F::e4m3fn>;
  tally t("comparisons e4m3fn");
  for (std::uint32_t a = 0; a < 256; ++a) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      const E x = of_code<E>(a), y = of_code<E>(b);
      M u, v;
      u = static_cast<double>(x);
      v = static_cast<double>(y);
      const bool same = (x < y) == (u < v) && (x > y) == (u > v) && (x == y) == (u == v) && (x <= y) == (u <= v) &&
                        (x != y) == (u != v) && (x < static_cast<double>(y)) == (u < v) &&
                        (x == static_cast<double>(y)) == (u == v);
      t.check(same, boost_test::show(F::e4m3fn, a) + " vs " + boost_test::show(F::e4m3fn, b));
    }
  }
  t.finish(256 * 256);

  // x against x +- a quarter of the gap to its neighbours: Boost's default would round the double
  // into bf16 first and call them equal.
  using b16 = emulated<F::bf16>;
  tally exact("mixed comparisons bf16");
  for (std::uint32_t c = 0x0001; c < 0x7f80; ++c) {
    const b16 x = of_code<b16>(c);
    const double v = static_cast<double>(x), up = static_cast<double>(of_code<b16>(c + 1)),
                 down = static_cast<double>(of_code<b16>(c - 1));
    const double above = v + (up - v) / 4, below = v - (v - down) / 4;
    const double whole = std::floor(v);  // against integers too, where they fit a long long
    const bool integers = v >= 0x1p62 || (x >= static_cast<long long>(whole) && x < static_cast<long long>(whole) + 1);
    exact.check(x < above && x > below && x != above && !(x == below) && -x > -above && x == v && x <= v && x >= v &&
                    x < static_cast<long double>(above) && integers,
                boost_test::show(F::bf16, c));
  }
  exact.finish(0x7f80 - 1);
  CHECK(b16(0.1) > 0.1);  // bf16(0.1) = 0.10009765625
  CHECK(b16(0.1) != 0.1);
}

TEST_CASE("backend numeric_limits: the format's values, and equal member by member to the MPFR reference's") {
  using e4 = emulated<F::e4m3fn>;
  using b16 = emulated<F::bf16>;
  using h = emulated<F::fp16, rounding{round_mode::toward_zero}>;
  CHECK(std::numeric_limits<e4>::max() == 448);
  CHECK(std::numeric_limits<e4>::epsilon() == 0.125);
  CHECK(std::numeric_limits<e4>::denorm_min() == std::ldexp(1.0, -9));
  CHECK(std::numeric_limits<e4>::min() == std::ldexp(1.0, -6));
  CHECK(!std::numeric_limits<e4>::has_infinity);
  CHECK(isnan(std::numeric_limits<e4>::quiet_NaN()));
  CHECK(std::numeric_limits<e4>::digits == 4);
  CHECK(std::numeric_limits<b16>::max() == std::ldexp(255.0, 120));
  CHECK(isinf(std::numeric_limits<b16>::infinity()));
  CHECK(std::numeric_limits<b16>::digits == 8);
  CHECK(std::numeric_limits<b16>::max_exponent == 128);
  CHECK(std::numeric_limits<h>::round_style == std::round_toward_zero);
  CHECK(std::numeric_limits<h>::round_error() == 1);
  CHECK(std::numeric_limits<h>::min() == std::ldexp(1.0, -14));
  CHECK(std::numeric_limits<h>::max() == 65504);

  const auto same_limits = [](auto e, auto m, const char* name) {
    using E = decltype(e);
    using M = decltype(m);
    using le = std::numeric_limits<E>;
    using lm = std::numeric_limits<M>;
    INFO(name);
    CHECK(le::digits == lm::digits);
    CHECK(le::min_exponent == lm::min_exponent);
    CHECK(le::max_exponent == lm::max_exponent);
    CHECK(le::has_infinity == lm::has_infinity);
    CHECK(le::has_quiet_NaN == lm::has_quiet_NaN);
    CHECK(le::has_denorm == lm::has_denorm);
    CHECK(le::round_style == lm::round_style);
    for (const auto& [x, y] :
         {std::pair{le::min(), lm::min()}, std::pair{le::max(), lm::max()}, std::pair{le::lowest(), lm::lowest()},
          std::pair{le::epsilon(), lm::epsilon()}, std::pair{le::round_error(), lm::round_error()},
          std::pair{le::infinity(), lm::infinity()}, std::pair{le::quiet_NaN(), lm::quiet_NaN()},
          std::pair{le::denorm_min(), lm::denorm_min()}})
      CHECK(boost_test::key(x.backend()) == boost_test::key(y.backend()));
  };
  same_limits(e4(), reference<F::e4m3fn>(), "e4m3fn");
  same_limits(b16(), reference<F::bf16>(), "bf16");
  same_limits(h(), reference<F::fp16, rounding{round_mode::toward_zero}>(), "fp16 rz");
  same_limits(emulated<F::e5m2>(), reference<F::e5m2>(), "e5m2");
  same_limits(emulated<F::fp32>(), reference<F::fp32>(), "fp32");
}

TEST_CASE(
    "backend fma rounds once == MPFR on 10^5 random bf16 triples; a * b + c rounds twice, with expression templates on "
    "or off") {
  using E = emulated<F::bf16>;
  using M = reference<F::bf16>;
  using on = number<fpemu::mp::backend<F::bf16>, boost::multiprecision::et_on>;
  tally t("fma bf16");
  std::mt19937_64 rng(0xfa);
  int fused_differs = 0;
  constexpr int kTriples = 100000;
  for (int i = 0; i < kTriples; ++i) {
    const auto a = static_cast<std::uint32_t>(rng() & 0xffff), b = static_cast<std::uint32_t>(rng() & 0xffff),
               c = static_cast<std::uint32_t>(rng() & 0xffff);
    const E x = of_code<E>(a), y = of_code<E>(b), z = of_code<E>(c);
    M u, v, w;
    u = static_cast<double>(x);
    v = static_cast<double>(y);
    w = static_cast<double>(z);
    M fused;
    fused.backend().apply(
        [&](mpfr_ptr r) { return mpfr_fma(r, u.backend().data(), v.backend().data(), w.backend().data(), MPFR_RNDN); });
    const E f = fpemu::mp::fma(x, y, z);
    const E unfused = x * y + z;
    const on lazy = on(x.backend()) * on(y.backend()) + on(z.backend());
    fused_differs += boost_test::key(f.backend()) != boost_test::key(unfused.backend()) ? 1 : 0;
    t.check(boost_test::key(f.backend()) == boost_test::key(fused.backend()) &&
                boost_test::key(lazy.backend()) == boost_test::key(unfused.backend()) &&
                boost_test::key(fpemu::mp::fma(on(x.backend()), on(y.backend()), on(z.backend())).backend()) ==
                    boost_test::key(f.backend()),
            boost_test::show(F::bf16, a) + " " + boost_test::show(F::bf16, b) + " " + boost_test::show(F::bf16, c));
  }
  t.finish(kTriples);
  CHECK(fused_differs > 100);  // the fused and unfused results differ in a few percent of cases
}

TEST_CASE("backend str(): max_digits10 digits that read back to the same code, every bf16 and e4m3fn code") {
  using b16 = emulated<F::bf16>;
  using e4 = emulated<F::e4m3fn>;
  tally t("str round trip");
  for (std::uint32_t c = 0; c < 65536; ++c) {
    const b16 x = of_code<b16>(c);
    const b16 back(x.str().c_str());
    t.check(isnan(x) ? isnan(back) : back.backend().code() == c, boost_test::show(F::bf16, c) + " " + x.str());
  }
  for (std::uint32_t c = 0; c < 256; ++c) {
    const e4 x = of_code<e4>(c);
    const e4 back(x.str().c_str());
    t.check(isnan(x) ? isnan(back) : back.backend().code() == c, boost_test::show(F::e4m3fn, c) + " " + x.str());
  }
  t.finish(65536 + 256);
  std::ostringstream out;
  out << b16(0.1) << " " << std::setprecision(12) << b16(0.1) << " " << std::scientific << std::setprecision(3)
      << e4(448);
  CHECK(out.str() == "0.100098 0.10009765625 4.480e+02");
}
