// The CUDA conversion kernel's element function, compiled for the host, against the emulator's
// array API (round_array / convert_array) bit for bit; the hardware-instruction table; and the
// host API's argument errors. None of this needs a GPU (tests/cuda/ has what does).
#include <doctest/doctest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

#include "cuda/convert.hpp"
#include "fpemu/array.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::cuda;

namespace {

const std::vector<format> targets = {formats::bf16,     formats::fp16,     formats::tf32,   formats::e8m13,
                                     formats::e4m3fn,   formats::e5m2,     formats::e4m3fnuz, formats::e5m2fnuz,
                                     formats::e2m3fn,   formats::e3m2fn,   formats::e2m1fn, formats::e8m0fnu,
                                     parse_format("e3m4").value()};

std::vector<rounding> roundings_for(const format& f) {
  std::vector<rounding> out;
  for (auto mode : {round_mode::nearest_even, round_mode::nearest_away, round_mode::toward_zero,
                    round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd,
                    round_mode::stochastic, round_mode::stochastic_exact})
    for (auto policy : {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan})
      for (int bits : {1, 8, 16, 32}) {
        if (mode != round_mode::stochastic && bits != 16) continue;
        const rounding r{mode, policy, bits};
        if (!check(f, r)) out.push_back(r);
      }
  return out;
}

// binary32 inputs: specials, values near every target's boundaries, and random bit patterns.
std::vector<std::uint32_t> f32_inputs() {
  std::vector<std::uint32_t> in = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u,
                                   1, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu, 0x00800000u};
  for (const format& f : targets) {
    const float m = static_cast<float>(max_finite(f));
    for (float x : {m, std::nextafter(m, 2 * m), m * 1.0625f, static_cast<float>(min_positive(f)),
                    static_cast<float>(min_positive(f)) * 0.5f, static_cast<float>(min_positive(f)) * 0.75f})
      for (float s : {1.0f, -1.0f}) in.push_back(std::bit_cast<std::uint32_t>(s * x));
  }
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int i = 0; i < 3000; ++i) in.push_back(i % 3 == 0 ? static_cast<std::uint32_t>(rng()) : std::bit_cast<std::uint32_t>(normal(rng)));
  return in;
}

}  // namespace

TEST_CASE("convert_element from f32, bf16 and fp16 == round_array/convert_array, every target and rounding") {
  const std::vector<std::uint32_t> f32 = f32_inputs();
  std::vector<float> f32_values(f32.size());
  for (std::size_t i = 0; i < f32.size(); ++i) f32_values[i] = std::bit_cast<float>(f32[i]);
  std::vector<std::uint32_t> codes16(1u << 16);
  for (std::uint32_t c = 0; c < codes16.size(); ++c) codes16[c] = c;

  long cases = 0;
  for (const format& to : targets) {
    for (const rounding& r : roundings_for(to)) {
      const sr_stream sr{0x5eed, 3, 1000};
      std::vector<std::uint32_t> expected(f32.size());
      REQUIRE(round_array(to, std::span<const float>(f32_values), expected, r, sr).has_value());
      for (std::size_t i = 0; i < f32.size(); ++i) {
        REQUIRE_MESSAGE(convert_element(source_type::f32, f32[i], to, r, sr, i) == expected[i],
                        to_string(to) << " " << to_string(r.mode) << " input " << f32[i]);
        ++cases;
      }
      if (r.mode != round_mode::nearest_even && r.mode != round_mode::stochastic) continue;
      for (auto [src, from_format] : {std::pair{source_type::bf16, formats::bf16}, std::pair{source_type::fp16, formats::fp16}}) {
        std::vector<std::uint32_t> want(codes16.size());
        REQUIRE(convert_array(to, from_format, codes16, want, r, sr).has_value());
        for (std::uint32_t c = 0; c < codes16.size(); ++c) {
          REQUIRE_MESSAGE(convert_element(src, c, to, r, sr, c) == want[c], to_string(to) << " from code " << c);
          ++cases;
        }
      }
    }
  }
  MESSAGE(cases << " element conversions compared");
  CHECK(cases > 10'000'000);
}

