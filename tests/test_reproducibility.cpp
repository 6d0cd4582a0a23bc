// Reproducibility of every random feature (docs/architecture.md, house rule 3): the same seed gives
// the same bits on a rerun, for 1, 2 and 3 threads where the feature takes a thread count, and on
// every SIMD target the CPU has where the feature runs vector code (each forced with
// hwy::SetSupportedTargetsForTest); another seed gives other bits, so every check can fail.
// Results are compared as bit patterns (codes, or the binary64/binary32 bits of values), never
// with a tolerance, and the first mismatch is reported with its index and both patterns.
//
// Covered elsewhere and not repeated here: round_array and round_in_place with stochastic
// rounding across threads, array splits and targets (test_array_simd.cpp), the array functions
// split by first_index (test_array.cpp), and stochastic rounding as a pure function of (seed,
// stream, index) with Philox known-answer vectors (mpfr_stochastic.cpp). Across processes:
// tests/cli/test_reproducible.py. The CUDA kernels' element functions are checked against these
// same host functions in test_cuda_*.cpp.
#include <doctest/doctest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "analysis/casgd/run.hpp"
#include "analysis/reference/accumulation_experiment.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/summation.hpp"
#include "analysis/training/datasets.hpp"
#include "analysis/training/model.hpp"
#include "analysis/training/optimizer.hpp"
#include "analysis/training/train.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;

namespace {

// ---- Bit traces ---------------------------------------------------------------------------------

// Everything a run produced, as bit patterns in a fixed order.
using bit_trace = std::vector<std::uint64_t>;

void put(bit_trace& t, double x) { t.push_back(std::bit_cast<std::uint64_t>(x)); }
void put(bit_trace& t, float x) { t.push_back(std::bit_cast<std::uint32_t>(x)); }
template <class Range>
void put_all(bit_trace& t, const Range& r) {
  for (const auto& x : r) {
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(x)>>) {
      put(t, x);
    } else {
      t.push_back(static_cast<std::uint64_t>(x));
    }
  }
}

// "" when equal, else the first difference: its index and both bit patterns.
std::string first_difference(const bit_trace& want, const bit_trace& got) {
  if (want.size() != got.size())
    return "lengths differ: " + std::to_string(want.size()) + " and " + std::to_string(got.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) {
      char text[96];
      std::snprintf(text, sizeof text, "element %zu: 0x%016llx, then 0x%016llx", i,
                    static_cast<unsigned long long>(want[i]), static_cast<unsigned long long>(got[i]));
      return text;
    }
  return "";
}

// ---- The check every feature goes through ------------------------------------------------------

const std::vector<std::int64_t>& simd_targets() {
  static const std::vector<std::int64_t> targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    return hwy::SupportedAndGeneratedTargets();
  }();
  return targets;
}

enum class varies { seed_only, threads, threads_and_targets };

constexpr std::uint64_t kSeed = 0x5eed0001, kOtherSeed = 0x5eed0002;

// What a test case compared, printed once at its end.
struct tally {
  int features = 0;            // check_reproducible() calls
  int runs = 0;                // runs compared with their reference
  std::size_t patterns = 0;    // bit patterns compared
  std::size_t other_seed = 0;  // patterns that another seed changed
  bool targets = false;        // whether runs switched SIMD targets
};

