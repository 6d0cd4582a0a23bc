// The core, fp<F> and the Boost backend against cpp_bin_float on every operand pair of every
// format of at most 8 bits with subnormals (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, e3m2fn, e2m3fn,
// e2m1fn): add, sub, mul, div on all pairs and sqrt on all codes, rne rna rz ru rd rto.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "bin_float_check.hpp"

namespace {

using boost_test::arith_op;

template <fpemu::format F>
void all_pairs(const char* name) {
  const std::uint32_t n = std::uint32_t{1} << fpemu::width(F);
  for (const arith_op op : {arith_op::add, arith_op::sub, arith_op::mul, arith_op::div}) {
    boost_test::bin_float_checker<F> chk(std::string("bin_float_8bit: ") + boost_test::op_name(op) + " " + name);
    for (std::uint32_t a = 0; a < n; ++a)
      for (std::uint32_t b = 0; b < n; ++b) chk.check(op, a, b);
    chk.finish(std::uint64_t{n} * n * 6, std::to_string(std::uint64_t{n} * n) + " pairs x 6 modes");
  }
  boost_test::bin_float_checker<F> chk(std::string("bin_float_8bit: sqrt ") + name);
  for (std::uint32_t a = 0; a < n; ++a) chk.check(arith_op::sqrt, a, 0);
  chk.finish(std::uint64_t{n} * 6, std::to_string(n) + " codes x 6 modes");
}

}  // namespace

namespace F = fpemu::formats;

TEST_CASE("e4m3fn: all pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  all_pairs<F::e4m3fn>("e4m3fn");
}
TEST_CASE("e5m2: all pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  all_pairs<F::e5m2>("e5m2");
}
TEST_CASE("e4m3fnuz: all pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  all_pairs<F::e4m3fnuz>("e4m3fnuz");
}
TEST_CASE("e5m2fnuz: all pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  all_pairs<F::e5m2fnuz>("e5m2fnuz");
}
TEST_CASE("e3m2fn e2m3fn e2m1fn: all pairs add/sub/mul/div and all codes sqrt, rne rna rz ru rd rto == cpp_bin_float") {
  all_pairs<F::e3m2fn>("e3m2fn");
  all_pairs<F::e2m3fn>("e2m3fn");
  all_pairs<F::e2m1fn>("e2m1fn");
}
