// format.hpp and spec.hpp: derived quantities of every named format against published
// constants, finite_count against a count over every code, and every path of the spec parser.
//
// Sources of the constants: OCP 8-bit Floating Point Specification 1.0 (e4m3fn, e5m2), OCP
// Microscaling Formats 1.0 (e2m3fn, e3m2fn, e2m1fn, e8m0fnu), ml_dtypes finfo (fnuz formats,
// bfloat16), IEEE 754 (binary16, binary32 via <cfloat>), NVIDIA A100 whitepaper (tf32).
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpemu/format.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/status.hpp"
#include "fpemu/value.hpp"
#include "fpemu/unpacked.hpp"

using namespace fpemu;

namespace {

// 2^e from the host library, independent of format.hpp's pow2.
double two_to(int e) { return std::ldexp(1.0, e); }

struct published {
  std::string_view name;
  format f;
  int width;
  double max_finite, min_normal, min_positive, u;
  int emin, emax;
  std::uint64_t finite_count;  // counted by hand from the encoding rules
};

const std::vector<published>& table() {
  static const std::vector<published> t{
      // OFP8: 0x7f/0xff are NaN, 254 finite codes.
      {"e4m3fn", formats::e4m3fn, 8, 448.0, 0.015625, 0.001953125, 0.0625, -6, 8, 254},
      // OFP8: exponent 11111 with 4 fraction values, both signs: 256 - 8.
      {"e5m2", formats::e5m2, 8, 57344.0, 6.103515625e-05, 1.52587890625e-05, 0.125, -14, 15, 248},
      // ml_dtypes finfo(float8_e4m3fnuz): single NaN 0x80.
      {"e4m3fnuz", formats::e4m3fnuz, 8, 240.0, 0.0078125, 0.0009765625, 0.0625, -7, 7, 255},
      {"e5m2fnuz", formats::e5m2fnuz, 8, 57344.0, 3.0517578125e-05, 7.62939453125e-06, 0.125, -15, 15, 255},
      // ml_dtypes finfo(bfloat16); 65536 - 2 * 128 inf/NaN codes.
      {"bf16", formats::bf16, 16, 3.3895313892515355e+38, 1.1754943508222875e-38, 9.183549615799121e-41,
       0.00390625, -126, 127, 65280},
      // IEEE 754 binary16; 65536 - 2 * 1024.
      {"fp16", formats::fp16, 16, 65504.0, 6.103515625e-05, 5.960464477539063e-08, 0.00048828125, -14, 15, 63488},
      // A100 whitepaper: fp32 range, 10-bit mantissa: max (2 - 2^-10) * 2^127.
      {"tf32", formats::tf32, 19, 3.4011621342146535e+38, 1.1754943508222875e-38, two_to(-136), two_to(-11), -126,
       127, (1u << 19) - (1u << 11)},
      {"fp32", formats::fp32, 32, FLT_MAX, FLT_MIN, 1.401298464324817e-45, FLT_EPSILON / 2, FLT_MIN_EXP - 1,
       FLT_MAX_EXP - 1, (std::uint64_t{1} << 32) - (std::uint64_t{1} << 24)},
      // fp32 range, 13 fraction bits: max (2 - 2^-13) * 2^127.
      {"e8m13", formats::e8m13, 22, 3.4026159773350432e+38, 1.1754943508222875e-38, two_to(-139), two_to(-14), -126,
       127, (1u << 22) - (1u << 14)},
      // OCP MX 1.0 tables: no inf, no NaN, every code finite.
      {"e2m3fn", formats::e2m3fn, 6, 7.5, 1.0, 0.125, 0.0625, 0, 2, 64},
      {"e3m2fn", formats::e3m2fn, 6, 28.0, 0.25, 0.0625, 0.125, -2, 4, 64},
      {"e2m1fn", formats::e2m1fn, 4, 6.0, 1.0, 0.5, 0.25, 0, 2, 16},
      // OCP MX 1.0 E8M0: 2^-127 .. 2^127, 0xff NaN, no zero, no sign; u = 2^-1 (1-bit significand).
      {"e8m0fnu", formats::e8m0fnu, 8, 1.7014118346046923e+38, 5.877471754111438e-39, 5.877471754111438e-39, 0.5,
       -127, 127, 255},
  };
  return t;
}

// Value of a finite unpacked code as a double, from its fields (independent of to_double).
double value_of(const unpacked& x) {
  const double v = x.cls == value_class::zero ? 0.0 : static_cast<double>(static_cast<std::uint64_t>(x.sig)) * two_to(x.exp);
  return x.negative ? -v : v;
}

}  // namespace