// run(seed, threads) computes the feature once. The first run (kSeed, one thread, the best
// target) is the reference; every other run with kSeed must give its bits: a rerun, then 2 and 3
// threads, then each SIMD target with 1, 2 and 3 threads, as `v` asks. A run with kOtherSeed must
// differ somewhere.
void check_reproducible(const std::function<bit_trace(std::uint64_t seed, int threads)>& run, varies v, tally& n) {
  const bit_trace reference = run(kSeed, 1);
  REQUIRE(!reference.empty());
  const auto same = [&](const std::string& what, int threads) {
    CAPTURE(what);
    CAPTURE(threads);
    const std::string difference = first_difference(reference, run(kSeed, threads));
    CHECK_MESSAGE(difference.empty(), difference);
    ++n.runs;
    n.patterns += reference.size();
  };
  same("rerun", 1);
  if (v != varies::seed_only)
    for (const int threads : {2, 3}) same("thread count", threads);
  if (v == varies::threads_and_targets) {
    n.targets = true;
    for (const std::int64_t target : simd_targets()) {
      hwy::SetSupportedTargetsForTest(target);
      for (const int threads : {1, 2, 3}) same(hwy::TargetName(target), threads);
    }
    hwy::SetSupportedTargetsForTest(0);
  }
  const bit_trace other = run(kOtherSeed, 1);
  std::size_t differing = other.size() != reference.size();
  for (std::size_t i = 0; i < std::min(other.size(), reference.size()); ++i) differing += other[i] != reference[i];
  CHECK_MESSAGE(differing > 0, "another seed gave the same bits");
  n.other_seed += differing;
  ++n.features;
}

// Runs per check_reproducible() call besides the reference.
int runs_per_check(varies v) {
  switch (v) {
    case varies::seed_only: return 1;
    case varies::threads: return 3;
    case varies::threads_and_targets: return 3 + 3 * static_cast<int>(simd_targets().size());
  }
  return 0;
}

// Checks the test case's own count and prints what it compared.
void report(const tally& n, int expected_runs) {
  CHECK(n.runs == expected_runs);
  std::string targets;
  if (n.targets) {
    targets = "; SIMD targets:";
    for (const std::int64_t t : simd_targets()) targets += std::string(" ") + hwy::TargetName(t);
  }
  MESSAGE(n.features << " configurations, " << n.runs << " runs == their reference bit for bit (" << n.patterns
                     << " patterns); another seed changed " << n.other_seed << " patterns" << targets);
}

// Runs body(begin, end) over [0, n) in `threads` contiguous parts, each on its own thread.
void split_over_threads(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t)>& body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(body, n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads),
                      n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads));
  for (std::thread& t : pool) t.join();
}

// Fixed inputs (their seed is not the one under test): N(0, 1) doubles and codes of f.
std::vector<double> fixed_doubles(std::size_t n, std::uint64_t data_seed) {
  std::mt19937_64 rng(data_seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(n);
  for (double& v : x) v = normal(rng);
  return x;
}
std::vector<std::uint32_t> fixed_codes(const format& f, std::size_t n, std::uint64_t data_seed) {
  std::vector<std::uint32_t> codes;
  for (const double x : fixed_doubles(n, data_seed)) codes.push_back(from(f, x).code);
  return codes;
}

}  // namespace

