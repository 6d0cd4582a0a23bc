// See lead_maxima.hpp. Compiled once per Highway target (hwy/foreach_target.h re-includes this
// file), as double_dot.cpp is.
#include "analysis/reference/lead_maxima.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "analysis/reference/lead_maxima.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fpemu::analysis::lead_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 32 columns a step (one vector on AVX-512, two on AVX2, four on SSE4), the maxima in registers
// over the block's positions.
void LeadPairMaxima(const std::int16_t* a_lead, const std::int16_t* a_normal, const std::int16_t* b_lead,
                    const std::int16_t* b_normal, std::size_t ldb, std::size_t lo, std::size_t hi,
                    std::size_t columns, std::int16_t floor, std::int16_t* all, std::int16_t* normal) {
  const hn::ScalableTag<std::int16_t> d;
  constexpr std::size_t kStep = 32;
  const std::size_t L = hn::Lanes(d);
  for (std::size_t j0 = 0; j0 < columns; j0 += kStep) {
    for (std::size_t j = j0; j < j0 + kStep; j += L) {
      auto top = hn::Set(d, floor), top_normal = top;
      for (std::size_t q = lo; q < hi; ++q) {
        top = hn::Max(top, hn::Add(hn::Set(d, a_lead[q]), hn::LoadU(d, b_lead + q * ldb + j)));
        top_normal = hn::Max(top_normal, hn::Add(hn::Set(d, a_normal[q]), hn::LoadU(d, b_normal + q * ldb + j)));
      }
      hn::StoreU(top, d, all + j);
      hn::StoreU(top_normal, d, normal + j);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace fpemu::analysis::lead_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::analysis {
// HWY_DYNAMIC_DISPATCH is given the name unqualified, from where it is visible: a build that
// defines HWY_COMPILE_ONLY_STATIC calls N_<static target>::name directly, which a qualified name
// would break.
namespace lead_simd {
HWY_EXPORT(LeadPairMaxima);
}  // namespace lead_simd

void lead_pair_maxima(const std::int16_t* a_lead, const std::int16_t* a_normal, const std::int16_t* b_lead,
                      const std::int16_t* b_normal, std::size_t ldb, std::size_t lo, std::size_t hi,
                      std::size_t columns, std::int16_t floor, std::int16_t* all, std::int16_t* normal) {
  using namespace lead_simd;
  HWY_DYNAMIC_DISPATCH(LeadPairMaxima)(a_lead, a_normal, b_lead, b_normal, ldb, lo, hi, columns, floor, all, normal);
}

}  // namespace fpemu::analysis
#endif  // HWY_ONCE
