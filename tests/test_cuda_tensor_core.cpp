// The tensor-core GEMM kernels' host side, without a GPU: every argument error of
// tensor_core_gemm / single_instruction, the error when no device (or no CUDA) is there, the
// fragment index maps against the PTX ISA tables, the wgmma shared-memory layout and descriptor,
// and the promotion step (tensor_core.hpp) against analysis::gemm and the host FPU.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "cuda/tensor_core.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::cuda;
using namespace fpemu::cuda::detail;

namespace {

tensor_core_gemm_args valid_mma(int m = 16, int n = 8, int k = 32) {
  tensor_core_gemm_args g;
  g.instruction = tensor_core_instruction::mma_sync;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a_codes.assign(static_cast<std::size_t>(m) * k, 0x3c00);  // 1.0 in fp16
  g.b_codes.assign(static_cast<std::size_t>(k) * n, 0x3c00);
  return g;
}

tensor_core_gemm_args valid_wgmma_fp8() {
  tensor_core_gemm_args g;
  g.instruction = tensor_core_instruction::wgmma;
  g.a = formats::e4m3fn;
  g.b = formats::e5m2;
  g.m = 64;
  g.n = 64;
  g.k = 256;
  g.a_codes.assign(64 * 256, 0x38);  // 1.0 in e4m3fn
  g.b_codes.assign(256 * 64, 0x3c);  // 1.0 in e5m2
  return g;
}

std::string hex32(std::uint32_t x) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08x", x);
  return s;
}

bool no_device_error(const std::string& m) {
  return m.find("no CUDA device") != std::string::npos || m.find("built without CUDA") != std::string::npos;
}

// Random codes of f: N(0, 1) values rounded in, plus zeros, -0, subnormals and the largest
// finite values (no NaN or infinity: those make every output NaN).
std::vector<std::uint32_t> random_codes(const format& f, std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<std::uint32_t> v(n);
  for (auto& c : v) {
    const int p = static_cast<int>(rng() % 100);
    if (p < 5)
      c = 0;
    else if (p < 8)
      c = sign_mask(f);
    else if (p < 12)
      c = 1 + static_cast<std::uint32_t>(rng() % ((1u << f.frac_bits) - 1));
    else if (p < 14)
      c = max_finite_magnitude(f) | (rng() % 2 ? sign_mask(f) : 0);
    else
      c = from(f, normal(rng), rounding{round_mode::nearest_even, overflow_policy::saturate}).code;
  }
  return v;
}

// A positive binary32 scale 2^e * (1 + random fraction), e in [-20, 20]: products of two such
// scales round, so group_scale() is exercised beyond powers of two.
float random_scale(std::mt19937_64& rng) {
  const float frac = 1.0f + static_cast<float>(rng() % (1u << 23)) / static_cast<float>(1u << 23);
  return std::ldexp(frac, static_cast<int>(rng() % 41) - 20);
}

}  // namespace

