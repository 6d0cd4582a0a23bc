// The tensor-core presets against mmasim, the bit-accurate simulator of Xie et al. ("MMA-Sim:
// Bit-Accurate Reference Model of Tensor Cores and Matrix Cores", arXiv 2511.10909, 2025), whose
// algorithms were validated on the GPUs themselves. scripts/mmasim_vectors.py runs mmasim and
// writes its outputs; this program reads them and recomputes every case with fpemu's own model
// (tensor_core_dot_codes), which shares no code with mmasim.
//
//   mmasim_vectors PATH...   PATH: a vector file, or a folder of them (*.txt)
//
// File format (scripts/mmasim_vectors.py writes it): '#' lines are comments; a line
//   @ preset=NAME a=FMT b=FMT out=fp32|fp16 k=K scale=FMT|- scale_block=N source=...
// opens a section; each case line is "A B C SA SB D": A, B (K codes), SA, SB (K / N scale codes,
// or '-') as comma-separated hex codes or as fixed-width hex digits run together (the format's
// width), C and D as one hex code of the output format. Sections whose preset holds a scale
// format other than the file's name a sibling preset with the same prefix (b200-mxf4nvf4 with
// E8M0 scales per 32 is b200-mxf4).
//
// Every D must match bit for bit, with two exceptions, each counted apart and each checked:
//  - where the model leaves the NaN pattern to IEEE arithmetic (AMD CDNA1 and CDNA2:
//    all_ones_nan is false), mmasim's NaN is the host CPU's (x86's default NaN, or a propagated
//    payload), so any NaN matches any NaN;
//  - AMD CDNA3 fp8 (drop_far_c): mmasim reads the exponent of an infinite or NaN C with
//    torch.frexp, which gives 0, i.e. e_C = -1, so its far-C rule drops such a C when the
//    products' exponent exceeds 24, and the result is finite. fpemu propagates the infinity or
//    NaN, as IEEE 754 and the CDNA3 ISA's MFMA description require (an infinite or NaN C has the
//    largest exponent field). The case counts as explained only if fpemu, given mmasim's reading
//    of C in every instruction of the chain, reproduces mmasim's D bit for bit.
// Prints one line per section and the first mismatches; exits 1 if any case mismatches, 2 on a
// malformed file.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

using namespace fpemu;

namespace {

[[noreturn]] void malformed(const std::string& where, const std::string& what) {
  std::cerr << "mmasim_vectors: " << where << ": " << what << '\n';
  std::exit(2);
}

int hex_width(const format& f) { return (width(f) + 3) / 4; }

std::vector<std::uint32_t> codes(const std::string& field, const format& f, const std::string& where) {
  std::vector<std::uint32_t> out;
  if (field == "-") return out;
  auto parse = [&](const std::string& digits) {
    std::size_t used = 0;
    const unsigned long v = std::stoul(digits, &used, 16);
    if (used != digits.size()) malformed(where, "bad hex '" + digits + "'");
    out.push_back(static_cast<std::uint32_t>(v));
  };
  if (field.find(',') != std::string::npos) {
    std::stringstream in(field);
    std::string item;
    while (std::getline(in, item, ',')) parse(item);
  } else {
    const auto w = static_cast<std::size_t>(hex_width(f));
    if (field.size() % w != 0) malformed(where, "a field of " + std::to_string(field.size()) + " digits is not a run of " + std::to_string(w) + "-digit codes");
    for (std::size_t i = 0; i < field.size(); i += w) parse(field.substr(i, w));
  }
  return out;
}

// mmasim's reading of a non-finite C in the CDNA3 fp8 far-C rule (see the top): each block's C,
// when infinite or NaN, is dropped if the block's largest product exponent exceeds 24.
std::uint32_t with_frexp_reading_of_c(const tensor_core_preset& p, const std::vector<std::uint32_t>& a,
                                      const std::vector<std::uint32_t>& b, std::uint32_t c) {
  const block_fma_model& m = p.model.block;
  for (std::size_t k0 = 0; k0 < a.size(); k0 += static_cast<std::size_t>(m.block_size)) {
    const int n = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(m.block_size), a.size() - k0));
    const unpacked uc = decode(m.acc, c);
    if (uc.cls == value_class::nan || uc.cls == value_class::infinite) {
      int e_dot = -(1 << 20);
      for (int i = 0; i < n; ++i) {
        const unpacked ua = decode(p.a, a[k0 + i]), ub = decode(p.b, b[k0 + i]);
        if (ua.cls == value_class::finite && ub.cls == value_class::finite)
          e_dot = std::max(e_dot, ua.exp + p.a.frac_bits + ub.exp + p.b.frac_bits);
      }
      if (-1 < std::max(e_dot, -1) - m.frac_bits - 1) c = 0;
    }
    c = block_fma_step(m, p.a, a.data() + k0, p.b, b.data() + k0, n, m.acc, c).code;
  }
  return c;
}

