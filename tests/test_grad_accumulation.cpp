// Gradient accumulation (analysis/training/grad_accumulation.hpp) against the contract
// gradient-accumulation-kernel-v1: FALSIFY-GA-001..004, N = 1 exactness, loss scaling, a Kahan
// low-precision buffer, error paths. Expected values come from the test's own softmax-regression
// model, independent recomputation in binary32/double, or constructed facts.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "analysis/training/grad_accumulation.hpp"
#include "analysis/training/stored_tensor.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::training;

namespace {

using tensors = std::vector<std::vector<float>>;

// Uniform in [0, 1), an exact binary32 value with 24 random bits.
float uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  return static_cast<float>(random_bits(seed, stream, index) >> 40) * 0x1p-24f;
}
float symmetric(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  return 2.0f * uniform(seed, stream, index) - 1.0f;  // [-1, 1), exact
}

// ---- A softmax-regression model: logits = W x + b, mean cross-entropy ----------------------------

constexpr int kFeatures = 6, kClasses = 4;

struct dataset {
  std::vector<float> x;  // rows of kFeatures
  std::vector<int> label;
  std::size_t rows() const { return label.size(); }
};

dataset make_data(std::uint64_t seed, std::size_t rows) {
  dataset d;
  for (std::size_t i = 0; i < rows * kFeatures; ++i) d.x.push_back(symmetric(seed, 1, i));
  for (std::size_t r = 0; r < rows; ++r) d.label.push_back(static_cast<int>(random_bits(seed, 2, r) % kClasses));
  return d;
}

struct model {
  std::vector<float> w, b;  // kClasses x kFeatures, kClasses
};

model make_model(std::uint64_t seed) {
  model m;
  for (int i = 0; i < kClasses * kFeatures; ++i) m.w.push_back(symmetric(seed, 3, static_cast<std::uint64_t>(i)));
  for (int i = 0; i < kClasses; ++i) m.b.push_back(0.5f * symmetric(seed, 4, static_cast<std::uint64_t>(i)));
  return m;
}

// The gradient of the mean loss over rows [first, first + count), in binary32 (sums over the
// rows, then one division by the row count); the mean loss in double.
tensors gradient(const model& m, const dataset& d, std::size_t first, std::size_t count, double* loss) {
  tensors g{std::vector<float>(m.w.size(), 0.0f), std::vector<float>(m.b.size(), 0.0f)};
  double loss_sum = 0;
  for (std::size_t r = first; r < first + count; ++r) {
    const float* x = &d.x[r * kFeatures];
    float z[kClasses], p[kClasses];
    float zmax = -std::numeric_limits<float>::infinity();
    for (int k = 0; k < kClasses; ++k) {
      z[k] = m.b[static_cast<std::size_t>(k)];
      for (int f = 0; f < kFeatures; ++f) z[k] += m.w[static_cast<std::size_t>(k * kFeatures + f)] * x[f];
      zmax = std::max(zmax, z[k]);
    }
    float total = 0;
    for (int k = 0; k < kClasses; ++k) total += (p[k] = std::exp(z[k] - zmax));
    for (int k = 0; k < kClasses; ++k) p[k] /= total;
    loss_sum -= std::log(static_cast<double>(p[d.label[r]]));
    for (int k = 0; k < kClasses; ++k) {
      const float dz = p[k] - (k == d.label[r] ? 1.0f : 0.0f);
      for (int f = 0; f < kFeatures; ++f) g[0][static_cast<std::size_t>(k * kFeatures + f)] += dz * x[f];
      g[1][static_cast<std::size_t>(k)] += dz;
    }
  }
  const float n = static_cast<float>(count);
  for (auto& t : g)
    for (float& v : t) v /= n;
  if (loss) *loss = loss_sum / static_cast<double>(count);
  return g;
}

std::vector<std::size_t> model_sizes() {
  return {static_cast<std::size_t>(kClasses * kFeatures), static_cast<std::size_t>(kClasses)};
}