TEST_CASE("tensor_core_gemm: every bad argument is rejected with a message naming it and the valid set") {
  using formats::bf16, formats::e4m3fn, formats::e5m2, formats::fp16, formats::tf32;
  struct bad {
    std::function<tensor_core_gemm_args()> make;
    const char* message;
  };
  const std::vector<bad> cases = {
      {[] { auto g = valid_mma(); g.a = bf16; return g; },
       "tensor_core_gemm: mma_sync takes A and B both fp16, both bf16 or both tf32; got A bf16, B fp16"},
      {[] { auto g = valid_mma(); g.a = g.b = e4m3fn; return g; }, "mma_sync takes A and B both fp16"},
      {[] { auto g = valid_wgmma_fp8(); g.a = tf32; g.b = tf32; return g; },
       "tensor_core_gemm: wgmma takes A and B both fp16, both bf16, or each e4m3fn or e5m2; got A tf32, B tf32"},
      {[] { auto g = valid_wgmma_fp8(); g.a = fp16; return g; }, "got A fp16, B e5m2"},
      {[] { auto g = valid_mma(); g.instruction = static_cast<tensor_core_instruction>(7); return g; },
       "unknown tensor_core_instruction 7 (valid: mma_sync, wgmma)"},
      {[] { auto g = valid_mma(); g.m = 20; return g; },
       "tensor_core_gemm: M = 20 must be a positive multiple of 16 for mma_sync with fp16 inputs"},
      {[] { auto g = valid_mma(); g.m = 0; return g; }, "M = 0 must be a positive multiple of 16"},
      {[] { auto g = valid_mma(); g.n = 12; return g; }, "N = 12 must be a positive multiple of 8 for mma_sync"},
      {[] { auto g = valid_mma(); g.k = 24; return g; }, "K = 24 must be a positive multiple of 16 for mma_sync"},
      {[] { auto g = valid_mma(); g.a = g.b = tf32; g.k = 12; return g; },
       "K = 12 must be a positive multiple of 8 for mma_sync with tf32 inputs"},
      {[] { auto g = valid_mma(); g.k = -16; return g; }, "K = -16 must be a positive multiple of 16"},
      {[] { auto g = valid_mma(); g.m = 1 << 17; return g; }, "(at most 65536)"},
      {[] { auto g = valid_wgmma_fp8(); g.m = 32; return g; }, "M = 32 must be a positive multiple of 64 for wgmma"},
      {[] { auto g = valid_wgmma_fp8(); g.n = 72; return g; }, "N = 72 must be a positive multiple of 64 for wgmma"},
      {[] { auto g = valid_wgmma_fp8(); g.k = 48; return g; },
       "K = 48 must be a positive multiple of 32 for wgmma with e4m3fn inputs"},
      {[] { auto g = valid_mma(); g.a_codes.pop_back(); return g; },
       "tensor_core_gemm: a_codes has 511 values; A is 16x32 and needs 512"},
      {[] { auto g = valid_mma(); g.b_codes.push_back(0); return g; },
       "tensor_core_gemm: b_codes has 257 values; B is 32x8 and needs 256"},
      {[] { auto g = valid_mma(); g.a_codes[3] = 0x10000; return g; },
       "tensor_core_gemm: a_codes[3] = 0x10000 is not a fp16 code (codes are 0..0xffff)"},
      {[] { auto g = valid_wgmma_fp8(); g.b_codes[5] = 0x100; return g; },
       "b_codes[5] = 0x100 is not a e5m2 code (codes are 0..0xff)"},
      {[] { auto g = valid_mma(); g.a = g.b = tf32; g.a_codes[0] = 0x80000; return g; },
       "a_codes[0] = 0x80000 is not a tf32 code (codes are 0..0x7ffff)"},
      {[] { auto g = valid_mma(); g.promote_every = 24; return g; },
       "tensor_core_gemm: promote_every = 24 must be 0 (never) or a positive multiple of 16 (K of the mma_sync "
       "m16n8k16 instruction) that divides K = 32"},
      {[] { auto g = valid_mma(16, 8, 48); g.promote_every = 32; return g; },
       "promote_every = 32 must be 0 (never) or a positive multiple of 16"},
      {[] { auto g = valid_mma(); g.promote_every = -16; return g; }, "promote_every = -16 must be 0 (never)"},
      {[] { auto g = valid_wgmma_fp8(); g.promote_every = 16; return g; },
       "a positive multiple of 32 (K of the wgmma m64n64k32 instruction) that divides K = 256"},
      {[] { auto g = valid_mma(); g.a_scale = {1.0f}; return g; },
       "tensor_core_gemm: a_scale is given but promote_every = 0"},
      {[] { auto g = valid_mma(); g.b_scale = {1.0f}; return g; }, "b_scale is given but promote_every = 0"},
      {[] { auto g = valid_mma(); g.promote_every = 16; g.a_scale.assign(16, 1.0f); return g; },
       "tensor_core_gemm: a_scale has 16 values; M x G = 16x2 (G = K / promote_every = 2) needs 32 (or none, for "
       "all 1)"},
      {[] { auto g = valid_wgmma_fp8(); g.promote_every = 128; g.b_scale.assign(64, 1.0f); return g; },
       "b_scale has 64 values; G x N = 2x64 (G = K / promote_every = 2) needs 128"},
      {[] { auto g = valid_mma(); g.promote_every = 16; g.a_scale.assign(32, 1.0f); g.a_scale[4] = -1.0f; return g; },
       "tensor_core_gemm: a_scale[4] = -1.000000 must be finite and positive"},
      {[] { auto g = valid_mma(); g.promote_every = 32; g.b_scale.assign(8, 1.0f); g.b_scale[7] = 0.0f; return g; },
       "b_scale[7] = 0.000000 must be finite and positive"},
      {[] {
         auto g = valid_mma();
         g.promote_every = 32;
         g.b_scale.assign(8, 1.0f);
         g.b_scale[2] = std::nanf("");
         return g;
       },
       "b_scale[2] = nan must be finite and positive"},
      {[] {
         auto g = valid_mma();
         g.promote_every = 32;
         g.a_scale.assign(16, 1.0f);
         g.a_scale[1] = INFINITY;
         return g;
       },
       "a_scale[1] = inf must be finite and positive"},
  };
  int checked = 0;
  for (const bad& c : cases) {
    CAPTURE(c.message);
    const auto r = tensor_core_gemm(c.make());
    REQUIRE_FALSE(r.has_value());
    CHECK_MESSAGE(r.message().find(c.message) != std::string::npos, r.message());
    ++checked;
  }
  CHECK(checked == 32);
}

