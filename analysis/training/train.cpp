#include "analysis/training/train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>

#include "analysis/training/grad_accumulation.hpp"
#include "fpemu/interrupt.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::training {
namespace {

// Streams of random_bits() used here; the optimizer uses one stream per tensor from 0.
constexpr std::uint32_t kShuffleStream = 1u << 20;

std::vector<int> shuffled_rows(int rows, std::uint64_t seed, int epoch) {
  std::vector<int> order(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  for (int i = rows - 1; i > 0; --i) {  // Fisher-Yates; the modulo bias of 64-bit draws is ~2^-40
    const auto j = static_cast<int>(random_bits(seed, kShuffleStream + static_cast<std::uint32_t>(epoch), i) %
                                    static_cast<std::uint64_t>(i + 1));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  return order;
}

struct parameter_views {
  std::vector<std::vector<float>> values;
  std::vector<std::span<const float>> spans;
  void refresh(const optimizer& o) {
    values.resize(o.tensors());
    spans.resize(o.tensors());
    for (std::size_t i = 0; i < o.tensors(); ++i) {
      values[i] = o.weights(i).values();
      spans[i] = values[i];
    }
  }
};

double distance(const std::vector<float>& w, const std::vector<double>& target) {
  double s = 0;
  for (std::size_t j = 0; j < w.size(); ++j) s += (w[j] - target[j]) * (w[j] - target[j]);
  return std::sqrt(s);
}

}  // namespace

expected<train_result> train(const dataset& train_set, const dataset& test_set, const train_options& o,
                             const std::function<void(const epoch_record&)>& progress) {
  if (o.epochs < 1) return error{"epochs " + std::to_string(o.epochs) + " must be at least 1"};
  if (o.batch < 1) return error{"batch " + std::to_string(o.batch) + " must be at least 1"};
  if (train_set.rows < 1) return error{"training set " + train_set.source + " has no rows"};
  if (test_set.rows < 1) return error{"test set " + test_set.source + " has no rows"};
  for (const dataset* d : {&train_set, &test_set})
    if (d->cols != o.shape.inputs)
      return error{"dataset " + d->source + " has " + std::to_string(d->cols) + " features but the model takes " +
                   std::to_string(o.shape.inputs)};
  if (o.probe_every < 0 || o.probe_rows < 1)
    return error{"gemm error probe: every " + std::to_string(o.probe_every) + " steps on " +
                 std::to_string(o.probe_rows) + " rows; needs every >= 0 (0: off) and rows >= 1"};
  const expected<compute_precision> precision = compute_precision_for(o.gemm, o.policy.weights, o.threads);
  if (!precision) return error{precision.message()};
  auto m = model::create(o.shape, *precision);
  if (!m) return error{m.message()};
  for (const dataset* d : {&train_set, &test_set})
    if (auto bad = m->check_labels(d->y)) return error{d->source + ": " + *bad};
  const std::vector<std::vector<float>> init = m->init(o.seed);
  auto opt = optimizer::create(o.optimizer, o.hyper, o.policy, init, o.seed);
  if (!opt) return error{opt.message()};
  const std::vector<std::size_t> sizes = m->param_sizes();
  grad_accumulation_options ga;
  ga.micro_batches = o.grad_accum;
  ga.clip_norm = o.clip_norm;
  auto acc = grad_accumulator::create(sizes, ga);
  if (!acc) return error{acc.message()};

  train_result result;
  result.memory = bytes_per_parameter(o.optimizer, o.hyper, o.policy);
  result.optimizer_bytes = opt->bytes();

  parameter_views params;
  params.refresh(*opt);
  std::vector<std::vector<float>> grads(sizes.size());
  std::vector<std::span<float>> grad_out(sizes.size());
  std::vector<std::span<const float>> grad_in(sizes.size());
  std::vector<stored_tensor> grad_store;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    grads[i].resize(sizes[i]);
    grad_out[i] = grads[i];
    grad_in[i] = grads[i];
    grad_store.emplace_back(o.policy.grads, sizes[i]);
  }
  const auto cols = static_cast<std::size_t>(train_set.cols);
  std::vector<float> x(static_cast<std::size_t>(o.batch) * cols), y(static_cast<std::size_t>(o.batch));

  for (int epoch = 1; epoch <= o.epochs && !interrupted(); ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int> order = shuffled_rows(train_set.rows, o.seed, epoch);
    double loss_sum = 0;
    long micro_batches = 0;
    for (int first = 0; first < train_set.rows && !interrupted(); first += o.batch) {
      const int rows = std::min(o.batch, train_set.rows - first);
      for (int r = 0; r < rows; ++r) {
        const auto src = static_cast<std::size_t>(order[static_cast<std::size_t>(first + r)]);
        std::copy_n(train_set.x.begin() + static_cast<std::ptrdiff_t>(src * cols), cols,
                    x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * cols));
        y[static_cast<std::size_t>(r)] = train_set.y[src];
      }
      // The step about to be taken is probed at its first micro-batch.
      const long step = opt->steps() + 1;
      const bool probed = o.probe_every > 0 && acc->cycle_position() == 0 && (step - 1) % o.probe_every == 0;
      gemm_probe probe{o.probe_rows, {}};
      const double loss = m->loss_and_gradient(params.spans, std::span<const float>(x.data(), rows * cols),
                                               std::span<const float>(y.data(), static_cast<std::size_t>(rows)), rows,
                                               grad_out, probed ? &probe : nullptr);
      for (gemm_error& e : probe.errors) result.gemm_errors.push_back({step, std::move(e)});
      loss_sum += loss;
      ++micro_batches;
      // The gradient as the policy stores it (a no-op for fp32 gradients).
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        grad_store[i].store(0, grads[i]);
        grad_store[i].load(0, grads[i]);
      }
      if (acc->add(grad_in, loss)) {
        opt->step(acc->take());
        result.step_losses.push_back(acc->mean_loss());
        params.refresh(*opt);
      }
    }
    if (interrupted()) break;  // a partial epoch is not reported
    epoch_record rec;
    rec.epoch = epoch;
    rec.train_loss = loss_sum / static_cast<double>(micro_batches);
    const auto eval = m->evaluate(params.spans, test_set.x, test_set.y, test_set.rows);
    rec.test_loss = eval.loss;
    rec.test_accuracy = eval.accuracy;
    rec.steps = opt->steps();
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.epochs.push_back(rec);
    if (progress) progress(rec);
  }
  return result;
}