TEST_CASE("scalar stochastic rounding (from, add, mul, div, fma, sqrt, convert) with Philox bits: same codes on "
          "reruns and over 1, 2, 3 threads; another seed differs") {
  constexpr std::size_t n = 2048;
  const std::vector<double> x = fixed_doubles(n, 1);
  const std::vector<rounding> roundings = {{round_mode::stochastic, overflow_policy::ieee, 1},
                                           {round_mode::stochastic, overflow_policy::ieee, 13},
                                           {round_mode::stochastic, overflow_policy::saturate, 32},
                                           {round_mode::stochastic_exact}};
  tally seen;
  for (const format& f : {formats::bf16, formats::e4m3fn, formats::fp16}) {
    CAPTURE(to_string(f));
    const std::vector<std::uint32_t> a = fixed_codes(f, n, 2), b = fixed_codes(f, n, 3), c = fixed_codes(f, n, 4),
                                     wide = fixed_codes(formats::fp32, n, 5);
    for (const rounding& r : roundings) {
      CAPTURE(to_string(r.mode));
      CAPTURE(r.sr_bits);
      // Element i of every operation reads its own (seed, stream, i): the keystream of the array
      // functions for from(), random_bits on one stream per operation for the others.
      const auto run = [&](std::uint64_t seed, int threads) {
        std::vector<std::uint32_t> out(7 * n);
        split_over_threads(n, threads, [&](std::size_t begin, std::size_t end) {
          for (std::size_t i = begin; i < end; ++i) {
            out[i] = from(f, x[i], r, keystream_bits(seed, 0, i, array_random_width(r))).code;
            out[n + i] = add(f, a[i], b[i], r, random_bits(seed, 1, i)).code;
            out[2 * n + i] = mul(f, a[i], b[i], r, random_bits(seed, 2, i)).code;
            out[3 * n + i] = div(f, a[i], b[i], r, random_bits(seed, 3, i)).code;
            out[4 * n + i] = fma(f, a[i], b[i], c[i], r, random_bits(seed, 4, i)).code;
            out[5 * n + i] = sqrt(f, a[i], r, random_bits(seed, 5, i)).code;
            out[6 * n + i] = convert(f, formats::fp32, wide[i], r, random_bits(seed, 6, i)).code;
          }
        });
        bit_trace t;
        put_all(t, out);
        return t;
      };
      check_reproducible(run, varies::threads, seen);
    }
  }
  report(seen, 3 * 4 * runs_per_check(varies::threads));
}

TEST_CASE("array stochastic rounding on the thread pool: apply, apply_fma, apply_sqrt, convert_array and the "
          "storage-width round_array give the same codes for 1, 2, 3 threads and every SIMD target") {
  // Long enough for the pool (65536 elements and more), with an odd tail. round_array into
  // uint32 codes and round_in_place are test_array_simd.cpp's; these are the other outputs.
  constexpr std::size_t n = 70001;
  const rounding sr{round_mode::stochastic, overflow_policy::saturate, 16};
  const std::vector<double> xd = fixed_doubles(n, 6);
  const std::vector<float> xf(xd.begin(), xd.end());
  const std::vector<std::uint32_t> a = fixed_codes(formats::bf16, n, 7), b = fixed_codes(formats::bf16, n, 8),
                                   c = fixed_codes(formats::bf16, n, 9), wide = fixed_codes(formats::fp32, n, 10);
  // Vectorised: the storage-width encodes and convert_array from binary32 values.
  const auto vector_paths = [&](std::uint64_t seed, int threads) {
    set_array_threads(threads);
    const sr_stream s{seed, 3, 1000};
    std::vector<std::uint16_t> to_bf16(n), to_fp16(n);
    std::vector<std::uint8_t> to_e4m3(n), to_e5m2(n);
    std::vector<std::uint32_t> converted(n);
    REQUIRE(round_array(formats::bf16, std::span<const float>(xf), std::span(to_bf16), sr, s).has_value());
    REQUIRE(round_array(formats::fp16, std::span<const double>(xd), std::span(to_fp16), sr, s).has_value());
    REQUIRE(round_array(formats::e4m3fn, std::span<const float>(xf), std::span(to_e4m3), sr, s).has_value());
    REQUIRE(round_array(formats::e5m2, std::span<const double>(xd), std::span(to_e5m2), sr, s).has_value());
    REQUIRE(convert_array(formats::e4m3fn, formats::fp32, wide, converted, sr, s).has_value());
    set_array_threads(0);
    bit_trace t;
    put_all(t, to_bf16);
    put_all(t, to_fp16);
    put_all(t, to_e4m3);
    put_all(t, to_e5m2);
    put_all(t, converted);
    return t;
  };
  // The scalar core on the pool (not vectorised: targets change nothing there).
  const auto scalar_paths = [&](std::uint64_t seed, int threads) {
    set_array_threads(threads);
    const sr_stream s{seed, 4, 0};
    std::vector<std::uint32_t> sum(n), quotient(n), fused(n), root(n);
    REQUIRE(apply(array_op::add, formats::bf16, a, b, sum, sr, s).has_value());
    REQUIRE(apply(array_op::div, formats::bf16, a, b, quotient, sr, s).has_value());
    REQUIRE(apply_fma(formats::bf16, a, b, c, fused, sr, s).has_value());
    REQUIRE(apply_sqrt(formats::bf16, a, root, sr, s).has_value());
    set_array_threads(0);
    bit_trace t;
    put_all(t, sum);
    put_all(t, quotient);
    put_all(t, fused);
    put_all(t, root);
    return t;
  };
  tally seen;
  check_reproducible(vector_paths, varies::threads_and_targets, seen);
  check_reproducible(scalar_paths, varies::threads, seen);
  report(seen, runs_per_check(varies::threads_and_targets) + runs_per_check(varies::threads));
}

