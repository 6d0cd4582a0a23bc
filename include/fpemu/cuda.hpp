// Host API of fpemu's CUDA kernels (cuda/): bulk conversion, fused optimizer steps, gradient
// accumulation, tensor-core GEMMs (the promoted FP8 GEMM among them) and an emulated GEMM on
// CUDA cores.
//
// Every kernel rounds through the same core headers as the emulator, so each result equals the
// emulator's bit for bit; `fpemu gpu-check` checks that on the current GPU. Most functions take
// host vectors, copy them to the device, run the kernel and copy the result back (for checks and
// experiments); the *_on_device forms work on buffers already on the GPU, queued on a stream.
//
// Nothing here aborts. Every function returns an error naming the reason when fpemu was built
// without CUDA (no nvcc at configure time), when no device is present, when the device lacks
// the instruction asked for, or when an argument is out of range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/block_fma.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::cuda {

// ---- Build and device ---------------------------------------------------------------------

bool built_with_cuda();
// The targets the kernels were compiled for, e.g. "sm_80 sm_90 sm_90a"; empty without CUDA.
std::string compiled_targets();

struct device_info {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;  // as CUDA reports them (13000 = 13.0)
};
// The current device, or an error: "fpemu was built without CUDA ..." or "no CUDA device: ...".
expected<device_info> current_device();

// ---- Bulk conversion ----------------------------------------------------------------------

enum class source_type : std::uint8_t { f32, bf16, fp16 };

struct convert_options {
  format to = formats::bf16;
  rounding r{};
  sr_stream sr{};          // stochastic rounding: element i takes random_bits(seed, stream, first_index + i)
  bool hardware = true;    // use a hardware conversion instruction where one gives the same bits
};

// The hardware instruction convert_codes() uses for these options on a device of compute
// capability major.minor, or "" when the core computes every element. NaN inputs always take the
// core (the instructions return one canonical NaN; the core keeps the sign).
std::string hardware_instruction(source_type from, const convert_options& o, int major, int minor);

// in: binary32 bit patterns (f32) or bf16/fp16 codes (in the low 16 bits). Returns codes of o.to.
expected<std::vector<std::uint32_t>> convert_codes(source_type from, std::span<const std::uint32_t> in,
                                                   const convert_options& o);
// The round-in-place form: each float replaced by its rounded value, for formats whose values are
// all binary32 values (an error names any other format).
expected<std::vector<float>> round_values(std::span<const float> in, const convert_options& o);

// Bytes per code in device buffers: 1 for formats of at most 8 bits, 2 for at most 16, else 4
// (the storage widths of ml_dtypes and PyTorch).
std::size_t code_bytes(const format& f);

// The conversion on buffers already on the GPU, for pipelines and timing: `in` holds n binary32
// values (f32) or n 16-bit codes (bf16, fp16), `out` receives n codes of o.to at code_bytes(o.to)
// each, the same bits convert_codes() returns. The kernel is queued on `stream` (a cudaStream_t;
// null is the default stream) and not waited for; nothing is copied. The first call for a
// hardware instruction runs its exhaustive proof (check_hardware_conversion) and waits for it.
expected<void> convert_on_device(source_type from, const void* in, void* out, std::size_t n, const convert_options& o,
                                 void* stream = nullptr);

// Every one of the 2^32 binary32 inputs through the hardware instruction and through the core on
// the device, compared bitwise. An error when no instruction applies to (to, r) on this device.
struct fast_path_report {
  std::string instruction;
  std::uint64_t cases = 0, mismatches = 0;
  std::uint32_t first_input = 0, hardware_code = 0, core_code = 0;  // the first mismatch
};
expected<fast_path_report> check_hardware_conversion(const format& to, const rounding& r);

// ---- Fused optimizer step (one tensor) ----------------------------------------------------

