// The CUDA kernels against the device's limits, measured in the same run on the same GPU:
//
//   convert/<fmt>_<mode>     binary32 -> codes of every 8- and 16-bit format, every mode, 2^27
//                            elements, against a device-to-device copy moving the same bytes
//   adamw/<policy>           the fused AdamW step on 2^27 parameters, against a copy moving the
//                            bytes the step must move (each tensor it uses read once, each tensor
//                            it updates written once)
//   fp8_gemm/M/N/K           promoted_fp8_gemm (e4m3 x e4m3, promotion every 128, tile scales)
//                            against cuBLASLt's FP8 GEMM of the same shape, fp32 output, with its
//                            default accumulation (which promotes too; fp8_gemm_vs_fast_accum: with
//                            CUBLASLT_MATMUL_DESC_FAST_ACCUM)
//
// Each iteration times the reference and the kernel back to back with CUDA events; the counters
// are means over the iterations: the kernel's rate, the reference's, and `ratio` = reference
// time / kernel time (1: at the limit). Before timing, each GEMM shape checks 16 rows x 128
// columns of its output against the emulator (analysis::gemm, h100-e4m3 preset with promotion)
// bit for bit, and fails on any difference.
//
// scripts/gpu_session.sh runs it and writes the table (scripts/gpu_bench_report.py); without a
// GPU it exits with 77.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_cuda: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(const fpemu::expected<void>& r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "bench_cuda: %s: %s\n", what, r.message().c_str());
    std::exit(1);
  }
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_cuda: %s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