// ---- Helpers ----------------------------------------------------------------------------------

grad_accumulator make(std::vector<std::size_t> sizes, const grad_accumulation_options& o) {
  auto acc = grad_accumulator::create(std::move(sizes), o);
  REQUIRE_MESSAGE(acc.has_value(), acc.message());
  return std::move(acc).value();
}

std::vector<std::vector<double>> as_double(const std::vector<stored_tensor>& ts) {
  std::vector<std::vector<double>> out;
  for (const auto& t : ts) {
    std::vector<double> v;
    for (const float x : t.values()) v.push_back(x);
    out.push_back(std::move(v));
  }
  return out;
}
std::vector<std::vector<double>> as_double(const tensors& ts) {
  std::vector<std::vector<double>> out;
  for (const auto& t : ts) out.emplace_back(t.begin(), t.end());
  return out;
}

double distance(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  double s = 0;
  for (std::size_t t = 0; t < a.size(); ++t)
    for (std::size_t j = 0; j < a[t].size(); ++j) s += (a[t][j] - b[t][j]) * (a[t][j] - b[t][j]);
  return std::sqrt(s);
}
double norm(const std::vector<std::vector<double>>& a) {
  double s = 0;
  for (const auto& t : a)
    for (const double v : t) s += v * v;
  return std::sqrt(s);
}

std::vector<std::vector<std::uint32_t>> codes(const std::vector<stored_tensor>& ts) {
  std::vector<std::vector<std::uint32_t>> out;
  for (const auto& t : ts) {
    std::vector<std::uint32_t> c;
    for (std::size_t i = 0; i < t.size(); ++i) c.push_back(t.code(i));
    out.push_back(std::move(c));
  }
  return out;
}

// Rounds every element into `f` (a stored_tensor, as a micro-batch gradient kept in fp16 would be).
tensors rounded_to(const format& f, const tensors& g) {
  tensors out;
  for (const auto& t : g) {
    stored_tensor s(f, t.size());
    s.store(0, t);
    out.push_back(s.values());
  }
  return out;
}

// Independent recomputation of the plain binary32 accumulation: s = -0; s = s + g_i / N.
tensors fp32_accumulate(const std::vector<tensors>& micro) {
  const float n = static_cast<float>(micro.size());
  tensors s;
  for (const auto& t : micro[0]) s.emplace_back(t.size(), -0.0f);
  for (const auto& g : micro)
    for (std::size_t t = 0; t < g.size(); ++t)
      for (std::size_t j = 0; j < g[t].size(); ++j) s[t][j] = s[t][j] + g[t][j] / n;
  return s;
}

std::vector<std::vector<std::uint32_t>> bits_of(const tensors& ts) {
  std::vector<std::vector<std::uint32_t>> out;
  for (const auto& t : ts) {
    std::vector<std::uint32_t> c;
    for (const float v : t) c.push_back(std::bit_cast<std::uint32_t>(v));
    out.push_back(std::move(c));
  }
  return out;
}

tensors random_tensors(const std::vector<std::size_t>& sizes, std::uint64_t seed, std::uint32_t stream, float scale) {
  tensors g;
  std::uint64_t index = 0;
  for (const std::size_t n : sizes) {
    std::vector<float> t;
    for (std::size_t j = 0; j < n; ++j) t.push_back(scale * symmetric(seed, stream, index++));
    g.push_back(std::move(t));
  }
  return g;
}

}  // namespace

