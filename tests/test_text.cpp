// Text conversions: decimal and hex-float strings rounded exactly (checked against MPFR's
// mpfr_strtofr with subnormalisation), exact decimal and hex output that reads back to the same
// code, no double rounding, and clear errors for malformed numbers.
#include <doctest/doctest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

using namespace fpemu;

namespace {

const std::vector<format> kAllNamed = [] {
  std::vector<format> v;
  for (const named_format& n : named_formats()) v.push_back(n.fmt);
  return v;
}();

// Exact decimal of a code through MPFR, independent of to_decimal: the value is a dyadic
// rational, so printing it with enough digits in RNDN gives it exactly.
double mpfr_value_of(const std::string& text, int precision, mpfr_rnd_t rnd, int emin_mpfr, int& ternary) {
  mpfr_t x;
  mpfr_init2(x, precision);
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  mpfr_set_emin(emin_mpfr);
  mpfr_set_emax(2000);
  ternary = mpfr_strtofr(x, text.c_str(), nullptr, 0, rnd);
  ternary = mpfr_check_range(x, ternary, rnd);
  ternary = mpfr_subnormalize(x, ternary, rnd);
  const double d = mpfr_get_d(x, MPFR_RNDN);  // exact: the value has <= 24 significant bits
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  mpfr_clear(x);
  return d;
}

// Random decimal strings near the interesting parts of a format's range: many digits, so most
// are not representable and some land within 1e-30 relative of a rounding boundary.
std::string random_decimal(std::mt19937_64& rng, const format& f) {
  std::uniform_int_distribution<int> ndig(1, 40);
  const int lo = emin(f) - f.frac_bits - 2, hi = emax(f) + 2;
  std::uniform_int_distribution<int> e2(lo, hi);
  // A double near 2^e, printed with many digits, then digits appended.
  const double base = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng), e2(rng));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", ndig(rng) % 17, base);
  std::string s = buf;
  const auto epos = s.find('e');
  std::string mant = s.substr(0, epos), exp = s.substr(epos);
  if (mant.find('.') == std::string::npos) mant += ".";
  const int extra = ndig(rng) % 25;
  for (int i = 0; i < extra; ++i) mant += static_cast<char>('0' + rng() % 10);
  return ((rng() & 1) ? "-" : "") + mant + exp;
}

mpfr_rnd_t to_mpfr(round_mode m) {
  switch (m) {
    case round_mode::toward_zero: return MPFR_RNDZ;
    case round_mode::toward_positive: return MPFR_RNDU;
    case round_mode::toward_negative: return MPFR_RNDD;
    default: return MPFR_RNDN;
  }
}

}  // namespace

TEST_CASE("decimal strings into every IEEE-like named format, rne/rz/ru/rd == mpfr_strtofr") {
  std::mt19937_64 rng(20261121);
  const round_mode modes[] = {round_mode::nearest_even, round_mode::toward_zero, round_mode::toward_positive,
                              round_mode::toward_negative};
  long cases = 0, mismatches = 0;
  for (const format& f : kAllNamed) {
    // MPFR's subnormal emulation models formats with gradual underflow and an IEEE top binade.
    if (f.encoding != nonfinite::ieee) continue;
    const int emin_mpfr = emin(f) - f.frac_bits + 1;  // MPFR significands are in [1/2, 1)
    for (int i = 0; i < 4000; ++i) {
      const std::string s = random_decimal(rng, f);
      for (round_mode m : modes) {
        ++cases;
        const expected<rounded> ours = from_string(f, s, rounding{m});
        REQUIRE(ours);
        int ternary = 0;
        const double ref = mpfr_value_of(s, f.frac_bits + 1, to_mpfr(m), emin_mpfr, ternary);
        const double got = to_double(f, ours->code);
        // Above the largest finite value MPFR (emax 2000) keeps the number; map it by IEEE rules.
        double expect = ref;
        if (std::fabs(ref) > max_finite(f)) {
          const bool toward_max = m == round_mode::toward_zero || (m == round_mode::toward_positive && ref < 0) ||
                                  (m == round_mode::toward_negative && ref > 0);
          expect = std::copysign(toward_max ? max_finite(f) : INFINITY, ref);
        }
        const int dir = ternary > 0 ? 1 : (ternary < 0 ? -1 : 0);
        if (got != expect || std::signbit(got) != std::signbit(expect) ||
            (std::fabs(ref) <= max_finite(f) && ours->direction != dir)) {
          if (++mismatches <= 5)
            MESSAGE(to_string(f), " ", to_string(m), " '", s, "': ours ", got, " dir ", int(ours->direction),
                    ", MPFR ", expect, " dir ", dir);
        }
      }
    }
  }
  MESSAGE("decimal strings vs mpfr_strtofr: ", cases, " cases");
  CHECK(cases == 6L * 4000 * 4);  // e5m2 bf16 fp16 tf32 fp32 e8m13
  CHECK(mismatches == 0);
}