TEST_CASE("stochastic summation: every method with a stochastically rounded accumulator gives the same code per "
          "seed") {
  using namespace fpemu::analysis;
  const std::vector<std::uint32_t> x = fixed_codes(formats::bf16, 700, 11);
  accumulator_model sr_bf16;
  sr_bf16.acc = formats::bf16;
  sr_bf16.acc_rounding = {round_mode::stochastic, overflow_policy::ieee, 8};
  tally seen;
  for (const sum_method m : {sum_method::recursive, sum_method::pairwise, sum_method::blocked, sum_method::kahan,
                             sum_method::neumaier, sum_method::promoted, sum_method::stochastic}) {
    CAPTURE(to_string(m));
    // Many sums per seed (first_index moves on by the sum's length), so that another seed shows.
    const auto run = [&](std::uint64_t seed, int) {
      bit_trace t;
      for (std::uint64_t s = 0; s < 16; ++s) {
        sum_options o;
        o.method = m;
        o.input = formats::bf16;
        o.acc = sr_bf16;
        o.sr = {seed, 2, s * x.size()};
        const expected<sum_result> r = sum(x, o);
        REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? "" : r.message()));
        t.push_back(r->code);
        put(t, r->value);
      }
      return t;
    };
    check_reproducible(run, varies::seed_only, seen);
  }
  report(seen, 7 * runs_per_check(varies::seed_only));
}

TEST_CASE("GEMM and dot with stochastic rounding: same codes for 1, 2, 3 threads and every SIMD target") {
  using namespace fpemu::analysis;
  const auto matrix = [](const format& f, int rows, int cols, std::uint64_t data_seed) {
    scaled_matrix m;
    m.rows = rows;
    m.cols = cols;
    m.fmt = f;
    m.codes = fixed_codes(f, static_cast<std::size_t>(rows) * cols, data_seed);
    return m;
  };
  const int M = 19, N = 13, K = 70;
  const scaled_matrix a = matrix(formats::bf16, M, K, 12), b = matrix(formats::bf16, K, N, 13);
  const std::vector<std::uint32_t> c = fixed_codes(formats::bf16, static_cast<std::size_t>(M) * N, 14);
  const rounding sr{round_mode::stochastic, overflow_policy::ieee, 12};
  // The reference loop with an SR accumulator, and the SIMD fp32 kernel followed by an SR
  // epilogue; dot() is one output of the first.
  accumulator_model sr_acc;
  sr_acc.acc = formats::bf16;
  sr_acc.acc_rounding = sr;
  const auto run = [&](std::uint64_t seed, int threads) {
    bit_trace t;
    for (const accumulator_model& acc : {sr_acc, accumulator_model{}}) {
      gemm_options o;
      o.acc = acc;
      o.out = formats::bf16;
      o.out_rounding = sr;
      o.beta = 0.5;
      o.threads = threads;
      o.sr = {seed, 1, 0};
      const expected<std::vector<std::uint32_t>> d = gemm(a, b, c, o);
      REQUIRE(d.has_value());
      put_all(t, *d);
    }
    scaled_matrix row = a, column = b;
    row.rows = 1;
    row.codes.resize(K);
    column.cols = 1;
    column.codes.clear();
    for (int k = 0; k < K; ++k) column.codes.push_back(b.codes[static_cast<std::size_t>(k) * N]);
    gemm_options o;
    o.acc = sr_acc;
    o.sr = {seed, 1, 0};
    const expected<std::uint32_t> d = dot(row, column, o);
    REQUIRE(d.has_value());
    t.push_back(*d);
    return t;
  };
  tally seen;
  check_reproducible(run, varies::threads_and_targets, seen);
  report(seen, runs_per_check(varies::threads_and_targets));
}

