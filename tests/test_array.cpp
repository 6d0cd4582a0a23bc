// array.hpp: every span function equals the scalar core call on each element, for several
// formats, modes and overflow policies, stochastic rounding included; stochastic results do
// not depend on how an array is split (first_index); every size mismatch and every invalid
// format or rounding is a returned error with its exact message, and nothing is written.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;

namespace {

const format kFormats[] = {formats::e4m3fn, formats::e5m2,  formats::e4m3fnuz, formats::bf16,    formats::fp16,
                           formats::fp32,   formats::e8m13, formats::e2m1fn,   formats::e8m0fnu};

// Every mode (two widths of sr) under every policy the format allows.
std::vector<rounding> roundings_for(const format& f) {
  std::vector<rounding> rs;
  const round_mode modes[] = {round_mode::nearest_even,    round_mode::nearest_away,    round_mode::toward_zero,
                              round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd,
                              round_mode::stochastic,      round_mode::stochastic_exact};
  for (const overflow_policy p : {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan}) {
    if (p == overflow_policy::nan && !has_nan(f)) continue;
    for (const round_mode m : modes) {
      rs.push_back({m, p, 16});
      if (m == round_mode::stochastic) rs.push_back({m, p, 3});
    }
  }
  return rs;
}

bool stochastic(const rounding& r) {
  return r.mode == round_mode::stochastic || r.mode == round_mode::stochastic_exact;
}

std::uint64_t random_for(const rounding& r, const sr_stream& sr, std::size_t i) {
  return stochastic(r) ? keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r)) : 0;
}

// Doubles across every format's range: specials, zeros, tiny and huge values, midpoints.
std::vector<double> sample_doubles(std::mt19937_64& rng, int n) {
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 448.0, 464.0, 465.0, 65504.0, 65520.0, 1e-45, -1e300, 6.0, 7.0,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min()};
  while (static_cast<int>(v.size()) < n) {
    const double m = static_cast<double>(rng() >> 11);
    const int e = static_cast<int>(rng() % 300) - 150 - 53;
    v.push_back(std::ldexp(m, e) * (rng() & 1 ? -1.0 : 1.0));
  }
  return v;
}

// Random codes of a format: a mix of all-bits-random and small-exponent ones.
std::vector<std::uint32_t> sample_codes(const format& f, std::mt19937_64& rng, int n) {
  std::vector<std::uint32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<std::uint32_t>(rng()) & code_mask(f));
  return v;
}

constexpr std::uint32_t kUnwritten = 0xdeadbeef;

}  // namespace

TEST_CASE("round_array (double and float) == from() per element, per-element flags and their union, 9 formats x all modes") {
  std::mt19937_64 rng(1);
  const std::vector<double> xs = sample_doubles(rng, 600);
  std::vector<float> xf;
  for (double x : xs) xf.push_back(static_cast<float>(x));
  std::uint64_t n = 0, configs = 0;
  for (const format& f : kFormats) {
    for (const rounding& r : roundings_for(f)) {
      CAPTURE(to_string(f));
      CAPTURE(to_string(r.mode));
      CAPTURE(to_string(r.overflow));
      const sr_stream sr{0x1234 + configs, static_cast<std::uint32_t>(configs), 1000 * configs};
      std::vector<std::uint32_t> out(xs.size(), kUnwritten), outf(xs.size(), kUnwritten);
      std::vector<std::uint8_t> flags(xs.size()), flagsf(xs.size());
      const auto all = round_array(f, xs, out, r, sr, flags);
      const auto allf = round_array(f, std::span<const float>(xf), outf, r, sr, flagsf);
      REQUIRE(all.has_value());
      REQUIRE(allf.has_value());
      std::uint8_t want_all = 0, want_allf = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const rounded e = from(f, xs[i], r, random_for(r, sr, i));
        const rounded ef = from(f, xf[i], r, random_for(r, sr, i));
        REQUIRE(out[i] == e.code);
        REQUIRE(flags[i] == e.flags);
        REQUIRE(outf[i] == ef.code);
        REQUIRE(flagsf[i] == ef.flags);
        want_all |= e.flags;
        want_allf |= ef.flags;
        ++n;
      }
      CHECK(*all == want_all);
      CHECK(*allf == want_allf);
      // Without a flags span the codes and the union are the same.
      std::vector<std::uint32_t> again(xs.size());
      CHECK(*round_array(f, xs, again, r, sr) == want_all);
      CHECK(again == out);
      ++configs;
    }
  }
  // 9 formats; 9 roundings per policy; e2m1fn has no `nan` policy.
  CHECK(configs == 9 * 9 * 3 - 9);
  CHECK(n == configs * 600);
}

