// The fused optimizer step kernel: one thread per element (grid-stride), each byte of the step's
// tensors read once and written once. The loop body is fused_optimizer_apply()
// (fused_optimizer.hpp), the same function the host tests compare with training::optimizer.
#include <cstdint>
#include <vector>

#include "device.hpp"
#include "fused_optimizer.hpp"
#include "runtime.cuh"

namespace fpemu::cuda::detail {
namespace {

// GradT / StateT: uint16 codes of a format of at most 16 bits, or uint32 binary32 bit patterns.
// Pointers of tensors the configuration does not use are null and never touched.
template <class GradT, class StateT>
__global__ void fused_optimizer_kernel(fused_optimizer_params p, std::size_t n, const GradT* __restrict__ grads,
                                       std::uint16_t* __restrict__ weights, std::uint32_t* __restrict__ master,
                                       StateT* __restrict__ state0, StateT* __restrict__ state1,
                                       std::uint16_t* __restrict__ comp) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    fused_optimizer_apply(p, i, grads, weights, master, state0, state1, comp);
}

// Host codes (uint32) in the device's element type T, and back.
template <class T>
std::vector<T> narrow_codes(std::span<const std::uint32_t> in) {
  return std::vector<T>(in.begin(), in.end());  // codes checked to fit T by prepare_optimizer_step
}

template <class T>
expected<device_buffer<T>> upload_codes(std::span<const std::uint32_t> host, bool used) {
  if (!used) return device_buffer<T>{};
  const std::vector<T> codes = narrow_codes<T>(host);
  return device_buffer<T>::upload(codes);
}

template <class T>
expected<void> download_codes(const device_buffer<T>& d, std::vector<std::uint32_t>& host) {
  auto codes = d.download();
  if (!codes) return error{codes.message()};
  host.assign(codes->begin(), codes->end());
  return {};
}

template <class GradT, class StateT>
expected<void> run(const fused_optimizer_params& p, std::span<const std::uint32_t> grads, optimizer_buffers& b) {
  const std::size_t n = grads.size();
  const bool is_master = p.update == weight_update::master, is_kahan = p.update == weight_update::kahan;
  const bool use0 = uses_state0(p), use1 = uses_state1(p);
  auto g = upload_codes<GradT>(grads, true);
  if (!g) return error{g.message()};
  // Under master the model copy is write-only: allocated, not uploaded.
  auto w = is_master ? device_buffer<std::uint16_t>::allocate(n) : upload_codes<std::uint16_t>(b.weights, true);
  if (!w) return error{w.message()};
  auto m = device_buffer<std::uint32_t>::upload(is_master ? std::span<const std::uint32_t>(b.master)
                                                          : std::span<const std::uint32_t>());
  if (!m) return error{m.message()};
  auto s0 = upload_codes<StateT>(b.state0, use0);
  if (!s0) return error{s0.message()};
  auto s1 = upload_codes<StateT>(b.state1, use1);
  if (!s1) return error{s1.message()};
  auto k = upload_codes<std::uint16_t>(b.compensation, is_kahan);
  if (!k) return error{k.message()};

  fused_optimizer_kernel<GradT, StateT><<<blocks_for(n), 256>>>(p, n, g->get(), w->get(), m->get(), s0->get(),
                                                                s1->get(), k->get());
  FPEMU_CUDA_TRY(check_launch("fused_optimizer_kernel"));

  FPEMU_CUDA_TRY(download_codes(*w, b.weights));
  if (is_master) FPEMU_CUDA_TRY(download_codes(*m, b.master));
  if (use0) FPEMU_CUDA_TRY(download_codes(*s0, b.state0));
  if (use1) FPEMU_CUDA_TRY(download_codes(*s1, b.state1));
  if (is_kahan) FPEMU_CUDA_TRY(download_codes(*k, b.compensation));
  return {};
}

}  // namespace

expected<void> launch_optimizer_step(const fused_optimizer_params& p, std::span<const std::uint32_t> grads,
                                     optimizer_buffers& b) {
  if (auto d = query_device(); !d) return error{d.message()};
  if (grads.empty()) return {};
  using u16 = std::uint16_t;
  using u32 = std::uint32_t;
  const bool wide_grads = width(p.grads) > 16, wide_states = width(p.states) > 16;
  if (wide_grads) return wide_states ? run<u32, u32>(p, grads, b) : run<u32, u16>(p, grads, b);
  return wide_states ? run<u16, u32>(p, grads, b) : run<u16, u16>(p, grads, b);
}

}  // namespace fpemu::cuda::detail