TEST_CASE("named formats: width, max finite, min normal, min positive, u, emin, emax == published constants") {
  int n = 0;
  for (const published& p : table()) {
    CAPTURE(p.name);
    CHECK(width(p.f) == p.width);
    CHECK(max_finite(p.f) == p.max_finite);
    CHECK(min_normal(p.f) == p.min_normal);
    CHECK(min_positive(p.f) == p.min_positive);
    CHECK(unit_roundoff(p.f) == p.u);
    CHECK(machine_epsilon(p.f) == 2 * p.u);
    CHECK(emin(p.f) == p.emin);
    CHECK(emax(p.f) == p.emax);
    ++n;
  }
  CHECK(n == 13);
  CHECK(table().size() == named_formats().size());
}

TEST_CASE("named formats: the named_formats() table holds exactly the formats:: rows under their own names") {
  int n = 0;
  for (const published& p : table()) {
    CAPTURE(p.name);
    int found = 0;
    for (const named_format& nf : named_formats())
      if (nf.name == p.name) {
        CHECK(nf.fmt == p.f);
        CHECK(!nf.description.empty());
        CHECK(!nf.citation.empty());
        ++found;
      }
    CHECK(found == 1);
    CHECK_FALSE(check(p.f).has_value());
    ++n;
  }
  CHECK(n == 13);
  CHECK(named_formats().size() == 13);
  // The C++ types come from the same table.
  static_assert(bf16_t::fmt == formats::bf16 && e8m0fnu_t::fmt == formats::e8m0fnu);
  static_assert(sizeof(e4m3fn_t) == 1 && sizeof(tf32_t) == 4);
}

// A code count by decode() for every format up to 22 bits; fp32 uses the published count.
TEST_CASE("finite_count == codes decoded as zero or finite, over every code of each format up to 22 bits") {
  std::vector<format> formats_to_count;
  for (const published& p : table())
    if (p.width <= 22) formats_to_count.push_back(p.f);
  // User formats exercising nosub, unsigned, fn/fnuz/finite and nozero.
  for (std::string_view spec : {"e5m10:bias=14:nosub", "e4m3:nosub:fn", "e3m2:unsigned", "e4m3:unsigned:fn",
                                "e5m2:finite:unsigned", "e6m9", "e4m3:ieee", "e3m4:fnuz:nosub", "e8m0:fn:unsigned:nozero:nosub",
                                "e4m0:fn:nosub:nozero:unsigned"}) {
    const auto f = parse_format(spec);
    REQUIRE_MESSAGE(f.has_value(), spec);
    formats_to_count.push_back(*f);
  }
  int n = 0;
  std::uint64_t codes_seen = 0;
  for (const format& f : formats_to_count) {
    CAPTURE(to_string(f));
    std::uint64_t finite = 0;
    const std::uint64_t codes = std::uint64_t{1} << width(f);
    for (std::uint64_t c = 0; c < codes; ++c) {
      const value_class k = decode(f, static_cast<std::uint32_t>(c)).cls;
      finite += k == value_class::zero || k == value_class::finite;
    }
    codes_seen += codes;
    CHECK(finite == finite_count(f));
    ++n;
  }
  CHECK(n == 12 + 10);
  CHECK(codes_seen == 256 * 5 + 65536 * 2 + (1u << 19) + (1u << 22) + 64 * 2 + 16 +  // named
                          65536 + 256 + 32 + 128 + 128 + 65536 + 256 + 256 + 256 + 16);
  for (const published& p : table()) {
    CAPTURE(p.name);
    CHECK(finite_count(p.f) == p.finite_count);
  }
}

TEST_CASE("max finite, min normal and min positive == extremes over every decoded code (formats up to 22 bits)") {
  int n = 0;
  for (const published& p : table()) {
    if (p.width > 22) continue;
    CAPTURE(p.name);
    double largest = 0, smallest_positive = 0, smallest_normal = 0;
    const std::uint64_t codes = std::uint64_t{1} << p.width;
    for (std::uint64_t c = 0; c < codes; ++c) {
      const unpacked x = decode(p.f, static_cast<std::uint32_t>(c));
      if (x.cls != value_class::finite || x.negative) continue;
      const double v = value_of(x);
      const bool normal = !p.f.has_zero || (c >> p.f.frac_bits) != 0;
      if (v > largest) largest = v;
      if (smallest_positive == 0 || v < smallest_positive) smallest_positive = v;
      if (normal && (smallest_normal == 0 || v < smallest_normal)) smallest_normal = v;
    }
    CHECK(largest == max_finite(p.f));
    CHECK(smallest_positive == min_positive(p.f));
    CHECK(smallest_normal == min_normal(p.f));
    ++n;
  }
  CHECK(n == 12);
}

