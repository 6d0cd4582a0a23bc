// The rounding core on hand-checked vectors: every mode, overflow policy and non-finite
// encoding at the boundaries where formats differ (largest finite, ties, the subnormal/normal
// edge, flushing, no-zero and unsigned formats), with flags and error direction. The expected
// codes are facts about the formats (OCP FP8/MX specs, IEEE 754, ml_dtypes' conversions), not
// outputs of this code; the MPFR suites check the core at scale.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "fpemu/convert.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;

namespace {

constexpr std::uint8_t kInexact = flag::inexact;
constexpr std::uint8_t kUnder = flag::underflow | flag::inexact;
constexpr std::uint8_t kOver = flag::overflow | flag::inexact;
constexpr std::uint8_t kInvalid = flag::invalid;

struct vector_case {
  format f;
  double value;
  round_mode mode;
  overflow_policy policy;
  std::uint32_t code;
  std::uint8_t flags;
  int direction;
};

void check_cases(std::initializer_list<vector_case> cases) {
  int n = 0;
  for (const vector_case& c : cases) {
    const rounded r = from(c.f, c.value, rounding{c.mode, c.policy});
    INFO(to_string(c.f), " ", c.value, " ", to_string(c.mode), " ", to_string(c.policy));
    CHECK(r.code == c.code);
    CHECK(flags_to_string(r.flags) == flags_to_string(c.flags));
    CHECK(int(r.direction) == c.direction);
    ++n;
  }
  CHECK(n == static_cast<int>(cases.size()));
}

constexpr auto rne = round_mode::nearest_even, rna = round_mode::nearest_away, rz = round_mode::toward_zero,
               ru = round_mode::toward_positive, rd = round_mode::toward_negative, rto = round_mode::to_odd;
constexpr auto ieee = overflow_policy::ieee, sat = overflow_policy::saturate, nanp = overflow_policy::nan;

}  // namespace

TEST_CASE("e4m3fn: largest finite 448, the 464 tie, overflow in every policy") {
  const format f = formats::e4m3fn;
  check_cases({
      {f, 448, rne, ieee, 0x7e, 0, 0},
      {f, 464, rne, ieee, 0x7e, kInexact, -1},  // tie: 448 = 1.110b x 2^8 is even
      {f, 464, rna, ieee, 0x7f, kOver, 0},      // away: 480 exceeds 448, no infinity -> NaN
      {f, 464, rna, sat, 0x7e, kOver, -1},
      {f, 465, rne, ieee, 0x7f, kOver, 0},
      {f, 465, rne, nanp, 0x7f, kOver, 0},
      {f, -465, rne, ieee, 0xff, kOver, 0},
      {f, 1000, rz, ieee, 0x7e, kOver, -1},  // toward zero: largest finite, overflow still raised
      {f, -1000, ru, ieee, 0xfe, kOver, 1},
      {f, -1000, rd, ieee, 0xff, kOver, 0},
      {f, 1000, ru, sat, 0x7e, kOver, -1},
      {f, 1000, rd, nanp, 0x7f, kOver, 0},
      {f, 500, rto, ieee, 0x7e, kOver, -1},  // round-to-odd never leaves the finite range
      {f, INFINITY, rne, ieee, 0x7f, kInvalid, 0},
      {f, INFINITY, rne, sat, 0x7e, kInvalid, -1},  // PTX .satfinite: inf -> largest finite
      {f, -INFINITY, rz, ieee, 0xff, kInvalid, 0},
  });
}

