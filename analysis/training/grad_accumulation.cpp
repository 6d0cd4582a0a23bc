#include "analysis/training/grad_accumulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace fpemu::training {
namespace {

constexpr int kMaxMicroBatches = 1 << 24;  // every int up to 2^24 is a float

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Programming errors of the caller, checked in every build type (see the header).
void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fpemu::training::grad_accumulator: %s\n", what);
  std::abort();
}

}  // namespace

expected<grad_accumulator> grad_accumulator::create(std::vector<std::size_t> sizes,
                                                    const grad_accumulation_options& options) {
  if (options.micro_batches < 1 || options.micro_batches > kMaxMicroBatches)
    return error{"grad accumulation: micro_batches = " + std::to_string(options.micro_batches) + " must be in 1.." +
                 std::to_string(kMaxMicroBatches)};
  if (!std::isfinite(options.clip_norm) || options.clip_norm < 0)
    return error{"grad accumulation: clip_norm = " + number(options.clip_norm) +
                 " must be finite and >= 0 (0 turns clipping off)"};
  const auto buffer = storage_format(options.buffer);
  if (!buffer) return error{"grad accumulation: buffer: " + buffer.message()};

  grad_accumulator acc;
  acc.options_ = options;
  std::size_t largest = 0;
  for (const std::size_t n : sizes) {
    acc.buffer_.emplace_back(options.buffer, n);
    if (options.kahan) acc.comp_.emplace_back(options.buffer, n);
    largest = std::max(largest, n);
  }
  acc.s_.resize(largest);
  if (options.kahan) acc.c_.resize(largest);
  acc.t_.resize(largest);
  return acc;
}

bool grad_accumulator::add(std::span<const std::span<const float>> g, double loss) {
  require(!cycle_ready(), "add() after a completed cycle that was not taken: call take() and step first");
  require(g.size() == buffer_.size(), "add(): the number of gradient tensors differs from create()'s sizes");
  for (std::size_t t = 0; t < g.size(); ++t)
    require(g[t].size() == buffer_[t].size(), "add(): a gradient tensor's size differs from create()'s size");

  const int n = options_.micro_batches;
  const bool first = pos_ == 0;  // a new cycle starts
  if (first) {
    loss_sum_ = 0;
    loss_count_ = 0;
  }
  // Division, not multiplication by 1.0f / N: g / N is correctly rounded, so N = 1 is exact and
  // a power of two N scales exactly (unless the quotient is subnormal), while 1.0f / 3 would
  // already be rounded before the multiply.
  const float fn = static_cast<float>(n);

  for (std::size_t t = 0; t < g.size(); ++t) {
    const std::size_t size = g[t].size();
    const std::span<const float> x = g[t];
    const std::span<float> s(s_.data(), size), out(t_.data(), size);
    // Zero phase: on a cycle's first micro-batch the buffer (and compensation) start at zero.
    // Every element is overwritten below, so the zero lives in the scratch: -0, the additive
    // identity, so that 0 + u keeps u's sign.
    if (first)
      std::fill(s.begin(), s.end(), -0.0f);
    else
      buffer_[t].load(0, s);
    if (!options_.kahan) {
      for (std::size_t j = 0; j < size; ++j) out[j] = s[j] + x[j] / fn;
      buffer_[t].store(0, out);
      continue;
    }
    const std::span<float> c(c_.data(), size);
    if (first)
      std::fill(c.begin(), c.end(), 0.0f);
    else
      comp_[t].load(0, c);
    for (std::size_t j = 0; j < size; ++j) {
      c[j] = x[j] / fn - c[j];  // y
      out[j] = s[j] + c[j];
    }
    buffer_[t].store(0, out);  // s' = store(s + y)
    buffer_[t].load(0, out);   // s' as the buffer holds it
    for (std::size_t j = 0; j < size; ++j) c[j] = (out[j] - s[j]) - c[j];
    comp_[t].store(0, c);  // c = store((s' - s) - y)
  }

  loss_sum_ += loss;
  ++loss_count_;
  ++pos_;
  ++seen_;
  if (pos_ < n) return false;
  ++cycles_;
  return true;
}

bool grad_accumulator::add(const std::vector<std::vector<float>>& g, double loss) {
  std::vector<std::span<const float>> spans(g.begin(), g.end());
  return add(std::span<const std::span<const float>>(spans), loss);
}

const std::vector<stored_tensor>& grad_accumulator::take() {
  require(cycle_ready(), "take() before a cycle was completed (or twice for one cycle)");
  // The two-level order of the header: chunk sums, then their sum in (tensor, chunk) order.
  double sum_squares = 0;
  for (std::size_t t = 0; t < buffer_.size(); ++t) {
    const std::size_t n = buffer_[t].size();
    buffer_[t].load(0, std::span<float>(s_.data(), n));
    for (std::size_t first = 0; first < n; first += norm_chunk)
      sum_squares += chunk_sum_squares(s_.data() + first, std::min(norm_chunk, n - first));
  }
  last_norm_ = std::sqrt(sum_squares);
  const clip_decision clip = clip_for(options_.clip_norm, last_norm_);  // torch.nn.utils.clip_grad_norm_
  last_scale_ = clip.scale;
  if (clip.apply) {
    for (std::size_t t = 0; t < buffer_.size(); ++t) {
      const std::span<float> s(s_.data(), buffer_[t].size());
      buffer_[t].load(0, s);
      for (float& v : s) v *= last_scale_;
      buffer_[t].store(0, s);
    }
    ++clips_;
  }
  pos_ = 0;
  return buffer_;
}

double grad_accumulator::mean_loss() const {
  if (loss_count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return loss_sum_ / loss_count_;
}

}  // namespace fpemu::training
