// Internal to cuda/: CUDA runtime calls turned into fpemu errors, and device buffers that free
// themselves. Every runtime call is checked, and every launch is followed by a check of the
// launch and of the kernel's completion, so a failure becomes a message, never an abort.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fpemu/expected.hpp"

namespace fpemu::cuda::detail {

inline error cuda_error(cudaError_t e, const char* what) {
  return error{std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")"};
}

// After a launch: the launch itself, then the kernel's completion.
inline expected<void> check_launch(const char* kernel) {
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e, kernel);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cuda_error(e, kernel);
  return {};
}

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~device_buffer() {
    if (p_ != nullptr) cudaFree(p_);
  }

  // n elements, uninitialised.
  static expected<device_buffer> allocate(std::size_t n) {
    device_buffer b;
    if (n == 0) return std::move(b);
    if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&b.p_), n * sizeof(T)); e != cudaSuccess)
      return cuda_error(e, "cudaMalloc");
    b.n_ = n;
    return std::move(b);
  }
  static expected<device_buffer> upload(std::span<const T> host) {
    auto b = allocate(host.size());
    if (!b || host.empty()) return b;
    if (cudaError_t e = cudaMemcpy(b->p_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice); e != cudaSuccess)
      return cuda_error(e, "cudaMemcpy to the device");
    return b;
  }
  expected<void> download(std::span<T> host) const {
    if (host.empty()) return {};
    if (cudaError_t e = cudaMemcpy(host.data(), p_, host.size_bytes(), cudaMemcpyDeviceToHost); e != cudaSuccess)
      return cuda_error(e, "cudaMemcpy to the host");
    return {};
  }
  expected<std::vector<T>> download() const {
    std::vector<T> out(n_);
    if (auto ok = download(std::span<T>(out)); !ok) return error{ok.message()};
    return out;
  }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Blocks of `threads` for n elements, capped so that grid-stride loops cover the rest.
inline unsigned blocks_for(std::size_t n, unsigned threads = 256) {
  const std::size_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b == 0 ? 1 : (b > 65535u * 16 ? 65535u * 16 : b));
}

}  // namespace fpemu::cuda::detail

// Early return of an error from a function returning expected<...>.
#define FPEMU_CUDA_TRY(expr)                          \
  do {                                                \
    if (auto fpemu_ok_ = (expr); !fpemu_ok_)          \
      return ::fpemu::error{fpemu_ok_.message()};     \
  } while (0)
