// See gemm_kernels.hpp for what each kernel computes and why it equals the reference.
//
// The SIMD kernels are compiled once per Highway target (hwy/foreach_target.h re-includes this
// file) and the best one the CPU has is picked at run time, so a portable build still gets the
// machine's widest vectors. Both kernels share one blocking, after Goto & van de Geijn: B is
// packed once into panels of W = 2 vectors of columns (zero-padded), K is cut into chunks whose
// panel slice stays in L2, and a tile of R rows x W columns runs over the chunk with A broadcast
// straight from its row-major array. Outputs live in d between chunks; K order per output is
// unchanged, so the blocking changes speed only.
#ifndef FPEMU_GEMM_KERNELS_SHARED
#define FPEMU_GEMM_KERNELS_SHARED

#include "analysis/reference/gemm_kernels.hpp"

#include <hwy/aligned_allocator.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <utility>

#include "analysis/reference/parallel_rows.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/round_float.hpp"

namespace fpemu::analysis::gemm_simd {

// Lead exponent of a zero input: never the maximum, and the sum of two stays far from overflow.
constexpr std::int32_t kNoTerm = -(1 << 20);

// K steps per chunk: the chunk's panel slice (values, and leads for the block chain) is 64 KB
// with 16-lane vectors, well inside L2, and reused by every row tile.
constexpr int kChunk = 256;

// Exact float values of one format's codes (is_float_valued formats): visit(body) calls body with
// the cheapest decoding function that applies, so that the loops in body specialise to it.
// Formats laid out as the top bits of a binary32 (bf16, tf32) decode with one shift; others of
// up to 16 bits read a table of every code when there are more codes to read than entries.
class decoder {
 public:
  decoder(const format& f, std::size_t codes) : f_(f) {
    if (f.exp_bits == 8 && f.bias == 127 && f.encoding == nonfinite::ieee && f.subnormals && f.has_zero &&
        f.is_signed) {
      shift_ = 23 - f.frac_bits;
      return;
    }
    const int bits = width(f);
    if (bits > 16 || codes <= (std::size_t{1} << bits)) return;
    table_.resize(std::size_t{1} << bits);
    for (std::size_t c = 0; c < table_.size(); ++c) table_[c] = code_to_float(f, static_cast<std::uint32_t>(c));
  }

  template <class Body>
  void visit(const Body& body) const {
    if (shift_ >= 0) return body([s = shift_](std::uint32_t c) { return std::bit_cast<float>(c << s); });
    if (!table_.empty()) return body([t = table_.data()](std::uint32_t c) { return t[c]; });
    body([f = f_](std::uint32_t c) { return code_to_float(f, c); });
  }

 private:
  format f_;
  int shift_ = -1;
  std::vector<float> table_;
};

// Values of codes[i] into out[i]; false if one is not finite.
template <class Decode>
bool decode_run(const Decode& decode, const std::uint32_t* codes, std::size_t count, float* out) {
  bool finite = true;
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = decode(codes[i]);
    finite &= std::isfinite(out[i]);
  }
  return finite;
}

// Lead for the block chain: subnormal inputs lead with the format's minimum exponent `low`, not
// their own (block_fma.hpp). Inputs of at most 5 exponent bits are normal floats, so the float's
// exponent field is the input's exponent.
inline std::int32_t lead_of(float value, int low) {
  const int e = static_cast<int>((std::bit_cast<std::uint32_t>(value) >> 23) & 0xff) - 127;
  return value == 0.0f ? kNoTerm : std::max(e, low);
}

// B (K x N codes, row-major) decoded into panels of W columns: panel p holds rows k = 0..K-1 of
// columns [p W, p W + W), W contiguous per k, zeros past N. False if a value is not finite.
inline bool pack_panels(const decoder& values, std::span<const std::uint32_t> b, int N, int K, std::size_t W,
                        float* out) {
  const std::size_t panels = (static_cast<std::size_t>(N) + W - 1) / W;
  bool finite = true;
  // A few rows at a time, so that the reads stay in L1 and every panel gets a contiguous run.
  constexpr int kRows = 8;
  values.visit([&](const auto& decode) {
    for (int k0 = 0; k0 < K; k0 += kRows)
      for (std::size_t p = 0; p < panels; ++p) {
        const std::size_t j0 = p * W, cols = std::min<std::size_t>(W, N - j0);
        for (int k = k0; k < std::min(K, k0 + kRows); ++k) {
          float* dst = out + (p * K + k) * W;
          finite = decode_run(decode, b.data() + static_cast<std::size_t>(k) * N + j0, cols, dst) && finite;
          std::fill(dst + cols, dst + W, 0.0f);
        }
      }
  });
  return finite;
}

