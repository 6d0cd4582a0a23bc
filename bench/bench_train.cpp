// Training costs, each against its physical limit measured in the same run:
//  (a) one AdamW step on 2^24 parameters under bf16-kahan and fp32 against memcpy of the bytes
//      the step must read and write (bf16-kahan: reads weights, compensation, gradient, m, v at
//      2 bytes each and writes weights, compensation, m, v: 18 bytes per parameter; fp32 reads
//      weights, gradient, m, v and writes weights, m, v: 28 bytes). bytes_per_second is that
//      byte count over the time, for the step and for memcpy alike, so the ratio is direct;
//  (b) one epoch of the Fashion-MNIST MLP (784-256-10, batch 128, SGD) under fp32 and under
//      bf16-kahan: the target is bf16-kahan at most 2x the fp32 epoch.
// Single-threaded optimizer and memcpy; the MLP's matmuls use both cores.
//
//   ./dev bench
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "analysis/training/datasets.hpp"
#include "analysis/training/optimizer.hpp"
#include "analysis/training/train.hpp"
#include "fpemu/random.hpp"

namespace {

using namespace fpemu::training;

constexpr std::size_t kParams = std::size_t{1} << 24;

std::size_t step_bytes(const precision_policy& p) {
  const std::size_t w = p.weights.frac_bits <= 10 ? 2 : 4;  // bf16, fp16: 2 bytes; fp32: 4
  const bool kahan = p.rule == update_rule::kahan;
  return kParams * (w * (kahan ? 9 : 7));  // reads (w, [k], g, m, v), writes (w, [k], m, v)
}

void memcpy_bytes(benchmark::State& state, const char* policy) {
  const std::size_t bytes = step_bytes(*parse_policy(policy));
  std::vector<char> src(bytes / 2, 1), dst(bytes / 2);  // copying n bytes reads n and writes n
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void adamw_step(benchmark::State& state, const char* policy_name) {
  const precision_policy p = *parse_policy(policy_name);
  std::vector<float> init(kParams), g(kParams);
  for (std::size_t i = 0; i < kParams; ++i) {
    init[i] = static_cast<float>(fpemu::random_bits(1, 0, i) >> 40) * 0x1p-24f - 0.5f;
    g[i] = static_cast<float>(fpemu::random_bits(1, 1, i) >> 40) * 0x1p-30f - 0x1p-7f;
  }
  hyperparameters h;
  h.weight_decay = 0.01;
  auto o = optimizer::create(optimizer_kind::adamw, h, p, {init}, 1);
  std::vector<stored_tensor> grads;
  grads.emplace_back(p.grads, kParams);
  grads[0].store(0, g);
  for (auto _ : state) o->step(grads);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * step_bytes(p)));
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

BENCHMARK_CAPTURE(memcpy_bytes, bf16_kahan_adamw_bytes, "bf16-kahan")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(adamw_step, bf16_kahan, "bf16-kahan")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(memcpy_bytes, fp32_adamw_bytes, "fp32")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(adamw_step, fp32, "fp32")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mlp_epoch, fp32, "fp32")->Unit(benchmark::kSecond)->Iterations(2);
BENCHMARK_CAPTURE(mlp_epoch, bf16_kahan, "bf16-kahan")->Unit(benchmark::kSecond)->Iterations(2);

BENCHMARK_MAIN();