TEST_CASE("hardware instructions are chosen only where they implement the core's rounding") {
  const rounding rne{}, rz{round_mode::toward_zero};
  const rounding rne_sat{round_mode::nearest_even, overflow_policy::saturate};
  CHECK(select_hardware(source_type::f32, formats::e4m3fn, rne_sat, 9, 0) == hardware_cvt::e4m3_rn_satfinite);
  CHECK(select_hardware(source_type::f32, formats::e5m2, rne_sat, 8, 9) == hardware_cvt::e5m2_rn_satfinite);
  CHECK(select_hardware(source_type::f32, formats::e4m3fn, rne_sat, 8, 0) == hardware_cvt::none);  // sm_80 lacks it
  CHECK(select_hardware(source_type::f32, formats::e4m3fn, rne, 9, 0) == hardware_cvt::none);  // .satfinite only
  CHECK(select_hardware(source_type::f32, formats::e4m3fnuz, rne_sat, 9, 0) == hardware_cvt::none);
  CHECK(select_hardware(source_type::f32, formats::bf16, rne, 8, 0) == hardware_cvt::bf16_rn);
  CHECK(select_hardware(source_type::f32, formats::bf16, rz, 9, 0) == hardware_cvt::bf16_rz);
  CHECK(select_hardware(source_type::f32, formats::fp16, rz, 9, 0) == hardware_cvt::f16_rz);
  CHECK(select_hardware(source_type::f32, formats::fp16, rne_sat, 9, 0) == hardware_cvt::none);
  CHECK(select_hardware(source_type::f32, formats::fp16, rounding{round_mode::toward_positive}, 9, 0) == hardware_cvt::none);
  CHECK(select_hardware(source_type::f32, formats::fp16, rounding{round_mode::stochastic}, 9, 0) == hardware_cvt::none);
  CHECK(select_hardware(source_type::bf16, formats::e4m3fn, rne_sat, 9, 0) == hardware_cvt::none);
  CHECK(hardware_instruction(source_type::f32, {formats::e4m3fn, rne_sat}, 9, 0) == "cvt.rn.satfinite.e4m3x2.f32");
  CHECK(hardware_instruction(source_type::f32, {formats::e4m3fn, rne_sat, {}, false}, 9, 0).empty());
}

TEST_CASE("convert API: bad arguments are named before any device is touched") {
  const std::vector<std::uint32_t> in = {0x3f800000u};
  format bad = formats::fp16;
  bad.exp_bits = 0;
  auto e1 = convert_codes(source_type::f32, in, {bad});
  REQUIRE_FALSE(e1.has_value());
  CHECK(e1.message().find("target format") != std::string::npos);

  auto e2 = convert_codes(source_type::f32, in, {formats::e4m3fn, rounding{round_mode::stochastic, overflow_policy::ieee, 40}});
  REQUIRE_FALSE(e2.has_value());
  CHECK(e2.message().find("rounding") != std::string::npos);

  const std::vector<std::uint32_t> wide = {1, 0x12345};
  auto e3 = convert_codes(source_type::bf16, wide, {formats::e4m3fn});
  REQUIRE_FALSE(e3.has_value());
  CHECK(e3.message() == "input 1 is 0x12345, not a 16-bit bf16 code (valid: 0x0..0xffff)");

  const std::vector<float> x = {1.0f};
  auto e4 = round_values(x, {parse_format("e5m26").value()});
  REQUIRE_FALSE(e4.has_value());
  CHECK(e4.message().find("not binary32 values") != std::string::npos);
}

TEST_CASE("convert API without a GPU: a clear error, no output") {
  if (current_device()) {
    MESSAGE("a CUDA device is present: covered by tests/cuda (gpu-check)");
    return;
  }
  const std::string why = current_device().message();
  CHECK((why.find("no CUDA device") != std::string::npos || why.find("built without CUDA") != std::string::npos));
  const std::vector<std::uint32_t> in = {0x3f800000u};
  auto r = convert_codes(source_type::f32, in, {formats::e4m3fn});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.message() == why);
  auto h = check_hardware_conversion(formats::e4m3fn, {round_mode::nearest_even, overflow_policy::saturate});
  REQUIRE_FALSE(h.has_value());
  CHECK(h.message() == why);
  CHECK(built_with_cuda() == !compiled_targets().empty());
}

TEST_CASE("convert_on_device: storage widths, and bad arguments named before any device is touched") {
  CHECK(code_bytes(formats::e2m1fn) == 1);
  CHECK(code_bytes(formats::e4m3fn) == 1);
  CHECK(code_bytes(formats::bf16) == 2);
  CHECK(code_bytes(formats::tf32) == 4);
  std::uint32_t word = 0;
  const auto null_out = convert_on_device(source_type::f32, &word, nullptr, 5, {formats::bf16});
  REQUIRE_FALSE(null_out.has_value());
  CHECK(null_out.message() == "convert_on_device: out is null for n = 5 elements");
  const auto null_in = convert_on_device(source_type::fp16, nullptr, &word, 1, {formats::bf16});
  CHECK(null_in.message() == "convert_on_device: in is null for n = 1 elements");
  const auto bad_source = convert_on_device(static_cast<source_type>(9), &word, &word, 1, {formats::bf16});
  CHECK(bad_source.message() == "convert_on_device: source type 9 is not f32, bf16 or fp16");
  const auto bad_rounding =
      convert_on_device(source_type::f32, &word, &word, 1, {formats::e4m3fn, {round_mode::stochastic, overflow_policy::ieee, 0}});
  CHECK(bad_rounding.message().find("rounding") == 0);
  if (!current_device()) {
    const auto r = convert_on_device(source_type::f32, &word, &word, 1, {formats::bf16});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.message() == current_device().message());
  }
}