TEST_CASE("convert_array and decode_array == convert()/to_double() per element") {
  std::mt19937_64 rng(2);
  std::uint64_t n = 0, configs = 0;
  const std::pair<format, format> pairs[] = {{formats::bf16, formats::fp32},    {formats::e4m3fn, formats::fp32},
                                             {formats::e5m2, formats::fp16},    {formats::e8m0fnu, formats::bf16},
                                             {formats::fp32, formats::e4m3fnuz}, {formats::e2m1fn, formats::e4m3fn}};
  for (const auto& [to, from_f] : pairs) {
    const std::vector<std::uint32_t> in = sample_codes(from_f, rng, 500);
    for (const rounding& r : roundings_for(to)) {
      const sr_stream sr{7, 3, 42};
      std::vector<std::uint32_t> out(in.size(), kUnwritten);
      std::vector<std::uint8_t> flags(in.size());
      const auto all = convert_array(to, from_f, in, out, r, sr, flags);
      REQUIRE(all.has_value());
      std::uint8_t want = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        const rounded e = convert(to, from_f, in[i], r, random_for(r, sr, i));
        REQUIRE(out[i] == e.code);
        REQUIRE(flags[i] == e.flags);
        want |= e.flags;
        ++n;
      }
      CHECK(*all == want);
      ++configs;
    }
  }
  CHECK(configs == 5 * 27 + 18);  // e2m1fn (no NaN): 18 roundings
  CHECK(n == configs * 500);

  int decoded = 0;
  for (const format& f : kFormats) {
    const std::vector<std::uint32_t> codes = sample_codes(f, rng, 1000);
    std::vector<double> out(codes.size());
    const auto r = decode_array(f, codes, out);
    REQUIRE(r.has_value());
    CHECK(*r == 0);
    for (std::size_t i = 0; i < codes.size(); ++i) {
      const double want = to_double(f, codes[i]);
      REQUIRE((std::isnan(want) ? std::isnan(out[i])
                                : std::bit_cast<std::uint64_t>(out[i]) == std::bit_cast<std::uint64_t>(want)));
      ++decoded;
    }
  }
  CHECK(decoded == 9 * 1000);
}

TEST_CASE("apply (add, sub, mul, div), apply_fma and apply_sqrt == the scalar ops per element, 9 formats x all modes") {
  std::mt19937_64 rng(3);
  std::uint64_t n = 0, configs = 0;
  const int len = 300;
  for (const format& f : kFormats) {
    const auto a = sample_codes(f, rng, len), b = sample_codes(f, rng, len), c = sample_codes(f, rng, len);
    for (const rounding& r : roundings_for(f)) {
      CAPTURE(to_string(f));
      CAPTURE(to_string(r.mode));
      const sr_stream sr{99, 1, 5};
      std::vector<std::uint32_t> out(len);
      std::vector<std::uint8_t> flags(len);
      for (const array_op op : {array_op::add, array_op::sub, array_op::mul, array_op::div}) {
        const auto all = apply(op, f, a, b, out, r, sr, flags);
        REQUIRE(all.has_value());
        std::uint8_t want = 0;
        for (int i = 0; i < len; ++i) {
          const std::uint64_t rnd = random_for(r, sr, i);
          const rounded e = op == array_op::add   ? add(f, a[i], b[i], r, rnd)
                            : op == array_op::sub ? sub(f, a[i], b[i], r, rnd)
                            : op == array_op::mul ? mul(f, a[i], b[i], r, rnd)
                                                  : div(f, a[i], b[i], r, rnd);
          REQUIRE(out[i] == e.code);
          REQUIRE(flags[i] == e.flags);
          want |= e.flags;
          ++n;
        }
        CHECK(*all == want);
      }
      {
        const auto all = apply_fma(f, a, b, c, out, r, sr, flags);
        REQUIRE(all.has_value());
        std::uint8_t want = 0;
        for (int i = 0; i < len; ++i) {
          const rounded e = fma(f, a[i], b[i], c[i], r, random_for(r, sr, i));
          REQUIRE(out[i] == e.code);
          REQUIRE(flags[i] == e.flags);
          want |= e.flags;
          ++n;
        }
        CHECK(*all == want);
      }
      {
        const auto all = apply_sqrt(f, a, out, r, sr, flags);
        REQUIRE(all.has_value());
        std::uint8_t want = 0;
        for (int i = 0; i < len; ++i) {
          const rounded e = sqrt(f, a[i], r, random_for(r, sr, i));
          REQUIRE(out[i] == e.code);
          REQUIRE(flags[i] == e.flags);
          want |= e.flags;
          ++n;
        }
        CHECK(*all == want);
      }
      ++configs;
    }
  }
  CHECK(configs == 9 * 9 * 3 - 9);
  CHECK(n == configs * 6 * len);
}

