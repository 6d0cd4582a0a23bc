// Internal to cuda/: the tensor-core GEMM launchers (tensor_core.cu) and the host/device pieces
// of their kernels that can be checked on the host without a GPU: the register-fragment index
// maps of mma.sync and wgmma (PTX ISA "Matrix Fragments for mma.m16n8k*" and 9.7.15.5.1
// "Register Fragments and Shared Memory Matrix Layouts", ISA 9.0 numbering), the no-swizzle shared-memory
// layout and matrix descriptor of wgmma (PTX ISA 9.7.15.5.1.2), and the DeepSeek-V3 promotion
// step, R = RNE(partial * scale + R) with scale = RNE(a_scale * b_scale).
//
// Host C++ only (no CUDA headers), so tensor_core_api.cpp and the tests include it anywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "fpemu/config.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/ops.hpp"

namespace fpemu::cuda::detail {

// ---- Launchers --------------------------------------------------------------------------

// Which kernel (and so which instruction and operand types) a launch uses.
enum class tc_kernel : std::uint8_t {
  mma_f16,   // sm80_mma_sync_f16_f32acc:  mma.sync m16n8k16 .f32.f16.f16.f32
  mma_bf16,  // sm80_mma_sync_bf16_f32acc: mma.sync m16n8k16 .f32.bf16.bf16.f32
  mma_tf32,  // sm80_mma_sync_tf32_f32acc: mma.sync m16n8k8  .f32.tf32.tf32.f32
  wgmma_f16,        // sm90_wgmma_f16_f32acc:  wgmma m64n64k16 .f32.f16.f16
  wgmma_bf16,       // sm90_wgmma_bf16_f32acc: wgmma m64n64k16 .f32.bf16.bf16
  wgmma_e4m3,       // sm90_wgmma_e4m3_f32acc: wgmma m64n64k32 .f32.e4m3.e4m3
  wgmma_e4m3_e5m2,  // sm90_wgmma_e4m3_e5m2_f32acc
  wgmma_e5m2_e4m3,  // sm90_wgmma_e5m2_e4m3_f32acc
  wgmma_e5m2,       // sm90_wgmma_e5m2_f32acc
};

FPEMU_HD constexpr bool is_wgmma(tc_kernel k) { return k >= tc_kernel::wgmma_f16; }
// Products per instruction (the instruction's K).
FPEMU_HD constexpr int instruction_k(tc_kernel k) {
  return k == tc_kernel::mma_tf32 ? 8 : (k >= tc_kernel::wgmma_e4m3 ? 32 : 16);
}
// Output tile of one instruction (rows x cols): mma.sync 16 x 8, wgmma 64 x 64.
FPEMU_HD constexpr int tile_m(tc_kernel k) { return is_wgmma(k) ? 64 : 16; }
FPEMU_HD constexpr int tile_n(tc_kernel k) { return is_wgmma(k) ? 64 : 8; }

// One validated problem, operands as the instruction reads them: fp16/bf16/fp8 codes, and tf32
// as binary32 bit patterns (the tf32 code shifted left by 13; the hardware ignores those bits).
struct tc_problem {
  tc_kernel kernel = tc_kernel::mma_f16;
  int m = 0, n = 0, k = 0;
  std::vector<std::uint32_t> a, b;  // M x K and K x N, row-major
  std::vector<std::uint32_t> c;     // empty (+0), or M x N binary32: the first instruction's C
  int promote_every = 0;            // 0, or a multiple of instruction_k dividing k
  std::vector<float> a_scale, b_scale;  // M x G and G x N, or empty (all 1)
};

// D (M x N binary32 bit patterns). The device has been checked by the caller.
expected<std::vector<std::uint32_t>> launch_sm80_mma_sync(const tc_problem& p);
expected<std::vector<std::uint32_t>> launch_sm90_wgmma(const tc_problem& p);

// ---- Fragment index maps ----------------------------------------------------------------

// Element (row, col) of a matrix that register element i of thread `lane` holds.
struct frag_pos {
  int row = 0, col = 0;
  friend constexpr bool operator==(const frag_pos&, const frag_pos&) = default;
};

// PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type" (.f16/.bf16), with
// groupID g = lane / 4 and threadID_in_group tig = lane % 4. A (16x16, .row): four .f16x2
// registers = a0..a7; a0,a1 row g, a2,a3 row g+8, a4..a7 the same rows 8 columns further right;
// within a register the lower half holds the even element.
FPEMU_HD constexpr frag_pos mma_m16n8k16_a(int lane, int i) {
  return {lane / 4 + 8 * ((i >> 1) & 1), 2 * (lane % 4) + (i & 1) + 8 * (i >> 2)};
}
// B (16x8, .col): two .f16x2 registers = b0..b3; b0,b1 rows 2*tig, 2*tig+1; b2,b3 8 rows down.
FPEMU_HD constexpr frag_pos mma_m16n8k16_b(int lane, int i) {
  return {2 * (lane % 4) + (i & 1) + 8 * (i >> 1), lane / 4};
}
// C/D (16x8 .f32) of both m16n8k16 and m16n8k8: c0,c1 row g, c2,c3 row g+8, cols 2*tig + (i&1).
FPEMU_HD constexpr frag_pos mma_m16n8_c(int lane, int i) {
  return {lane / 4 + 8 * (i >> 1), 2 * (lane % 4) + (i & 1)};
}
// PTX ISA "Matrix Fragments for mma.m16n8k8" (.tf32): A (16x8) a0 (g, tig), a1 (g+8, tig),
// a2 (g, tig+4), a3 (g+8, tig+4); B (8x8) b0 (tig, g), b1 (tig+4, g). One element per .b32.
FPEMU_HD constexpr frag_pos mma_m16n8k8_a(int lane, int i) {
  return {lane / 4 + 8 * (i & 1), lane % 4 + 4 * (i >> 1)};
}
FPEMU_HD constexpr frag_pos mma_m16n8k8_b(int lane, int i) { return {lane % 4 + 4 * i, lane / 4}; }

// PTX ISA 9.7.15.5.1.1 (Figures 149 and 153: the same for m64nNk16 and m64nNk32), .f32
// accumulator of m64nN: warp w of the warpgroup owns rows 16w..16w+15; register d_i of a thread
// sits at row 16w + g + 8*((i>>1)&1), col 8*(i>>2) + 2*tig + (i&1). N/2 registers (32 for N=64).
FPEMU_HD constexpr frag_pos wgmma_m64n_d(int thread, int i) {
  const int lane = thread % 32;
  return {16 * (thread / 32) + lane / 4 + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)};
}

