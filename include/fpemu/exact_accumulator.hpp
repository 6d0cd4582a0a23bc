// Exact sums of values and products of values of any fpemu format: a Kulisch accumulator.
//
// Summation and tensor-core models need a ground truth that never rounds: the exact value of
// sum(x_i) or sum(a_i * b_i), rounded once at the end. This accumulator holds it in a wide
// two's-complement fixed-point integer, so adding a term is exact and the order of the terms
// cannot change the result.
//
// The window, derived from check(format) in src/spec.cpp: every value of a valid format is a
// binary64 value (the check keeps emin - frac_bits >= -1074 and emax <= 1023), i.e. an integer
// multiple of 2^-1074 below 2^1024 in magnitude. A product of two such values is a multiple of
// 2^-2148 below 2^2048. With 64 bits of carry headroom (2^64 such terms) every sum lies below
// 2^2112, so 2148 + 2112 bits and a sign bit, 4261 bits, suffice; 67 limbs of 64 bits give
// 4288: bit 0 weighs 2^-2148 and the sign bit (bit 4287) 2^2139, 91 bits above the largest
// product. A term touches the 3 limbs it overlaps plus however far its carry or borrow runs.
//
// Zeros, infinities and NaN are kept beside the integer:
//  - NaN in, +inf and -inf both added, or 0 * inf -> NaN (the first NaN term's sign; NaNs made
//    here are +NaN); a signaling NaN, inf - inf and 0 * inf also raise `invalid` in round().
//  - otherwise any infinity -> that infinity.
//  - an exactly-zero sum follows IEEE 754-2019 6.3 as if summed term by term: -0 when every
//    term was -0, +0 when every term was +0 ("x + x keeps the sign of x"), else +0, or -0 when
//    rounding toward negative. The empty sum is +0, as in mpfr_sum.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>

#include "fpemu/ops.hpp"
#include "fpemu/round_core.hpp"

namespace fpemu {

class exact_accumulator {
 public:
  static constexpr int limbs = 67;
  static constexpr int lsb_exp = -2148;  // weight of bit 0 is 2^lsb_exp
  static constexpr int bits = 64 * limbs;

  constexpr exact_accumulator() = default;  // zero; defaulted, so host and device alike
  FPEMU_HD constexpr void clear() { *this = exact_accumulator{}; }

  // Adds an exact value; x.sticky must be false (a sticky value is not exact). Its set bits
  // must lie in the window; in a build without asserts bits outside it are dropped.
  FPEMU_HD constexpr void add(const unpacked& x) {
    switch (x.cls) {
      case value_class::nan: note_nan(x.negative, x.signaling); return;
      case value_class::infinite: note_inf(x.negative); return;
      case value_class::zero: note_zero(x.negative); return;
      case value_class::finite: break;
    }
    assert(!x.sticky);
    if (x.sig == 0) return note_zero(x.negative);
    all_neg_zero_ = all_pos_zero_ = false;
    accumulate(x.negative, x.sig, x.exp);
  }

  // Adds a * b exactly (any 128-bit significands: four 64 x 64-bit partial products).
  FPEMU_HD constexpr void add_product(const unpacked& a, const unpacked& b) {
    if (a.cls == value_class::nan || b.cls == value_class::nan) {
      const unpacked& n = a.cls == value_class::nan ? a : b;  // the first NaN, as in exact_mul
      note_nan(n.negative, (a.cls == value_class::nan && a.signaling) || (b.cls == value_class::nan && b.signaling));
      return;
    }
    const bool neg = a.negative != b.negative;
    const bool a_inf = a.cls == value_class::infinite, b_inf = b.cls == value_class::infinite;
    const bool a_zero = a.cls == value_class::zero || (a.sig == 0 && !a_inf);
    const bool b_zero = b.cls == value_class::zero || (b.sig == 0 && !b_inf);
    if ((a_inf && b_zero) || (a_zero && b_inf)) {
      invalid_ = true;
      return note_nan(false, false);
    }
    if (a_inf || b_inf) return note_inf(neg);
    if (a_zero || b_zero) return note_zero(neg);
    assert(!a.sticky && !b.sticky);
    all_neg_zero_ = all_pos_zero_ = false;
    // Odd significands make the lowest partial product carry the product's lowest set bit, so
    // the window check on it is the check on the product.
    const odd x = make_odd(a.sig, a.exp), y = make_odd(b.sig, b.exp);
    const auto al = static_cast<std::uint64_t>(x.sig), ah = static_cast<std::uint64_t>(x.sig >> 64);
    const auto bl = static_cast<std::uint64_t>(y.sig), bh = static_cast<std::uint64_t>(y.sig >> 64);
    const int e = x.exp + y.exp;
    accumulate(neg, detail::u128{al} * bl, e);
    accumulate(neg, detail::u128{al} * bh, e + 64);
    accumulate(neg, detail::u128{ah} * bl, e + 64);
    accumulate(neg, detail::u128{ah} * bh, e + 128);
  }

