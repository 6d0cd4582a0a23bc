// The fused optimizer step kernel: each byte of the step's tensors read once and written once.
// Memory-bound, so each thread steps 8 consecutive elements, loading and storing each tensor with
// 16-byte accesses (two for binary32 tensors) where the buffers are aligned; the arithmetic per
// element is fused_optimizer_step() (fused_optimizer.hpp), the function the host tests compare
// with training::optimizer.
#include <cstdint>
#include <vector>

#include "device.hpp"
#include "fused_optimizer.hpp"
#include "runtime.cuh"
#include "vector_access.cuh"

namespace fpemu::cuda::detail {
namespace {

constexpr unsigned threads_per_block = 256, per_thread = 8;

// AllBf16: weights, states and gradients are bf16 (pure-bf16 training), fixed at compile time so
// that every quantity derived from the formats folds.
template <class GradT, class StateT, bool AllBf16>
__global__ void __launch_bounds__(threads_per_block)
    fused_optimizer_kernel(fused_optimizer_params p, std::size_t n, const GradT* __restrict__ grads,
                           std::uint16_t* __restrict__ weights, std::uint32_t* __restrict__ master,
                           StateT* __restrict__ state0, StateT* __restrict__ state1, std::uint16_t* __restrict__ comp) {
  if constexpr (AllBf16) {
    constexpr format bf16 = formats::bf16;
    p.weights = p.states = p.grads = bf16;
  }
  const bool is_master = p.update == weight_update::master;
  const bool aligned = aligned_for_vectors(grads, 2) && aligned_for_vectors(weights, 2) &&
                       aligned_for_vectors(master, 4) && aligned_for_vectors(state0, 2) &&
                       aligned_for_vectors(state1, 2) && aligned_for_vectors(comp, 2);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * per_thread;
  for (std::size_t i0 = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * per_thread; i0 < n;
       i0 += stride) {
    const std::size_t count = n - i0 < per_thread ? n - i0 : per_thread;
    const bool vector = aligned && count == per_thread;
    std::uint32_t g[8], w[8], m[8], s0[8], s1[8], k[8];
    load8(grads + i0, vector, count, g);
    load8(is_master ? nullptr : weights + i0, vector, count, w);  // the model copy is only written
    load8(master == nullptr ? nullptr : master + i0, vector, count, m);
    load8(state0 == nullptr ? nullptr : state0 + i0, vector, count, s0);
    load8(state1 == nullptr ? nullptr : state1 + i0, vector, count, s1);
    load8(comp == nullptr ? nullptr : comp + i0, vector, count, k);
    // Unrolled for pure bf16, the common case; other formats keep one copy of the step (eight
    // would multiply the compile time several times over).
#pragma unroll(AllBf16 ? 8 : 1)
    for (int j = 0; j < 8; ++j) {
      optimizer_element e{w[j], m[j], s0[j], s1[j], k[j]};
      fused_optimizer_step(p, g[j], i0 + static_cast<std::size_t>(j), e);
      w[j] = e.weight;
      m[j] = e.master;
      s0[j] = e.state0;
      s1[j] = e.state1;
      k[j] = e.comp;
    }
    store8(weights + i0, vector, count, w);
    store8(master == nullptr ? nullptr : master + i0, vector, count, m);
    store8(state0 == nullptr ? nullptr : state0 + i0, vector, count, s0);
    store8(state1 == nullptr ? nullptr : state1 + i0, vector, count, s1);
    store8(comp == nullptr ? nullptr : comp + i0, vector, count, k);
  }
}

template <class GradT, class StateT, bool AllBf16 = false>
expected<void> queue(const fused_optimizer_params& p, const optimizer_device_buffers& b, cudaStream_t stream) {
  const std::size_t groups = (b.n + per_thread - 1) / per_thread;
  fused_optimizer_kernel<GradT, StateT, AllBf16><<<blocks_for(groups, threads_per_block), threads_per_block, 0, stream>>>(
      p, b.n, static_cast<const GradT*>(b.grads), static_cast<std::uint16_t*>(b.weights),
      static_cast<std::uint32_t*>(b.master), static_cast<StateT*>(b.state0), static_cast<StateT*>(b.state1),
      static_cast<std::uint16_t*>(b.compensation));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e, "fused_optimizer_kernel");
  return {};
}

// Host codes (uint32) in the device's element type: uint16, or uint32 for 32-bit formats.
expected<device_buffer<std::uint8_t>> upload_codes(std::span<const std::uint32_t> host, const format& f, bool used) {
  if (!used) return device_buffer<std::uint8_t>{};
  const std::size_t bytes = width(f) > 16 ? 4 : 2;  // codes checked to fit by prepare_optimizer_step
  std::vector<std::uint8_t> raw(host.size() * bytes);
  for (std::size_t i = 0; i < host.size(); ++i)
    for (std::size_t j = 0; j < bytes; ++j) raw[i * bytes + j] = static_cast<std::uint8_t>(host[i] >> (8 * j));
  return device_buffer<std::uint8_t>::upload(raw);
}

expected<void> download_codes(const device_buffer<std::uint8_t>& d, const format& f, std::vector<std::uint32_t>& host) {
  auto raw = d.download();
  if (!raw) return error{raw.message()};
  const std::size_t bytes = width(f) > 16 ? 4 : 2;
  host.assign(raw->size() / bytes, 0);
  for (std::size_t i = 0; i < host.size(); ++i)
    for (std::size_t j = 0; j < bytes; ++j) host[i] |= std::uint32_t{(*raw)[i * bytes + j]} << (8 * j);
  return {};
}

}  // namespace