// ---- wgmma shared memory ------------------------------------------------------------------

// One instruction's K-major operand slice: 64 rows (M for A, N for B) x 32 bytes of K (k16 of
// 16-bit types, k32 of fp8). PTX ISA 9.7.15.5.1.2, no-swizzle K-major canonical layout
// ((8,m),(T,2k)):((1T,SBO),(1,LBO)): a core matrix is 8 rows x 16 bytes stored as 128
// contiguous bytes; the two core matrices of a row group (K bytes 0-15 and 16-31) are LBO apart,
// consecutive row groups SBO apart:
//
//   offset 0    256  512 ...      core(rows 0-7, K bytes 0-15) | core(rows 0-7, K bytes 16-31)
//          row group 0  row group 1     at +0                        at +LBO = 128
inline constexpr int wgmma_slice_bytes = 64 * 32;
inline constexpr std::uint32_t wgmma_lbo = 128, wgmma_sbo = 256;
FPEMU_HD constexpr int wgmma_slice_offset(int row, int k_byte) {
  return (row / 8) * static_cast<int>(wgmma_sbo) + (k_byte / 16) * static_cast<int>(wgmma_lbo) + (row % 8) * 16 +
         k_byte % 16;
}

// PTX ISA 9.7.15.5.1.2.2 matrix descriptor: bits 0-13 start address, 16-29 LBO, 32-45 SBO (each
// (x & 0x3FFFF) >> 4), 49-51 base offset (0: unused without swizzle, and with swizzle atoms
// 1024-byte aligned), 62-63 swizzle mode (0 none, 1 128-byte, 2 64-byte, 3 32-byte).
enum class wgmma_swizzle : std::uint8_t { none = 0, b128 = 1 };
FPEMU_HD constexpr std::uint64_t wgmma_descriptor(std::uint32_t smem_address, std::uint32_t lbo, std::uint32_t sbo,
                                                  wgmma_swizzle swizzle = wgmma_swizzle::none) {
  auto encode = [](std::uint32_t x) { return static_cast<std::uint64_t>((x & 0x3FFFFu) >> 4); };
  return encode(smem_address) | (encode(lbo) << 16) | (encode(sbo) << 32) |
         (static_cast<std::uint64_t>(swizzle) << 62);
}

// The 128-byte-swizzled K-major layout the bulk tensor copy writes (CU_TENSOR_MAP_SWIZZLE_128B):
// each row of the tile is 128 bytes of K (128 fp8 values), 16-byte chunk c of row r stored at
// chunk c ^ (r % 8); an 8-row group (1024 bytes) is one swizzle atom, so SBO = 1024 and LBO is
// unused (the instruction's 32 bytes of K never leave the atom: 16, i.e. 1, by convention). The
// instruction's k-th 32-byte slice starts 32k bytes into the row (PTX ISA 9.7.15.5.1.2.1: the
// start address may move inside the atom; the hardware applies the swizzle to the sum).
inline constexpr std::uint32_t wgmma_b128_row_bytes = 128, wgmma_b128_sbo = 1024;
FPEMU_HD constexpr std::uint64_t wgmma_descriptor_b128(std::uint32_t smem_address) {
  return wgmma_descriptor(smem_address, 16, wgmma_b128_sbo, wgmma_swizzle::b128);
}

// ---- Promotion ----------------------------------------------------------------------------

inline constexpr std::uint32_t fp32_one = 0x3f800000u;

// The group's scale: a_scale * b_scale rounded once to binary32, nearest-even; this equals
// analysis::gemm's from(fp32, double(sa) * double(sb)) because the double product of two
// binary32 values is exact. The kernels compute it with __fmul_rn.
FPEMU_HD constexpr std::uint32_t group_scale(std::uint32_t a_scale, std::uint32_t b_scale) {
  return fpemu::mul(formats::fp32, a_scale, b_scale, rounding{}).code;
}
// R = RNE(partial * scale + R), one rounding: analysis' dot_accumulator::promote with an fp32
// promoted register. The kernels compute it with __fmaf_rn (IEEE fusedMultiplyAdd, binary32).
FPEMU_HD constexpr std::uint32_t promote(std::uint32_t partial, std::uint32_t scale, std::uint32_t r) {
  return fpemu::fma(formats::fp32, partial, scale, r, rounding{}).code;
}

}  // namespace fpemu::cuda::detail