struct section {
  std::string header, where;
  tensor_core_preset preset;
  bool fp16 = false;
  int k = 0;
  std::uint64_t cases = 0, exact = 0, nan_any = 0, frexp_c = 0, mismatched = 0;
};

std::string hex(const format& f, std::uint32_t code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*x", hex_width(f), code);
  return buf;
}

std::string field_of(const std::string& header, const std::string& key, const std::string& where) {
  const std::string tag = " " + key + "=";
  const std::size_t at = header.find(tag);
  if (at == std::string::npos) malformed(where, "the section header has no " + key + "=");
  const std::size_t from = at + tag.size();
  return header.substr(from, header.find(' ', from) - from);
}

format format_of(const std::string& name, const std::string& where) {
  const expected<format> f = parse_format(name);
  if (!f) malformed(where, f.message());
  return *f;
}

// The preset a section names, with its inputs, and the sibling that holds its scales.
tensor_core_preset preset_of(const std::string& header, const std::string& where) {
  const std::string name = field_of(header, "preset", where), scale = field_of(header, "scale", where);
  const int block = std::stoi(field_of(header, "scale_block", where));
  expected<tensor_core_preset> p = find_preset(name);
  if (!p) malformed(where, p.message());
  if (scale != "-") {
    const format s = format_of(scale, where);
    const std::string family = name.substr(0, name.find('-'));
    bool found = false;
    for (const tensor_core_preset& q : tensor_core_presets())
      if (q.name.starts_with(family + "-") && q.scale && *q.scale == s && q.model.block.scale_block == block &&
          q.a == p->a && q.instruction_k == p->instruction_k) {
        p = q;
        found = true;
        break;
      }
    if (!found) malformed(where, "no " + family + " preset with k" + std::to_string(p->instruction_k) + " and " + scale + " scales per " + std::to_string(block));
  }
  const format fa = field_of(header, "a", where) == "fp32" && p->truncates_inputs ? p->a : format_of(field_of(header, "a", where), where);
  const format fb = field_of(header, "b", where) == "fp32" && p->truncates_inputs ? p->b : format_of(field_of(header, "b", where), where);
  expected<tensor_core_preset> q = with_inputs(*p, fa, fb);
  if (!q) malformed(where, q.message());
  return *q;
}

void report(const section& s) {
  if (s.cases == 0) return;
  std::cout << (s.mismatched == 0 ? "ok   " : "FAIL ") << s.preset.name << " " << to_string(s.preset.a) << " x "
            << to_string(s.preset.b) << " -> " << (s.fp16 ? "fp16" : "fp32") << ", K = " << s.k << ": " << s.cases
            << " cases, " << s.exact << " bit-exact";
  if (s.nan_any != 0) std::cout << ", " << s.nan_any << " NaN of the host CPU's pattern";
  if (s.frexp_c != 0) std::cout << ", " << s.frexp_c << " with mmasim's frexp reading of a non-finite C";
  if (s.mismatched != 0) std::cout << ", " << s.mismatched << " MISMATCHED";
  std::cout << '\n';
}

