// A libFuzzer input read as a sequence of choices. Every take consumes bytes from the front and
// reads zeros once the input is used up, so that any input, however short, is one valid case and
// a mutation of one byte changes one choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fuzz_input {

class byte_reader {
 public:
  byte_reader(const std::uint8_t* data, std::size_t size) : data_(data, size) {}

  std::uint8_t byte() { return pos_ < data_.size() ? data_[pos_++] : 0; }

  // Little-endian, `bytes` at most 8.
  std::uint64_t bits(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{byte()} << (8 * i);
    return v;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>(bits(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(bits(4)); }
  std::uint64_t u64() { return bits(8); }

  // What is left, consumed.
  std::span<const std::uint8_t> rest() {
    const std::span<const std::uint8_t> r = data_.subspan(pos_);
    pos_ = data_.size();
    return r;
  }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

}  // namespace fuzz_input
