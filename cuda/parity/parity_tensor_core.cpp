// GPU parity checks of the tensor-core kernels (mma.sync, wgmma: GEMMs against the device's preset,
// single instructions against the published vectors and directed cases) and of the emulated GEMM.
#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>

#include "analysis/reference/gemm.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/presets.hpp"
#include "parity_runner.hpp"

namespace fpemu::cuda::parity_detail {

// The emulator's preset for this GPU and input format, e.g. h100-e4m3 on compute capability 9.0.
static expected<tensor_core_preset> device_preset(const device_info& d, const format& a, const format& b) {
  const std::string gpu = d.major >= 9 ? "h100" : (d.major == 8 && d.minor >= 9 ? "ada" : "a100");
  std::string input = a == formats::fp16 ? "fp16" : a == formats::bf16 ? "bf16" : a == formats::tf32 ? "tf32"
                      : a == formats::e4m3fn ? "e4m3" : "e5m2";
  auto p = find_preset(gpu + "-" + input);
  if (!p || a == b) return p;
  return with_inputs(*p, a, b);
}

static analysis::scaled_matrix random_matrix(const format& f, int rows, int cols, std::mt19937_64& rng) {
  analysis::scaled_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.fmt = f;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < rows * cols; ++i) {
    const double v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 8) - 4);
    m.codes.push_back(from(f, v, rounding{round_mode::nearest_even, overflow_policy::saturate}).code);
  }
  return m;
}

// DeepSeek-V3 tile scales: A per row per `group` of K, B per 128 x `group` block (analysis::gemm's
// layout: block (j / 128, g) at (j / 128) * groups + g). Powers of two and small integers, so that
// the products of scales are exact and the check is about the accumulation.
static void add_tile_scales(analysis::scaled_matrix& a, analysis::scaled_matrix& b, int group, std::mt19937_64& rng) {
  const int groups = a.cols / group;
  a.scale_kind = b.scale_kind = analysis::scaling::tile_1x128;
  for (int i = 0; i < a.rows * groups; ++i)
    a.scales.push_back(std::bit_cast<std::uint32_t>(std::ldexp(1.0f, static_cast<int>(rng() % 5) - 2)));
  for (int i = 0; i < groups * (b.cols / 128); ++i)
    b.scales.push_back(std::bit_cast<std::uint32_t>(1.5f + static_cast<float>(rng() % 4)));
}

void tensor_core_gemms(runner& run) {
  struct shape {
    tensor_core_instruction ins;
    const char* name;
    format a, b;
    int min_major;
  };
  const shape shapes[] = {
      {tensor_core_instruction::mma_sync, "mma.sync", formats::fp16, formats::fp16, 8},
      {tensor_core_instruction::mma_sync, "mma.sync", formats::bf16, formats::bf16, 8},
      {tensor_core_instruction::mma_sync, "mma.sync", formats::tf32, formats::tf32, 8},
      {tensor_core_instruction::wgmma, "wgmma", formats::fp16, formats::fp16, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::bf16, formats::bf16, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::e4m3fn, formats::e4m3fn, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::e5m2, formats::e5m2, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::e4m3fn, formats::e5m2, 9}};
  // At least 10^6 dot products per preset and instruction (10^4 with --quick).
  const int m = run.quick() ? 128 : 1024, n = m, k = run.quick() ? 256 : 1024;
  for (const shape& s : shapes) {
    if (run.device().major < s.min_major) continue;
    for (int promote : {0, 128}) {
      const std::string kernel = std::string("gemm ") + s.name + " " + to_string(s.a) + "x" + to_string(s.b) +
                                 (promote ? " promote 128 with tile scales" : "") + " " + std::to_string(m) + "x" +
                                 std::to_string(n) + "x" + std::to_string(k);
      if (!run.wanted(kernel)) continue;
      parity_check c = named(kernel);
      auto preset = device_preset(run.device(), s.a, s.b);
      if (!preset) {
        c.error = preset.message();
        run.add(std::move(c));
        continue;
      }
      analysis::scaled_matrix a = random_matrix(s.a, m, k, run.rng()), b = random_matrix(s.b, k, n, run.rng());
      analysis::gemm_options go;
      go.acc = preset->model;
      go.acc.promote_every = promote;
      tensor_core_gemm_args g{s.ins, s.a, s.b, m, n, k, a.codes, b.codes, promote, {}, {}};
      if (promote) {
        add_tile_scales(a, b, promote, run.rng());
        const int groups = k / promote;
        for (int i = 0; i < m * groups; ++i) g.a_scale.push_back(std::bit_cast<float>(a.scales[static_cast<std::size_t>(i)]));
        for (int gi = 0; gi < groups; ++gi)  // repeated per column for the kernel's G x N layout
          for (int j = 0; j < n; ++j)
            g.b_scale.push_back(std::bit_cast<float>(b.scales[static_cast<std::size_t>((j / 128) * groups + gi)]));
      }
      auto want = analysis::gemm(a, b, {}, go);
      if (!want) {
        c.error = "emulator: " + want.message();
        run.add(std::move(c));
        continue;
      }
      run.add(compare(kernel, formats::fp32, tensor_core_gemm(g), *want));
    }
  }
}

