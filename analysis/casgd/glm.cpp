// Losses, residuals and data for the CA-SGD experiments (Devarakonda et al. 2026, Sections 2.1,
// 3.1, 7.1).
#include "analysis/casgd/glm.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "analysis/training/datasets.hpp"
#include "fpemu/random.hpp"

namespace fpemu::casgd {

std::string_view to_string(loss_kind l) {
  switch (l) {
    case loss_kind::logistic: return "logistic";
    case loss_kind::linear: return "linear";
    case loss_kind::poisson: return "poisson";
  }
  return "?";
}

expected<loss_kind> parse_loss(std::string_view name) {
  for (loss_kind l : {loss_kind::logistic, loss_kind::linear, loss_kind::poisson})
    if (name == to_string(l)) return l;
  return error{"unknown loss '" + std::string(name) + "' (expected logistic, linear or poisson)"};
}

namespace {
// log(1 + e^t) without overflow.
double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }
// sigma(t) = 1 / (1 + e^-t), without overflow for either sign.
double sigmoid(double t) {
  if (t >= 0) return 1 / (1 + std::exp(-t));
  const double e = std::exp(t);
  return e / (1 + e);
}
}  // namespace

double loss_value(loss_kind l, double r, double y) {
  switch (l) {
    case loss_kind::logistic: return softplus(-y * r);
    case loss_kind::linear: return 0.5 * (r - y) * (r - y);
    case loss_kind::poisson: return std::exp(r) - y * r;
  }
  return 0;
}

double residual(loss_kind l, double r, double y) {
  switch (l) {
    // y (1 - sigma(y r)) = y sigma(-y r): the second form keeps the small values accurate.
    case loss_kind::logistic: return y * sigmoid(-y * r);
    case loss_kind::linear: return y - r;
    case loss_kind::poisson: return y - std::exp(r);
  }
  return 0;
}

double lipschitz(loss_kind l) {
  switch (l) {
    case loss_kind::logistic: return 0.25;
    case loss_kind::linear: return 1;
    case loss_kind::poisson: return std::numeric_limits<double>::infinity();
  }
  return 0;
}

double mean_loss(loss_kind l, const std::vector<double>& margins, const std::vector<double>& y) {
  double sum = 0;
  for (std::size_t i = 0; i < y.size(); ++i) sum += loss_value(l, margins[i], y[i]);
  return y.empty() ? 0 : sum / static_cast<double>(y.size());
}

namespace {

constexpr std::uint32_t kFeatureStream = 0x73796e41;  // "synA"
constexpr std::uint32_t kWeightStream = 0x73796e57;   // "synW"
constexpr std::uint32_t kLabelStream = 0x73796e59;    // "synY"

// A uniform double in (0, 1): 53 random bits, never 0 (log is taken).
double uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  return (static_cast<double>(random_bits(seed, stream, index) >> 11) + 0.5) * 0x1p-53;
}

// Box-Muller from two uniforms of one counter pair: depends on (seed, stream, index) only.
double gaussian(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const double u1 = uniform(seed, stream, 2 * index), u2 = uniform(seed, stream, 2 * index + 1);
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

// Knuth's product method: fine for the means e^{a^T w} of unit rows (a few tens at most).
double poisson_draw(double mean, std::uint64_t seed, std::uint64_t row) {
  const double limit = std::exp(-mean);
  double p = 1;
  for (std::uint64_t k = 0;; ++k) {
    p *= uniform(seed, kLabelStream, row * 1024 + k);
    if (p <= limit || k == 1023) return static_cast<double>(k);
  }
}

void normalise_rows(glm_data& d) {
  for (int i = 0; i < d.m; ++i) {
    double* row = d.A.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(d.n);
    double ss = 0;
    for (int j = 0; j < d.n; ++j) ss += row[j] * row[j];
    if (ss == 0) continue;
    const double norm = std::sqrt(ss);
    for (int j = 0; j < d.n; ++j) row[j] /= norm;
  }
}

std::string label_rule(loss_kind l) {
  switch (l) {
    case loss_kind::logistic: return "-1 or +1";
    case loss_kind::linear: return "any finite value";
    case loss_kind::poisson: return "a non-negative integer";
  }
  return "";
}

bool label_ok(loss_kind l, double y) {
  switch (l) {
    case loss_kind::logistic: return y == -1 || y == 1;
    case loss_kind::linear: return std::isfinite(y);
    case loss_kind::poisson: return y >= 0 && y == std::floor(y) && std::isfinite(y);
  }
  return false;
}

}  // namespace

