// The core, fp<F> and the Boost backend against cpp_bin_float on bf16 and fp16: 10^6 random
// operand pairs per operation (fixed seed; half uniform over all 65536 codes, so NaNs,
// infinities, zeros and subnormals all occur, half with exponents within 2 of each other, so
// sums cancel and round near binade edges) for add, sub, mul, div, and sqrt on all 65536 codes,
// rne rna rz ru rd rto.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>

#include "bin_float_check.hpp"

namespace {

using boost_test::arith_op;

constexpr std::uint64_t kPairs = 1000000;

// A code whose exponent field is within 2 of a's (clamped to the finite fields), with random sign
// and fraction.
std::uint32_t near_code(const fpemu::format& f, std::uint32_t a, std::uint64_t bits) {
  const int top_field = (1 << f.exp_bits) - 2;  // the largest finite field of an ieee format
  int field = static_cast<int>((a >> f.frac_bits) & ((1u << f.exp_bits) - 1)) + static_cast<int>(bits % 5) - 2;
  field = field < 0 ? 0 : (field > top_field ? top_field : field);
  const std::uint32_t fraction = static_cast<std::uint32_t>(bits >> 8) & ((1u << f.frac_bits) - 1);
  const std::uint32_t sign = ((bits >> 60) & 1) != 0 ? 1u << (f.exp_bits + f.frac_bits) : 0;
  return sign | (static_cast<std::uint32_t>(field) << f.frac_bits) | fraction;
}

template <fpemu::format F>
void random_pairs(const char* name) {
  static_assert(fpemu::width(F) == 16 && F.encoding == fpemu::nonfinite::ieee);
  for (const arith_op op : {arith_op::add, arith_op::sub, arith_op::mul, arith_op::div}) {
    boost_test::bin_float_checker<F> chk(std::string("bin_float_16bit: ") + boost_test::op_name(op) + " " + name);
    std::mt19937_64 rng(0x5eedb0057ull + static_cast<std::uint64_t>(op));
    for (std::uint64_t i = 0; i < kPairs; ++i) {
      const std::uint64_t r = rng();
      const auto a = static_cast<std::uint32_t>(r & 0xffff);
      const std::uint32_t b = i % 2 == 0 ? static_cast<std::uint32_t>((r >> 16) & 0xffff) : near_code(F, a, rng());
      chk.check(op, a, b);
    }
    chk.finish(kPairs * 6, std::to_string(kPairs) + " random pairs x 6 modes");
  }
  boost_test::bin_float_checker<F> chk(std::string("bin_float_16bit: sqrt ") + name);
  for (std::uint32_t a = 0; a < 65536; ++a) chk.check(arith_op::sqrt, a, 0);
  chk.finish(65536 * 6, "65536 codes x 6 modes");
}

}  // namespace

TEST_CASE("bf16: 1e6 random pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  random_pairs<fpemu::formats::bf16>("bf16");
}
TEST_CASE("fp16: 1e6 random pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  random_pairs<fpemu::formats::fp16>("fp16");
}
