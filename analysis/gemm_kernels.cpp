// See gemm_kernels.hpp for what each kernel computes and why it equals the reference.
#include "gemm_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "fpemu/convert.hpp"
#include "fpemu/round_float.hpp"
#include "parallel_rows.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define FPEMU_X86 1
#else
#define FPEMU_X86 0
#endif

namespace fpemu::analysis {
namespace {

// Values of codes as floats (callers check is_float_valued): code_to_float moves the fields of
// normal codes into place and sends the rare others through the core.
std::vector<float> to_floats(const format& f, std::span<const std::uint32_t> codes) {
  std::vector<float> v(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) v[i] = code_to_float(f, codes[i]);
  return v;
}

bool all_finite(std::span<const float> values) {
  return std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); });
}

// ---- fp32 FMA chain -----------------------------------------------------------------------------

// Rows [r0, r1): d[i][j] = fma(a[i][k], b[k][j], d[i][j]) for k = 0..K-1 in order.
void fma_rows_portable(const float* a, const float* b, float* d, int N, int K, int r0, int r1) {
  for (int i = r0; i < r1; ++i) {
    float* row = d + static_cast<std::size_t>(i) * N;
    std::fill(row, row + N, 0.0f);
    for (int k = 0; k < K; ++k) {
      const float x = a[static_cast<std::size_t>(i) * K + k];
      const float* bk = b + static_cast<std::size_t>(k) * N;
      for (int j = 0; j < N; ++j) row[j] = std::fma(x, bk[j], row[j]);
    }
  }
}

#if FPEMU_X86
// R rows x 16 columns of d continue their fma chains over kc steps of packed A (kc x R) and
// packed B (kc x 16): d is loaded, extended in order, stored. Splitting K into kc blocks this
// way keeps every output's K order sequential, so the result is the plain chain's.
template <int R>
__attribute__((target("avx2,fma"))) void fma_tile(const float* ap, const float* bp, float* d, int N, int kc) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm256_loadu_ps(d + static_cast<std::size_t>(r) * N);
    acc[r][1] = _mm256_loadu_ps(d + static_cast<std::size_t>(r) * N + 8);
  }
  for (int k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(bp + 16 * k), b1 = _mm256_load_ps(bp + 16 * k + 8);
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(ap + k * R + r);
      acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(d + static_cast<std::size_t>(r) * N, acc[r][0]);
    _mm256_storeu_ps(d + static_cast<std::size_t>(r) * N + 8, acc[r][1]);
  }
}

// Rows [r0, r1), columns [0, N16) with N16 a multiple of 16, blocked as in Goto & van de Geijn
// (kc x 16 panels of B, kc x 6 slivers of A); columns beyond N16 by the portable loop.
__attribute__((target("avx2,fma"))) void fma_rows_avx2(const float* a, const float* b, float* d, int N, int K,
                                                        int r0, int r1) {
  constexpr int kRows = 6, kKc = 256;
  const int N16 = N / 16 * 16;
  std::vector<float, std::allocator<float>> bpack(static_cast<std::size_t>(kKc) * 16 + 8), apack(static_cast<std::size_t>(kKc) * kRows);
  float* bp = bpack.data() + ((32 - reinterpret_cast<std::uintptr_t>(bpack.data()) % 32) % 32) / sizeof(float);
  for (int i = r0; i < r1; ++i) std::fill(d + static_cast<std::size_t>(i) * N, d + static_cast<std::size_t>(i) * N + N16, 0.0f);
  for (int k0 = 0; k0 < K; k0 += kKc) {
    const int kc = std::min(kKc, K - k0);
    for (int j = 0; j < N16; j += 16) {
      for (int k = 0; k < kc; ++k)
        std::copy(b + static_cast<std::size_t>(k0 + k) * N + j, b + static_cast<std::size_t>(k0 + k) * N + j + 16, bp + 16 * k);
      for (int i = r0; i < r1; i += kRows) {
        const int rows = std::min(kRows, r1 - i);
        for (int k = 0; k < kc; ++k)
          for (int r = 0; r < rows; ++r) apack[static_cast<std::size_t>(k) * rows + r] = a[static_cast<std::size_t>(i + r) * K + k0 + k];
        float* out = d + static_cast<std::size_t>(i) * N + j;
        switch (rows) {
          case 6: fma_tile<6>(apack.data(), bp, out, N, kc); break;
          case 5: fma_tile<5>(apack.data(), bp, out, N, kc); break;
          case 4: fma_tile<4>(apack.data(), bp, out, N, kc); break;
          case 3: fma_tile<3>(apack.data(), bp, out, N, kc); break;
          case 2: fma_tile<2>(apack.data(), bp, out, N, kc); break;
          default: fma_tile<1>(apack.data(), bp, out, N, kc); break;
        }
      }
    }
  }
  for (int i = r0; i < r1; ++i)
    for (int j = N16; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s = std::fma(a[static_cast<std::size_t>(i) * K + k], b[static_cast<std::size_t>(k) * N + j], s);
      d[static_cast<std::size_t>(i) * N + j] = s;
    }
}
#endif