TEST_CASE("FALSIFY-GA-001 numerical equivalence") {
  constexpr std::size_t kRows = 16;  // B rows per micro-batch
  int cases = 0, wrong_dtype_failures = 0;
  double worst32 = 0, worst16 = 0, least_unscaled = 1e300;
  for (const int n : {2, 4, 8, 3}) {
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      CAPTURE(n);
      CAPTURE(seed);
      const std::uint64_t key = seed * 1000 + static_cast<std::uint64_t>(n);
      const dataset d = make_data(key, kRows * static_cast<std::size_t>(n));
      const model m = make_model(key);
      double full_loss = 0;
      const auto full = as_double(gradient(m, d, 0, d.rows(), &full_loss));
      REQUIRE(norm(full) > 0.01);  // far from a stationary point: the failure checks below can show

      std::vector<tensors> micro;
      std::vector<double> losses;
      for (int i = 0; i < n; ++i) {
        double loss = 0;
        micro.push_back(gradient(m, d, static_cast<std::size_t>(i) * kRows, kRows, &loss));
        losses.push_back(loss);
      }

      grad_accumulation_options o;
      o.micro_batches = n;
      auto acc32 = make(model_sizes(), o);
      auto acc16 = make(model_sizes(), o);  // fp16 micro-batch gradients, fp32 buffer
      o.buffer = formats::fp16;
      auto wrong = make(model_sizes(), o);  // the contract's "wrong dtype": an fp16 buffer
      for (int i = 0; i < n; ++i) {
        const bool last = i == n - 1;
        const auto ui = static_cast<std::size_t>(i);
        CHECK(acc32.add(micro[ui], losses[ui]) == last);
        CHECK(acc16.add(rounded_to(formats::fp16, micro[ui]), losses[ui]) == last);
        CHECK(wrong.add(micro[ui], losses[ui]) == last);
      }
      const double e32 = distance(as_double(acc32.take()), full);
      const double e16 = distance(as_double(acc16.take()), full);
      // The contract's mixed-precision invariant: the buffer is fp32 by default.
      CHECK(acc16.buffer()[0].fmt() == formats::fp32);
      CHECK(e32 < 1e-5);
      CHECK(e16 < 1e-3);
      worst32 = std::max(worst32, e32);
      worst16 = std::max(worst16, e16);
      // Equal micro-batches: the mean of the micro-batch mean losses is the full-batch mean loss.
      CHECK(acc32.mean_loss() == doctest::Approx(full_loss).epsilon(1e-12));

      // The failures the contract predicts. Without 1/N (the plain sum of the g_i) the
      // difference is about (N - 1) * ||G_full||:
      tensors unscaled = micro[0];
      for (int i = 1; i < n; ++i)
        for (std::size_t t = 0; t < unscaled.size(); ++t)
          for (std::size_t j = 0; j < unscaled[t].size(); ++j) unscaled[t][j] += micro[static_cast<std::size_t>(i)][t][j];
      const double eu = distance(as_double(unscaled), full);
      CHECK(eu > 0.5 * (n - 1) * norm(full));
      CHECK(eu > 1e-3);
      least_unscaled = std::min(least_unscaled, eu);
      // An fp16 buffer misses the fp32 tolerance.
      if (distance(as_double(wrong.take()), full) >= 1e-5) ++wrong_dtype_failures;
      ++cases;
    }
  }
  MESSAGE("GA-001: " << cases << " cases; worst ||G_accum - G_full||: fp32 " << worst32 << ", fp16 gradients "
                     << worst16 << "; without 1/N at least " << least_unscaled << "; fp16 buffer over 1e-5 in "
                     << wrong_dtype_failures << "/" << cases);
  CHECK(wrong_dtype_failures >= cases * 9 / 10);
}

