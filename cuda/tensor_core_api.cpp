// Host side of the tensor-core GEMMs (include/fpemu/cuda.hpp): every argument is checked here,
// before any device query, so a bad call gets the same message with or without CUDA or a GPU;
// then the device is checked for the instruction and the launcher in tensor_core.cu runs.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "device.hpp"
#include "fpemu/spec.hpp"
#include "tensor_core.hpp"

namespace fpemu::cuda {
namespace {

using detail::tc_kernel;

std::string name(tensor_core_instruction ins) { return ins == tensor_core_instruction::wgmma ? "wgmma" : "mma_sync"; }

// The kernel for (instruction, A's format, B's format), or an error naming the accepted set.
expected<tc_kernel> pick_kernel(const char* fn, tensor_core_instruction ins, const format& a, const format& b) {
  using formats::bf16, formats::e4m3fn, formats::e5m2, formats::fp16, formats::tf32;
  const std::string got = "; got A " + to_string(a) + ", B " + to_string(b);
  if (ins == tensor_core_instruction::mma_sync) {
    if (a == b && a == fp16) return tc_kernel::mma_f16;
    if (a == b && a == bf16) return tc_kernel::mma_bf16;
    if (a == b && a == tf32) return tc_kernel::mma_tf32;
    return error{std::string(fn) + ": mma_sync takes A and B both fp16, both bf16 or both tf32" + got};
  }
  if (ins == tensor_core_instruction::wgmma) {
    if (a == b && a == fp16) return tc_kernel::wgmma_f16;
    if (a == b && a == bf16) return tc_kernel::wgmma_bf16;
    const bool a8 = a == e4m3fn || a == e5m2, b8 = b == e4m3fn || b == e5m2;
    if (a8 && b8) {
      if (a == e4m3fn) return b == e4m3fn ? tc_kernel::wgmma_e4m3 : tc_kernel::wgmma_e4m3_e5m2;
      return b == e4m3fn ? tc_kernel::wgmma_e5m2_e4m3 : tc_kernel::wgmma_e5m2;
    }
    return error{std::string(fn) + ": wgmma takes A and B both fp16, both bf16, or each e4m3fn or e5m2" + got};
  }
  return error{std::string(fn) + ": unknown tensor_core_instruction " +
               std::to_string(static_cast<int>(ins)) + " (valid: mma_sync, wgmma)"};
}

// "the mma_sync m16n8k16 instruction": names the shape whose K a message refers to.
std::string instruction_label(tc_kernel k) {
  const std::string kk = std::to_string(detail::instruction_k(k));
  return detail::is_wgmma(k) ? "the wgmma m64n64k" + kk + " instruction" : "the mma_sync m16n8k" + kk + " instruction";
}

expected<void> check_scales(const char* what, const std::vector<float>& s, std::size_t want, const std::string& shape,
                            int promote_every) {
  if (s.empty()) return {};
  if (promote_every == 0)
    return error{std::string("tensor_core_gemm: ") + what + " is given but promote_every = 0; scales apply when "
                 "a group is promoted (set promote_every, or leave the scales empty)"};
  if (s.size() != want)
    return error{std::string("tensor_core_gemm: ") + what + " has " + std::to_string(s.size()) + " values; " + shape +
                 " needs " + std::to_string(want) + " (or none, for all 1)"};
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!std::isfinite(s[i]) || !(s[i] > 0.0f))
      return error{std::string("tensor_core_gemm: ") + what + "[" + std::to_string(i) + "] = " + std::to_string(s[i]) +
                   " must be finite and positive"};
  return {};
}

// tf32 codes (19 bits) as the binary32 patterns the instruction reads; other codes unchanged.
std::vector<std::uint32_t> operand_bits(tc_kernel k, const std::vector<std::uint32_t>& codes) {
  if (k != tc_kernel::mma_tf32) return codes;
  std::vector<std::uint32_t> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) out[i] = codes[i] << 13;
  return out;
}

// The device check, then the launch.
expected<std::vector<std::uint32_t>> launch(const detail::tc_problem& p) {
  if (!detail::is_wgmma(p.kernel)) {
    if (auto d = detail::require_device(8, 0, "mma.sync"); !d) return error{d.message()};
    return detail::launch_sm80_mma_sync(p);
  }
  auto d = detail::require_device(9, 0, "wgmma");
  if (!d) return error{d.message()};
  // sm_90a code runs on compute capability 9.0 only; later GPUs have no wgmma.
  if (d->major != 9 || d->minor != 0)
    return error{"wgmma needs a GPU of compute capability exactly 9.0 (H100/H200: its sm_90a code runs nowhere "
                 "else); this one (" + d->name + ") is " + std::to_string(d->major) + "." + std::to_string(d->minor)};
  return detail::launch_sm90_wgmma(p);
}

}  // namespace

