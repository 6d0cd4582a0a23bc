// Internal to cuda/: the device a launch will use, and the error every launcher returns in a
// build without CUDA. Host C++ only (no CUDA headers), so the *_api.cpp files compile anywhere.
#pragma once

#include "fpemu/cuda.hpp"

namespace fpemu::cuda::detail {

// "fpemu was built without CUDA ...": what every launcher returns in a build without nvcc.
error no_cuda();

// Queries the current device (device.cu; the stub in device_api.cpp returns no_cuda()).
expected<device_info> query_device();

// The current device when its compute capability is at least major.minor; otherwise an error
// naming `what`, the device and the capability it needs.
expected<device_info> require_device(int major, int minor, const std::string& what);

}  // namespace fpemu::cuda::detail
