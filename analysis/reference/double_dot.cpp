// Exact dot products in double arithmetic (see double_dot.hpp for why they are exact).
//
// The kernel is compiled once per Highway target (hwy/foreach_target.h re-includes this file) and
// the best one the CPU has is picked at run time, as in gemm_kernels.cpp. A tile of R rows of A
// (broadcast from their rows) times one panel of B (kPanel columns interleaved by k) keeps 2 R V
// accumulators, the sums and the magnitude sums, in registers over all of K; the order of the
// additions is free because every one of them is exact where the result is used.
#ifndef FPEMU_DOUBLE_DOT_SHARED
#define FPEMU_DOUBLE_DOT_SHARED

#include "analysis/reference/double_dot.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstring>

namespace fpemu::analysis {
namespace double_simd {

// What a tile kernel needs: R rows of a from row i (stride K), one panel, its outputs.
struct tile_job {
  const double* a = nullptr;
  std::size_t lda = 0;
  const double* panel = nullptr;
  int K = 0;
  double* sum = nullptr;
  double* mag = nullptr;
  std::size_t ldc = 0;  // stride of sum and mag between rows
};

struct bits_of {
  int low = INT_MAX, top = INT_MIN;  // last-bit exponent; |x| < 2^top
};

// x finite and non-zero. A double is mant 2^(e - 1074), e its biased exponent field (1 for
// subnormals, with no hidden bit).
inline bits_of bits(double x) {
  const auto u = std::bit_cast<std::uint64_t>(x);
  const auto field = static_cast<int>((u >> 52) & 0x7ff);
  const std::uint64_t frac = u & ((std::uint64_t{1} << 52) - 1);
  const std::uint64_t mant = field == 0 ? frac : frac | std::uint64_t{1} << 52;
  const int e = (field == 0 ? 1 : field) - 1075;
  return {e + std::countr_zero(mant), e + static_cast<int>(std::bit_width(mant))};
}

// Vector v's bits, and x set to 0 with bad = 1 where it is not finite (double_vectors).
inline void add_bits(double& x, std::int64_t& low, std::int64_t& top, std::int64_t& bad) {
  if (!std::isfinite(x)) {
    bad = 1;
    x = 0;  // the kernel's sums for this vector are discarded; keep them quiet
  } else if (x != 0) {
    const bits_of b = bits(x);
    low = std::min<std::int64_t>(low, b.low);
    top = std::max<std::int64_t>(top, b.top);
  }
}

}  // namespace double_simd
}  // namespace fpemu::analysis

#endif  // FPEMU_DOUBLE_DOT_SHARED

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "analysis/reference/double_dot.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fpemu::analysis::double_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::ScalableTag<double>;
using VD = hn::Vec<DD>;

// Vectors per panel, and rows per tile: 2 R V accumulators about fill the register file (32
// registers with AVX-512, 16 otherwise) beside the panel's V vectors and their magnitudes.
constexpr std::size_t kLanes = HWY_MAX_BYTES / sizeof(double) < 16 ? HWY_MAX_BYTES / sizeof(double) : 16;
constexpr std::size_t kV = static_cast<std::size_t>(double_panels::kPanel) / kLanes;
constexpr std::size_t kRows = kV <= 2 ? 6 : kV <= 4 ? 2 : 1;

// GCC keeps the arrays of vectors in registers only when every loop over them unrolls completely
// (gemm_kernels.cpp), hence HWY_UNROLL on each.
template <std::size_t R>
HWY_NOINLINE void tile(const tile_job& t) {
  const DD d;
  static_assert(kLanes * kV == static_cast<std::size_t>(double_panels::kPanel));
  assert(hn::Lanes(d) == kLanes);
  VD s[R][kV], m[R][kV];
  HWY_UNROLL(8)
  for (std::size_t r = 0; r < R; ++r)
    HWY_UNROLL(8)
    for (std::size_t v = 0; v < kV; ++v) s[r][v] = m[r][v] = hn::Zero(d);
  const double* HWY_RESTRICT bp = t.panel;
  for (int k = 0; k < t.K; ++k, bp += double_panels::kPanel) {
    VD b[kV], bm[kV];
    HWY_UNROLL(8)
    for (std::size_t v = 0; v < kV; ++v) {
      b[v] = hn::LoadU(d, bp + v * kLanes);  // a std::vector, aligned to 16 bytes only
      bm[v] = hn::Abs(b[v]);
    }
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r) {
      const double x = t.a[r * t.lda + static_cast<std::size_t>(k)];
      const VD xv = hn::Set(d, x), xm = hn::Set(d, std::fabs(x));
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kV; ++v) {
        s[r][v] = hn::MulAdd(xv, b[v], s[r][v]);
        m[r][v] = hn::MulAdd(xm, bm[v], m[r][v]);
      }
    }
  }
  HWY_UNROLL(8)
  for (std::size_t r = 0; r < R; ++r)
    HWY_UNROLL(8)
    for (std::size_t v = 0; v < kV; ++v) {
      hn::StoreU(s[r][v], d, t.sum + r * t.ldc + v * kLanes);
      hn::StoreU(m[r][v], d, t.mag + r * t.ldc + v * kLanes);
    }
}

