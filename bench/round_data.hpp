// The array rounding benchmarks' inputs and cells, for bench_round and lib_ab alike, so that both
// time the same data.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace fpemu::bench {

constexpr std::size_t kRoundElements = std::size_t{1} << 24;
constexpr const char* kRoundFormats[] = {"bf16", "fp16", "e4m3fn", "e5m2", "e3m2fn", "e2m3fn", "e2m1fn"};
constexpr const char* kRoundModes[] = {"rne", "rz", "ru", "rd", "rto", "sr16", "sr-exact"};

// "normal": N(0, 1); "wide": 2^u with u uniform in [-30, 30] and a random sign. Empty for other
// names.
inline std::vector<float> round_data(std::string_view name) {
  std::vector<float> x;
  if (name == "normal") {
    x.resize(kRoundElements);
    std::mt19937 rng(1);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (float& f : x) f = n(rng);
  } else if (name == "wide") {
    x.resize(kRoundElements);
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> u(-30.0f, 30.0f);
    for (float& f : x) f = std::exp2(u(rng)) * (rng() & 1 ? -1.0f : 1.0f);
  }
  return x;
}

// The element-wise benchmarks' cells (apply, apply_fma, apply_sqrt on storage-width codes).
constexpr const char* kOpFormats[] = {"bf16", "fp16", "e4m3fn", "e5m2"};
constexpr const char* kOpModes[] = {"rne", "rd", "sr16"};
constexpr const char* kOps[] = {"add", "mul", "div", "fma", "sqrt"};

// Operand k (0, 1, 2) of `op`: the data set's codes in the format (`codes`), rotated by k
// elements; for sqrt their magnitudes (negative operands, NaN and invalid, go to the core).
template <class Code>
std::vector<Code> op_operand(std::vector<Code> codes, std::size_t k, std::string_view op,
                             std::uint32_t magnitude_mask) {
  std::rotate(codes.begin(), codes.begin() + static_cast<std::ptrdiff_t>(k), codes.end());
  if (op == "sqrt")
    for (Code& c : codes) c = static_cast<Code>(c & magnitude_mask);
  return codes;
}

// The random bits of a mode named "sr<k>" (stochastic rounding with k bits), 0 for any other name
// (those are parse_round_mode's; k outside 1..32 is the caller's to refuse).
inline int sr_bits_of(std::string_view mode) {
  int k = 0;
  if (mode.size() < 3 || mode.substr(0, 2) != "sr") return 0;
  const auto [end, ec] = std::from_chars(mode.data() + 2, mode.data() + mode.size(), k);
  return ec == std::errc{} && end == mode.data() + mode.size() ? k : 0;
}

}  // namespace fpemu::bench
