// Bulk conversion kernels: every element through the core (convert_element), or through a
// hardware cvt instruction once the exhaustive check below has shown it gives the same bits.
//
// Memory-bound, so laid out for bandwidth: a block of 256 threads converts a tile of 2048
// elements, 8 consecutive ones per thread, read and written with 16-byte (8-byte for one-byte
// codes) accesses where the buffers are aligned; each launch runs the instantiation of its path
// alone (convert_path). Stochastic rounding draws element i's bits from the array keystream
// (keystream_bits, random.hpp), in which one Philox block serves 128 / width elements: the
// block's threads first compute each Philox block the tile needs once, into shared memory, and
// every element then takes its piece (keystream_piece). That needs the tile to start a keystream
// group, i.e. sr.first_index a multiple of the group (128 elements at width 16); otherwise each
// element computes its own block, with the same bits, 8 to 32 times the work. sr-exact (width 64)
// draws element by element, two blocks each (its high and low words).
#include <cuda_runtime.h>

#include <bit>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "convert.hpp"
#include "runtime.cuh"
#include "vector_access.cuh"

namespace fpemu::cuda {
namespace {

__device__ bool is_nan_bits(std::uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; }

constexpr unsigned threads_per_block = 256, per_thread = 8, tile = threads_per_block * per_thread;

// Philox blocks one tile needs at keystream width `width`: 2048 elements, 128 / width per block.
constexpr unsigned tile_blocks(int width) { return tile * static_cast<unsigned>(width) / 128; }

struct convert_params {
  source_type from;
  format to;
  rounding r;
  sr_stream sr;
  hardware_cvt hw;
  bool values;  // write binary32 bit patterns of the rounded values instead of codes
  std::size_t n;
  int* unavailable;
};

// How the kernel computes an element, fixed per launch so that each instantiation carries only
// its own path: a proven hardware instruction (NaN inputs through the core), the core without
// random bits, or the core with keystream bits of width 16 or 32 shared through shared memory
// (Width), or drawn element by element (Width 0).
enum class convert_path : std::uint8_t { hardware, core, core_random };

// The target format as a compile-time constant (Fixed), for the named formats most conversions
// go to: the core's code is the same, but every quantity derived from the format folds, which
// takes most of the work out of each element. `runtime` (no exponent bits) reads p.to.
constexpr format runtime{0, 0, 0};
constexpr format fixed_targets[] = {formats::bf16,     formats::fp16,     formats::e4m3fn,
                                    formats::e5m2,     formats::e4m3fnuz, formats::e5m2fnuz,
                                    formats::e3m2fn,   formats::e2m3fn,   formats::e2m1fn};

// In: uint32 (binary32 bits) or uint16 (bf16/fp16 codes). Out: codes at storage width, or uint32.
template <class In, class Out, convert_path Path, int Width, format Fixed>
__global__ void __launch_bounds__(threads_per_block) convert_kernel(convert_params p, const In* in, Out* out) {
  if constexpr (Fixed.exp_bits != 0) p.to = Fixed;
  if constexpr (std::is_same_v<In, std::uint32_t>) p.from = source_type::f32;
  constexpr bool shared_bits = Path == convert_path::core_random && Width != 0;
  __shared__ philox_counter philox[shared_bits ? tile_blocks(Width) : 1];
  static_assert(!shared_bits || Width == 16 || Width == 32);
  const int width = Path == convert_path::core_random ? array_random_width(p.r) : 16;
  const bool aligned = detail::aligned_for_vectors(in, sizeof(In)) && detail::aligned_for_vectors(out, sizeof(Out));
  const std::size_t tiles = (p.n + tile - 1) / tile;
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * tile;
    std::uint64_t first_block = 0;
    if constexpr (shared_bits) {
      first_block = keystream_block(p.sr.first_index + base, Width);
      for (unsigned b = threadIdx.x; b < tile_blocks(Width); b += threads_per_block)
        philox[b] = philox_block(p.sr.seed, p.sr.stream, first_block + b);
      __syncthreads();
    }
    const std::size_t i0 = base + threadIdx.x * per_thread;
    if (i0 < p.n) {
      const std::size_t count = p.n - i0 < per_thread ? p.n - i0 : per_thread;
      const bool vector = aligned && count == per_thread;
      std::uint32_t x[8], y[8];
      detail::load8(in + i0, vector, count, x);
      // Unrolled where the body is small (a fixed format, or the hardware instruction); a runtime
      // format keeps one copy of the core's code (eight would multiply the compile time).
#pragma unroll(Fixed.exp_bits != 0 || Path == convert_path::hardware ? 8 : 1)
      for (int j = 0; j < 8; ++j) {
        std::uint32_t code;
        if constexpr (Path == convert_path::hardware) {
          code = is_nan_bits(x[j]) ? convert_element(p.from, x[j], p.to, p.r, 0)
                                   : hardware_convert(p.hw, std::bit_cast<float>(x[j]), p.unavailable);
        } else if constexpr (Path == convert_path::core) {
          code = convert_element(p.from, x[j], p.to, p.r, 0);
        } else {
          const std::uint64_t index = p.sr.first_index + i0 + static_cast<std::uint64_t>(j);
          const std::uint64_t random =
              shared_bits ? keystream_piece(philox[keystream_block(index, Width) - first_block], index, Width)
                          : keystream_bits(p.sr.seed, p.sr.stream, index, width);
          code = convert_element(p.from, x[j], p.to, p.r, random);
        }
        y[j] = p.values ? std::bit_cast<std::uint32_t>(code_to_float(p.to, code)) : code;
      }
      detail::store8(out + i0, vector, count, y);
    }
    if constexpr (shared_bits) __syncthreads();  // the next tile overwrites the Philox blocks
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

template <class In, class Out, convert_path Path, int Width, format Fixed = runtime>
expected<void> queue(const convert_params& p, const void* in, void* out, cudaStream_t stream) {
  const std::size_t tiles = (p.n + tile - 1) / tile;
  const auto blocks = static_cast<unsigned>(tiles < (1u << 30) ? tiles : (1u << 30));
  convert_kernel<In, Out, Path, Width, Fixed>
      <<<blocks, threads_per_block, 0, stream>>>(p, static_cast<const In*>(in), static_cast<Out*>(out));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return detail::cuda_error(e, "convert_kernel");
  return {};
}

// binary32 codes into fixed_targets[I] or a later one, as their own instantiations (codes, not
// values); false when p.to is none of them.
template <std::size_t I = 0>
bool queue_fixed(const convert_params& p, const void* in, void* out, cudaStream_t stream, expected<void>& result) {
  if constexpr (I == std::size(fixed_targets)) {
    return false;
  } else {
    constexpr format f = fixed_targets[I];
    if (p.to != f) return queue_fixed<I + 1>(p, in, out, stream, result);
    using Out = std::conditional_t<width(f) <= 8, std::uint8_t, std::uint16_t>;
    const int width = array_random_width(p.r);
    if (!is_stochastic(p.r.mode))
      result = queue<std::uint32_t, Out, convert_path::core, 0, f>(p, in, out, stream);
    else if (width == 16)
      result = queue<std::uint32_t, Out, convert_path::core_random, 16, f>(p, in, out, stream);
    else if (width == 32)
      result = queue<std::uint32_t, Out, convert_path::core_random, 32, f>(p, in, out, stream);
    else
      return false;
    return true;
  }
}

// One instantiation per path actually taken: binary32 sources (the common case) get the fixed
// formats, shared keystream blocks at widths 16 and 32, and the hardware instructions (FP8 and
// 16-bit codes only); 16-bit sources and sr-exact draw their bits element by element.
template <class In, class Out>
expected<void> launch(const convert_params& p, const void* in, void* out, cudaStream_t stream) {
  if (p.n == 0) return {};
  constexpr bool f32 = std::is_same_v<In, std::uint32_t>;
  const bool stochastic = is_stochastic(p.r.mode);
  const int width = array_random_width(p.r);
  // Shared Philox blocks need every tile to start a keystream group (16 * 128 / width elements).
  const bool shared = stochastic && width <= 32 && p.sr.first_index % (16 * static_cast<std::uint64_t>(128 / width)) == 0;
  if constexpr (f32 && !std::is_same_v<Out, std::uint32_t>) {
    if (p.hw != hardware_cvt::none) return queue<In, Out, convert_path::hardware, 0>(p, in, out, stream);
    expected<void> result;
    if (!p.values && (shared || !stochastic) && queue_fixed(p, in, out, stream, result)) return result;
  }
  if (!stochastic) return queue<In, Out, convert_path::core, 0>(p, in, out, stream);
  if constexpr (f32) {
    if (shared && width == 16) return queue<In, Out, convert_path::core_random, 16>(p, in, out, stream);
    if (shared) return queue<In, Out, convert_path::core_random, 32>(p, in, out, stream);
  }
  return queue<In, Out, convert_path::core_random, 0>(p, in, out, stream);
}

template <class In>
expected<void> launch_to(const convert_params& p, const void* in, void* out, cudaStream_t stream) {
  switch (p.values ? 4 : code_bytes(p.to)) {
    case 1: return launch<In, std::uint8_t>(p, in, out, stream);
    case 2: return launch<In, std::uint16_t>(p, in, out, stream);
    default: return launch<In, std::uint32_t>(p, in, out, stream);
  }
}

}  // namespace

namespace detail {

expected<void> launch_convert(source_type from, const void* in, void* out, std::size_t n, const convert_options& o,
                              hardware_cvt hw, bool values, void* stream) {
  // The instruction has been proven on this device (convert_api.cpp), so every pass that runs
  // it has it: no flag to read back.
  const convert_params p{from, o.to, o.r, o.sr, hw, values, n, nullptr};
  const auto s = static_cast<cudaStream_t>(stream);
  if (from == source_type::f32) return launch_to<std::uint32_t>(p, in, out, s);
  return launch_to<std::uint16_t>(p, in, out, s);
}

expected<std::vector<std::uint32_t>> launch_convert_copies(source_type from, std::span<const std::uint32_t> in,
                                                           const convert_options& o, hardware_cvt hw, bool values) {
  const std::size_t out_bytes = values ? 4 : code_bytes(o.to);
  std::vector<std::uint8_t> host_in(in.size() * (from == source_type::f32 ? 4 : 2));
  for (std::size_t i = 0; i < in.size(); ++i)  // little-endian, as the device reads it
    for (std::size_t b = 0; b < host_in.size() / in.size(); ++b)
      host_in[i * (host_in.size() / in.size()) + b] = static_cast<std::uint8_t>(in[i] >> (8 * b));
  auto d_in = device_buffer<std::uint8_t>::upload(host_in);
  if (!d_in) return error{d_in.message()};
  auto d_out = device_buffer<std::uint8_t>::allocate(in.size() * out_bytes);
  if (!d_out) return error{d_out.message()};
  FPEMU_CUDA_TRY(launch_convert(from, d_in->get(), d_out->get(), in.size(), o, hw, values, nullptr));
  FPEMU_CUDA_TRY(check_launch("convert_kernel"));
  auto bytes = d_out->download();
  if (!bytes) return error{bytes.message()};
  std::vector<std::uint32_t> out(in.size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t b = 0; b < out_bytes; ++b) out[i] |= std::uint32_t{(*bytes)[i * out_bytes + b]} << (8 * b);
  return out;
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
