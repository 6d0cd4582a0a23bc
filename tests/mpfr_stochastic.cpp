// Stochastic rounding: the Philox-4x32-10 generator against the Random123 known-answer vectors,
// bit-reproducibility for a fixed (seed, stream, index) whatever the thread split, the exact
// discrete probability of rounding up with k random bits (all 2^k random values, k = 1..16, each
// result also == MPFR), and unbiasedness of 1e6 roundings (within 4 sigma) for bf16, fp16 and
// e4m3fn.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "oracle_support.hpp"

using namespace oracle_test;
namespace oracle = fpemu::mpfr_oracle;

namespace {

struct sr_format {
  std::string name;
  format f;
};

std::vector<sr_format> sr_formats() {
  namespace F = fpemu::formats;
  return {{"bf16", F::bf16}, {"fp16", F::fp16}, {"e4m3fn", F::e4m3fn}};
}

// Values strictly between two adjacent finite values of f: ordinary values, a value just above a
// representable one (d tiny), one just below the next (d near 1), a subnormal, one near the
// largest finite value, negatives.
std::vector<double> test_values(const format& f) {
  const double minsub = fpemu::min_positive(f), maxv = oracle::max_finite_value(f);
  const double ulp1 = std::ldexp(1.0, -f.frac_bits);
  return {1.0 / 3,  -M_PI,      0.1,          1 + ulp1 / 64, 1 + ulp1 * (1 - 1.0 / 1024), -(2 - ulp1 * 0.3),
          minsub * 2.3, -minsub * 0.6, maxv * (1 - ulp1 / 3), 5.0 + ulp1 * 4 * 0.7};
}

// The two candidates of x in f (toward zero and away from zero) and d = (|x| - |RZ|) / (|RA| - |RZ|),
// all exact in binary64.
struct candidates {
  double rz, ra, d;
};
candidates around(const format& f, double x) {
  const rounding rz{fpemu::round_mode::toward_zero};
  oracle::oracle o;
  o.exact_double(x);
  const double lo = oracle::decode_code(f, o.round(f, rz).code).value;
  const double step = std::fabs(x) < fpemu::min_normal(f)
                          ? fpemu::min_positive(f)
                          : std::ldexp(1.0, std::ilogb(std::fabs(lo)) - f.frac_bits);
  const double hi = std::copysign(std::fabs(lo) + step, x);
  const double d = (std::fabs(x) - std::fabs(lo)) / step;  // exact: the difference keeps x's low bits
  REQUIRE(d > 0);
  REQUIRE(d < 1);
  return {lo, hi, d};
}

}  // namespace

TEST_CASE("philox4x32_10 == the Random123 known-answer vectors") {
  using fpemu::philox4x32_10;
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == fpemu::philox_counter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        fpemu::philox_counter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        fpemu::philox_counter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("stochastic rounding is a pure function of (seed, stream, index): identical reruns and thread splits, "
          "different seeds and streams differ") {
  constexpr std::uint64_t n = 1 << 16;
  const format f = fpemu::formats::bf16;
  const rounding r{fpemu::round_mode::stochastic, fpemu::overflow_policy::ieee, 16};
  const double x = 1.0 / 3;
  const auto run = [&](std::uint64_t seed, std::uint32_t stream, std::uint64_t begin, std::uint64_t end,
                       std::vector<std::uint32_t>& out) {
    for (std::uint64_t i = begin; i < end; ++i) out[i] = fpemu::from(f, x, r, fpemu::random_bits(seed, stream, i)).code;
  };
  std::vector<std::uint32_t> a(n), b(n), c(n), d(n), split(n);
  run(42, 0, 0, n, a);
  run(42, 0, 0, n, b);
  run(43, 0, 0, n, c);
  run(42, 1, 0, n, d);
  {  // the same indices computed by two threads in interleaved halves
    std::thread t1([&] { run(42, 0, 0, n / 2, split); });
    std::thread t2([&] { run(42, 0, n / 2, n, split); });
    t1.join();
    t2.join();
  }
  CHECK(a == b);
  CHECK(a == split);
  CHECK(a != c);
  CHECK(a != d);
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < n; ++i) differ += a[i] != c[i];
  MESSAGE("mpfr_stochastic: reproducibility: " << n << " indices x 5 runs; seeds 42 and 43 differ at " << differ);
  CHECK(differ > n / 4);  // two roundings of 1/3 differ with probability 2 d (1 - d) ~ 0.44
  CHECK(fpemu::random_bits(7, 3, 12345) == fpemu::random_bits(7, 3, 12345));
}