bool is_float_valued(const format& f) { return f.exp_bits <= 8 && f.frac_bits <= 23 && (f.exp_bits < 8 || f.bias >= 127); }

std::optional<accumulated> fp32_fma_chain(const std::vector<float>& af, const std::vector<float>& bf, int M, int N,
                                          int K, int threads) {
  std::vector<float> d(static_cast<std::size_t>(M) * N);
#if FPEMU_X86
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx2 = false;
#endif
  parallel_rows(M, threads, [&](int r0, int r1) {
#if FPEMU_X86
    if (avx2) return fma_rows_avx2(af.data(), bf.data(), d.data(), N, K, r0, r1);
#endif
    (void)avx2;
    fma_rows_portable(af.data(), bf.data(), d.data(), N, K, r0, r1);
  });
  accumulated out{formats::fp32, std::vector<std::uint32_t>(d.size())};
  for (std::size_t i = 0; i < d.size(); ++i) out.codes[i] = std::bit_cast<std::uint32_t>(d[i]);
  return out;
}

// ---- Block-FMA chain ----------------------------------------------------------------------------

constexpr int kNoTerm = -(1 << 20);  // lead exponent of a zero: never the maximum
constexpr int kTile = 64;            // output columns per tile

struct block_inputs {
  std::vector<float> value;  // exact float value of each code
  std::vector<int> lead;     // exponent the alignment is measured from (kNoTerm for zeros)
};

// Subnormal inputs lead with the format's minimum exponent, not their own (block_fma.hpp).
block_inputs prepare(const format& f, std::vector<float> values) {
  block_inputs in{std::move(values), std::vector<int>()};
  in.lead.resize(in.value.size());
  for (std::size_t i = 0; i < in.value.size(); ++i)
    in.lead[i] = in.value[i] == 0.0f ? kNoTerm : std::max(std::ilogb(in.value[i]), emin(f));
  return in;
}

// Lead exponent of an fp32-range accumulator value (subnormals read with emin = -126).
int lead_of(float c) {
  if (c == 0.0f) return kNoTerm;
  const int field = static_cast<int>((std::bit_cast<std::uint32_t>(c) >> 23) & 0xff);
  return field == 0 ? -126 : field - 127;
}

float pow2f(int e) { return std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23); }

void block_rows(const block_fma_model& m, const block_inputs& a, const block_inputs& b, float* d, int N, int K,
                int r0, int r1) {
  const int F = m.frac_bits, n = m.block_size;
  const std::uint32_t rz_mask = ~((std::uint32_t{1} << (23 - m.acc.frac_bits)) - 1);
  alignas(32) float acc[kTile], scale[kTile];
  alignas(32) int ref[kTile], sum[kTile];
  for (int i = r0; i < r1; ++i) {
    const float* av = a.value.data() + static_cast<std::size_t>(i) * K;
    const int* al = a.lead.data() + static_cast<std::size_t>(i) * K;
    for (int j0 = 0; j0 < N; j0 += kTile) {
      const int T = std::min(kTile, N - j0);
      std::fill(acc, acc + kTile, 0.0f);
      for (int k0 = 0; k0 < K; k0 += n) {
        const int k1 = std::min(K, k0 + n);
        // Reference exponent per output: C (the running sum) and every non-zero product.
        for (int t = 0; t < T; ++t) ref[t] = lead_of(acc[t]);
        for (int k = k0; k < k1; ++k) {
          const int la = al[k];
          const int* lb = b.lead.data() + static_cast<std::size_t>(k) * N + j0;
          for (int t = 0; t < T; ++t) ref[t] = std::max(ref[t], la + lb[t]);
        }
        // q = trunc(x * 2^(F-E)): an exact scaling, then a truncating conversion.
        for (int t = 0; t < T; ++t) {
          scale[t] = ref[t] == kNoTerm ? 0.0f : pow2f(F - ref[t]);
          sum[t] = static_cast<int>(acc[t] * scale[t]);
        }
        for (int k = k0; k < k1; ++k) {
          const float x = av[k];
          const float* bv = b.value.data() + static_cast<std::size_t>(k) * N + j0;
          for (int t = 0; t < T; ++t) sum[t] += static_cast<int>((x * bv[t]) * scale[t]);
        }
        // S * 2^(E-F) is exact; toward zero into the accumulator clears the low fraction bits.
        for (int t = 0; t < T; ++t) {
          const float r = sum[t] == 0 ? 0.0f : static_cast<float>(sum[t]) * pow2f(ref[t] - F);
          acc[t] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(r) & rz_mask);
        }
      }
      std::copy(acc, acc + T, d + static_cast<std::size_t>(i) * N + j0);
    }
  }
}

