// See kernels.hpp. This file is compiled once per SIMD target (hwy/foreach_target.h re-includes
// it); the part under HWY_ONCE is the dispatcher.
#include "analysis/training/kernels.hpp"

#include <algorithm>
#include <bit>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "analysis/training/kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fpemu::training::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// One step over [0, n) in whole vectors. Kind and rule are template arguments so that each loop
// body is straight-line code; the flags that stay fixed for a step (momentum, the first step,
// nesterov, decay, L2) are tested per vector, always the same way, which the branch predictor
// makes free. Each line names the reference line it is (optimizer.cpp, increments() with the
// identity rounding of update_math::fused, and step_tensor_with<false>).
template <optimizer_kind K, update_rule R>
void StepAs(const coefficients& c, std::size_t n, const step_arrays& a) {
  const DF d;
  const std::size_t L = hn::Lanes(d);
  const VF zero = hn::Zero(d), one = hn::Set(d, 1.0f), minus_one = hn::Set(d, -1.0f);
  const VF l2 = hn::Set(d, c.l2), lr_neg = hn::Set(d, c.lr_neg), momentum = hn::Set(d, c.momentum);
  const VF one_minus_dampening = hn::Set(d, c.one_minus_dampening);
  const VF beta1 = hn::Set(d, c.beta1), one_minus_beta1 = hn::Set(d, c.one_minus_beta1);
  const VF beta2 = hn::Set(d, c.beta2), one_minus_beta2 = hn::Set(d, c.one_minus_beta2);
  const VF step_neg = hn::Set(d, c.step_neg), bias2_sqrt = hn::Set(d, c.bias2_sqrt), eps = hn::Set(d, c.eps);
  const VF decay = hn::Set(d, c.decay), lr_wd = hn::Set(d, c.lr_wd);
  const bool has_l2 = c.l2 != 0, has_momentum = c.momentum != 0, has_decay = c.has_decay;
  for (std::size_t i = 0; i < n; i += L) {
    const VF theta = hn::LoadU(d, a.theta + i);
    VF g = hn::LoadU(d, a.grad + i);
    if (has_l2) g = hn::Add(g, hn::Mul(l2, theta));  // grad.add(param, alpha=wd)
    VF inc;
    if constexpr (K == optimizer_kind::sgd) {
      VF dir = g;
      if (has_momentum) {
        // buf = clone(d) on the first step, else buf.mul_(momentum).add_(d, alpha=1-dampening)
        const VF buf = c.first_step
                           ? dir
                           : hn::Add(hn::Mul(hn::LoadU(d, a.state0 + i), momentum), hn::Mul(one_minus_dampening, dir));
        hn::StoreU(buf, d, a.state0 + i);
        dir = c.nesterov ? hn::Add(dir, hn::Mul(momentum, buf)) : buf;
      }
      inc = hn::Mul(lr_neg, dir);  // param.add_(d, alpha=-lr)
    } else if constexpr (K == optimizer_kind::adam || K == optimizer_kind::adamw) {
      const VF m = hn::Add(hn::Mul(hn::LoadU(d, a.state0 + i), beta1), hn::Mul(one_minus_beta1, g));
      const VF v = hn::Add(hn::Mul(hn::LoadU(d, a.state1 + i), beta2), hn::Mul(hn::Mul(one_minus_beta2, g), g));
      hn::StoreU(m, d, a.state0 + i);
      hn::StoreU(v, d, a.state1 + i);
      const VF denom = hn::Add(hn::Div(hn::Sqrt(v), bias2_sqrt), eps);
      inc = hn::Div(hn::Mul(step_neg, m), denom);  // (value*t1)/t2
    } else {  // lion
      const VF m = hn::LoadU(d, a.state0 + i);
      const VF update = hn::Add(hn::Mul(m, beta1), hn::Mul(one_minus_beta1, g));
      // sign(update), 0 for zeros and NaN as the reference's two comparisons give
      const VF sign = hn::IfThenElse(hn::Gt(update, zero), one, hn::IfThenElse(hn::Lt(update, zero), minus_one, zero));
      inc = hn::Mul(lr_neg, sign);
      hn::StoreU(hn::Add(hn::Mul(m, beta2), hn::Mul(one_minus_beta2, g)), d, a.state0 + i);
    }
    VF out;
    if constexpr (R == update_rule::nearest) {
      out = hn::Add(has_decay ? hn::Mul(theta, decay) : theta, inc);
    } else {
      const VF step = has_decay ? hn::Sub(inc, hn::Mul(lr_wd, theta)) : inc;
      if constexpr (R == update_rule::kahan) {
        const VF u = hn::Add(hn::LoadU(d, a.comp + i), step);
        hn::StoreU(u, d, a.inc + i);
        out = hn::Add(theta, u);
      } else if constexpr (R == update_rule::kahan_zamirai) {
        const VF y = hn::Sub(step, hn::LoadU(d, a.comp + i));
        hn::StoreU(y, d, a.inc + i);
        out = hn::Add(theta, y);
      } else {
        out = hn::Add(theta, step);
      }
    }
    hn::StoreU(out, d, a.out + i);
  }
}

