// Host side of the promoted FP8 GEMM (include/fpemu/cuda.hpp): every argument checked before any
// device query, then the device (compute capability 9.0: the kernel is sm_90a code), then the
// kernel in fp8_gemm.cu.
#include <cmath>
#include <string>
#include <vector>

#include "device.hpp"
#include "fp8_gemm.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::cuda {
namespace {

error bad(const char* fn, const std::string& what) { return error{std::string(fn) + ": " + what}; }

expected<void> check_shape(const char* fn, const format& a, const format& b, int m, int n, int k) {
  for (auto [role, f] : {std::pair{"A", a}, std::pair{"B", b}})
    if (f != formats::e4m3fn && f != formats::e5m2)
      return bad(fn, std::string(role) + " format '" + to_string(f) + "' must be e4m3fn or e5m2");
  constexpr int max_dim = 65536;
  for (auto [name, v] : {std::pair{"M", m}, std::pair{"N", n}, std::pair{"K", k}})
    if (v < 128 || v > max_dim || v % 128 != 0)
      return bad(fn, std::string(name) + " = " + std::to_string(v) + " must be a positive multiple of 128 (at most " +
                         std::to_string(max_dim) + ")");
  return {};
}

expected<void> check_scales(const char* fn, const char* what, const std::vector<float>& s, std::size_t want,
                            const std::string& shape) {
  if (s.empty()) return {};
  if (s.size() != want)
    return bad(fn, std::string(what) + " has " + std::to_string(s.size()) + " values; " + shape + " needs " +
                       std::to_string(want) + " (or none, for all 1)");
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!std::isfinite(s[i]) || !(s[i] > 0.0f))
      return bad(fn, std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(s[i]) +
                         " must be finite and positive");
  return {};
}

expected<device_info> fp8_device(const char* fn) {
  auto d = detail::require_device(9, 0, fn);
  if (!d) return d;
  if (d->major != 9 || d->minor != 0)
    return bad(fn, "needs a GPU of compute capability exactly 9.0 (H100/H200: its sm_90a code runs nowhere else); "
                   "this one (" + d->name + ") is " + std::to_string(d->major) + "." + std::to_string(d->minor));
  return d;
}

}  // namespace

expected<void> promoted_fp8_gemm_on_device(const fp8_gemm_device_args& g, void* stream) {
  const char* fn = "promoted_fp8_gemm_on_device";
  if (auto ok = check_shape(fn, g.a, g.b, g.m, g.n, g.k); !ok) return ok;
  for (auto [name, p] : {std::pair{"a_codes", g.a_codes}, std::pair{"bt_codes", g.bt_codes},
                         std::pair{"d", static_cast<const void*>(g.d)}})
    if (p == nullptr) return bad(fn, std::string(name) + " is null");
  auto d = fp8_device(fn);
  if (!d) return error{d.message()};
  return detail::launch_promoted_fp8_gemm(g, d->multiprocessors, nullptr, stream);
}

#ifndef FPEMU_HAVE_CUDA
namespace detail {
expected<void> launch_promoted_fp8_gemm(const fp8_gemm_device_args&, int, int*, void*) { return no_cuda(); }
expected<std::vector<std::uint32_t>> run_promoted_fp8_gemm(const fp8_gemm_args&, int) { return no_cuda(); }
}  // namespace detail
#endif

expected<std::vector<std::uint32_t>> promoted_fp8_gemm(const fp8_gemm_args& g) {
  const char* fn = "promoted_fp8_gemm";
  if (auto ok = check_shape(fn, g.a, g.b, g.m, g.n, g.k); !ok) return error{ok.message()};
  const std::size_t mk = static_cast<std::size_t>(g.m) * g.k, nk = static_cast<std::size_t>(g.n) * g.k;
  if (g.a_codes.size() != mk)
    return bad(fn, "a_codes has " + std::to_string(g.a_codes.size()) + " values; A is " + std::to_string(g.m) + "x" +
                       std::to_string(g.k) + " and needs " + std::to_string(mk));
  if (g.bt_codes.size() != nk)
    return bad(fn, "bt_codes has " + std::to_string(g.bt_codes.size()) + " values; B^T is " + std::to_string(g.n) +
                       "x" + std::to_string(g.k) + " and needs " + std::to_string(nk));
  if (auto why = detail::check_codes(std::string(fn) + ": a_codes", g.a_codes, g.a)) return error{*why};
  if (auto why = detail::check_codes(std::string(fn) + ": bt_codes", g.bt_codes, g.b)) return error{*why};
  const int groups = g.k / 128;
  if (auto ok = check_scales(fn, "a_scale", g.a_scale, static_cast<std::size_t>(g.m) * groups,
                             "M x G = " + std::to_string(g.m) + "x" + std::to_string(groups));
      !ok)
    return error{ok.message()};
  if (auto ok = check_scales(fn, "b_scale", g.b_scale, static_cast<std::size_t>(g.n / 128) * groups,
                             "(N / 128) x G = " + std::to_string(g.n / 128) + "x" + std::to_string(groups));
      !ok)
    return error{ok.message()};
  auto d = fp8_device(fn);
  if (!d) return error{d.message()};
  return detail::run_promoted_fp8_gemm(g, d->multiprocessors);
}

}  // namespace fpemu::cuda