TEST_CASE("every code of every <=16-bit named format reads back from its exact decimal and hex text") {
  long cases = 0;
  for (const format& f : kAllNamed) {
    if (width(f) > 16) continue;
    for (std::uint32_t code = 0; code <= code_mask(f); ++code) {
      const unpacked x = decode(f, code);
      if (x.cls == value_class::nan) continue;
      // Flushed codes of formats without subnormals read as zero; compare canonical codes.
      const std::uint32_t canonical = round(f, x, rounding{}).code;
      for (const std::string& text : {to_decimal(f, code), to_hex_float(f, code)}) {
        const expected<rounded> back = from_string(f, text, rounding{round_mode::toward_zero});
        REQUIRE_MESSAGE(back, text);
        if (back->code != canonical || back->flags != 0) FAIL_CHECK(to_string(f), " code ", code, " text ", text);
        ++cases;
      }
    }
  }
  MESSAGE("decimal/hex round trips: ", cases, " cases");
  CHECK(cases > 2 * 2 * 60000);
}

TEST_CASE("fp32: exact decimal of random codes equals MPFR's exact printing") {
  std::mt19937 rng(7);
  mpfr_t x;
  mpfr_init2(x, 24);
  long cases = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t code = rng();
    const unpacked u = decode(formats::fp32, code);
    if (u.cls != value_class::finite) continue;
    mpfr_set_d(x, to_double(formats::fp32, code), MPFR_RNDN);
    const std::string ours = to_decimal(formats::fp32, code);
    // Read our text back into a 24-bit MPFR number: exact text means no rounding (ternary 0).
    mpfr_t y;
    mpfr_init2(y, 24);
    const int t = mpfr_strtofr(y, ours.c_str(), nullptr, 10, MPFR_RNDN);
    CHECK(t == 0);
    CHECK(mpfr_equal_p(x, y));
    mpfr_clear(y);
    ++cases;
  }
  mpfr_clear(x);
  CHECK(cases > 19000);
}

TEST_CASE("no double rounding: strings that a detour through double rounds differently") {
  // Just above the midpoint between two neighbours: binary64 rounds onto the midpoint, and the
  // second rounding then breaks the tie to even. Direct rounding sees the value above the tie.
  struct example {
    format f;
    const char* text;
    double direct, via_double;
  };
  const example examples[] = {
      {formats::e4m3fn, "1.06250000000000000001", 1.125, 1.0},
      {formats::bf16, "1.00390625000000000001", 1.0078125, 1.0},
      {formats::fp16, "1.00048828125000000001", 1.0009765625, 1.0},
      {formats::fp32, "1.0000000596046447753906250001", 1.00000011920928955078125, 1.0},
  };
  for (const example& e : examples) {
    const double through_double = std::strtod(e.text, nullptr);
    CHECK(to_double(e.f, from(e.f, through_double).code) == e.via_double);
    const expected<rounded> direct = from_string(e.f, e.text);
    REQUIRE(direct);
    CHECK(to_double(e.f, direct->code) == e.direct);
    int ternary = 0;
    CHECK(mpfr_value_of(e.text, e.f.frac_bits + 1, MPFR_RNDN, emin(e.f) - e.f.frac_bits + 1, ternary) == e.direct);
  }
}