template <optimizer_kind K>
void StepKind(const coefficients& c, update_rule rule, std::size_t n, const step_arrays& a) {
  switch (rule) {
    case update_rule::nearest: return StepAs<K, update_rule::nearest>(c, n, a);
    case update_rule::kahan: return StepAs<K, update_rule::kahan>(c, n, a);
    case update_rule::kahan_zamirai: return StepAs<K, update_rule::kahan_zamirai>(c, n, a);
    case update_rule::stochastic: return StepAs<K, update_rule::stochastic>(c, n, a);
  }
}

void FusedStep(optimizer_kind k, const coefficients& c, update_rule rule, std::size_t n, const step_arrays& a) {
  switch (k) {
    case optimizer_kind::sgd: return StepKind<optimizer_kind::sgd>(c, rule, n, a);
    case optimizer_kind::adam: return StepKind<optimizer_kind::adam>(c, rule, n, a);
    case optimizer_kind::adamw: return StepKind<optimizer_kind::adamw>(c, rule, n, a);
    case optimizer_kind::lion: return StepKind<optimizer_kind::lion>(c, rule, n, a);
  }
}

void Compensation(update_rule rule, std::size_t n, const float* inc, const float* theta, const float* stored,
                  float* comp) {
  const DF d;
  const std::size_t L = hn::Lanes(d);
  if (rule == update_rule::kahan) {
    for (std::size_t i = 0; i < n; i += L)  // k = u + (theta - theta')
      hn::StoreU(hn::Add(hn::LoadU(d, inc + i), hn::Sub(hn::LoadU(d, theta + i), hn::LoadU(d, stored + i))), d, comp + i);
  } else {
    for (std::size_t i = 0; i < n; i += L)  // c = (s - theta) - y
      hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, stored + i), hn::LoadU(d, theta + i)), hn::LoadU(d, inc + i)), d, comp + i);
  }
}

// The bf16 nearest-even code of binary32 lanes that hold no NaN: their bit patterns rounded to
// a multiple of 2^16, ties to an even upper half. bf16 has binary32's sign and exponent fields,
// so its codes are the upper halves of the binary32 patterns of its values, and within a sign the
// patterns order as the values do, with consecutive bf16 values 2^16 patterns apart in every
// binade, subnormals included: rounding the pattern is rounding the value, a tie the midpoint,
// an even upper half an even significand. A carry runs into the exponent field as a rounding
// up to the next binade does, and from the largest finite binade to infinity's code exactly for
// values at or above the largest finite number plus half its ulp: the core's overflow in
// nearest-even with policy ieee. The magnitude stays below 2^31 (an infinity's pattern plus
// 0x7fff), so the sign is kept. Flags are not formed: the optimizer drops them.
template <class DU>
HWY_INLINE hn::Vec<DU> Bf16Nearest(DU du, hn::Vec<DU> bits) {
  const auto odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  return hn::ShiftRight<16>(hn::Add(bits, hn::Add(hn::Set(du, 0x7fffu), odd)));
}

// The first min(count, lanes) lanes of `codes` (32-bit lanes holding 16-bit codes) to p: the
// codes arrays end with their tensors, unpadded, unlike the step's arrays.
template <class DU>
HWY_INLINE void StoreCodes(DU du, hn::Vec<DU> codes, std::size_t count, std::uint16_t* p) {
  const hn::Rebind<std::uint16_t, DU> d16;
  const auto narrow = hn::TruncateTo(d16, codes);
  if (count >= hn::Lanes(du)) return hn::StoreU(narrow, d16, p);
  HWY_ALIGN std::uint16_t lanes[HWY_MAX_BYTES / 4];
  hn::Store(narrow, d16, lanes);
  std::copy_n(lanes, count, p);
}

