// The tensor-core presets: each a row naming its instruction, its block-FMA parameters and where
// they come from.
//  - V100, A100, Ada, H100: Khattak & Mikaitis (ACM TACO 2025, arXiv 2512.07004; their MATLAB
//    models V100TC/A100TC/AdaTC/H100TC: F = 23 + "extra alignment bits"), checked here against
//    the published hardware outputs in tests/data/tensor-core-vectors.
//  - T4, B200, RTX Blackwell, AMD CDNA1-3: Xie et al., "MMA-Sim: Bit-Accurate Reference Model of
//    Tensor Cores and Matrix Cores" (arXiv 2511.10909, 2025), whose nine algorithms were
//    validated on the hardware; each preset is the setting of this one model that reproduces
//    its algorithm, checked against their simulator mmasim 2.1.1 (tests/data/mmasim).
// The zero exponent (min_reference_exp), the overflow to infinity, the all-ones NaN and the +0
// of every zero result are Xie et al.'s for all NVIDIA architectures; the hardware sets agree.
#include "fpemu/presets.hpp"

#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace fpemu {
namespace {

constexpr const char* kKhattak = "Khattak & Mikaitis, ACM TACO 2025; hardware outputs (tests/data/tensor-core-vectors)";
constexpr const char* kXie = "Xie et al., arXiv 2511.10909 (2025): mmasim 2.1.1 ";

// NVIDIA's truncated fused dot-product-add: blocks of n, F bits, RZ into acc; a zero term
// takes part in E with exponent e_zero.
block_fma_model nv(int n, int frac_bits, int e_zero, const format& acc = formats::fp32) {
  block_fma_model m;
  m.block_size = n;
  m.frac_bits = frac_bits;
  m.acc = acc;
  m.acc_rounding = {round_mode::toward_zero, overflow_policy::ieee, 16};
  m.min_reference_exp = e_zero;
  m.overflow_infinite = true;
  m.all_ones_nan = true;
  return m;
}

// The fp16-accumulate variant: same alignment, D (and C) in binary16 rounded to nearest-even;
// the zero exponent is 112 above fp32's, as binary16's emin is (Xie et al.'s e_zero table).
block_fma_model fp16_variant(block_fma_model m) {
  m.acc = formats::fp16;
  m.acc_rounding.mode = round_mode::nearest_even;
  m.min_reference_exp += 112;
  return m;
}

tensor_core_preset make(std::string name, std::string summary, std::string instruction, std::string source,
                        const format& in, int instruction_k, const block_fma_model& b, bool fp16_out, bool validated) {
  tensor_core_preset p;
  p.name = std::move(name);
  p.summary = std::move(summary);
  p.instruction = std::move(instruction);
  p.source = std::move(source);
  p.a = p.b = in;
  p.instruction_k = instruction_k;
  p.model.kind = accumulator_kind::block_fma;
  p.model.block = b;
  if (fp16_out) p.fp16_accumulator = fp16_variant(b);
  p.truncates_inputs = in == formats::tf32;
  p.validated = validated;
  return p;
}

// AMD CDNA3's two-stage fused dot product (TR-FDPA): products truncated at F = 24 below their
// largest exponent, C joined after, rounded down to 31 bits, then nearest-even into fp32.
block_fma_model cdna3(int n, int interleave) {
  block_fma_model m;
  m.block_size = n;
  m.frac_bits = 24;
  m.second_frac_bits = 31;
  m.interleave = interleave;
  m.drop_far_c = interleave > 1;
  m.product_overflow = interleave == 1;  // 16-bit and xf32 products can leave fp32's range
  m.acc_rounding = rounding{round_mode::nearest_even};
  m.zero = zero_sign::exact_positive;
  m.all_ones_nan = true;
  return m;
}

// AMD CDNA1 (exact, E-FDPA) and CDNA2 (FTZ multiply-add chains) in blocks of n. CDNA2 reads the
// instruction's C as it reads A and B: a zero or subnormal C is +0.
block_fma_model amd_plain(int n, block_sum sum) {
  block_fma_model m;
  m.block_size = n;
  m.sum = sum;
  m.acc_rounding = rounding{round_mode::nearest_even};
  m.zero = sum == block_sum::exact ? zero_sign::exact_positive : zero_sign::ieee;
  if (sum == block_sum::pairwise) m.input_subnormals = m.output_subnormals = false;
  m.first_c_as_operand = sum == block_sum::pairwise;
  return m;
}

std::vector<format> f8f6f4() {
  using namespace formats;
  return {e4m3fn, e5m2, e3m2fn, e2m3fn, e2m1fn};
}

std::vector<tensor_core_preset> build() {
  using formats::bf16, formats::e4m3fn, formats::e5m2, formats::e8m13, formats::fp16, formats::tf32;
  using formats::e2m1fn, formats::e4m3fnuz, formats::e5m2fnuz, formats::e8m0fnu;
  std::vector<tensor_core_preset> v;
  // Volta HMMA.884: 4 products per block, no extra alignment bit.
  v.push_back(make("v100-fp16", "V100 mma fp16: blocks of 4, F=23, fp32 RZ (fp16 out: RNE)", "mma.sync.m8n8k4.f16", kKhattak, fp16, 4, nv(4, 23, -131), true, true));
  // Turing m16n8k8: one block of 8 with one extra bit.
  v.push_back(make("t4-fp16", "T4 mma fp16: k8 = 1 block of 8, F=24, fp32 RZ (fp16 out: RNE)", "mma.sync.m16n8k8.f16 (sm_75)", std::string(kXie) + "MMA(Turing)", fp16, 8, nv(8, 24, -132), true, false));
  // Ampere m16n8k16: two sequential blocks of 8, one extra bit; tf32 m16n8k8: blocks of 4.
  v.push_back(make("a100-fp16", "A100 mma fp16: k16 = 2 blocks of 8, F=24, fp32 RZ (fp16 out: RNE)", "mma.sync.m16n8k16.f16 (sm_80)", kKhattak, fp16, 16, nv(8, 24, -132), true, true));
  v.push_back(make("a100-bf16", "A100 mma bf16: k16 = 2 blocks of 8, F=24, fp32 RZ", "mma.sync.m16n8k16.bf16 (sm_80)", kKhattak, bf16, 16, nv(8, 24, -132), false, true));
  v.push_back(make("a100-tf32", "A100 mma tf32: k8 = 2 blocks of 4, F=24, fp32 RZ", "mma.sync.m16n8k8.tf32 (sm_80)", kKhattak, tf32, 8, nv(4, 24, -132), false, true));
  // Ada: as Ampere for 16-bit and tf32 inputs; fp8 k32 = 2 blocks of 16 into the 14-bit e8m13.
  v.push_back(make("ada-fp16", "Ada mma fp16: k16 = 2 blocks of 8, F=24, fp32 RZ (fp16 out: RNE)", "mma.sync.m16n8k16.f16 (sm_89)", kKhattak, fp16, 16, nv(8, 24, -132), true, false));
  v.push_back(make("ada-bf16", "Ada mma bf16: k16 = 2 blocks of 8, F=24, fp32 RZ", "mma.sync.m16n8k16.bf16 (sm_89)", kKhattak, bf16, 16, nv(8, 24, -132), false, false));
  v.push_back(make("ada-tf32", "Ada mma tf32: k8 = 2 blocks of 4, F=24, fp32 RZ", "mma.sync.m16n8k8.tf32 (sm_89)", kKhattak, tf32, 8, nv(4, 24, -132), false, false));
  for (const format& f : {e4m3fn, e5m2}) {
    const std::string in = f == e4m3fn ? "e4m3" : "e5m2", other = f == e4m3fn ? "e5m2" : "e4m3";
    tensor_core_preset p = make("ada-" + in, "Ada mma " + in + " (x " + other + " allowed): k32 = 2 blocks of 16, F=13, e8m13 RZ (fp16 out: RNE)", "mma.sync.m16n8k32." + in + " (sm_89)", kKhattak, f, 32, nv(16, 13, -132, e8m13), true, true);
    p.inputs = {e4m3fn, e5m2};
    v.push_back(p);
  }
  // Hopper: 16-bit inputs in one block of 16 with two extra bits; tf32 blocks of 8; fp8 wgmma
  // k32 in one block of 32 into e8m13.
  v.push_back(make("h100-fp16", "H100 mma/wgmma fp16: blocks of 16, F=25, fp32 RZ (fp16 out: RNE)", "wgmma.mma_async.k16.f16 (sm_90a)", kKhattak, fp16, 16, nv(16, 25, -133), true, true));
  v.push_back(make("h100-bf16", "H100 mma/wgmma bf16: blocks of 16, F=25, fp32 RZ", "wgmma.mma_async.k16.bf16 (sm_90a)", kKhattak, bf16, 16, nv(16, 25, -133), false, true));
  v.push_back(make("h100-tf32", "H100 mma/wgmma tf32: blocks of 8, F=25, fp32 RZ", "wgmma.mma_async.k8.tf32 (sm_90a)", kKhattak, tf32, 8, nv(8, 25, -133), false, true));
  for (const format& f : {e4m3fn, e5m2}) {
    const std::string in = f == e4m3fn ? "e4m3" : "e5m2", other = f == e4m3fn ? "e5m2" : "e4m3";
    tensor_core_preset p = make("h100-" + in,
                                "H100 wgmma " + in + " (x " + other +
                                    " allowed): blocks of 32, F=13, e8m13 RZ, chained over K (fp16 out: "
                                    "mma.sync as 2 fp16 HMMA steps + fp16 add of C)",
                                "wgmma.mma_async.k32." + in + " (sm_90a)", kKhattak, f, 32, nv(32, 13, -133, e8m13), false, true);
    p.inputs = {e4m3fn, e5m2};
    p.fp16_accumulator = fp16_variant(nv(16, 25, -133));
    p.fp16_via_hmma = true;
    v.push_back(p);
  }
  v.push_back(make("h100-e4m3-fastaccum",
                   "cuBLASLt fast accumulation: the h100-e4m3 block chain over all of K, never promoted", "wgmma.mma_async.k32.e4m3 (sm_90a), chained", kKhattak, e4m3fn,
                   32, nv(32, 13, -133, e8m13), false, true));
  // DeepSeek-V3 (arXiv 2412.19437, 3.3.2): every 128 products (4 x k32) the tensor-core partial
  // is multiplied by the group's scale and added into an fp32 register with one RNE fma; the
  // chain restarts at zero; the output is rounded to bf16 (nearest-even).
  tensor_core_preset ds = make("h100-e4m3-deepseek",
                               "DeepSeek-V3: h100-e4m3 chain promoted every 128 products into fp32 (scale fma, RNE), bf16 out",
                               "wgmma.mma_async.k32.e4m3 (sm_90a) + fp32 FFMA every 128", "DeepSeek-V3 Technical Report 3.3.2 (2024); " + std::string(kKhattak), e4m3fn, 32, nv(32, 13, -133, e8m13), false, true);
  ds.model.promote_every = 128;
  ds.output = formats::bf16;
  v.push_back(ds);

  // Blackwell: every kind in one block per instruction with F = 25 into fp32 (FP8 no longer goes
  // through Hopper's 13-bit register); the block-scaled kinds add the scale exponents inside the
  // fused sum; mxf4/mxf4nvf4 sum groups of 16 E2M1 products exactly first and keep F = 35.
  // B200 (tcgen05.mma, sm_100a) and RTX Blackwell (mma.sync, sm_120a) share the arithmetic.
  struct blackwell {
    const char* prefix;
    const char* gpu;
    std::string (*instr)(const std::string& kind, int k);
    const char* sim_class;  // mmasim's class and architecture name
    const char* sim_arch;
  };
  const blackwell gpus[] = {
      {"b200", "B200", [](const std::string& kind, int k) { return "tcgen05.mma.cta_group::1.kind::" + kind + " (sm_100a, k" + std::to_string(k) + ")"; }, "TCGen05MMA", "Blackwell"},
      {"rtx6000b", "RTX PRO 6000 Blackwell", [](const std::string& kind, int k) { return "mma.sync.m16n8k" + std::to_string(k) + ".kind::" + kind + " (sm_120a)"; }, "MMA", "RTX Blackwell"},
  };
  for (const blackwell& g : gpus) {
    const std::string pre = g.prefix, gpu = g.gpu;
    const std::string src = kXie + std::string(g.sim_class) + "(" + g.sim_arch + ")",
                      scaled_src = kXie + std::string(g.sim_class) + "BlockScale(" + g.sim_arch + ")";
    v.push_back(make(pre + "-fp16", gpu + " fp16: blocks of 16, F=25, fp32 RZ (fp16 out: RNE)", g.instr("f16", 16), src, fp16, 16, nv(16, 25, -133), true, false));
    v.push_back(make(pre + "-bf16", gpu + " bf16: blocks of 16, F=25, fp32 RZ", g.instr("f16", 16), src, bf16, 16, nv(16, 25, -133), false, false));
    v.push_back(make(pre + "-tf32", gpu + " tf32: blocks of 8, F=25, fp32 RZ", g.instr("tf32", 8), src, tf32, 8, nv(8, 25, -133), false, false));
    for (const format& f : {e4m3fn, e5m2}) {
      const std::string in = f == e4m3fn ? "e4m3" : "e5m2";
      tensor_core_preset p = make(pre + "-" + in, gpu + " " + in + " (x any of e4m3fn e5m2 e3m2fn e2m3fn e2m1fn): blocks of 32, F=25, fp32 RZ (fp16 out: RNE)", g.instr("f8f6f4", 32), src, f, 32, nv(32, 25, -133), true, false);
      p.inputs = f8f6f4();
      v.push_back(p);
    }
    block_fma_model mx = nv(32, 25, -133);
    mx.scale_block = 32;
    tensor_core_preset p = make(pre + "-mxf8f6f4", gpu + " MXFP8/6/4: blocks of 32, one E8M0 scale pair each, F=25, fp32 RZ", g.instr("mxf8f6f4.block_scale.scale_vec::1X", 32), scaled_src, e4m3fn, 32, mx, false, false);
    p.inputs = f8f6f4();
    p.scale = e8m0fnu;
    v.push_back(p);
    block_fma_model fp4 = nv(64, 35, -139);
    fp4.scale_group = 16;
    struct fp4_kind {
      const char* suffix;
      const char* kind;
      format scale;
      int scale_block;
      const char* what;
    };
    const fp4_kind kinds[] = {
        {"-mxf4", "mxf4.block_scale.scale_vec::2X", e8m0fnu, 32, "MXFP4: E8M0 scale per 32"},
        {"-mxf4nvf4", "mxf4nvf4.block_scale.scale_vec::4X", e4m3fn, 16, "NVFP4: UE4M3 scale per 16"},
        {"-mxf4nvf4-ue8m0", "mxf4nvf4.block_scale.scale_vec::4X", e8m0fnu, 16, "E2M1 with E8M0 scale per 16"},
    };
    for (const fp4_kind& k : kinds) {
      fp4.scale_block = k.scale_block;
      tensor_core_preset q = make(pre + k.suffix, gpu + " " + k.what + ": k64, groups of 16 summed exactly, F=35, fp32 RZ", g.instr(k.kind, 64), scaled_src, e2m1fn, 64, fp4, false, false);
      q.scale = k.scale;
      v.push_back(q);
    }
  }

  // AMD Instinct. CDNA1 (MI100) sums 4 fp16 or 2 bf16 products and C exactly; CDNA2 (MI250)
  // multiplies and adds in fp32 with subnormals flushed, pairwise in blocks of 4 (2 for the
  // bf16 instructions before _1k); CDNA3 (MI300X) fuses 8 (4 for xf32, 16 for fp8, those as
  // even/odd halves) products two-stage (cdna3 above). fp32 and fp64 MFMA are plain fma chains.
  const std::string amd = kXie;
  v.push_back(make("mi100-fp16", "MI100 fp16: blocks of 4 summed exactly with C, fp32 RNE", "v_mfma_f32_32x32x8f16 (CDNA1)", amd + "MFMA(CDNA1)", fp16, 8, amd_plain(4, block_sum::exact), false, false));
  v.push_back(make("mi100-bf16", "MI100 bf16: blocks of 2 summed exactly with C, fp32 RNE", "v_mfma_f32_32x32x4bf16 (CDNA1)", amd + "MFMA(CDNA1)", bf16, 4, amd_plain(2, block_sum::exact), false, false));
  v.push_back(make("mi250-fp16", "MI250 fp16: fp32 products, (p0+p1)+(p2+p3) then + C, RNE, subnormals flushed", "v_mfma_f32_32x32x8f16 (CDNA2)", amd + "MFMA(CDNA2)", fp16, 8, amd_plain(4, block_sum::pairwise), false, false));
  v.push_back(make("mi250-bf16", "MI250 bf16 _1k: fp32 products, (p0+p1)+(p2+p3) then + C, RNE, subnormals flushed", "v_mfma_f32_32x32x8bf16_1k (CDNA2)", amd + "MFMA(CDNA2)", bf16, 8, amd_plain(4, block_sum::pairwise), false, false));
  v.push_back(make("mi250-bf16-legacy", "MI250 bf16 (before _1k): fp32 products, p0+p1 then + C, RNE, subnormals flushed", "v_mfma_f32_32x32x4bf16 (CDNA2)", amd + "MFMA(CDNA2)", bf16, 4, amd_plain(2, block_sum::pairwise), false, false));
  v.push_back(make("mi300x-fp16", "MI300X fp16: blocks of 8, F=24, C after, F2=31 RD, fp32 RNE", "v_mfma_f32_32x32x8_f16 (CDNA3)", amd + "MFMA(CDNA3)", fp16, 8, cdna3(8, 1), false, false));
  v.push_back(make("mi300x-bf16", "MI300X bf16: blocks of 8, F=24, C after, F2=31 RD, fp32 RNE", "v_mfma_f32_32x32x8_bf16 (CDNA3)", amd + "MFMA(CDNA3)", bf16, 8, cdna3(8, 1), false, false));
  tensor_core_preset xf32 = make("mi300x-xf32", "MI300X xf32: blocks of 4, F=24, C after, F2=31 RD, fp32 RNE", "v_mfma_f32_32x32x4_xf32 (CDNA3)", amd + "MFMA(CDNA3)", tf32, 4, cdna3(4, 1), false, false);
  v.push_back(xf32);
  for (const format& f : {e4m3fnuz, e5m2fnuz}) {
    const std::string in = f == e4m3fnuz ? "e4m3fnuz" : "e5m2fnuz", isa = f == e4m3fnuz ? "fp8" : "bf8";
    tensor_core_preset p = make("mi300x-" + in, "MI300X " + in + " (x e4m3fnuz or e5m2fnuz): blocks of 16 as even/odd halves, F=24, C after (dropped below 2^(E-25)), F2=31 RD, fp32 RNE", "v_mfma_f32_32x32x16_" + isa + "_" + isa + " (CDNA3)", amd + "MFMA(CDNA3)", f, 16, cdna3(16, 2), false, false);
    p.inputs = {e4m3fnuz, e5m2fnuz};
    v.push_back(p);
  }
  return v;
}

// H100 mma.sync with fp8 inputs and an fp16 accumulator, as ptxas lowers it for sm_90 (see
// presets.hpp): per k32 instruction, fp8 -> fp16 (exact), two chained HMMA.16816.F16 block steps
// from +0 over the k mod 4 in {0,1} and {2,3} halves, then D = C + that, one fp16 RNE add. Each
// instruction's D is the next one's C. Reproduces the published H100 E4M3/E5M2 fp16 outputs.
std::uint32_t hopper_fp8_fp16_dot(const block_fma_model& hmma, const tensor_core_preset& p,
                                  const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                                  std::uint32_t c16) {
  const format& h = formats::fp16;
  std::uint32_t d = c16;
  for (std::size_t k0 = 0; k0 < a.size(); k0 += 32) {
    std::uint32_t half_a[2][16], half_b[2][16];
    int len[2] = {0, 0};
    for (std::size_t k = k0; k < a.size() && k < k0 + 32; ++k) {
      const int which = (k % 4) < 2 ? 0 : 1;
      half_a[which][len[which]] = convert(h, p.a, a[k]).code;
      half_b[which][len[which]++] = convert(h, p.b, b[k]).code;
    }
    const rounded lo = block_fma_step(hmma, h, half_a[0], h, half_b[0], len[0], h, 0);
    const rounded hi = block_fma_step(hmma, h, half_a[1], h, half_b[1], len[1], h, lo.code);
    d = add(h, hi.code, d, rounding{round_mode::nearest_even}).code;
  }
  return d;
}

}  // namespace