struct device_memory {
  void* p = nullptr;
  explicit device_memory(std::size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~device_memory() { cudaFree(p); }
  device_memory(device_memory&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

// Milliseconds of `reps` back-to-back runs of f on the default stream.
template <class F>
double time_ms(int reps, F&& f) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; i < reps; ++i) f();
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  check(cudaGetLastError(), "kernel");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}

// One iteration: the kernel and the reference, each warm; the kernel's time is the iteration's.
template <class Kernel, class Reference>
void time_pair(benchmark::State& state, int reps, Kernel&& kernel, Reference&& reference, double& kernel_ms,
               double& reference_ms) {
  kernel();
  reference();
  check(cudaDeviceSynchronize(), "warm-up");
  kernel_ms = reference_ms = 0;
  for (auto _ : state) {
    const double r = time_ms(reps, reference), k = time_ms(reps, kernel);
    reference_ms += r;
    kernel_ms += k;
    state.SetIterationTime(k / 1000);
  }
  kernel_ms /= static_cast<double>(state.iterations());
  reference_ms /= static_cast<double>(state.iterations());
}

// Fills a device buffer with the bytes of `host`.
template <class T>
void upload(const device_memory& d, const std::vector<T>& host) {
  check(cudaMemcpy(d.p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
}

// ---- Conversions ----------------------------------------------------------------------------

constexpr std::size_t kElements = std::size_t{1} << 27;

const device_memory& normal_floats() {
  static const device_memory d = [] {
    device_memory m(kElements * 4);
    std::vector<float> x(kElements);
    std::mt19937 rng(1);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (float& f : x) f = n(rng);
    upload(m, x);
    return m;
  }();
  return d;
}

void convert(benchmark::State& state, fpemu::format to, fpemu::rounding r) {
  const device_memory& in = normal_floats();
  const std::size_t out_bytes = kElements * fpemu::cuda::code_bytes(to), traffic = kElements * 4 + out_bytes;
  device_memory out(out_bytes), copy_out(traffic / 2);
  fpemu::cuda::convert_options o{to, r, {1, 0, 0}, true};
  double k = 0, c = 0;
  time_pair(
      state, 10, [&] { check(fpemu::cuda::convert_on_device(fpemu::cuda::source_type::f32, in.p, out.p, kElements, o), "convert"); },
      [&] { check(cudaMemcpyAsync(copy_out.p, in.p, traffic / 2, cudaMemcpyDeviceToDevice), "copy"); }, k, c);
  state.counters["GB/s"] = static_cast<double>(traffic) / k / 1e6;
  state.counters["copy_GB/s"] = static_cast<double>(traffic) / c / 1e6;
  state.counters["ratio"] = c / k;
}

// ---- AdamW ----------------------------------------------------------------------------------

void adamw(benchmark::State& state, const char* policy) {
  using fpemu::cuda::weight_update;
  const std::string p = policy;
  fpemu::cuda::optimizer_config c;
  c.kind = fpemu::cuda::optimizer::adamw;
  c.update = p == "bf16-kahan" ? weight_update::kahan : p == "bf16-sr16" ? weight_update::stochastic
             : p == "mixed"    ? weight_update::master : weight_update::nearest;
  const bool master = c.update == weight_update::master;
  c.states = master ? fpemu::formats::fp32 : fpemu::formats::bf16;
  c.grads = fpemu::formats::bf16;
  c.weight_decay = 0.01;
  const std::size_t n = kElements, state_bytes = master ? 4 : 2;
  // Random codes of small normal values: weights near 1, states and gradients near 1e-3.
  std::vector<std::uint16_t> small(n), ones(n);
  std::vector<std::uint32_t> wide(n);
  std::mt19937_64 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> pool(4096);  // N(0, 1) draws, picked at random
  for (float& v : pool) v = normal(rng);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng();
    const float a = pool[r % 4096], b = pool[(r >> 12) % 4096], c = pool[(r >> 24) % 4096];
    small[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(1e-3f * a) >> 16);
    ones[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(1.0f + 0.1f * b) >> 16);
    wide[i] = std::bit_cast<std::uint32_t>(std::abs(1e-6f * c));
  }
  device_memory g(2 * n), w(2 * n), m(master ? 4 * n : 1), s0(state_bytes * n), s1(state_bytes * n), k(2 * n);
  upload(g, small);
  upload(w, ones);
  upload(k, small);
  if (master) {
    upload(m, wide);
    upload(s0, wide);
    upload(s1, wide);
  } else {
    upload(s0, small);
    upload(s1, ones);  // the second moment is positive
  }
  fpemu::cuda::optimizer_device_buffers b;
  b.n = n;
  b.grads = g.p;
  b.weights = w.p;
  b.master = master ? m.p : nullptr;
  b.state0 = s0.p;
  b.state1 = s1.p;
  b.compensation = c.update == weight_update::kahan ? k.p : nullptr;
  // Bytes the step must move: gradients read; weights (the model copy written only, under
  // master), master weights, both states and the compensation read and written.
  const std::size_t traffic = n * (2 + (master ? 2 + 2 * 4 : 2 * 2) + 2 * 2 * state_bytes +
                                   (c.update == weight_update::kahan ? 2 * 2 : 0));
  device_memory copy_in(traffic / 2), copy_out(traffic / 2);
  long step = 1;
  double kt = 0, ct = 0;
  time_pair(
      state, 10, [&] { check(fpemu::cuda::optimizer_step_on_device(c, step++, b), "adamw"); },
      [&] { check(cudaMemcpyAsync(copy_out.p, copy_in.p, traffic / 2, cudaMemcpyDeviceToDevice), "copy"); }, kt, ct);
  state.counters["GB/s"] = static_cast<double>(traffic) / kt / 1e6;
  state.counters["copy_GB/s"] = static_cast<double>(traffic) / ct / 1e6;
  state.counters["ratio"] = ct / kt;
}

// ---- FP8 GEMM -------------------------------------------------------------------------------

// cuBLASLt's FP8 GEMM of the same product, per-tensor scales of 1. cuBLASLt is column-major and
// takes FP8 only as op(X) = X^T, op(Y) = Y ("TN"). Our row-major M x N D is a column-major N x M
// matrix, D^T = Bt * A^T: X = our Bt (stored column-major as K x N), Y = our A (K x M).
struct cublas_fp8 {
  cublasLtHandle_t handle{};
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t la{}, lb{}, ld{};
  cublasLtMatmulAlgo_t algo{};
  device_memory workspace{std::size_t{64} << 20};
  float alpha = 1, beta = 0;

  cublas_fp8(int m, int n, int k, bool fast_accum) {
    check(cublasLtCreate(&handle), "cublasLtCreate");
    check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t), "TRANSA");
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn), "TRANSB");
    const std::int8_t fast = fast_accum ? 1 : 0;
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM");
    check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, n, k), "layout A");
    check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, m, k), "layout B");
    check(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, n, m, n), "layout D");
    cublasLtMatmulPreference_t pref;
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    const std::size_t ws = std::size_t{64} << 20;
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "ws");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(handle, op, la, lb, ld, ld, pref, 1, &result, &found), "heuristic");
    if (found == 0) {
      std::fprintf(stderr, "bench_cuda: cuBLASLt has no FP8 algorithm for %dx%dx%d\n", m, n, k);
      std::exit(1);
    }
    algo = result.algo;
    cublasLtMatmulPreferenceDestroy(pref);
  }
  void run(const void* a, const void* bt, float* d) {
    check(cublasLtMatmul(handle, op, &alpha, bt, la, a, lb, &beta, d, ld, d, ld, &algo, workspace.p, std::size_t{64} << 20,
                         nullptr),
          "cublasLtMatmul");
  }
  ~cublas_fp8() {
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(handle);
  }
};