// What one block step needs from the model (see block_tile).
struct block_step {
  int n;                   // products per block
  int frac_bits;           // F
  std::int32_t floor;      // lower bound for the reference exponent E (see block_tile)
  std::uint32_t rz_mask;   // clears the fraction bits fp32 has and the accumulator lacks
};

// A as row-major values (and leads), B as its codes: the kernels pack B for their vector width.
struct fma_job {
  const float* a;  // M x K
  std::span<const std::uint32_t> b;
  const decoder* b_decoder;
  float* d;  // M x N, zero on entry
  int M, N, K, threads;
};

struct block_job {
  block_step step;
  const float* a;  // M x K
  const std::int32_t* a_lead;
  std::span<const std::uint32_t> b;
  const decoder* b_decoder;
  int b_emin;
  float* d;  // M x N accumulator values, zero on entry
  int M, N, K, threads;
};

// Rows [r0, r1) of the fma chain over packed B, for targets whose MulAdd is not fused.
inline void fma_rows_portable(const fma_job& job, const float* bp, std::size_t W, int r0, int r1) {
  const int N = job.N, K = job.K;
  for (int i = r0; i < r1; ++i)
    for (int j0 = 0; j0 < N; j0 += static_cast<int>(W)) {
      float* out = job.d + static_cast<std::size_t>(i) * N + j0;
      const int cols = std::min(static_cast<int>(W), N - j0);
      for (int k = 0; k < K; ++k) {
        const float x = job.a[static_cast<std::size_t>(i) * K + k];
        const float* bk = bp + (j0 / W * K + k) * W;
        for (int c = 0; c < cols; ++c) out[c] = std::fma(x, bk[c], out[c]);
      }
    }
}

}  // namespace fpemu::analysis::gemm_simd

#endif  // FPEMU_GEMM_KERNELS_SHARED

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "analysis/reference/gemm_kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fpemu::analysis::gemm_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;

constexpr std::size_t kVectors = 2;  // vectors of columns per tile
// Rows per tile: enough independent chains to hide latency while the tile's vectors (R x 2
// accumulators for the FMA chain; R x 2 scales + R x 2 sums for the block chain) about fill the
// register file (32 registers with AVX-512, 16 otherwise). On Zen 4 with AVX-512, 8 FMA rows beat
// 12 and 6 block rows beat 4 by a few per cent.
constexpr bool kWide = HWY_MAX_BYTES >= 64;
constexpr std::size_t kFmaRows = kWide ? 8 : 6;
constexpr std::size_t kBlockRows = kWide ? 6 : 2;

// float -> int32 toward zero. Highway's ConvertTo also fixes up values beyond int32, which costs
// three more instructions; every value converted here is below 2^24 in magnitude.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
template <std::size_t N>
HWY_INLINE hn::Vec128<std::int32_t, N> truncate(hn::Vec128<float, N> v) {
  return hn::Vec128<std::int32_t, N>{_mm_cvttps_epi32(v.raw)};
}
#if HWY_TARGET <= HWY_AVX2
HWY_INLINE hn::Vec256<std::int32_t> truncate(hn::Vec256<float> v) {
  return hn::Vec256<std::int32_t>{_mm256_cvttps_epi32(v.raw)};
}
#endif
#if HWY_TARGET <= HWY_AVX3
HWY_INLINE hn::Vec512<std::int32_t> truncate(hn::Vec512<float> v) {
  return hn::Vec512<std::int32_t>{_mm512_cvttps_epi32(v.raw)};
}
#endif
#else
HWY_INLINE VI truncate(VF v) { return hn::ConvertTo(DI(), v); }
#endif

// A function per tile height 1..Max, so that every tile's loops unroll completely.
template <template <std::size_t> class Tile, std::size_t Max>
constexpr auto tile_table() {
  return []<std::size_t... R>(std::index_sequence<R...>) {
    return std::array{&Tile<R + 1>::run...};
  }(std::make_index_sequence<Max>());
}

