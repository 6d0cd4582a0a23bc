// Compile-time evaluation of the core on known vectors (house style 6).
//
// Nothing here runs: if this file compiles, the rounding core, the exact operations, decoding,
// comparison and Philox are constant expressions, and they give the published answers below.
// Every expected value comes from a source outside fpemu: ml_dtypes (float8_*, float6_*,
// float4_*, float8_e8m0fnu, bfloat16), numpy's IEEE binary16, the host's binary32, the
// Random123 known-answer file, or a hand derivation written next to it.
#include "fpemu/compare.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/format.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_core.hpp"
#include "fpemu/value.hpp"

namespace fpemu {
namespace {

namespace f = formats;
constexpr rounding rne{};
constexpr rounding rz{round_mode::toward_zero};
constexpr rounding ru{round_mode::toward_positive};
constexpr rounding rd{round_mode::toward_negative};
constexpr rounding rna{round_mode::nearest_away};
constexpr rounding rto{round_mode::to_odd};
constexpr rounding sat{round_mode::nearest_even, overflow_policy::saturate};
constexpr std::uint8_t inexact = flag::inexact;
constexpr std::uint8_t under = flag::underflow | flag::inexact;
constexpr std::uint8_t over = flag::overflow | flag::inexact;

// ---- Derived quantities (OCP OFP8 1.0, OCP MX 1.0, IEEE 754) ----
static_assert(max_finite(f::e4m3fn) == 448.0);     // OFP8 table 1: S.1111.110 = 1.75 * 2^8
static_assert(max_finite(f::e5m2) == 57344.0);     // OFP8 table 1: 1.75 * 2^15
static_assert(max_finite(f::e4m3fnuz) == 240.0);   // ml_dtypes finfo(float8_e4m3fnuz).max
static_assert(max_finite(f::fp16) == 65504.0);     // IEEE binary16: (2 - 2^-10) * 2^15
static_assert(max_finite(f::e2m1fn) == 6.0);       // MX 1.0 table: FP4 E2M1 max 6.0
static_assert(max_finite(f::e8m0fnu) == pow2(127));  // MX 1.0: E8M0 max 2^127
static_assert(min_positive(f::e4m3fn) == pow2(-9));  // OFP8: smallest subnormal 2^-9
static_assert(min_positive(f::fp16) == pow2(-24));   // IEEE binary16: 2^-24
static_assert(min_positive(f::e8m0fnu) == pow2(-127));  // MX 1.0: E8M0 min 2^-127 (code 0)

// ---- Rounding from double, nearest-even, overflow ieee (ml_dtypes / numpy answers) ----
static_assert(from(f::bf16, 0.1).code == 0x3dcd);        // bfloat16(0.1)
static_assert(from(f::bf16, 0.1).flags == inexact);
static_assert(from(f::bf16, 0.1).direction == 1);        // 0x3dcd = 0.10009765625 > 0.1
static_assert(from(f::e4m3fn, 448.0).code == 0x7e);      // max finite, exact
static_assert(from(f::e4m3fn, 448.0).flags == 0);
static_assert(from(f::e4m3fn, 464.0).code == 0x7e);      // tie between 448 (even) and 480: 448
static_assert(from(f::e4m3fn, 465.0).code == 0x7f);      // past the tie: 480 overflows, NaN
static_assert(from(f::e4m3fn, 465.0).flags == over);
static_assert(from(f::e4m3fn, -465.0).code == 0xff);     // negative NaN S.1111.111
static_assert(from(f::e4m3fn, 1000.0, sat).code == 0x7e);  // saturate: largest finite
static_assert(from(f::e4m3fn, -0.0).code == 0x80);       // e4m3fn keeps -0
static_assert(from(f::e4m3fn, pow2(-9)).code == 0x01);   // smallest subnormal, exact
static_assert(from(f::e4m3fn, pow2(-10)).code == 0x00);  // half of it: tie to even zero
static_assert(from(f::e4m3fn, pow2(-10)).flags == under);
static_assert(from(f::e4m3fn, 1.5 * pow2(-10)).code == 0x01);
static_assert(from(f::e4m3fnuz, 240.0).code == 0x7f);    // ml_dtypes: fnuz max 240 = 0x7f
static_assert(from(f::e4m3fnuz, 248.0).code == 0x80);    // tie rounds up to 256: NaN is 0x80
static_assert(from(f::e4m3fnuz, -0.0).code == 0x00);     // no -0 in fnuz
static_assert(from(f::e5m2, 57344.0).code == 0x7b);
static_assert(from(f::e5m2, 61440.0).code == 0x7c);      // tie, odd max: rounds to 2^16, inf
static_assert(from(f::e5m2fnuz, 57344.0).code == 0x7f);
static_assert(from(f::e5m2fnuz, 61440.0).code == 0x80);  // fnuz: overflow is NaN 0x80
static_assert(from(f::fp16, 65504.0).code == 0x7bff);
static_assert(from(f::fp16, 65520.0).code == 0x7c00);    // tie between 65504 (odd) and 2^16: inf
static_assert(from(f::fp16, 65520.0).flags == over);
static_assert(from(f::fp16, 65519.99).code == 0x7bff);
static_assert(from(f::e8m0fnu, 1.0).code == 0x7f);       // MX 1.0: bias 127
static_assert(from(f::e8m0fnu, pow2(-127)).code == 0x00);
static_assert(from(f::e8m0fnu, pow2(127)).code == 0xfe);
static_assert(from(f::e8m0fnu, 3.0).code == 0x81);       // ml_dtypes: 3 -> 4 (tie, odd 2^1)
static_assert(from(f::e8m0fnu, 0.0).code == 0xff);       // no zero: NaN, invalid
static_assert(from(f::e8m0fnu, 0.0).flags == flag::invalid);
static_assert(from(f::e2m3fn, 7.5).code == 0x1f);        // MX FP6 E2M3 max
static_assert(from(f::e2m3fn, 7.0).code == 0x1e);
static_assert(from(f::e3m2fn, 28.0).code == 0x1f);       // MX FP6 E3M2 max
static_assert(from(f::e3m2fn, 7.0).code == 0x17);
static_assert(from(f::e2m1fn, 6.0).code == 0x07);        // MX FP4 E2M1 max
static_assert(from(f::e2m1fn, 100.0).code == 0x07);      // no inf, no NaN: largest finite
static_assert(from(f::e2m1fn, 100.0).flags == over);
static_assert(from(f::fp32, 0.1).code == 0x3dcccccd);    // (float)0.1 on the host
static_assert(from(f::e4m3fn, 3.0 / 7.0).code == 0x2e);  // ml_dtypes float8_e4m3fn(3/7)
static_assert(from(f::e5m2, 1.7320508075688772).code == 0x3f);  // ml_dtypes float8_e5m2(sqrt 3)
static_assert(from(f::fp32, 1.0f).code == 0x3f800000);   // float input path
static_assert(from(f::fp16, std::int64_t{-2048}).code == 0xe800);   // integer input: -2^11
static_assert(from(f::fp16, std::uint64_t{65535}).code == 0x7c00);  // rounds to 2^16: inf

// ---- Directed modes, round-to-odd, ties-away (hand derivations) ----
// 1.99 = 1.1111110|101...b: bf16 keeps 7 fraction bits; RZ truncates, RNE rounds up.
static_assert(from(f::bf16, 1.99, rz).code == 0x3ffe);
static_assert(from(f::bf16, -1.99, rz).code == 0xbffe);
static_assert(from(f::bf16, 1.99).code == 0x3fff);
static_assert(from(f::bf16, 1.99, rz).direction == -1);
// RZ and RD never overflow to infinity: fp16 70000 gives 65504 with overflow | inexact.
static_assert(from(f::fp16, 70000.0, rz).code == 0x7bff);
static_assert(from(f::fp16, 70000.0, rz).flags == over);
static_assert(from(f::fp16, -70000.0, rz).code == 0xfbff);
static_assert(from(f::fp16, 70000.0, rd).code == 0x7bff);
static_assert(from(f::fp16, -70000.0, rd).code == 0xfc00);  // RD of a large negative: -inf
// 1 + 2^-20 lies just above 1 in fp16 (ulp 2^-10).
static_assert(from(f::fp16, 1.0 + pow2(-20), ru).code == 0x3c01);
static_assert(from(f::fp16, 1.0 + pow2(-20), rd).code == 0x3c00);
static_assert(from(f::fp16, -1.0 - pow2(-20), ru).code == 0xbc00);
static_assert(from(f::fp16, -1.0 - pow2(-20), rd).code == 0xbc01);
// 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10: RNE keeps even 1, RNA goes away.
static_assert(from(f::fp16, 1.0 + pow2(-11)).code == 0x3c00);
static_assert(from(f::fp16, 1.0 + pow2(-11), rna).code == 0x3c01);
// Round to odd: truncate, then set the last bit if inexact. bf16 1 + 2^-9 -> 1 + 2^-7;
// 1 + 2^-6 + 2^-9 truncates to the even 1 + 2^-6 and becomes 1 + 2^-6 + 2^-7; exact values
// are left alone.
static_assert(from(f::bf16, 1.0 + pow2(-9), rto).code == 0x3f81);
static_assert(from(f::bf16, 1.0 + pow2(-6) + pow2(-9), rto).code == 0x3f83);
static_assert(from(f::bf16, 1.0 + pow2(-6), rto).code == 0x3f82);
static_assert(from(f::bf16, 1.0 + pow2(-6), rto).flags == 0);
// With a 1-bit significand (e8m0fnu) the last bit is the hidden bit: round to odd is toward zero.
static_assert(from(f::e8m0fnu, 3.0, rto).code == 0x80);
static_assert(from(f::e8m0fnu, 3.0, rz).code == 0x80);
// Round to odd never overflows to infinity either.
static_assert(from(f::fp16, 1e6, rto).code == 0x7bff);

// ---- Conversions between formats ----
// fp32 -> bf16: 0x3f808000 = 1 + 2^-8 is a tie (even: 1); 0x3f818000 = 1 + 3 * 2^-8 ties to 0x3f82.
static_assert(convert(f::bf16, f::fp32, 0x3f808000).code == 0x3f80);
static_assert(convert(f::bf16, f::fp32, 0x3f818000).code == 0x3f82);
static_assert(convert(f::bf16, f::fp32, 0x7f7fffff).code == 0x7f80);  // FLT_MAX rounds to inf
static_assert(convert(f::bf16, f::fp32, 0x7fc00000).code == 0x7fc0);  // quiet NaN stays quiet
static_assert(convert(f::e4m3fn, f::e5m2, 0x7c).code == 0x7f);        // inf -> NaN (ml_dtypes)
static_assert(convert(f::e4m3fn, f::e5m2, 0x7c).flags == flag::invalid);  // core convention
static_assert(to_double(f::e4m3fn, 0x7e) == 448.0);
static_assert(to_double(f::e4m3fnuz, 0x01) == pow2(-10));              // bias 8: subnormal 2^-3 * 2^-7
static_assert(to_double(f::e8m0fnu, 0x7f) == 1.0);

// ---- Arithmetic on codes ----
// fp16: 1 + 2^-11 ties to even 1; 1 + 1.5 * 2^-10 (0x1600) ties to even 1 + 2^-9 (0x3c02).
static_assert(add(f::fp16, 0x3c00, 0x1000, rne).code == 0x3c00);
static_assert(add(f::fp16, 0x3c00, 0x1000, rne).flags == inexact);
static_assert(add(f::fp16, 0x3c00, 0x1600, rne).code == 0x3c02);
static_assert(add(f::fp16, 0x3c00, 0xbc00, rne).code == 0x0000);  // x - x = +0 ...
static_assert(add(f::fp16, 0x3c00, 0xbc00, rd).code == 0x8000);   // ... -0 when rounding down
static_assert(add(f::fp16, 0x7c00, 0xfc00, rne).flags == flag::invalid);  // inf - inf
static_assert(sub(f::bf16, 0x4040, 0x3f80, rne).code == 0x4000);  // 3 - 1 = 2
static_assert(add(f::bf16, 0x3f80, 0x3f80, rne).code == 0x4000);  // 1 + 1 = 2
static_assert(mul(f::e4m3fn, 0x40, 0x44, rne).code == 0x4c);      // 2 * 3 = 6, exact
static_assert(mul(f::e4m3fn, 0x7e, 0x40, rne).code == 0x7f);      // 448 * 2 overflows: NaN
static_assert(mul(f::e4m3fn, 0x7e, 0x40, sat).code == 0x7e);
static_assert(mul(f::e2m1fn, 0x06, 0x06, rne).code == 0x07);      // 4 * 4: saturates at 6
static_assert(div(f::bf16, 0x3f80, 0x4040, rne).code == 0x3eab);  // 1 / 3 (ml_dtypes)
static_assert(div(f::fp16, 0x3c00, 0x4200, rne).code == 0x3555);  // 1 / 3 (numpy float16)
static_assert(div(f::fp32, 0x3f800000, 0x40400000, rne).code == 0x3eaaaaab);  // 1.0f / 3.0f
static_assert(div(f::fp16, 0x3c00, 0x0000, rne).code == 0x7c00);  // 1 / 0 = inf ...
static_assert(div(f::fp16, 0x3c00, 0x0000, rne).flags == flag::divide_by_zero);  // ... exactly
static_assert(sqrt(f::fp16, 0x4000, rne).code == 0x3da8);        // sqrt 2 (numpy float16)
static_assert(sqrt(f::bf16, 0x4000, rne).code == 0x3fb5);        // sqrt 2 (ml_dtypes)
static_assert(sqrt(f::fp32, 0x40000000, rne).code == 0x3fb504f3);  // sqrtf(2)
static_assert(sqrt(f::fp32, 0x40800000, rne).flags == 0);        // sqrt 4 = 2, exact
static_assert(sqrt(f::fp16, 0xbc00, rne).flags == flag::invalid);  // sqrt(-1)
static_assert(sqrt(f::fp16, 0x8000, rne).code == 0x8000);        // sqrt(-0) = -0
// fma rounds once: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly, while the rounded product
// 1 + 2^-11 (the 2^-24 is a tie to even) would give 0.
static_assert(fma(f::fp32, 0x3f800800, 0x3f800800, 0xbf801000, rne).code == 0x33800000);
static_assert(mul(f::fp32, 0x3f800800, 0x3f800800, rne).code == 0x3f801000);

// ---- Comparison and stepping ----
static_assert(compare_quiet(f::fp16, 0x8000, 0x0000).order == ordering::equal);      // -0 == +0
static_assert(compare_quiet(f::fp16, 0x7e00, 0x7e00).order == ordering::unordered);  // NaN
static_assert(compare_quiet(f::fp16, 0x7d00, 0x3c00).flags == flag::invalid);        // sNaN
static_assert(compare_signaling(f::fp16, 0x7e00, 0x3c00).flags == flag::invalid);
static_assert(minimum(f::fp16, 0x0000, 0x8000).code == 0x8000);                      // -0 < +0
static_assert(next_up(f::bf16, 0x0000).code == 0x0001);
static_assert(next_up(f::bf16, 0x7f7f).code == 0x7f80);                              // max -> inf
static_assert(next_down(f::bf16, 0x0000).code == 0x8001);

// ---- fp<F> is a literal type: the operators are constant expressions too ----
static_assert((bf16_t(1.0) + bf16_t(1.0)).code() == 0x4000);
static_assert((e4m3fn_t(448.0) * e4m3fn_t(2.0)).code() == 0x7f);
static_assert(fp16_t(1.0) / fp16_t(3.0) == fp16_t::from_code(0x3555));
static_assert(fp16_t(-0.0) == fp16_t(0.0));
static_assert(sizeof(e4m3fn_t) == 1 && sizeof(bf16_t) == 2 && sizeof(tf32_t) == 4);

// ---- Philox-4x32-10: Random123 tests/kat_vectors, "philox4x32 10" lines ----
static_assert(philox4x32_10({0, 0, 0, 0}, {0, 0}) == philox_counter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
static_assert(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
              philox_counter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
static_assert(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
              philox_counter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
// random_bits packs the first two output words: (seed 0, stream 0, index 0) is the zero vector.
static_assert(random_bits(0, 0, 0) == 0xe169c58d6627e8d5ull);
// The array keystream's layout (random.hpp): block 0's words are 6627e8d5 e169c58d bc57ac4c
// 9b00dbd8; element 16 reads piece 1 of block 0, element 1 piece 0 of block 1. Width 64 takes its
// high word from width 32 and its low word from the block whose counter word 3 is 1 (under seed 0:
// 2dce73e5 1348e23f fcf8e0ec a287aadb).
static_assert(philox_block(0, 0, 0, 1) == philox_counter{0x2dce73e5, 0x1348e23f, 0xfcf8e0ec, 0xa287aadb});
static_assert(keystream_bits(0, 0, 0, 64) == (std::uint64_t{0x6627e8d5} << 32 | 0x2dce73e5));
static_assert(keystream_bits(0, 0, 48, 64) == (std::uint64_t{0x9b00dbd8} << 32 | 0xa287aadb));
static_assert(keystream_bits(0, 0, 81, 64) == (keystream_bits(0, 0, 81, 32) << 32 | philox_block(0, 0, 17, 1)[1]));
static_assert(keystream_bits(0, 0, 48, 32) == 0x9b00dbd8 && keystream_bits(0, 0, 16, 32) == 0xe169c58d);
static_assert(keystream_bits(0, 0, 16, 16) == 0x6627 && keystream_bits(0, 0, 32, 16) == 0xc58d);
static_assert(keystream_bits(0, 0, 112, 16) == 0x9b00 && keystream_bits(0, 0, 128, 16) == (random_bits(0, 0, 16) & 0xffff));
static_assert(keystream_bits(0, 0, 1, 16) == (random_bits(0, 0, 1) & 0xffff));
static_assert(keystream_bits(0, 0, 81, 32) == (random_bits(0, 0, 17) >> 32));

}  // namespace
}  // namespace fpemu