TEST_CASE("FALSIFY-GA-002 gradient zeroing") {
  const std::vector<std::size_t> sizes{5, 0, 7};
  const int n = 3;
  std::vector<grad_accumulation_options> variants(5);
  for (auto& o : variants) o.micro_batches = n;
  variants[1].clip_norm = 0.5;
  variants[2].buffer = formats::bf16;
  variants[2].kahan = true;
  variants[3].buffer = formats::fp16;
  variants[3].clip_norm = 2.0;
  variants[4].kahan = true;
  int cases = 0;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      CAPTURE(v);
      CAPTURE(seed);
      std::vector<tensors> first, second;
      std::vector<double> first_loss, second_loss;
      for (int i = 0; i < n; ++i) {
        // The first cycle is large, so that any leftover would be seen.
        first.push_back(random_tensors(sizes, seed, static_cast<std::uint32_t>(10 + i), 1000.0f));
        second.push_back(random_tensors(sizes, seed, static_cast<std::uint32_t>(20 + i), 1.0f));
        first_loss.push_back(100.0 + i);
        second_loss.push_back(1.0 + i);
      }
      auto reused = make(sizes, variants[v]);
      auto fresh = make(sizes, variants[v]);
      for (int i = 0; i < n; ++i) reused.add(first[static_cast<std::size_t>(i)], first_loss[static_cast<std::size_t>(i)]);
      const auto first_codes = codes(reused.take());
      for (int i = 0; i < n; ++i) {
        reused.add(second[static_cast<std::size_t>(i)], second_loss[static_cast<std::size_t>(i)]);
        fresh.add(second[static_cast<std::size_t>(i)], second_loss[static_cast<std::size_t>(i)]);
      }
      const auto reused_codes = codes(reused.take());
      CHECK(reused_codes == codes(fresh.take()));
      CHECK(reused_codes != first_codes);
      CHECK(reused.mean_loss() == 2.0);  // (1 + 2 + 3) / 3, nothing of the first cycle's 100s
      if (v == 0) CHECK(reused_codes == bits_of(fp32_accumulate(second)));  // recomputed in binary32
      ++cases;
    }
  }
  MESSAGE("GA-002: " << cases << " cases");
}

TEST_CASE("FALSIFY-GA-003 step count") {
  int cases = 0;
  for (const int n : {1, 2, 3, 5, 8}) {
    for (const bool clip : {false, true}) {
      CAPTURE(n);
      grad_accumulation_options o;
      o.micro_batches = n;
      o.clip_norm = clip ? 0.1 : 0.0;
      const std::vector<std::size_t> sizes{4};
      auto acc = make(sizes, o);
      std::vector<int> completed_at;
      int steps = 0;
      // 3N micro-batches and then N - 1 more: an incomplete cycle never steps.
      for (int i = 1; i <= 4 * n - 1; ++i) {
        const bool done = acc.add(random_tensors(sizes, 7, static_cast<std::uint32_t>(i), 1.0f), 1.0);
        CHECK(acc.cycle_ready() == done);
        if (done) {
          completed_at.push_back(i);
          acc.take();
          CHECK(acc.cycle_position() == 0);
          ++steps;  // optimizer.step()
        }
      }
      CHECK(completed_at == std::vector<int>{n, 2 * n, 3 * n});
      CHECK(steps == 3);
      CHECK(acc.cycles_completed() == 3);
      CHECK(acc.micro_batches_seen() == 4 * n - 1);
      CHECK(acc.cycle_position() == n - 1);
      ++cases;
    }
  }
  MESSAGE("GA-003: " << cases << " cases");
}

