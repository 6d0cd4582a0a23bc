// Boost.Math in e8m23 (the binary32 layout, 24-bit significand: Boost.Math picks its
// float-precision approximations) and in e6m9, a user format (bias 31, subnormals), every step
// against MPFR (boost_math_run.hpp).
#include <doctest/doctest.h>

#include "boost_math_run.hpp"

using fpemu::round_mode;
using fpemu::rounding;

namespace {
// "e6m9": 6 exponent bits, 9 fraction bits, bias 2^5 - 1, IEEE encoding, subnormals.
constexpr fpemu::format e6m9{6, 9, 31};
}  // namespace

TEST_CASE(
    "Boost.Math in e8m23: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == MPFR; rne rd") {
  boost_test::compare_with_mpfr<fpemu::formats::fp32, rounding{round_mode::nearest_even}>("e8m23 rne");
  boost_test::compare_with_mpfr<fpemu::formats::fp32, rounding{round_mode::toward_negative}>("e8m23 rd");
}
TEST_CASE("Boost.Math in e6m9: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == MPFR; rne") {
  boost_test::compare_with_mpfr<e6m9, rounding{round_mode::nearest_even}>("e6m9 rne");
}
