// Accumulator models: how a running sum of exact products (or of values, as products with 1) is
// kept. One interface serves summation, dot products, GEMM and the `mma` command:
//
//  - format:    the running sum is rounded into a format after every addition,
//               s = round(s + a*b) with the product exact (one rounding per step, any mode,
//               stochastic rounding included);
//  - block_fma: the tensor-core model of block_fma.hpp; products are buffered into blocks of
//               model.block.block_size, in order, and each block's rounded result is the next
//               block's C;
//  - exact:     a wide fixed-point sum, rounded once at the end (ground truth).
//
// Promotion (DeepSeek-V3, CUTLASS "two-level" accumulation): every `promote_every` products the
// partial sum p is folded into a second register R = round_R(p * scale + R) by one fused
// multiply-add, and the partial restarts at zero.
#pragma once

#include <cstdint>
#include <vector>

#include "fpemu/block_fma.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/format.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu {

enum class accumulator_kind : std::uint8_t { format, block_fma, exact };

struct accumulator_model {
  accumulator_kind kind = accumulator_kind::format;
  format acc = formats::fp32;  // kind == format: the running sum's format
  rounding acc_rounding{};     // kind == format: its rounding
  block_fma_model block{};     // kind == block_fma
  int promote_every = 0;       // products per promotion; 0 = never
  format promoted = formats::fp32;
  rounding promoted_rounding{};  // nearest-even
};


// C + sum a_i * b_i accumulated in order under a model. Not thread-safe; cheap to copy.
class dot_accumulator {
 public:
  dot_accumulator(const accumulator_model& m, const format& fa, const format& fb, sr_stream sr = {})
      : m_(m), fa_(fa), fb_(fb), sr_(sr) {
    if (m_.kind == accumulator_kind::block_fma) {
      a_.reserve(static_cast<std::size_t>(m_.block.block_size));
      b_.reserve(static_cast<std::size_t>(m_.block.block_size));
    }
    reset();
  }

  // Starts a new sum at C (a code of format fc). With promotion C starts the promoted register;
  // without, a block chain starts from C as the model reads the instruction's C (first_c).
  // The k-th rounding of this sum takes random_bits(seed, stream, first_index + k).
  void reset(const format& fc, std::uint32_t c, sr_stream sr) {
    sr_ = sr;
    reset(fc, c);
  }
  void reset(const format& fc, std::uint32_t c) {
    rounding_index_ = 0;
    a_.clear();
    b_.clear();
    sa_.clear();
    sb_.clear();
    exact_.clear();
    in_group_ = 0;
    flags_ = 0;
    if (m_.promote_every > 0) {
      promoted_ = convert(m_.promoted, fc, c, m_.promoted_rounding).code;
      partial_format_ = partial_format();
      partial_ = 0;
    } else {
      partial_format_ = fc;
      partial_ = m_.kind == accumulator_kind::block_fma ? first_c(m_.block, fc, c) : c;
      if (m_.kind == accumulator_kind::exact) exact_.add(decode(fc, c));
    }
  }
  void reset() { reset(formats::fp32, 0); }

  // Per-group scale for promotion (DeepSeek-V3 tile scales): applied when the group is folded.
  void set_group_scale(const format& fs, std::uint32_t scale) {
    scale_format_ = fs;
    scale_ = scale;
  }

  // Block scales (a block-scaled model: block.scale_block > 0): the pair for the next
  // scale_block products, set before the first of them; f is the scale codes' format.
  void set_block_scales(const format& f, std::uint32_t sa, std::uint32_t sb) {
    block_scale_format_ = f;
    sa_.push_back(sa);
    sb_.push_back(sb);
  }

