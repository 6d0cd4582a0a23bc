// Internal to cuda/: the device a launch will use, and the error every launcher returns in a
// build without CUDA. Host C++ only (no CUDA headers), so the *_api.cpp files compile anywhere.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "fpemu/cuda.hpp"

namespace fpemu::cuda::detail {

// "fpemu was built without CUDA ...": what every launcher returns in a build without nvcc.
error no_cuda();

// Queries the current device (device.cu; the stub in device_api.cpp returns no_cuda()).
expected<device_info> query_device();

// The current device when its compute capability is at least major.minor; otherwise an error
// naming `what`, the device and the capability it needs.
expected<device_info> require_device(int major, int minor, const std::string& what);

// "0x1f": how the API's messages show codes and bit patterns.
std::string hex(std::uint32_t v);

// nullopt, or "NAME[i] = 0x.. is not a FMT code (codes are 0..0x..)" for the first element with
// bits above the format's width (the device may hold codes in 8 or 16 bits).
std::optional<std::string> check_codes(const std::string& name, std::span<const std::uint32_t> codes, const format& f);

}  // namespace fpemu::cuda::detail