  FPEMU_HD constexpr void add_code(const format& f, std::uint32_t code) { add(decode(f, code)); }
  FPEMU_HD constexpr void add_product_codes(const format& fa, std::uint32_t a, const format& fb, std::uint32_t b) {
    add_product(decode(fa, a), decode(fb, b));
  }
  FPEMU_HD constexpr void subtract(const unpacked& x) { add(negate(x)); }

  // True when the sum is a (signed) zero: nothing but zeros and exactly cancelling terms.
  FPEMU_HD constexpr bool is_zero() const {
    if (nan_ || pos_inf_ || neg_inf_) return false;
    for (const std::uint64_t w : limb_)
      if (w != 0) return false;
    return true;
  }

  // Whether an invalid operation (sNaN, inf - inf, 0 * inf) went in; round() raises it.
  FPEMU_HD constexpr bool invalid() const { return invalid_; }

  // The sum: the top 128 significant bits of |sum| in sig and `sticky` set when any lower bit
  // is non-zero. The core needs 66 bits below the rounding position; 128 bits leave >= 96 for
  // every format of <= 32 bits, so rounding this value is rounding the exact sum.
  FPEMU_HD constexpr unpacked value(round_mode mode_for_zero_sign = round_mode::nearest_even) const {
    if (nan_ || (pos_inf_ && neg_inf_)) return unpacked{value_class::nan, nan_ && nan_negative_};
    if (pos_inf_ || neg_inf_) return unpacked{value_class::infinite, neg_inf_};
    const bool negative = (limb_[limbs - 1] >> 63) != 0;
    std::array<std::uint64_t, limbs> mag = limb_;
    if (negative) {  // |sum| = ~sum + 1
      std::uint64_t carry = 1;
      for (std::uint64_t& w : mag) {
        w = ~w + carry;
        carry = carry != 0 && w == 0 ? 1 : 0;
      }
    }
    int top = limbs - 1;
    while (top >= 0 && mag[top] == 0) --top;
    if (top < 0) {
      const bool neg_zero = all_neg_zero_ && !all_pos_zero_;
      const bool pos_zero = all_pos_zero_;
      return unpacked{value_class::zero,
                      neg_zero || (!pos_zero && mode_for_zero_sign == round_mode::toward_negative)};
    }
    const int msb = 64 * top + 63 - detail::countl_zero(mag[top]);
    const int start = msb < 128 ? 0 : msb - 127;  // lowest bit kept
    const int index = start / 64, shift = start % 64;
    const auto word = [&](int i) { return i < limbs ? mag[i] : std::uint64_t{0}; };
    const std::uint64_t w0 = word(index), w1 = word(index + 1), w2 = word(index + 2);
    const std::uint64_t lo = shift == 0 ? w0 : (w0 >> shift) | (w1 << (64 - shift));
    const std::uint64_t hi = shift == 0 ? w1 : (w1 >> shift) | (w2 << (64 - shift));
    bool sticky = shift != 0 && (w0 << (64 - shift)) != 0;
    for (int i = 0; i < index && !sticky; ++i) sticky = mag[i] != 0;
    return unpacked{value_class::finite, negative, false, lsb_exp + start,
                    (detail::u128{hi} << 64) | lo, sticky};
  }

  // One correct rounding of the exact sum into f.
  FPEMU_HD constexpr rounded round(const format& f, const rounding& r = {}, std::uint64_t random = 0) const {
    rounded out = fpemu::round(f, value(r.mode), r, random);
    if (invalid_) out.flags |= flag::invalid;
    return out;
  }

