// One gradient-accumulation cycle on the device: zero, N micro-batch adds, the global norm,
// the clip multiply. All tensors are laid end to end in one fp32 buffer, so each phase is one
// launch over every tensor. The element functions are those of fused_grad_accumulation.hpp, the
// same ones the host tests compare with training::grad_accumulator. The norm is deterministic:
// one thread sums one chunk sequentially, then a single thread sums the chunk sums in order,
// the reference's order (training::norm_chunk).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "device.hpp"
#include "fused_grad_accumulation.hpp"
#include "runtime.cuh"

namespace fpemu::cuda::detail {
namespace {

// The contract's buffer: fp32 (the element functions take any format of binary32 values).
constexpr format buffer_format = formats::fp32;

__global__ void zero_kernel(float* __restrict__ s, float* __restrict__ c, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    s[i] = zero_sum;
    if (c != nullptr) c[i] = zero_compensation;
  }
}

// One micro-batch into the buffer; c is null without Kahan compensation.
__global__ void add_kernel(format f, float* __restrict__ s, float* __restrict__ c, const float* __restrict__ g,
                           std::size_t n, float micro_batches) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (c == nullptr) {
      s[i] = accumulate_plain(f, s[i], g[i], micro_batches);
    } else {
      float si = s[i], ci = c[i];
      accumulate_kahan(f, si, ci, g[i], micro_batches);
      s[i] = si;
      c[i] = ci;
    }
  }
}

// First level of the norm: thread k sums chunk k in element order.
__global__ void chunk_sums_kernel(const float* __restrict__ s, const norm_chunk_span* __restrict__ chunks,
                                  std::size_t count, double* __restrict__ sums) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride)
    sums[k] = training::chunk_sum_squares(s + chunks[k].first, chunks[k].count);
}

// Second level: one thread, the chunk sums in order (a tree would change the rounding).
__global__ void norm_kernel(const double* __restrict__ sums, std::size_t count, double* __restrict__ norm) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *norm = norm_from_chunk_sums(sums, count);
}

__global__ void clip_kernel(format f, float* __restrict__ s, std::size_t n, float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    s[i] = clip_element(f, s[i], scale);
}

expected<void> copy_to_device(float* dst, const std::vector<float>& src) {
  if (src.empty()) return {};
  if (cudaError_t e = cudaMemcpy(dst, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice); e != cudaSuccess)
    return cuda_error(e, "cudaMemcpy of a micro-batch to the device");
  return {};
}

}  // namespace

expected<accumulation_result> launch_grad_accumulation(const micro_batch_list& micro_batches,
                                                       std::span<const std::size_t> sizes, double clip_norm, bool kahan) {
  if (auto d = query_device(); !d) return error{d.message()};
  std::size_t total = 0;
  for (const std::size_t n : sizes) total += n;

  auto s = device_buffer<float>::allocate(total);
  if (!s) return error{s.message()};
  auto c = device_buffer<float>::allocate(kahan ? total : 0);
  if (!c) return error{c.message()};
  auto g = device_buffer<float>::allocate(total);
  if (!g) return error{g.message()};

  if (total > 0) {
    zero_kernel<<<blocks_for(total), 256>>>(s->get(), c->get(), total);
    FPEMU_CUDA_TRY(check_launch("zero_kernel"));
    const float n = static_cast<float>(micro_batches.size());  // exact: at most 2^24
    std::vector<float> host(total);
    for (const auto& mb : micro_batches) {
      std::size_t offset = 0;
      for (const auto& t : mb) {
        std::copy(t.begin(), t.end(), host.begin() + static_cast<std::ptrdiff_t>(offset));
        offset += t.size();
      }
      FPEMU_CUDA_TRY(copy_to_device(g->get(), host));
      add_kernel<<<blocks_for(total), 256>>>(buffer_format, s->get(), c->get(), g->get(), total, n);
      FPEMU_CUDA_TRY(check_launch("add_kernel"));
    }
  }

  const std::vector<norm_chunk_span> chunks = norm_chunks(sizes);
  auto chunk_list = device_buffer<norm_chunk_span>::upload(chunks);
  if (!chunk_list) return error{chunk_list.message()};
  auto sums = device_buffer<double>::allocate(chunks.size());
  if (!sums) return error{sums.message()};
  auto norm = device_buffer<double>::allocate(1);
  if (!norm) return error{norm.message()};
  if (!chunks.empty()) {
    chunk_sums_kernel<<<blocks_for(chunks.size()), 256>>>(s->get(), chunk_list->get(), chunks.size(), sums->get());
    FPEMU_CUDA_TRY(check_launch("chunk_sums_kernel"));
  }
  norm_kernel<<<1, 1>>>(sums->get(), chunks.size(), norm->get());
  FPEMU_CUDA_TRY(check_launch("norm_kernel"));

  accumulation_result r;
  FPEMU_CUDA_TRY(norm->download(std::span<double>(&r.norm, 1)));
  const training::clip_decision clip = training::clip_for(clip_norm, r.norm);
  r.scale = clip.scale;
  if (clip.apply && total > 0) {
    clip_kernel<<<blocks_for(total), 256>>>(buffer_format, s->get(), total, clip.scale);
    FPEMU_CUDA_TRY(check_launch("clip_kernel"));
  }

  auto values = s->download();
  if (!values) return error{values.message()};
  std::size_t offset = 0;
  for (const std::size_t n : sizes) {
    std::vector<std::uint32_t> bits(n);
    for (std::size_t j = 0; j < n; ++j) bits[j] = std::bit_cast<std::uint32_t>((*values)[offset + j]);
    r.buffer.push_back(std::move(bits));
    offset += n;
  }
  return r;
}

}  // namespace fpemu::cuda::detail