TEST_CASE("stochastic with k bits: over all 2^k random values (k = 1..16) the round-ups number exactly "
          "floor(d * 2^k), bits above k are ignored, and every result == MPFR") {
  std::uint64_t cases = 0, expected_cases = 0;
  checker chk("mpfr_stochastic: all 2^k random values");
  oracle::oracle o;
  for (const sr_format& sf : sr_formats()) {
    for (const double x : test_values(sf.f)) {
      const candidates c = around(sf.f, x);
      o.exact_double(x);
      for (int k = 1; k <= 16; ++k) {
        const rounding r{fpemu::round_mode::stochastic, fpemu::overflow_policy::ieee, k};
        std::uint64_t ups = 0;
        for (std::uint64_t rnd = 0; rnd < (std::uint64_t{1} << k); ++rnd) {
          const rounded got = fpemu::from(sf.f, x, r, rnd);
          const double v = oracle::decode_code(sf.f, got.code).value;
          REQUIRE((v == c.rz || v == c.ra));
          ups += v == c.ra;
          // The same with garbage above the k low bits.
          const std::uint64_t noisy = rnd | (fpemu::random_bits(9, static_cast<std::uint32_t>(k), rnd) << k);
          const rounded got_noisy = fpemu::from(sf.f, x, r, noisy);
          CHECK(got_noisy == got);
          chk.compare(sf.f, got, o.round(sf.f, r, rnd), [&] {
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s from double %a sr k=%d random %llu", sf.name.c_str(), x, k,
                          static_cast<unsigned long long>(rnd));
            return std::string(buf);
          });
          ++cases;
        }
        expected_cases += std::uint64_t{1} << k;
        const auto want = static_cast<std::uint64_t>(std::floor(std::ldexp(c.d, k)));
        CHECK_MESSAGE(ups == want, sf.name << " x=" << x << " k=" << k << " d=" << c.d);
      }
      // sr-exact: random = r << 48 for all r < 2^16 rounds up iff F + r * 2^48 + s >= 2^64,
      // F = floor(d * 2^64), s = 1 if d * 2^64 is not an integer.
      const double scaled = std::ldexp(c.d, 64);
      const double fl = std::floor(scaled);
      const fpemu::detail::u128 F = static_cast<fpemu::detail::u128>(static_cast<std::uint64_t>(fl));
      const unsigned s = fl != scaled ? 1 : 0;
      std::uint64_t ups = 0, want = 0;
      const rounding rx{fpemu::round_mode::stochastic_exact};
      for (std::uint64_t rr = 0; rr < (1u << 16); ++rr) {
        const rounded got = fpemu::from(sf.f, x, rx, rr << 48);
        ups += oracle::decode_code(sf.f, got.code).value == c.ra;
        want += (F + (static_cast<fpemu::detail::u128>(rr) << 48) + s) >> 64 != 0;
        chk.compare(sf.f, got, o.round(sf.f, rx, rr << 48), [&] {
          char buf[160];
          std::snprintf(buf, sizeof buf, "%s from double %a sr-exact random %llx", sf.name.c_str(), x,
                        static_cast<unsigned long long>(rr << 48));
          return std::string(buf);
        });
        ++cases;
      }
      expected_cases += 1u << 16;
      CHECK_MESSAGE(ups == want, sf.name << " x=" << x << " sr-exact");
    }
  }
  CHECK(cases == expected_cases);
  chk.finish(expected_cases, "3 formats x 10 values x (sum of 2^k for k = 1..16 + 2^16 sr-exact)");
}

