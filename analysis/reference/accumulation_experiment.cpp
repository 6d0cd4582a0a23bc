// See accumulation_experiment.hpp.
#include "analysis/reference/accumulation_experiment.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "analysis/reference/bounds.hpp"
#include "analysis/reference/measured_error.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/presets.hpp"

namespace fpemu::analysis {
namespace {

struct method {
  std::string name;
  accumulator_model model;
  format out;  // the result is read in this format
};

std::vector<method> methods() {
  accumulator_model fp8;
  fp8.acc = formats::e4m3fn;
  fp8.acc_rounding = {round_mode::nearest_even, overflow_policy::saturate, 16};
  const tensor_core_preset ds = find_preset("h100-e4m3-deepseek").value();
  return {{"fp8 (e4m3fn) accumulator", fp8, formats::e4m3fn},
          {"h100-e4m3-fastaccum", find_preset("h100-e4m3-fastaccum").value().model, formats::e8m13},
          {"h100-e4m3-deepseek (fp32 register)", ds.model, formats::fp32},
          {"h100-e4m3-deepseek (bf16 output)", ds.model, ds.output},
          {"fp32 accumulator", accumulator_model{}, formats::fp32}};
}

constexpr double kLambda = 6.0;  // 3 gives a vacuous probability (1 - 2n e^-4.5 < 0) for n > 45

void bounds_for(accumulation_row& row, int m) {
  const auto n = static_cast<std::uint64_t>(row.k);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto value = [](const bounds::coefficient& c) { return c.valid ? c.value : std::numeric_limits<double>::infinity(); };
  switch (m) {
    case 0:  // e4m3fn, nearest: u = 2^-4
      row.deterministic_bound = value(bounds::dot(n, 0x1p-4));
      row.probabilistic_bound = value(bounds::dot_probabilistic(n, 0x1p-4, kLambda).c);
      break;
    case 1:  // blocks of 32, F = 13, e8m13 toward zero: 2u with u = 2^-14
      row.deterministic_bound = value(bounds::truncating_block_dot(n, 32, 13, 0x1p-13));
      row.probabilistic_bound = nan;
      break;
    case 2:
    case 3: {  // each group of 128 as above, the groups summed in fp32 (nearest)
      const double group = value(bounds::truncating_block_dot(128, 32, 13, 0x1p-13));
      const double across = value(bounds::gamma((n + 127) / 128, 0x1p-24));
      row.deterministic_bound = (1 + group) * (1 + across) - 1;
      if (m == 3) row.deterministic_bound += 0x1p-9 * (1 + row.deterministic_bound);  // bf16 output
      row.probabilistic_bound = nan;
      break;
    }
    default:
      row.deterministic_bound = value(bounds::dot(n, 0x1p-24));
      row.probabilistic_bound = value(bounds::dot_probabilistic(n, 0x1p-24, kLambda).c);
  }
}

}  // namespace

std::vector<accumulation_row> accumulation_experiment(const std::vector<int>& ks, int samples, std::uint64_t seed,
                                                      const std::function<void(int, int)>& progress) {
  const std::vector<method> ms = methods();
  std::vector<accumulation_row> rows;
  int done = 0;
  const int total = static_cast<int>(ks.size()) * samples;
  for (int k : ks) {
    std::vector<accumulation_row> per(ms.size());
    std::vector<std::vector<double>> relative(ms.size());
    for (std::size_t m = 0; m < ms.size(); ++m) {
      per[m].method = ms[m].name;
      per[m].k = k;
      per[m].samples = samples;
    }
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(k));
    std::normal_distribution<double> normal(0.0, 0.5);
    std::vector<std::uint32_t> a(static_cast<std::size_t>(k)), b(static_cast<std::size_t>(k));
    for (int s = 0; s < samples; ++s) {
      const rounding rne{round_mode::nearest_even, overflow_policy::saturate, 16};
      for (int i = 0; i < k; ++i) {
        a[static_cast<std::size_t>(i)] = from(formats::e4m3fn, normal(rng), rne).code;
        b[static_cast<std::size_t>(i)] = from(formats::e4m3fn, normal(rng), rne).code;
      }
      exact_accumulator exact, magnitude;
      for (int i = 0; i < k; ++i) {
        const unpacked x = decode(formats::e4m3fn, a[static_cast<std::size_t>(i)]);
        const unpacked y = decode(formats::e4m3fn, b[static_cast<std::size_t>(i)]);
        exact.add_product(x, y);
        magnitude.add_product(unpacked{x.cls, false, false, x.exp, x.sig}, unpacked{y.cls, false, false, y.exp, y.sig});
      }
      const double exact_value = exact.to_double(), abs_sum = magnitude.to_double();
      for (std::size_t m = 0; m < ms.size(); ++m) {
        dot_accumulator acc(ms[m].model, formats::e4m3fn, formats::e4m3fn);
        for (int i = 0; i < k; ++i) acc.add_product(a[static_cast<std::size_t>(i)], b[static_cast<std::size_t>(i)]);
        const std::uint32_t code = acc.result(ms[m].out).code;
        exact_accumulator diff = exact;
        diff.subtract(decode(ms[m].out, code));
        const double err = std::fabs(diff.to_double());
        const double rel = exact_value != 0 ? err / std::fabs(exact_value) : (err == 0 ? 0 : INFINITY);
        per[m].mean_relative_error += rel / samples;
        relative[m].push_back(rel);
        per[m].max_relative_error = std::max(per[m].max_relative_error, rel);
        per[m].max_normalised_error = std::max(per[m].max_normalised_error, abs_sum > 0 ? err / abs_sum : 0.0);
      }
      if (progress) progress(++done, total);
    }
    for (std::size_t m = 0; m < ms.size(); ++m) {
      per[m].median_relative_error = quantile(relative[m], 0.5);
      per[m].p95_relative_error = quantile(relative[m], 0.95);
      bounds_for(per[m], static_cast<int>(m));
      rows.push_back(per[m]);
    }
  }
  return rows;
}

}  // namespace fpemu::analysis
