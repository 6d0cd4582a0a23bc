// cuda::accumulate_gradients: argument checks on the host, with or without CUDA. Every check runs
// before any device query, so a bad argument is reported the same way on a machine without a
// GPU; the kernels are in cuda/grad_accumulation.cu.
#include <cmath>
#include <cstdio>
#include <string>

#include "device.hpp"
#include "fused_grad_accumulation.hpp"

namespace fpemu::cuda {
namespace detail {
namespace {

constexpr std::size_t max_micro_batches = std::size_t{1} << 24;  // as the emulator: float(N) exact

error bad(const std::string& what) { return error{"accumulate_gradients: " + what}; }

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

expected<std::vector<std::size_t>> check_accumulation(const micro_batch_list& micro_batches, double clip_norm) {
  if (micro_batches.empty())
    return bad("micro_batches is empty (give 1.." + std::to_string(max_micro_batches) +
               " micro-batches, each a list of tensors)");
  if (micro_batches.size() > max_micro_batches)
    return bad(std::to_string(micro_batches.size()) + " micro-batches; at most " +
               std::to_string(max_micro_batches) + " (so that float(N) is exact)");
  if (!std::isfinite(clip_norm) || clip_norm < 0)
    return bad("clip_norm = " + number(clip_norm) + " must be finite and >= 0 (0 turns clipping off)");
  std::vector<std::size_t> sizes;
  for (const auto& t : micro_batches[0]) sizes.push_back(t.size());
  for (std::size_t i = 1; i < micro_batches.size(); ++i) {
    const auto& mb = micro_batches[i];
    if (mb.size() != sizes.size())
      return bad("micro-batch " + std::to_string(i) + " has " + std::to_string(mb.size()) +
                 " tensors, micro-batch 0 has " + std::to_string(sizes.size()) +
                 " (every micro-batch holds the same tensors)");
    for (std::size_t t = 0; t < mb.size(); ++t)
      if (mb[t].size() != sizes[t])
        return bad("tensor " + std::to_string(t) + " of micro-batch " + std::to_string(i) + " has " +
                   std::to_string(mb[t].size()) + " elements, in micro-batch 0 it has " + std::to_string(sizes[t]));
  }
  return sizes;
}

#ifndef FPEMU_HAVE_CUDA
expected<accumulation_result> launch_grad_accumulation(const micro_batch_list&, std::span<const std::size_t>, double,
                                                       bool) {
  return no_cuda();
}
#endif

}  // namespace detail

expected<accumulation_result> accumulate_gradients(const std::vector<std::vector<std::vector<float>>>& micro_batches,
                                                   double clip_norm, bool kahan) {
  const auto sizes = detail::check_accumulation(micro_batches, clip_norm);
  if (!sizes) return error{sizes.message()};
  return detail::launch_grad_accumulation(micro_batches, *sizes, clip_norm, kahan);
}

}  // namespace fpemu::cuda