enum class optimizer : std::uint8_t { sgd, adamw };
enum class weight_update : std::uint8_t {
  nearest,     // theta <- RN(theta + inc)
  kahan,       // bf16 weights with a compensation buffer in the weights' format (optimi's form)
  stochastic,  // theta <- SR_k(theta + inc), bits keyed by (seed, tensor, (step - 1) * n + i)
  master,      // fp32 master weights and states; the low-precision copy refreshed with RN
};

// Scalars as training::hyperparameters holds them (double), cast to binary32 on the host exactly
// as the emulator's optimizer casts them.
struct optimizer_config {
  optimizer kind = optimizer::adamw;
  weight_update update = weight_update::kahan;
  format weights = formats::bf16;  // stored weights (under master: the model copy)
  format states = formats::bf16;   // momentum / exp_avg / exp_avg_sq (fp32 under master)
  format grads = formats::bf16;
  int sr_bits = 16;
  double lr = 1e-3, weight_decay = 0, momentum = 0, dampening = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool nesterov = false;
  std::uint64_t seed = 0;
  std::uint32_t tensor = 0;  // the stochastic-rounding stream
};

// One tensor's buffers: codes of their formats (binary32 bit patterns for fp32 buffers). Only
// the buffers the configuration uses are read and written; the others stay empty.
struct optimizer_buffers {
  std::vector<std::uint32_t> weights;       // the stored weights (under master: the model copy)
  std::vector<std::uint32_t> master;        // master only
  std::vector<std::uint32_t> state0, state1;  // sgd: momentum (when momentum != 0); adamw: m, v
  std::vector<std::uint32_t> compensation;  // kahan only
};

// Step number `step` (1-based, as the emulator counts) with gradient codes `grads`; updates `b`.
// Errors: sizes that disagree, a buffer a configuration needs but that is empty, formats that are
// not 16-bit storage formats (fp32 for master/states under master), bad hyper-parameters.
expected<void> optimizer_step(const optimizer_config& c, long step, std::span<const std::uint32_t> grads,
                              optimizer_buffers& b);

// The step on buffers already on the GPU, for pipelines and timing; queued on `stream` (a
// cudaStream_t, null: the default stream) and not waited for. Element types as in the kernel:
// uint16 codes for the 16-bit formats, binary32 (uint32) for fp32 buffers. The buffers the
// configuration uses must be given, the others null; their codes are not checked (they stay on
// the device).
struct optimizer_device_buffers {
  std::size_t n = 0;
  const void* grads = nullptr;
  void* weights = nullptr;
  void* master = nullptr;
  void* state0 = nullptr;
  void* state1 = nullptr;
  void* compensation = nullptr;
};
expected<void> optimizer_step_on_device(const optimizer_config& c, long step, const optimizer_device_buffers& b,
                                        void* stream = nullptr);

// ---- Gradient accumulation ----------------------------------------------------------------

// One cycle of the gradient-accumulation-kernel-v1 contract (v1.0.0, after Goyal et al., "Accurate,
// Large Minibatch SGD", 2017) on the device: zero, N micro-batches (each g / N added in binary32 into an fp32 buffer, optionally Kahan-compensated), then
// global-norm clipping. micro_batches[i][t] is tensor t of micro-batch i. Returns the buffer
// (binary32 bit patterns per tensor), the norm before clipping and the scale applied (1 when none).
struct accumulation_result {
  std::vector<std::vector<std::uint32_t>> buffer;
  double norm = 0;
  float scale = 1;
};
expected<accumulation_result> accumulate_gradients(
    const std::vector<std::vector<std::vector<float>>>& micro_batches, double clip_norm, bool kahan);

// ---- GEMMs --------------------------------------------------------------------------------

enum class tensor_core_instruction : std::uint8_t {
  mma_sync,  // sm_80+: m16n8k16 (fp16, bf16), m16n8k8 (tf32)
  wgmma,     // sm_90a: m64n64k16 (fp16, bf16), m64n64k32 (e4m3fn, e5m2)
};

