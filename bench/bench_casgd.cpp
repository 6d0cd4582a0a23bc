// One CA-SGD outer iteration (Devarakonda et al. 2026, Algorithm 1) of Recipe C emulated by fpemu
// against Recipe A written in native fp32 arithmetic (float loops, the Gram by Eigen's float GEMM,
// the physical limit here), same sizes, one run. The target: the emulated iteration costs
// at most 10x the native one. Sizes: synthetic logistic data m = 16384, n = 256, b = 32, s = 16,
// one rank (the native code has no ranks) and, for the emulator, also P = 16 simulated ranks.
//
//   ./dev bench     (or build-bench/bench/bench_casgd --benchmark_min_time=2s)
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "analysis/casgd/run.hpp"

namespace {

using namespace fpemu::casgd;

constexpr int kM = 16384, kN = 256, kB = 32, kS = 16;

const glm_data& data() {
  static const glm_data d = synthetic(kM, kN, loss_kind::logistic, 1);
  return d;
}

void emulated(benchmark::State& state, char letter, int P) {
  run_options o;
  o.precision = *recipe(letter);
  o.b = kB;
  o.s = kS;
  o.P = P;
  o.eta = 0.5;
  o.threads = 1;
  const column_blocks blocks = partition(data(), P, 0, P);
  auto comm = simulated_collective(P);
  rank_vectors x(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) x[static_cast<std::size_t>(p)].assign(static_cast<std::size_t>(blocks.width(p)), 0.01);
  int h = 0;
  for (auto _ : state) {
    outer_result r = outer_iteration(blocks, o, o.precision, h++, x, *comm);
    benchmark::DoNotOptimize(r.x.data());
  }
  state.SetItemsProcessed(state.iterations());
}

// Recipe A in native fp32: the same algorithm with float arithmetic and no emulation.
void native_fp32(benchmark::State& state) {
  const glm_data& d = data();
  const int sb = kS * kB;
  const float alpha = 0.5f / kB;
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> A(kM, kN), Y(sb, kN);
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) A(i, j) = static_cast<float>(d.A[static_cast<std::size_t>(i) * kN + static_cast<std::size_t>(j)]);
  Eigen::VectorXf x = Eigen::VectorXf::Constant(kN, 0.01f), r(sb), delta(sb);
  Eigen::MatrixXf G(sb, sb);
  int h = 0;
  for (auto _ : state) {
    const std::vector<std::int64_t> rows = sample_rows(42, kM, static_cast<std::int64_t>(h++) * sb, sb);
    for (int k = 0; k < sb; ++k) Y.row(k) = A.row(static_cast<Eigen::Index>(rows[static_cast<std::size_t>(k)]));
    r.noalias() = Y * x;
    G.noalias() = Y * Y.transpose();
    for (int j = 0; j < kS; ++j)
      for (int i = 0; i < kB; ++i) {
        const int row = j * kB + i;
        float z = r(row);
        if (j > 0) z += alpha * G.row(row).head(j * kB).dot(delta.head(j * kB));
        const float y = static_cast<float>(d.y[static_cast<std::size_t>(rows[static_cast<std::size_t>(row)])]);
        delta(row) = y / (1 + std::exp(y * z));
      }
    x.noalias() += alpha * (Y.transpose() * delta);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(native_fp32)->Name("outer_iteration/native_fp32_recipe_A")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(emulated, recipe_C_P1, 'C', 1)->Name("outer_iteration/emulated_recipe_C/P1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(emulated, recipe_A_P1, 'A', 1)->Name("outer_iteration/emulated_recipe_A/P1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(emulated, recipe_C_P16, 'C', 16)->Name("outer_iteration/emulated_recipe_C/P16")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
