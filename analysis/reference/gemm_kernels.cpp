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
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "analysis/reference/parallel_rows.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/round_float.hpp"

namespace fpemu::analysis::gemm_simd {

// Lead exponent of a zero input: never the maximum, and the sum of two stays far from overflow.
constexpr std::int32_t kNoTerm = -(1 << 20);
// The same in the wide kernels' int16 leads: every other lead there lies within +-2^11, so a sum
// with this one stays below every floor, and a saturating int16 addition of two stays at it.
constexpr std::int16_t kNoLead = INT16_MIN;
// Quantum exponent of a run of zeros: never the minimum.
constexpr double kNoQuantum = 1 << 20;

// K steps per chunk: the chunk's panel slice (values, and leads for the block chain) is 64 KB
// with 16-lane vectors, well inside L2, and reused by every row tile.
constexpr int kChunk = 256;

// The chunk length for blocks of n products: the most whole blocks within kChunk, at least one.
constexpr int chunk_of(int n) { return std::max(1, kChunk / n) * n; }

// Products per run of the exact kernel's quantum bounds (exact_tile), and runs per chunk: one
// small value pairs with its own run's quanta only, and the bounds cost one add and one min per
// run and output against the chunk's kChunk products.
constexpr int kQuantumRun = 16;
constexpr int runs_of(int chunk) { return (chunk + kQuantumRun - 1) / kQuantumRun; }

// Groups per block the group tile keeps (Blackwell's fp4 blocks have 4 of 16).
constexpr int kMaxGroups = 8;

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

// What float_leads finds in some floats: whether one is not finite, the bits of the smallest and
// largest non-zero magnitudes (ordered as the magnitudes; peak 0 when all are zero), and the
// lowest lead of a non-zero value.
struct value_range {
  bool bad = false;
  std::uint32_t least = UINT32_MAX, peak = 0;
  std::int32_t lowest = INT_MAX;

  void join(const value_range& o) {
    bad |= o.bad;
    least = std::min(least, o.least);
    peak = std::max(peak, o.peak);
    lowest = std::min(lowest, o.lowest);
  }
};

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
  std::int32_t lead_offset;  // emin(A) + emin(B): a product's lead less its byte lead (lead_byte)
};

// The block chain's leads as bytes, four to a 32-bit word, so that one byte-lane addition and
// maximum serve four products: an input's lead less its format's emin, 0..30 for the formats of
// at most 5 exponent bits the block kernel takes, and kNoByte for a zero. A block of n products
// takes lead_words(n) words, the last one padded with kNoByte, so that every block starts on a
// word. With saturating additions a product with a zero is at most kNoByte + 30, which lies
// (after lead_offset) 98 or more below the lowest lead of a non-zero product: at or below the
// block's floor (F < 98), so it never raises E.
constexpr std::int8_t kNoByte = -128;
constexpr std::uint32_t kNoWord = 0x01010101u * static_cast<std::uint8_t>(kNoByte);

constexpr int lead_words(int n) { return (n + 3) / 4; }

// The byte lead of `value`, an input of a format with emin `low`.
inline std::uint32_t lead_byte(float value, int low) {
  return static_cast<std::uint8_t>(value == 0.0f ? kNoByte : static_cast<std::int8_t>(lead_of(value, low) - low));
}

// Words per row of K products in blocks of n.
inline std::size_t lead_row(int K, int n) { return static_cast<std::size_t>((K + n - 1) / n) * lead_words(n); }

// The byte leads of K x lanes inputs `values` (a row of A, lanes = 1, or B's panel of lanes
// columns, k-major) into words laid out for blocks of n products: product k's byte is byte
// k % n % 4 of word (k / n) lead_words(n) + k % n / 4, one word per lane side by side. The words
// start as kNoWord.
inline void pack_lead_bytes(const float* values, std::size_t lanes, int K, int n, int low, std::uint32_t* words) {
  static_assert(std::endian::native == std::endian::little, "byte t of a word is its bits 8t..8t+7");
  auto* bytes = reinterpret_cast<std::uint8_t*>(words);
  const std::size_t block = 4 * lanes * lead_words(n);  // bytes per block
  for (int k0 = 0; k0 < K; k0 += n) {
    std::uint8_t* out = bytes + static_cast<std::size_t>(k0 / n) * block;
    for (int t = 0; t < std::min(n, K - k0); ++t) {
      const float* in = values + static_cast<std::size_t>(k0 + t) * lanes;
      std::uint8_t* word = out + static_cast<std::size_t>(t / 4) * lanes * 4 + t % 4;
      for (std::size_t j = 0; j < lanes; ++j) word[4 * j] = static_cast<std::uint8_t>(lead_byte(in[j], low));
    }
  }
}

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
  const std::uint32_t* a_lead;  // M x lead_row(K, n) words of byte leads
  std::span<const std::uint32_t> b;
  const decoder* b_decoder;
  int b_emin;
  float* d;  // M x N accumulator values, zero on entry
  int M, N, K, threads;
};

// What one wide block step needs from the model (see wide_tile). Exponents are doubles, as the
// kernel computes with them.
struct wide_step {
  int n;            // products per block
  double frac_bits;  // F
  double floor;     // lower bound for E: min_reference_exp, raised to the smallest lead a term has
  double acc_emin;  // the lead of a subnormal accumulator value
  double acc_frac;  // the accumulator's fraction bits
  double overflow;  // 2^(emax + 1) of the accumulator: a value at or above it has overflowed
  std::uint64_t rz_mask;  // clears the fraction bits binary64 has and the accumulator lacks
  // Products in float lanes (lead_job's a_float and b_float set): at most this many terms per
  // int32 partial sum, and the lowest lead a product of the data has.
  int narrow_terms = 0;
  double narrow_floor = 0.0;
  bool sum_fits = false;  // every S fits int32 (wide_widths' sum at most 31 bits): no overflow check
};

// A and B as values (block scales multiplied in) and leads, both row-major, for a chain whose
// step is Step (wide_step, staged_step); the values also as floats where the wide kernel's
// products run in float lanes.
template <class Step>
struct lead_job {
  Step step;
  const double* a;  // M x K
  const std::int16_t* a_lead;  // M x K + 1, the last one kNoLead (narrow_tile reads one past)
  const double* b;  // K x N
  const std::int16_t* b_lead;
  double* d;  // M x N accumulator values, zero on entry; NaN where the reference must run
  int M, N, K, threads;
  const float* a_float = nullptr;  // M x K, or nullptr
  const float* b_float = nullptr;  // K x N, or nullptr
};

// A and B as values, with per group (g products along K) a mask of the non-zero inputs (bit
// k - t g for the k-th) and the group's block scale as value (0 for a zero scale) and lead.
struct group_job {
  wide_step step;
  int g;
  const double* a;             // M x K
  const std::int64_t* a_mask;  // M x T, T = ceil(K / g)
  const double* a_scale;       // M x T
  const double* a_scale_lead;  // M x T (kNoTerm for a zero scale)
  const double* b;             // K x N
  const std::int64_t* b_mask;  // T x N
  const double* b_scale;       // T x N
  const double* b_scale_lead;  // T x N
  double* d;  // M x N accumulator values, zero on entry; NaN where the reference must run
  int M, N, K, threads;
};

// A and B as values (row-major) for the exact block sum (see exact_tile), with per run of
// kQuantumRun products along K (runs_of(chunk) of them per chunk, the last one short) of each row
// of A and column of B the exponent of the finest quantum its non-zero values are multiples of
// (kNoQuantum if all are zero), and per chunk (chunk_of(n) products) an upper bound on its 2-norm.
struct exact_job {
  int n;                  // products per block
  const double* a;        // M x K
  const double* a_quantum;  // M x (C runs_of(chunk)), C = ceil(K / chunk)
  const double* a_norm;     // M x C
  const double* b;        // K x N
  const double* b_quantum;  // (C runs_of(chunk)) x N
  const double* b_norm;     // C x N
  double* d;  // M x N fp32 values, zero on entry; NaN where the reference must run
  int M, N, K, threads;
};

// What one two-stage block step needs from the model (see staged_tile).
struct staged_step {
  int n;                 // products per block
  int interleave;        // 1, or 2 for even and odd products summed apart
  double frac_bits;      // F
  double second_bits;    // F2
  double floor;          // at or below every term's lead and the accumulator's emin
  double acc_emin;       // C's exponent when subnormal or zero
  bool drop_far_c;
  // Products in float lanes (lead_job's a_float and b_float set; staged_narrow_widths and
  // float_products), and the lowest lead a product of the data has.
  bool narrow = false;
  double narrow_floor = 0.0;
};

using wide_job = lead_job<wide_step>;
using staged_job = lead_job<staged_step>;

// A and B as the pairwise model reads them (subnormals already +0 where it flushes), row-major.
struct pairwise_job {
  int n;       // products per block
  bool flush;  // results below 2^-126 go to zero, sign kept
  const float* a;  // M x K
  const float* b;  // K x N
  float* d;        // M x N, zero on entry
  int M, N, K, threads;
};

// A row-major K x N array into panels of W columns (as pack_panels lays them out), `pad` past N,
// converted to T.
template <class S, class T>
void pack_rows(const S* src, int N, int K, std::size_t W, T pad, T* out) {
  const std::size_t panels = (static_cast<std::size_t>(N) + W - 1) / W;
  for (int k = 0; k < K; ++k)
    for (std::size_t p = 0; p < panels; ++p) {
      const std::size_t j0 = p * W, cols = std::min<std::size_t>(W, N - j0);
      T* dst = out + (p * K + k) * W;
      std::copy_n(src + static_cast<std::size_t>(k) * N + j0, cols, dst);
      std::fill(dst + cols, dst + W, pad);
    }
}

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

// Every loop over a tile's rows, vectors or sub-sums carries HWY_UNROLL: a tile's arrays of
// vectors stay in registers only when every loop that indexes them unrolls completely, which GCC
// does at -O2 only when told (without it, the h100-e4m3 kernel ran at 0.7x of its rate here).
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

// fixed_blocks: the tile table of a kernel whose tiles take the block size n as a template
// argument too (0: n read at run time), for n = 4, 8, 16 and 32, the presets' block sizes. A known
// n lets GCC unroll the loops over a block's products completely (over a runtime n it copied each
// row's sum to a fresh register and back, a vmovdqa64 per row and product on AVX-512): the
// float-lane wide kernel (narrow_tile) ran 1.03-1.15x so (bench_gemm, a100-bf16, a100-tf32,
// v100-fp16, h100-bf16); the block kernel and the two-stage float lanes did not run faster. Only
// the full tile (Max rows), where the time goes, is made per n.
template <template <std::size_t, int> class Tile, std::size_t Max, int Block>
constexpr auto fixed_block_table() {
  return []<std::size_t... R>(std::index_sequence<R...>) {
    return std::array{&Tile<R + 1, R + 1 == Max ? Block : 0>::run...};
  }(std::make_index_sequence<Max>());
}

template <template <std::size_t, int> class Tile, std::size_t Max>
const auto& fixed_blocks(int n) {
  static constexpr auto any = fixed_block_table<Tile, Max, 0>(), n4 = fixed_block_table<Tile, Max, 4>(),
                        n8 = fixed_block_table<Tile, Max, 8>(), n16 = fixed_block_table<Tile, Max, 16>(),
                        n32 = fixed_block_table<Tile, Max, 32>();
  switch (n) {
    case 4: return n4;
    case 8: return n8;
    case 16: return n16;
    case 32: return n32;
    default: return any;
  }
}

// Runs tile(rows, i, c, ldc) for the row tiles i of [r0, r1) on the W columns of d from j0, through
// a W-wide copy where the panel sticks out past N.
template <std::size_t MaxRows, class T, class Tile>
void for_row_tiles(T* d, int N, int j0, std::size_t W, int r0, int r1, const Tile& tile) {
  const int cols = std::min(static_cast<int>(W), N - j0);
  HWY_ALIGN T edge[MaxRows * kVectors * HWY_MAX_BYTES / sizeof(T)];
  for (int i = r0; i < r1; i += static_cast<int>(MaxRows)) {
    const int rows = std::min(static_cast<int>(MaxRows), r1 - i);
    T* c = d + static_cast<std::size_t>(i) * N + j0;
    if (cols == static_cast<int>(W)) {
      tile(rows, i, c, static_cast<std::size_t>(N));
      continue;
    }
    for (int r = 0; r < rows; ++r) {
      std::copy_n(c + static_cast<std::size_t>(r) * N, cols, edge + r * W);
      std::fill(edge + r * W + cols, edge + (r + 1) * W, T{0});
    }
    tile(rows, i, edge, W);
    for (int r = 0; r < rows; ++r) std::copy_n(edge + r * W, cols, c + static_cast<std::size_t>(r) * N);
  }
}

// The loop every chain runs: one range of rows per thread, K in chunks that end on block
// boundaries (n products), so that each block step sees its products in one call, and the
// panels of W columns reused by every row of the range; the j loop polls for an interrupt. Calls
// tile(rows, i, j0, k0, kc, c, ldc) for each tile of up to MaxRows rows.
template <std::size_t MaxRows, class T, class Tile>
void for_chunks(T* d, int M, int N, int K, int n, std::size_t W, int threads, const Tile& tile) {
  const int chunk = chunk_of(n);
  parallel_rows(M, threads, [&](int r0, int r1) {
    for (int k0 = 0; k0 < K; k0 += chunk) {
      const int kc = std::min(chunk, K - k0);
      for (int j0 = 0; j0 < N && !interrupted(); j0 += static_cast<int>(W))
        for_row_tiles<MaxRows>(d, N, j0, W, r0, r1,
                               [&](int rows, int i, T* c, std::size_t ldc) { tile(rows, i, j0, k0, kc, c, ldc); });
    }
  }, M);
}

// ---- Operands ----------------------------------------------------------------------------------