const std::vector<tensor_core_preset>& tensor_core_presets() {
  static const std::vector<tensor_core_preset> presets = build();
  return presets;
}

namespace {
std::string preset_names() {
  std::string names;
  for (const tensor_core_preset& p : tensor_core_presets()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}
}  // namespace

expected<tensor_core_preset> find_preset(std::string_view name) {
  for (const tensor_core_preset& p : tensor_core_presets())
    if (p.name == name) return p;
  return error{"unknown tensor-core preset '" + std::string(name) + "': valid presets are " + preset_names()};
}

expected<accumulator_choice> parse_accumulator(std::string_view name) {
  accumulator_choice c;
  if (expected<tensor_core_preset> p = find_preset(name)) {
    c.model = p->model;
    c.preset = *p;
  } else if (name == "exact") {
    c.model.kind = accumulator_kind::exact;
  } else if (expected<format> f = parse_format(name)) {
    c.model.kind = accumulator_kind::format;
    c.model.acc = *f;
  } else {
    return error{"'" + std::string(name) + "' is neither 'exact', a tensor-core preset (" + preset_names() +
                 ") nor a format: " + f.message()};
  }
  return c;
}

expected<accumulator_choice> with_rounding(accumulator_choice c, const rounding& r) {
  if (c.preset)
    return error{"the preset " + c.preset->name + " fixes its own rounding; a rounding applies to a format accumulator"};
  if (auto why = check(c.model.acc, r)) return error{*why};
  c.model.acc_rounding = r;
  return c;
}

expected<accumulator_choice> with_promotion(accumulator_choice c, int every) {
  if (every < 1 || every > max_promote)
    return error{"promotion every " + std::to_string(every) + " products is out of range (1..2^30)"};
  c.model.promote_every = every;
  c.model.promoted = formats::fp32;
  c.model.promoted_rounding = rounding{};
  return c;
}

std::string describe(const accumulator_choice& c) {
  const accumulator_model& m = c.model;
  std::string s;
  switch (m.kind) {
    case accumulator_kind::format:
      s = to_string(m.acc) + " " + std::string(to_string(m.acc_rounding.mode));
      if (m.acc_rounding.mode == round_mode::stochastic) s += " (" + std::to_string(m.acc_rounding.sr_bits) + " bits)";
      break;
    case accumulator_kind::block_fma: {
      const block_fma_model& b = m.block;
      s = "block-FMA: blocks of " + std::to_string(b.block_size) + ", ";
      switch (b.sum) {
        case block_sum::exact: s += "summed exactly"; break;
        case block_sum::pairwise: s += "pairwise fp32 adds" + std::string(b.output_subnormals ? "" : ", flushed to zero"); break;
        case block_sum::aligned:
          s += "F=" + std::to_string(b.frac_bits);
          if (b.interleave > 1) s += " per " + std::to_string(b.interleave) + " interleaved halves";
          if (b.second_frac_bits > 0) s += ", C after, F2=" + std::to_string(b.second_frac_bits) + " RD";
          if (b.scale_group > 0) s += ", groups of " + std::to_string(b.scale_group) + " exact";
          if (b.scale_block > 0) s += ", a scale pair per " + std::to_string(b.scale_block);
          break;
      }
      s += ", " + to_string(b.acc) + " " + std::string(to_string(b.acc_rounding.mode));
      break;
    }
    case accumulator_kind::exact:
      s = "exact, rounded once into " + to_string(m.acc) + " " + std::string(to_string(m.acc_rounding.mode));
      break;
  }
  if (m.promote_every > 0)
    s += "; promoted every " + std::to_string(m.promote_every) + " into " + to_string(m.promoted) + " " +
         std::string(to_string(m.promoted_rounding.mode));
  return c.preset ? "preset " + c.preset->name + " (" + s + ")" : s;
}

expected<tensor_core_preset> with_inputs(tensor_core_preset p, const format& a, const format& b) {
  if (a == p.a && b == p.b) return p;
  auto allowed = [&](const format& f) {
    for (const format& g : p.inputs)
      if (g == f) return true;
    return false;
  };
  if (allowed(a) && allowed(b)) {
    p.a = a;
    p.b = b;
    return p;
  }
  // "fp16", or "e4m3fn, e5m2 or e2m1fn for each operand"
  const std::string what = input_formats_text(p) + (p.inputs.empty() ? "" : " for each operand");
  return error{"preset " + p.name + " takes inputs " + what + ", not " + to_string(a) + " x " + to_string(b)};
}

std::vector<format> input_formats(const tensor_core_preset& p) {
  if (!p.inputs.empty()) return p.inputs;
  if (p.a == p.b) return {p.a};
  return {p.a, p.b};
}

std::string input_formats_text(const tensor_core_preset& p, std::string_view separator, std::string_view last) {
  const std::vector<format> v = input_formats(p);
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == v.size() ? last : separator) + to_string(v[i]);
  return s;
}