// Runs tile(rows, i, c, ldc) for the row tiles i of [r0, r1) on the W columns of d from j0, through
// a W-wide copy where the panel sticks out past N.
template <std::size_t MaxRows, class Tile>
void for_row_tiles(float* d, int N, int j0, std::size_t W, int r0, int r1, const Tile& tile) {
  const int cols = std::min(static_cast<int>(W), N - j0);
  HWY_ALIGN float edge[MaxRows * kVectors * HWY_MAX_BYTES / sizeof(float)];
  for (int i = r0; i < r1; i += static_cast<int>(MaxRows)) {
    const int rows = std::min(static_cast<int>(MaxRows), r1 - i);
    float* c = d + static_cast<std::size_t>(i) * N + j0;
    if (cols == static_cast<int>(W)) {
      tile(rows, i, c, static_cast<std::size_t>(N));
      continue;
    }
    for (int r = 0; r < rows; ++r) {
      std::copy_n(c + static_cast<std::size_t>(r) * N, cols, edge + r * W);
      std::fill(edge + r * W + cols, edge + (r + 1) * W, 0.0f);
    }
    tile(rows, i, edge, W);
    for (int r = 0; r < rows; ++r) std::copy_n(edge + r * W, cols, c + static_cast<std::size_t>(r) * N);
  }
}

// ---- fp32 FMA chain -----------------------------------------------------------------------------

// R rows x W columns of c continue their fma chains over kc steps: a is row-major (stride lda)
// from the chunk's first k, bp the panel slice. Each lane is one output's chain in K order.
template <std::size_t R>
struct fma_tile {
  static HWY_NOINLINE void run(const float* HWY_RESTRICT a, std::size_t lda, const float* HWY_RESTRICT bp, int kc,
                               float* HWY_RESTRICT c, std::size_t ldc) {
    const DF df;
    const std::size_t L = hn::Lanes(df), W = kVectors * L;
    VF acc[R][kVectors];
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::LoadU(df, c + r * ldc + v * L);
    for (int k = 0; k < kc; ++k) {
      VF b[kVectors];
      for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(df, bp + k * W + v * L);
      for (std::size_t r = 0; r < R; ++r) {
        const VF x = hn::Set(df, a[r * lda + k]);
        for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::MulAdd(x, b[v], acc[r][v]);
      }
    }
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t v = 0; v < kVectors; ++v) hn::StoreU(acc[r][v], df, c + r * ldc + v * L);
  }
};

// False, before any arithmetic, when B holds a value that is not finite.
bool fma_chain(const fma_job& job) {
  const std::size_t W = kVectors * hn::Lanes(DF());
  const auto bp = hwy::AllocateAligned<float>((job.N + W - 1) / W * W * job.K);
  if (!pack_panels(*job.b_decoder, job.b, job.N, job.K, W, bp.get())) return false;
#if HWY_NATIVE_FMA
  static constexpr auto tiles = tile_table<fma_tile, kFmaRows>();
  parallel_rows(job.M, job.threads, [&](int r0, int r1) {
    for (int k0 = 0; k0 < job.K; k0 += kChunk) {
      const int kc = std::min(kChunk, job.K - k0);
      for (int j0 = 0; j0 < job.N && !interrupted(); j0 += static_cast<int>(W)) {
        const float* panel = bp.get() + (j0 / W * job.K + k0) * W;
        for_row_tiles<kFmaRows>(job.d, job.N, j0, W, r0, r1, [&](int rows, int i, float* c, std::size_t ldc) {
          tiles[rows - 1](job.a + static_cast<std::size_t>(i) * job.K + k0, job.K, panel, kc, c, ldc);
        });
      }
    }
  }, job.M);  // one range per thread, its panels reused by every row; the j loop polls
#else
  // MulAdd would round twice here, so the chain would no longer be the reference's.
  parallel_rows(job.M, job.threads, [&](int r0, int r1) { fma_rows_portable(job, bp.get(), W, r0, r1); });
#endif
  return true;
}

// ---- Block-FMA chain ----------------------------------------------------------------------------