// The int16 leads of n floats x (lead_of, kNoLead for a zero) into lead, and their value_range.
value_range float_leads(const float* HWY_RESTRICT x, std::size_t n, int low, std::int16_t* HWY_RESTRICT lead) {
  const DI di;
  const hn::Rebind<std::int16_t, DI> d16;
  const std::size_t L = hn::Lanes(di);
  const VI magnitude = hn::Set(di, 0x7fffffff), finite_top = hn::Set(di, 0x7f7fffff), none = hn::Set(di, INT32_MAX),
           floor = hn::Set(di, low), bias = hn::Set(di, 127), zero_lead = hn::Set(di, kNoLead);
  VI bad = hn::Zero(di), least = none, peak = hn::Zero(di), lowest = none;
  const auto step = [&](const float* from, std::int16_t* to) {
    const VI bits = hn::And(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(from)), magnitude);
    const auto zero = hn::Eq(bits, hn::Zero(di));
    const VI l = hn::Max(hn::Sub(hn::ShiftRight<23>(bits), bias), floor);
    bad = hn::Or(bad, hn::VecFromMask(di, hn::Gt(bits, finite_top)));
    least = hn::Min(least, hn::IfThenElse(zero, none, bits));
    peak = hn::Max(peak, bits);
    lowest = hn::Min(lowest, hn::IfThenElse(zero, none, l));
    hn::StoreU(hn::DemoteTo(d16, hn::IfThenElse(zero, zero_lead, l)), d16, to);
  };
  std::size_t i = 0;
  for (; i + L <= n; i += L) step(x + i, lead + i);
  if (i < n) {  // the tail through zero-padded copies: a zero changes no part of the range
    HWY_ALIGN float tail[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN std::int16_t out[HWY_MAX_BYTES / sizeof(float)];
    std::copy(x + i, x + n, tail);
    step(tail, out);
    std::copy_n(out, n - i, lead + i);
  }
  const std::int32_t low_bits = hn::GetLane(hn::MinOfLanes(di, least));
  return {!hn::AllTrue(di, hn::Eq(bad, hn::Zero(di))),
          low_bits == INT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(low_bits),
          static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, peak))), hn::GetLane(hn::MinOfLanes(di, lowest))};
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
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::LoadU(df, c + r * ldc + v * L);
    for (int k = 0; k < kc; ++k) {
      VF b[kVectors];
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(df, bp + k * W + v * L);
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r) {
        const VF x = hn::Set(df, a[r * lda + k]);
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::MulAdd(x, b[v], acc[r][v]);
      }
    }
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
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
  for_chunks<kFmaRows>(job.d, job.M, job.N, job.K, 1, W, job.threads,
                       [&](int rows, int i, int j0, int k0, int kc, float* c, std::size_t ldc) {
                         const float* panel = bp.get() + (j0 / W * job.K + k0) * W;
                         tiles[rows - 1](job.a + static_cast<std::size_t>(i) * job.K + k0, job.K, panel, kc, c, ldc);
                       });
#else
  // MulAdd would round twice here, so the chain would no longer be the reference's.
  parallel_rows(job.M, job.threads, [&](int r0, int r1) { fma_rows_portable(job, bp.get(), W, r0, r1); });
#endif
  return true;
}

// ---- Block-FMA chain ----------------------------------------------------------------------------

// sum[r][v] += trunc(a_rk b_kv scale[r][v]) over k = k0, k0 + step, ... < k1, in float lanes, for R
// rows and V vectors of B's panel (W floats per k): the aligned terms of the float-lane block steps.
// Count > 0: exactly Count products from k0 (k1 is then k0 + Count step), the loop unrolled
// completely (fixed_blocks).
template <std::size_t R, std::size_t V, int Count = 0>
HWY_INLINE void add_terms(const float* HWY_RESTRICT av, std::size_t lda, const float* HWY_RESTRICT bv,
                          std::size_t W, int k0, int k1, const VF (&scale)[R][kVectors], VI (&sum)[R][kVectors],
                          int step = 1) {
  const DF df;
  const std::size_t L = hn::Lanes(df);
  const auto term = [&](int k) {
    VF b[V];
    HWY_UNROLL(8)
    for (std::size_t v = 0; v < V; ++v) b[v] = hn::Load(df, bv + k * W + v * L);
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r) {
      const VF x = hn::Set(df, av[r * lda + k]);
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < V; ++v) sum[r][v] = hn::Add(sum[r][v], truncate(hn::Mul(hn::Mul(x, b[v]), scale[r][v])));
    }
  };
  if constexpr (Count > 0) {
    HWY_UNROLL(32)
    for (int t = 0; t < Count; ++t) term(k0 + t * step);
  } else {
    for (int k = k0; k < k1; k += step) term(k);
  }
}

// Per byte lane (lead_byte): max(top, la + lb), the addition saturating.
#if HWY_TARGET == HWY_SCALAR
HWY_INLINE VI byte_lead_max(VI top, VI la, VI lb) {
  std::uint32_t out = 0;
  for (int shift = 0; shift < 32; shift += 8) {
    auto byte = [shift](VI x) { return static_cast<std::int8_t>(static_cast<std::uint32_t>(hn::GetLane(x)) >> shift); };
    const int lead = std::max<int>(byte(top), std::clamp(byte(la) + byte(lb), -128, 127));
    out |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(lead)) << shift;
  }
  return hn::Set(DI(), static_cast<std::int32_t>(out));
}
#else
HWY_INLINE VI byte_lead_max(VI top, VI la, VI lb) {
  const hn::Repartition<std::int8_t, DI> d8;
  return hn::BitCast(DI(), hn::Max(hn::BitCast(d8, top), hn::SaturatedAdd(hn::BitCast(d8, la), hn::BitCast(d8, lb))));
}
#endif

// The largest of each word's four byte leads, as an int32: the top byte of max(x, x << 16), max'ed
// with itself 8 bits up, shifted down with its sign.
HWY_INLINE VI word_lead_max(VI x) {
#if HWY_TARGET == HWY_SCALAR
  std::int32_t lead = kNoByte;
  for (int shift = 0; shift < 32; shift += 8)
    lead = std::max<std::int32_t>(lead, static_cast<std::int8_t>(static_cast<std::uint32_t>(hn::GetLane(x)) >> shift));
  return hn::Set(DI(), lead);
#else
  const hn::Repartition<std::int8_t, DI> d8;
  const VI y = hn::BitCast(DI(), hn::Max(hn::BitCast(d8, x), hn::BitCast(d8, hn::ShiftLeft<16>(x))));
  return hn::ShiftRight<24>(hn::BitCast(DI(), hn::Max(hn::BitCast(d8, y), hn::BitCast(d8, hn::ShiftLeft<8>(y)))));
#endif
}

// R rows x W columns of accumulators c (fp32 values of the accumulator format) go through the
// block steps of kc products: av/al are A's values (stride lda) and byte leads (lead_byte, stride
// lda_lead words) from the chunk's first k, bv/bl the panel slice. Per output and block, as
// block_fma.hpp defines it:
//   E = max(lead(C), lead(a_k) + lead(b_k) over non-zero products)
//   S = trunc(C 2^(F-E)) + sum_k trunc(a_k b_k 2^(F-E));  C = toward_zero(S 2^(E-F))
// Every product and scaling is an exact float, the sum an exact int (block_kernel_applies).
// E is also raised to step.floor, the smallest exponent a non-zero C can have: that changes
// nothing when something is non-zero and keeps 2^(F-E) a normal float when all is zero (C = +0).
// A zero C reads as lead -127, below the floor; a product with a zero input never wins. C is
// never subnormal (|C| >= 2^floor >= 2^(F-126)), so its exponent field is its lead.
template <std::size_t R>
struct block_tile {
  static HWY_NOINLINE void run(const block_step& s, const float* HWY_RESTRICT av,
                               const std::uint32_t* HWY_RESTRICT al, std::size_t lda_lead, std::size_t lda,
                               const float* HWY_RESTRICT bv, const std::uint32_t* HWY_RESTRICT bl, int kc,
                               float* HWY_RESTRICT c, std::size_t ldc) {
    const DF df;
    const DI di;
    const std::size_t L = hn::Lanes(df), W = kVectors * L, words = lead_words(s.n);
    const VI floor = hn::Set(di, s.floor), exp_field = hn::Set(di, 0x7f800000), bias = hn::Set(di, 127),
             offset = hn::Set(di, s.lead_offset);
    // Biased exponent fields: 2^(F-E) is (F + 127 - E) << 23, and 2^(E-F) is 254 << 23 minus it.
    const VI scale_top = hn::Set(di, s.frac_bits + 127), inverse_top = hn::Set(di, 254 << 23);
    const VF rz_mask = hn::BitCast(df, hn::Set(di, static_cast<std::int32_t>(s.rz_mask)));
    for (int k0 = 0, w0 = 0; k0 < kc; k0 += s.n, w0 += static_cast<int>(words)) {
      const int k1 = std::min(kc, k0 + s.n);
      // The products' byte leads, four per word (lead_byte), at most per byte lane.
      VI top[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) top[r][v] = hn::Set(di, static_cast<std::int32_t>(kNoWord));
      for (std::size_t w = static_cast<std::size_t>(w0); w < w0 + words; ++w) {
        VI lb[kVectors];
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) lb[v] = hn::Load(di, reinterpret_cast<const std::int32_t*>(bl) + w * W + v * L);
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          const VI la = hn::Set(di, static_cast<std::int32_t>(al[r * lda_lead + w]));
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) top[r][v] = byte_lead_max(top[r][v], la, lb[v]);
        }
      }
      VI ref[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) {
          const VI bits = hn::BitCast(di, hn::LoadU(df, c + r * ldc + v * L));
          const VI c_lead = hn::Max(floor, hn::Sub(hn::ShiftRight<23>(hn::And(bits, exp_field)), bias));
          ref[r][v] = hn::Max(c_lead, hn::Add(word_lead_max(top[r][v]), offset));
        }
      VF scale[R][kVectors];
      VI sum[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) {
          scale[r][v] = hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(scale_top, ref[r][v])));
          sum[r][v] = truncate(hn::Mul(hn::LoadU(df, c + r * ldc + v * L), scale[r][v]));
        }
      add_terms<R, kVectors>(av, lda, bv, W, k0, k1, scale, sum);
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
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
  const int n = job.step.n;
  const std::size_t W = kVectors * hn::Lanes(DF()), panels = (job.N + W - 1) / W, row = lead_row(job.K, n);
  const auto bv = hwy::AllocateAligned<float>(panels * W * job.K);
  if (!pack_panels(*job.b_decoder, job.b, job.N, job.K, W, bv.get())) return false;
  // B's byte leads in panels as its values: panel p holds words w = 0..row-1 of its W columns (the
  // padding columns' zeros lead as kNoByte).
  const auto bl = hwy::AllocateAligned<std::uint32_t>(panels * row * W);
  std::fill_n(bl.get(), panels * row * W, kNoWord);
  for (std::size_t p = 0; p < panels; ++p) pack_lead_bytes(bv.get() + p * job.K * W, W, job.K, n, job.b_emin, bl.get() + p * row * W);
  static constexpr auto tiles = tile_table<block_tile, kBlockRows>();
  for_chunks<kBlockRows>(job.d, job.M, job.N, job.K, n, W, job.threads,
                         [&](int rows, int i, int j0, int k0, int kc, float* c, std::size_t ldc) {
                           const std::size_t at = (j0 / W * job.K + k0) * W, a_at = static_cast<std::size_t>(i) * job.K + k0;
                           const std::size_t word = static_cast<std::size_t>(k0 / n) * lead_words(n);
                           tiles[rows - 1](job.step, job.a + a_at, job.a_lead + i * row + word, row, job.K, bv.get() + at,
                                           bl.get() + (j0 / W * row + word) * W, kc, c, ldc);
                         });
  return true;
}

// ---- Wide block-FMA chain (double lanes) --------------------------------------------------------

using DD = hn::ScalableTag<double>;
using DL = hn::RebindToSigned<DD>;
using VD = hn::Vec<DD>;

constexpr double kTwo52 = 4503599627370496.0;

// The unbiased exponent field of each lane as a double: the 11-bit field put into the low bits of
// 2^52's significand, less 2^52 + 1023 (AVX2 has no int64 -> double conversion).
HWY_INLINE VD exponent_of(VD x) {
  const DD dd;
  const DL dl;
  const auto field = hn::ShiftRight<52>(hn::And(hn::BitCast(dl, x), hn::Set(dl, 0x7ff0000000000000LL)));
  return hn::Sub(hn::BitCast(dd, hn::Or(field, hn::Set(dl, 0x4330000000000000LL))), hn::Set(dd, kTwo52 + 1023.0));
}

// 2^(e + offset) for integer-valued e + offset in [-1022, 1023]: e + offset + 1023 sits in the low
// bits of the significand of 2^52 + e + offset + 1023, and a 52-bit shift moves it into the
// exponent field.
HWY_INLINE VD pow2(VD e, double offset = 0.0) {
  const DD dd;
  const DL dl;
  return hn::BitCast(dd, hn::ShiftLeft<52>(hn::BitCast(dl, hn::Add(e, hn::Set(dd, kTwo52 + 1023.0 + offset)))));
}

// x rounded to the nearest fp32 value (ties to even; -0 stays -0), as a double: the host's
// conversion. Highway's scalar DemoteTo gives the largest float where the conversion overflows,
// so there the infinity from 2^128 - 2^103 up is put in.
HWY_INLINE VD nearest_fp32(VD x) {
  const DD dd;
  const hn::Rebind<float, DD> df;
  VD f = hn::PromoteTo(dd, hn::DemoteTo(df, x));
#if HWY_TARGET == HWY_SCALAR
  f = hn::IfThenElse(hn::Ge(hn::Abs(x), hn::Set(dd, 0x1.ffffffp127)), hn::CopySign(hn::Set(dd, HUGE_VAL), x), f);
#endif
  return f;
}

// S 2^(E-F) (exact: S < 2^53) onto the accumulator's grid toward zero: trunc(x / q) q, q the
// accumulator's quantum at x. NaN at or beyond the overflow threshold, +0 for a zero.
HWY_INLINE VD toward_zero(const wide_step& s, VD sum, VD ref) {
  const DD dd;
  const DL dl;
  const VD value = hn::Mul(sum, pow2(hn::Sub(ref, hn::Set(dd, s.frac_bits))));
  const VD magnitude = hn::Abs(value);
  // A value the accumulator holds as a normal number keeps its exponent: clearing the fraction
  // bits past the accumulator's is the truncation. Below 2^emin the quantum is fixed (rare: only
  // such lanes, zeros among them, take the branch's three operations).
  VD rz = hn::And(value, hn::BitCast(dd, hn::Set(dl, static_cast<std::int64_t>(s.rz_mask))));
  const auto small = hn::Lt(magnitude, pow2(hn::Set(dd, s.acc_emin)));
  if (!hn::AllFalse(dd, small)) {
    const VD quantum = pow2(hn::Set(dd, s.acc_emin - s.acc_frac));
    const VD steps = hn::Trunc(hn::Mul(value, pow2(hn::Set(dd, s.acc_frac - s.acc_emin))));
    rz = hn::IfThenElse(small, hn::Mul(steps, quantum), rz);
  }
  // Truncation keeps a value below 2^(emax+1) below it, and one at or above at or above it.
  return hn::Add(hn::IfThenElse(hn::Ge(magnitude, hn::Set(dd, s.overflow)), hn::NaN(dd), rz), hn::Zero(dd));
}

// The reference exponent a block starts from: floor, raised to C's lead when C is not zero.
HWY_INLINE VD c_ref(const wide_step& s, VD c) {
  const DD dd;
  const VD floor = hn::Set(dd, s.floor);
  return hn::IfThenElse(hn::Eq(c, hn::Zero(dd)), floor,
                        hn::Max(floor, hn::Max(hn::Set(dd, s.acc_emin), exponent_of(c))));
}