TEST_CASE("optimizer steps with stochastic rounding (SGD, AdamW, Lion; bf16 and fp16, fused and per-op): same "
          "weights and states per seed") {
  using namespace fpemu::training;
  const std::size_t n = 300;
  const std::vector<double> init = fixed_doubles(n, 15);
  tally seen;
  for (const optimizer_kind k : {optimizer_kind::sgd, optimizer_kind::adamw, optimizer_kind::lion}) {
    for (const std::string policy_name : {"bf16-sr", "fp16-sr8-ops"}) {
      CAPTURE(to_string(k));
      CAPTURE(policy_name);
      const expected<precision_policy> policy = parse_policy(policy_name);
      REQUIRE(policy.has_value());
      hyperparameters h;
      h.lr = k == optimizer_kind::sgd ? 1e-2 : 1e-3;
      h.momentum = k == optimizer_kind::sgd ? 0.9 : 0.0;
      h.weight_decay = 1e-2;
      const auto run = [&](std::uint64_t seed, int) {
        auto o = optimizer::create(k, h, *policy, {std::vector<float>(init.begin(), init.end())}, seed);
        REQUIRE_MESSAGE(o.has_value(), (o.has_value() ? "" : o.message()));
        std::vector<stored_tensor> grads;
        grads.emplace_back(policy->grads, n);
        for (int step = 0; step < 12; ++step) {
          // A gradient that changes with the step, the same for every seed.
          const std::vector<double> g = fixed_doubles(n, 100 + static_cast<std::uint64_t>(step));
          grads[0].store(0, std::vector<float>(g.begin(), g.end()));
          o->step(grads);
        }
        bit_trace t;
        for (std::size_t i = 0; i < n; ++i) t.push_back(o->updated_weights(0).code(i));
        for (int s = 0; s < 2; ++s)
          if (const stored_tensor* state = o->state(0, s))
            for (std::size_t i = 0; i < n; ++i) t.push_back(state->code(i));
        return t;
      };
      check_reproducible(run, varies::seed_only, seen);
    }
  }
  report(seen, 3 * 2 * runs_per_check(varies::seed_only));
}

TEST_CASE("model initialisation: the same weights per seed") {
  using namespace fpemu::training;
  const expected<model> m = model::create({model_kind::mlp, 40, 24, 5}, {});
  REQUIRE(m.has_value());
  const auto run = [&](std::uint64_t seed, int) {
    bit_trace t;
    for (const std::vector<float>& p : m->init(seed)) put_all(t, p);
    return t;
  };
  tally seen;
  check_reproducible(run, varies::seed_only, seen);
  report(seen, runs_per_check(varies::seed_only));
}

namespace {

// A small classification set (features U(-1, 1), labels from a planted linear rule) that depends
// on data_seed only. classes == 0 gives logistic-regression labels -1 / +1.
fpemu::training::dataset classification_set(int rows, int cols, int classes, std::uint64_t data_seed) {
  fpemu::training::dataset d;
  d.rows = rows;
  d.cols = cols;
  d.source = "synthetic";
  for (int i = 0; i < rows * cols; ++i)
    d.x.push_back(static_cast<float>(static_cast<double>(random_bits(data_seed, 0, i) >> 11) * 0x1p-52 - 1));
  for (int r = 0; r < rows; ++r) {
    double score = 0;
    for (int j = 0; j < cols; ++j) score += d.x[static_cast<std::size_t>(r * cols + j)] * (j % 3 - 1);
    const int label = classes == 0 ? (score > 0 ? 1 : -1) : static_cast<int>((score + 8) * 7) % classes;
    d.y.push_back(static_cast<float>(label));
  }
  return d;
}

}  // namespace