// R rows x W columns of accumulators c (fp32 values of the accumulator format) go through the
// block steps of kc products: a/al are A's values and leads from the chunk's first k (stride
// lda), bv/bl the panel slice. Per output and block, as block_fma.hpp defines it:
//   E = max(lead(C), lead(a_k) + lead(b_k) over non-zero products)
//   S = trunc(C 2^(F-E)) + sum_k trunc(a_k b_k 2^(F-E));  C = toward_zero(S 2^(E-F))
// Every product and scaling is an exact float, the sum an exact int (block_kernel_applies).
// E is also raised to step.floor, the smallest exponent a non-zero C can have: that changes
// nothing when something is non-zero and keeps 2^(F-E) a normal float when all is zero (C = +0).
// A zero C reads as lead -127, below the floor; a zero input's lead kNoTerm never wins. C is
// never subnormal (|C| >= 2^floor >= 2^(F-126)), so its exponent field is its lead.
template <std::size_t R>
struct block_tile {
  static HWY_NOINLINE void run(const block_step& s, const float* HWY_RESTRICT av, const std::int32_t* HWY_RESTRICT al,
                               std::size_t lda, const float* HWY_RESTRICT bv, const std::int32_t* HWY_RESTRICT bl,
                               int kc, float* HWY_RESTRICT c, std::size_t ldc) {
    const DF df;
    const DI di;
    const std::size_t L = hn::Lanes(df), W = kVectors * L;
    const VI floor = hn::Set(di, s.floor), exp_field = hn::Set(di, 0x7f800000), bias = hn::Set(di, 127);
    // Biased exponent fields: 2^(F-E) is (F + 127 - E) << 23, and 2^(E-F) is 254 << 23 minus it.
    const VI scale_top = hn::Set(di, s.frac_bits + 127), inverse_top = hn::Set(di, 254 << 23);
    const VF rz_mask = hn::BitCast(df, hn::Set(di, static_cast<std::int32_t>(s.rz_mask)));
    for (int k0 = 0; k0 < kc; k0 += s.n) {
      const int k1 = std::min(kc, k0 + s.n);
      VI ref[R][kVectors];
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < kVectors; ++v) {
          const VI bits = hn::BitCast(di, hn::LoadU(df, c + r * ldc + v * L));
          ref[r][v] = hn::Max(floor, hn::Sub(hn::ShiftRight<23>(hn::And(bits, exp_field)), bias));
        }
      for (int k = k0; k < k1; ++k) {
        VI lb[kVectors];
        for (std::size_t v = 0; v < kVectors; ++v) lb[v] = hn::Load(di, bl + k * W + v * L);
        for (std::size_t r = 0; r < R; ++r) {
          const VI la = hn::Set(di, al[r * lda + k]);
          for (std::size_t v = 0; v < kVectors; ++v) ref[r][v] = hn::Max(ref[r][v], hn::Add(la, lb[v]));
        }
      }
      VF scale[R][kVectors];
      VI sum[R][kVectors];
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < kVectors; ++v) {
          scale[r][v] = hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(scale_top, ref[r][v])));
          sum[r][v] = truncate(hn::Mul(hn::LoadU(df, c + r * ldc + v * L), scale[r][v]));
        }
      for (int k = k0; k < k1; ++k) {
        VF b[kVectors];
        for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(df, bv + k * W + v * L);
        for (std::size_t r = 0; r < R; ++r) {
          const VF x = hn::Set(df, av[r * lda + k]);
          for (std::size_t v = 0; v < kVectors; ++v)
            sum[r][v] = hn::Add(sum[r][v], truncate(hn::Mul(hn::Mul(x, b[v]), scale[r][v])));
        }
      }
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < kVectors; ++v) {
          const VF inverse = hn::BitCast(df, hn::Sub(inverse_top, hn::BitCast(di, scale[r][v])));
          const VF x = hn::Mul(hn::ConvertTo(df, sum[r][v]), inverse);  // +0 when S = 0
          hn::StoreU(hn::And(x, rz_mask), df, c + r * ldc + v * L);
        }
    }
  }
};