// The fast promoted FP8 GEMM (promoted_fp8_gemm) against the emulator's preset with promotion
// every 128 and DeepSeek-V3 tile scales, on its two tile widths (a grid that fills the GPU takes
// 128-wide tiles, a skinny one 64-wide).
void promoted_fp8_gemms(runner& run) {
  if (run.device().major != 9 || run.device().minor != 0) return;
  struct shape {
    format a, b;
    int m, n, k;
  };
  const shape shapes[] = {{formats::e4m3fn, formats::e4m3fn, 2048, 2048, 512},
                          {formats::e4m3fn, formats::e4m3fn, 128, 4096, 1024},
                          {formats::e4m3fn, formats::e5m2, 2048, 2048, 256},
                          {formats::e5m2, formats::e4m3fn, 256, 1024, 384},
                          {formats::e5m2, formats::e5m2, 128, 2048, 256}};
  for (const shape& s : shapes) {
    const int m = run.quick() ? 128 : s.m, n = run.quick() ? 256 : s.n, k = s.k;
    const std::string kernel = "promoted_fp8_gemm " + to_string(s.a) + "x" + to_string(s.b) + " " + std::to_string(m) +
                               "x" + std::to_string(n) + "x" + std::to_string(k) + " vs the preset, promote 128";
    if (!run.wanted(kernel)) continue;
    parity_check c = named(kernel);
    auto preset = device_preset(run.device(), s.a, s.b);
    if (!preset) {
      c.error = preset.message();
      run.add(std::move(c));
      continue;
    }
    analysis::scaled_matrix a = random_matrix(s.a, m, k, run.rng()), b = random_matrix(s.b, k, n, run.rng());
    add_tile_scales(a, b, 128, run.rng());
    analysis::gemm_options go;
    go.acc = preset->model;
    go.acc.promote_every = 128;
    auto want = analysis::gemm(a, b, {}, go);
    if (!want) {
      c.error = "emulator: " + want.message();
      run.add(std::move(c));
      continue;
    }
    fp8_gemm_args g{s.a, s.b, m, n, k, a.codes, std::vector<std::uint32_t>(static_cast<std::size_t>(n) * k), {}, {}};
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < n; ++j) g.bt_codes[static_cast<std::size_t>(j) * k + kk] = b.codes[static_cast<std::size_t>(kk) * n + j];
    for (std::uint32_t v : a.scales) g.a_scale.push_back(std::bit_cast<float>(v));
    for (std::uint32_t v : b.scales) g.b_scale.push_back(std::bit_cast<float>(v));
    run.add(compare(kernel, formats::fp32, promoted_fp8_gemm(g), *want));
  }
}