TEST_CASE("parse_format: every named format parses to its row and to_string gives the name back") {
  int n = 0;
  for (const named_format& nf : named_formats()) {
    CAPTURE(nf.name);
    const auto f = parse_format(nf.name);
    REQUIRE(f.has_value());
    CHECK(*f == nf.fmt);
    CHECK(to_string(*f) == nf.name);
    ++n;
  }
  CHECK(n == 13);
}

TEST_CASE("parse_format: eXmY specs that spell a named format give that format and print as its name") {
  const struct {
    std::string_view spec;
    format f;
  } cases[] = {
      {"e4m3:fn", formats::e4m3fn},        {"e5m2", formats::e5m2},
      {"e5m2:ieee", formats::e5m2},        {"e4m3:fnuz", formats::e4m3fnuz},
      {"e5m2:fnuz", formats::e5m2fnuz},    {"e8m7", formats::bf16},
      {"e5m10", formats::fp16},            {"e8m10", formats::tf32},
      {"e8m23", formats::fp32},            {"e8m13", formats::e8m13},
      {"e2m3:finite", formats::e2m3fn},    {"e3m2:finite", formats::e3m2fn},
      {"e2m1:finite", formats::e2m1fn},    {"e8m0:nosub:fn:unsigned:nozero", formats::e8m0fnu},
      {"e4m3:bias=7:fn", formats::e4m3fn},
  };
  int n = 0;
  for (const auto& c : cases) {
    CAPTURE(c.spec);
    const auto f = parse_format(c.spec);
    REQUIRE(f.has_value());
    CHECK(*f == c.f);
    CHECK(parse_format(to_string(*f)).value() == c.f);
    ++n;
  }
  CHECK(n == 15);
}

TEST_CASE("parse_format: user specs give the fields written and round-trip through their canonical to_string") {
  const struct {
    std::string_view spec;
    format f;
    std::string_view canonical;
  } cases[] = {
      {"e6m9", {6, 9, 31, true, nonfinite::ieee, true, true}, "e6m9"},
      {"e5m10:bias=14:nosub", {5, 10, 14, false, nonfinite::ieee, true, true}, "e5m10:bias=14:nosub"},
      {"e4m3:ieee", {4, 3, 7, true, nonfinite::ieee, true, true}, "e4m3"},
      {"e4m3:nosub:bias=5:fn", {4, 3, 5, false, nonfinite::fn, true, true}, "e4m3:bias=5:nosub:fn"},
      {"e3m4:fnuz", {3, 4, 4, true, nonfinite::fnuz, true, true}, "e3m4:fnuz"},
      {"e3m4:fnuz:bias=3", {3, 4, 3, true, nonfinite::fnuz, true, true}, "e3m4:bias=3:fnuz"},
      {"e5m2:finite:unsigned", {5, 2, 15, true, nonfinite::finite, false, true}, "e5m2:finite:unsigned"},
      {"e8m0:fn:unsigned:nozero:nosub:bias=100", {8, 0, 100, false, nonfinite::fn, false, false},
       "e8m0:bias=100:nosub:fn:unsigned:nozero"},
      {"e8m0:fn", {8, 0, 127, true, nonfinite::fn, true, true}, "e8m0:fn"},
      {"e5m0:finite:unsigned", {5, 0, 15, true, nonfinite::finite, false, true}, "e5m0:finite:unsigned"},
      {"e11m20", {11, 20, 1023, true, nonfinite::ieee, true, true}, "e11m20"},
      {"e2m1", {2, 1, 1, true, nonfinite::ieee, true, true}, "e2m1"},
      {"e4m3:bias=-3", {4, 3, -3, true, nonfinite::ieee, true, true}, "e4m3:bias=-3"},
      {"e4m3:ieee:fn:ieee", {4, 3, 7, true, nonfinite::ieee, true, true}, "e4m3"},  // the last encoding wins
  };
  int n = 0;
  for (const auto& c : cases) {
    CAPTURE(c.spec);
    const auto f = parse_format(c.spec);
    REQUIRE_MESSAGE(f.has_value(), (f ? std::string() : f.message()));
    CHECK(*f == c.f);
    CHECK(to_string(*f) == c.canonical);
    CHECK(parse_format(to_string(*f)).value() == *f);
    ++n;
  }
  CHECK(n == 14);
}

