// Internal to the tensor-core kernels (tensor_core.cu: mma.sync; tensor_core_sm90a.cu: wgmma, built
// only for the arch-specific target sm_90a so that an H100 can never pick plain sm_90 code for
// it): the kernel parameters, the promotion scale, and the launch that uploads, runs and checks.
#pragma once

#include "runtime.cuh"
#include "tensor_core.hpp"

namespace fpemu::cuda::detail {
namespace {

struct tc_params {
  const std::uint32_t* a = nullptr;  // M x K, row-major, operand bits
  const std::uint32_t* b = nullptr;  // K x N, row-major
  const std::uint32_t* c = nullptr;  // M x N binary32, or null (+0)
  const float* a_scale = nullptr;    // M x G, or null (1)
  const float* b_scale = nullptr;    // G x N, or null (1)
  std::uint32_t* d = nullptr;        // M x N binary32
  int* missing_arch = nullptr;       // set when this device pass has no code for the instruction
  int m = 0, n = 0, k = 0, promote_every = 0;
};

__device__ __forceinline__ float c_at(const tc_params& p, int row, int col) {
  return p.c == nullptr ? 0.0f : __uint_as_float(p.c[static_cast<std::size_t>(row) * p.n + col]);
}

// The group's scale RNE(a_scale * b_scale) (group_scale() in tensor_core.hpp); 1 when empty.
__device__ __forceinline__ float scale_at(const tc_params& p, int g, int row, int col) {
  const int groups = p.k / p.promote_every;
  const float sa = p.a_scale == nullptr ? 1.0f : p.a_scale[static_cast<std::size_t>(row) * groups + g];
  const float sb = p.b_scale == nullptr ? 1.0f : p.b_scale[static_cast<std::size_t>(g) * p.n + col];
  return __fmul_rn(sa, sb);
}

// A template so that the sm_90a pass, where every kernel has its instruction, does not warn.
template <class Params>
__device__ __forceinline__ void flag_missing_arch(const Params& p) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0) *p.missing_arch = 1;
}

// ---- Launch --------------------------------------------------------------------------------

// Uploads the operands, runs `kernel` on a grid of `grid` blocks of `threads`, returns D.
template <class Kernel>
expected<std::vector<std::uint32_t>> run(const tc_problem& pr, Kernel kernel, const char* name, dim3 grid,
                                         unsigned threads, const char* missing) {
  auto a = device_buffer<std::uint32_t>::upload(pr.a);
  if (!a) return error{a.message()};
  auto b = device_buffer<std::uint32_t>::upload(pr.b);
  if (!b) return error{b.message()};
  auto c = device_buffer<std::uint32_t>::upload(pr.c);
  if (!c) return error{c.message()};
  auto sa = device_buffer<float>::upload(pr.a_scale);
  if (!sa) return error{sa.message()};
  auto sb = device_buffer<float>::upload(pr.b_scale);
  if (!sb) return error{sb.message()};
  auto d = device_buffer<std::uint32_t>::allocate(static_cast<std::size_t>(pr.m) * pr.n);
  if (!d) return error{d.message()};
  const int zero = 0;
  auto flag = device_buffer<int>::upload(std::span<const int>(&zero, 1));
  if (!flag) return error{flag.message()};

  tc_params p;
  p.a = a->get();
  p.b = b->get();
  p.c = c->get();  // null when empty
  p.a_scale = sa->get();
  p.b_scale = sb->get();
  p.d = d->get();
  p.missing_arch = flag->get();
  p.m = pr.m;
  p.n = pr.n;
  p.k = pr.k;
  p.promote_every = pr.promote_every;
  kernel<<<grid, threads>>>(p);
  FPEMU_CUDA_TRY(check_launch(name));
  int missing_arch = 0;
  FPEMU_CUDA_TRY(flag->download(std::span<int>(&missing_arch, 1)));
  if (missing_arch != 0) return error{std::string(name) + ": " + missing};
  return d->download();
}

}  // namespace
}  // namespace fpemu::cuda::detail