glm_data synthetic(int m, int n, loss_kind l, std::uint64_t seed) {
  glm_data d;
  d.m = m;
  d.n = n;
  d.source = "synth:" + std::to_string(m) + "," + std::to_string(n) + " (seed " + std::to_string(seed) + ")";
  d.A.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < d.A.size(); ++k) d.A[k] = gaussian(seed, kFeatureStream, k);
  normalise_rows(d);
  std::vector<double> w(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) w[static_cast<std::size_t>(j)] = gaussian(seed, kWeightStream, static_cast<std::uint64_t>(j));
  d.y.resize(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    double t = 0;
    for (int j = 0; j < n; ++j) t += d.A[static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)] * w[static_cast<std::size_t>(j)];
    const auto row = static_cast<std::uint64_t>(i);
    double& y = d.y[static_cast<std::size_t>(i)];
    switch (l) {
      case loss_kind::logistic: y = uniform(seed, kLabelStream, row) < sigmoid(4 * t) ? 1 : -1; break;
      case loss_kind::linear: y = t + 0.1 * gaussian(seed, kLabelStream, row); break;
      case loss_kind::poisson: y = poisson_draw(std::exp(t), seed, row); break;
    }
  }
  return d;
}

namespace {

// "M,N" with 1 <= M, N and M*N at most 2^28 doubles (2 GiB).
expected<std::pair<int, int>> parse_synth_size(std::string_view spec) {
  const std::string s(spec);
  const std::size_t comma = s.find(',');
  auto whole = [](const std::string& t, long& v) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stol(t);
    return true;
  };
  long m = 0, n = 0;
  if (comma == std::string::npos || !whole(s.substr(0, comma), m) || !whole(s.substr(comma + 1), n))
    return error{"--data synth:" + s + ": expected synth:M,N with M rows and N features (positive integers)"};
  if (m < 1 || n < 1 || m * n > (1L << 28))
    return error{"--data synth:" + s + ": M and N must be at least 1 and M*N at most 268435456 (2^28), got M=" +
                 std::to_string(m) + " N=" + std::to_string(n)};
  return std::pair<int, int>{static_cast<int>(m), static_cast<int>(n)};
}

}  // namespace

expected<glm_data> load_data(std::string_view spec, loss_kind l, std::uint64_t data_seed) {
  if (spec.starts_with("synth:")) {
    auto size = parse_synth_size(spec.substr(6));
    if (!size) return error{size.message()};
    return synthetic(size->first, size->second, l, data_seed);
  }
  std::string path(spec);
  if (path == "heart_scale") path = training::default_heart_scale_path();
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  auto read = csv ? training::read_csv(path, 0) : training::read_libsvm(path);
  if (!read) return error{read.message()};
  const training::dataset& t = *read;
  if (t.cols < 1) return error{t.source + ": no features (every row has only a label)"};
  for (std::size_t i = 0; i < t.y.size(); ++i) {
    if (label_ok(l, t.y[i])) continue;
    const std::string where = i < t.lines.size() ? ":" + std::to_string(t.lines[i]) : " row " + std::to_string(i + 1);
    char label[32];
    std::snprintf(label, sizeof label, "%.9g", static_cast<double>(t.y[i]));
    return error{t.source + where + ": label " + label + " is not valid for " + std::string(to_string(l)) +
                 " regression (labels must be " + label_rule(l) + ")"};
  }
  glm_data d;
  d.m = t.rows;
  d.n = t.cols;
  d.source = t.source;
  d.A.assign(t.x.begin(), t.x.end());
  d.y.assign(t.y.begin(), t.y.end());
  normalise_rows(d);
  return d;
}

}  // namespace fpemu::casgd
