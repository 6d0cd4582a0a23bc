#include "analysis/training/stored_tensor.hpp"

#include <bit>
#include <cassert>
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "analysis/training/kernels.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::training {
namespace {

// One decode table per 16-bit format, shared by every tensor of that format.
std::shared_ptr<const std::vector<float>> decode_table(const format& f) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::vector<float>>> tables;
  const std::lock_guard lock(mutex);
  auto& slot = tables[to_string(f)];
  if (!slot) {
    auto t = std::make_shared<std::vector<float>>(std::size_t{1} << width(f));
    for (std::uint32_t c = 0; c < t->size(); ++c) (*t)[c] = to_float(f, c);
    slot = std::move(t);
  }
  return slot;
}

// Any rounding, through the array kernels (the vector unit where they cover f and r, the core
// elsewhere; stochastic rounding reads the array keystream of `sr` from element `first`, random.hpp).
template <class Write>
std::uint8_t store_each(const format& f, std::span<const float> in, const rounding& r, sr_stream sr,
                        std::size_t first, Write write) {
  constexpr std::size_t piece = 256;
  std::uint32_t codes[piece];
  std::uint8_t flags = 0;
  for (std::size_t b = 0; b < in.size(); b += piece) {
    const std::size_t m = std::min(piece, in.size() - b);
    const auto rounded = round_array(f, in.subspan(b, m), std::span<std::uint32_t>(codes, m), r,
                                     {sr.seed, sr.stream, sr.first_index + first + b});
    assert(rounded);  // the optimizers' roundings are checked against their formats up front
    flags |= *rounded;
    for (std::size_t i = 0; i < m; ++i) write(b + i, codes[i]);
  }
  return flags;
}

// Nearest-even into fp32: every binary32 value but a NaN is an fp32 value, which the core returns
// unchanged with no flags, so the values are copied; a block holding an infinity or a NaN (the
// core canonicalises NaNs and signals the signalling ones) goes to round_float.
std::uint8_t store_fp32(const float* __restrict in, float* __restrict out, std::size_t n) {
  std::uint32_t special = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(in[i]);
    special |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    out[i] = in[i];
  }
  if (special == 0) return 0;
  std::uint8_t flags = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto res = round_float(formats::fp32, in[i]);
    out[i] = std::bit_cast<float>(res.code);
    flags |= res.flags;
  }
  return flags;
}

// Any rounding into 16-bit codes through the array functions' vector kernels (array.hpp; equal
// to the core bit for bit, flags included), which beat round_nearest_block from a few vectors
// on. Pieces stay below the length at which they would start threads: a store may run on a
// worker already. Stochastic rounding reads the array keystream, one Philox block to 8 elements
// at 16 random bits or fewer (bf16-sr AdamW ran at 0.26 of memcpy's bandwidth on a Zen 4 with a
// block to each element, as random_bits lays them out).
constexpr std::size_t kArrayFrom = 64, kArrayPiece = std::size_t{1} << 15;
std::uint8_t store_codes(const format& f, std::span<const float> in, const rounding& r, sr_stream sr, std::size_t first,
                         std::uint16_t* out) {
  std::uint8_t flags = 0;
  for (std::size_t b = 0; b < in.size(); b += kArrayPiece) {
    const std::size_t m = std::min(kArrayPiece, in.size() - b);
    flags |= *round_array(f, in.subspan(b, m), std::span<std::uint16_t>(out + b, m), r,
                          {sr.seed, sr.stream, sr.first_index + first + b});
  }
  return flags;
}

// Nearest-even, the common case of every store: round_float's short path written without
// branches so that the compiler vectorises it, then round_float itself for the elements outside
// the short path's exponent range (zeros, subnormals, values near overflow, inf, NaN). Out is
// the code type, or float for the values themselves.
template <class Out>
std::uint8_t round_nearest_block(const format& f, const float* __restrict in, Out* __restrict out, std::size_t n) {
  const int shift = 23 - f.frac_bits;
  const std::uint32_t lo = static_cast<std::uint32_t>(127 + emin(f));
  const std::uint32_t span = static_cast<std::uint32_t>(emax(f) - 1 - emin(f));
  const std::uint32_t half = shift > 0 ? (std::uint32_t{1} << (shift - 1)) - 1 : 0;
  const std::uint32_t low_mask = (std::uint32_t{1} << shift) - 1;
  const std::uint32_t rebias = static_cast<std::uint32_t>(f.bias - 127) << f.frac_bits;
  const int sign_shift = 32 - width(f);
  const bool negative_zero = has_negative_zero(f);
  std::uint32_t slow = 0, inexact = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(in[i]);
    const std::uint32_t mag = bits & 0x7fffffffu;
    const std::uint32_t kept = shift > 0 ? (mag + half + ((mag >> shift) & 1)) >> shift : mag;
    const bool zero = mag == 0;  // exact; a -0 without a code of its own (fnuz) goes the long way
    slow |= static_cast<std::uint32_t>(zero ? (bits != 0 && !negative_zero) : ((mag >> 23) - lo) > span);
    inexact |= mag & low_mask;
    if constexpr (std::is_same_v<Out, float>) {
      out[i] = std::bit_cast<float>((bits & 0x80000000u) | (kept << shift));
    } else {
      out[i] = static_cast<Out>(((bits & 0x80000000u) >> sign_shift) | (zero ? 0 : kept + rebias));
    }
  }
  std::uint8_t flags = inexact != 0 ? flag::inexact : 0;
  if (slow == 0) return flags;
  flags = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto res = round_float(f, in[i]);
    flags |= res.flags;
    if constexpr (std::is_same_v<Out, float>) {
      out[i] = code_to_float(f, res.code);
    } else {
      out[i] = static_cast<Out>(res.code);
    }
  }
  return flags;
}