TEST_CASE("FALSIFY-GA-004 clip after accumulate") {
  const std::vector<std::size_t> sizes{3, 4};
  const int n = 4;
  const double clip = 1.0;
  grad_accumulation_options o;
  o.micro_batches = n;
  o.clip_norm = clip;
  int cases = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    CAPTURE(seed);
    auto acc = make(sizes, o);
    for (int cycle = 0; cycle < 3; ++cycle) {
      std::vector<tensors> micro;
      for (int i = 0; i < n; ++i) {
        // |element| < 0.1, and micro-batch 2 is 10^4 times larger: norm up to about 10^3.
        const float scale = i == 2 ? 1000.0f : 0.1f;
        micro.push_back(random_tensors(sizes, seed, static_cast<std::uint32_t>(100 * cycle + i), scale));
      }
      for (int i = 0; i < n; ++i) acc.add(micro[static_cast<std::size_t>(i)], 0.0);
      const auto& taken = acc.take();
      const auto result = as_double(taken);
      CHECK(acc.clip_events() == cycle + 1);  // once per cycle, not once per micro-batch

      // The expected result, recomputed: the binary32 mean, its norm in double, PyTorch's rule.
      const tensors mean = fp32_accumulate(micro);
      const double mean_norm = norm(as_double(mean));
      REQUIRE(mean_norm > 100 * clip);
      CHECK(acc.last_norm() == doctest::Approx(mean_norm).epsilon(1e-12));
      const auto scale = static_cast<float>(clip / (mean_norm + 1e-6));
      tensors clipped = mean;
      for (auto& t : clipped)
        for (float& v : t) v *= scale;
      CHECK(codes(taken) == bits_of(clipped));
      // Its norm is clip_norm to float precision.
      CHECK(std::abs(norm(result) / clip - 1) < 1e-6);

      // Clipping each micro-batch and then averaging gives something else: the small gradients
      // pass, the large one shrinks to norm 1, and the mean has norm at most
      // (1 + 3 * 0.1 * sqrt(7)) / 4 < 0.45.
      std::vector<std::vector<double>> per_micro(sizes.size());
      for (std::size_t t = 0; t < sizes.size(); ++t) per_micro[t].assign(sizes[t], 0.0);
      for (const auto& g : micro) {
        const double gn = norm(as_double(g));
        const double coef = std::min(1.0, clip / (gn + 1e-6));
        for (std::size_t t = 0; t < g.size(); ++t)
          for (std::size_t j = 0; j < g[t].size(); ++j) per_micro[t][j] += coef * g[t][j] / n;
      }
      CHECK(norm(per_micro) < 0.5);
      CHECK(distance(result, per_micro) > 0.5);
      ++cases;
    }
    // Large micro-batch gradients whose mean is small: per-micro-batch clipping would clip twice,
    // clipping after accumulation not at all.
    grad_accumulation_options o2 = o;
    o2.micro_batches = 2;
    auto acc2 = make(sizes, o2);
    const tensors big = random_tensors(sizes, seed, 500, 1000.0f);
    tensors opposite = big;
    const tensors small = random_tensors(sizes, seed, 501, 0.1f);
    for (std::size_t t = 0; t < big.size(); ++t)
      for (std::size_t j = 0; j < big[t].size(); ++j) opposite[t][j] = -big[t][j] + small[t][j];
    acc2.add(big, 0.0);
    acc2.add(opposite, 0.0);
    const auto unclipped = codes(acc2.take());
    CHECK(acc2.clip_events() == 0);
    CHECK(acc2.last_norm() < clip);
    CHECK(unclipped == bits_of(fp32_accumulate({big, opposite})));
    ++cases;
  }
  // Clipping off: no events, however large.
  auto off = make(sizes, grad_accumulation_options{.micro_batches = 2});
  off.add(random_tensors(sizes, 1, 600, 1e30f), 0.0);
  off.add(random_tensors(sizes, 1, 601, 1e30f), 0.0);
  off.take();
  CHECK(off.clip_events() == 0);
  CHECK(off.last_norm() > 1e29);
  MESSAGE("GA-004: " << cases + 1 << " cases");
}

