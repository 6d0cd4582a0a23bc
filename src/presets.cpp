// The tensor-core presets. Parameters: block size n, fraction bits F kept below the reference
// exponent, accumulator format and rounding, from Khattak & Mikaitis (arXiv 2512.07004, their
// MATLAB models V100TC/A100TC/AdaTC/H100TC: F = 23 + "extra alignment bits") and checked here
// against the published hardware outputs in tests/data/tensor-core-vectors.
#include "fpemu/presets.hpp"

#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace fpemu {
namespace {

block_fma_model block(int n, int frac_bits, const format& acc = formats::fp32) {
  block_fma_model m;
  m.block_size = n;
  m.frac_bits = frac_bits;
  m.acc = acc;
  m.acc_rounding = {round_mode::toward_zero, overflow_policy::ieee, 16};
  return m;
}

// The fp16-accumulate variant: same alignment, D (and C) in binary16 rounded to nearest-even.
block_fma_model fp16_variant(block_fma_model m) {
  m.acc = formats::fp16;
  m.acc_rounding.mode = round_mode::nearest_even;
  return m;
}

tensor_core_preset make(std::string name, std::string summary, const format& in, int instruction_k,
                        const block_fma_model& b, bool fp16_out, bool validated) {
  tensor_core_preset p;
  p.name = std::move(name);
  p.summary = std::move(summary);
  p.a = p.b = in;
  p.instruction_k = instruction_k;
  p.model.kind = accumulator_kind::block_fma;
  p.model.block = b;
  if (fp16_out) p.fp16_accumulator = fp16_variant(b);
  p.truncates_inputs = in == formats::tf32;
  p.mixed_fp8 = in == formats::e4m3fn || in == formats::e5m2;
  p.validated = validated;
  return p;
}

std::vector<tensor_core_preset> build() {
  using formats::bf16, formats::e4m3fn, formats::e5m2, formats::e8m13, formats::fp16, formats::tf32;
  std::vector<tensor_core_preset> v;
  // Volta HMMA.884: 4 products per block, no extra alignment bit.
  v.push_back(make("v100-fp16", "V100 mma fp16: blocks of 4, F=23, fp32 RZ (fp16 out: RNE)", fp16, 4, block(4, 23), true, true));
  // Ampere m16n8k16: two sequential blocks of 8, one extra bit; tf32 m16n8k8: blocks of 4.
  v.push_back(make("a100-fp16", "A100 mma fp16: k16 = 2 blocks of 8, F=24, fp32 RZ (fp16 out: RNE)", fp16, 16, block(8, 24), true, true));
  v.push_back(make("a100-bf16", "A100 mma bf16: k16 = 2 blocks of 8, F=24, fp32 RZ", bf16, 16, block(8, 24), false, true));
  v.push_back(make("a100-tf32", "A100 mma tf32: k8 = 2 blocks of 4, F=24, fp32 RZ", tf32, 8, block(4, 24), false, true));
  // Ada: as Ampere for 16-bit and tf32 inputs; fp8 k32 = 2 blocks of 16 into the 14-bit e8m13.
  v.push_back(make("ada-fp16", "Ada mma fp16: k16 = 2 blocks of 8, F=24, fp32 RZ (fp16 out: RNE)", fp16, 16, block(8, 24), true, false));
  v.push_back(make("ada-bf16", "Ada mma bf16: k16 = 2 blocks of 8, F=24, fp32 RZ", bf16, 16, block(8, 24), false, false));
  v.push_back(make("ada-tf32", "Ada mma tf32: k8 = 2 blocks of 4, F=24, fp32 RZ", tf32, 8, block(4, 24), false, false));
  v.push_back(make("ada-e4m3", "Ada mma e4m3: k32 = 2 blocks of 16, F=13, e8m13 RZ (fp16 out: RNE)", e4m3fn, 32, block(16, 13, e8m13), true, true));
  v.push_back(make("ada-e5m2", "Ada mma e5m2: k32 = 2 blocks of 16, F=13, e8m13 RZ (fp16 out: RNE)", e5m2, 32, block(16, 13, e8m13), true, true));
  // Hopper: 16-bit inputs in one block of 16 with two extra bits; tf32 blocks of 8; fp8 wgmma
  // k32 in one block of 32 into e8m13.
  v.push_back(make("h100-fp16", "H100 mma/wgmma fp16: blocks of 16, F=25, fp32 RZ (fp16 out: RNE)", fp16, 16, block(16, 25), true, true));
  v.push_back(make("h100-bf16", "H100 mma/wgmma bf16: blocks of 16, F=25, fp32 RZ", bf16, 16, block(16, 25), false, true));
  v.push_back(make("h100-tf32", "H100 mma/wgmma tf32: blocks of 8, F=25, fp32 RZ", tf32, 8, block(8, 25), false, true));
  for (const format& f : {e4m3fn, e5m2}) {
    const std::string in = f == e4m3fn ? "e4m3" : "e5m2", other = f == e4m3fn ? "e5m2" : "e4m3";
    tensor_core_preset p = make("h100-" + in,
                                "H100 wgmma " + in + " (x " + other +
                                    " allowed): blocks of 32, F=13, e8m13 RZ, chained over K (fp16 out: "
                                    "mma.sync as 2 fp16 HMMA steps + fp16 add of C)",
                                f, 32, block(32, 13, e8m13), false, true);
    p.fp16_accumulator = fp16_variant(block(16, 25));
    p.fp16_via_hmma = true;
    v.push_back(p);
  }
  v.push_back(make("h100-e4m3-fastaccum",
                   "cuBLASLt fast accumulation: the h100-e4m3 block chain over all of K, never promoted", e4m3fn,
                   32, block(32, 13, e8m13), false, true));
  // DeepSeek-V3 (arXiv 2412.19437, 3.3.2): every 128 products (4 x k32) the tensor-core partial
  // is multiplied by the group's scale and added into an fp32 register with one RNE fma; the
  // chain restarts at zero; the output is rounded to bf16 (nearest-even).
  tensor_core_preset ds = make("h100-e4m3-deepseek",
                               "DeepSeek-V3: h100-e4m3 chain promoted every 128 products into fp32 (scale fma, RNE), bf16 out",
                               e4m3fn, 32, block(32, 13, e8m13), false, true);
  ds.model.promote_every = 128;
  ds.output = formats::bf16;
  v.push_back(ds);
  return v;
}

// H100 mma.sync with fp8 inputs and an fp16 accumulator, as ptxas lowers it for sm_90 (see
// presets.hpp): per k32 instruction, fp8 -> fp16 (exact), two chained HMMA.16816.F16 block steps
// from +0 over the k mod 4 in {0,1} and {2,3} halves, then D = C + that, one fp16 RNE add. Each
// instruction's D is the next one's C. Reproduces the published H100 E4M3/E5M2 fp16 outputs.
std::uint32_t hopper_fp8_fp16_dot(const block_fma_model& hmma, const tensor_core_preset& p,
                                  const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                                  std::uint32_t c32) {
  const format& h = formats::fp16;
  std::uint32_t d = convert(h, formats::fp32, c32).code;
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
      s = "block-FMA: blocks of " + std::to_string(b.block_size) + ", F=" + std::to_string(b.frac_bits) + ", " +
          to_string(b.acc) + " " + std::string(to_string(b.acc_rounding.mode));
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
  auto fp8 = [](const format& f) { return f == formats::e4m3fn || f == formats::e5m2; };
  if (p.mixed_fp8 && fp8(a) && fp8(b)) {
    p.a = a;
    p.b = b;
    return p;
  }
  const std::string allowed = p.mixed_fp8 ? "e4m3fn or e5m2 for each operand" : to_string(p.a);
  return error{"preset " + p.name + " takes inputs " + allowed + ", not " + to_string(a) + " x " + to_string(b)};
}

expected<std::uint32_t> tensor_core_dot(const tensor_core_preset& p, bool fp16_out, std::span<const std::uint32_t> a,
                                        std::span<const std::uint32_t> b, std::uint32_t c) {
  if (a.size() != b.size())
    return error{"A has " + std::to_string(a.size()) + " values but B has " + std::to_string(b.size()) +
                 ": they must have the same length K"};
  if (fp16_out && !p.fp16_accumulator)
    return error{"preset " + p.name + " has no fp16 accumulator: the hardware accumulates " + to_string(p.a) +
                 " products in fp32 only"};
  // Inputs: exact conversion from binary32, or the tf32 hardware's truncation.
  const rounding exact{round_mode::toward_zero};
  std::vector<std::uint32_t> ca(a.size()), cb(b.size());
  auto input = [&](const format& f, std::uint32_t bits, char name, std::size_t i) -> expected<std::uint32_t> {
    const rounded r = convert(f, formats::fp32, bits, exact);
    if ((r.flags & flag::inexact) && !p.truncates_inputs)
      return error{std::string(1, name) + "_" + std::to_string(i) + " = " + to_decimal(formats::fp32, bits) +
                   " is not a " + to_string(f) + " value (preset " + p.name + " takes " + to_string(f) + " inputs)"};
    return r.code;
  };
  for (std::size_t i = 0; i < a.size(); ++i) {
    const expected<std::uint32_t> x = input(p.a, a[i], 'A', i), y = input(p.b, b[i], 'B', i);
    if (!x) return error{x.message()};
    if (!y) return error{y.message()};
    ca[i] = *x;
    cb[i] = *y;
  }
  if (fp16_out && p.fp16_via_hmma) return hopper_fp8_fp16_dot(*p.fp16_accumulator, p, ca, cb, c);
  accumulator_model m = p.model;
  format out = p.model.promote_every > 0 ? p.output : formats::fp32;
  format fc = formats::fp32;
  std::uint32_t c_code = c;
  if (fp16_out) {
    m.block = *p.fp16_accumulator;
    out = fc = formats::fp16;
    c_code = convert(formats::fp16, formats::fp32, c).code;  // the hardware's C is binary16
  }
  dot_accumulator acc(m, p.a, p.b);
  acc.reset(fc, c_code);
  for (std::size_t i = 0; i < ca.size(); ++i) acc.add_product(ca[i], cb[i]);
  const std::uint32_t d = acc.result(out, p.output_rounding).code;
  return fp16_out ? d : convert(formats::fp32, out, d).code;  // bf16 output is widened exactly
}

}  // namespace fpemu