bool short_path(const format& f) { return f.is_signed && f.has_zero && f.frac_bits <= 23; }

}  // namespace

expected<format> storage_format(const format& f) {
  if (auto bad = check(f)) return error{*bad};
  const std::string name = to_string(f);
  if (!f.is_signed || !f.has_zero)
    return error{"storage format '" + name + "': a tensor format needs a sign and a zero"};
  if (f.frac_bits > 23 || emax(f) > 127 || emin(f) - (f.subnormals ? f.frac_bits : 0) < -149)
    return error{"storage format '" + name +
                 "': its values must all be binary32 values (at most 23 fraction bits, exponents -149..127)"};
  return f;
}

stored_tensor::stored_tensor(const format& f, std::size_t n) : fmt_(f), size_(n) {
  assert(storage_format(f).has_value());
  if (width(f) <= 16) {
    narrow_.assign(n, 0);
    if (!(f == formats::bf16)) table_ = decode_table(f);  // bf16 decodes by a shift
  } else {
    wide_.assign(n, 0.0f);
  }
}

std::size_t stored_tensor::bytes() const { return size_ * (width(fmt_) <= 16 ? 2 : 4); }

void stored_tensor::load(std::size_t first, std::span<float> out) const {
  assert(first + out.size() <= size_);
  if (width(fmt_) > 16) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = wide_[first + i];
  } else if (!table_) {
    kernels::bf16_values(narrow_.data() + first, out.size(), out.data());
  } else {
    const float* t = table_->data();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = t[narrow_[first + i]];
  }
}

std::uint16_t* stored_tensor::codes(std::size_t first) {
  assert(width(fmt_) <= 16 && first <= size_);
  return narrow_.data() + first;
}

float stored_tensor::get(std::size_t i) const {
  float v;
  load(i, {&v, 1});
  return v;
}

std::vector<float> stored_tensor::values() const {
  std::vector<float> v(size_);
  load(0, v);
  return v;
}

std::uint8_t stored_tensor::store(std::size_t first, std::span<const float> in, const rounding& r, sr_stream sr) {
  assert(first + in.size() <= size_);
  const bool nearest = r.mode == round_mode::nearest_even && r.overflow == overflow_policy::ieee;
  if (width(fmt_) > 16) {
    float* out = wide_.data() + first;
    if (nearest && fmt_ == formats::fp32) return store_fp32(in.data(), out, in.size());
    if (nearest) return round_nearest_block(fmt_, in.data(), out, in.size());
    return store_each(fmt_, in, r, sr, first,
                      [&](std::size_t i, std::uint32_t code) { out[i] = code_to_float(fmt_, code); });
  }
  std::uint16_t* out = narrow_.data() + first;
  if (in.size() >= kArrayFrom) return store_codes(fmt_, in, r, sr, first, out);
  if (nearest) return round_nearest_block(fmt_, in.data(), out, in.size());
  return store_each(fmt_, in, r, sr, first,
                    [&](std::size_t i, std::uint32_t code) { out[i] = static_cast<std::uint16_t>(code); });
}

void round_to_values(const format& f, std::span<const float> in, std::span<float> out) {
  assert(in.size() == out.size() && in.data() != out.data());
  if (short_path(f)) {
    round_nearest_block(f, in.data(), out.data(), in.size());
  } else {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = code_to_float(f, round_float(f, in[i]).code);
  }
}

void stored_tensor::fill_zero() {
  std::fill(narrow_.begin(), narrow_.end(), std::uint16_t{0});
  std::fill(wide_.begin(), wide_.end(), 0.0f);
}

void stored_tensor::prefetch(std::size_t first, std::size_t n) const {
  if (first >= size_) return;
  n = std::min(n, size_ - first);
  const std::size_t bytes = width(fmt_) > 16 ? 4 : 2;
  const char* p = width(fmt_) > 16 ? reinterpret_cast<const char*>(wide_.data() + first)
                                   : reinterpret_cast<const char*>(narrow_.data() + first);
  for (std::size_t b = 0; b < n * bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
}

std::uint32_t stored_tensor::code(std::size_t i) const {
  assert(i < size_);
  return width(fmt_) > 16 ? round_float(fmt_, wide_[i]).code : narrow_[i];
}

}  // namespace fpemu::training
