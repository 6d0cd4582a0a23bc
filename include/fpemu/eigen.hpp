// Eigen::NumTraits for fpemu::fp<F>, so that Eigen matrices of emulated formats work:
// Eigen::Matrix<fpemu::bf16_t, 3, 4> a; ... a * b rounds every product and every partial sum
// into bf16 (round to nearest even), exactly as the scalar operators of value.hpp do.
//
// Eigen finds abs, sqrt, isnan, isinf and isfinite for fp<F> by argument-dependent lookup in
// value.hpp; nothing else is needed. This header is separate so that value.hpp stays free of
// Eigen.
//
// Order of accumulation: an emulated add or multiply costs on the order of a hundred native
// instructions, and AddCost/MulCost say so. The same numbers exceed EIGEN_UNROLLING_LIMIT, so
// Eigen never unrolls a reduction into a pairwise tree: a sum or a small (coefficient-based)
// product adds its terms left to right, for fixed and dynamic sizes alike. Large dynamic
// products (rows + cols + depth >= 20) go through Eigen's blocked GEMM kernel, whose order is
// Eigen's; code that needs a specified order uses the reference routines in analysis/.
#pragma once

#include <limits>

#include <Eigen/Core>

#include "fpemu/format.hpp"
#include "fpemu/limits.hpp"
#include "fpemu/value.hpp"

namespace Eigen {

template <fpemu::format F>
struct NumTraits<fpemu::fp<F>> : GenericNumTraits<fpemu::fp<F>> {
  using T = fpemu::fp<F>;
  using Real = T;
  using NonInteger = T;
  using Literal = T;
  using Nested = T;

  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = F.is_signed ? 1 : 0,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 150,
    MulCost = 150,
  };

  static constexpr T epsilon() { return std::numeric_limits<T>::epsilon(); }
  // About eps^(3/4), as Eigen chooses for its own types (float 1e-5, double 1e-12, half 1e-2,
  // bfloat16 5e-2): 2^-floor(3(p-1)/4).
  static constexpr T dummy_precision() { return T(fpemu::pow2(-(3 * (fpemu::precision(F) - 1) / 4))); }
  static constexpr T highest() { return std::numeric_limits<T>::max(); }
  // Not -highest(): an unsigned format has no negative values.
  static constexpr T lowest() { return std::numeric_limits<T>::lowest(); }
  static constexpr T infinity() { return std::numeric_limits<T>::infinity(); }
  static constexpr T quiet_NaN() { return std::numeric_limits<T>::quiet_NaN(); }
  static constexpr int digits10() { return std::numeric_limits<T>::digits10; }
  static constexpr int digits() { return std::numeric_limits<T>::digits; }
  static constexpr int min_exponent() { return std::numeric_limits<T>::min_exponent; }
  static constexpr int max_exponent() { return std::numeric_limits<T>::max_exponent; }
};

}  // namespace Eigen
