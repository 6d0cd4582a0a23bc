// The current CUDA device, as the runtime reports it.
#include "device.hpp"
#include "runtime.cuh"

namespace fpemu::cuda::detail {

expected<device_info> query_device() {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so that a later query starts clean
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
      return error{std::string("no CUDA device: no NVIDIA GPU with a working driver was found (") + cudaGetErrorName(e) + ")"};
    return error{std::string("no CUDA device: ") + cudaGetErrorString(e)};
  }
  if (count == 0) return error{"no CUDA device: the driver reports none"};
  int id = 0;
  cudaDeviceProp p{};
  if (cudaError_t e = cudaGetDevice(&id); e != cudaSuccess) return cuda_error(e, "cudaGetDevice");
  if (cudaError_t e = cudaGetDeviceProperties(&p, id); e != cudaSuccess) return cuda_error(e, "cudaGetDeviceProperties");
  device_info d;
  d.name = p.name;
  d.major = p.major;
  d.minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_bytes = p.totalGlobalMem;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

}  // namespace fpemu::cuda::detail