// ref[r][v] = max(init, a lead + b lead over products k = begin, begin + step, ... < end) for R
// rows and W columns. Leads are small integers, exact in float: their maximum runs in float
// lanes, twice as many per vector, and is widened to double once.
template <std::size_t R>
HWY_INLINE void lead_maxima(const float* HWY_RESTRICT al, std::size_t lda, const float* HWY_RESTRICT bl, int begin,
                            int end, int step, float init, VD (&ref)[R][kVectors]) {
  const DD dd;
  const DF df;
  const hn::Rebind<float, DD> dh;  // the floats of one double vector
  constexpr std::size_t L = hn::MaxLanes(DD()), W = kVectors * L, LF = hn::MaxLanes(DF()), U = W / LF;
  VF lead[R][kVectors];
  HWY_UNROLL(8)
  for (std::size_t r = 0; r < R; ++r)
    HWY_UNROLL(8)
    for (std::size_t u = 0; u < U; ++u) lead[r][u] = hn::Set(df, init);
  for (int k = begin; k < end; k += step) {
    VF lb[kVectors];
    HWY_UNROLL(8)
    for (std::size_t u = 0; u < U; ++u) lb[u] = hn::Load(df, bl + k * W + u * LF);
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r) {
      const VF la = hn::Set(df, al[r * lda + k]);
      HWY_UNROLL(8)
      for (std::size_t u = 0; u < U; ++u) lead[r][u] = hn::Max(lead[r][u], hn::Add(la, lb[u]));
    }
  }
  HWY_ALIGN float widen[kVectors * HWY_MAX_BYTES / sizeof(double)];
  HWY_UNROLL(8)
  for (std::size_t r = 0; r < R; ++r) {
    HWY_UNROLL(8)
    for (std::size_t u = 0; u < U; ++u) hn::Store(lead[r][u], df, widen + u * LF);
    HWY_UNROLL(8)
    for (std::size_t v = 0; v < kVectors; ++v) ref[r][v] = hn::PromoteTo(dd, hn::Load(dh, widen + v * L));
  }
}

// R rows x W columns of accumulators c go through the block steps of kc products, as block_tile
// does, in double lanes:
//   E = max(floor, lead(C), lead(a_k) + lead(b_k) over non-zero products)
//   S = trunc(C 2^(F-E)) + sum_k trunc(a_k b_k 2^(F-E))       (every term and S below 2^53)
//   C = trunc(S 2^(E-F) / q) q, q the accumulator's quantum at that value (toward zero)
// Every step is exact in double (wide_kernel_applies): products of at most 53 significant bits,
// power-of-two scalings of exponents within [-1022, 1023] (a term so far below 2^E that it
// underflows truncates to 0 either way). C at or above the accumulator's overflow threshold
// becomes NaN, which every later step keeps: those outputs go to the reference loop. S = -0
// (a sum of negative terms that truncated to 0) is stored as +0, the model's zero.
// The leads' maxima run in float lanes (lead_maxima).
// Where A and B come as floats too (avf, bvf), the products run in float lanes, twice as many per
// vector: a product of the data is a normal float of at most 24 bits, and so is 2^(F-E) with E
// raised to the data's lowest product lead (which changes no block with a product), so x b 2^(F-E)
// is exact or below 1 and truncates as in double; each run of narrow_terms terms sums in int32
// (wide_kernel_applies' term bound) and joins S in double.
template <std::size_t R>
struct wide_tile {
  static HWY_NOINLINE void run(const wide_step& s, const double* HWY_RESTRICT av, const float* HWY_RESTRICT avf,
                               const float* HWY_RESTRICT al, std::size_t lda, const double* HWY_RESTRICT bv,
                               const float* HWY_RESTRICT bvf, const float* HWY_RESTRICT bl, int kc,
                               double* HWY_RESTRICT c, std::size_t ldc) {
    const DD dd;
    const DF df;
    const DI di;
    const hn::Rebind<float, DD> dh;
    const hn::Rebind<std::int32_t, DD> dhi;
    constexpr std::size_t L = hn::MaxLanes(DD()), W = kVectors * L, LF = hn::MaxLanes(DF()), U = W / LF;
    const VD frac = hn::Set(dd, s.frac_bits), narrow_floor = hn::Set(dd, s.narrow_floor);
    HWY_ALIGN float fscales[kVectors * HWY_MAX_BYTES / sizeof(double)];
    HWY_ALIGN std::int32_t ints[kVectors * HWY_MAX_BYTES / sizeof(double)];
    VD acc[R][kVectors];
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::LoadU(dd, c + r * ldc + v * L);
    for (int k0 = 0; k0 < kc; k0 += s.n) {
      const int k1 = std::min(kc, k0 + s.n);
      VD ref[R][kVectors];
      lead_maxima(al, lda, bl, k0, k1, 1, static_cast<float>(kNoTerm), ref);
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) ref[r][v] = hn::Max(c_ref(s, acc[r][v]), ref[r][v]);
      VD scale[R][kVectors], sum[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) {
          scale[r][v] = pow2(hn::Sub(frac, ref[r][v]));
          sum[r][v] = hn::Trunc(hn::Mul(acc[r][v], scale[r][v]));
        }
      // Blocks of fewer than 8 products stay in double: the per-block conversions cost what the
      // float lanes save (v100-fp16 and a100-tf32, blocks of 4, ran 3-5% slower in bench_gemm).
      if (avf != nullptr && s.n >= 8) {
        VF fscale[R][kVectors];
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v)
            hn::Store(hn::DemoteTo(dh, pow2(hn::Sub(frac, hn::Max(ref[r][v], narrow_floor)))), dh, fscales + v * L);
          HWY_UNROLL(8)
          for (std::size_t u = 0; u < U; ++u) fscale[r][u] = hn::Load(df, fscales + u * LF);
        }
        for (int p0 = k0; p0 < k1; p0 += s.narrow_terms) {
          VI part[R][kVectors];
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r)
            HWY_UNROLL(8)
            for (std::size_t u = 0; u < U; ++u) part[r][u] = hn::Zero(di);
          add_terms<R, U>(avf, lda, bvf, W, p0, std::min(k1, p0 + s.narrow_terms), fscale, part);
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r) {
            HWY_UNROLL(8)
            for (std::size_t u = 0; u < U; ++u) hn::Store(part[r][u], di, ints + u * LF);
            HWY_UNROLL(8)
            for (std::size_t v = 0; v < kVectors; ++v)
              sum[r][v] = hn::Add(sum[r][v], hn::PromoteTo(dd, hn::Load(dhi, ints + v * L)));
          }
        }
      } else {
        for (int k = k0; k < k1; ++k) {
          VD b[kVectors];
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(dd, bv + k * W + v * L);
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r) {
            const VD x = hn::Set(dd, av[r * lda + k]);
            HWY_UNROLL(8)
            for (std::size_t v = 0; v < kVectors; ++v)
              sum[r][v] = hn::Add(sum[r][v], hn::Trunc(hn::Mul(hn::Mul(x, b[v]), scale[r][v])));
          }
        }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = toward_zero(s, sum[r][v], ref[r][v]);
    }
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v) hn::StoreU(acc[r][v], dd, c + r * ldc + v * L);
  }
};

// Runs Tile over a lead_job: B's values packed into panels of W doubles (and floats, if given),
// A's and B's leads as floats (lead_maxima reads them so), B's in panels too.
template <template <std::size_t> class Tile, class Step>
void lead_chain(const lead_job<Step>& job) {
  const std::size_t W = kVectors * hn::Lanes(DD()), size = (job.N + W - 1) / W * W * job.K;
  const auto bv = hwy::AllocateAligned<double>(size);
  const auto bl = hwy::AllocateAligned<float>(size);
  pack_rows(job.b, job.N, job.K, W, 0.0, bv.get());
  hwy::AlignedFreeUniquePtr<float[]> bf;
  if (job.b_float != nullptr) {
    bf = hwy::AllocateAligned<float>(size);
    pack_rows(job.b_float, job.N, job.K, W, 0.0f, bf.get());
  }
  const std::vector<float> a_lead(job.a_lead, job.a_lead + static_cast<std::size_t>(job.M) * job.K);
  pack_rows(job.b_lead, job.N, job.K, W, static_cast<float>(kNoTerm), bl.get());
  static constexpr auto tiles = tile_table<Tile, kBlockRows>();
  for_chunks<kBlockRows>(job.d, job.M, job.N, job.K, job.step.n, W, job.threads,
                         [&](int rows, int i, int j0, int k0, int kc, double* c, std::size_t ldc) {
                           const std::size_t at = (j0 / W * job.K + k0) * W, a_at = static_cast<std::size_t>(i) * job.K + k0;
                           tiles[rows - 1](job.step, job.a + a_at, job.a_float ? job.a_float + a_at : nullptr,
                                           a_lead.data() + a_at, job.K, bv.get() + at,
                                           job.b_float ? bf.get() + at : nullptr, bl.get() + at, kc, c, ldc);
                         });
}

#if HWY_TARGET <= HWY_AVX3
// The wide kernel's float-lane case on AVX-512, with no double lanes at all: the same block step
// as wide_tile, with C kept as a float (it is an fp32-range accumulator value), E in int32 lanes,
// and the last rounding done by the instruction set's own round-toward-zero:
//   E = max(floor, lead(C), lead(a_k) + lead(b_k)), raised to low, the data's lowest product lead
//     (which changes no block with a product): 2^(F-E) is then a normal float (narrow_of),
//     trunc(C 2^(F-E)) an exact int32 below 2^(F+1), and every term one as in wide_tile;
//     S = trunc(C ..) + the int32 partial sums of narrow_terms terms, added in int32 with an
//     overflow check
//   C = rz(rz_float(S) 2^(E-F)) & rz_mask: two roundings toward zero onto nested grids (24 bits of
//     S, then the fp32 grid at S 2^(E-F), subnormal included, then the accumulator's) are one.
// A block whose E was below low has no product and leaves C as it was: C, 0 or made by the steps
// before (E >= low), is a multiple of 2^(low-F) on the accumulator's grid and below 2^low, so
// C 2^(F-low) = S is an exact integer below 2^F and S 2^(low-F) = C again.
// A lane whose S leaves int32, whose E or last C reaches lead 127 (C at the accumulator's largest
// magnitude, onto which an overflow rounds toward zero, has it) or whose C came in as NaN is NaN
// at the end: the reference redoes it. S is checked only where the widths let it leave int32
// (sum_fits), the leads through their maximum, once per chunk.
// The leads' maximum runs on two products per 32-bit lane (lead pairs): int16 leads, products k
// and k + 1 of an even k side by side, so that one 16-bit addition and maximum serve both. Blocks
// have an even n (narrow_chain_runs), so every block starts a pair; a block cut short by K's end
// pairs its last product with A's next lead (one past the row, padded past the array) and B's
// padding, kNoLead: the saturating addition keeps that pair far below every floor.
constexpr std::size_t kNarrowRows = 6;

// B's leads (K x N, row-major) into panels of W columns of lead pairs: panel p holds, per pair
// k = 0, 2, 4, ..., W words whose halves are columns' leads at k and k + 1 (kNoLead past K and N).
inline void pack_lead_pairs(const std::int16_t* lead, int N, int K, std::size_t W, std::int16_t* out) {
  const std::size_t panels = (static_cast<std::size_t>(N) + W - 1) / W, pairs = (K + 1) / 2;
  for (std::size_t q = 0; q < pairs; ++q) {
    const std::int16_t* even = lead + 2 * q * N;
    const std::int16_t* odd = 2 * q + 1 < static_cast<std::size_t>(K) ? even + N : nullptr;
    for (std::size_t p = 0; p < panels; ++p) {
      std::int16_t* to = out + (p * pairs + q) * W * 2;
      const std::size_t j0 = p * W, cols = std::min<std::size_t>(W, N - j0);
      for (std::size_t j = 0; j < cols; ++j) {
        to[2 * j] = even[j0 + j];
        to[2 * j + 1] = odd != nullptr ? odd[j0 + j] : kNoLead;
      }
      std::fill(to + 2 * cols, to + 2 * W, kNoLead);
    }
  }
}

// Per 16-bit half (lead pairs): la + lb, saturating.
HWY_INLINE VI pair_lead_sum(VI la, VI lb) {
  const hn::Repartition<std::int16_t, DI> dp;
  return hn::BitCast(DI(), hn::SaturatedAdd(hn::BitCast(dp, la), hn::BitCast(dp, lb)));
}

// The larger of each word's two int16 leads, as an int32: the top half of max(x, x << 16), shifted
// down with its sign; word_lead_max's twin.
HWY_INLINE VI word_pair_max(VI x) {
  const hn::Repartition<std::int16_t, DI> dp;
  return hn::ShiftRight<16>(hn::BitCast(DI(), hn::Max(hn::BitCast(dp, x), hn::BitCast(dp, hn::ShiftLeft<16>(x)))));
}

// top[r] = the lead pairs' maxima over products [k0, k1) (k0 even, k1 > k0) of R rows: A's int16
// leads from al (row stride lda), B's panel of lead pairs bl (W words a pair).
// Count > 0: exactly Count products (k1 = k0 + Count), unrolled completely (fixed_blocks).
template <std::size_t R, int Count = 0>
HWY_INLINE void pair_lead_maxima(const std::int16_t* HWY_RESTRICT al, std::size_t lda,
                                 const std::int32_t* HWY_RESTRICT bl, int k0, int k1, VI (&top)[R]) {
  const DI di;
  const hn::Repartition<std::int16_t, DI> dp;
  const std::size_t W = hn::Lanes(di);
  const auto pair = [&](int k, bool first) {
    const VI lb = hn::Load(di, bl + k / 2 * W);
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r) {
      std::int32_t la;
      std::memcpy(&la, al + r * lda + k, sizeof la);
      const VI sum = pair_lead_sum(hn::Set(di, la), lb);
      top[r] = first ? sum : hn::BitCast(di, hn::Max(hn::BitCast(dp, top[r]), hn::BitCast(dp, sum)));
    }
  };
  pair(k0, true);
  if constexpr (Count > 0) {
    HWY_UNROLL(16)
    for (int t = 2; t < Count; t += 2) pair(k0 + t, false);
  } else {
    for (int k = k0 + 2; k < k1; k += 2) pair(k, false);
  }
}

