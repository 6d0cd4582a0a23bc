// Build and device queries of the CUDA host API, valid with or without CUDA, and the argument
// checks the API's parts share.
#include <cstdio>
#include <string>

#include "device.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::cuda {
namespace detail {

error no_cuda() {
  return error{"fpemu was built without CUDA (nvcc was not found when meson configured the build; "
               "put nvcc on PATH and reconfigure with -Dcuda=enabled)"};
}

#ifndef FPEMU_HAVE_CUDA
expected<device_info> query_device() { return no_cuda(); }
#endif

expected<device_info> require_device(int major, int minor, const std::string& what) {
  auto d = query_device();
  if (!d) return d;
  if (d->major < major || (d->major == major && d->minor < minor))
    return error{what + " needs a GPU of compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                 " or later; this one (" + d->name + ") is " + std::to_string(d->major) + "." +
                 std::to_string(d->minor)};
  return d;
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(v));
  return buf;
}

std::optional<std::string> check_codes(const std::string& name, std::span<const std::uint32_t> codes, const format& f) {
  const std::uint32_t mask = code_mask(f);
  for (std::size_t i = 0; i < codes.size(); ++i)
    if ((codes[i] & ~mask) != 0)
      return name + "[" + std::to_string(i) + "] = " + hex(codes[i]) + " is not a " + to_string(f) +
             " code (codes are 0.." + hex(mask) + ")";
  return std::nullopt;
}

}  // namespace detail

#ifdef FPEMU_HAVE_CUDA
bool built_with_cuda() { return true; }
std::string compiled_targets() { return FPEMU_CUDA_TARGETS; }
#else
bool built_with_cuda() { return false; }
std::string compiled_targets() { return ""; }
#endif

expected<device_info> current_device() { return detail::query_device(); }

}  // namespace fpemu::cuda
