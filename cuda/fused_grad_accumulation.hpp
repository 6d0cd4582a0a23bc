// Gradient accumulation (contract gradient-accumulation-kernel-v1, analysis/training/grad_accumulation.hpp)
// element by element, written once for the host and the device.
//
// cuda/grad_accumulation.cu runs one cycle as kernels over all tensors laid end to end in one
// buffer: zero, one add per micro-batch, the norm (one thread per chunk, then one thread over
// the chunk sums), then the clip multiply. The host tests run the same functions in loops and
// compare buffer bits, the norm and the scale with training::grad_accumulator bit for bit.
//
// The reference does its zero phase in a scratch array that starts at -0 (the additive identity:
// 0 + u keeps u's sign) with a +0 compensation; the device writes exactly those values into its
// buffers, so every add afterwards is the same load-add-store. The norm's summation order is the
// reference's own (training::norm_chunk, training::chunk_sum_squares), not a copy of it.
//
// The host declarations at the end are ordinary host functions (see fused_optimizer.hpp for why
// they are not hidden behind __CUDA_ARCH__).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/training/grad_accumulation.hpp"
#include "fpemu/config.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/round_float.hpp"

namespace fpemu::cuda::detail {

// The zero phase: the sum starts at -0, the Kahan compensation at +0 (as the reference's scratch).
inline constexpr float zero_sum = -0.0f;
inline constexpr float zero_compensation = 0.0f;

// The one rounding into the buffer format (round to nearest even; exact for fp32), as
// stored_tensor::store and load do it: through the core.
FPEMU_HD inline float buffer_store(const format& f, float v) { return code_to_float(f, round_float(f, v).code); }

// One micro-batch, plain: s = store(s + g / N). Division, not a multiply by 1/N (see the reference).
FPEMU_HD inline float accumulate_plain(const format& f, float s, float g, float n) {
  return buffer_store(f, s + g / n);
}

// One micro-batch, Kahan: y = g / N - c;  s' = store(s + y);  c = store((s' - s) - y).
FPEMU_HD inline void accumulate_kahan(const format& f, float& s, float& c, float g, float n) {
  const float y = g / n - c;
  const float next = buffer_store(f, s + y);
  c = buffer_store(f, (next - s) - y);
  s = next;
}

// The clip multiply: store(s * scale), scale = float(clip_norm / (norm + 1e-6)) (training::clip_for).
FPEMU_HD inline float clip_element(const format& f, float s, float scale) { return buffer_store(f, s * scale); }

// The second level of the norm: the chunk sums in (tensor, chunk) order, then sqrt.
FPEMU_HD inline double norm_from_chunk_sums(const double* sums, std::size_t count) {
  double total = 0;
  for (std::size_t k = 0; k < count; ++k) total += sums[k];
  return std::sqrt(total);
}

// ---- Host side ----------------------------------------------------------------------------

// A chunk of the norm's first level, as offsets into the tensors laid end to end.
struct norm_chunk_span {
  std::size_t first = 0, count = 0;
};

// The chunks of tensors of these sizes in (tensor, chunk) order: each tensor cut into
// training::norm_chunk elements from its own start (a chunk never spans two tensors), the last
// one shorter; a tensor of size 0 has none.
inline std::vector<norm_chunk_span> norm_chunks(std::span<const std::size_t> sizes) {
  std::vector<norm_chunk_span> chunks;
  std::size_t offset = 0;
  for (const std::size_t n : sizes) {
    for (std::size_t first = 0; first < n; first += training::norm_chunk)
      chunks.push_back({offset + first, n - first < training::norm_chunk ? n - first : training::norm_chunk});
    offset += n;
  }
  return chunks;
}

// micro_batches[i][t]: tensor t of micro-batch i, as cuda::accumulate_gradients takes them.
using micro_batch_list = std::vector<std::vector<std::vector<float>>>;

// Checks every argument of cuda::accumulate_gradients (grad_accumulation_api.cpp) and returns the
// tensor sizes. Touches no device.
expected<std::vector<std::size_t>> check_accumulation(const micro_batch_list& micro_batches, double clip_norm);

// One cycle on the device (cuda/grad_accumulation.cu; without CUDA, grad_accumulation_api.cpp
// returns no_cuda()). Arguments already checked by check_accumulation.
expected<accumulation_result> launch_grad_accumulation(const micro_batch_list& micro_batches,
                                                       std::span<const std::size_t> sizes, double clip_norm, bool kahan);

}  // namespace fpemu::cuda::detail