TEST_CASE("single_instruction: every bad argument is rejected with a message naming it and the valid set") {
  using formats::bf16, formats::e4m3fn, formats::e5m2, formats::fp16, formats::tf32;
  const std::vector<std::uint32_t> z8(8, 0), z16(16, 0), z32(32, 0), big16(16, 0x10000);
  struct bad {
    tensor_core_instruction ins;
    format fa, fb;
    const std::vector<std::uint32_t>&a, &b;
    std::uint32_t c;
    const char* message;
  };
  using enum tensor_core_instruction;
  const bad cases[] = {
      {mma_sync, fp16, bf16, z16, z16, 0,
       "single_instruction: mma_sync takes A and B both fp16, both bf16 or both tf32; got A fp16, B bf16"},
      {wgmma, tf32, tf32, z8, z8, 0, "single_instruction: wgmma takes A and B both fp16, both bf16, or each e4m3fn"},
      {mma_sync, fp16, fp16, z8, z16, 0,
       "single_instruction: a has 8 values; the mma_sync m16n8k16 instruction with fp16 inputs takes K = 16"},
      {mma_sync, bf16, bf16, z16, z32, 0, "b has 32 values; the mma_sync m16n8k16 instruction with bf16 inputs"},
      {mma_sync, tf32, tf32, z16, z8, 0,
       "a has 16 values; the mma_sync m16n8k8 instruction with tf32 inputs takes K = 8"},
      {wgmma, fp16, fp16, z32, z16, 0, "a has 32 values; the wgmma m64n64k16 instruction with fp16 inputs takes K = 16"},
      {wgmma, e4m3fn, e5m2, z32, z16, 0,
       "b has 16 values; the wgmma m64n64k32 instruction with e5m2 inputs takes K = 32"},
      {mma_sync, fp16, fp16, z16, big16, 0, "single_instruction: b[0] = 0x10000 is not a fp16 code (codes are 0..0xffff)"},
      {wgmma, e4m3fn, e4m3fn, z32, z32, 0x3f800000u,
       "single_instruction: C = 0x3f800000 must be +0 (0x0) for wgmma with fp8 inputs"},
      {wgmma, e5m2, e4m3fn, z32, z32, 0x80000000u, "C = 0x80000000 must be +0"},
  };
  int checked = 0;
  for (const bad& c : cases) {
    CAPTURE(c.message);
    const auto r = single_instruction(c.ins, c.fa, c.fb, c.a, c.b, c.c);
    REQUIRE_FALSE(r.has_value());
    CHECK_MESSAGE(std::string(r.message()).find(c.message) != std::string::npos, r.message());
    ++checked;
  }
  CHECK(checked == 10);
}