TEST_CASE("dataset split: the same rows on each side per seed") {
  const fpemu::training::dataset d = classification_set(101, 3, 4, 16);
  const auto run = [&](std::uint64_t seed, int) {
    const auto [train, test] = fpemu::training::split(d, 0.3, seed);
    bit_trace t;
    put_all(t, train.x);
    put_all(t, train.y);
    put_all(t, test.x);
    put_all(t, test.y);
    return t;
  };
  tally seen;
  check_reproducible(run, varies::seed_only, seen);
  report(seen, runs_per_check(varies::seed_only));
}

TEST_CASE("training (initialisation, shuffling, stochastic rounding): the same losses for 1, 2, 3 threads and "
          "every SIMD target") {
  using namespace fpemu::training;
  struct config {
    std::string what;
    model_shape shape;
    const char* policy;
    int grad_accum;
  };
  // The mlp under bf16-sr draws on every random choice; logreg starts at zero in fp32, so there
  // the seed acts through the shuffling alone.
  const config configs[] = {{"mlp, bf16-sr, 2 micro-batches per step", {model_kind::mlp, 12, 16, 3}, "bf16-sr", 2},
                            {"logreg, fp32", {model_kind::logreg, 12, 0, 0}, "fp32", 1}};
  tally seen;
  for (const config& c : configs) {
    CAPTURE(c.what);
    const int classes = c.shape.kind == model_kind::mlp ? c.shape.classes : 0;
    const dataset train_set = classification_set(90, 12, classes, 17), test_set = classification_set(30, 12, classes, 18);
    const auto run = [&](std::uint64_t seed, int threads) {
      train_options o;
      o.shape = c.shape;
      o.optimizer = optimizer_kind::sgd;
      o.hyper.lr = 0.1;
      o.policy = parse_policy(c.policy).value();
      o.epochs = 2;
      o.batch = 8;
      o.grad_accum = c.grad_accum;
      o.seed = seed;
      o.threads = threads;
      const expected<train_result> r = train(train_set, test_set, o);
      REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? "" : r.message()));
      bit_trace t;
      put_all(t, r->step_losses);
      for (const epoch_record& e : r->epochs) {  // not e.seconds: wall time
        put(t, e.train_loss);
        put(t, e.test_loss);
        put(t, e.test_accuracy);
        t.push_back(static_cast<std::uint64_t>(e.steps));
      }
      return t;
    };
    check_reproducible(run, varies::threads_and_targets, seen);
  }
  report(seen, 2 * runs_per_check(varies::threads_and_targets));
}

TEST_CASE("Theorem 1 floor (random problem, stochastic rounding): the same distances per seed") {
  const auto run = [](std::uint64_t seed, int) {
    bit_trace t;
    for (const fpemu::training::floor_row& r : fpemu::training::theorem1_floor(formats::bf16, {0.2, 0.05}, 16, seed)) {
      put(t, r.predicted);
      put(t, r.nearest);
      put(t, r.kahan);
      put(t, r.stochastic);
      put(t, r.fp32);
    }
    return t;
  };
  tally seen;
  check_reproducible(run, varies::seed_only, seen);
  report(seen, runs_per_check(varies::seed_only));
}

TEST_CASE("CA-SGD synthetic data: the same matrix and labels per seed, for every loss") {
  using namespace fpemu::casgd;
  tally seen;
  for (const loss_kind l : {loss_kind::logistic, loss_kind::linear, loss_kind::poisson}) {
    CAPTURE(to_string(l));
    const auto run = [&](std::uint64_t seed, int) {
      const glm_data d = synthetic(60, 7, l, seed);
      bit_trace t;
      put_all(t, d.A);
      put_all(t, d.y);
      return t;
    };
    check_reproducible(run, varies::seed_only, seen);
  }
  report(seen, 3 * runs_per_check(varies::seed_only));
}