std::string scale_format_name(const format& scale) {
  return scale == formats::e4m3fn ? "UE4M3" : to_string(scale);
}

namespace {

expected<void> check_lengths(const tensor_core_preset& p, bool fp16_out, std::size_t a, std::size_t b, std::size_t sa,
                             std::size_t sb) {
  if (a != b)
    return error{"A has " + std::to_string(a) + " values but B has " + std::to_string(b) +
                 ": they must have the same length K"};
  if (fp16_out && !p.fp16_accumulator)
    return error{"preset " + p.name + " has no fp16 accumulator: the hardware accumulates " + to_string(p.a) +
                 " products in fp32 only"};
  if (!p.scale) {
    if (sa != 0 || sb != 0) return error{"preset " + p.name + " takes no block scales"};
    return {};
  }
  const std::size_t block = static_cast<std::size_t>(p.model.block.scale_block);
  if (a % block != 0)
    return error{"K = " + std::to_string(a) + " is not a multiple of " + std::to_string(block) + ", the block of one scale in preset " + p.name};
  if (sa != a / block || sb != a / block)
    return error{"preset " + p.name + " needs K / " + std::to_string(block) + " = " + std::to_string(a / block) +
                 " scales for A and for B (one per " + std::to_string(block) + " products), got " + std::to_string(sa) +
                 " and " + std::to_string(sb)};
  return {};
}

}  // namespace