std::vector<floor_row> theorem1_floor(const format& fmt, const std::vector<double>& lrs, int dim, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(dim);
  std::vector<double> lambda(n), target(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double u = static_cast<double>(random_bits(seed, 0, j) >> 11) * 0x1p-53;
    lambda[j] = j == 0 ? 1.0 : 0.5 + 0.5 * u;  // L = max lambda = 1
    const double v = static_cast<double>(random_bits(seed, 1, j) >> 11) * 0x1p-53;
    target[j] = to_float(fmt, round_float(fmt, static_cast<float>(1 + v)).code);  // on fmt's grid, in [1, 2]
  }
  const double eps = unit_roundoff(fmt);
  const double min_target = *std::min_element(target.begin(), target.end());
  const double start_distance = distance(std::vector<float>(n, 0.0f), target);

  std::vector<floor_row> rows;
  for (double lr : lrs) {
    floor_row row;
    row.lr = lr;
    row.predicted = std::min(eps * (1 - lr) / (lr + eps) * min_target, start_distance);
    row.steps = static_cast<long>(std::ceil(80.0 / lr));  // (1 - lr/2)^steps < e^-40: converged in exact arithmetic
    hyperparameters h;
    h.lr = lr;
    const std::string name = to_string(fmt);
    for (const char* suffix : {"", "-kahan", "-sr", "fp32"}) {
      precision_policy p = *parse_policy(std::string(suffix) == "fp32" ? "fp32" : name + suffix);
      p.grads = formats::fp32;  // exact-ish gradients: the floor is the update's rounding
      auto o = optimizer::create(optimizer_kind::sgd, h, p, {std::vector<float>(n, 0.0f)}, seed);
      std::vector<stored_tensor> g;
      g.emplace_back(formats::fp32, n);
      std::vector<float> gv(n);
      for (long s = 0; s < row.steps && !interrupted(); ++s) {
        const std::vector<float> w = o->weights(0).values();
        for (std::size_t j = 0; j < n; ++j) gv[j] = static_cast<float>(lambda[j] * (w[j] - target[j]));
        g[0].store(0, gv);
        o->step(g);
      }
      const double d = distance(o->weights(0).values(), target);
      const std::string s = suffix;
      (s.empty() ? row.nearest : s == "-kahan" ? row.kahan : s == "-sr" ? row.stochastic : row.fp32) = d;
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace fpemu::training
