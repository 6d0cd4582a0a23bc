// Internal to cuda/: eight consecutive elements of a code or value array moved in as few accesses
// as the type allows, for the memory-bound kernels (conversion, optimizer). With `vector` (the
// caller has checked 16-byte alignment and a full row) an array of 1-, 2- or 4-byte elements
// moves 8, 16 or 32 bytes per thread in one or two vector accesses; otherwise element by element,
// the first `count` only. A null array reads as zeros and is not written.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fpemu::cuda::detail {

template <class T>
__device__ __forceinline__ void load8(const T* p, bool vector, std::size_t count, std::uint32_t (&x)[8]) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4);
  if (p == nullptr) {
    for (auto& v : x) v = 0;
  } else if (vector && sizeof(T) == 2) {
    const uint4 a = *reinterpret_cast<const uint4*>(p);
    const std::uint32_t w[4] = {a.x, a.y, a.z, a.w};
    for (int j = 0; j < 8; ++j) x[j] = (w[j / 2] >> (16 * (j % 2))) & 0xffffu;
  } else if (vector) {
    const uint4 a = reinterpret_cast<const uint4*>(p)[0], b = reinterpret_cast<const uint4*>(p)[1];
    const std::uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    for (int j = 0; j < 8; ++j) x[j] = w[j];
  } else {
    for (int j = 0; j < 8; ++j) x[j] = static_cast<std::size_t>(j) < count ? static_cast<std::uint32_t>(p[j]) : 0u;
  }
}

template <class T>
__device__ __forceinline__ void store8(T* p, bool vector, std::size_t count, const std::uint32_t (&y)[8]) {
  if (p == nullptr) return;
  if (vector && sizeof(T) == 1) {
    *reinterpret_cast<uint2*>(p) = make_uint2(y[0] | y[1] << 8 | y[2] << 16 | y[3] << 24,
                                              y[4] | y[5] << 8 | y[6] << 16 | y[7] << 24);
  } else if (vector && sizeof(T) == 2) {
    *reinterpret_cast<uint4*>(p) = make_uint4(y[0] | y[1] << 16, y[2] | y[3] << 16, y[4] | y[5] << 16, y[6] | y[7] << 16);
  } else if (vector) {
    reinterpret_cast<uint4*>(p)[0] = make_uint4(y[0], y[1], y[2], y[3]);
    reinterpret_cast<uint4*>(p)[1] = make_uint4(y[4], y[5], y[6], y[7]);
  } else {
    for (int j = 0; j < 8; ++j)
      if (static_cast<std::size_t>(j) < count) p[j] = static_cast<T>(y[j]);
  }
}

// Vector accesses need 16-byte alignment (8 bytes for a row of one-byte codes).
__device__ __forceinline__ bool aligned_for_vectors(const void* p, std::size_t element_bytes) {
  return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % (element_bytes == 1 ? 8 : 16) == 0;
}

}  // namespace fpemu::cuda::detail
