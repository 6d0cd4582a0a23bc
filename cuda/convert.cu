// Bulk conversion kernels: every element through the core (convert_element), or through a
// hardware cvt instruction once the exhaustive check below has shown it gives the same bits.
#include <cuda_runtime.h>

#include <bit>
#include <cstdint>

#include "arch/sm89_cvt.cuh"
#include "convert.hpp"
#include "runtime.cuh"

namespace fpemu::cuda {
namespace {

__device__ std::uint32_t hardware_convert(hardware_cvt h, float x, int* unavailable) {
  switch (h) {
    case hardware_cvt::e4m3_rn_satfinite: return arch::sm89_cvt_rn_satfinite_e4m3_f32(x, unavailable);
    case hardware_cvt::e5m2_rn_satfinite: return arch::sm89_cvt_rn_satfinite_e5m2_f32(x, unavailable);
    case hardware_cvt::bf16_rn: return arch::sm80_cvt_rn_bf16_f32(x, unavailable);
    case hardware_cvt::bf16_rz: return arch::sm80_cvt_rz_bf16_f32(x, unavailable);
    case hardware_cvt::f16_rn: return arch::cvt_rn_f16_f32(x);
    case hardware_cvt::f16_rz: return arch::cvt_rz_f16_f32(x);
    case hardware_cvt::none: break;
  }
  *unavailable = 1;
  return 0;
}

__device__ bool is_nan_bits(std::uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; }

// In: u32 (binary32 bits) or u16 (bf16/fp16 codes). Out: codes narrowed to the format's width,
// or binary32 bit patterns of the rounded values.
template <class In, class Out>
__global__ void convert_kernel(source_type from, const In* in, Out* out, std::size_t n, format to, rounding r,
                               sr_stream sr, hardware_cvt hw, bool values, int* unavailable) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint32_t bits = in[i];
    const std::uint32_t code = hw != hardware_cvt::none && !is_nan_bits(bits)
                                   ? hardware_convert(hw, std::bit_cast<float>(bits), unavailable)
                                   : convert_element(from, bits, to, r, sr, i);
    out[i] = static_cast<Out>(values ? std::bit_cast<std::uint32_t>(code_to_float(to, code)) : code);
  }
}

// Every non-NaN binary32 input: hardware against the core.
__global__ void exhaustive_kernel(hardware_cvt hw, format to, rounding r, unsigned long long* mismatches,
                                  unsigned* first, int* unavailable) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (1ull << 32);
       i += stride) {
    const auto bits = static_cast<std::uint32_t>(i);
    if (is_nan_bits(bits)) continue;
    const float x = std::bit_cast<float>(bits);
    if (hardware_convert(hw, x, unavailable) != round_float(to, x, r).code) {
      ++local;
      atomicMin(first, bits);
    }
  }
  if (local != 0) atomicAdd(mismatches, local);
}

__global__ void one_input_kernel(hardware_cvt hw, format to, rounding r, std::uint32_t bits, std::uint32_t* out,
                                 int* unavailable) {
  const float x = std::bit_cast<float>(bits);
  out[0] = hardware_convert(hw, x, unavailable);
  out[1] = round_float(to, x, r).code;
}

// An error when the kernel ran in a compilation pass without the instruction `hw`.
expected<void> check_available(const detail::device_buffer<int>& unavailable, hardware_cvt hw) {
  auto v = unavailable.download();
  if (!v) return error{v.message()};
  if ((*v)[0] != 0) return error{std::string("this build has no code for ") + instruction_name(hw) + " on this device"};
  return {};
}

template <class In, class Out>
expected<std::vector<std::uint32_t>> run(source_type from, std::span<const std::uint32_t> in, const convert_options& o,
                                         hardware_cvt hw, bool values) {
  std::vector<In> narrow(in.begin(), in.end());  // callers checked that 16-bit codes fit
  auto d_in = detail::device_buffer<In>::upload(narrow);
  if (!d_in) return error{d_in.message()};
  auto d_out = detail::device_buffer<Out>::allocate(in.size());
  if (!d_out) return error{d_out.message()};
  const int zero = 0;
  auto flag = detail::device_buffer<int>::upload(std::span(&zero, 1));
  if (!flag) return error{flag.message()};
  if (!in.empty()) {
    convert_kernel<In, Out><<<detail::blocks_for(in.size()), 256>>>(from, d_in->get(), d_out->get(), in.size(), o.to,
                                                                   o.r, o.sr, hw, values, flag->get());
    FPEMU_CUDA_TRY(detail::check_launch("convert_kernel"));
  }
  FPEMU_CUDA_TRY(check_available(*flag, hw));
  auto out = d_out->download();
  if (!out) return error{out.message()};
  return std::vector<std::uint32_t>(out->begin(), out->end());
}

template <class In>
expected<std::vector<std::uint32_t>> run_to(source_type from, std::span<const std::uint32_t> in,
                                            const convert_options& o, hardware_cvt hw, bool values) {
  if (values || width(o.to) > 16) return run<In, std::uint32_t>(from, in, o, hw, values);
  if (width(o.to) > 8) return run<In, std::uint16_t>(from, in, o, hw, values);
  return run<In, std::uint8_t>(from, in, o, hw, values);
}

}  // namespace

namespace detail {

expected<std::vector<std::uint32_t>> launch_convert(source_type from, std::span<const std::uint32_t> in,
                                                    const convert_options& o, hardware_cvt hw, bool values) {
  if (from == source_type::f32) return run_to<std::uint32_t>(from, in, o, hw, values);
  return run_to<std::uint16_t>(from, in, o, hw, values);
}

expected<fast_path_report> launch_exhaustive_check(hardware_cvt hw, const format& to, const rounding& r) {
  const unsigned long long zero = 0;
  const unsigned none = 0xffffffffu;
  const int no = 0;
  auto mismatches = device_buffer<unsigned long long>::upload(std::span(&zero, 1));
  auto first = device_buffer<unsigned>::upload(std::span(&none, 1));
  auto flag = device_buffer<int>::upload(std::span(&no, 1));
  auto codes = device_buffer<std::uint32_t>::allocate(2);
  if (!mismatches || !first || !flag || !codes)
    return error{!mismatches ? mismatches.message() : !first ? first.message() : !flag ? flag.message() : codes.message()};
  exhaustive_kernel<<<4096, 256>>>(hw, to, r, mismatches->get(), first->get(), flag->get());
  FPEMU_CUDA_TRY(check_launch("exhaustive_kernel"));
  FPEMU_CUDA_TRY(check_available(*flag, hw));
  auto count = mismatches->download();
  auto first_bits = first->download();
  if (!count || !first_bits) return error{!count ? count.message() : first_bits.message()};
  fast_path_report report;
  report.instruction = instruction_name(hw);
  report.cases = (1ull << 32) - 2 * ((1ull << 23) - 1);  // every binary32 pattern but the NaNs
  report.mismatches = (*count)[0];
  if (report.mismatches != 0) {
    report.first_input = (*first_bits)[0];
    one_input_kernel<<<1, 1>>>(hw, to, r, report.first_input, codes->get(), flag->get());
    FPEMU_CUDA_TRY(check_launch("one_input_kernel"));
    auto both = codes->download();
    if (!both) return error{both.message()};
    report.hardware_code = (*both)[0];
    report.core_code = (*both)[1];
  }
  return report;
}

}  // namespace detail
}  // namespace fpemu::cuda