TEST_CASE("valid calls without a GPU (or without CUDA) return an error naming what is missing") {
  const auto dev = current_device();
  if (dev.has_value()) {
    MESSAGE("a CUDA device is present (" << dev->name << "): the no-device path is not exercised here");
    return;
  }
  CHECK(no_device_error(dev.message()));
  int checked = 0;
  auto expect_missing = [&](const std::string& m) {
    CHECK_MESSAGE(no_device_error(m), m);
    ++checked;
  };
  const auto mma = tensor_core_gemm(valid_mma());
  REQUIRE_FALSE(mma.has_value());
  expect_missing(mma.message());
  auto promoted = valid_wgmma_fp8();
  promoted.promote_every = 128;
  promoted.a_scale.assign(64 * 2, 0.5f);
  const auto wg = tensor_core_gemm(promoted);
  REQUIRE_FALSE(wg.has_value());
  expect_missing(wg.message());
  const std::vector<std::uint32_t> a(16, 0x3c00), b(16, 0x3c00), a8(32, 0x38);
  const auto si = single_instruction(tensor_core_instruction::mma_sync, formats::fp16, formats::fp16, a, b, 0);
  REQUIRE_FALSE(si.has_value());
  expect_missing(si.message());
  const auto si8 = single_instruction(tensor_core_instruction::wgmma, formats::e4m3fn, formats::e4m3fn, a8, a8, 0);
  REQUIRE_FALSE(si8.has_value());
  expect_missing(si8.message());
  CHECK(checked == 4);
}

TEST_CASE("mma.sync fragment maps are bijections onto their tiles and match the PTX ISA tables") {
  // Each map, from (lane, register element) to (row, col): every tile element exactly once.
  struct map {
    const char* what;
    frag_pos (*f)(int, int);
    int elements, rows, cols;
  };
  const map maps[] = {
      {"m16n8k16 A", mma_m16n8k16_a, 8, 16, 16}, {"m16n8k16 B", mma_m16n8k16_b, 4, 16, 8},
      {"m16n8 C/D", mma_m16n8_c, 4, 16, 8},      {"m16n8k8 A", mma_m16n8k8_a, 4, 16, 8},
      {"m16n8k8 B", mma_m16n8k8_b, 2, 8, 8},
  };
  int cells = 0;
  for (const map& m : maps) {
    CAPTURE(m.what);
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < m.elements; ++i) {
        const frag_pos p = m.f(lane, i);
        CHECK(p.row >= 0);
        CHECK(p.row < m.rows);
        CHECK(p.col >= 0);
        CHECK(p.col < m.cols);
        seen.insert({p.row, p.col});
        ++cells;
      }
    CHECK(seen.size() == static_cast<std::size_t>(m.rows * m.cols));
  }
  CHECK(cells == 256 + 128 + 128 + 128 + 64);

  // The PTX ISA's formulas, transcribed as the ISA writes them (groupID, threadID_in_group).
  int rows_checked = 0;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 8; ++i) {  // m16n8k16 A
      const int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      const int col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
      CHECK(mma_m16n8k16_a(lane, i) == frag_pos{row, col});
      ++rows_checked;
    }
    for (int i = 0; i < 4; ++i) {  // m16n8k16 B; C/D of both shapes
      const int krow = i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
      CHECK(mma_m16n8k16_b(lane, i) == frag_pos{krow, g});
      CHECK(mma_m16n8_c(lane, i) == frag_pos{i < 2 ? g : g + 8, t * 2 + (i & 1)});
      // m16n8k8 .tf32 A: row groupID for a0, a2 and groupID + 8 for a1, a3; col
      // threadID_in_group for a0, a1 and threadID_in_group + 4 for a2, a3.
      CHECK(mma_m16n8k8_a(lane, i) == frag_pos{(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4});
      rows_checked += 3;
    }
    for (int i = 0; i < 2; ++i) {  // m16n8k8 .tf32 B: row threadID_in_group (+4 for b1), col groupID
      CHECK(mma_m16n8k8_b(lane, i) == frag_pos{i == 0 ? t : t + 4, g});
      ++rows_checked;
    }
  }
  CHECK(rows_checked == 32 * (8 + 12 + 2));
  // Spot values from the ISA's figures: lane 5 (groupID 1, threadID_in_group 1).
  CHECK(mma_m16n8k16_a(5, 0) == frag_pos{1, 2});
  CHECK(mma_m16n8k16_a(5, 7) == frag_pos{9, 11});
  CHECK(mma_m16n8k16_b(5, 3) == frag_pos{11, 1});
  CHECK(mma_m16n8_c(5, 2) == frag_pos{9, 2});
}