TEST_CASE("N = 1 is exact") {
  // Random binary32 bit patterns (all finite: subnormals and values up to FLT_MAX included) and
  // the edge values; with N = 1 and an fp32 buffer, G is g_1 bit for bit.
  std::vector<float> g{0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f, 0x1p-126f,
                       std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1.0f, -3.0f};
  for (std::uint64_t i = 0; g.size() < 20000; ++i) {
    auto bits = static_cast<std::uint32_t>(random_bits(42, 0, i));
    if (i % 4 == 1) bits &= 0x807fffffu;  // a subnormal (or zero)
    if ((bits & 0x7f800000u) == 0x7f800000u) continue;  // inf or NaN
    g.push_back(std::bit_cast<float>(bits));
  }
  const tensors in{g, {}};
  int cases = 0;
  for (const bool kahan : {false, true}) {
    CAPTURE(kahan);
    grad_accumulation_options o;
    o.kahan = kahan;  // harmless with an fp32 buffer
    auto acc = make({g.size(), 0}, o);
    for (int cycle = 0; cycle < 2; ++cycle) {
      CHECK(acc.add(in, 0.0));
      CHECK(codes(acc.take()) == bits_of(in));
      cases += static_cast<int>(g.size());
    }
  }
  // N = 2 with the same gradient twice: g / 2 + g / 2 is exactly g when g / 2 is not subnormal.
  std::vector<float> normal;
  for (const float v : g)
    if (std::abs(v) >= 0x1p-100f || v == 0) normal.push_back(v);
  auto acc2 = make({normal.size()}, grad_accumulation_options{.micro_batches = 2});
  const tensors in2{normal};
  acc2.add(in2, 0.0);
  acc2.add(in2, 0.0);
  CHECK(codes(acc2.take()) == bits_of(in2));
  cases += static_cast<int>(normal.size());
  MESSAGE("N = 1 (and N = 2, twice the same g): " << cases << " elements");
}

TEST_CASE("loss scaling: the total loss is the mean of the micro-batch losses") {
  grad_accumulation_options o;
  o.micro_batches = 4;
  auto acc = make({1}, o);
  CHECK(std::isnan(acc.mean_loss()));  // nothing added yet
  const double losses[] = {1.0, 2.0, 3.0, 4.5};
  for (int i = 0; i < 4; ++i) {
    acc.add(tensors{{1.0f}}, losses[i]);
    if (i == 1) CHECK(acc.mean_loss() == 1.5);  // a partial cycle: the mean so far
  }
  CHECK(acc.mean_loss() == 2.625);  // 10.5 / 4 exactly, not the sum 10.5
  acc.take();
  CHECK(acc.mean_loss() == 2.625);  // stays until the next cycle starts
  // The gradient of the mean loss is the mean of the gradients: 1/N scaling of g = 1 four times.
  CHECK(acc.buffer()[0].get(0) == 1.0f);

  // Random losses against a sum in double.
  int cases = 1;
  for (const int n : {2, 3, 7, 16}) {
    o.micro_batches = n;
    auto a = make({1}, o);
    for (int cycle = 0; cycle < 3; ++cycle) {
      double sum = 0;
      for (int i = 0; i < n; ++i) {
        const double loss = 10.0 * uniform(9, static_cast<std::uint32_t>(n), static_cast<std::uint64_t>(cycle * n + i));
        sum += loss;
        a.add(tensors{{0.0f}}, loss);
      }
      CHECK(a.mean_loss() == doctest::Approx(sum / n).epsilon(1e-15));
      a.take();
      ++cases;
    }
  }
  MESSAGE("loss scaling: " << cases << " cycles");
}