template <std::size_t R, int Block = 0>
struct narrow_tile {
  static HWY_NOINLINE void run(const wide_step& s, const float* HWY_RESTRICT av, const std::int16_t* HWY_RESTRICT al,
                               std::size_t lda, const float* HWY_RESTRICT bv, const std::int32_t* HWY_RESTRICT bl,
                               int kc, double* HWY_RESTRICT c, std::size_t ldc) {
    const DF df;
    const DI di;
    const DD dd;
    const hn::Rebind<float, DD> dh;
    constexpr std::size_t L = hn::MaxLanes(DD()), W = hn::MaxLanes(DF());
    static_assert(W == kVectors * L, "one float vector spans the panel");
    const VI floor = hn::Set(di, static_cast<std::int32_t>(s.floor)), low = hn::Set(di, static_cast<std::int32_t>(s.narrow_floor));
    const VF acc_emin = hn::Set(df, static_cast<float>(s.acc_emin));
    const VI scale_top = hn::Set(di, static_cast<std::int32_t>(s.frac_bits) + 127), inverse_top = hn::Set(di, 254 << 23);
    const VI rz_mask = hn::Set(di, static_cast<std::int32_t>(static_cast<std::uint32_t>(s.rz_mask >> 29)));
    const VI below_top = hn::Set(di, 126);  // below the float lanes' (the accumulator's) largest lead, 127
    const VI never = hn::Set(di, 0x40000000);  // a peak that marks a lane for the reference
    VF acc[R];
    // peak: the largest E of the blocks so far, or at least never where S left int32 or C came in
    // as NaN (one array for both keeps the tile's vectors in registers).
    VI peak[R];
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r) {
      const VD lo = hn::LoadU(dd, c + r * ldc), hi = hn::LoadU(dd, c + r * ldc + L);
      acc[r] = hn::Combine(df, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
      peak[r] = hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(acc[r])), never, floor);
    }
    // C's lead: its exponent, acc_emin for a subnormal (at least floor <= acc_emin), floor for 0.
    const auto c_lead = [&](VF x) {
      return VI{_mm512_mask_cvttps_epi32(floor.raw, _mm512_cmp_ps_mask(x.raw, _mm512_setzero_ps(), _CMP_NEQ_UQ),
                                         hn::Max(acc_emin, VF{_mm512_getexp_ps(x.raw)}).raw)};
    };
    // One block step on products [k0, k1): Count of them when Count > 0 (fixed_blocks). Inlined:
    // else GCC made the step a function, the tile's vectors passing through memory.
    const auto block = [&]<int Count>(int k0, int k1) HWY_ATTR __attribute__((always_inline)) {
      VI top[R];
      pair_lead_maxima<R, Count>(al, lda, bl, k0, k1, top);
      VI ref[R];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r) {
        ref[r] = hn::Max(c_lead(acc[r]), word_pair_max(top[r]));
        peak[r] = hn::Max(peak[r], ref[r]);
      }
      VF scale[R][kVectors];  // add_terms' shapes; only [r][0] is used
      VI sum[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r) {
        scale[r][0] = hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(scale_top, hn::Max(ref[r], low))));
        sum[r][0] = truncate(hn::Mul(acc[r], scale[r][0]));
      }
      if (s.sum_fits) {
        add_terms<R, 1, Count>(av, lda, bv, W, k0, k1, scale, sum);
      } else {
        for (int p0 = k0; p0 < k1; p0 += s.narrow_terms) {
          VI part[R][kVectors];
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r) part[r][0] = hn::Zero(di);
          add_terms<R, 1>(av, lda, bv, W, p0, std::min(k1, p0 + s.narrow_terms), scale, part);
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r) {
            const VI t = hn::Add(sum[r][0], part[r][0]);
            // Signed overflow: t's sign differs from both addends' (ternary logic 0x42 is (a^c)&(b^c)).
            const VI overflow = VI{_mm512_ternarylogic_epi32(sum[r][0].raw, part[r][0].raw, t.raw, 0x42)};
            peak[r] = hn::IfThenElse(hn::Lt(overflow, hn::Zero(di)), never, peak[r]);
            sum[r][0] = t;
          }
        }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r) {
        const VF inverse = hn::BitCast(df, hn::Sub(inverse_top, hn::BitCast(di, scale[r][0])));
        const __m512 x = _mm512_mul_round_ps(_mm512_cvt_roundepi32_ps(sum[r][0].raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                             inverse.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        acc[r] = hn::BitCast(df, hn::And(hn::BitCast(di, VF{x}), rz_mask));
      }
    };
    int k0 = 0;
    if constexpr (Block > 0)
      for (; k0 + Block <= kc; k0 += Block) block.template operator()<Block>(k0, k0 + Block);
    for (; k0 < kc; k0 += s.n) block.template operator()<0>(k0, std::min(kc, k0 + s.n));
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r) {
      const auto bad = hn::Gt(hn::Max(peak[r], c_lead(acc[r])), below_top);
      const VF out = hn::IfThenElse(hn::RebindMask(df, bad), hn::NaN(df), acc[r]);
      hn::StoreU(hn::PromoteTo(dd, hn::LowerHalf(dh, out)), dd, c + r * ldc);
      hn::StoreU(hn::PromoteTo(dd, hn::UpperHalf(dh, out)), dd, c + r * ldc + L);
    }
  }
};

// Runs Tile (up to Rows rows) over a lead_job whose products run in float lanes: B's floats and
// leads packed into panels, the leads as pairs (pack_lead_pairs).
template <std::size_t Rows, class Step, class Tiles>
void float_lane_chain(const lead_job<Step>& job, const Tiles& tiles) {
  const std::size_t W = hn::Lanes(DF()), panels = (job.N + W - 1) / W, pairs = (job.K + 1) / 2;
  const auto bf = hwy::AllocateAligned<float>(panels * W * job.K);
  const auto bl = hwy::AllocateAligned<std::int32_t>(panels * pairs * W);
  pack_rows(job.b_float, job.N, job.K, W, 0.0f, bf.get());
  pack_lead_pairs(job.b_lead, job.N, job.K, W, reinterpret_cast<std::int16_t*>(bl.get()));
  for_chunks<Rows>(job.d, job.M, job.N, job.K, job.step.n, W, job.threads,
                   [&](int rows, int i, int j0, int k0, int kc, double* c, std::size_t ldc) {
                     const std::size_t at = (j0 / W * job.K + k0) * W, a_at = static_cast<std::size_t>(i) * job.K + k0;
                     tiles[rows - 1](job.step, job.a_float + a_at, job.a_lead + a_at, job.K, bf.get() + at,
                                     bl.get() + (j0 / W * pairs + k0 / 2) * W, kc, c, ldc);
                   });
}
#endif

// Whether wide_chain runs a step whose products fit float lanes (narrow_tile), which reads the
// values only as floats (job.a and job.b may be null then).
bool narrow_chain_runs(const wide_step& s) {
#if HWY_TARGET <= HWY_AVX3
  return s.narrow_terms > 0 && s.floor <= s.acc_emin && s.acc_frac <= s.frac_bits && s.n % 2 == 0;
#else
  (void)s;
  return false;
#endif
}

void wide_chain(const wide_job& job) {
#if HWY_TARGET <= HWY_AVX3
  if (narrow_chain_runs(job.step))
    return float_lane_chain<kNarrowRows>(job, fixed_blocks<narrow_tile, kNarrowRows>(job.step.n));
#endif
  lead_chain<wide_tile>(job);
}

// ---- Block-FMA chain with exactly summed, scaled groups (Blackwell mxf4, mxf4nvf4) --------------

// R rows x W columns of accumulators c go through the block steps of kc products, in double
// lanes, per output and block (block_fma.hpp step 3 with scale_group g):
//   G_t = sum of the g products of group t, exactly; the group is a term when one of its products
//         is not zero (masks: a bit per non-zero input), of lead sa_t + sb_t, the scales' leads
//   E = max(floor, lead(C), leads of the terms)
//   S = trunc(C 2^(F-E)) + sum_t trunc(G_t sa_t sb_t 2^(F-E))
//   C = toward_zero(S 2^(E-F))
// G_t is exact in double and so is each scaled term and S (group_kernel_applies). The group arrays
// (masks, scale values and leads) run per group: A's with stride lds per row, B's panels W wide.
template <std::size_t R>
struct group_tile {
  static HWY_NOINLINE void run(const wide_step& s, int g, const double* HWY_RESTRICT av, std::size_t lda,
                               const std::int64_t* HWY_RESTRICT am, const double* HWY_RESTRICT as,
                               const double* HWY_RESTRICT asl, std::size_t lds, const double* HWY_RESTRICT bv,
                               const std::int64_t* HWY_RESTRICT bm, const double* HWY_RESTRICT bs,
                               const double* HWY_RESTRICT bsl, int kc, double* HWY_RESTRICT c, std::size_t ldc) {
    const DD dd;
    const DL dl;
    const std::size_t L = hn::Lanes(dd), W = kVectors * L;
    const VD floor = hn::Set(dd, s.floor), frac = hn::Set(dd, s.frac_bits);
    for (int k0 = 0; k0 < kc; k0 += s.n) {
      const int k1 = std::min(kc, k0 + s.n), t0 = k0 / g, groups = (k1 - k0 + g - 1) / g;
      VD ref[R][kVectors], sum[kMaxGroups][R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) ref[r][v] = c_ref(s, hn::LoadU(dd, c + r * ldc + v * L));
      for (int t = 0; t < groups; ++t) {
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r)
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) sum[t][r][v] = hn::Zero(dd);
        for (int k = k0 + t * g; k < std::min(k1, k0 + (t + 1) * g); ++k) {
          VD b[kVectors];
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(dd, bv + k * W + v * L);
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r) {
            const VD x = hn::Set(dd, av[r * lda + k]);
            HWY_UNROLL(8)
            for (std::size_t v = 0; v < kVectors; ++v) sum[t][r][v] = hn::MulAdd(x, b[v], sum[t][r][v]);
          }
        }
        const std::size_t tb = static_cast<std::size_t>(t0 + t) * W;
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          const auto mask_a = hn::Set(dl, am[r * lds + t0 + t]);
          const VD lead_a = hn::Set(dd, asl[r * lds + t0 + t]);
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) {
            const auto live = hn::Ne(hn::And(mask_a, hn::Load(dl, bm + tb + v * L)), hn::Zero(dl));
            const VD lead = hn::Add(lead_a, hn::Load(dd, bsl + tb + v * L));
            ref[r][v] = hn::Max(ref[r][v], hn::IfThenElse(hn::RebindMask(dd, live), lead, floor));
          }
        }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) {
          const VD scale = pow2(hn::Sub(frac, ref[r][v]));
          VD total = hn::Trunc(hn::Mul(hn::LoadU(dd, c + r * ldc + v * L), scale));
          for (int t = 0; t < groups; ++t) {
            const std::size_t tb = static_cast<std::size_t>(t0 + t) * W;
            const VD pair = hn::Mul(hn::Set(dd, as[r * lds + t0 + t]), hn::Load(dd, bs + tb + v * L));
            total = hn::Add(total, hn::Trunc(hn::Mul(hn::Mul(sum[t][r][v], pair), scale)));
          }
          hn::StoreU(toward_zero(s, total, ref[r][v]), dd, c + r * ldc + v * L);
        }
    }
  }
};

void group_chain(const group_job& job) {
  const std::size_t W = kVectors * hn::Lanes(DD()), panels = (job.N + W - 1) / W;
  const int T = (job.K + job.g - 1) / job.g;
  const auto bv = hwy::AllocateAligned<double>(panels * W * job.K);
  const auto bm = hwy::AllocateAligned<std::int64_t>(panels * W * T);
  const auto bs = hwy::AllocateAligned<double>(panels * W * T);
  const auto bsl = hwy::AllocateAligned<double>(panels * W * T);
  pack_rows(job.b, job.N, job.K, W, 0.0, bv.get());
  pack_rows(job.b_mask, job.N, T, W, std::int64_t{0}, bm.get());
  pack_rows(job.b_scale, job.N, T, W, 0.0, bs.get());
  pack_rows(job.b_scale_lead, job.N, T, W, static_cast<double>(kNoTerm), bsl.get());
  static constexpr auto tiles = tile_table<group_tile, kBlockRows>();
  for_chunks<kBlockRows>(job.d, job.M, job.N, job.K, job.step.n, W, job.threads,
                         [&](int rows, int i, int j0, int k0, int kc, double* c, std::size_t ldc) {
                           // The tile counts groups from the chunk's first: its group arrays start there.
                           const std::size_t t0 = static_cast<std::size_t>(k0 / job.g), p = j0 / W;
                           const std::size_t at = (p * job.K + k0) * W, gt = (p * T + t0) * W;
                           const std::size_t a_at = static_cast<std::size_t>(i) * job.K + k0,
                                             s_at = static_cast<std::size_t>(i) * T + t0;
                           tiles[rows - 1](job.step, job.g, job.a + a_at, job.K, job.a_mask + s_at, job.a_scale + s_at,
                                           job.a_scale_lead + s_at, T, bv.get() + at, bm.get() + gt, bs.get() + gt,
                                           bsl.get() + gt, kc, c, ldc);
                         });
}

// ---- Two-stage block-FMA chain (AMD CDNA3, double lanes) ----------------------------------------

// R rows x W columns of fp32 accumulators c go through the two-stage block steps of kc products
// (block_fma.hpp step 6), per output and block:
//   E_s = max(floor, leads of the products of sub-sum s), P_s = sum trunc(a_k b_k 2^(F-E_s))
//   E = max E_s, P = sum_s floor(P_s 2^(E_s-E))                          (units 2^(E-F))
//   E' = max(E, e_C), q = E' - F2 - 1
//   x = (floor(P 2^(E-F-q)) + floor(C 2^(F-E')) 2^(F2+1-F)) 2^q          (C dropped if far)
//   x = floor(x / 2^(e_x - F2)) 2^(e_x - F2), e_x = max(exponent(x), emin)
//   C = round_to_nearest_even_fp32(x)
// floor is at or below the accumulator's emin, so E' is e_C when there are no products, and an
// empty sub-sum adds 0 at an exponent that never wins. Every quantity is an integer times a power
// of two below 2^53 (staged_kernel_applies); the last step is the host's double -> float
// conversion, one rounding. The leads' maxima run in float lanes (lead_maxima).
// The floor of x to F2 + 1 significant bits is, for a normal double, clearing its 52 - F2 lowest
// fraction bits, after adding them all first where x is negative (that carries into the kept
// bits exactly when a dropped bit is set: the magnitude rounds up); below 2^emin the quantum is
// fixed (rare: only such lanes, zeros among them, take the branch).
// A C that is not finite stays so (infinity, or NaN) through later blocks: the chunk's end makes
// it NaN, and the reference redoes that output.
template <std::size_t I>
struct staged_tiles {
  template <std::size_t R>
  struct tile {
    static HWY_NOINLINE void run(const staged_step& s, const double* HWY_RESTRICT av, const float* /*avf*/,
                                 const float* HWY_RESTRICT al, std::size_t lda, const double* HWY_RESTRICT bv,
                                 const float* /*bvf*/, const float* HWY_RESTRICT bl, int kc, double* HWY_RESTRICT c,
                                 std::size_t ldc) {
      const DD dd;
      const DL dl;
      const std::size_t L = hn::Lanes(dd), W = kVectors * L;
      const int shift = static_cast<int>(s.second_bits) + 1 - static_cast<int>(s.frac_bits);  // F2 + 1 - F
      const VD zero = hn::Zero(dd), acc_emin = hn::Set(dd, s.acc_emin), frac = hn::Set(dd, s.frac_bits);
      const VD c_unit = hn::Set(dd, std::ldexp(1.0, shift)), tiny = hn::Set(dd, std::ldexp(1.0, static_cast<int>(s.acc_emin)));
      const auto dropped = hn::Set(dl, static_cast<std::int64_t>((std::uint64_t{1} << (52 - static_cast<int>(s.second_bits))) - 1));
      VD acc[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::LoadU(dd, c + r * ldc + v * L);
      for (int k0 = 0; k0 < kc; k0 += s.n) {
        const int k1 = std::min(kc, k0 + s.n);
        VD ref[I][R][kVectors], scale[I][R][kVectors], sum[I][R][kVectors];
        HWY_UNROLL(8)
        for (std::size_t i = 0; i < I; ++i) {
          lead_maxima(al, lda, bl, k0 + static_cast<int>(i), k1, static_cast<int>(I), static_cast<float>(s.floor), ref[i]);
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r)
            HWY_UNROLL(8)
            for (std::size_t v = 0; v < kVectors; ++v) {
              scale[i][r][v] = pow2(hn::Sub(frac, ref[i][r][v]));
              sum[i][r][v] = zero;
            }
        }
        for (int k = k0; k < k1; ++k) {
          const std::size_t sub = I == 1 ? 0 : static_cast<std::size_t>(k - k0) % I;
          VD b[kVectors];
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(dd, bv + k * W + v * L);
          HWY_UNROLL(8)
          for (std::size_t r = 0; r < R; ++r) {
            const VD x = hn::Set(dd, av[r * lda + k]);
            HWY_UNROLL(8)
            for (std::size_t v = 0; v < kVectors; ++v)
              sum[sub][r][v] = hn::Add(sum[sub][r][v], hn::Trunc(hn::Mul(hn::Mul(x, b[v]), scale[sub][r][v])));
          }
        }
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r)
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) {
            VD e = ref[0][r][v], p = sum[0][r][v];
            if constexpr (I == 2) {
              e = hn::Max(ref[0][r][v], ref[1][r][v]);
              p = hn::Add(hn::Floor(hn::Mul(sum[0][r][v], pow2(hn::Sub(ref[0][r][v], e)))),
                          hn::Floor(hn::Mul(sum[1][r][v], pow2(hn::Sub(ref[1][r][v], e)))));
            }
            const VD cv = acc[r][v];
            const VD e_c = hn::Max(exponent_of(cv), acc_emin);
            const VD e_max = hn::Max(e, e_c);
            // P and C in units of 2^q: P 2^(E - E' + F2 + 1 - F), C 2^(F - E') then 2^(F2 + 1 - F).
            const VD pq = hn::Floor(hn::Mul(p, pow2(hn::Sub(e, e_max), shift)));
            VD cq = hn::Floor(hn::Mul(cv, pow2(hn::Sub(frac, e_max))));
            if (s.drop_far_c) cq = hn::IfThenZeroElse(hn::Lt(e_c, hn::Sub(hn::Sub(e_max, frac), hn::Set(dd, 1.0))), cq);
            const VD x = hn::Mul(hn::MulAdd(cq, c_unit, pq), pow2(e_max, -(s.second_bits + 1)));
            const auto bits = hn::BitCast(dl, x);
            VD kept = hn::BitCast(dd, hn::AndNot(dropped, hn::Add(bits, hn::And(hn::BroadcastSignBit(bits), dropped))));
            const auto small = hn::Lt(hn::Abs(x), tiny);
            if (!hn::AllFalse(dd, small)) {
              const VD quantum = hn::Sub(acc_emin, hn::Set(dd, s.second_bits));
              kept = hn::IfThenElse(small, hn::Mul(hn::Floor(hn::Mul(x, pow2(hn::Neg(quantum)))), pow2(quantum)), kept);
            }
            acc[r][v] = nearest_fp32(hn::Add(kept, zero));
          }
      }
      const VD big = hn::Set(dd, 0x1p128);
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v)
          hn::StoreU(hn::IfThenElse(hn::Lt(hn::Abs(acc[r][v]), big), acc[r][v], hn::NaN(dd)), dd, c + r * ldc + v * L);
    }
  };
};