  // The nearest binary64 (ties to even, subnormals, overflow to infinity), for reports.
  FPEMU_HD constexpr double to_double() const {
    const unpacked u = value();
    const std::uint64_t sign = u.negative ? std::uint64_t{1} << 63 : 0;
    if (u.cls == value_class::nan) return std::bit_cast<double>(sign | 0x7ff8'0000'0000'0000u);
    if (u.cls == value_class::infinite) return std::bit_cast<double>(sign | 0x7ff0'0000'0000'0000u);
    if (u.cls == value_class::zero) return std::bit_cast<double>(sign);
    // As in the core: leading bit at 125 with the sticky bit jammed far below the 53 kept.
    const detail::aligned a = detail::normalise(u, 125);
    const int e = a.exp + 125;
    int q = (e < -1022 ? -1022 : e) - 52;  // exponent of binary64's quantum
    detail::u128 m = detail::round_to_quantum(a.sig, q - a.exp, detail::magnitude_rule::nearest_even, 0, 0).m;
    if (m == detail::u128{1} << 53) {
      m >>= 1;
      q += 1;
    }
    if (q + 52 > 1023) return std::bit_cast<double>(sign | 0x7ff0'0000'0000'0000u);
    const auto m64 = static_cast<std::uint64_t>(m);
    if (m64 < (std::uint64_t{1} << 52)) return std::bit_cast<double>(sign | m64);  // subnormal or 0
    const auto field = static_cast<std::uint64_t>(q + 52 + 1023);
    return std::bit_cast<double>(sign | (field << 52) | (m64 & ((std::uint64_t{1} << 52) - 1)));
  }

 private:
  struct odd {
    detail::u128 sig;
    int exp;
  };
  FPEMU_HD static constexpr odd make_odd(detail::u128 sig, int exp) {
    const auto lo = static_cast<std::uint64_t>(sig);
    const int tz = lo != 0 ? detail::countr_zero(lo) : 64 + detail::countr_zero(static_cast<std::uint64_t>(sig >> 64));
    return {sig >> tz, exp + tz};
  }

  FPEMU_HD constexpr void note_nan(bool negative, bool signaling) {
    if (!nan_) nan_negative_ = negative;
    nan_ = true;
    invalid_ = invalid_ || signaling;
  }
  FPEMU_HD constexpr void note_inf(bool negative) {
    (negative ? neg_inf_ : pos_inf_) = true;
    invalid_ = invalid_ || (pos_inf_ && neg_inf_);
  }
  FPEMU_HD constexpr void note_zero(bool negative) { (negative ? all_pos_zero_ : all_neg_zero_) = false; }

  // limb_ += sig * 2^exp (or -=): the (up to) three limbs the term overlaps, then the carry.
  FPEMU_HD constexpr void accumulate(bool negative, detail::u128 sig, int exp) {
    int pos = exp - lsb_exp;
    if (pos < 0) {  // below the window: only zero bits may go
      assert(-pos < 128 ? (sig & detail::low_mask(-pos)) == 0 : sig == 0);
      sig = -pos < 128 ? sig >> -pos : 0;
      pos = 0;
    }
    if (sig == 0) return;
    assert(pos + detail::msb128(sig) < bits - 1);  // below the sign bit
    if (pos + detail::msb128(sig) >= bits - 1) return;
    const int index = pos / 64, shift = pos % 64;
    const auto lo = static_cast<std::uint64_t>(sig), hi = static_cast<std::uint64_t>(sig >> 64);
    const std::uint64_t w[3] = {lo << shift, shift == 0 ? hi : (hi << shift) | (lo >> (64 - shift)),
                                shift == 0 ? 0 : hi >> (64 - shift)};
    std::uint64_t carry = 0;  // carry, or borrow when subtracting
    for (int i = index; i < limbs; ++i) {
      const int k = i - index;
      if (k >= 3 && carry == 0) break;
      const detail::u128 t = k < 3 ? w[k] : 0;
      const detail::u128 s = negative ? detail::u128{limb_[i]} - t - carry : detail::u128{limb_[i]} + t + carry;
      limb_[i] = static_cast<std::uint64_t>(s);
      carry = (s >> 64) != 0 ? 1 : 0;
    }
  }

  std::array<std::uint64_t, limbs> limb_{};  // two's complement, limb 0 least significant
  bool nan_ = false, nan_negative_ = false, invalid_ = false;
  bool pos_inf_ = false, neg_inf_ = false;
  bool all_neg_zero_ = true, all_pos_zero_ = true;  // every term so far was -0 (+0)
};

}  // namespace fpemu
