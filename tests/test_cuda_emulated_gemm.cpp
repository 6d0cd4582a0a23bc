// The CUDA emulated GEMM's element function, compiled for the host, against analysis::gemm's
// reference loop (block-FMA accumulator, no promotion) bit for bit, and the API's errors.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "cuda/emulated_gemm.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;

namespace {

std::vector<std::uint32_t> random_codes(const format& f, std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 2.0);
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto p = rng() % 10;
    if (p == 0) out.push_back(static_cast<std::uint32_t>(rng()) & code_mask(f));  // any code, specials too
    else if (p == 1) out.push_back(0);
    else out.push_back(from(f, normal(rng), rounding{round_mode::nearest_even, overflow_policy::saturate}).code);
  }
  return out;
}

}  // namespace

TEST_CASE("emulated_gemm_element == analysis::gemm (block_fma model) for MX, FP8 and user formats") {
  struct model_case {
    const char* name;
    block_fma_model model;
  };
  std::vector<model_case> models = {{"h100-e4m3", find_preset("h100-e4m3").value().model.block},
                                    {"a100-fp16", find_preset("a100-fp16").value().model.block},
                                    {"n=4 F=8 e8m13 RNE", block_fma_model{4, 8, alignment_rounding::nearest,
                                                                          formats::e8m13, rounding{}}},
                                    {"n=7 F=3 fp16", block_fma_model{7, 3, alignment_rounding::truncate, formats::fp16,
                                                                     rounding{}}}};
  const std::vector<format> inputs = {formats::e2m1fn, formats::e3m2fn, formats::e2m3fn, formats::e4m3fn,
                                      parse_format("e3m4").value(), parse_format("e5m3").value()};
  std::mt19937_64 rng(11);
  long cases = 0;
  for (const auto& mc : models)
    for (const format& fa : inputs)
      for (const format& fb : {fa, formats::e2m1fn}) {
        const int m = 5, n = 6, k = 1 + static_cast<int>(rng() % 100);
        analysis::scaled_matrix a;
        a.rows = m;
        a.cols = k;
        a.fmt = fa;
        a.codes = random_codes(fa, static_cast<std::size_t>(m) * k, rng);
        analysis::scaled_matrix b;
        b.rows = k;
        b.cols = n;
        b.fmt = fb;
        b.codes = random_codes(fb, static_cast<std::size_t>(k) * n, rng);
        analysis::gemm_options o;
        o.acc.kind = accumulator_kind::block_fma;
        o.acc.block = mc.model;
        o.out = mc.model.acc;
        o.fast_kernels = false;
        o.threads = 1;
        const auto want = analysis::gemm(a, b, {}, o);
        REQUIRE_MESSAGE(want.has_value(), want.message());
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            const std::uint32_t got =
                cuda::emulated_gemm_element(mc.model, fa, fb, a.codes.data(), b.codes.data(), n, k, i, j);
            REQUIRE_MESSAGE(got == (*want)[static_cast<std::size_t>(i) * n + j],
                            mc.name << " " << to_string(fa) << " x " << to_string(fb) << " k=" << k << " at " << i
                                    << "," << j);
            ++cases;
          }
      }
  MESSAGE(cases << " outputs compared");
  CHECK(cases == 4 * 6 * 2 * 30);
}

TEST_CASE("emulated_gemm API: shapes, codes and model parameters are checked before any device") {
  const block_fma_model model = find_preset("h100-e4m3").value().model.block;
  const std::vector<std::uint32_t> four(4, 0), three(3, 0);
  auto e = cuda::emulated_gemm(model, formats::e2m1fn, formats::e2m1fn, 2, 2, 2, four, three);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.message() == "B has 3 codes; 2x2 by 2x2 needs 4");
  const std::vector<std::uint32_t> big = {0, 0, 16, 0};
  e = cuda::emulated_gemm(model, formats::e2m1fn, formats::e2m1fn, 2, 2, 2, big, four);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.message() == "A[2] = 0x10 is not a e2m1fn code (codes are 0..0xf)");
  e = cuda::emulated_gemm(model, formats::e2m1fn, formats::e2m1fn, 0, 2, 2, four, four);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.message() == "M = 0 is out of range: valid 1..1048576");
  block_fma_model wide = model;
  wide.block_size = 65;
  e = cuda::emulated_gemm(wide, formats::e2m1fn, formats::e2m1fn, 2, 2, 2, four, four);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.message() == "block size 65 is out of range for the GPU: valid 1..64");
  if (!cuda::current_device()) {
    e = cuda::emulated_gemm(model, formats::e2m1fn, formats::e2m1fn, 2, 2, 2, four, four);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.message() == cuda::current_device().message());
  }
}