void fp8_gemm(benchmark::State& state, bool fast_accum) {
  const int m = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1)), k = static_cast<int>(state.range(2));
  const int groups = k / 128;
  const fpemu::format e4m3 = fpemu::formats::e4m3fn;
  std::mt19937_64 rng(3);
  // N(0, 1) rounded to e4m3: 4096 draws, then picked at random (filling 10^8 codes draw by draw
  // would take longer than the benchmark).
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<std::uint8_t> pool(4096);
  for (auto& v : pool)
    v = static_cast<std::uint8_t>(
        fpemu::from(e4m3, normal(rng), {fpemu::round_mode::nearest_even, fpemu::overflow_policy::saturate}).code);
  auto codes = [&](std::size_t count) {
    std::vector<std::uint8_t> c(count);
    for (auto& v : c) v = pool[rng() % pool.size()];
    return c;
  };
  const std::vector<std::uint8_t> a = codes(static_cast<std::size_t>(m) * k), bt = codes(static_cast<std::size_t>(n) * k);
  std::vector<float> sa(static_cast<std::size_t>(m) * groups), sb(static_cast<std::size_t>(n / 128) * groups);
  for (float& s : sa) s = std::ldexp(1.0f, static_cast<int>(rng() % 5) - 2);
  for (float& s : sb) s = 1.5f + static_cast<float>(rng() % 4);
  device_memory d_a(a.size()), d_bt(bt.size()), d_sa(sa.size() * 4), d_sb(sb.size() * 4);
  device_memory d_d(static_cast<std::size_t>(m) * n * 4), d_ref(static_cast<std::size_t>(m) * n * 4);
  upload(d_a, a);
  upload(d_bt, bt);
  upload(d_sa, sa);
  upload(d_sb, sb);
  fpemu::cuda::fp8_gemm_device_args g{e4m3, e4m3, m, n, k, d_a.p, d_bt.p, d_sa.as<float>(), d_sb.as<float>(), d_d.as<float>()};
  check(fpemu::cuda::promoted_fp8_gemm_on_device(g), "promoted_fp8_gemm_on_device");
  check(cudaDeviceSynchronize(), "promoted_fp8_gemm");

  // Bit-identity on a sample: 16 rows spread over A against the 128 columns of B's middle
  // block (one B scale per group), through the emulator.
  constexpr int sample = 16;
  const int c0 = n / 256 * 128;
  fpemu::analysis::scaled_matrix sa_m, sb_m;
  sa_m.rows = sample;
  sb_m.rows = sa_m.cols = k;
  sb_m.cols = 128;
  sa_m.fmt = sb_m.fmt = e4m3;
  sa_m.scale_kind = sb_m.scale_kind = fpemu::analysis::scaling::tile_1x128;
  std::vector<int> rows(sample);
  for (int i = 0; i < sample; ++i) {
    rows[i] = (i * (m / sample) + i % 7) % m;
    sa_m.codes.insert(sa_m.codes.end(), a.begin() + static_cast<long>(rows[i]) * k, a.begin() + static_cast<long>(rows[i] + 1) * k);
    for (int gi = 0; gi < groups; ++gi)
      sa_m.scales.push_back(std::bit_cast<std::uint32_t>(sa[static_cast<std::size_t>(rows[i]) * groups + gi]));
  }
  for (int kk = 0; kk < k; ++kk)
    for (int j = 0; j < 128; ++j) sb_m.codes.push_back(bt[static_cast<std::size_t>(c0 + j) * k + kk]);
  for (int gi = 0; gi < groups; ++gi)
    sb_m.scales.push_back(std::bit_cast<std::uint32_t>(sb[static_cast<std::size_t>(c0 / 128) * groups + gi]));
  fpemu::analysis::gemm_options go;
  go.acc = fpemu::find_preset("h100-e4m3").value().model;
  go.acc.promote_every = 128;
  const auto want = fpemu::analysis::gemm(sa_m, sb_m, {}, go).value();
  std::vector<float> got(static_cast<std::size_t>(m) * n);
  check(cudaMemcpy(got.data(), d_d.p, got.size() * 4, cudaMemcpyDeviceToHost), "download D");
  int mismatches = 0;
  for (int i = 0; i < sample; ++i)
    for (int j = 0; j < 128; ++j)
      if (want[static_cast<std::size_t>(i) * 128 + j] !=
          std::bit_cast<std::uint32_t>(got[static_cast<std::size_t>(rows[i]) * n + c0 + j]))
        ++mismatches;
  if (mismatches != 0) {
    state.SkipWithError(("promoted_fp8_gemm differs from the emulator in " + std::to_string(mismatches) +
                         " of 2048 sampled outputs").c_str());
    return;
  }

  cublas_fp8 cublas(m, n, k, fast_accum);
  double kt = 0, ct = 0;
  time_pair(
      state, 5, [&] { check(fpemu::cuda::promoted_fp8_gemm_on_device(g), "promoted_fp8_gemm_on_device"); },
      [&] { cublas.run(d_a.p, d_bt.p, d_ref.as<float>()); }, kt, ct);
  const double flops = 2.0 * m * n * static_cast<double>(k);
  state.counters["TFLOP/s"] = flops / kt / 1e9;
  state.counters["cublas_TFLOP/s"] = flops / ct / 1e9;
  state.counters["ratio"] = ct / kt;
  state.counters["sample_mismatches"] = mismatches;
}