expected<std::uint32_t> tensor_core_dot_codes(const tensor_core_preset& p, bool fp16_out,
                                              std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                              std::uint32_t c, std::span<const std::uint32_t> scale_a,
                                              std::span<const std::uint32_t> scale_b) {
  if (auto ok = check_lengths(p, fp16_out, a.size(), b.size(), scale_a.size(), scale_b.size()); !ok)
    return error{ok.message()};
  std::vector<std::uint32_t> ca(a.begin(), a.end()), cb(b.begin(), b.end());
  if (p.truncates_inputs) {  // binary32 registers: the hardware reads their top 19 bits
    for (std::uint32_t& x : ca) x >>= 13;
    for (std::uint32_t& x : cb) x >>= 13;
  }
  if (fp16_out && p.fp16_via_hmma) return hopper_fp8_fp16_dot(*p.fp16_accumulator, p, ca, cb, c);
  const format out = fp16_out ? formats::fp16 : (p.model.promote_every > 0 ? p.output : formats::fp32);
  const format fc = fp16_out ? formats::fp16 : formats::fp32;
  accumulator_model m = p.model;
  if (fp16_out) m.block = *p.fp16_accumulator;
  dot_accumulator acc(m, p.a, p.b);
  acc.reset(fc, c);
  // Block-scaled instructions (never promoted) take their scale pair before its first product.
  const std::size_t per_scale = p.scale ? static_cast<std::size_t>(m.block.scale_block) : 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    if (per_scale > 0 && i % per_scale == 0)
      acc.set_block_scales(*p.scale, scale_a[i / per_scale], scale_b[i / per_scale]);
    acc.add_product(ca[i], cb[i]);
  }
  std::uint32_t d = acc.result(out, p.output_rounding).code;
  const format result = fp16_out ? formats::fp16 : formats::fp32;
  d = convert(result, out, d).code;  // bf16 output is widened exactly
  // A NaN of the block model (not of the promoted fp32 register) keeps the model's pattern
  // through the widening of e8m13 into binary32.
  const block_fma_model& used = fp16_out ? *p.fp16_accumulator : p.model.block;
  const bool from_block = p.model.kind == accumulator_kind::block_fma && (fp16_out || p.model.promote_every == 0);
  if (from_block && used.all_ones_nan && decode(result, d).cls == value_class::nan)
    d = all_ones_nan_code(result);
  return d;
}