// False, before any arithmetic, when B holds a value that is not finite.
bool block_chain(const block_job& job) {
  const std::size_t W = kVectors * hn::Lanes(DF()), size = (job.N + W - 1) / W * W * job.K;
  const auto bv = hwy::AllocateAligned<float>(size);
  const auto bl = hwy::AllocateAligned<std::int32_t>(size);
  if (!pack_panels(*job.b_decoder, job.b, job.N, job.K, W, bv.get())) return false;
  for (std::size_t i = 0; i < size; ++i) bl[i] = lead_of(bv[i], job.b_emin);  // padding: kNoTerm
  static constexpr auto tiles = tile_table<block_tile, kBlockRows>();
  // Chunks end on block boundaries, so every block step sees its n products in one call.
  const int chunk = std::max(1, kChunk / job.step.n) * job.step.n;
  parallel_rows(job.M, job.threads, [&](int r0, int r1) {
    for (int k0 = 0; k0 < job.K; k0 += chunk) {
      const int kc = std::min(chunk, job.K - k0);
      for (int j0 = 0; j0 < job.N && !interrupted(); j0 += static_cast<int>(W)) {
        const std::size_t at = (j0 / W * job.K + k0) * W;
        for_row_tiles<kBlockRows>(job.d, job.N, j0, W, r0, r1, [&](int rows, int i, float* c, std::size_t ldc) {
          const std::size_t a_at = static_cast<std::size_t>(i) * job.K + k0;
          tiles[rows - 1](job.step, job.a + a_at, job.a_lead + a_at, job.K, bv.get() + at, bl.get() + at, kc, c, ldc);
        });
      }
    }
  }, job.M);  // one range per thread, its panels reused by every row; the j loop polls
  return true;
}

}  // namespace HWY_NAMESPACE
}  // namespace fpemu::analysis::gemm_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::analysis {
namespace gemm_simd {

HWY_EXPORT(fma_chain);
HWY_EXPORT(block_chain);

bool run_fma_chain(const fma_job& job) { return HWY_DYNAMIC_DISPATCH(fma_chain)(job); }
bool run_block_chain(const block_job& job) { return HWY_DYNAMIC_DISPATCH(block_chain)(job); }

namespace {

bool is_float_valued(const format& f) { return f.exp_bits <= 8 && f.frac_bits <= 23 && (f.exp_bits < 8 || f.bias >= 127); }

// Row-major values of codes, or nothing if one is not finite.
std::optional<std::vector<float>> decode_all(const format& f, std::span<const std::uint32_t> codes) {
  std::vector<float> v(codes.size());
  bool finite = false;
  decoder(f, codes.size()).visit(
      [&](const auto& decode) { finite = decode_run(decode, codes.data(), codes.size(), v.data()); });
  if (!finite) return std::nullopt;
  return v;
}

// The kernel is exact when every reference exponent E it can meet keeps 2^(F-E) and S * 2^(E-F)
// normal floats, |S| < 2^24 (float(S) exact) and no overflow. E is at least the smallest
// non-zero running sum's exponent, emin_a + emin_b - F, and at most the largest sum's,
// emax_a + emax_b + 2 + bit_width(K). A min_reference_exp at or below every term's exponent
// never clamps (the smallest product exponent, or C's, which is at least the accumulator's emin).
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
         m.min_reference_exp <= std::min(emin(fa) + emin(fb), emin(m.acc)) && m.input_subnormals &&
         m.output_subnormals && m.sum == defaults.sum && m.interleave == 1 && m.second_frac_bits == 0 &&
         m.scale_block == 0 && !m.product_overflow;
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& d, int shift) {
  std::vector<std::uint32_t> codes(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) codes[i] = std::bit_cast<std::uint32_t>(d[i]) >> shift;
  return codes;
}

}  // namespace
}  // namespace gemm_simd

std::optional<accumulated> fast_accumulate(const format& fa, std::span<const std::uint32_t> a, const format& fb,
                                           std::span<const std::uint32_t> b, int M, int N, int K,
                                           const accumulator_model& model, int threads) {
  using namespace gemm_simd;
  const bool fp32_chain = model.kind == accumulator_kind::format && model.acc == formats::fp32 &&
                          model.acc_rounding.mode == round_mode::nearest_even;
  const bool block = model.kind == accumulator_kind::block_fma && block_kernel_applies(model.block, fa, fb, K);
  if (model.promote_every != 0 || !(fp32_chain || block) || !is_float_valued(fa) || !is_float_valued(fb))
    return std::nullopt;
  const std::optional<std::vector<float>> av = decode_all(fa, a);
  if (!av) return std::nullopt;
  const decoder b_decoder(fb, b.size());
  std::vector<float> d(static_cast<std::size_t>(M) * N);
  if (fp32_chain) {
    if (!run_fma_chain(fma_job{av->data(), b, &b_decoder, d.data(), M, N, K, threads})) return std::nullopt;
    return accumulated{formats::fp32, bits_of(d, 0)};
  }
  const block_fma_model& m = model.block;
  std::vector<std::int32_t> a_lead(av->size());
  for (std::size_t i = 0; i < a_lead.size(); ++i) a_lead[i] = lead_of((*av)[i], emin(fa));
  const block_step step{m.block_size, m.frac_bits, emin(fa) + emin(fb) - m.frac_bits,
                        ~((std::uint32_t{1} << (23 - m.acc.frac_bits)) - 1)};
  if (!run_block_chain(block_job{step, av->data(), a_lead.data(), b, &b_decoder, emin(fb), d.data(), M, N, K, threads}))
    return std::nullopt;
  return accumulated{m.acc, bits_of(d, 23 - m.acc.frac_bits)};
}

}  // namespace fpemu::analysis
#endif  // HWY_ONCE