TEST_CASE("wgmma m64n64 accumulator map: 128 threads x 32 registers cover the 64x64 tile once") {
  std::set<std::pair<int, int>> seen;
  int cells = 0;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 32; ++i) {
      const frag_pos p = wgmma_m64n_d(t, i);
      CHECK(p.row >= 16 * (t / 32));  // warp w owns rows 16w .. 16w + 15
      CHECK(p.row < 16 * (t / 32) + 16);
      CHECK(p.col < 64);
      seen.insert({p.row, p.col});
      ++cells;
    }
  CHECK(cells == 4096);
  CHECK(seen.size() == 4096u);
  // The ISA figure: thread 0 holds (0,0) (0,1) (8,0) (8,1) (0,8) ...; thread 37 (warp 1, lane 5).
  CHECK(wgmma_m64n_d(0, 2) == frag_pos{8, 0});
  CHECK(wgmma_m64n_d(0, 4) == frag_pos{0, 8});
  CHECK(wgmma_m64n_d(37, 31) == frag_pos{16 + 1 + 8, 56 + 2 + 1});
}

TEST_CASE("wgmma no-swizzle K-major slice: 8x16-byte core matrices, LBO along K, SBO along rows") {
  std::set<int> offsets;
  int cells = 0;
  for (int row = 0; row < 64; ++row)
    for (int byte = 0; byte < 32; ++byte) {
      const int o = wgmma_slice_offset(row, byte);
      offsets.insert(o);
      ++cells;
      // Inside a core matrix: rows 16 bytes apart, bytes contiguous.
      const int core = (row / 8) * static_cast<int>(wgmma_sbo) + (byte / 16) * static_cast<int>(wgmma_lbo);
      CHECK(o == core + (row % 8) * 16 + byte % 16);
    }
  CHECK(cells == 2048);
  CHECK(offsets.size() == 2048u);
  CHECK(*offsets.rbegin() == wgmma_slice_bytes - 1);
  CHECK(wgmma_slice_offset(0, 16) - wgmma_slice_offset(0, 0) == static_cast<int>(wgmma_lbo));  // next K core
  CHECK(wgmma_slice_offset(8, 0) - wgmma_slice_offset(0, 0) == static_cast<int>(wgmma_sbo));   // next 8 rows
  // Descriptor fields (PTX ISA "Matrix Descriptor Format"): (x & 0x3FFFF) >> 4 at bits 0, 16, 32.
  static_assert(wgmma_descriptor(0x400, 128, 256) == (0x40ull | (8ull << 16) | (16ull << 32)));
  // The ISA's K-major no-swizzle tf32 example: LBO 64 * 4 bytes encodes as 16, SBO 32 * 4 as 8.
  CHECK(((wgmma_descriptor(0, 256, 128) >> 16) & 0x3FFF) == 16);
  CHECK(((wgmma_descriptor(0, 256, 128) >> 32) & 0x3FFF) == 8);
  CHECK(wgmma_descriptor(0x40010, 0, 0) == 1);   // bits above 18 of the address are dropped
  CHECK((wgmma_descriptor(0x3FFF0, 0, 0) >> 62) == 0);  // swizzle mode 0: none
}

TEST_CASE("group_scale and promote == the host FPU's binary32 multiply and fused multiply-add (RNE)") {
  std::mt19937_64 rng(29);
  int cases = 0;
  auto any_float = [&] {
    switch (rng() % 5) {
      case 0: return static_cast<std::uint32_t>(rng() % 0x800000u) | (rng() % 2 ? 0x80000000u : 0);  // subnormal
      case 1: return rng() % 2 ? 0u : 0x80000000u;
      default: return std::bit_cast<std::uint32_t>(random_scale(rng) * (rng() % 2 ? -1.0f : 1.0f));
    }
  };
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t sa = std::bit_cast<std::uint32_t>(random_scale(rng));
    const std::uint32_t sb = i % 7 == 0 ? 0x00000003u : std::bit_cast<std::uint32_t>(random_scale(rng));
    const float s = std::bit_cast<float>(sa) * std::bit_cast<float>(sb);
    REQUIRE(group_scale(sa, sb) == std::bit_cast<std::uint32_t>(s));
    const std::uint32_t p = any_float(), r = any_float();
    const float want = std::fma(std::bit_cast<float>(p), s, std::bit_cast<float>(r));
    REQUIRE(promote(p, std::bit_cast<std::uint32_t>(s), r) == std::bit_cast<std::uint32_t>(want));
    ++cases;
  }
  CHECK(cases == 200000);
  CHECK(group_scale(fp32_one, fp32_one) == fp32_one);
}