expected<void> launch_optimizer_on_device(const fused_optimizer_params& params, const optimizer_device_buffers& b,
                                          void* stream) {
  if (auto d = query_device(); !d) return error{d.message()};
  if (b.n == 0) return {};
  fused_optimizer_params p = params;
  auto weights_rn = proven_instruction(p.weights, rounding{});
  auto states_rn = proven_instruction(p.states, rounding{});
  if (!weights_rn || !states_rn) return error{!weights_rn ? weights_rn.message() : states_rn.message()};
  p.weights_rn = *weights_rn;
  p.states_rn = *states_rn;
  using u16 = std::uint16_t;
  using u32 = std::uint32_t;
  const auto s = static_cast<cudaStream_t>(stream);
  const bool wide_grads = width(p.grads) > 16, wide_states = width(p.states) > 16;
  if (wide_grads) return wide_states ? queue<u32, u32>(p, b, s) : queue<u32, u16>(p, b, s);
  if (wide_states) return queue<u16, u32>(p, b, s);
  if (p.weights == formats::bf16 && p.states == formats::bf16 && p.grads == formats::bf16)
    return queue<u16, u16, true>(p, b, s);
  return queue<u16, u16>(p, b, s);
}

expected<void> launch_optimizer_step(const fused_optimizer_params& p, std::span<const std::uint32_t> grads,
                                     optimizer_buffers& b) {
  if (auto d = query_device(); !d) return error{d.message()};
  if (grads.empty()) return {};
  const bool is_master = p.update == weight_update::master, is_kahan = p.update == weight_update::kahan;
  const bool use0 = uses_state0(p), use1 = uses_state1(p);
  const std::size_t n = grads.size();
  auto g = upload_codes(grads, p.grads, true);
  if (!g) return error{g.message()};
  // Under master the model copy is write-only: allocated, not uploaded.
  auto w = is_master ? device_buffer<std::uint8_t>::allocate(2 * n) : upload_codes(b.weights, p.weights, true);
  if (!w) return error{w.message()};
  auto m = upload_codes(b.master, formats::fp32, is_master);
  if (!m) return error{m.message()};
  auto s0 = upload_codes(b.state0, p.states, use0);
  if (!s0) return error{s0.message()};
  auto s1 = upload_codes(b.state1, p.states, use1);
  if (!s1) return error{s1.message()};
  auto k = upload_codes(b.compensation, p.weights, is_kahan);
  if (!k) return error{k.message()};

  optimizer_device_buffers d;
  d.n = n;
  d.grads = g->get();
  d.weights = w->get();
  d.master = m->get();
  d.state0 = s0->get();
  d.state1 = s1->get();
  d.compensation = k->get();
  FPEMU_CUDA_TRY(launch_optimizer_on_device(p, d, nullptr));
  FPEMU_CUDA_TRY(check_launch("fused_optimizer_kernel"));

  FPEMU_CUDA_TRY(download_codes(*w, p.weights, b.weights));
  if (is_master) FPEMU_CUDA_TRY(download_codes(*m, formats::fp32, b.master));
  if (use0) FPEMU_CUDA_TRY(download_codes(*s0, p.states, b.state0));
  if (use1) FPEMU_CUDA_TRY(download_codes(*s1, p.states, b.state1));
  if (is_kahan) FPEMU_CUDA_TRY(download_codes(*k, p.weights, b.compensation));
  return {};
}

}  // namespace fpemu::cuda::detail