#if HWY_TARGET <= HWY_AVX3
// The two-stage kernel's float-lane case on AVX-512, for data whose values, products and scales
// 2^(F - E) are normal floats (float_products) and formats whose sums fit int32
// (staged_narrow_widths): staged_tiles' block step in 16 float and int32 lanes, C a float.
//   E_s from lead pairs (narrow_tile's): with interleave 2 a pair's halves are the even and the odd
//     sub-sum's (blocks start on an even k), with interleave 1 the larger half
//   P_s = sum trunc(a_k b_k 2^(F - max(E_s, lowest))) in int32 (add_terms): a sub-sum with a
//     product has E_s at or above the data's lowest product lead, so the max changes only empty
//     ones, which add 0; every term is below 2^(F+2)
//   E = max E_s, P = sum_s floor(P_s 2^(E_s - E)): arithmetic right shifts, whose counts past 31
//     fill with the sign, the floor again
//   E' = max(E, e_C); in units u = 2^(E'-F), with G = F2 + 1 - F (q = E' - F2 - 1 is u 2^-G):
//     C' = floor(C 2^(F-E')) = c >> (E' - e_C) for the integer c = C 2^(F-e_C) (F >= 23), below 2^(F+1)
//     floor(P 2^(E-F) 2^-q) 2^q / u = P >> d + L 2^-G, d = E' - E, L = P's bits [d - G, d)
//     so x / u = H + L 2^-G with H = C' + P >> d, an int32 (below 2^(F+3+log2 n))
//   h1 = H rounded toward zero to a float, r1 = H - h1 (below 2^7), w = r1 2^G + L (below 2^(G+7),
//     a float): x / u = h1 + w 2^-G exactly
//   the floor to F2 + 1 bits: x / u's exponent e (rounding toward zero keeps it) leaves
//     s = e + 1 - F bits of w to clear (at most G: x below 2^(E'+3+log2 n)); h1 is a multiple of
//     that quantum, so the floor of x is h1 + (w & -2^s) 2^-G
//   C = fma(w', 2^-G, h1) 2^(E'-F): the fused multiply-add's one nearest-even rounding to 24 bits,
//     then an exact scaling while the result is a normal float.
// No x is below 2^emin = 2^-126 but 0 (staged_tiles' fixed quantum never applies): C' and t are
// multiples of 2^(E-F) or coarser, E at least the data's lowest product lead, and float_products
// has F - lowest <= 126; an empty block leaves C (E' = e_C, C' = C). So every C is a normal float
// or zero, and the last scaling exact unless it overflows. A C that is not finite stays so: e_C
// and E' are floats, through whose maxima NaN and infinity carry (maxps returns its second operand
// where one is NaN) into the last scaling; the chunk's end makes it NaN, the reference redoes it.
template <std::size_t I>
struct staged_narrow_tiles {
  template <std::size_t R>
  struct tile {
    static HWY_NOINLINE void run(const staged_step& s, const float* HWY_RESTRICT av,
                                 const std::int16_t* HWY_RESTRICT al, std::size_t lda, const float* HWY_RESTRICT bv,
                                 const std::int32_t* HWY_RESTRICT bl, int kc, double* HWY_RESTRICT c,
                                 std::size_t ldc) {
      const DF df;
      const DI di;
      const DD dd;
      const hn::Rebind<float, DD> dh;  // half a float vector
      constexpr std::size_t L = hn::MaxLanes(DD()), W = hn::MaxLanes(DF());
      static_assert(W == 2 * L, "one float vector spans the panel");
      constexpr int kToZero = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
      const int F = static_cast<int>(s.frac_bits), G = static_cast<int>(s.second_bits) + 1 - F;
      const VI floor = hn::Set(di, static_cast<std::int32_t>(s.floor)),
               low = hn::Set(di, static_cast<std::int32_t>(s.narrow_floor)), scale_top = hn::Set(di, F + 127),
               g = hn::Set(di, G), g_bits = hn::Set(di, (1 << G) - 1), far = hn::Set(di, F + 1), zero = hn::Zero(di);
      const VF acc_emin = hn::Set(df, static_cast<float>(s.acc_emin)), frac = hn::Set(df, static_cast<float>(F)),
               clear_from = hn::Set(df, static_cast<float>(1 - F)), unit = hn::Set(df, std::ldexp(1.0f, -G));
      VF acc[R];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r) {
        const VD lo = hn::LoadU(dd, c + r * ldc), hi = hn::LoadU(dd, c + r * ldc + L);
        acc[r] = hn::Combine(df, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
      }
      for (int k0 = 0; k0 < kc; k0 += s.n) {
        const int k1 = std::min(kc, k0 + s.n);
        VI top[R];
        pair_lead_maxima(al, lda, bl, k0, k1, top);
        VI lead[I][R];
        VF scale[I][R][kVectors];  // add_terms' shapes; only [i][r][0] is used
        VI sum[I][R][kVectors];
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          if constexpr (I == 1) {
            lead[0][r] = hn::Max(floor, word_pair_max(top[r]));
          } else {
            lead[0][r] = hn::Max(floor, hn::ShiftRight<16>(hn::ShiftLeft<16>(top[r])));
            lead[1][r] = hn::Max(floor, hn::ShiftRight<16>(top[r]));
          }
          HWY_UNROLL(8)
          for (std::size_t i = 0; i < I; ++i) {
            scale[i][r][0] = hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(scale_top, hn::Max(lead[i][r], low))));
            sum[i][r][0] = zero;
          }
        }
        HWY_UNROLL(8)
        for (std::size_t i = 0; i < I; ++i)
          add_terms<R, 1>(av, lda, bv, W, k0 + static_cast<int>(i), k1, scale[i], sum[i], static_cast<int>(I));
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          VI e = lead[0][r], p = sum[0][r][0];
          if constexpr (I == 2) {
            e = hn::Max(lead[0][r], lead[1][r]);
            p = hn::Add(VI{_mm512_srav_epi32(sum[0][r][0].raw, hn::Sub(e, lead[0][r]).raw)},
                        VI{_mm512_srav_epi32(sum[1][r][0].raw, hn::Sub(e, lead[1][r]).raw)});
          }
          const VF e_cf = hn::Max(acc_emin, VF{_mm512_getexp_ps(acc[r].raw)});
          const VF e_maxf = hn::Max(hn::ConvertTo(df, e), e_cf);
          const VI e_c = truncate(e_cf), e_max = truncate(e_maxf), d = hn::Sub(e_max, e);
          VI cq = VI{_mm512_srav_epi32(truncate(VF{_mm512_scalef_ps(acc[r].raw, hn::Sub(frac, e_cf).raw)}).raw,
                                       hn::Sub(e_max, e_c).raw)};
          if (s.drop_far_c) cq = hn::IfThenZeroElse(hn::Lt(e_c, hn::Sub(e_max, far)), cq);
          const VI h = hn::Add(cq, VI{_mm512_srav_epi32(p.raw, d.raw)});
          // P's bits [d - G, d): shifted down by d - G, or up by G - d (the count past 31 there
          // would fill with the sign).
          const VI l = hn::And(VI{_mm512_mask_sllv_epi32(_mm512_srav_epi32(p.raw, hn::Sub(d, g).raw),
                                                         hn::Lt(d, g).raw, p.raw, hn::Sub(g, d).raw)},
                               g_bits);
          const VF h1 = VF{_mm512_cvt_roundepi32_ps(h.raw, kToZero)};
          const VI w = hn::Add(hn::ShiftLeftSame(hn::Sub(h, truncate(h1)), G), l);
          const VF exponent =
              VF{_mm512_getexp_ps(_mm512_fmadd_round_ps(hn::ConvertTo(df, w).raw, unit.raw, h1.raw, kToZero))};
          const VI clear = hn::Max(truncate(hn::Add(exponent, clear_from)), zero);
          const VI keep = VI{_mm512_sllv_epi32(hn::Set(di, -1).raw, clear.raw)};
          const VF rounded = hn::MulAdd(hn::ConvertTo(df, hn::And(w, keep)), unit, h1);
          acc[r] = VF{_mm512_scalef_ps(rounded.raw, hn::Sub(e_maxf, frac).raw)};
        }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r) {
        const VF out = hn::IfThenElse(hn::IsFinite(acc[r]), acc[r], hn::NaN(df));
        hn::StoreU(hn::PromoteTo(dd, hn::LowerHalf(dh, out)), dd, c + r * ldc);
        hn::StoreU(hn::PromoteTo(dd, hn::UpperHalf(dh, out)), dd, c + r * ldc + L);
      }
    }
  };
};

// Rows per staged_narrow_tiles tile: at 6 the tile's vectors and constants spilled C to the stack.
constexpr std::size_t kStagedNarrowRows = 5;
#endif

// Whether staged_chain runs staged_narrow_tiles, which reads the values only as floats (job.a
// and job.b may be null then).
bool staged_narrow_runs(const staged_step& s) {
#if HWY_TARGET <= HWY_AVX3
  return s.narrow;
#else
  (void)s;
  return false;
#endif
}

void staged_chain(const staged_job& job) {
#if HWY_TARGET <= HWY_AVX3
  if (staged_narrow_runs(job.step))
    return job.step.interleave == 2
               ? float_lane_chain<kStagedNarrowRows>(job, tile_table<staged_narrow_tiles<2>::tile, kStagedNarrowRows>())
               : float_lane_chain<kStagedNarrowRows>(job,
                                                     tile_table<staged_narrow_tiles<1>::tile, kStagedNarrowRows>());
#endif
  job.step.interleave == 2 ? lead_chain<staged_tiles<2>::tile>(job) : lead_chain<staged_tiles<1>::tile>(job);
}

// ---- Exact block sums (AMD CDNA1, double lanes) ---------------------------------------------------

