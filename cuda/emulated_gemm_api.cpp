// The emulated GEMM's argument checks.
#include <string>

#include "device.hpp"
#include "emulated_gemm.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::cuda {
namespace {

std::optional<std::string> check_operand(const char* name, const format& f, std::span<const std::uint32_t> codes,
                                         std::size_t expected_size, const std::string& shape) {
  if (codes.size() != expected_size)
    return std::string(name) + " has " + std::to_string(codes.size()) + " codes; " + shape + " needs " +
           std::to_string(expected_size);
  return detail::check_codes(name, codes, f);
}

}  // namespace

expected<std::vector<std::uint32_t>> emulated_gemm(const block_fma_model& model, const format& fa, const format& fb,
                                                   int m, int n, int k, std::span<const std::uint32_t> a,
                                                   std::span<const std::uint32_t> b) {
  if (auto bad = check(fa)) return error{"A format: " + *bad};
  if (auto bad = check(fb)) return error{"B format: " + *bad};
  if (auto bad = check(model.acc)) return error{"accumulator format: " + *bad};
  if (auto bad = check(model.acc, model.acc_rounding)) return error{"accumulator rounding: " + *bad};
  if (model.block_size < 1 || model.block_size > max_emulated_block)
    return error{"block size " + std::to_string(model.block_size) + " is out of range for the GPU: valid 1.." +
                 std::to_string(max_emulated_block)};
  if (model.frac_bits < 0 || model.frac_bits > max_block_frac_bits)
    return error{"block-FMA frac_bits " + std::to_string(model.frac_bits) + " is out of range: valid 0.." +
                 std::to_string(max_block_frac_bits)};
  constexpr int max_dim = 1 << 20;
  for (auto [name, v] : {std::pair{"M", m}, std::pair{"N", n}, std::pair{"K", k}})
    if (v < 1 || v > max_dim)
      return error{std::string(name) + " = " + std::to_string(v) + " is out of range: valid 1.." +
                   std::to_string(max_dim)};
  const std::string shape = std::to_string(m) + "x" + std::to_string(k) + " by " + std::to_string(k) + "x" +
                            std::to_string(n);
  if (auto bad = check_operand("A", fa, a, static_cast<std::size_t>(m) * k, shape)) return error{*bad};
  if (auto bad = check_operand("B", fb, b, static_cast<std::size_t>(k) * n, shape)) return error{*bad};
  if (auto device = detail::query_device(); !device) return error{device.message()};
  return detail::launch_emulated_gemm(model, fa, fb, m, n, k, a, b);
}

#ifndef FPEMU_HAVE_CUDA
namespace detail {
expected<std::vector<std::uint32_t>> launch_emulated_gemm(const block_fma_model&, const format&, const format&, int,
                                                          int, int, std::span<const std::uint32_t>,
                                                          std::span<const std::uint32_t>) {
  return no_cuda();
}
}  // namespace detail
#endif

}  // namespace fpemu::cuda