TEST_CASE("e4m3fn: subnormals, the 2^-10 tie, and tininess detected after rounding") {
  const format f = formats::e4m3fn;
  const double sub = std::ldexp(1.0, -9);  // smallest subnormal
  check_cases({
      {f, sub, rne, ieee, 0x01, 0, 0},
      {f, sub / 2, rne, ieee, 0x00, kUnder, -1},  // tie between 0 and 2^-9: 0 is even
      {f, sub / 2, rna, ieee, 0x01, kUnder, 1},
      {f, sub / 2, rz, ieee, 0x00, kUnder, -1},
      {f, sub / 2, ru, ieee, 0x01, kUnder, 1},
      {f, -sub / 2, ru, ieee, 0x80, kUnder, 1},  // -0
      {f, -sub / 2, rd, ieee, 0x81, kUnder, -1},
      {f, sub / 2, rto, ieee, 0x01, kUnder, 1},
      {f, 1.5 * sub, rne, ieee, 0x02, kUnder, 1},
      {f, 1.5 * sub, rto, ieee, 0x01, kUnder, -1},  // 1 is already odd
      // 7.75 * 2^-9 rounds to 2^-6 at 4 significant bits: not tiny after rounding, so no
      // underflow although the exact value is below the smallest normal.
      {f, 7.75 * sub, rne, ieee, 0x08, kInexact, 1},
      // 7.5 * 2^-9 = 1.111b x 2^-7 is exact at 4 bits and below 2^-6: tiny, and inexact.
      {f, 7.5 * sub, rne, ieee, 0x08, kUnder, 1},
      {f, 7.5 * sub, rz, ieee, 0x07, kUnder, -1},
  });
}

TEST_CASE("fnuz formats: one NaN 0x80, no negative zero, bias 8 and 16") {
  const format f = formats::e4m3fnuz;
  check_cases({
      {f, 240, rne, ieee, 0x7f, 0, 0},
      {f, 247, rne, ieee, 0x7f, kInexact, -1},
      {f, 248, rne, ieee, 0x80, kOver, 0},  // tie to 256 (even) overflows: NaN
      {f, 248, rne, sat, 0x7f, kOver, -1},
      {f, -0.0, rne, ieee, 0x00, 0, 0},
      {f, -1e-30, rne, ieee, 0x00, kUnder, 1},
      {f, NAN, rne, ieee, 0x80, 0, 0},
      {f, -INFINITY, rne, ieee, 0x80, kInvalid, 0},
      {f, 1.0, rne, ieee, 0x40, 0, 0},  // bias 8: 1.0 has exponent field 8
  });
  check_cases({
      {formats::e5m2fnuz, 1.0, rne, ieee, 0x40, 0, 0},  // bias 16
      {formats::e5m2fnuz, 57344, rne, ieee, 0x7f, 0, 0},
      {formats::e5m2fnuz, 61440, rne, ieee, 0x80, kOver, 0},
  });
}

TEST_CASE("e5m2 and fp16: IEEE overflow to infinity at the half-ulp threshold") {
  check_cases({
      {formats::e5m2, 57344, rne, ieee, 0x7b, 0, 0},
      {formats::e5m2, 61440, rne, ieee, 0x7c, kOver, 1},  // tie above the odd 1.11b x 2^15
      {formats::e5m2, 61439, rne, ieee, 0x7b, kInexact, -1},
      {formats::e5m2, 61440, rne, nanp, 0x7e, kOver, 0},
      {formats::fp16, 65504, rne, ieee, 0x7bff, 0, 0},
      {formats::fp16, 65519, rne, ieee, 0x7bff, kInexact, -1},
      {formats::fp16, 65520, rne, ieee, 0x7c00, kOver, 1},
      {formats::fp16, 65520, rz, ieee, 0x7bff, kInexact, -1},  // 65504 at 11 bits: no overflow
      {formats::fp16, -65520, rd, ieee, 0xfc00, kOver, -1},
      {formats::fp16, -65520, rd, sat, 0xfbff, kOver, 1},
      // saturate clamps infinite inputs of formats with infinity too (PTX .satfinite)
      {formats::e5m2, INFINITY, rne, sat, 0x7b, kInvalid, -1},
      {formats::fp16, -INFINITY, rz, sat, 0xfbff, kInvalid, 1},
      {formats::e5m2, INFINITY, rne, nanp, 0x7c, 0, 0},
      {formats::bf16, 0.1, rne, ieee, 0x3dcd, kInexact, 1},
      {formats::bf16, 0.1, rz, ieee, 0x3dcc, kInexact, -1},
  });
}