TEST_CASE("the kernels' chain + promotion, replayed on the host, == analysis::gemm with tile_1x128 scales") {
  // Per output: each group of 128 products runs the preset's block chain from +0 (the tensor-core
  // partial, as the kernels' accumulator registers hold it), then R = promote(partial,
  // group_scale(sa, sb), R). Without promotion: the chain over all of K.
  struct config {
    const char* preset;
    format a, b;
  };
  const config configs[] = {
      {"h100-e4m3", formats::e4m3fn, formats::e4m3fn}, {"h100-e4m3", formats::e4m3fn, formats::e5m2},
      {"h100-e5m2", formats::e5m2, formats::e5m2},     {"h100-fp16", formats::fp16, formats::fp16},
      {"h100-bf16", formats::bf16, formats::bf16},     {"a100-fp16", formats::fp16, formats::fp16},
      {"a100-tf32", formats::tf32, formats::tf32},
  };
  std::mt19937_64 rng(31);
  const int M = 3, N = 130, K = 256, G = K / 128;
  int compared = 0;
  for (const config& c : configs) {
    CAPTURE(c.preset);
    CAPTURE(fpemu::to_string(c.b));
    const accumulator_model model = find_preset(c.preset).value().model;
    const block_fma_model& blk = model.block;
    analysis::scaled_matrix a{M, K, c.a, random_codes(c.a, static_cast<std::size_t>(M) * K, rng),
                              analysis::scaling::tile_1x128, formats::fp32, {}};
    analysis::scaled_matrix b{K, N, c.b, random_codes(c.b, static_cast<std::size_t>(K) * N, rng),
                              analysis::scaling::tile_1x128, formats::fp32, {}};
    // A: one scale per row per 128 of K; B: one per 128x128 block (analysis' layout), here with
    // N = 130 two column blocks. The kernels take b_scale[g][j] per column.
    for (int i = 0; i < M * G; ++i) a.scales.push_back(std::bit_cast<std::uint32_t>(random_scale(rng)));
    for (int i = 0; i < 2 * G; ++i) b.scales.push_back(std::bit_cast<std::uint32_t>(random_scale(rng)));
    auto b_scale = [&](int g, int j) { return b.scales[static_cast<std::size_t>(j / 128) * G + g]; };

    for (const bool promoted : {true, false}) {
      CAPTURE(promoted);
      analysis::gemm_options o;
      o.acc = model;
      o.threads = 2;
      analysis::scaled_matrix ua = a, ub = b;
      if (!promoted) ua.scale_kind = ub.scale_kind = analysis::scaling::none;
      const auto d = analysis::gemm(ua, ub, {}, o);
      REQUIRE_MESSAGE(d.has_value(), d.message());
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          std::uint32_t r = 0, partial = 0;  // binary32 bits, as in the kernels' registers
          const int group = promoted ? 128 : K;
          for (int g = 0; g * group < K; ++g) {
            std::uint32_t acc = 0;  // code of blk.acc
            for (int k0 = g * group; k0 < (g + 1) * group; k0 += blk.block_size) {
              std::vector<std::uint32_t> av, bv;
              for (int k = k0; k < k0 + blk.block_size; ++k) {
                av.push_back(a.codes[static_cast<std::size_t>(i) * K + k]);
                bv.push_back(b.codes[static_cast<std::size_t>(k) * N + j]);
              }
              acc = block_fma_step(blk, c.a, av.data(), c.b, bv.data(), blk.block_size, blk.acc, acc).code;
            }
            partial = convert(formats::fp32, blk.acc, acc).code;
            if (promoted)
              r = promote(partial, group_scale(a.scales[static_cast<std::size_t>(i) * G + g], b_scale(g, j)), r);
          }
          const std::uint32_t want = d->at(static_cast<std::size_t>(i) * N + j);
          const std::uint32_t got = promoted ? r : partial;
          if (got != want) {
            FAIL_CHECK("output (" << i << ", " << j << "): host replay " << hex32(got) << " analysis::gemm "
                                  << hex32(want));
            break;
          }
          ++compared;
        }
    }
  }
  CHECK(compared == 7 * 2 * M * N);
}