// R rows x W columns of fp32 accumulators c go through the exact block steps of kc products (one
// chunk): C = round_to_nearest_even_fp32(C + sum of the block's products), the sum exact. The
// products are exact doubles, and the host's double -> float conversion is the one rounding once
// the block's sum is exact in double. Two ways to know it is:
//
// Certified by bounds, for the whole chunk at once (the common case): every product is a
// multiple of 2^T, T = the least over the chunk's runs of kQuantumRun products of min quantum(a)
// + min quantum(b) over the run (a product pairs values of one run), and so is C if T is at most
// C's fp32 quantum; the nearest fp32 value of a multiple of 2^T is one again (it is the value, or
// a multiple of a coarser fp32 quantum), so every C of the chunk is. Every partial sum is at most
// |C0| + sum |a_k b_k| <= |C0| + |a| |b| (Cauchy-Schwarz), times (1 + 2^-24)^(kc/n) for the
// roundings between: with X = (|C0| + |a| |b|) (1 + 2^-10) (also covering the rounding of X
// itself and of the norms), exponent(X) < T + 53 puts every partial sum below 2^(T+53): each is
// an integer multiple of 2^T that fits 53 bits, exact.
//
// Otherwise, with Knuth's TwoSum, whose error terms e say how far the double sum is from the exact
// one: |T - s| <= sum |e|. When every e is zero s is T. Otherwise T lies in [s - B, s + B],
// B = 2 sum |e| + |s| 2^-50 (wide enough that both ends move past s itself, so a tie at s is seen),
// and rounding is monotone: where both ends round to the same fp32 code, sign of zero included,
// that code is T's. Where they do not (T within 2^-29 or so of a tie, on random data a few in
// 10^9) the lane becomes NaN and the reference computes that output, as it does for a result that
// is not finite. An exactly zero sum is +0 (zero_sign::exact_positive).
template <std::size_t R>
struct exact_tile {
  // a_quantum: row 0's runs of this chunk (row r's from r ld_quantum); b_quantum: the panel's, a
  // run's W lanes from q W. The norms likewise, one per chunk.
  static HWY_NOINLINE void run(int n, const double* HWY_RESTRICT av, std::size_t lda, const double* HWY_RESTRICT bp,
                               int kc, const double* HWY_RESTRICT a_quantum, std::size_t ld_quantum,
                               const double* HWY_RESTRICT b_quantum, const double* HWY_RESTRICT a_norm,
                               std::size_t ld_norm, const double* HWY_RESTRICT b_norm, double* HWY_RESTRICT c,
                               std::size_t ldc) {
    const DD dd;
    const std::size_t L = hn::Lanes(dd), W = kVectors * L;
    VD acc[R][kVectors];
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::LoadU(dd, c + r * ldc + v * L);
    const int runs = runs_of(kc);
    auto uncertified = hn::FirstN(dd, 0);
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v) {
        const VD c0 = acc[r][v];
        VD t = hn::IfThenElse(hn::Eq(c0, hn::Zero(dd)), hn::Set(dd, kNoQuantum),
                              hn::Sub(hn::Max(exponent_of(c0), hn::Set(dd, -126.0)), hn::Set(dd, 23.0)));
        for (int q = 0; q < runs; ++q)
          t = hn::Min(t, hn::Add(hn::Set(dd, a_quantum[r * ld_quantum + q]), hn::Load(dd, b_quantum + q * W + v * L)));
        const VD x = hn::Mul(hn::MulAdd(hn::Set(dd, a_norm[r * ld_norm]), hn::Load(dd, b_norm + v * L), hn::Abs(c0)),
                             hn::Set(dd, 1.0 + 0x1p-10));
        // A NaN lane (an earlier chunk left the range) stays NaN either way.
        const auto too_wide = hn::Ge(exponent_of(x), hn::Add(t, hn::Set(dd, 53.0)));
        uncertified = hn::Or(uncertified, hn::AndNot(hn::IsNaN(c0), too_wide));
      }
    if (hn::AllFalse(dd, uncertified))
      certified(n, av, lda, bp, kc, acc);
    else
      two_sum(n, av, lda, bp, kc, acc);
    const VD big = hn::Set(dd, 0x1p128);
    HWY_UNROLL(8)
    for (std::size_t r = 0; r < R; ++r)
      HWY_UNROLL(8)
      for (std::size_t v = 0; v < kVectors; ++v)
        hn::StoreU(hn::IfThenElse(hn::Lt(hn::Abs(acc[r][v]), big), acc[r][v], hn::NaN(dd)), dd, c + r * ldc + v * L);
  }

  // Plain double sums, rounded once per block (an infinity stays one, or becomes NaN, to the end).
  // Each step is one fused multiply-add: the product and the partial sum it makes are exact (the
  // bounds above), so fusing them changes no bit, and it halves the operations per product.
  static HWY_INLINE void certified(int n, const double* HWY_RESTRICT av, std::size_t lda,
                                   const double* HWY_RESTRICT bp, int kc, VD (&acc)[R][kVectors]) {
    const DD dd;
    const std::size_t L = hn::Lanes(dd), W = kVectors * L;
    for (int k0 = 0; k0 < kc; k0 += n) {
      const int k1 = std::min(kc, k0 + n);
      for (int k = k0; k < k1; ++k) {
        VD b[kVectors];
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(dd, bp + k * W + v * L);
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          const VD x = hn::Set(dd, av[r * lda + k]);
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::MulAdd(x, b[v], acc[r][v]);
        }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v)
          acc[r][v] = nearest_fp32(hn::Add(acc[r][v], hn::Zero(dd)));
    }
  }

  static HWY_INLINE void two_sum(int n, const double* HWY_RESTRICT av, std::size_t lda,
                                 const double* HWY_RESTRICT bp, int kc, VD (&acc)[R][kVectors]) {
    const DD dd;
    const DL dl;
    const std::size_t L = hn::Lanes(dd), W = kVectors * L;
    const VD zero = hn::Zero(dd), nan = hn::NaN(dd), widen = hn::Set(dd, 0x1p-50);
    for (int k0 = 0; k0 < kc; k0 += n) {
      const int k1 = std::min(kc, k0 + n);
      VD err[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) err[r][v] = zero;
      for (int k = k0; k < k1; ++k) {
        VD b[kVectors];
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) b[v] = hn::Load(dd, bp + k * W + v * L);
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r) {
          const VD x = hn::Set(dd, av[r * lda + k]);
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) {
            const VD p = hn::Mul(x, b[v]), s = acc[r][v], t = hn::Add(s, p), bb = hn::Sub(t, s);
            const VD e = hn::Add(hn::Sub(s, hn::Sub(t, bb)), hn::Sub(p, bb));
            acc[r][v] = t;
            err[r][v] = hn::Add(err[r][v], hn::Abs(e));
          }
        }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) {
          const VD s = acc[r][v];
          VD f = nearest_fp32(hn::Add(s, zero));
          const auto exact = hn::Eq(err[r][v], zero);
          if (!hn::AllTrue(dd, exact)) {  // rare on most data: the bounds only where needed
            const VD bound = hn::MulAdd(hn::Abs(s), widen, hn::Add(err[r][v], err[r][v]));
            const auto lo = hn::BitCast(dl, nearest_fp32(hn::Sub(s, bound)));
            const auto hi = hn::BitCast(dl, nearest_fp32(hn::Add(s, bound)));
            f = hn::IfThenElse(hn::Or(exact, hn::RebindMask(dd, hn::Eq(lo, hi))), f, nan);
          }
          acc[r][v] = f;
        }
    }
  }
};

void exact_chain(const exact_job& job) {
  const std::size_t W = kVectors * hn::Lanes(DD()), size = (job.N + W - 1) / W * W * job.K;
  const int chunk = chunk_of(job.n), C = (job.K + chunk - 1) / chunk, Q = C * runs_of(chunk);
  const std::size_t panels = (job.N + W - 1) / W * W;
  const auto bp = hwy::AllocateAligned<double>(size);
  const auto bq = hwy::AllocateAligned<double>(panels * Q);
  const auto bn = hwy::AllocateAligned<double>(panels * C);
  pack_rows(job.b, job.N, job.K, W, 0.0, bp.get());
  pack_rows(job.b_quantum, job.N, Q, W, kNoQuantum, bq.get());
  pack_rows(job.b_norm, job.N, C, W, 0.0, bn.get());
  static constexpr auto tiles = tile_table<exact_tile, kBlockRows>();
  for_chunks<kBlockRows>(job.d, job.M, job.N, job.K, job.n, W, job.threads,
                         [&](int rows, int i, int j0, int k0, int kc, double* c, std::size_t ldc) {
                           const std::size_t chunk_i = static_cast<std::size_t>(k0 / chunk),
                                             q = chunk_i * runs_of(chunk), row = static_cast<std::size_t>(i);
                           tiles[rows - 1](job.n, job.a + row * job.K + k0, job.K, bp.get() + (j0 / W * job.K + k0) * W,
                                           kc, job.a_quantum + row * Q + q, Q, bq.get() + (j0 / W * Q + q) * W,
                                           job.a_norm + row * C + chunk_i, C, bn.get() + (j0 / W * C + chunk_i) * W,
                                           c, ldc);
                         });
}

// ---- Pairwise chain (AMD CDNA2) -------------------------------------------------------------------

// x, or zero of x's sign where the model flushes x (below 2^-126 in magnitude).
template <bool Flush>
HWY_INLINE VF flushed(VF x) {
  if constexpr (!Flush) {
    return x;
  } else {
    const DF df;
    const DI di;
    const VF sign = hn::BitCast(df, hn::Set(di, static_cast<std::int32_t>(0x80000000u)));
    return hn::IfThenElse(hn::Lt(hn::Abs(x), hn::Set(df, 0x1p-126f)), hn::And(x, sign), x);
  }
}

// The tree of pairwise_tree (block_fma.hpp) over products [Lo, Hi) of one row (a) and one vector
// of columns (b, stride W): leaves are the rounded products, nodes the rounded sums.
template <int Lo, int Hi, bool Flush>
struct pair_tree {
  static HWY_INLINE VF run(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, std::size_t W) {
    const DF df;
    if constexpr (Hi - Lo == 1) {
      return flushed<Flush>(hn::Mul(hn::Set(df, a[Lo]), hn::Load(df, b + Lo * W)));
    } else {
      constexpr int Mid = Lo + (Hi - Lo) / 2;
      return flushed<Flush>(hn::Add(pair_tree<Lo, Mid, Flush>::run(a, b, W), pair_tree<Mid, Hi, Flush>::run(a, b, W)));
    }
  }
};

// The same tree for a block size known at run time only (a short last block, an unusual n).
template <bool Flush>
VF pair_tree_of(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, std::size_t W, int lo, int hi) {
  const DF df;
  if (hi - lo == 1) return flushed<Flush>(hn::Mul(hn::Set(df, a[lo]), hn::Load(df, b + lo * W)));
  const int mid = lo + (hi - lo) / 2;
  return flushed<Flush>(hn::Add(pair_tree_of<Flush>(a, b, W, lo, mid), pair_tree_of<Flush>(a, b, W, mid, hi)));
}

// R rows x W columns of c continue their pairwise chains over kc products: per block of n,
// C = flush(C + tree), in the host's own fp32 nearest-even arithmetic.
template <bool Flush>
struct pairwise_tiles {
  template <std::size_t R>
  struct tile {
    static HWY_NOINLINE void run(int n, const float* HWY_RESTRICT a, std::size_t lda, const float* HWY_RESTRICT bp,
                                 int kc, float* HWY_RESTRICT c, std::size_t ldc) {
      const DF df;
      const std::size_t L = hn::Lanes(df), W = kVectors * L;
      VF acc[R][kVectors];
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::LoadU(df, c + r * ldc + v * L);
      for (int k0 = 0; k0 < kc; k0 += n) {
        const int nb = std::min(n, kc - k0);
        HWY_UNROLL(8)
        for (std::size_t r = 0; r < R; ++r)
          HWY_UNROLL(8)
          for (std::size_t v = 0; v < kVectors; ++v) {
            const float* ar = a + r * lda + k0;
            const float* b = bp + k0 * W + v * L;
            const VF t = nb == 4   ? pair_tree<0, 4, Flush>::run(ar, b, W)
                         : nb == 2 ? pair_tree<0, 2, Flush>::run(ar, b, W)
                                   : pair_tree_of<Flush>(ar, b, W, 0, nb);
            acc[r][v] = flushed<Flush>(hn::Add(acc[r][v], t));
          }
      }
      HWY_UNROLL(8)
      for (std::size_t r = 0; r < R; ++r)
        HWY_UNROLL(8)
        for (std::size_t v = 0; v < kVectors; ++v) hn::StoreU(acc[r][v], df, c + r * ldc + v * L);
    }
  };
};

template <bool Flush>
void pairwise_rows(const pairwise_job& job) {
  const std::size_t W = kVectors * hn::Lanes(DF()), size = (job.N + W - 1) / W * W * job.K;
  const auto bp = hwy::AllocateAligned<float>(size);
  pack_rows(job.b, job.N, job.K, W, 0.0f, bp.get());
  static constexpr auto tiles = tile_table<pairwise_tiles<Flush>::template tile, kFmaRows>();
  for_chunks<kFmaRows>(job.d, job.M, job.N, job.K, job.n, W, job.threads,
                       [&](int rows, int i, int j0, int k0, int kc, float* c, std::size_t ldc) {
                         tiles[rows - 1](job.n, job.a + static_cast<std::size_t>(i) * job.K + k0, job.K,
                                         bp.get() + (j0 / W * job.K + k0) * W, kc, c, ldc);
                       });
}