TEST_CASE("MX element types: finite only, saturating, NaN gives +0 with invalid") {
  const format f = formats::e2m1fn;  // values 0 0.5 1 1.5 2 3 4 6
  check_cases({
      {f, 6, rne, ieee, 0x7, 0, 0},
      {f, 5, rne, ieee, 0x6, kInexact, -1},  // tie between 4 (1.0b x 2^2, even) and 6
      {f, 5, rna, ieee, 0x7, kInexact, 1},
      {f, 7, rne, ieee, 0x7, kOver, -1},     // rounds to 8 at 2 bits: overflow, saturated
      {f, 100, ru, ieee, 0x7, kOver, -1},
      {f, -100, rne, sat, 0xf, kOver, 1},
      {f, 0.25, rne, ieee, 0x0, kUnder, -1},
      {f, 0.25, rna, ieee, 0x1, kUnder, 1},
      {f, INFINITY, rne, ieee, 0x7, kInvalid, -1},
      {f, NAN, rne, ieee, 0x0, kInvalid, 0},
  });
  check_cases({
      {formats::e2m3fn, 7.5, rne, ieee, 0x1f, 0, 0},
      {formats::e3m2fn, 28, rne, ieee, 0x1f, 0, 0},
      {formats::e3m2fn, 30, rne, ieee, 0x1f, kOver, -1},  // tie to 32 (even) overflows
  });
}

TEST_CASE("e8m0fnu: unsigned powers of two, no zero, round-to-odd equals toward zero") {
  const format f = formats::e8m0fnu;
  check_cases({
      {f, 1.0, rne, ieee, 0x7f, 0, 0},
      {f, 0.75, rne, ieee, 0x7f, kInexact, 1},  // 1.1b x 2^-1: tie, 1.0 x 2^0 is even
      {f, 0.75, rz, ieee, 0x7e, kInexact, -1},
      {f, 0.75, rto, ieee, 0x7e, kInexact, -1},
      {f, 3.0, rne, ieee, 0x81, kInexact, 1},
      {f, std::ldexp(1.0, 127), rne, ieee, 0xfe, 0, 0},
      {f, std::ldexp(1.5, 127), rne, ieee, 0xff, kOver, 0},
      {f, std::ldexp(1.0, -130), rne, ieee, 0x00, kUnder, 1},  // no zero: the smallest value
      {f, std::ldexp(1.0, -130), rz, ieee, 0x00, kUnder, 1},
      {f, 0.0, rne, ieee, 0xff, kInvalid, 0},
      {f, -1.0, rne, ieee, 0xff, kInvalid, 0},
  });
}

TEST_CASE("formats without subnormals round tiny values to {0, smallest normal}") {
  const format f = *parse_format("e5m10:nosub");  // fp16 without subnormals
  const double min_norm = std::ldexp(1.0, -14);
  check_cases({
      {f, min_norm, rne, ieee, 0x0400, 0, 0},
      {f, min_norm * 0.75, rne, ieee, 0x0400, kUnder, 1},
      {f, min_norm * 0.5, rne, ieee, 0x0000, kUnder, -1},  // the tie goes to zero (even)
      {f, min_norm * 0.5, rna, ieee, 0x0400, kUnder, 1},
      {f, min_norm * 0.25, rz, ieee, 0x0000, kUnder, -1},
      {f, min_norm * 0.25, ru, ieee, 0x0400, kUnder, 1},
      {f, min_norm * 0.25, rto, ieee, 0x0400, kUnder, 1},
      {f, -min_norm * 0.25, rto, ieee, 0x8400, kUnder, -1},
      {f, min_norm * (1 - 1.0 / 4096), rne, ieee, 0x0400, kInexact, 1},  // not tiny after rounding
  });
  // Flushed codes (zero exponent field, non-zero fraction) read as zero.
  CHECK(decode(f, 0x0001).cls == value_class::zero);
}

