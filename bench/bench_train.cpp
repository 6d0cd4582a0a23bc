// Training costs, each against its physical limit measured in the same run:
//  (a) one optimizer step on 2^24 parameters against memcpy of the bytes the step must read and
//      write: AdamW under bf16-kahan (reads weights, compensation, gradient, m, v at 2 bytes each
//      and writes weights, compensation, m, v: 18 bytes per parameter), fp32 (reads weights,
//      gradient, m, v and writes weights, m, v: 28 bytes) and bf16-sr (14 bytes), and SGD with
//      momentum under bf16-kahan (reads weights, compensation, gradient, buffer and writes
//      weights, compensation, buffer: 14 bytes). bytes_per_second is that byte count over the
//      time, for the step and for memcpy alike; each step also copies its bytes once per
//      iteration, untimed, and reports vs_memcpy = memcpy's time / the step's time over the same
//      iterations (target >= 0.5), which a busy machine disturbs least;
//  (b) one epoch of the Fashion-MNIST MLP (784-256-10, batch 128, SGD) under fp32 and under
//      bf16-kahan: the target is bf16-kahan at most 2x the fp32 epoch.
// Single-threaded optimizer and memcpy; the MLP's matmuls use both cores.
//
//   ./dev bench
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "analysis/training/datasets.hpp"
#include "analysis/training/optimizer.hpp"
#include "analysis/training/train.hpp"
#include "fpemu/random.hpp"

namespace {

using namespace fpemu::training;

constexpr std::size_t kParams = std::size_t{1} << 24;

struct step_case {
  const char* policy;
  optimizer_kind kind;
};

hyperparameters hyper(optimizer_kind k) {
  hyperparameters h;
  h.weight_decay = 0.01;
  if (k == optimizer_kind::sgd) {
    h.lr = 0.01;
    h.momentum = 0.9;
  }
  return h;
}

// Every stored tensor is read once and written once, but the gradient, only read.
std::size_t step_bytes(const step_case& c) {
  const precision_policy p = *parse_policy(c.policy);
  const std::size_t w = p.weights.frac_bits <= 10 ? 2 : 4;  // bf16, fp16: 2 bytes; fp32: 4
  const bool kahan = p.rule == update_rule::kahan;
  const std::size_t states = c.kind == optimizer_kind::sgd ? 1 : 2;
  return kParams * w * (2 * (1 + (kahan ? 1 : 0) + states) + 1);
}

struct copy_buffers {
  std::vector<char> src, dst;
  explicit copy_buffers(std::size_t bytes) : src(bytes / 2, 1), dst(bytes / 2) {}  // copying n bytes reads n, writes n
  void copy() {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
};

void memcpy_bytes(benchmark::State& state, step_case c) {
  const std::size_t bytes = step_bytes(c);
  copy_buffers b(bytes);
  for (auto _ : state) b.copy();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void optimizer_step(benchmark::State& state, step_case c) {
  const precision_policy p = *parse_policy(c.policy);
  std::vector<float> init(kParams), g(kParams);
  for (std::size_t i = 0; i < kParams; ++i) {
    init[i] = static_cast<float>(fpemu::random_bits(1, 0, i) >> 40) * 0x1p-24f - 0.5f;
    g[i] = static_cast<float>(fpemu::random_bits(1, 1, i) >> 40) * 0x1p-30f - 0x1p-7f;
  }
  auto o = optimizer::create(c.kind, hyper(c.kind), p, {init}, 1);
  std::vector<stored_tensor> grads;
  grads.emplace_back(p.grads, kParams);
  grads[0].store(0, g);
  copy_buffers b(step_bytes(c));
  using clock = std::chrono::steady_clock;
  clock::duration stepping{}, copying{};
  for (auto _ : state) {
    const auto t0 = clock::now();
    o->step(grads);
    const auto t1 = clock::now();
    state.PauseTiming();
    const auto t2 = clock::now();
    b.copy();
    copying += clock::now() - t2;
    stepping += t1 - t0;
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * step_bytes(c)));
  state.counters["vs_memcpy"] = std::chrono::duration<double>(copying).count() /
                                std::chrono::duration<double>(stepping).count();
}

void mlp_epoch(benchmark::State& state, const char* policy) {
  const std::string dir = default_fashion_mnist_dir();
  auto train_set = read_fashion_mnist(dir, true);
  auto test_set = read_fashion_mnist(dir, false);
  if (!train_set || !test_set) {
    state.SkipWithError("Fashion-MNIST not found (Debian package dataset-fashion-mnist)");
    return;
  }
  train_options o;
  o.shape = {model_kind::mlp, 784, 256, 10};
  o.hyper.lr = 0.05;
  o.policy = *parse_policy(policy);
  for (auto _ : state) {
    auto r = train(*train_set, *test_set, o);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * train_set->rows);
}

}  // namespace

constexpr step_case kBf16KahanAdamw{"bf16-kahan", optimizer_kind::adamw};
constexpr step_case kFp32Adamw{"fp32", optimizer_kind::adamw};
constexpr step_case kBf16SrAdamw{"bf16-sr", optimizer_kind::adamw};
constexpr step_case kBf16KahanSgd{"bf16-kahan", optimizer_kind::sgd};

BENCHMARK_CAPTURE(memcpy_bytes, bf16_kahan_adamw_bytes, kBf16KahanAdamw)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(optimizer_step, adamw_bf16_kahan, kBf16KahanAdamw)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(memcpy_bytes, fp32_adamw_bytes, kFp32Adamw)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(optimizer_step, adamw_fp32, kFp32Adamw)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(memcpy_bytes, bf16_sr_adamw_bytes, kBf16SrAdamw)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(optimizer_step, adamw_bf16_sr, kBf16SrAdamw)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(memcpy_bytes, bf16_kahan_sgd_bytes, kBf16KahanSgd)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(optimizer_step, sgd_momentum_bf16_kahan, kBf16KahanSgd)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mlp_epoch, fp32, "fp32")->Unit(benchmark::kSecond)->Iterations(2);
BENCHMARK_CAPTURE(mlp_epoch, bf16_kahan, "bf16-kahan")->Unit(benchmark::kSecond)->Iterations(2);

BENCHMARK_MAIN();
