// Generalized linear models for CA-SGD (Devarakonda et al. 2026, Sections 2.1 and 3.1): the loss
// L(r, y) of a margin r = a^T x, the residual delta = -dL/dr and its Lipschitz constant L_sigma,
// and the data they run on, held in binary64 with every row scaled to unit l2 norm (Assumption
// 5.1).
//
//   logistic  L = log(1 + e^{-y r})   delta = y (1 - sigma(y r))   L_sigma = 1/4   y in {-1, +1}
//   linear    L = (r - y)^2 / 2       delta = y - r                L_sigma = 1     y finite
//   poisson   L = e^r - y r           delta = y - e^r              L_sigma = inf   y in {0, 1, 2, ...}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fpemu/expected.hpp"

namespace fpemu::casgd {

enum class loss_kind : std::uint8_t { logistic, linear, poisson };
std::string_view to_string(loss_kind l);
expected<loss_kind> parse_loss(std::string_view name);

// Evaluated in binary64; the logistic forms are the overflow-free ones.
double loss_value(loss_kind l, double r, double y);
double residual(loss_kind l, double r, double y);
double lipschitz(loss_kind l);  // infinity for poisson

struct glm_data {
  int m = 0, n = 0;
  std::vector<double> A;  // m x n, row-major, rows of unit l2 norm (all-zero rows stay zero)
  std::vector<double> y;  // m labels
  std::string source;     // for messages and reports
};

// "synth:M,N" (synthetic, below), or a file: ".csv" is CSV with the label in the first column,
// anything else LIBSVM; "heart_scale" is the copy in Debian's liblinear-tools. Labels must suit
// the loss; errors name the file, the line and the label set. Rows are l2-normalised.
expected<glm_data> load_data(std::string_view spec, loss_kind l, std::uint64_t data_seed);

// Like the paper's synth / Poisson-synth: entries N(0,1), rows normalised, a planted weight
// vector w with entries N(0,1) (so a^T w is about N(0,1)) and labels drawn from the model:
// logistic y = +1 with probability sigma(4 a^T w); linear y = a^T w + 0.1 N(0,1); poisson
// y ~ Poisson(exp(a^T w)). The feature matrix depends on the seed only, not on the loss.
glm_data synthetic(int m, int n, loss_kind l, std::uint64_t seed);

// F(x) = m^-1 sum_i L(margins_i, y_i), summed in row order in binary64.
double mean_loss(loss_kind l, const std::vector<double>& margins, const std::vector<double>& y);

}  // namespace fpemu::casgd
