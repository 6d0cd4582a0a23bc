// Training runs (analysis/training/train.hpp): the gradient-accumulation contract end to end (one
// optimizer step per N micro-batches; N micro-batches of B rows follow the same trajectory as
// batches of N*B rows), the floor of Theorem 1 of Zamirai et al. 2020, the policies on heart_scale
// (Debian's liblinear-tools) and a Fashion-MNIST subset (Debian's dataset-fashion-mnist), and error
// paths.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/training/datasets.hpp"
#include "analysis/training/train.hpp"
#include "fpemu/random.hpp"

using namespace fpemu;
using namespace fpemu::training;

namespace {

dataset heart() {
  auto d = read_libsvm(default_heart_scale_path());
  REQUIRE_MESSAGE(d.has_value(), (d.has_value() ? "" : d.message()));
  return std::move(d).value();
}

// rows x cols, features uniform in [-1, 1], labels +-1 from a fixed hyperplane.
dataset synthetic(int rows, int cols, std::uint64_t seed) {
  dataset d;
  d.rows = rows;
  d.cols = cols;
  d.source = "synthetic";
  for (int i = 0; i < rows; ++i) {
    double z = 0;
    for (int j = 0; j < cols; ++j) {
      const float v = static_cast<float>(random_bits(seed, 0, static_cast<std::uint64_t>(i * cols + j)) >> 40) * 0x1p-23f - 1;
      d.x.push_back(v);
      z += (j % 2 ? 1 : -1) * v;
    }
    d.y.push_back(z > 0 ? 1.0f : -1.0f);
  }
  return d;
}

train_options options(model_kind kind, int inputs, const char* policy, double lr) {
  train_options o;
  o.shape = {kind, inputs, 16, 2};
  o.hyper.lr = lr;
  o.policy = *parse_policy(policy);
  o.threads = 1;
  return o;
}

train_result run(const dataset& tr, const dataset& te, const train_options& o) {
  auto r = train(tr, te, o);
  REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? "" : r.message()));
  return std::move(r).value();
}

}  // namespace

TEST_CASE("FALSIFY-GA-003 in the training loop: one optimizer step per N micro-batches") {
  const dataset d = synthetic(100, 5, 1);  // 100 rows, batch 8: 13 micro-batches per epoch
  for (int n : {1, 3, 4, 7}) {
    train_options o = options(model_kind::logreg, 5, "bf16-kahan", 0.1);
    o.batch = 8;
    o.grad_accum = n;
    o.epochs = 3;
    const auto r = run(d, d, o);
    CHECK(r.epochs.back().steps == (13 * 3) / n);  // cycles carry across epochs
    CHECK(r.step_losses.size() == static_cast<std::size_t>((13 * 3) / n));
  }
}

TEST_CASE("N micro-batches of B rows follow the trajectory of batches of N*B rows (fp32, 1e-5)") {
  const dataset d = synthetic(256, 6, 2);  // divisible, so every step sees the same 32 rows
  for (model_kind kind : {model_kind::logreg, model_kind::linreg}) {
    train_options whole = options(kind, 6, "fp32", 0.05);
    whole.batch = 32;
    whole.epochs = 4;
    train_options micro = whole;
    micro.batch = 8;
    micro.grad_accum = 4;
    const auto a = run(d, d, whole), b = run(d, d, micro);
    REQUIRE(a.step_losses.size() == b.step_losses.size());
    for (std::size_t i = 0; i < a.step_losses.size(); ++i)
      REQUIRE(std::fabs(a.step_losses[i] - b.step_losses[i]) <= 1e-5 * std::fabs(a.step_losses[i]));
    CHECK(std::fabs(a.epochs.back().test_loss - b.epochs.back().test_loss) <= 1e-5 * a.epochs.back().test_loss);
  }
}

TEST_CASE("Theorem 1: nearest rounding stalls above the predicted floor, Kahan and SR reach fp32's level") {
  const auto rows = theorem1_floor(formats::bf16, {0.2, 0.05, 0.01}, 32, 3);
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) {
    CAPTURE(r.lr);
    CHECK(r.nearest >= r.predicted);
    CHECK(r.fp32 < 1e-3);
    CHECK(r.kahan <= r.fp32 + 1e-9);
    CHECK(r.stochastic <= r.fp32 + 1e-9);
  }
  // The floor grows as the step size shrinks, predicted and measured alike.
  CHECK(rows[0].predicted < rows[1].predicted);
  CHECK(rows[1].predicted < rows[2].predicted);
  CHECK(rows[0].nearest < rows[2].nearest);
}