expected<std::vector<std::uint32_t>> tensor_core_gemm(const tensor_core_gemm_args& g) {
  const char* fn = "tensor_core_gemm";
  const auto kernel = pick_kernel(fn, g.instruction, g.a, g.b);
  if (!kernel) return error{kernel.message()};
  const tc_kernel k = *kernel;
  const std::string ins = name(g.instruction);
  const int kk = detail::instruction_k(k);
  constexpr int max_dim = 65536;
  auto dim = [&](const char* d, int v, int multiple) -> expected<void> {
    if (v < 1 || v > max_dim || v % multiple != 0)
      return error{std::string(fn) + ": " + d + " = " + std::to_string(v) + " must be a positive multiple of " +
                   std::to_string(multiple) + " for " + ins + " with " + to_string(g.a) + " inputs (at most " +
                   std::to_string(max_dim) + ")"};
    return {};
  };
  if (auto ok = dim("M", g.m, detail::tile_m(k)); !ok) return error{ok.message()};
  if (auto ok = dim("N", g.n, detail::tile_n(k)); !ok) return error{ok.message()};
  if (auto ok = dim("K", g.k, kk); !ok) return error{ok.message()};
  const std::size_t mk = static_cast<std::size_t>(g.m) * g.k, kn = static_cast<std::size_t>(g.k) * g.n;
  const std::string a_shape = "A is " + std::to_string(g.m) + "x" + std::to_string(g.k);
  const std::string b_shape = "B is " + std::to_string(g.k) + "x" + std::to_string(g.n);
  if (g.a_codes.size() != mk)
    return error{std::string(fn) + ": a_codes has " + std::to_string(g.a_codes.size()) + " values; " + a_shape +
                 " and needs " + std::to_string(mk)};
  if (g.b_codes.size() != kn)
    return error{std::string(fn) + ": b_codes has " + std::to_string(g.b_codes.size()) + " values; " + b_shape +
                 " and needs " + std::to_string(kn)};
  if (auto why = detail::check_codes(std::string(fn) + ": a_codes", g.a_codes, g.a)) return error{*why};
  if (auto why = detail::check_codes(std::string(fn) + ": b_codes", g.b_codes, g.b)) return error{*why};
  if (g.promote_every < 0 || (g.promote_every > 0 && (g.promote_every % kk != 0 || g.k % g.promote_every != 0)))
    return error{std::string(fn) + ": promote_every = " + std::to_string(g.promote_every) +
                 " must be 0 (never) or a positive multiple of " + std::to_string(kk) + " (K of " +
                 instruction_label(k) + ") that divides K = " + std::to_string(g.k)};
  const int groups = g.promote_every > 0 ? g.k / g.promote_every : 0;
  const std::string gs = "G = K / promote_every = " + std::to_string(groups);
  if (auto ok = check_scales("a_scale", g.a_scale, static_cast<std::size_t>(g.m) * groups,
                             "M x G = " + std::to_string(g.m) + "x" + std::to_string(groups) + " (" + gs + ")",
                             g.promote_every);
      !ok)
    return error{ok.message()};
  if (auto ok = check_scales("b_scale", g.b_scale, static_cast<std::size_t>(groups) * g.n,
                             "G x N = " + std::to_string(groups) + "x" + std::to_string(g.n) + " (" + gs + ")",
                             g.promote_every);
      !ok)
    return error{ok.message()};

  detail::tc_problem p;
  p.kernel = k;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  p.a = operand_bits(k, g.a_codes);
  p.b = operand_bits(k, g.b_codes);
  p.promote_every = g.promote_every;
  p.a_scale = g.a_scale;
  p.b_scale = g.b_scale;
  return launch(p);
}

expected<std::uint32_t> single_instruction(tensor_core_instruction ins, const format& fa, const format& fb,
                                           std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                           std::uint32_t c) {
  const char* fn = "single_instruction";
  const auto kernel = pick_kernel(fn, ins, fa, fb);
  if (!kernel) return error{kernel.message()};
  const tc_kernel k = *kernel;
  const int kk = detail::instruction_k(k);
  for (const auto& [what, v] : {std::pair{"a", a}, std::pair{"b", b}})
    if (v.size() != static_cast<std::size_t>(kk))
      return error{std::string(fn) + ": " + what + " has " + std::to_string(v.size()) + " values; " +
                   instruction_label(k) + " with " + to_string(what[0] == 'a' ? fa : fb) + " inputs takes K = " +
                   std::to_string(kk)};
  const std::vector<std::uint32_t> av(a.begin(), a.end()), bv(b.begin(), b.end());
  if (auto why = detail::check_codes(std::string(fn) + ": a", av, fa)) return error{*why};
  if (auto why = detail::check_codes(std::string(fn) + ": b", bv, fb)) return error{*why};
  const bool fp8 = detail::instruction_k(k) == 32;
  if (fp8 && c != 0)
    return error{std::string(fn) + ": C = " + detail::hex(c) + " must be +0 (0x0) for wgmma with fp8 inputs: the "
                 "instruction starts from a zero accumulator (scale-d = 0)"};

  // Every input zero except row 0 of A, column 0 of B and C[0][0].
  detail::tc_problem p;
  p.kernel = k;
  p.m = detail::tile_m(k);
  p.n = detail::tile_n(k);
  p.k = kk;
  p.a.assign(static_cast<std::size_t>(p.m) * p.k, 0);
  p.b.assign(static_cast<std::size_t>(p.k) * p.n, 0);
  const std::vector<std::uint32_t> ab = operand_bits(k, av), bb = operand_bits(k, bv);
  for (int i = 0; i < kk; ++i) {
    p.a[static_cast<std::size_t>(i)] = ab[static_cast<std::size_t>(i)];
    p.b[static_cast<std::size_t>(i) * p.n] = bb[static_cast<std::size_t>(i)];
  }
  if (!fp8) {
    p.c.assign(static_cast<std::size_t>(p.m) * p.n, 0);
    p.c[0] = c;
  }
  auto d = launch(p);
  if (!d) return error{d.message()};
  return d->front();
}

#ifndef FPEMU_HAVE_CUDA
namespace detail {
expected<std::vector<std::uint32_t>> launch_sm80_mma_sync(const tc_problem&) { return no_cuda(); }
expected<std::vector<std::uint32_t>> launch_sm90_wgmma(const tc_problem&) { return no_cuda(); }
}  // namespace detail
#endif

}  // namespace fpemu::cuda
