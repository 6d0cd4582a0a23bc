// Boost.Math in one format and mode of each kind, every step against MPFR (boost_math_run.hpp):
// the default suite's share of the sweep. The opt-in suite 'boost-math' runs all 20 pairs
// (boost_math_bf16.cpp, boost_math_fp16.cpp, boost_math_8bit.cpp, boost_math_mx.cpp,
// boost_math_wide.cpp).
#include <doctest/doctest.h>

#include "boost_math_run.hpp"

using fpemu::round_mode;
using fpemu::rounding;
namespace F = fpemu::formats;

TEST_CASE(
    "Boost.Math in bf16 rne, fp16 rz, e4m3fn rne, e2m1fn rne: every step of exp log sqrt erf tgamma, 2 quadratures and "
    "3 root finders == MPFR") {
  boost_test::compare_with_mpfr<F::bf16, rounding{round_mode::nearest_even}>("bf16 rne");
  boost_test::compare_with_mpfr<F::fp16, rounding{round_mode::toward_zero}>("fp16 rz");
  boost_test::compare_with_mpfr<F::e4m3fn, rounding{round_mode::nearest_even}>("e4m3fn rne");
  boost_test::compare_with_mpfr<F::e2m1fn, rounding{round_mode::nearest_even}>("e2m1fn rne");
}
