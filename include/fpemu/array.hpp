// Runtime-format functions over spans: round arrays of doubles or floats into codes, decode
// codes, and apply arithmetic element-wise, for sweeps over formats and modes. Stochastic
// rounding takes element i's random bits from random_bits(seed, stream, first_index + i), so
// results do not depend on how an array is split.
#pragma once

#include <cstdint>
#include <span>

#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu {

struct sr_stream {
  std::uint64_t seed = 0;
  std::uint32_t stream = 0;
  std::uint64_t first_index = 0;
};

enum class array_op : std::uint8_t { add, sub, mul, div };

// Each returns the union of the status flags raised, or an error naming the mismatched sizes
// or the invalid rounding. `flags`, when not empty, receives the flags of each element.
expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint32_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint32_t> out,
                                   const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> convert_array(const format& to, const format& from, std::span<const std::uint32_t> in,
                                     std::span<std::uint32_t> out, const rounding& r = {}, sr_stream sr = {},
                                     std::span<std::uint8_t> flags = {});
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint32_t> codes, std::span<double> out);
expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint32_t> a,
                             std::span<const std::uint32_t> b, std::span<std::uint32_t> out, const rounding& r = {},
                             sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                 std::span<const std::uint32_t> c, std::span<std::uint32_t> out,
                                 const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});
expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint32_t> a, std::span<std::uint32_t> out,
                                  const rounding& r = {}, sr_stream sr = {}, std::span<std::uint8_t> flags = {});

}  // namespace fpemu