TEST_CASE("apply on byte codes from several threads at once, two of them making the same table of results and "
          "one another (array.cpp): every result == the scalar op") {
  // 2^21 elements a call: the size at which a table of pairs is made where lanes cover the op
  // (array.cpp, kLanesPerCall).
  constexpr std::size_t kN = std::size_t{1} << 21;
  std::vector<std::uint8_t> a(kN), b(kN);
  for (std::size_t i = 0; i < kN; ++i) {
    a[i] = static_cast<std::uint8_t>(i >> 8);
    b[i] = static_cast<std::uint8_t>(i * 37);
  }
  const rounding toward_zero{round_mode::toward_zero, overflow_policy::saturate, 16};
  struct call {
    array_op op;
    rounding r;
    std::vector<std::uint8_t> out;
    bool done = false;
  };
  std::vector<call> calls = {{array_op::mul, toward_zero, {}}, {array_op::mul, toward_zero, {}},
                             {array_op::div, toward_zero, {}}};
  std::vector<std::thread> threads;
  for (call& c : calls) {
    c.out.resize(kN);
    threads.emplace_back(
        [&] { c.done = apply(c.op, formats::e5m2, std::span<const std::uint8_t>(a), b, c.out, c.r).has_value(); });
  }
  for (std::thread& t : threads) t.join();
  for (const call& c : calls) {
    REQUIRE(c.done);
    for (std::size_t i = 0; i < kN; ++i) {
      const rounded e = c.op == array_op::mul ? mul(formats::e5m2, a[i], b[i], c.r, 0)
                                              : div(formats::e5m2, a[i], b[i], c.r, 0);
      if (c.out[i] != e.code) {
        FAIL_CHECK("element " << i << " (" << int(a[i]) << ", " << int(b[i]) << "): " << int(c.out[i]) << ", core "
                               << e.code);
        break;
      }
    }
  }
}

TEST_CASE("stochastic rounding: results do not depend on how the array is split (first_index), every op") {
  std::mt19937_64 rng(4);
  const int len = 1000;
  const std::vector<double> xs = sample_doubles(rng, len);
  int checked = 0;
  for (const rounding r : {rounding{round_mode::stochastic, overflow_policy::ieee, 8},
                           rounding{round_mode::stochastic_exact}}) {
    for (const format& f : {formats::bf16, formats::e4m3fn, formats::fp16}) {
      const auto a = sample_codes(f, rng, len), b = sample_codes(f, rng, len), c = sample_codes(f, rng, len);
      const sr_stream whole{0xfeedULL, 17, 5000};
      std::vector<std::uint32_t> ref_round(len), ref_add(len), ref_fma(len), ref_sqrt(len), ref_conv(len);
      REQUIRE(round_array(f, xs, ref_round, r, whole).has_value());
      REQUIRE(apply(array_op::add, f, a, b, ref_add, r, whole).has_value());
      REQUIRE(apply_fma(f, a, b, c, ref_fma, r, whole).has_value());
      REQUIRE(apply_sqrt(f, a, ref_sqrt, r, whole).has_value());
      REQUIRE(convert_array(f, formats::fp32, std::vector<std::uint32_t>(a.begin(), a.end()), ref_conv, r, whole)
                  .has_value());
      // Split at several points into chunks, each with first_index = whole.first_index + offset.
      for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{128}, std::size_t{333}}) {
        std::vector<std::uint32_t> o_round(len), o_add(len), o_fma(len), o_sqrt(len), o_conv(len);
        for (std::size_t start = 0; start < static_cast<std::size_t>(len); start += chunk) {
          const std::size_t m = std::min(chunk, len - start);
          const sr_stream part{whole.seed, whole.stream, whole.first_index + start};
          const auto sub = [&](auto& v) { return std::span(v).subspan(start, m); };
          REQUIRE(round_array(f, sub(xs), sub(o_round), r, part).has_value());
          REQUIRE(apply(array_op::add, f, sub(a), sub(b), sub(o_add), r, part).has_value());
          REQUIRE(apply_fma(f, sub(a), sub(b), sub(c), sub(o_fma), r, part).has_value());
          REQUIRE(apply_sqrt(f, sub(a), sub(o_sqrt), r, part).has_value());
          REQUIRE(convert_array(f, formats::fp32, sub(a), sub(o_conv), r, part).has_value());
        }
        CHECK(o_round == ref_round);
        CHECK(o_add == ref_add);
        CHECK(o_fma == ref_fma);
        CHECK(o_sqrt == ref_sqrt);
        CHECK(o_conv == ref_conv);
        ++checked;
      }
      // The bits do depend on seed, stream and index: another stream changes some results.
      std::vector<std::uint32_t> other(len);
      REQUIRE(round_array(f, xs, other, r, sr_stream{whole.seed, whole.stream + 1, whole.first_index}).has_value());
      CHECK(other != ref_round);
      REQUIRE(round_array(f, xs, other, r, sr_stream{whole.seed, whole.stream, whole.first_index + 1}).has_value());
      CHECK(other != ref_round);
    }
  }
  CHECK(checked == 2 * 3 * 4);
}