void pairwise_chain(const pairwise_job& job) { job.flush ? pairwise_rows<true>(job) : pairwise_rows<false>(job); }

}  // namespace HWY_NAMESPACE
}  // namespace fpemu::analysis::gemm_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fpemu::analysis {
namespace gemm_simd {

HWY_EXPORT(float_leads);
HWY_EXPORT(fma_chain);
HWY_EXPORT(block_chain);
HWY_EXPORT(wide_chain);
HWY_EXPORT(narrow_chain_runs);
HWY_EXPORT(pairwise_chain);
HWY_EXPORT(staged_chain);
HWY_EXPORT(staged_narrow_runs);
HWY_EXPORT(group_chain);
HWY_EXPORT(exact_chain);

bool run_fma_chain(const fma_job& job) { return HWY_DYNAMIC_DISPATCH(fma_chain)(job); }
bool run_block_chain(const block_job& job) { return HWY_DYNAMIC_DISPATCH(block_chain)(job); }
void run_wide_chain(const wide_job& job) { HWY_DYNAMIC_DISPATCH(wide_chain)(job); }
bool narrow_chain_runs_here(const wide_step& s) { return HWY_DYNAMIC_DISPATCH(narrow_chain_runs)(s); }
void run_pairwise_chain(const pairwise_job& job) { HWY_DYNAMIC_DISPATCH(pairwise_chain)(job); }
void run_staged_chain(const staged_job& job) { HWY_DYNAMIC_DISPATCH(staged_chain)(job); }
bool staged_narrow_runs_here(const staged_step& s) { return HWY_DYNAMIC_DISPATCH(staged_narrow_runs)(s); }
void run_group_chain(const group_job& job) { HWY_DYNAMIC_DISPATCH(group_chain)(job); }
void run_exact_chain(const exact_job& job) { HWY_DYNAMIC_DISPATCH(exact_chain)(job); }

namespace {

bool is_float_valued(const format& f) { return f.exp_bits <= 8 && f.frac_bits <= 23 && (f.exp_bits < 8 || f.bias >= 127); }

// A format with fp32's exponent range and encoding, and at most its fraction bits (fp32, e8m13):
// its values are floats, and its codes the top bits of theirs.
bool is_fp32_range(const format& f) {
  return f.exp_bits == 8 && f.bias == 127 && f.encoding == nonfinite::ieee && f.subnormals && f.has_zero &&
         f.is_signed && f.frac_bits <= 23;
}

// Row-major values of codes, or nothing if one is not finite.
std::optional<std::vector<float>> decode_all(const format& f, std::span<const std::uint32_t> codes) {
  std::vector<float> v(codes.size());
  bool finite = false;
  decoder(f, codes.size()).visit(
      [&](const auto& decode) { finite = decode_run(decode, codes.data(), codes.size(), v.data()); });
  if (!finite) return std::nullopt;
  return v;
}

// The datapath the block, wide and group kernels compute: one sum of aligned terms, each truncated,
// rounded toward zero into an fp32-range accumulator, every zero +0, nothing flushed.
bool truncating_sum(const block_fma_model& m) {
  return is_fp32_range(m.acc) && m.acc.frac_bits >= 2 && m.sum == block_sum::aligned && m.frac_bits >= 2 &&
         m.alignment == alignment_rounding::truncate && m.acc_rounding.mode == round_mode::toward_zero &&
         m.zero == zero_sign::positive && m.input_subnormals && m.output_subnormals && m.interleave == 1 &&
         m.second_frac_bits == 0 && !m.product_overflow;
}

// An fp32 accumulator rounded to nearest even, overflowing to infinity: the host's own rounding
// (the pairwise, two-stage and exact kernels end with it).
bool nearest_even_fp32(const block_fma_model& m) {
  return m.acc == formats::fp32 &&
         m.acc_rounding == rounding{round_mode::nearest_even, overflow_policy::ieee, m.acc_rounding.sr_bits};
}

// The kernel is exact when every reference exponent E it can meet keeps 2^(F-E) and S * 2^(E-F)
// normal floats, |S| < 2^24 (float(S) exact) and no overflow. E is at least the smallest
// non-zero running sum's exponent, emin_a + emin_b - F, and at most the largest sum's,
// emax_a + emax_b + 2 + bit_width(K). A min_reference_exp at or below every term's exponent
// never clamps (the smallest product exponent, or C's, which is at least the accumulator's emin).
bool block_kernel_applies(const block_fma_model& m, const format& fa, const format& fb, int K) {
  const bool small_input = fa.exp_bits <= 5 && fa.frac_bits <= 10 && fb.exp_bits <= 5 && fb.frac_bits <= 10;
  const int sum_bits = m.frac_bits + 2 + std::bit_width(static_cast<unsigned>(m.block_size + 1));
  const int e_low = emin(fa) + emin(fb) - m.frac_bits;
  const int e_high = emax(fa) + emax(fb) + 2 + std::bit_width(static_cast<unsigned>(K));
  const bool in_range = e_low >= m.frac_bits - 126 && e_high + sum_bits - m.frac_bits <= 126;
  return truncating_sum(m) && small_input && in_range && sum_bits <= 24 && m.scale_block == 0 &&
         m.min_reference_exp <= std::min(emin(fa) + emin(fb), emin(m.acc));
}

// The wide kernel is exact (wide_tile) when products of two inputs and two scales have at most 53
// significant bits, and so does the sum of a block's n terms and C: a term is below 2^(F+2)
// relative to 2^E, 2^(F+4) with scales that have fraction bits (two UE4M3 significands multiply
// to below 4 in units of their leads). Leads stay within a few hundred of zero for formats of at
// most 8 exponent bits and E8M0 or UE4M3 scales, so every scaling is a normal double.
struct wide_widths {
  int product, term, sum;
};

wide_widths widths_of(const block_fma_model& m, const format& fa, const format& fb, const format& scale) {
  const int scale_bits = m.scale_block > 0 ? scale.frac_bits + 1 : 0;
  const int term = m.frac_bits + 2 + (scale_bits > 1 ? 2 : 0);
  return {fa.frac_bits + 1 + fb.frac_bits + 1 + 2 * scale_bits, term,
          term + static_cast<int>(std::bit_width(static_cast<unsigned>(m.block_size + 1)))};
}

bool wide_kernel_applies(const block_fma_model& m, const format& fa, const format& fb, const format& scale) {
  const wide_widths w = widths_of(m, fa, fb, scale);
  return truncating_sum(m) && m.scale_group == 0 && w.product <= 53 && w.sum <= 53 &&
         (m.scale_block == 0 || scale == formats::e8m0fnu || scale == formats::e4m3fn);
}

// The smallest lead a term can have, the floor of E below which min_reference_exp never binds
// (every non-zero term is at or above it, and an all-zero block gives +0 whatever E is).
int lowest_lead(const block_fma_model& m, const format& fa, const format& fb, const format& scale) {
  const int scales = m.scale_block > 0 ? 2 * emin(scale) : 0;
  return std::max(m.min_reference_exp, std::min(emin(fa) + emin(fb) + scales, emin(m.acc)));
}

// The pairwise kernel is the host's fp32 arithmetic: products and sums rounded to nearest even,
// overflowing to infinity, with IEEE signs of zero.
bool pairwise_kernel_applies(const block_fma_model& m) {
  return m.sum == block_sum::pairwise && nearest_even_fp32(m) && m.zero == zero_sign::ieee;
}

// The two-stage kernel is exact (staged_tile) when products have at most 53 significant bits and
// so does a block's product sum moved to C's finer quantum: P < 2^(F+2+bit_width(n+1)), shifted
// up by at most F2 + 1 - F bits. The floor must not bind (an empty block's E' is e_C), and the
// final rounding is the host's: nearest-even fp32, its zero's sign that of an underflow.
bool staged_kernel_applies(const block_fma_model& m, const format& fa, const format& fb) {
  const int product_bits = fa.frac_bits + 1 + fb.frac_bits + 1;
  const int shifted_bits = m.second_frac_bits + 1 + 2 + std::bit_width(static_cast<unsigned>(m.block_size + 1));
  return m.sum == block_sum::aligned && m.second_frac_bits > 0 && m.second_frac_bits + 1 >= m.frac_bits &&
         nearest_even_fp32(m) && m.alignment == alignment_rounding::truncate && (m.interleave == 1 || (m.interleave == 2 && m.block_size % 2 == 0)) &&
         m.scale_block == 0 && m.scale_group == 0 && m.input_subnormals && m.output_subnormals &&
         m.zero == zero_sign::exact_positive && !m.overflow_infinite &&
         m.min_reference_exp <= std::min(emin(fa) + emin(fb), emin(m.acc)) && product_bits <= 53 && shifted_bits <= 53;
}

// The group kernel is exact (group_tile) when a group's sum of g products fits 53 bits at the
// smallest product quantum (the span of the formats' exponents and fractions), the sum times
// two scale significands does too, and a block's terms and C stay below 2^53 in units of
// 2^(E-F): a term is below 2^(F + bits of the largest group sum), 2 bits more with scales that
// have fraction bits.
bool group_kernel_applies(const block_fma_model& m, const format& fa, const format& fb, const format& scale) {
  const int g = m.scale_group;
  const bool scaled = m.scale_block > 0;
  const int scale_bits = scaled ? scale.frac_bits + 1 : 0;
  auto span = [](const format& f) { return emax(f) - emin(f) + f.frac_bits + 1; };
  const int group_bits = span(fa) + span(fb) + std::bit_width(static_cast<unsigned>(g));
  const int magnitude_bits = emax(fa) + 1 + emax(fb) + 1 + std::bit_width(static_cast<unsigned>(g));
  const int sum_bits = m.frac_bits + magnitude_bits + (scale_bits > 1 ? 2 : 0) +
                       std::bit_width(static_cast<unsigned>(m.block_size / std::max(g, 1) + 1));
  return g > 0 && g <= 64 && m.block_size % g == 0 && m.block_size / g <= kMaxGroups &&
         (!scaled || (m.scale_block % g == 0 && (scale == formats::e8m0fnu || scale == formats::e4m3fn))) &&
         truncating_sum(m) && group_bits + 2 * scale_bits <= 53 && sum_bits <= 53;
}

// Values, masks and group scales of A (rows x cols = M x K, groups per row) or B (K x N, groups
// per column) for group_job; nothing when a value or scale is not finite.
struct group_operand {
  std::vector<double> value;
  std::vector<std::int64_t> mask;
  std::vector<double> scale, scale_lead;
};

std::optional<group_operand> group_operand_of(const format& f, std::span<const std::uint32_t> codes, int rows,
                                              int cols, bool k_along_cols, const block_fma_model& m,
                                              const format& scale_fmt, std::span<const std::uint32_t> scales) {
  const std::optional<std::vector<float>> v = decode_all(f, codes);
  if (!v) return std::nullopt;
  const int g = m.scale_group, K = k_along_cols ? cols : rows, others = k_along_cols ? rows : cols;
  const int T = (K + g - 1) / g, per = m.scale_block > 0 ? (K + m.scale_block - 1) / m.scale_block : 0;
  auto at = [&](int other, int t) {  // A: M x T, B: T x N
    return k_along_cols ? static_cast<std::size_t>(other) * T + t : static_cast<std::size_t>(t) * others + other;
  };
  group_operand o{std::vector<double>(v->begin(), v->end()), std::vector<std::int64_t>(static_cast<std::size_t>(others) * T),
                  std::vector<double>(static_cast<std::size_t>(others) * T, 1.0),
                  std::vector<double>(static_cast<std::size_t>(others) * T, 0.0)};
  for (int r = 0; r < rows; ++r) {
    const float* x = v->data() + static_cast<std::size_t>(r) * cols;
    if (k_along_cols) {  // a row of A: its groups side by side
      for (int t = 0; t < T; ++t) {
        std::int64_t mask = 0;
        for (int k = t * g; k < std::min(K, t * g + g); ++k) mask |= static_cast<std::int64_t>(x[k] != 0.0f) << (k - t * g);
        o.mask[at(r, t)] = mask;
      }
    } else {  // a row k of B: one bit of every column's group
      std::int64_t* mask = &o.mask[at(0, r / g)];
      for (int c = 0; c < cols; ++c) mask[c] |= static_cast<std::int64_t>(x[c] != 0.0f) << (r % g);
    }
  }
  if (scales.empty() || m.scale_block == 0) return o;
  for (int other = 0; other < others; ++other)
    for (int t = 0; t < T; ++t) {
      const std::uint32_t code = scales[static_cast<std::size_t>(other) * per + t * g / m.scale_block];
      const unpacked u = detail::read_scale(scale_fmt, code);
      if (u.cls == value_class::nan || u.cls == value_class::infinite) return std::nullopt;
      const bool zero = u.cls == value_class::zero;
      o.scale[at(other, t)] = zero ? 0.0 : to_double(scale_fmt, code & magnitude_mask(scale_fmt));
      o.scale_lead[at(other, t)] = zero ? kNoTerm : u.exp + scale_fmt.frac_bits;
    }
  return o;
}

// The exact kernel (exact_tile): products exact in double, one nearest-even rounding into fp32,
// zeros as zero_sign::exact_positive has them, no flushing.
bool exact_kernel_applies(const block_fma_model& m, const format& fa, const format& fb) {
  return m.sum == block_sum::exact && fa.frac_bits + 1 + fb.frac_bits + 1 <= 53 && nearest_even_fp32(m) &&
         m.zero == zero_sign::exact_positive && m.input_subnormals && m.output_subnormals;
}

// A's or B's values (row-major rows x cols) with their block scales multiplied in, their leads
// (kNoTerm for zero) and their range, from one pass over the codes; nothing when a value or scale
// is not finite. K runs along A's columns and B's rows; `scales` holds ceil(K / g) codes per row of
// A or column of B (empty: scales of 1). Asked for floats, the pass stores the values as floats
// (the float-lane kernels read only those), or starts over with doubles at a value that is not a
// float. The arrays are left uninitialised until the pass writes them: at 512 x 4096, zeroing them
// first, with the page faults that caused, cost about a quarter of an emulated GEMM.
struct wide_operand {
  std::size_t size = 0;
  std::unique_ptr<double[]> value;  // null while the values are floats
  std::unique_ptr<float[]> narrow;  // the values, when asked for as floats
  std::unique_ptr<std::int16_t[]> lead;  // size + 1, the last one kNoLead (see lead_job)
  double least = INFINITY, peak = 0.0;  // the smallest and largest non-zero magnitudes
  std::int32_t lowest_lead = INT_MAX;   // the lowest lead of a non-zero value