// The kernel is exact when every reference exponent E it can meet keeps 2^(F-E) and S * 2^(E-F)
// normal floats, |S| < 2^24 (float(S) exact) and no overflow. E is at least the smallest
// non-zero running sum's exponent, emin_a + emin_b - F, and at most the largest sum's,
// emax_a + emax_b + 2 + bit_width(K).
bool block_kernel_applies(const block_fma_model& m, const format& fa, const format& fb, int K) {
  const block_fma_model defaults{};
  const bool small_input = fa.exp_bits <= 5 && fa.frac_bits <= 10 && fb.exp_bits <= 5 && fb.frac_bits <= 10;
  const bool fp32_range = m.acc.exp_bits == 8 && m.acc.bias == 127 && m.acc.encoding == nonfinite::ieee &&
                          m.acc.subnormals && m.acc.has_zero && m.acc.is_signed;
  const int sum_bits = m.frac_bits + 2 + std::bit_width(static_cast<unsigned>(m.block_size + 1));
  const int e_low = emin(fa) + emin(fb) - m.frac_bits;
  const int e_high = emax(fa) + emax(fb) + 2 + std::bit_width(static_cast<unsigned>(K));
  const bool in_range = e_low >= m.frac_bits - 126 && e_high + sum_bits - m.frac_bits <= 126;
  return small_input && fp32_range && in_range && sum_bits <= 24 && m.alignment == alignment_rounding::truncate &&
         m.acc_rounding.mode == round_mode::toward_zero && m.zero == zero_sign::positive &&
         m.min_reference_exp == defaults.min_reference_exp && m.input_subnormals && m.output_subnormals;
}

}  // namespace

std::optional<accumulated> fast_accumulate(const format& fa, std::span<const std::uint32_t> a, const format& fb,
                                           std::span<const std::uint32_t> b, int M, int N, int K,
                                           const accumulator_model& model, int threads) {
  const bool fma_chain = model.kind == accumulator_kind::format && model.acc == formats::fp32 &&
                         model.acc_rounding.mode == round_mode::nearest_even;
  const bool block = model.kind == accumulator_kind::block_fma && block_kernel_applies(model.block, fa, fb, K);
  if (model.promote_every != 0 || !(fma_chain || block) || !is_float_valued(fa) || !is_float_valued(fb))
    return std::nullopt;
  std::vector<float> af = to_floats(fa, a), bf = to_floats(fb, b);
  if (!all_finite(af) || !all_finite(bf)) return std::nullopt;
  if (fma_chain) return fp32_fma_chain(af, bf, M, N, K, threads);
  const block_inputs ai = prepare(fa, std::move(af)), bi = prepare(fb, std::move(bf));
  std::vector<float> d(static_cast<std::size_t>(M) * N);
  parallel_rows(M, threads, [&](int r0, int r1) { block_rows(model.block, ai, bi, d.data(), N, K, r0, r1); });
  accumulated out{model.block.acc, std::vector<std::uint32_t>(d.size())};
  const int shift = 23 - model.block.acc.frac_bits;
  for (std::size_t i = 0; i < d.size(); ++i) out.codes[i] = std::bit_cast<std::uint32_t>(d[i]) >> shift;
  return out;
}

}  // namespace fpemu::analysis