namespace {
template <class Result>
std::string message_of(const Result& r) {
  REQUIRE_FALSE(r.has_value());
  return r.message();
}
}  // namespace

TEST_CASE("size mismatches: every function names both spans and their sizes, and writes nothing") {
  std::vector<double> d10(10, 1.0);
  std::vector<float> f10(10, 1.0f);
  std::vector<std::uint32_t> c10(10, 0x3f80), c9(9, kUnwritten), c11(11, kUnwritten), c1(1, kUnwritten),
      o10(10, kUnwritten);
  std::vector<std::uint8_t> fl3(3, 0xaa), fl10(10, 0xaa);
  std::vector<double> dout9(9, -1.0);
  const format f = formats::bf16;
  const rounding r{};
  int n = 0;
  const auto expect = [&n](const std::string& got, const std::string& want) {
    CHECK(got == want);
    ++n;
  };

  expect(message_of(round_array(f, d10, c9)), "size mismatch: 'in' has 10 elements, 'out' has 9");
  expect(message_of(round_array(f, d10, c1)), "size mismatch: 'in' has 10 elements, 'out' has 1");
  expect(message_of(round_array(f, std::span<const double>(d10).first(1), c9)),
         "size mismatch: 'in' has 1 element, 'out' has 9");
  expect(message_of(round_array(f, d10, o10, r, {}, fl3)), "size mismatch: 'in' has 10 elements, 'flags' has 3");
  expect(message_of(round_array(f, std::span<const float>(f10), c11)), "size mismatch: 'in' has 10 elements, 'out' has 11");
  expect(message_of(round_array(f, std::span<const float>(f10), o10, r, {}, fl3)),
         "size mismatch: 'in' has 10 elements, 'flags' has 3");
  expect(message_of(convert_array(f, formats::fp32, c10, c9)), "size mismatch: 'in' has 10 elements, 'out' has 9");
  expect(message_of(convert_array(f, formats::fp32, c10, o10, r, {}, fl3)),
         "size mismatch: 'in' has 10 elements, 'flags' has 3");
  expect(message_of(decode_array(f, c10, dout9)), "size mismatch: 'codes' has 10 elements, 'out' has 9");
  expect(message_of(apply(array_op::add, f, c10, c9, o10)), "size mismatch: 'a' has 10 elements, 'b' has 9");
  expect(message_of(apply(array_op::div, f, c10, c10, c11)), "size mismatch: 'a' has 10 elements, 'out' has 11");
  expect(message_of(apply(array_op::mul, f, c10, c10, o10, r, {}, fl3)),
         "size mismatch: 'a' has 10 elements, 'flags' has 3");
  expect(message_of(apply_fma(f, c10, c9, c10, o10)), "size mismatch: 'a' has 10 elements, 'b' has 9");
  expect(message_of(apply_fma(f, c10, c10, c11, o10)), "size mismatch: 'a' has 10 elements, 'c' has 11");
  expect(message_of(apply_fma(f, c10, c10, c10, c9)), "size mismatch: 'a' has 10 elements, 'out' has 9");
  expect(message_of(apply_fma(f, c10, c10, c10, o10, r, {}, fl3)), "size mismatch: 'a' has 10 elements, 'flags' has 3");
  expect(message_of(apply_sqrt(f, c10, c9)), "size mismatch: 'a' has 10 elements, 'out' has 9");
  expect(message_of(apply_sqrt(f, c10, o10, r, {}, fl3)), "size mismatch: 'a' has 10 elements, 'flags' has 3");
  CHECK(n == 18);

  // Nothing was written on any error.
  for (auto v : {c9, c11, c1, o10}) CHECK(std::count(v.begin(), v.end(), kUnwritten) == static_cast<long>(v.size()));
  CHECK(std::count(fl3.begin(), fl3.end(), 0xaa) == 3);
  CHECK(std::count(dout9.begin(), dout9.end(), -1.0) == 9);

  // Matching sizes, and empty spans, are fine; an empty flags span means "no per-element flags".
  CHECK(round_array(f, d10, o10).has_value());
  CHECK(round_array(f, d10, o10, r, {}, fl10).has_value());
  CHECK(apply(array_op::add, f, std::span<const std::uint32_t>{}, {}, {}).has_value());
  CHECK(*apply_sqrt(f, std::span<const std::uint32_t>{}, {}) == 0);
}