  void add_product(std::uint32_t a, std::uint32_t b) {
    switch (m_.kind) {
      case accumulator_kind::format: {
        const exact_result e =
            exact_fma(decode(fa_, a), decode(fb_, b), decode(partial_format_, partial_), m_.acc_rounding.mode);
        const rounded r = round_exact(m_.acc, e, m_.acc_rounding, next_random());
        partial_ = r.code;
        partial_format_ = m_.acc;
        flags_ |= r.flags;
        break;
      }
      case accumulator_kind::block_fma:
        a_.push_back(a);
        b_.push_back(b);
        if (static_cast<int>(a_.size()) == m_.block.block_size) flush_block();
        break;
      case accumulator_kind::exact: exact_.add_product(decode(fa_, a), decode(fb_, b)); break;
    }
    if (m_.promote_every > 0 && ++in_group_ == m_.promote_every) promote();
  }

  // The result rounded into `out` (one more rounding, exact when out holds the accumulator).
  rounded result(const format& out, const rounding& r = {}) {
    flush_block();
    if (m_.promote_every > 0) {
      if (in_group_ > 0) promote();
      return convert(out, m_.promoted, promoted_, r);
    }
    if (m_.kind == accumulator_kind::exact) return exact_.round(out, r, next_random());
    return convert(out, partial_format_, partial_, r);
  }

  // The current exact value of the sum (after folding any pending block or group), for an
  // epilogue that rounds alpha * acc + beta * c once.
  unpacked value() {
    flush_block();
    if (m_.promote_every > 0) {
      if (in_group_ > 0) promote();
      return decode(m_.promoted, promoted_);
    }
    if (m_.kind == accumulator_kind::exact) return exact_.value();
    return decode(partial_format_, partial_);
  }

  // The union of IEEE flags raised by the accumulator's own roundings.
  std::uint8_t flags() const { return flags_; }

 private:
  format partial_format() const { return m_.kind == accumulator_kind::block_fma ? m_.block.acc : m_.acc; }

  std::uint64_t next_random() { return random_bits(sr_.seed, sr_.stream, sr_.first_index + rounding_index_++); }

  void flush_block() {
    if (m_.kind != accumulator_kind::block_fma || a_.empty()) return;
    const block_scales scales{block_scale_format_, sa_.data(), sb_.data()};
    const bool scaled = m_.block.scale_block > 0 && !sa_.empty();
    const rounded r = block_fma_step(m_.block, fa_, a_.data(), fb_, b_.data(), static_cast<int>(a_.size()),
                                     partial_format_, partial_, scaled ? &scales : nullptr);
    sa_.clear();
    sb_.clear();
    partial_ = r.code;
    partial_format_ = m_.block.acc;
    flags_ |= r.flags;
    a_.clear();
    b_.clear();
  }

  // R = round(partial * scale + R); the partial restarts at zero.
  void promote() {
    flush_block();
    unpacked p = m_.kind == accumulator_kind::exact ? exact_.value() : decode(partial_format_, partial_);
    const exact_result e = exact_fma(p, decode(scale_format_, scale_), decode(m_.promoted, promoted_), m_.promoted_rounding.mode);
    const rounded r = round_exact(m_.promoted, e, m_.promoted_rounding, next_random());
    promoted_ = r.code;
    flags_ |= r.flags;
    partial_format_ = partial_format();
    partial_ = 0;
    exact_.clear();
    in_group_ = 0;
  }

  accumulator_model m_;
  format fa_, fb_;
  sr_stream sr_;
  std::vector<std::uint32_t> a_, b_;  // the block being filled
  std::vector<std::uint32_t> sa_, sb_;  // and its block scales
  format block_scale_format_ = formats::e8m0fnu;
  exact_accumulator exact_;
  format partial_format_ = formats::fp32;
  std::uint32_t partial_ = 0;
  std::uint32_t promoted_ = 0;
  format scale_format_ = formats::fp32;
  std::uint32_t scale_ = 0x3f800000;  // 1.0f
  int in_group_ = 0;
  std::uint64_t rounding_index_ = 0;
  std::uint8_t flags_ = 0;
};

}  // namespace fpemu