namespace {
// The error message of a spec that must be rejected.
std::string spec_error(std::string_view spec) {
  const auto f = parse_format(spec);
  CHECK_MESSAGE(!f.has_value(), spec);
  return f ? std::string() : f.message();
}
bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("parse_format errors: each message quotes the spec and names the field and its valid range") {
  const struct {
    std::string_view spec;
    std::vector<std::string_view> parts;  // every one must appear in the message
  } cases[] = {
      {"e0m3", {"'e0m3'", "exponent bits 0", "valid 1..11"}},
      {"e12m3", {"'e12m3'", "exponent bits 12", "valid 1..11"}},
      {"e8m24", {"'e8m24'", "frac_bits 24", "valid 0..23"}},
      {"e1m31", {"'e1m31'", "frac_bits 31", "valid 0..30"}},
      {"e4m-1", {"'e4m-1'", "frac_bits -1", "valid 0..27"}},
      {"e1m2", {"'e1m2'", "ieee encoding needs exp_bits >= 2"}},
      {"e4m0", {"'e4m0'", "ieee encoding needs", "frac_bits >= 1"}},
      {"e4m3:fnuz:unsigned", {"'e4m3:fnuz:unsigned'", "fnuz", "sign bit"}},
      {"e4m3:nozero", {"'e4m3:nozero'", "nozero needs nosub"}},
      {"e1m0:fn", {"'e1m0:fn'", "no normal numbers"}},
      {"e8m7:bias=2000", {"'e8m7:bias=2000'", "bias 2000", "valid -769..1068"}},
      {"e8m7:bias=-800", {"bias -800", "valid -769..1068"}},
      {"e11m1:fn", {"bias 1023", "valid 1024..1074"}},  // top binade 2^1024
      // Without subnormals the lowest binade still has the quantum 2^(emin - frac_bits): at bias
      // 1053 it is 2^-1075, below binary64's (found by fuzz_arith).
      {"e8m23:bias=1053:nosub", {"bias 1053", "valid -769..1052"}},
      {"e1m0:fnuz:nosub:nozero", {"'e1m0:fnuz:nosub:nozero'", "fnuz encoding needs a zero"}},
      {"e4m3:bias=", {"'e4m3:bias='", "bias ''", "not an integer"}},
      {"e4m3:bias=x7", {"bias 'x7'", "not an integer"}},
      {"e4m3:foo", {"'e4m3:foo'", "unknown option 'foo'", "valid bias=N, nosub, ieee, fn, fnuz, finite, unsigned, nozero"}},
      {"e4m3:", {"unknown option ''"}},
      {"e4m3::fn", {"unknown option ''"}},
      {"e4m3:FN", {"unknown option 'FN'"}},
  };
  int n = 0;
  for (const auto& c : cases) {
    CAPTURE(c.spec);
    const std::string msg = spec_error(c.spec);
    CAPTURE(msg);
    for (std::string_view part : c.parts) CHECK_MESSAGE(contains(msg, part), part);
    ++n;
  }
  CHECK(n == 21);
}

TEST_CASE("parse_format errors: garbage and empty strings name the input and list the named formats and grammar") {
  int n = 0;
  for (std::string_view spec : {"", " ", "bfloat16", "float8", "E4M3", "e4", "e4m", "em3", "x4m3", "e4x3", "e4m3x",
                                "e+4m3", "4m3", " e4m3", "e4m3 ", "e4.0m3", "e99999999999m3", "fp8", "e4m3fn:nosub"}) {
    CAPTURE(spec);
    const std::string msg = spec_error(spec);
    CAPTURE(msg);
    CHECK(contains(msg, "unknown format '" + std::string(spec) + "': expected one of e4m3fn, e5m2, e4m3fnuz,"));
    CHECK(contains(msg, "e8m0fnu, or eXmY[:bias=N][:nosub][:ieee|fn|fnuz|finite][:unsigned][:nozero]"));
    ++n;
  }
  CHECK(n == 19);
}

TEST_CASE("check(format): fields outside their ranges are rejected with the field name and range") {
  const struct {
    format f;
    std::vector<std::string_view> parts;
  } cases[] = {
      {{0, 3, 0, true, nonfinite::fn, true, true}, {"exp_bits 0", "valid 1..11"}},
      {{12, 3, 2047, true, nonfinite::ieee, true, true}, {"exp_bits 12", "valid 1..11"}},
      {{8, -1, 127, true, nonfinite::ieee, true, true}, {"frac_bits -1", "valid 0..23"}},
      {{8, 24, 127, true, nonfinite::ieee, true, true}, {"frac_bits 24", "valid 0..23"}},
      {{4, 3, 8, true, nonfinite::fnuz, false, true}, {"fnuz", "sign bit"}},
      {{8, 0, 127, true, nonfinite::fn, false, false}, {"nozero needs nosub"}},
      {{8, 7, 5000, true, nonfinite::ieee, true, true}, {"bias 5000", "valid -769..1068"}},
  };
  int n = 0;
  for (const auto& c : cases) {
    const auto msg = check(c.f);
    REQUIRE(msg.has_value());
    CAPTURE(*msg);
    for (std::string_view part : c.parts) CHECK_MESSAGE(contains(*msg, part), part);
    ++n;
  }
  CHECK(n == 7);
}

TEST_CASE("parse_round_mode and parse_overflow_policy: every name round-trips; unknown names list the valid ones") {
  const std::string_view modes[] = {"rne", "rna", "rz", "ru", "rd", "rto", "sr", "sr-exact"};
  const round_mode mode_values[] = {round_mode::nearest_even,    round_mode::nearest_away,   round_mode::toward_zero,
                                    round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd,
                                    round_mode::stochastic,      round_mode::stochastic_exact};
  int n = 0;
  for (int i = 0; i < 8; ++i) {
    const auto m = parse_round_mode(modes[i]);
    REQUIRE(m.has_value());
    CHECK(*m == mode_values[i]);
    CHECK(to_string(*m) == modes[i]);
    ++n;
  }
  const std::string_view policies[] = {"ieee", "saturate", "nan"};
  const overflow_policy policy_values[] = {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan};
  for (int i = 0; i < 3; ++i) {
    const auto p = parse_overflow_policy(policies[i]);
    REQUIRE(p.has_value());
    CHECK(*p == policy_values[i]);
    CHECK(to_string(*p) == policies[i]);
    ++n;
  }
  CHECK(n == 11);

  for (std::string_view bad : {"", "RNE", "nearest", "sr_exact", "rne "}) {
    CAPTURE(bad);
    const auto m = parse_round_mode(bad);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.message() == "unknown rounding mode '" + std::string(bad) + "': valid rne|rna|rz|ru|rd|rto|sr|sr-exact");
    ++n;
  }
  for (std::string_view bad : {"", "clip", "SATURATE", "inf"}) {
    CAPTURE(bad);
    const auto p = parse_overflow_policy(bad);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.message() == "unknown overflow policy '" + std::string(bad) + "': valid ieee|saturate|nan");
    ++n;
  }
  CHECK(n == 20);
}