TEST_CASE("Kahan-compensated low-precision buffer (an experiment beyond the contract)") {
  // N = 64 micro-batches of small gradients with a common sign per element (a signal plus
  // noise): g_i[j] = m_j * (1 + 0.5 u), m_j = +-(0.5..1) * 2^-8.
  const int n = 64;
  const std::size_t size = 4096;
  std::vector<tensors> micro;
  std::vector<double> exact(size, 0.0);
  for (int i = 0; i < n; ++i) {
    std::vector<float> g(size);
    for (std::size_t j = 0; j < size; ++j) {
      const float m = std::copysign(0.5f + 0.5f * uniform(5, 0, j), symmetric(5, 1, j)) * 0x1p-8f;
      g[j] = m * (1.0f + 0.5f * symmetric(5, 2, static_cast<std::uint64_t>(i) * size + j));
      exact[j] += static_cast<double>(g[j]) / n;  // g / 64 is exact in double; 64 terms in double
    }
    micro.push_back({g});
  }
  const double exact_norm = norm({exact});
  auto run = [&](const format& f, bool kahan, double* compensated = nullptr) {
    grad_accumulation_options o;
    o.micro_batches = n;
    o.buffer = f;
    o.kahan = kahan;
    auto acc = make({size}, o);
    for (const auto& g : micro) acc.add(g, 0.0);
    const auto result = as_double(acc.take());
    if (compensated) {  // s - c: what the buffer and its compensation hold together
      auto sc = result;
      const auto c = acc.compensation()[0].values();
      for (std::size_t j = 0; j < size; ++j) sc[0][j] -= c[j];
      *compensated = distance(sc, {exact}) / exact_norm;
    }
    return distance(result, {exact}) / exact_norm;
  };
  double compensated = 0;
  const double plain_bf16 = run(formats::bf16, false);
  const double kahan_bf16 = run(formats::bf16, true, &compensated);
  const double plain_fp32 = run(formats::fp32, false);
  // The floor for any bf16 buffer: the exact mean rounded once to bf16.
  std::vector<double> floor(size);
  for (std::size_t j = 0; j < size; ++j) floor[j] = to_double(formats::bf16, from(formats::bf16, exact[j]).code);
  const double floor_bf16 = distance({floor}, {exact}) / exact_norm;
  MESSAGE("relative l2 error of G vs the exact mean, N = 64: bf16 buffer " << plain_bf16 << ", bf16 + Kahan "
          << kahan_bf16 << " (buffer - compensation: " << compensated << "), fp32 buffer " << plain_fp32
          << "; bf16 rounding floor " << floor_bf16);
  CHECK(plain_bf16 > 4 * kahan_bf16);
  CHECK(kahan_bf16 < 1.5 * floor_bf16);  // Kahan in bf16 is about as good as a bf16 result can be
  CHECK(plain_fp32 < kahan_bf16);
  CHECK(compensated < kahan_bf16 / 8);   // the pair holds far more than the bf16 result shows
}

TEST_CASE("error paths") {
  auto message = [](const grad_accumulation_options& o) {
    const auto acc = grad_accumulator::create({3}, o);
    REQUIRE_FALSE(acc.has_value());
    return acc.message();
  };
  int cases = 0;
  for (const int n : {0, -3, (1 << 24) + 1}) {
    const std::string m = message({.micro_batches = n});
    CHECK(m.find("micro_batches = " + std::to_string(n)) != std::string::npos);
    ++cases;
  }
  CHECK(message({.clip_norm = std::numeric_limits<double>::quiet_NaN()}).find("clip_norm = nan") != std::string::npos);
  CHECK(message({.clip_norm = -1}).find("clip_norm = -1 ") != std::string::npos);
  CHECK(message({.clip_norm = std::numeric_limits<double>::infinity()}).find("clip_norm = inf") != std::string::npos);
  cases += 3;
  const auto wide = parse_format("e11m4");
  REQUIRE(wide.has_value());
  CHECK(message({.buffer = *wide}).find("e11m4") != std::string::npos);
  CHECK(message({.buffer = formats::e8m0fnu}).find("e8m0fnu") != std::string::npos);  // no zero, no sign
  CHECK(message({.buffer = format{8, 4, 2000}}).find("bias 2000") != std::string::npos);    // not a valid format
  cases += 3;
  // Allowed: the largest N, clipping off, Kahan with an fp32 buffer, an fp8 buffer, no tensors.
  CHECK(grad_accumulator::create({3}, {.micro_batches = 1 << 24}).has_value());
  CHECK(grad_accumulator::create({3}, {.clip_norm = 0, .kahan = true}).has_value());
  CHECK(grad_accumulator::create({3}, {.buffer = formats::e4m3fn}).has_value());
  auto none = grad_accumulator::create({}, {});
  REQUIRE(none.has_value());
  CHECK(none->add(std::span<const std::span<const float>>{}, 1.0));
  CHECK(none->take().empty());
  CHECK(none->last_norm() == 0.0);
  cases += 4;
  MESSAGE("error paths: " << cases << " cases");
}
