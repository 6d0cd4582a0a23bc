// round_float (include/fpemu/round_float.hpp), the core's short path for binary32 inputs,
// against the core itself, round(f, unpack(x), r, random), bit for bit (code, flags,
// direction): every format family, every mode including stochastic rounding with 1..32
// random bits and every overflow policy, on random inputs and on every binade boundary. The opt-in exhaustive suite
// checks all 2^32 inputs for the 8- and 16-bit formats in the deterministic modes.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "fpemu/convert.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"

using namespace fpemu;

namespace {

const std::vector<format> kFormats = {formats::bf16,    formats::fp16,     formats::tf32,     formats::fp32,
                                      formats::e8m13,   formats::e4m3fn,   formats::e5m2,     formats::e4m3fnuz,
                                      formats::e5m2fnuz, formats::e2m3fn,  formats::e3m2fn,   formats::e2m1fn,
                                      formats::e8m0fnu, format{5, 10, 14, false},             // no subnormals
                                      format{6, 9, 40}, format{8, 22, 120}, format{3, 4, 3, true, nonfinite::fn}};

long compare(const format& f, std::uint32_t bits, std::uint64_t random, overflow_policy policy, long& cases) {
  long bad = 0;
  const float x = std::bit_cast<float>(bits);
  for (int m = 0; m < 8; ++m) {
    for (int k : {1, 2, 7, 16, 23, 24, 32}) {
      const rounding r{static_cast<round_mode>(m), policy, k};
      const rounded fast = round_float(f, x, r, random), core = round(f, unpack(x), r, random);
      ++cases;
      if (fast != core) ++bad;
      if (m != static_cast<int>(round_mode::stochastic)) break;  // k only matters for stochastic
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("round_float equals the core on random binary32 inputs") {
  long cases = 0, bad = 0;
  for (std::size_t fi = 0; fi < kFormats.size(); ++fi) {
    for (std::uint64_t i = 0; i < 60000; ++i) {
      const std::uint64_t r = random_bits(21, static_cast<std::uint32_t>(fi), i);
      std::uint32_t bits = static_cast<std::uint32_t>(r);
      // two thirds of the inputs near the formats' ranges (exponents 2^-20..2^20)
      if (i % 3 != 0) bits = (bits & 0x807fffffu) | ((107 + (r >> 40) % 41) << 23);
      bad += compare(kFormats[fi], bits, r >> 7, static_cast<overflow_policy>(i % 3), cases);
    }
  }
  MESSAGE(cases << " cases");
  CHECK(bad == 0);
}

TEST_CASE("round_float equals the core at every binade boundary and special value") {
  long cases = 0, bad = 0;
  const std::uint32_t mantissas[] = {0, 1, 2, 0x7fff, 0x8000, 0x8001, 0xffff, 0x3fffff, 0x400000, 0x400001, 0x7ffffe, 0x7fffff};
  for (std::size_t fi = 0; fi < kFormats.size(); ++fi)
    for (std::uint32_t e = 0; e < 256; ++e)
      for (std::uint32_t mant : mantissas)
        for (std::uint32_t sign : {0u, 0x80000000u})
          for (std::uint64_t rnd : {std::uint64_t{0}, ~std::uint64_t{0}, std::uint64_t{0x8000800080008000}})
            for (const overflow_policy p : {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan})
              bad += compare(kFormats[fi], sign | (e << 23) | mant, rnd, p, cases);
  MESSAGE(cases << " cases");
  CHECK(bad == 0);
}

TEST_CASE("code_to_float equals the core's decoding on every code of the formats whose values are binary32 values") {
  long codes = 0, bad = 0, formats_checked = 0;
  for (const format& f : kFormats) {
    if (f.frac_bits > 23 || emax(f) > 127 || emin(f) - f.frac_bits < -149 || width(f) > 22) continue;
    ++formats_checked;
    for (std::uint32_t c = 0; c < (std::uint32_t{1} << width(f)); ++c) {
      const float fast = code_to_float(f, c), core = to_float(f, c);
      ++codes;
      if (std::bit_cast<std::uint32_t>(fast) != std::bit_cast<std::uint32_t>(core) && !(fast != fast && core != core))
        ++bad;
    }
  }
  MESSAGE(codes << " codes of " << formats_checked << " formats");
  CHECK(formats_checked >= 12);
  CHECK(bad == 0);
}