TEST_CASE("check(format, rounding): sr_bits outside 1..32 and policy nan without a NaN are rejected") {
  int n = 0;
  for (int bits : {0, -1, 33, 64}) {
    const auto msg = check(formats::bf16, rounding{round_mode::stochastic, overflow_policy::ieee, bits});
    REQUIRE(msg.has_value());
    CHECK(*msg == "stochastic-rounding bits " + std::to_string(bits) + " out of range: valid 1..32");
    // sr_bits only matters for round_mode::stochastic.
    CHECK_FALSE(check(formats::bf16, rounding{round_mode::stochastic_exact, overflow_policy::ieee, bits}).has_value());
    CHECK_FALSE(check(formats::bf16, rounding{round_mode::nearest_even, overflow_policy::ieee, bits}).has_value());
    ++n;
  }
  for (int bits : {1, 16, 32}) {
    CHECK_FALSE(check(formats::bf16, rounding{round_mode::stochastic, overflow_policy::ieee, bits}).has_value());
    ++n;
  }
  for (const format& f : {formats::e2m3fn, formats::e3m2fn, formats::e2m1fn}) {
    const auto msg = check(f, rounding{round_mode::nearest_even, overflow_policy::nan});
    REQUIRE(msg.has_value());
    CHECK(*msg == "overflow policy nan needs a format with a NaN; " + to_string(f) +
                      " has none (use ieee or saturate)");
    CHECK_FALSE(check(f, rounding{round_mode::nearest_even, overflow_policy::saturate}).has_value());
    ++n;
  }
  for (const format& f : {formats::e4m3fn, formats::e4m3fnuz, formats::e8m0fnu, formats::fp16}) {
    CHECK_FALSE(check(f, rounding{round_mode::nearest_even, overflow_policy::nan}).has_value());
    ++n;
  }
  CHECK(n == 14);
}

TEST_CASE("flags_to_string: names in IEEE order, '-' for none") {
  CHECK(flags_to_string(0) == "-");
  CHECK(flags_to_string(flag::inexact) == "inexact");
  CHECK(flags_to_string(flag::underflow | flag::inexact) == "underflow,inexact");
  CHECK(flags_to_string(flag::invalid | flag::divide_by_zero | flag::overflow | flag::underflow | flag::inexact) ==
        "invalid,divide-by-zero,overflow,underflow,inexact");
}
