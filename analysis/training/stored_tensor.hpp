// A tensor held in its storage format: the memory a training policy actually spends.
//
// Formats of at most 16 bits keep their codes in 2 bytes per element; wider ones (fp32, tf32,
// e8m13) keep their values as binary32. Only formats whose every value is a binary32 value are
// accepted, so load() is exact and store() makes the tensor's only rounding: the core's
// (round_float) for every element, or for nearest-even into 16-bit codes the array functions'
// vector kernels, equal to it bit for bit; stochastic rounding keyed by (seed, stream, index) as
// everywhere else in fpemu. tests/test_optimizer.cpp checks store() against round_float.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::training {

// An error naming the format unless all of its values are binary32 values (and it has a zero
// and a sign, which a weight or a gradient needs).
expected<format> storage_format(const format& f);

// out[i] <- the value of in[i] rounded to nearest-even in f (distinct arrays of equal size).
void round_to_values(const format& f, std::span<const float> in, std::span<float> out);

class stored_tensor {
 public:
  stored_tensor() = default;
  // n zeros in format f; f must pass storage_format() (checked with an assertion: front ends
  // validate user formats first).
  stored_tensor(const format& f, std::size_t n);

  const format& fmt() const { return fmt_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const;  // storage held: 2 bytes per element up to 16 bits, else 4

  // Exact decoding of elements [first, first + out.size()).
  void load(std::size_t first, std::span<float> out) const;
  float get(std::size_t i) const;
  std::vector<float> values() const;

  // Rounds in[i] into element first + i with `r`; stochastic rounding takes the bits of
  // element first + i from the array keystream, keystream_bits(sr.seed, sr.stream,
  // sr.first_index + first + i, array_random_width(r)) (random.hpp).
  // Returns the union of the status flags.
  std::uint8_t store(std::size_t first, std::span<const float> in, const rounding& r = {}, sr_stream sr = {});
  void fill_zero();

  std::uint32_t code(std::size_t i) const;  // the element's code (binary32 bits when wide)
  // The codes from element first on (formats of at most 16 bits), for the kernels that store
  // codes they have rounded as store() would (kernels::kahan_store_bf16).
  std::uint16_t* codes(std::size_t first);

  // Asks the caches for elements [first, first + n) ahead of a load() (a hint; no effect on values).
  void prefetch(std::size_t first, std::size_t n) const;

 private:
  format fmt_ = formats::fp32;
  std::size_t size_ = 0;
  std::vector<std::uint16_t> narrow_;         // codes, formats of at most 16 bits
  std::vector<float> wide_;                   // values, wider formats
  std::shared_ptr<const std::vector<float>> table_;  // code -> value, 16-bit formats but bf16
};

}  // namespace fpemu::training