TEST_CASE("CA-SGD sampling and runs: the same rows and weights for 1, 2, 3 threads, simulated ranks and every SIMD "
          "target") {
  using namespace fpemu::casgd;
  // Draws are keyed by their index: any split of the draw range gives the same rows.
  const auto draws = [](std::uint64_t seed, int threads) {
    constexpr int count = 600;
    std::vector<std::int64_t> rows;
    for (int part = 0; part < threads; ++part) {
      const int begin = count * part / threads, end = count * (part + 1) / threads;
      const std::vector<std::int64_t> piece = sample_rows(seed, 1000, begin, end - begin);
      rows.insert(rows.end(), piece.begin(), piece.end());
    }
    bit_trace t;
    put_all(t, rows);
    return t;
  };
  tally seen;
  check_reproducible(draws, varies::threads, seen);

  const glm_data d = synthetic(240, 20, loss_kind::logistic, 19);
  // Recipe C (bf16 inputs, fp32 accumulation: the SIMD fp32 kernel) and a tensor-core Gram
  // (the block-FMA kernel); one rank (threads in the kernels) and three (a thread per rank).
  const slots recipe_c = recipe('C').value();
  const slots tensor_core_gram = with_slot(recipe_c, "u_G=fp16,h100-fp16").value();
  for (const slots* precision : {&recipe_c, &tensor_core_gram}) {
    for (const int P : {1, 3}) {
      CAPTURE(precision->describe());
      CAPTURE(P);
      const auto run = [&](std::uint64_t seed, int threads) {
        run_options o;
        o.precision = *precision;
        o.b = 4;
        o.s = 4;
        o.P = P;
        o.outer = 4;
        o.seed = seed;
        o.threads = threads;
        REQUIRE_FALSE(check(o, d.m, d.n).has_value());
        const column_blocks data = partition(d, P, 0, P);
        auto comm = simulated_collective(P);
        bit_trace t;
        run_hooks hooks;
        hooks.evaluated = [&](int, double loss) { put(t, loss); };
        for (const std::vector<double>& x : fpemu::casgd::run(data, o, 1, *comm, hooks)) put_all(t, x);
        return t;
      };
      check_reproducible(run, varies::threads_and_targets, seen);
    }
  }
  report(seen, runs_per_check(varies::threads) + 4 * runs_per_check(varies::threads_and_targets));
}

TEST_CASE("AllReduce C(P) measurement: the same constant per seed for every algorithm") {
  using namespace fpemu::casgd;
  const auto run = [](std::uint64_t seed, int) {
    bit_trace t;
    for (const allreduce_algorithm a : {allreduce_algorithm::ring, allreduce_algorithm::recursive_doubling,
                                        allreduce_algorithm::tree, allreduce_algorithm::sequential})
      for (const format& f : {formats::bf16, formats::fp16})
        put(t, measure_cp(6, a, of(f), 48, 2, seed).c_max);
    return t;
  };
  tally seen;
  check_reproducible(run, varies::seed_only, seen);
  report(seen, runs_per_check(varies::seed_only));
}

TEST_CASE("FP8 accumulation experiment: the same table per seed") {
  const auto run = [](std::uint64_t seed, int) {
    bit_trace t;
    for (const fpemu::analysis::accumulation_row& r : fpemu::analysis::accumulation_experiment({32, 160}, 6, seed)) {
      put(t, r.mean_relative_error);
      put(t, r.median_relative_error);
      put(t, r.p95_relative_error);
      put(t, r.max_relative_error);
      put(t, r.max_normalised_error);
    }
    return t;
  };
  tally seen;
  check_reproducible(run, varies::seed_only, seen);
  report(seen, runs_per_check(varies::seed_only));
}