struct totals {
  std::uint64_t cases = 0, exact = 0, nan_any = 0, frexp_c = 0, mismatched = 0, sections = 0;
};

void check_file(const std::filesystem::path& path, totals& t) {
  std::ifstream in(path);
  if (!in) malformed(path.string(), "cannot open");
  section s;
  std::string line;
  int printed = 0;
  auto close = [&] {
    report(s);
    t.cases += s.cases;
    t.exact += s.exact;
    t.nan_any += s.nan_any;
    t.frexp_c += s.frexp_c;
    t.mismatched += s.mismatched;
    t.sections += s.cases != 0 ? 1 : 0;
  };
  for (std::uint64_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path.filename().string() + ":" + std::to_string(number);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '@') {
      close();
      s = section{};
      s.header = line + " ";
      s.where = where;
      s.preset = preset_of(s.header, where);
      s.fp16 = field_of(s.header, "out", where) == "fp16";
      s.k = std::stoi(field_of(s.header, "k", where));
      continue;
    }
    if (s.header.empty()) malformed(where, "a case before the first '@' section header");
    std::istringstream words(line);
    std::string fa, fb, fc, fsa, fsb, fd;
    if (!(words >> fa >> fb >> fc >> fsa >> fsb >> fd)) malformed(where, "expected six fields A B C SA SB D");
    const tensor_core_preset& p = s.preset;
    const format out = s.fp16 ? formats::fp16 : formats::fp32;
    const format in_a = p.truncates_inputs ? formats::fp32 : p.a, in_b = p.truncates_inputs ? formats::fp32 : p.b;
    const format sf = p.scale.value_or(formats::e8m0fnu);
    const std::vector<std::uint32_t> a = codes(fa, in_a, where), b = codes(fb, in_b, where),
                                     sa = codes(fsa, sf, where), sb = codes(fsb, sf, where);
    const std::uint32_t c = codes(fc, out, where).at(0), want = codes(fd, out, where).at(0);
    if (a.size() != static_cast<std::size_t>(s.k)) malformed(where, "A has " + std::to_string(a.size()) + " codes, not K");
    const expected<std::uint32_t> got = tensor_core_dot_codes(p, s.fp16, a, b, c, sa, sb);
    if (!got) malformed(where, got.message());
    ++s.cases;
    const bool nan_got = decode(out, *got).cls == value_class::nan, nan_want = decode(out, want).cls == value_class::nan;
    if (*got == want) {
      ++s.exact;
    } else if (nan_got && nan_want && !p.model.block.all_ones_nan) {
      ++s.nan_any;
    } else if (p.model.block.drop_far_c && !s.fp16 && with_frexp_reading_of_c(p, a, b, c) == want) {
      ++s.frexp_c;
    } else {
      ++s.mismatched;
      if (printed++ < 8)
        std::cout << "  " << where << ": fpemu " << hex(out, *got) << " (" << to_decimal(out, *got) << "), mmasim "
                  << hex(out, want) << " (" << to_decimal(out, want) << ")\n";
    }
  }
  close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: mmasim_vectors PATH... (vector files or folders of *.txt from scripts/mmasim_vectors.py)\n";
    return 2;
  }
  totals t;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path = argv[i];
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(path)) {
      for (const auto& e : std::filesystem::directory_iterator(path))
        if (e.path().extension() == ".txt") files.push_back(e.path());
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(path);
    }
    if (files.empty()) malformed(path.string(), "no vector files");
    for (const auto& f : files) check_file(f, t);
  }
  std::cout << t.sections << " sections, " << t.cases << " cases: " << t.exact << " bit-exact, " << t.nan_any
            << " NaN of the host CPU's pattern, " << t.frexp_c << " with mmasim's frexp reading of a non-finite C, "
            << t.mismatched << " mismatched\n";
  return t.mismatched == 0 ? 0 : 1;
}