TEST_CASE("e4m3fn: 0.1 in every deterministic mode, straight from the string") {
  // 0.1 = 1.6 * 2^-4 and the quantum there is 2^-7: the neighbours are 12 * 2^-7 = 0.09375
  // (0x1c) and 13 * 2^-7 = 0.1015625 (0x1d), the nearer one; round-to-odd sets 12's last bit.
  const struct {
    round_mode m;
    std::uint32_t code;
  } want[] = {{round_mode::nearest_even, 0x1d}, {round_mode::nearest_away, 0x1d}, {round_mode::toward_zero, 0x1c},
              {round_mode::toward_positive, 0x1d}, {round_mode::toward_negative, 0x1c}, {round_mode::to_odd, 0x1d}};
  for (const auto& w : want) {
    const expected<rounded> r = from_string(formats::e4m3fn, "0.1", rounding{w.m});
    REQUIRE(r);
    CHECK(r->code == w.code);
    CHECK(r->flags == flag::inexact);
  }
}

TEST_CASE("special and extreme texts") {
  const format f = formats::fp32;
  CHECK(from_string(f, "inf")->code == 0x7f800000u);
  CHECK(from_string(f, "-Infinity")->code == 0xff800000u);
  CHECK(decode(f, from_string(f, "nan")->code).cls == value_class::nan);
  CHECK(from_string(f, "-0")->code == 0x80000000u);
  CHECK(from_string(f, "0x0.0p0")->code == 0u);
  CHECK(from_string(f, "1e999999999999")->code == 0x7f800000u);
  CHECK(from_string(f, "1e-999999999999")->code == 0u);
  CHECK(from_string(f, "1e-999999999999", rounding{round_mode::toward_positive})->code == 1u);
  CHECK(from_string(f, "  42\t")->code == 0x42280000u);
  CHECK(from_string(f, "0X1.8P+1")->code == 0x40400000u);
  CHECK(from_string(f, "0x1A")->code == 0x41d00000u);
  // 2^-150 exactly is the tie between 0 and the smallest subnormal: even is 0.
  CHECK(from_string(f, "0x1p-150")->code == 0u);
  CHECK(from_string(f, "0x1.000000001p-150")->code == 1u);
  // A thousand-digit string is read exactly.
  CHECK(from_string(f, "0." + std::string(1000, '0') + "1e1001")->code == 0x3f800000u);
}

TEST_CASE("malformed numbers are errors that quote the text") {
  for (const char* bad : {"", " ", "1.2.3", "0x", "1e", "e5", "--1", "+-1", "1e+", "0x1p", "0x1g", "abc", "1 2", "nanx",
                          "0x.p1", ".", "1e5.5"}) {
    const expected<unpacked> r = parse_number(bad);
    CHECK_MESSAGE(!r, bad);
    if (!r) CHECK(r.message().find("'" + std::string(bad) + "'") != std::string::npos);
  }
}

TEST_CASE("printable: control bytes as \\xNN, UTF-8 kept, long text cut with its length") {
  using namespace std::string_literals;
  CHECK(fpemu::printable("a\0b\x1b[2J\x7f"s) == "a\\x00b\\x1b[2J\\x7f");
  CHECK(fpemu::printable("\xc3\xa9t\xc3\xa9") == "\xc3\xa9t\xc3\xa9");
  CHECK(fpemu::printable(std::string(100, 'x'), 40) == std::string(40, 'x') + "... (100 bytes)");
  CHECK(fpemu::printable(std::string(40, 'x'), 40) == std::string(40, 'x'));
  CHECK(fpemu::printable("\n\n\n", 5) == "\\x0a\\x0a... (3 bytes)");
}

TEST_CASE("an expected's message is the error's text, and empty for a value, so checks may pass it on success") {
  const expected<format> good = parse_format("e4m3fn"), bad = parse_format("e9m99");
  REQUIRE_MESSAGE(good.has_value(), good.message());  // doctest evaluates the message on success too
  CHECK(good.message().empty());
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.message().find("e9m99") != std::string::npos);
}