template <std::size_t... R>
void run_tile(std::size_t rows, const tile_job& t, std::index_sequence<R...>) {
  ((rows == R + 1 ? tile<R + 1>(t) : void()), ...);
}

// Rows [r0, r1) of a against every panel, kRows rows at a time, into kPanel-wide scratch rows
// copied out to the N columns of sum and mag.
void gemm_rows(const double* a, int K, int r0, int r1, const double* panels, int N, double* sum, double* mag) {
  HWY_ALIGN double s[kRows * double_panels::kPanel], m[kRows * double_panels::kPanel];
  const auto W = static_cast<std::size_t>(double_panels::kPanel);
  for (int j0 = 0; j0 < N; j0 += double_panels::kPanel) {
    const double* panel = panels + static_cast<std::size_t>(j0) * static_cast<std::size_t>(K);
    const int cols = std::min(double_panels::kPanel, N - j0);
    for (int i = r0; i < r1; i += static_cast<int>(kRows)) {
      const auto rows = static_cast<std::size_t>(std::min(static_cast<int>(kRows), r1 - i));
      const tile_job t{a + static_cast<std::size_t>(i) * static_cast<std::size_t>(K), static_cast<std::size_t>(K),
                       panel, K, s, m, W};
      run_tile(rows, t, std::make_index_sequence<kRows>());
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t out = (static_cast<std::size_t>(i - r0) + r) * static_cast<std::size_t>(N) +
                                static_cast<std::size_t>(j0);
        std::copy_n(s + r * W, cols, sum + out);
        std::copy_n(m + r * W, cols, mag + out);
      }
    }
  }
}