// D (M x N, binary32 bit patterns) = A (M x K codes) * B (K x N codes), row-major, accumulated by
// the tensor cores in fp32. With promote_every > 0 (a multiple of the instruction's K), every
// promote_every products the tensor-core partial is added into an fp32 register with one fused
// multiply-add by the group's scale a_scale[i][g] * b_scale[g][j] (binary32 product, RNE), and
// the tensor-core chain restarts at zero (DeepSeek-V3). Scales: M x G and G x N binary32 values,
// G = K / promote_every; empty means 1.
struct tensor_core_gemm_args {
  tensor_core_instruction instruction = tensor_core_instruction::mma_sync;
  format a = formats::fp16, b = formats::fp16;
  int m = 0, n = 0, k = 0;
  std::vector<std::uint32_t> a_codes, b_codes;
  int promote_every = 0;
  std::vector<float> a_scale, b_scale;
};
// Tile multiples: mma_sync M % 16, N % 8, K % 16 (tf32: K % 8); wgmma M % 64, N % 64, K % 16
// (fp8: K % 32). Errors name the shape or a format the instruction does not take.
expected<std::vector<std::uint32_t>> tensor_core_gemm(const tensor_core_gemm_args& g);

// One instruction, as the published methodology measures it: every input zero except row 0 of
// A (a), column 0 of B (b) and C[0][0] (c, binary32); returns D[0][0] as binary32 bits. For
// wgmma fp8 C must be +0 (the instruction starts from a zero accumulator: scale-d = 0).
expected<std::uint32_t> single_instruction(tensor_core_instruction ins, const format& fa, const format& fb,
                                           std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                           std::uint32_t c);

// The FP8 GEMM of DeepSeek-V3 (arXiv 2412.19437, 3.3.2) at speed: the same arithmetic as
// tensor_core_gemm(wgmma, promote_every = 128) with fine-grained scales, bit for bit. For each
// group g of 128 products the tensor cores accumulate a partial P from +0 (four wgmma k32
// instructions), then R = fma(P, RNE(a_scale[i][g] * b_scale[j / 128][g]), R) in binary32. The
// kernel copies tiles with the bulk tensor copy engine into a six-stage shared-memory pipeline,
// one warpgroup copying and two accumulating 128 x 128 (or 128 x 64) tiles (sm_90a, so compute
// capability 9.0 only).
// A: M x K codes, row-major. B is given transposed, N x K (row j holds column j of B: the
// K-major layout the FP8 tensor cores and cuBLASLt read). a_scale: M x G, b_scale: (N / 128) x G
// (G = K / 128), row-major, finite and positive; empty (null on the device) means all 1. M, N
// and K are multiples of 128. D: M x N binary32, row-major.
struct fp8_gemm_args {
  format a = formats::e4m3fn, b = formats::e4m3fn;  // each e4m3fn or e5m2
  int m = 0, n = 0, k = 0;
  std::vector<std::uint32_t> a_codes, bt_codes;
  std::vector<float> a_scale, b_scale;
};
expected<std::vector<std::uint32_t>> promoted_fp8_gemm(const fp8_gemm_args& g);

// The same on buffers already on the GPU (codes one byte each), queued on `stream` and not
// waited for.
struct fp8_gemm_device_args {
  format a = formats::e4m3fn, b = formats::e4m3fn;
  int m = 0, n = 0, k = 0;
  const void* a_codes = nullptr;
  const void* bt_codes = nullptr;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  float* d = nullptr;
};
expected<void> promoted_fp8_gemm_on_device(const fp8_gemm_device_args& g, void* stream = nullptr);

// D = A * B on CUDA cores through the block-FMA model (block_fma.hpp), for formats the hardware
// lacks (e2m1fn, e3m2fn, user-defined): each output accumulates K in order in blocks of
// model.block_size, each block's rounded result the next block's C, starting from +0; D holds
// codes of model.acc.
expected<std::vector<std::uint32_t>> emulated_gemm(const block_fma_model& model, const format& fa,
                                                   const format& fb, int m, int n, int k,
                                                   std::span<const std::uint32_t> a, std::span<const std::uint32_t> b);

}  // namespace fpemu::cuda