static std::vector<std::vector<std::uint32_t>> read_rows(const std::string& path, int base) {
  std::ifstream in(path);
  std::vector<std::vector<std::uint32_t>> rows;
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::uint32_t> row;
    while (words >> word) row.push_back(static_cast<std::uint32_t>(std::stoul(word, nullptr, base)));
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

void published_vectors(runner& run) {
  const std::string gpu = run.device().major >= 9 ? "H100" : (run.device().major == 8 && run.device().minor >= 9 ? "Ada" : "A100");
  struct set {
    const char* input;
    format f;
    tensor_core_instruction ins;
    int ins_k;
  };
  const set sets[] = {{"fp16", formats::fp16, tensor_core_instruction::mma_sync, 16},
                      {"bf16", formats::bf16, tensor_core_instruction::mma_sync, 16},
                      {"tf32", formats::tf32, tensor_core_instruction::mma_sync, 8},
                      {"fp16", formats::fp16, tensor_core_instruction::wgmma, 16},
                      {"bf16", formats::bf16, tensor_core_instruction::wgmma, 16},
                      {"E4M3", formats::e4m3fn, tensor_core_instruction::wgmma, 32},
                      {"E5M2", formats::e5m2, tensor_core_instruction::wgmma, 32}};
  for (const set& s : sets) {
    const bool wg = s.ins == tensor_core_instruction::wgmma;
    if (wg && run.device().major != 9) continue;
    const std::string dir = run.vectors_dir() + "/" + gpu + "/" + s.input + "/";
    const std::string tag = gpu + "_" + s.input;
    const std::string kernel = std::string("single ") + (wg ? "wgmma " : "mma.sync ") + s.input + " vs " + gpu +
                               " hardware vectors";
    if (!run.wanted(kernel)) continue;
    const auto a = read_rows(dir + "a_" + tag + ".txt", 16), b = read_rows(dir + "b_" + tag + ".txt", 16);
    const auto cw = read_rows(dir + "c_" + gpu + "_fp32.txt", 2), d = read_rows(dir + "d_" + gpu + "_fp32.txt", 2);
    if (d.empty() || a.size() != d.size() || b.size() != d.size() || cw.size() != d.size()) continue;  // no such set
    const bool fp8 = s.f == formats::e4m3fn || s.f == formats::e5m2;
    const std::size_t cases = run.quick() ? 200 : d.size();
    std::vector<std::uint32_t> got, want;
    parity_check c = named(kernel);
    for (std::size_t i = 0; i < cases && i < d.size(); ++i) {
      // Exact codes of the input format, zero-padded to the instruction's K (zero terms drop out).
      std::vector<std::uint32_t> ac(static_cast<std::size_t>(s.ins_k), 0), bc(static_cast<std::size_t>(s.ins_k), 0);
      for (std::size_t j = 0; j < a[i].size() && j < ac.size(); ++j) {
        ac[j] = from(s.f, std::bit_cast<float>(a[i][j] & (s.f == formats::tf32 ? 0xffffe000u : ~0u))).code;
        bc[j] = from(s.f, std::bit_cast<float>(b[i][j] & (s.f == formats::tf32 ? 0xffffe000u : ~0u))).code;
      }
      auto r = single_instruction(s.ins, s.f, s.f, ac, bc, fp8 ? 0 : cw[i][0]);
      if (!r) {
        c.error = r.message();
        break;
      }
      got.push_back(*r);
      want.push_back(d[i][0]);
    }
    if (c.error.empty()) c = compare(kernel, formats::fp32, got, want);
    run.add(std::move(c));
  }
}

// Directed single-instruction cases in the spirit of Fasi et al. (PeerJ CS 2021): a product of 1
// next to one of 2^-j probes the alignment width F and the truncation; C = +-1 and +-2^j probe
// the normalisation and the rounding into the accumulator; x*y + (-x)*y the sign of a cancelled
// block; the smallest subnormal input whether subnormals are kept. Compared with the emulator's
// preset (tensor_core_dot), not with recorded hardware outputs.
void directed_vectors(runner& run) {
  struct set {
    format f;
    tensor_core_instruction ins;
    int ins_k;
  };
  const set sets[] = {{formats::fp16, tensor_core_instruction::mma_sync, 16},
                      {formats::bf16, tensor_core_instruction::mma_sync, 16},
                      {formats::tf32, tensor_core_instruction::mma_sync, 8},
                      {formats::fp16, tensor_core_instruction::wgmma, 16},
                      {formats::bf16, tensor_core_instruction::wgmma, 16},
                      {formats::e4m3fn, tensor_core_instruction::wgmma, 32},
                      {formats::e5m2, tensor_core_instruction::wgmma, 32}};
  for (const set& s : sets) {
    const bool wg = s.ins == tensor_core_instruction::wgmma;
    if ((wg && run.device().major != 9) || run.device().major < 8) continue;
    const std::string kernel = std::string("single ") + (wg ? "wgmma " : "mma.sync ") + to_string(s.f) +
                               " directed vectors vs the preset";
    if (!run.wanted(kernel)) continue;
    parity_check c = named(kernel);
    auto preset = device_preset(run.device(), s.f, s.f);
    if (!preset) {
      c.error = preset.message();
      run.add(std::move(c));
      continue;
    }
    const bool fp8 = s.f == formats::e4m3fn || s.f == formats::e5m2;
    const auto bits = [](double v) { return std::bit_cast<std::uint32_t>(static_cast<float>(v)); };
    const auto representable = [&](double v) { return from(s.f, v).flags == 0; };
    std::vector<std::uint32_t> got, want;
    auto run_case = [&](const std::vector<double>& a, const std::vector<double>& b, double cv) {
      std::vector<std::uint32_t> ab(static_cast<std::size_t>(s.ins_k), 0), bb = ab, ac = ab, bc = ab;
      for (std::size_t j = 0; j < a.size(); ++j) {
        if (!representable(a[j]) || !representable(b[j])) return;
        ab[j] = bits(a[j]);
        bb[j] = bits(b[j]);
        ac[j] = from(s.f, a[j]).code;
        bc[j] = from(s.f, b[j]).code;
      }
      if (fp8 && wg) cv = 0;  // wgmma fp8 starts from a zero accumulator
      auto d = single_instruction(s.ins, s.f, s.f, ac, bc, bits(cv));
      auto e = tensor_core_dot(*preset, false, ab, bb, bits(cv));
      if (!d || !e) {
        if (c.error.empty()) c.error = !d ? d.message() : "emulator: " + e.message();
        return;
      }
      got.push_back(*d);
      want.push_back(*e);
    };
    for (int j = 0; j <= 40; ++j)
      for (double cv : {0.0, 1.0, -1.0, std::ldexp(1.0, j), -std::ldexp(1.0, -j)}) {
        run_case({1.0, std::ldexp(1.0, -j)}, {1.0, 1.0}, cv);    // alignment of a small term
        run_case({1.0, -std::ldexp(1.0, -j)}, {1.0, 1.0}, cv);   // truncation of a negative term
        run_case({1.5, 1.5, std::ldexp(1.0, -j)}, {1.5, -1.5, 1.0}, cv);  // a cancelled pair
      }
    for (double cv : {0.0, -0.0, 1.0})
      run_case({min_positive(s.f), 1.0}, {1.0, -1.0}, cv);  // the smallest subnormal input
    run_case({2.0, -2.0}, {3.0, 3.0}, -0.0);                  // exact cancellation: the zero's sign
    if (c.error.empty()) c = compare(kernel, formats::fp32, got, want);
    run.add(std::move(c));
  }
}

void emulated_gemms(runner& run) {
  const block_fma_model model = find_preset("h100-e4m3").value().model.block;
  for (const format& f : {formats::e2m1fn, formats::e3m2fn, formats::e2m3fn, parse_format("e3m4").value()}) {
    const std::string kernel = "emulated gemm (h100-e4m3 block model) " + to_string(f) + " 64x64x" + std::to_string(run.quick() ? 128 : 1000);
    if (!run.wanted(kernel)) continue;
    const int m = 64, n = 64, k = run.quick() ? 128 : 1000;
    const analysis::scaled_matrix a = random_matrix(f, m, k, run.rng()), b = random_matrix(f, k, n, run.rng());
    analysis::gemm_options go;
    go.acc.kind = accumulator_kind::block_fma;
    go.acc.block = model;
    go.out = model.acc;
    auto want = analysis::gemm(a, b, {}, go);
    run.add(compare(kernel, model.acc, emulated_gemm(model, f, f, m, n, k, a.codes, b.codes), want.value()));
  }
}

}  // namespace fpemu::cuda::parity_detail