// NaN lanes among the first `count` (the rest are padding).
HWY_INLINE bool AnyNaN(DF d, hn::Mask<DF> nan, std::size_t count) {
  if (count < hn::Lanes(d)) nan = hn::And(nan, hn::FirstN(d, count));
  return !hn::AllFalse(d, nan);
}

template <update_rule R>
bool KahanStoreAs(std::size_t n, const float* out, const float* inc, const float* theta, std::uint16_t* theta_codes,
                  std::uint16_t* comp_codes) {
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const std::size_t L = hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += L) {
    const VF value = hn::LoadU(d, out + i);
    const auto code = Bf16Nearest(du, hn::BitCast(du, value));
    const VF stored = hn::BitCast(d, hn::ShiftLeft<16>(code));
    const VF theta_i = hn::LoadU(d, theta + i), inc_i = hn::LoadU(d, inc + i);
    const VF comp = R == update_rule::kahan ? hn::Add(inc_i, hn::Sub(theta_i, stored))  // as Compensation
                                            : hn::Sub(hn::Sub(stored, theta_i), inc_i);
    if (AnyNaN(d, hn::Or(hn::IsNaN(value), hn::IsNaN(comp)), n - i)) return false;
    StoreCodes(du, code, n - i, theta_codes + i);
    StoreCodes(du, Bf16Nearest(du, hn::BitCast(du, comp)), n - i, comp_codes + i);
  }
  return true;
}

bool Bf16NearestCodes(std::size_t n, const float* in, std::uint16_t* codes) {
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const std::size_t L = hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += L) {
    const VF value = hn::LoadU(d, in + i);
    if (AnyNaN(d, hn::IsNaN(value), n - i)) return false;
    StoreCodes(du, Bf16Nearest(du, hn::BitCast(du, value)), n - i, codes + i);
  }
  return true;
}

bool KahanStoreBf16(update_rule rule, std::size_t n, const float* out, const float* inc, const float* theta,
                    std::uint16_t* theta_codes, std::uint16_t* comp_codes) {
  if (rule == update_rule::kahan) return KahanStoreAs<update_rule::kahan>(n, out, inc, theta, theta_codes, comp_codes);
  return KahanStoreAs<update_rule::kahan_zamirai>(n, out, inc, theta, theta_codes, comp_codes);
}

// See kernels.hpp: the codes widened in vectors, the tail one by one.
void Bf16Values(const std::uint16_t* codes, std::size_t n, float* out) {
  const hn::ScalableTag<std::uint32_t> d;
  const hn::Rebind<std::uint16_t, decltype(d)> d16;
  const hn::Rebind<float, decltype(d)> df;
  const std::size_t L = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + L <= n; i += L)
    hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(d, hn::LoadU(d16, codes + i)))), df, out + i);
  for (; i < n; ++i) out[i] = std::bit_cast<float>(std::uint32_t{codes[i]} << 16);
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace fpemu::training::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::training::kernels {

HWY_EXPORT(FusedStep);
HWY_EXPORT(Compensation);
HWY_EXPORT(KahanStoreBf16);
HWY_EXPORT(Bf16NearestCodes);
HWY_EXPORT(Bf16Values);
HWY_EXPORT(TargetName);

void fused_step(optimizer_kind k, const coefficients& c, update_rule rule, std::size_t n, const step_arrays& a) {
  HWY_DYNAMIC_DISPATCH(FusedStep)(k, c, rule, n, a);
}

void compensation(update_rule rule, std::size_t n, const float* inc, const float* theta, const float* stored,
                  float* comp) {
  HWY_DYNAMIC_DISPATCH(Compensation)(rule, n, inc, theta, stored, comp);
}

bool kahan_store_bf16(update_rule rule, std::size_t n, const float* out, const float* inc, const float* theta,
                      std::uint16_t* theta_codes, std::uint16_t* comp_codes) {
  return HWY_DYNAMIC_DISPATCH(KahanStoreBf16)(rule, n, out, inc, theta, theta_codes, comp_codes);
}

bool bf16_nearest(std::size_t n, const float* in, std::uint16_t* codes) {
  return HWY_DYNAMIC_DISPATCH(Bf16NearestCodes)(n, in, codes);
}

void bf16_values(const std::uint16_t* codes, std::size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(Bf16Values)(codes, n, out);
}

const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace fpemu::training::kernels
#endif  // HWY_ONCE