TEST_CASE("invalid rounding or format: every function returns the check() message, and writes nothing") {
  std::vector<double> d4(4, 1.0);
  std::vector<std::uint32_t> c4(4, 0), o4(4, kUnwritten);
  std::vector<double> dout4(4, -1.0);
  const rounding bad_bits{round_mode::stochastic, overflow_policy::ieee, 0};
  const rounding bad_bits_high{round_mode::stochastic, overflow_policy::ieee, 33};
  const rounding nan_policy{round_mode::nearest_even, overflow_policy::nan};
  const std::string bits_msg = "rounding: stochastic-rounding bits 0 out of range: valid 1..32";
  const std::string nan_msg =
      "rounding: overflow policy nan needs a format with a NaN; e2m1fn has none (use ieee or saturate)";
  int n = 0;
  const auto expect = [&n](const std::string& got, const std::string& want) {
    CHECK(got == want);
    ++n;
  };
  const format bf = formats::bf16, e2 = formats::e2m1fn;
  expect(message_of(round_array(bf, d4, o4, bad_bits)), bits_msg);
  expect(message_of(round_array(bf, d4, o4, bad_bits_high)),
         "rounding: stochastic-rounding bits 33 out of range: valid 1..32");
  expect(message_of(round_array(e2, d4, o4, nan_policy)), nan_msg);
  expect(message_of(round_array(bf, std::span<const float>(std::vector<float>(4).data(), 4), o4, bad_bits)), bits_msg);
  expect(message_of(convert_array(bf, formats::fp32, c4, o4, bad_bits)), bits_msg);
  expect(message_of(convert_array(e2, formats::fp32, c4, o4, nan_policy)), nan_msg);
  // The policy is checked against the target format, not the source.
  CHECK(convert_array(formats::fp32, e2, c4, o4, nan_policy).has_value());
  std::fill(o4.begin(), o4.end(), kUnwritten);
  expect(message_of(apply(array_op::sub, bf, c4, c4, o4, bad_bits)), bits_msg);
  expect(message_of(apply(array_op::add, e2, c4, c4, o4, nan_policy)), nan_msg);
  expect(message_of(apply_fma(bf, c4, c4, c4, o4, bad_bits)), bits_msg);
  expect(message_of(apply_fma(e2, c4, c4, c4, o4, nan_policy)), nan_msg);
  expect(message_of(apply_sqrt(bf, c4, o4, bad_bits)), bits_msg);
  expect(message_of(apply_sqrt(e2, c4, o4, nan_policy)), nan_msg);
  // A rounding error is reported before a size mismatch.
  std::vector<std::uint32_t> o3(3, kUnwritten);
  expect(message_of(apply_sqrt(bf, c4, o3, bad_bits)), bits_msg);

  // Formats that fail check(): the message names the role of the format and the field.
  const format bad_exp{0, 3, 0, true, nonfinite::fn, true, true};
  const std::string exp_msg = "exp_bits 0 is out of range: valid 1..11";
  expect(message_of(round_array(bad_exp, d4, o4)), "format: " + exp_msg);
  expect(message_of(decode_array(bad_exp, c4, dout4)), "format: " + exp_msg);
  expect(message_of(apply(array_op::mul, bad_exp, c4, c4, o4)), "format: " + exp_msg);
  expect(message_of(apply_fma(bad_exp, c4, c4, c4, o4)), "format: " + exp_msg);
  expect(message_of(apply_sqrt(bad_exp, c4, o4)), "format: " + exp_msg);
  expect(message_of(convert_array(bad_exp, formats::fp32, c4, o4)), "target format: " + exp_msg);
  expect(message_of(convert_array(formats::fp32, bad_exp, c4, o4)), "source format: " + exp_msg);
  CHECK(n == 20);
  CHECK(std::count(o4.begin(), o4.end(), kUnwritten) == 4);
  CHECK(std::count(o3.begin(), o3.end(), kUnwritten) == 3);
  CHECK(std::count(dout4.begin(), dout4.end(), -1.0) == 4);
}