void register_all() {
  using fpemu::round_mode, fpemu::overflow_policy;
  const char* formats[] = {"bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn", "e8m0fnu"};
  const std::pair<const char*, fpemu::rounding> modes[] = {
      {"rne", {round_mode::nearest_even, overflow_policy::ieee}},
      {"rne_sat", {round_mode::nearest_even, overflow_policy::saturate}},
      {"rna", {round_mode::nearest_away, overflow_policy::ieee}},
      {"rz", {round_mode::toward_zero, overflow_policy::ieee}},
      {"ru", {round_mode::toward_positive, overflow_policy::ieee}},
      {"rd", {round_mode::toward_negative, overflow_policy::ieee}},
      {"rto", {round_mode::to_odd, overflow_policy::ieee}},
      {"sr16", {round_mode::stochastic, overflow_policy::ieee, 16}},
      {"sr_exact", {round_mode::stochastic_exact, overflow_policy::ieee}}};
  for (const char* name : formats) {
    const fpemu::format f = fpemu::parse_format(name).value();
    for (const auto& [mode, r] : modes) {
      if (fpemu::check(f, r)) continue;  // not a valid rounding for this format
      benchmark::RegisterBenchmark((std::string("convert/") + name + "_" + mode).c_str(),
                                   [f, r = r](benchmark::State& s) { convert(s, f, r); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.05);
    }
  }
  for (const char* policy : {"bf16", "bf16-kahan", "bf16-sr16", "mixed"})
    benchmark::RegisterBenchmark((std::string("adamw/") + policy).c_str(), [policy](benchmark::State& s) { adamw(s, policy); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.1);
  for (bool fast : {false, true})
    benchmark::RegisterBenchmark(fast ? "fp8_gemm_vs_fast_accum" : "fp8_gemm", [fast](benchmark::State& s) { fp8_gemm(s, fast); })
        ->Args({8192, 8192, 8192})
        ->Args({128, 8192, 8192})
        ->Args({256, 7168, 16384})
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.2);
}

}  // namespace

int main(int argc, char** argv) {
  const auto device = fpemu::cuda::current_device();
  if (!device) {
    std::printf("bench_cuda: skipped: %s\n", device.message().c_str());
    return 77;
  }
  std::printf("bench_cuda on %s (compute capability %d.%d, %d SMs), CUDA driver %d, runtime %d\n", device->name.c_str(),
              device->major, device->minor, device->multiprocessors, device->driver_version, device->runtime_version);
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