expected<std::uint32_t> tensor_core_dot(const tensor_core_preset& p, bool fp16_out, std::span<const std::uint32_t> a,
                                        std::span<const std::uint32_t> b, std::uint32_t c,
                                        std::span<const std::uint32_t> scale_a, std::span<const std::uint32_t> scale_b) {
  if (auto ok = check_lengths(p, fp16_out, a.size(), b.size(), scale_a.size(), scale_b.size()); !ok)
    return error{ok.message()};
  // Inputs: exact conversion from binary32, or the tf32 hardware's truncation.
  const rounding exact{round_mode::toward_zero};
  auto input = [&](const format& f, std::span<const std::uint32_t> in, char name,
                   std::vector<std::uint32_t>& out) -> expected<void> {
    out.resize(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (p.truncates_inputs && (name == 'A' || name == 'B')) {
        out[i] = in[i];
        continue;
      }
      const std::uint32_t bits = in[i];
      const bool scale = name == 'a' || name == 'b';
      const std::string what = (scale ? std::string(name == 'a' ? "SA" : "SB")
                                      : std::string(1, name)) + "_" + std::to_string(i) + " = " +
                               to_decimal(formats::fp32, bits);
      const unpacked v = decode(formats::fp32, bits);
      if (scale && f == formats::e4m3fn && v.negative && v.cls == value_class::finite)
        return error{what + " is negative: " + scale_format_name(f) + " scales are unsigned"};
      const rounded r = convert(f, formats::fp32, bits, exact);
      // invalid: a value the format cannot hold at all (a zero or negative E8M0 scale).
      const bool invalid = (r.flags & flag::invalid) != 0 && v.cls != value_class::nan;
      if (invalid || (r.flags & (flag::inexact | flag::overflow | flag::underflow)))
        return error{what + (scale ? " is not a value of " + to_string(f) : " is not a " + to_string(f) + " value") +
                     " (preset " + p.name + " takes " + to_string(f) + (scale ? " scales)" : " inputs)")};
      out[i] = r.code;
    }
    return {};
  };
  std::vector<std::uint32_t> ca, cb, sa, sb;
  for (auto ok : {input(p.a, a, 'A', ca), input(p.b, b, 'B', cb)})
    if (!ok) return error{ok.message()};
  if (p.scale)
    for (auto ok : {input(*p.scale, scale_a, 'a', sa), input(*p.scale, scale_b, 'b', sb)})
      if (!ok) return error{ok.message()};
  // The hardware's C is binary16 with fp16 output.
  const std::uint32_t c_code = fp16_out ? convert(formats::fp16, formats::fp32, c).code : c;
  return tensor_core_dot_codes(p, fp16_out, ca, cb, c_code, sa, sb);
}

}  // namespace fpemu