  // The values as doubles, widened from the floats the first time (exactly).
  const double* values() {
    if (!value) {
      value = std::make_unique_for_overwrite<double[]>(size);
      std::copy_n(narrow.get(), size, value.get());
    }
    return value.get();
  }
};

std::optional<wide_operand> wide_operand_of(const format& f, std::span<const std::uint32_t> codes, int rows, int cols,
                                            bool k_along_cols, const format& scale_fmt,
                                            std::span<const std::uint32_t> scales, int g, bool floats) {
  std::vector<double> scale_value(scales.size());
  std::vector<std::int32_t> scale_lead(scales.size());
  for (std::size_t i = 0; i < scales.size(); ++i) {
    const unpacked u = detail::read_scale(scale_fmt, scales[i]);
    if (u.cls == value_class::nan || u.cls == value_class::infinite) return std::nullopt;
    scale_value[i] = to_double(scale_fmt, scales[i] & magnitude_mask(scale_fmt));
    scale_lead[i] = u.exp + scale_fmt.frac_bits;  // the model's scale_lead: subnormals at emin
  }
  const int per = g > 0 ? ((k_along_cols ? cols : rows) + g - 1) / g : 0, low = emin(f);
  wide_operand o;
  o.size = codes.size();
  o.lead = std::make_unique_for_overwrite<std::int16_t[]>(o.size + 1);
  o.lead[o.size] = kNoLead;
  if (floats)
    o.narrow = std::make_unique_for_overwrite<float[]>(o.size);
  else
    o.value = std::make_unique_for_overwrite<double[]>(o.size);
  bool finite = true, exact = true;
  decoder(f, codes.size()).visit([&](const auto& decode) {
    if (scales.empty()) {  // every value a float: all but the MX presets
      // In runs that stay in L1: decoded into the values (or a run's floats), then read by the
      // vector pass.
      constexpr std::size_t kRun = 4096;
      std::vector<float> run(floats ? 0 : kRun);
      value_range v;
      for (std::size_t i = 0; i < o.size; i += kRun) {
        const std::size_t count = std::min(kRun, o.size - i);
        float* x = floats ? o.narrow.get() + i : run.data();
        for (std::size_t j = 0; j < count; ++j) x[j] = decode(codes[i + j]);
        v.join(HWY_DYNAMIC_DISPATCH(float_leads)(x, count, low, o.lead.get() + i));
        if (!floats) std::copy_n(x, count, o.value.get() + i);
      }
      finite = !v.bad;
      if (v.peak > 0)
        o.least = std::bit_cast<float>(v.least), o.peak = std::bit_cast<float>(v.peak), o.lowest_lead = v.lowest;
      return;
    }
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const std::size_t at = static_cast<std::size_t>(r) * cols + c;
        const float x = decode(codes[at]);
        finite &= std::isfinite(x);
        const int k = k_along_cols ? c : r, other = k_along_cols ? r : c;
        const std::size_t s = static_cast<std::size_t>(other) * per + k / g;
        const double value = x * scale_value[s];
        const std::int32_t lead = lead_of(x, low) + scale_lead[s];
        if (floats) {
          o.narrow[at] = static_cast<float>(value);
          exact &= static_cast<double>(o.narrow[at]) == value;
        } else {
          o.value[at] = value;
        }
        o.lead[at] = value == 0.0 ? kNoLead : static_cast<std::int16_t>(lead);
        if (value != 0.0) {
          o.least = std::min(o.least, std::fabs(value));
          o.peak = std::max(o.peak, std::fabs(value));
          o.lowest_lead = std::min(o.lowest_lead, lead);
        }
      }
  });
  if (!finite) return std::nullopt;
  if (!exact) return wide_operand_of(f, codes, rows, cols, k_along_cols, scale_fmt, scales, g, false);
  return o;
}

// A's and B's wide operands (block scales of g along K multiplied in where g > 0), or nothing when
// a value or scale is not finite; their values as floats where asked for and they are floats.
std::optional<std::pair<wide_operand, wide_operand>> wide_operands(const format& fa, std::span<const std::uint32_t> a,
                                                                   const format& fb, std::span<const std::uint32_t> b,
                                                                   int M, int N, int K, const block_scale_codes& scales,
                                                                   int g, bool floats = false) {
  auto wa = wide_operand_of(fa, a, M, K, true, scales.fmt, g > 0 ? scales.a : std::span<const std::uint32_t>{}, g, floats);
  auto wb = wide_operand_of(fb, b, K, N, false, scales.fmt, g > 0 ? scales.b : std::span<const std::uint32_t>{}, g, floats);
  if (!wa || !wb) return std::nullopt;
  return std::pair{std::move(*wa), std::move(*wb)};
}

// The wide and group kernels' step for model m, E never below `floor`.
wide_step wide_step_of(const block_fma_model& m, int floor) {
  return wide_step{m.block_size,
                   static_cast<double>(m.frac_bits),
                   static_cast<double>(floor),
                   static_cast<double>(emin(m.acc)),
                   static_cast<double>(m.acc.frac_bits),
                   std::ldexp(1.0, emax(m.acc) + 1),
                   ~((std::uint64_t{1} << (52 - m.acc.frac_bits)) - 1)};
}

// For exact_job, of each row of A (k_along_cols: rows x runs or chunks) or column of B (runs or
// chunks x cols): per run of kQuantumRun values along K (runs_of(chunk) per chunk of `chunk`), the
// exponent of the finest quantum of its non-zero values (their lead, subnormals at emin, less the
// format's fraction bits); per chunk, an upper bound on its 2-norm (the double sum of squares is
// within K 2^-53 of the true one, far inside the 2^-40 added).
struct chunk_bounds {
  std::vector<double> quantum, norm;
};

chunk_bounds bounds_of(const wide_operand& o, int rows, int cols, bool k_along_cols, int frac_bits, int chunk) {
  const int K = k_along_cols ? cols : rows, others = k_along_cols ? rows : cols, C = (K + chunk - 1) / chunk,
            Q = C * runs_of(chunk);
  chunk_bounds out{std::vector<double>(static_cast<std::size_t>(others) * Q, kNoQuantum),
                   std::vector<double>(static_cast<std::size_t>(others) * C, 0.0)};
  // In memory order; out.norm holds the sums of squares until the end. A row of A sums a run in
  // locals: through references into out, each value waited for the last one's store.
  const auto bound = [frac_bits](double x, std::int32_t lead, double& quantum, double& squares) {
    quantum = std::min(quantum, x == 0.0 ? kNoQuantum : static_cast<double>(lead - frac_bits));
    squares += x * x;
  };
  // body(k0, k1, q, i) for each run [k0, k1) along K: q counts the runs (a full chunk has
  // runs_of(chunk), only the last chunk is short), i is the run's chunk.
  const auto for_runs = [&](const auto& body) {
    for (int i = 0, q = 0; i < C; ++i)
      for (int k0 = i * chunk, end = std::min(K, k0 + chunk); k0 < end; k0 += kQuantumRun, ++q)
        body(k0, std::min(end, k0 + kQuantumRun), static_cast<std::size_t>(q), static_cast<std::size_t>(i));
  };
  if (k_along_cols) {  // the rows of A: each its runs and chunks side by side
    for (int r = 0; r < rows; ++r) {
      const std::size_t at = static_cast<std::size_t>(r) * cols;
      double* quantum = out.quantum.data() + static_cast<std::size_t>(r) * Q;
      double* squares = out.norm.data() + static_cast<std::size_t>(r) * C;
      for_runs([&](int k0, int k1, std::size_t q, std::size_t i) {
        double least = kNoQuantum, sum = 0.0;
        for (int k = k0; k < k1; ++k) bound(o.value[at + k], o.lead[at + k], least, sum);
        quantum[q] = least;
        squares[i] += sum;
      });
    }
  } else {  // the rows k of B: one run and one chunk of every column
    for_runs([&](int k0, int k1, std::size_t q, std::size_t i) {
      double* quantum = out.quantum.data() + q * static_cast<std::size_t>(others);
      double* squares = out.norm.data() + i * static_cast<std::size_t>(others);
      for (int k = k0; k < k1; ++k) {
        const std::size_t at = static_cast<std::size_t>(k) * cols;
        for (int c = 0; c < cols; ++c) bound(o.value[at + c], o.lead[at + c], quantum[c], squares[c]);
      }
    });
  }
  for (double& n : out.norm) n = std::sqrt(n) * (1.0 + 0x1p-40);
  return out;
}

// Whether the data allows products in float lanes: every value of a and b (as floats) and every
// product of two a normal float, and 2^(F - E) one for E from the lowest product lead up (E is at
// most a product's lead or C's, below 2^128).
bool float_products(int frac_bits, const wide_operand& a, const wide_operand& b) {
  if (!a.narrow || !b.narrow || a.peak == 0.0 || b.peak == 0.0) return false;
  const int a_low = std::ilogb(a.least), a_high = std::ilogb(a.peak), b_low = std::ilogb(b.least),
            b_high = std::ilogb(b.peak);
  return a_low >= -126 && b_low >= -126 && a_high <= 127 && b_high <= 127 && a_low + b_low >= -126 &&
         a_high + b_high + 2 <= 127 && frac_bits - (a.lowest_lead + b.lowest_lead) <= 126;
}

// The wide kernel's products in float lanes (wide_tile), where the widths and the data allow:
// every product a float of at most 24 bits and a term below 2^31 (terms = 0 otherwise: products in
// double).
struct narrow_products {
  int terms = 0;
  double floor = 0.0;
};

// Whether the formats' widths allow float-lane products (the data must too, narrow_of).
bool narrow_widths(const wide_widths& w) { return w.product <= 24 && w.term <= 30; }

narrow_products narrow_of(const block_fma_model& m, const wide_widths& w, const wide_operand& a,
                          const wide_operand& b) {
  if (!narrow_widths(w) || !float_products(m.frac_bits, a, b)) return {};
  return {1 << (31 - w.term), static_cast<double>(a.lowest_lead + b.lowest_lead)};
}

// Whether the formats' widths allow the two-stage kernel's float lanes (staged_narrow_tiles; the
// data must allow float products too): products of at most 24 bits; C 2^(F-e_C) an integer; a
// block's terms (each below 2^(F+2)) and C' summing inside int32 (H); x below 2^(F2+1) units of
// 2^(E'-F) (the floor clears only L's bits); w below 2^24 (a float).
bool staged_narrow_widths(const block_fma_model& m, const format& fa, const format& fb) {
  const int log_n = std::bit_width(static_cast<unsigned>(m.block_size - 1)), G = m.second_frac_bits + 1 - m.frac_bits;
  return fa.frac_bits + 1 + fb.frac_bits + 1 <= 24 && m.frac_bits >= 23 && m.frac_bits + 3 + log_n <= 31 &&
         m.frac_bits + 2 + log_n <= m.second_frac_bits && G + 7 <= 24;
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& d, int shift) {
  std::vector<std::uint32_t> codes(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) codes[i] = std::bit_cast<std::uint32_t>(d[i]) >> shift;
  return codes;
}

// The accumulator codes of values d of an fp32-range format; where d is NaN (the kernel left its
// exact range) the output's chain runs through the model's own block steps instead.
template <class T>
std::vector<std::uint32_t> codes_of(const std::vector<T>& d, const format& fa, std::span<const std::uint32_t> a,
                                    const format& fb, std::span<const std::uint32_t> b, int N, int K,
                                    const accumulator_model& model, const block_scale_codes& scales) {
  const block_fma_model& m = model.block;
  std::vector<std::uint32_t> codes(d.size());
  const int g = m.scale_block, per = g > 0 ? (K + g - 1) / g : 0;
  const std::uint32_t one = from(scales.fmt, 1.0).code;
  for (std::size_t ij = 0; ij < d.size(); ++ij) {
    if (!std::isnan(d[ij])) {
      codes[ij] = std::bit_cast<std::uint32_t>(static_cast<float>(d[ij])) >> (23 - m.acc.frac_bits);
      continue;
    }
    const std::size_t i = ij / static_cast<std::size_t>(N), j = ij % static_cast<std::size_t>(N);
    dot_accumulator acc(model, fa, fb);
    for (int k = 0; k < K; ++k) {
      if (g > 0 && k % g == 0)
        acc.set_block_scales(scales.fmt, scales.a.empty() ? one : scales.a[i * per + k / g],
                             scales.b.empty() ? one : scales.b[j * per + k / g]);
      acc.add_product(a[i * K + k], b[static_cast<std::size_t>(k) * N + j]);
    }
    codes[ij] = acc.result(m.acc).code;
  }
  return codes;
}

}  // namespace
}  // namespace gemm_simd

std::optional<accumulated> fast_accumulate(const format& fa, std::span<const std::uint32_t> a, const format& fb,
                                           std::span<const std::uint32_t> b, int M, int N, int K,
                                           const accumulator_model& model, int threads,
                                           const block_scale_codes& scales) {
  using namespace gemm_simd;
  if (model.promote_every != 0 || !is_float_valued(fa) || !is_float_valued(fb)) return std::nullopt;
  const std::size_t MN = static_cast<std::size_t>(M) * N;
  if (model.kind == accumulator_kind::format) {
    if (!(model.acc == formats::fp32 && model.acc_rounding.mode == round_mode::nearest_even)) return std::nullopt;
    const std::optional<std::vector<float>> av = decode_all(fa, a);
    if (!av) return std::nullopt;
    const decoder b_decoder(fb, b.size());
    std::vector<float> d(MN);
    if (!run_fma_chain(fma_job{av->data(), b, &b_decoder, d.data(), M, N, K, threads})) return std::nullopt;
    return accumulated{formats::fp32, bits_of(d, 0)};
  }
  if (model.kind != accumulator_kind::block_fma) return std::nullopt;
  const block_fma_model& m = model.block;
  if (block_kernel_applies(m, fa, fb, K)) {
    const std::optional<std::vector<float>> av = decode_all(fa, a);
    if (!av) return std::nullopt;
    const decoder b_decoder(fb, b.size());
    std::vector<float> d(MN);
    const int n = m.block_size;
    const std::size_t row = lead_row(K, n);
    std::vector<std::uint32_t> a_lead(static_cast<std::size_t>(M) * row, kNoWord);
    for (int i = 0; i < M; ++i) pack_lead_bytes(av->data() + static_cast<std::size_t>(i) * K, 1, K, n, emin(fa), a_lead.data() + i * row);
    const block_step step{n, m.frac_bits, emin(fa) + emin(fb) - m.frac_bits,
                          ~((std::uint32_t{1} << (23 - m.acc.frac_bits)) - 1), emin(fa) + emin(fb)};
    if (!run_block_chain(
            block_job{step, av->data(), a_lead.data(), b, &b_decoder, emin(fb), d.data(), M, N, K, threads}))
      return std::nullopt;
    return accumulated{m.acc, bits_of(d, 23 - m.acc.frac_bits)};
  }
  if (wide_kernel_applies(m, fa, fb, scales.fmt)) {
    const wide_widths widths = widths_of(m, fa, fb, scales.fmt);
    auto w = wide_operands(fa, a, fb, b, M, N, K, scales, m.scale_block, narrow_widths(widths));
    if (!w) return std::nullopt;
    auto& [wa, wb] = *w;
    std::vector<double> d(MN);
    wide_step step = wide_step_of(m, lowest_lead(m, fa, fb, scales.fmt));
    const narrow_products narrow = narrow_of(m, widths, wa, wb);
    step.narrow_terms = narrow.terms;
    step.narrow_floor = narrow.floor;
    step.sum_fits = widths.sum <= 31;
    const bool floats_only = narrow_chain_runs_here(step);
    run_wide_chain(wide_job{step, floats_only ? nullptr : wa.values(), wa.lead.get(),
                            floats_only ? nullptr : wb.values(), wb.lead.get(), d.data(), M, N, K, threads,
                            narrow.terms > 0 ? wa.narrow.get() : nullptr, narrow.terms > 0 ? wb.narrow.get() : nullptr});
    return accumulated{m.acc, codes_of(d, fa, a, fb, b, N, K, model, scales), floats_only};
  }
  if (group_kernel_applies(m, fa, fb, scales.fmt)) {
    const auto ga = group_operand_of(fa, a, M, K, true, m, scales.fmt, scales.a);
    const auto gb = group_operand_of(fb, b, K, N, false, m, scales.fmt, scales.b);
    if (!ga || !gb) return std::nullopt;
    std::vector<double> d(MN);
    const int low = std::min(m.scale_block > 0 ? 2 * emin(scales.fmt) : 0, emin(m.acc));
    const wide_step step = wide_step_of(m, std::max(m.min_reference_exp, low));
    run_group_chain(group_job{step, m.scale_group, ga->value.data(), ga->mask.data(), ga->scale.data(),
                              ga->scale_lead.data(), gb->value.data(), gb->mask.data(), gb->scale.data(),
                              gb->scale_lead.data(), d.data(), M, N, K, threads});
    return accumulated{m.acc, codes_of(d, fa, a, fb, b, N, K, model, scales)};
  }
  if (staged_kernel_applies(m, fa, fb)) {
    const bool floats = staged_narrow_widths(m, fa, fb);
    auto w = wide_operands(fa, a, fb, b, M, N, K, scales, 0, floats);
    if (!w) return std::nullopt;
    auto& [wa, wb] = *w;
    // A product beyond fp32's range makes the block infinite (product_overflow): no kernel then.
    if (m.product_overflow && wa.peak * wb.peak >= std::ldexp(1.0, emax(m.acc) + 1))
      return std::nullopt;
    std::vector<double> d(MN);
    staged_step step{m.block_size,
                           m.interleave,
                           static_cast<double>(m.frac_bits),
                           static_cast<double>(m.second_frac_bits),
                           static_cast<double>(std::min(emin(fa) + emin(fb), emin(m.acc))),
                           static_cast<double>(emin(m.acc)),
                           m.drop_far_c};
    step.narrow = floats && float_products(m.frac_bits, wa, wb);
    step.narrow_floor = step.narrow ? wa.lowest_lead + wb.lowest_lead : 0.0;
    const bool floats_only = staged_narrow_runs_here(step);
    run_staged_chain(staged_job{step, floats_only ? nullptr : wa.values(), wa.lead.get(),
                                floats_only ? nullptr : wb.values(), wb.lead.get(), d.data(), M, N, K, threads,
                                step.narrow ? wa.narrow.get() : nullptr, step.narrow ? wb.narrow.get() : nullptr});
    return accumulated{m.acc, codes_of(d, fa, a, fb, b, N, K, model, scales), floats_only};
  }
  if (exact_kernel_applies(m, fa, fb)) {
    const auto w = wide_operands(fa, a, fb, b, M, N, K, scales, 0);
    if (!w) return std::nullopt;
    const auto& [wa, wb] = *w;
    const int chunk = chunk_of(m.block_size);
    const chunk_bounds qa = bounds_of(wa, M, K, true, fa.frac_bits, chunk),
                       qb = bounds_of(wb, K, N, false, fb.frac_bits, chunk);
    std::vector<double> d(MN);
    run_exact_chain(exact_job{m.block_size, wa.value.get(), qa.quantum.data(), qa.norm.data(), wb.value.get(),
                              qb.quantum.data(), qb.norm.data(), d.data(), M, N, K, threads});
    return accumulated{m.acc, codes_of(d, fa, a, fb, b, N, K, model, scales)};
  }
  if (pairwise_kernel_applies(m)) {
    // The model reads subnormal and zero inputs as +0 when it flushes them.
    auto read = [&](const format& f, std::span<const std::uint32_t> codes) {
      std::optional<std::vector<float>> v = decode_all(f, codes);
      const float normal = std::ldexp(1.0f, emin(f));
      if (v && !m.input_subnormals)
        for (float& x : *v)
          if (std::fabs(x) < normal) x = 0.0f;
      return v;
    };
    const std::optional<std::vector<float>> av = read(fa, a), bv = read(fb, b);
    if (!av || !bv) return std::nullopt;
    std::vector<float> d(MN);
    run_pairwise_chain(pairwise_job{m.block_size, !m.output_subnormals, av->data(), bv->data(), d.data(), M, N, K, threads});
    return accumulated{m.acc, codes_of(d, fa, a, fb, b, N, K, model, scales)};
  }
  return std::nullopt;
}

}  // namespace fpemu::analysis
#endif  // HWY_ONCE