namespace {

fp8_gemm_args valid_fp8_gemm() {
  fp8_gemm_args g;
  g.m = g.n = 128;
  g.k = 256;
  g.a_codes.assign(128 * 256, 0x38);  // 1.0 in e4m3fn
  g.bt_codes.assign(128 * 256, 0x38);
  return g;
}

}  // namespace

TEST_CASE("promoted_fp8_gemm: every bad argument is rejected with a message naming it, before any device query") {
  struct bad {
    std::function<fp8_gemm_args()> make;
    const char* message;
  };
  const std::vector<bad> cases = {
      {[] { auto g = valid_fp8_gemm(); g.a = formats::bf16; return g; },
       "promoted_fp8_gemm: A format 'bf16' must be e4m3fn or e5m2"},
      {[] { auto g = valid_fp8_gemm(); g.b = formats::e4m3fnuz; return g; }, "B format 'e4m3fnuz' must be e4m3fn or e5m2"},
      {[] { auto g = valid_fp8_gemm(); g.m = 64; return g; },
       "promoted_fp8_gemm: M = 64 must be a positive multiple of 128 (at most 65536)"},
      {[] { auto g = valid_fp8_gemm(); g.n = 0; return g; }, "N = 0 must be a positive multiple of 128"},
      {[] { auto g = valid_fp8_gemm(); g.k = 200; return g; }, "K = 200 must be a positive multiple of 128"},
      {[] { auto g = valid_fp8_gemm(); g.a_codes.pop_back(); return g; },
       "promoted_fp8_gemm: a_codes has 32767 values; A is 128x256 and needs 32768"},
      {[] { auto g = valid_fp8_gemm(); g.bt_codes.push_back(0); return g; },
       "promoted_fp8_gemm: bt_codes has 32769 values; B^T is 128x256 and needs 32768"},
      {[] { auto g = valid_fp8_gemm(); g.bt_codes[7] = 0x100; return g; },
       "promoted_fp8_gemm: bt_codes[7] = 0x100 is not a e4m3fn code (codes are 0..0xff)"},
      {[] { auto g = valid_fp8_gemm(); g.a_scale.assign(3, 1.0f); return g; },
       "promoted_fp8_gemm: a_scale has 3 values; M x G = 128x2 needs 256 (or none, for all 1)"},
      {[] { auto g = valid_fp8_gemm(); g.b_scale.assign(2, 1.0f); g.b_scale[1] = -2.0f; return g; },
       "promoted_fp8_gemm: b_scale[1] = -2.000000 must be finite and positive"},
  };
  for (const bad& c : cases) {
    const auto r = promoted_fp8_gemm(c.make());
    REQUIRE_FALSE(r.has_value());
    CHECK_MESSAGE(r.message().find(c.message) != std::string::npos, r.message() << "\n  wanted: " << c.message);
  }
  fp8_gemm_device_args d{formats::e4m3fn, formats::e4m3fn, 128, 128, 128, nullptr, nullptr, nullptr, nullptr, nullptr};
  const auto null_a = promoted_fp8_gemm_on_device(d);
  REQUIRE_FALSE(null_a.has_value());
  CHECK(null_a.message() == "promoted_fp8_gemm_on_device: a_codes is null");
  d.m = 100;
  CHECK(promoted_fp8_gemm_on_device(d).message().find("M = 100 must be a positive multiple of 128") != std::string::npos);
  if (!current_device()) {  // a valid call reaches the device query
    const std::string why = current_device().message();
    CHECK(promoted_fp8_gemm(valid_fp8_gemm()).message() == why);
  }
}
