#include "analysis/reference/fixed_dot.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <climits>

namespace fpemu::analysis {

namespace {

__extension__ typedef __int128 i128;

constexpr int kSignificandBits = 31;  // |m| < 2^31: a product fits an int64
constexpr int kWindowBits = 126;      // the sum's magnitude stays below 2^126 < 2^127

int bit_length(std::uint64_t x) { return 64 - std::countl_zero(x); }

int trailing_zeros(detail::u128 x) {  // x != 0
  const auto low = static_cast<std::uint64_t>(x);
  return low != 0 ? std::countr_zero(low) : 64 + std::countr_zero(static_cast<std::uint64_t>(x >> 64));
}

}  // namespace

fixed_vectors::fixed_vectors(std::span<const unpacked> values, int n, int K)
    : k_(K), m_(values.size()), e_(values.size()), low_(static_cast<std::size_t>(n), INT_MAX),
      top_(static_cast<std::size_t>(n), INT_MIN), ok_(static_cast<std::size_t>(n), 1) {
  assert(values.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(K));
  for (int v = 0; v < n; ++v) {
    const std::size_t first = static_cast<std::size_t>(v) * K;
    for (std::size_t i = first; i < first + static_cast<std::size_t>(K); ++i) {
      const unpacked& x = values[i];
      if (x.cls == value_class::zero || (x.cls == value_class::finite && x.sig == 0 && !x.sticky)) continue;
      if (x.cls != value_class::finite || x.sticky) {
        ok_[static_cast<std::size_t>(v)] = 0;
        continue;
      }
      const int tz = trailing_zeros(x.sig);
      const detail::u128 sig = x.sig >> tz;
      if (sig >> kSignificandBits != 0) {
        ok_[static_cast<std::size_t>(v)] = 0;
        continue;
      }
      const auto mag = static_cast<std::int64_t>(sig);
      m_[i] = x.negative ? -mag : mag;
      e_[i] = x.exp + tz;
      low_[static_cast<std::size_t>(v)] = std::min(low_[static_cast<std::size_t>(v)], e_[i]);
      top_[static_cast<std::size_t>(v)] =
          std::max(top_[static_cast<std::size_t>(v)], e_[i] + bit_length(static_cast<std::uint64_t>(mag)));
    }
    for (std::size_t i = first; i < first + static_cast<std::size_t>(K); ++i)
      if (m_[i] == 0) e_[i] = low_[static_cast<std::size_t>(v)] == INT_MAX ? 0 : low_[static_cast<std::size_t>(v)];
  }
}

std::optional<fixed_dot_result> fixed_dot(const fixed_vectors& a, int i, const fixed_vectors& b, int j) {
  const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
  assert(a.k_ == b.k_);
  if (!a.ok_[ui] || !b.ok_[uj] || a.low_[ui] == INT_MAX || b.low_[uj] == INT_MAX) return std::nullopt;
  const int e0 = a.low_[ui] + b.low_[uj];
  // Every product lies below 2^(top_a + top_b); K of them below 2^(that + log2(K + 1)).
  const int span = a.top_[ui] + b.top_[uj] - e0 + bit_length(static_cast<std::uint64_t>(a.k_));
  if (span > kWindowBits) return std::nullopt;
  const std::size_t fa = ui * static_cast<std::size_t>(a.k_), fb = uj * static_cast<std::size_t>(b.k_);
  const std::int64_t* ma = &a.m_[fa];
  const std::int64_t* mb = &b.m_[fb];
  const int* ea = &a.e_[fa];
  const int* eb = &b.e_[fb];
  i128 sum = 0;
  detail::u128 magnitude = 0;
  for (int k = 0; k < a.k_; ++k) {
    const std::int64_t p = ma[k] * mb[k];  // |p| < 2^62
    const int shift = ea[k] + eb[k] - e0;    // >= 0: each exponent is at least its vector's lowest
    const detail::u128 term = static_cast<detail::u128>(p < 0 ? -p : p) << shift;  // < 2^126 (span)
    sum += p < 0 ? -static_cast<i128>(term) : static_cast<i128>(term);
    magnitude += term;
  }
  if (sum == 0) return std::nullopt;  // exact_accumulator keeps the sign of an exact zero
  const bool negative = sum < 0;
  const auto size = static_cast<detail::u128>(negative ? -sum : sum);
  return fixed_dot_result{make_finite(negative, size, e0), make_finite(false, magnitude, e0)};
}

}  // namespace fpemu::analysis