TEST_CASE("heart_scale: Kahan and SR track fp32, nearest rounding falls behind at a small learning rate") {
  const dataset all = heart();
  REQUIRE(all.rows == 270);
  const auto parts = split(all, 0.2, 1);
  std::vector<double> loss;
  for (const char* p : {"fp32", "mixed", "bf16", "bf16-kahan", "bf16-zamirai", "bf16-sr"}) {
    train_options o = options(model_kind::logreg, 13, p, 0.002);
    o.batch = 32;
    o.epochs = 100;
    loss.push_back(run(parts.first, parts.second, o).epochs.back().train_loss);
    MESSAGE(std::string(p) << " final training loss " << loss.back());
  }
  CHECK(std::fabs(loss[1] - loss[0]) < 1e-3 * loss[0]);  // mixed
  CHECK(loss[2] > loss[0] * 1.02);                        // bf16 nearest: measurably worse
  CHECK(std::fabs(loss[3] - loss[0]) < 2e-3 * loss[0]);  // Kahan
  CHECK(loss[4] == loss[3]);                              // Zamirai's formulation: the same bits
  CHECK(std::fabs(loss[5] - loss[0]) < 1e-2 * loss[0]);  // SR
}

TEST_CASE("Fashion-MNIST subset: the MLP learns under bf16-kahan with bf16 matmuls") {
  auto full = read_fashion_mnist(default_fashion_mnist_dir(), false);  // the 10000 test images
  REQUIRE_MESSAGE(full.has_value(), (full.has_value() ? "" : full.message()));
  const auto parts = split(*full, 0.2, 5);
  train_options o = options(model_kind::mlp, 784, "bf16-kahan", 0.1);
  o.shape = {model_kind::mlp, 784, 32, 10};
  o.epochs = 2;
  o.batch = 64;
  const auto r = run(parts.first, parts.second, o);
  MESSAGE("test accuracy " << r.epochs.back().test_accuracy);
  CHECK(r.epochs.back().test_accuracy > 0.7);  // chance is 0.1
  CHECK(r.epochs.back().train_loss < r.epochs.front().train_loss);
  CHECK(r.memory.min == 2 + 2 + 2);  // bf16 weights, gradients, compensation (plain SGD)
}

TEST_CASE("training errors name the bad value") {
  const dataset d = synthetic(20, 4, 3);
  const auto message = [&](train_options o, const dataset& data) {
    auto r = train(data, data, o);
    REQUIRE_FALSE(r.has_value());
    return r.message();
  };
  train_options o = options(model_kind::logreg, 4, "fp32", 0.1);
  CHECK(message(options(model_kind::logreg, 5, "fp32", 0.1), d).find("4 features but the model takes 5") !=
        std::string::npos);
  o.epochs = 0;
  CHECK(message(o, d).find("epochs 0") != std::string::npos);
  o.epochs = 1;
  o.batch = 0;
  CHECK(message(o, d).find("batch 0") != std::string::npos);
  o.batch = 4;
  o.grad_accum = 0;
  CHECK(message(o, d).find("0") != std::string::npos);
  o.grad_accum = 1;
  o.hyper.lr = std::nan("");
  CHECK(message(o, d).find("learning rate nan") != std::string::npos);
  o.hyper.lr = 0.1;
  dataset bad = d;
  bad.y[7] = 3;
  CHECK(message(o, bad).find("3") != std::string::npos);
  o.shape.kind = model_kind::mlp;
  o.shape.classes = 2;
  CHECK(message(o, d).find("-1") != std::string::npos);  // class indices, not -1/+1
  o = options(model_kind::logreg, 4, "fp32", 0.1);
  o.probe_every = -1;
  CHECK(message(o, d).find("every -1 steps") != std::string::npos);
  o.probe_every = 1;
  o.probe_rows = 0;
  CHECK(message(o, d).find("on 0 rows") != std::string::npos);
  o = options(model_kind::logreg, 4, "bf16", 0.1);
  o.gemm = parse_gemm_recipe("weights/none/h100-e4m3").value();
  CHECK(message(o, d).find("takes inputs") != std::string::npos);
}

TEST_CASE("GEMM probes: steps 1, N + 1, ... at their first micro-batch, each GEMM of the model in order") {
  dataset d = synthetic(200, 6, 4);  // 200 rows, batch 16 x 2 micro-batches: 7 steps an epoch
  for (float& y : d.y) y = y > 0 ? 1.0f : 0.0f;  // class indices for the mlp
  train_options o = options(model_kind::mlp, 6, "fp32", 0.05);
  o.shape.classes = 2;
  o.batch = 16;
  o.grad_accum = 2;
  o.epochs = 2;
  o.probe_every = 3;
  o.probe_rows = 4;
  o.gemm = parse_gemm_recipe("fp8-deepseek").value();
  const train_result r = run(d, d, o);
  std::vector<long> steps;
  for (const auto& e : r.gemm_errors)
    if (e.error.layer == "fprop1") steps.push_back(e.step);
  CHECK(steps == std::vector<long>{1, 4, 7, 10, 13});
  REQUIRE(r.gemm_errors.size() == 5 * steps.size());
  CHECK(r.gemm_errors[4].error.layer == "wgrad1");
  CHECK(r.gemm_errors[4].error.rows == 4);
  // The same run unprobed takes the same steps.
  train_options plain = o;
  plain.probe_every = 0;
  const train_result q = run(d, d, plain);
  CHECK(q.step_losses == r.step_losses);
  CHECK(q.gemm_errors.empty());
}