// The k-major vectors' bits (double_vectors): over rows k in [0, K) of n doubles (values[k n + v]),
// per v the lowest last-bit exponent and the highest exponent above the lead of the finite
// non-zero values, as bits() has them, min'ed into low[v] and max'ed into top[v]; the
// non-finite values set to 0, with bad[v] set. For a finite double x = mant 2^e (mant its
// significand with the hidden bit, e = max(field, 1) - 1075), the last bit is the exponent of
// the lowest set bit of mant, a power of two below 2^53 that converts to a double exactly; the
// top is e + 53 for a normal x, and for a subnormal one e + 1 + the exponent of its fraction,
// which converts exactly too.
void KMajorBits(double* values, std::size_t K, std::size_t n, std::int64_t* low, std::int64_t* top,
                std::int64_t* bad) {
  const DD d;
  const hn::RebindToSigned<DD> di;
  const hn::RebindToUnsigned<DD> du;
  const std::size_t L = hn::Lanes(d);
  const auto field_mask = hn::Set(du, 0x7ff), frac_mask = hn::Set(du, (std::uint64_t{1} << 52) - 1);
  const auto hidden = hn::Set(du, std::uint64_t{1} << 52), one = hn::Set(du, 1);
  // The unbiased exponent of a double that is a power of two or, for top, any positive one.
  auto exponent = [&](hn::Vec<decltype(di)> x) {
    return hn::Sub(hn::BitCast(di, hn::ShiftRight<52>(hn::BitCast(du, hn::ConvertTo(d, x)))), hn::Set(di, 1023));
  };
  for (std::size_t k = 0; k < K; ++k) {
    double* row = values + k * n;
    std::size_t v = 0;
    for (; v + L <= n; v += L) {
      const auto u = hn::BitCast(du, hn::LoadU(d, row + v));
      const auto field = hn::And(hn::ShiftRight<52>(u), field_mask);
      const auto frac = hn::And(u, frac_mask);
      const auto not_finite = hn::Eq(field, field_mask);
      const auto subnormal = hn::Eq(field, hn::Zero(du));
      const auto counted = hn::AndNot(not_finite, hn::Or(hn::Ne(field, hn::Zero(du)), hn::Ne(frac, hn::Zero(du))));
      const auto mant = hn::IfThenElse(subnormal, frac, hn::Or(frac, hidden));
      const auto e = hn::Sub(hn::BitCast(di, hn::Max(field, one)), hn::Set(di, 1075));
      const auto lowest = hn::BitCast(di, hn::And(mant, hn::BitCast(du, hn::Neg(hn::BitCast(di, mant)))));
      const auto l = hn::Add(e, exponent(lowest));
      const auto t = hn::Add(e, hn::IfThenElse(hn::RebindMask(di, subnormal),
                                               hn::Add(exponent(hn::BitCast(di, hn::Or(frac, one))), hn::Set(di, 1)),
                                               hn::Set(di, 53)));
      const auto take = hn::RebindMask(di, counted);
      const auto low_v = hn::LoadU(di, low + v), top_v = hn::LoadU(di, top + v);
      hn::StoreU(hn::IfThenElse(take, hn::Min(low_v, l), low_v), di, low + v);
      hn::StoreU(hn::IfThenElse(take, hn::Max(top_v, t), top_v), di, top + v);
      if (!hn::AllFalse(du, not_finite)) {
        hn::StoreU(hn::Or(hn::LoadU(di, bad + v), hn::IfThenElseZero(hn::RebindMask(di, not_finite), hn::Set(di, 1))),
                   di, bad + v);
        hn::StoreU(hn::IfThenZeroElse(hn::RebindMask(d, not_finite), hn::BitCast(d, u)), d, row + v);
      }
    }
    for (; v < n; ++v) add_bits(row[v], low[v], top[v], bad[v]);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace fpemu::analysis::double_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::analysis {
// HWY_DYNAMIC_DISPATCH is given the names unqualified, from where they are visible: a build that
// defines HWY_COMPILE_ONLY_STATIC calls N_<static target>::name directly, which a qualified name
// would break.
namespace double_simd {
HWY_EXPORT(gemm_rows);
HWY_EXPORT(KMajorBits);
}  // namespace double_simd

double_vectors::double_vectors(std::vector<double> values, std::vector<char> exact, int n, int K, bool k_major)
    : n_(n), k_(K), k_major_(k_major), values_(std::move(values)), ok_(std::move(exact)),
      low_(static_cast<std::size_t>(n)), top_(static_cast<std::size_t>(n)) {
  assert(values_.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(K));
  assert(ok_.size() == static_cast<std::size_t>(n));
  // In memory order, whichever the layout: k-major ones (B, the larger operand of a report) in
  // vector lanes.
  const auto un = static_cast<std::size_t>(n), uK = static_cast<std::size_t>(K);
  std::vector<std::int64_t> low(un, INT_MAX), top(un, INT_MIN), bad(un, 0);
  if (k_major) {
    using namespace double_simd;
    HWY_DYNAMIC_DISPATCH(KMajorBits)(values_.data(), uK, un, low.data(), top.data(), bad.data());
  } else {
    for (std::size_t v = 0; v < un; ++v)
      for (std::size_t k = 0; k < uK; ++k) double_simd::add_bits(values_[v * uK + k], low[v], top[v], bad[v]);
  }
  for (std::size_t v = 0; v < un; ++v) {
    low_[v] = static_cast<int>(low[v]);
    top_[v] = static_cast<int>(top[v]);
    if (bad[v] || low[v] == INT_MAX) ok_[v] = 0;  // all zero: a zero sum, left to exact_accumulator's signed zero
  }
}

bool double_dot_exact(const double_vectors& a, int i, const double_vectors& b, int j) {
  const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
  assert(a.k_ == b.k_);
  if (!a.ok_[ui] || !b.ok_[uj]) return false;
  const int e0 = a.low_[ui] + b.low_[uj];
  const int top = a.top_[ui] + b.top_[uj] + std::bit_width(static_cast<unsigned>(a.k_));
  return top - e0 <= 53 && e0 >= -1074 && top <= 1024;
}

bool exact_double_product(double x, double y, double& product) {
  product = x * y;
  if (!std::isfinite(product)) return false;
  if (product == 0) return x == 0 || y == 0;
  // Above 2^-900 the residual x y - product (a multiple of 2^(lead(x y) - 105) below ulp(product))
  // is a double, so the fused multiply-add returns it exactly: zero exactly when nothing was lost.
  return std::fabs(product) >= 0x1p-900 && std::fma(x, y, -product) == 0;
}

double_panels::double_panels(const double_vectors& b)
    : n_(b.count()), k_(b.k()),
      packed_(static_cast<std::size_t>((b.count() + kPanel - 1) / kPanel) * kPanel * static_cast<std::size_t>(b.k())) {
  if (b.k_major()) {
    for (int j0 = 0; j0 < n_; j0 += kPanel)
      for (int k = 0; k < k_; ++k)
        std::copy_n(b.at_k(k, j0), std::min(kPanel, n_ - j0),
                    &packed_[(static_cast<std::size_t>(j0) * static_cast<std::size_t>(k_) + static_cast<std::size_t>(k) * kPanel)]);
    return;
  }
  for (int j = 0; j < n_; ++j) {
    const double* v = b.vector(j);
    double* out = &packed_[static_cast<std::size_t>(j / kPanel) * kPanel * static_cast<std::size_t>(k_) +
                           static_cast<std::size_t>(j % kPanel)];
    for (int k = 0; k < k_; ++k) out[static_cast<std::size_t>(k) * kPanel] = v[k];
  }
}

void double_gemm(const double_vectors& a, int r0, int r1, const double_panels& b, std::span<double> sum,
                 std::span<double> mag) {
  assert(a.k() == b.k());
  assert(sum.size() >= static_cast<std::size_t>(r1 - r0) * static_cast<std::size_t>(b.count()));
  assert(mag.size() == sum.size());
  if (r0 >= r1 || b.count() == 0) return;
  using namespace double_simd;
  HWY_DYNAMIC_DISPATCH(gemm_rows)(a.vector(0), a.k(), r0, r1, b.panel(0), b.count(), sum.data(), mag.data());
}

}  // namespace fpemu::analysis
#endif  // HWY_ONCE