TEST_CASE("stochastic rounding is unbiased: the mean of 1e6 roundings is within 4 sigma of the exact value "
          "(sr-exact, sr with 32 bits) or of RZ + floor(d 2^k) / 2^k ulp (sr with 3 and 8 bits)") {
  constexpr std::uint64_t n = 1'000'000;
  std::uint64_t runs = 0;
  for (const sr_format& sf : sr_formats()) {
    for (const double x : test_values(sf.f)) {
      const candidates c = around(sf.f, x);
      struct mode {
        const char* name;
        rounding r;
        double p_up;  // exact probability of rounding away from zero
      };
      const mode modes[] = {
          {"sr-exact", {fpemu::round_mode::stochastic_exact}, c.d},
          {"sr32", {fpemu::round_mode::stochastic, fpemu::overflow_policy::ieee, 32}, c.d},
          {"sr8", {fpemu::round_mode::stochastic, fpemu::overflow_policy::ieee, 8}, std::floor(c.d * 256) / 256},
          {"sr3", {fpemu::round_mode::stochastic, fpemu::overflow_policy::ieee, 3}, std::floor(c.d * 8) / 8},
      };
      for (const mode& m : modes) {
        double sum = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
          const rounded got = fpemu::from(sf.f, x, m.r, fpemu::random_bits(2024, 5, i));
          sum += oracle::decode_code(sf.f, got.code).value - c.rz;  // exact: one ulp or zero
        }
        ++runs;
        const double ulp = c.ra - c.rz;  // signed
        const double mean = c.rz + sum / n;
        const double expect = c.rz + m.p_up * ulp;
        const double sigma = std::fabs(ulp) * std::sqrt(m.p_up * (1 - m.p_up) / n);
        const double z = sigma > 0 ? (mean - expect) / sigma : (mean == expect ? 0 : INFINITY);
        CHECK_MESSAGE(std::fabs(z) <= 4, sf.name << " " << m.name << " x=" << x << " mean=" << mean
                                                 << " expected=" << expect << " z=" << z);
        if (m.p_up == c.d) CHECK(std::fabs(mean - x) <= 4 * sigma + std::fabs(ulp) * 0x1p-30);
      }
    }
  }
  CHECK(runs == 3 * 10 * 4);
  MESSAGE("mpfr_stochastic: unbiasedness: 3 formats x 10 values x 4 modes x 1e6 roundings = " << runs * n
                                                                                              << " roundings");
}

TEST_CASE("sr-exact reads the sticky bit below its 64 random bits: fma(a, b, +-tiny) in bf16 and fp32 with random "
          "0, 1, 2^63, 2^64 - 2, 2^64 - 1 == MPFR") {
  // a * b is exact in the format; a tiny addend far below the quantum puts the exact value a hair
  // (far less than 2^-64 ulp) above or below it: floor(d * 2^64) is 0 or 2^64 - 1 and only the
  // sticky bit tells the carry with random = 2^64 - 1 (or 0) apart.
  struct fmt {
    std::string name;
    format f;
    std::uint32_t tiny;  // a code far below the unit in the last place of a * b
  };
  const fmt formats[] = {{"bf16", fpemu::formats::bf16, 0x0001}, {"fp32", fpemu::formats::fp32, 0x00000001}};
  const std::uint64_t randoms[] = {0, 1, std::uint64_t{1} << 63, ~std::uint64_t{1}, ~std::uint64_t{0}};
  checker chk("mpfr_stochastic: sr-exact sticky");
  oracle::oracle o;
  std::uint64_t expected = 0;
  for (const fmt& t : formats) {
    const std::uint32_t one = static_cast<std::uint32_t>(t.f.bias) << t.f.frac_bits;
    const std::uint32_t sign = fpemu::sign_mask(t.f);
    for (std::uint32_t a : {one, one + 1, one + 5, one | sign}) {
      for (std::uint32_t b : {one + 3, one + (std::uint32_t{3} << t.f.frac_bits)}) {
        for (std::uint32_t c : {t.tiny, t.tiny | sign}) {
          o.exact_fma(t.f, a, b, c);
          for (const std::uint64_t rnd : randoms) {
            const rounding r{fpemu::round_mode::stochastic_exact};
            chk.compare(t.f, fpemu::fma(t.f, a, b, c, r, rnd), o.round(t.f, r, rnd), [&] {
              return t.name + " fma(" + show_code(t.f, a) + ", " + show_code(t.f, b) + ", " + show_code(t.f, c) +
                     ") sr-exact random " + std::to_string(rnd);
            });
            ++expected;
          }
        }
      }
    }
  }
  chk.finish(expected, "2 formats x 16 triples x 5 random values");
}