TEST_CASE("stochastic rounding with k bits adds k random bits below the last place") {
  const format f = formats::bf16;
  const double one = 1.0, ulp = std::ldexp(1.0, -7);
  const unpacked half = unpack(one + ulp / 2);  // fractional distance exactly 1/2
  const unpacked tenth = unpack(one + ulp * 0.3);  // 0.3 = 0.0100110011...b
  for (int k = 1; k <= 32; ++k) {
    const rounding r{round_mode::stochastic, ieee, k};
    const std::uint64_t top = k == 64 ? 0 : (std::uint64_t{1} << k) - 1;
    // Distance 1/2: the carry out of k bits happens exactly when the top random bit is set.
    CHECK(round(f, half, r, top >> 1).code == 0x3f80);
    CHECK(round(f, half, r, (top >> 1) + 1).code == 0x3f81);
    // Bits above the low k are ignored.
    CHECK(round(f, half, r, ~top).code == 0x3f80);
    // floor(0.3 * 2^k) values of r round up: exactly those r >= 2^k - floor(0.3 * 2^k).
    const auto up_count = static_cast<std::uint64_t>(std::floor(0.3 * std::ldexp(1.0, k)));
    CHECK(round(f, tenth, r, top - up_count).code == 0x3f80);
    if (up_count > 0) CHECK(round(f, tenth, r, top - up_count + 1).code == 0x3f81);
  }
  const rounding exact{round_mode::stochastic_exact};
  CHECK(round(f, half, exact, (std::uint64_t{1} << 63) - 1).code == 0x3f80);
  CHECK(round(f, half, exact, std::uint64_t{1} << 63).code == 0x3f81);
  // Representable values never move, whatever the random bits.
  CHECK(round(f, unpack(one), rounding{round_mode::stochastic, ieee, 8}, ~0ull).flags == 0);
  CHECK(round(f, unpack(one), exact, ~0ull).code == 0x3f80);
}

TEST_CASE("stochastic rounding is sign-symmetric and reproducible from (seed, stream, index)") {
  const format f = formats::e4m3fn;
  const unpacked x = unpack(0.1), minus_x = unpack(-0.1);
  const rounding r{round_mode::stochastic, ieee, 16};
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t bits = random_bits(42, 7, i);
    CHECK(bits == random_bits(42, 7, i));
    CHECK((round(f, x, r, bits).code | 0x80) == round(f, minus_x, r, bits).code);
  }
}

TEST_CASE("Philox-4x32-10 matches the Random123 known-answer vectors") {
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == philox_counter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}) ==
        philox_counter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        philox_counter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("conversions between formats round once, from the exact source value") {
  // fp16 1.0625 + 2^-10 lies just above the e4m3fn tie 1.0625 between 1.0 and 1.125. Rounded
  // directly it goes up; through e5m4 (quantum 2^-4 at 1) it first lands on the tie, which
  // then goes to even.
  const format e5m4 = *parse_format("e5m4");
  const std::uint32_t fp16_code = from(formats::fp16, 1.0625 + std::ldexp(1.0, -10)).code;
  const rounded direct = convert(formats::e4m3fn, formats::fp16, fp16_code);
  CHECK(to_double(formats::e4m3fn, direct.code) == 1.125);
  const std::uint32_t via_e5m4 = convert(e5m4, formats::fp16, fp16_code).code;
  CHECK(to_double(e5m4, via_e5m4) == 1.0625);
  CHECK(to_double(formats::e4m3fn, convert(formats::e4m3fn, e5m4, via_e5m4).code) == 1.0);
  // Integers.
  CHECK(from(formats::fp16, std::int64_t{-2049}).code == from(formats::fp16, -2048.0).code);
  CHECK(from(formats::fp32, std::uint64_t{~0ull}).code == 0x5f800000u);
  CHECK(to_float(formats::fp32, 0x3f800001u) == std::nextafter(1.0f, 2.0f));
}
