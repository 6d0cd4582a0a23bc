// Compares two builds of libfpemu.so in one process: both are loaded side by side and their array
// kernels called in turn on the same data, so that a slow or fast spell of the machine falls on
// both (on a shared VM memcpy's rate moves by a third between runs of one binary, more than the
// changes measured). Each cell (SIMD target, data set, kind, format, mode) runs ROUNDS times: memcpy
// of the same elements, then each build; it prints the medians (G elements/s) and their ratio
// new / base, and checks that both builds give the same bits. Kinds: encode (round_array to
// storage-width codes), round (round_in_place), decode (decode_array of storage-width codes, the
// data set's in nearest-even, as bench_round's; once per format, whatever the modes), and the
// element-wise ops add, mul, div, fma and sqrt on storage-width codes, with bench_round's
// operands (bf16, fp16 and formats of 8 bits), and keystream (the random words of a stochastic
// mode alone, fill_keystream in the kernels' chunks, as bench_round's; once per mode, whatever the
// formats).
//
//   lib_ab BASE.so NEW.so [--rounds 5] [--targets AVX3,AVX2,SSE4] [--data normal,wide]
//          [--kinds encode,round] [--formats bf16,...] [--modes rne,...,sr16,sr-exact]
//
// Build both libraries with CXXFLAGS=-fno-gnu-unique (a build folder of their own, `meson setup
// --buildtype=release`, target libfpemu.so.0.1.0): their parameter caches are thread_local objects
// of inline functions, which GCC otherwise makes one object for the whole process, so that one
// build would read the other's parameters. The data sets are bench_round's (2^24 floats).
// Exit status 1 where the two builds' results differ, 2 on bad arguments.
#include <dlfcn.h>
#include <hwy/targets.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/spec.hpp"
#include "round_data.hpp"
#include "src/array_simd.hpp"

namespace {

using fpemu::expected;
using encode8 = expected<std::uint8_t> (*)(const fpemu::format&, std::span<const float>, std::span<std::uint8_t>,
                                           const fpemu::rounding&, fpemu::sr_stream, std::span<std::uint8_t>);
using encode16 = expected<std::uint8_t> (*)(const fpemu::format&, std::span<const float>, std::span<std::uint16_t>,
                                            const fpemu::rounding&, fpemu::sr_stream, std::span<std::uint8_t>);
using in_place = expected<std::uint8_t> (*)(const fpemu::format&, std::span<float>, const fpemu::rounding&,
                                            fpemu::sr_stream, std::span<std::uint8_t>);
template <class Code>
using apply_fn = expected<std::uint8_t> (*)(fpemu::array_op, const fpemu::format&, std::span<const Code>,
                                            std::span<const Code>, std::span<Code>, const fpemu::rounding&,
                                            fpemu::sr_stream, std::span<std::uint8_t>);
template <class Code>
using fma_fn = expected<std::uint8_t> (*)(const fpemu::format&, std::span<const Code>, std::span<const Code>,
                                          std::span<const Code>, std::span<Code>, const fpemu::rounding&,
                                          fpemu::sr_stream, std::span<std::uint8_t>);
template <class Code>
using sqrt_fn = expected<std::uint8_t> (*)(const fpemu::format&, std::span<const Code>, std::span<Code>,
                                           const fpemu::rounding&, fpemu::sr_stream, std::span<std::uint8_t>);
template <class Code>
using decode_fn = expected<std::uint8_t> (*)(const fpemu::format&, std::span<const Code>, std::span<float>);
using parse_format_fn = expected<fpemu::format> (*)(std::string_view);
using parse_mode_fn = expected<fpemu::round_mode> (*)(std::string_view);
using keystream_fn = void (*)(std::uint64_t, std::uint32_t, std::uint64_t, std::size_t, int, std::uint32_t*);

// The element-wise ops on codes of one width.
template <class Code>
struct ops {
  apply_fn<Code> apply;
  fma_fn<Code> fma;
  sqrt_fn<Code> sqrt;
};

struct build {
  std::string name;
  encode8 to8;
  encode16 to16;
  in_place round;
  decode_fn<std::uint8_t> decode8;
  decode_fn<std::uint16_t> decode16;
  ops<std::uint8_t> ops8;
  ops<std::uint16_t> ops16;
  keystream_fn keystream;
};

bool is_op(const std::string& kind) {
  return std::find(std::begin(fpemu::bench::kOps), std::end(fpemu::bench::kOps), kind) != std::end(fpemu::bench::kOps);
}

// `op` through one build's functions `o`, on bench_round's operands (in: op_operand 0, 1, 2), into out.
template <class Code>
expected<std::uint8_t> run_op(const ops<Code>& o, const std::string& op, const fpemu::format& f,
                              const std::vector<Code> (&in)[3], std::vector<Code>& out, const fpemu::rounding& r) {
  const fpemu::sr_stream sr{1, 0, 0};
  if (op == "fma") return o.fma(f, in[0], in[1], in[2], out, r, sr, {});
  if (op == "sqrt") return o.sqrt(f, in[0], out, r, sr, {});
  const fpemu::array_op a = op == "add"   ? fpemu::array_op::add
                            : op == "mul" ? fpemu::array_op::mul
                                          : fpemu::array_op::div;
  return o.apply(a, f, in[0], in[1], out, r, sr, {});
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "lib_ab: %s (usage: lib_ab BASE.so NEW.so [--rounds N] [--targets LIST] [--data LIST] "
               "[--kinds LIST] [--formats LIST] [--modes LIST])\n", why.c_str());
  std::exit(2);
}

template <class F>
F symbol(void* lib, const char* name, const std::string& path) {
  void* p = dlsym(lib, name);
  if (p == nullptr) usage(path + ": no symbol " + name);
  return reinterpret_cast<F>(p);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) out.push_back(item);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) usage("two libraries needed");
  int rounds = 5;
  std::vector<std::string> targets = {"AVX3", "AVX2", "SSE4"}, sets = {"normal", "wide"}, kinds = {"encode", "round"};
  std::vector<std::string> formats(std::begin(fpemu::bench::kRoundFormats), std::end(fpemu::bench::kRoundFormats));
  std::vector<std::string> modes(std::begin(fpemu::bench::kRoundModes), std::end(fpemu::bench::kRoundModes));
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 == argc) usage(a + ": no value");
    const std::string v = argv[++i];
    if (a == "--rounds") {
      rounds = std::atoi(v.c_str());
      if (rounds < 1 || rounds > 1000) usage("--rounds " + v + ": not in 1..1000");
    } else if (a == "--targets") {
      targets = split(v);
    } else if (a == "--data") {
      sets = split(v);
    } else if (a == "--kinds") {
      kinds = split(v);
    } else if (a == "--formats") {
      formats = split(v);
    } else if (a == "--modes") {
      modes = split(v);
    } else {
      usage(a + ": unknown option");
    }
  }
  std::vector<build> builds;
  parse_format_fn parse_format = nullptr;
  parse_mode_fn parse_mode = nullptr;
  for (int i = 1; i <= 2; ++i) {
    const std::string path = argv[i];
    // RTLD_DEEPBIND: each library calls its own functions, not the first one's of the same name.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (lib == nullptr) usage(dlerror());
    builds.push_back(
        {path.substr(path.rfind('/') + 1),
         symbol<encode8>(lib, "_ZN5fpemu11round_arrayERKNS_6formatESt4spanIKfLm18446744073709551615EES3_IhLm1844674407"
                              "3709551615EERKNS_8roundingENS_9sr_streamES6_", path),
         symbol<encode16>(lib, "_ZN5fpemu11round_arrayERKNS_6formatESt4spanIKfLm18446744073709551615EES3_ItLm184467440"
                               "73709551615EERKNS_8roundingENS_9sr_streamES3_IhLm18446744073709551615EE", path),
         symbol<in_place>(lib, "_ZN5fpemu14round_in_placeERKNS_6formatESt4spanIfLm18446744073709551615EERKNS_8roundi"
                               "ngENS_9sr_streamES3_IhLm18446744073709551615EE", path),
         symbol<decode_fn<std::uint8_t>>(lib, "_ZN5fpemu12decode_arrayERKNS_6formatESt4spanIKhLm1844674407370955161"
                                              "5EES3_IfLm18446744073709551615EE", path),
         symbol<decode_fn<std::uint16_t>>(lib, "_ZN5fpemu12decode_arrayERKNS_6formatESt4spanIKtLm184467440737095516"
                                               "15EES3_IfLm18446744073709551615EE", path),
         {symbol<apply_fn<std::uint8_t>>(lib, "_ZN5fpemu5applyENS_8array_opERKNS_6formatESt4spanIKhLm1844674407370955"
                                              "1615EES6_S4_IhLm18446744073709551615EERKNS_8roundingENS_9sr_streamES7_",
                                         path),
          symbol<fma_fn<std::uint8_t>>(lib, "_ZN5fpemu9apply_fmaERKNS_6formatESt4spanIKhLm18446744073709551615EES5_S5_"
                                            "S3_IhLm18446744073709551615EERKNS_8roundingENS_9sr_streamES6_", path),
          symbol<sqrt_fn<std::uint8_t>>(lib, "_ZN5fpemu10apply_sqrtERKNS_6formatESt4spanIKhLm18446744073709551615EES3_"
                                             "IhLm18446744073709551615EERKNS_8roundingENS_9sr_streamES6_", path)},
         {symbol<apply_fn<std::uint16_t>>(lib, "_ZN5fpemu5applyENS_8array_opERKNS_6formatESt4spanIKtLm184467440737095"
                                               "51615EES6_S4_ItLm18446744073709551615EERKNS_8roundingENS_9sr_streamES4_"
                                               "IhLm18446744073709551615EE", path),
          symbol<fma_fn<std::uint16_t>>(lib, "_ZN5fpemu9apply_fmaERKNS_6formatESt4spanIKtLm18446744073709551615EES5_S5"
                                             "_S3_ItLm18446744073709551615EERKNS_8roundingENS_9sr_streamES3_IhLm184467"
                                             "44073709551615EE", path),
          symbol<sqrt_fn<std::uint16_t>>(lib, "_ZN5fpemu10apply_sqrtERKNS_6formatESt4spanIKtLm18446744073709551615EES3"
                                              "_ItLm18446744073709551615EERKNS_8roundingENS_9sr_streamES3_IhLm18446744"
                                              "073709551615EE", path)},
         symbol<keystream_fn>(lib, "_ZN5fpemu4simd14fill_keystreamEmjmmiPj", path)});
    symbol<void (*)(int)>(lib, "_ZN5fpemu17set_array_threadsEi", path)(1);
    parse_format = symbol<parse_format_fn>(lib, "_ZN5fpemu12parse_formatESt17basic_string_viewIcSt11char_traitsIcEE", path);
    parse_mode = symbol<parse_mode_fn>(lib, "_ZN5fpemu16parse_round_modeESt17basic_string_viewIcSt11char_traitsIcEE", path);
  }
  // Every argument is checked before the table starts.
  // The CPU's targets, listed before any is forced (then the list holds that one alone).
  const std::vector<std::int64_t> cpu_targets = hwy::SupportedAndGeneratedTargets();
  auto target_of = [&](const std::string& name) {
    for (const std::int64_t t : cpu_targets)
      if (name == hwy::TargetName(t)) return t;
    usage("--targets " + name + ": not a target of this CPU");
  };
  auto rounding_of = [&](const std::string& mode) {
    fpemu::rounding r;
    if (const int k = fpemu::bench::sr_bits_of(mode); k != 0) {
      if (k < 1 || k > 32) usage("--modes " + mode + ": sr bits not in 1..32");
      r.mode = fpemu::round_mode::stochastic;
      r.sr_bits = k;
      return r;
    }
    const expected<fpemu::round_mode> m = parse_mode(mode);
    if (!m) usage("--modes " + mode + ": " + m.message());
    r.mode = *m;
    return r;
  };
  for (const std::string& t : targets) target_of(t);
  for (const std::string& m : modes) rounding_of(m);
  for (const std::string& k : kinds)
    if (k != "encode" && k != "round" && k != "decode" && k != "keystream" && !is_op(k))
      usage("--kinds " + k + ": not encode, round, decode, keystream, add, mul, div, fma or sqrt");
  for (const std::string& d : sets)
    if (d != "normal" && d != "wide") usage("--data " + d + ": not normal or wide");
  for (const std::string& fmt : formats) {
    const expected<fpemu::format> f = parse_format(fmt);
    if (!f) usage("--formats " + fmt + ": " + f.message());
    if (fpemu::width(*f) > 16) usage("--formats " + fmt + ": codes wider than 16 bits");
  }
  bool all_same = true;
  std::printf("| target | data | kind | cell | memcpy | %s | %s | new / base |\n|---|---|---|---|---|---|---|---|\n",
              builds[0].name.c_str(), builds[1].name.c_str());
  for (const std::string& set : sets) {
    const std::vector<float> x = fpemu::bench::round_data(set);
    const std::size_t n = x.size();
    std::vector<float> copy(n), y(n), first_values(n);
    std::vector<std::uint8_t> codes8[2] = {std::vector<std::uint8_t>(n), std::vector<std::uint8_t>(n)};
    std::vector<std::uint16_t> codes16[2] = {std::vector<std::uint16_t>(n), std::vector<std::uint16_t>(n)};
    std::vector<std::uint8_t> operands8[3];
    std::vector<std::uint16_t> operands16[3];
    std::vector<std::uint32_t> words[2] = {std::vector<std::uint32_t>(fpemu::simd::keystream_chunk),
                                           std::vector<std::uint32_t>(fpemu::simd::keystream_chunk)};
    for (const std::string& target : targets) {
      hwy::SetSupportedTargetsForTest(target_of(target));  // Highway's state is libhwy's, shared by both builds
      for (const std::string& kind : kinds) {
        for (const std::string& fmt : formats) {
          const fpemu::format f = *parse_format(fmt);
          const bool narrow = fpemu::width(f) <= 8;
          if (is_op(kind) || kind == "decode") {  // the data set's codes in f (nearest-even), as bench_round's
            if (narrow) (void)builds[0].to8(f, x, codes8[0], {}, fpemu::sr_stream{1, 0, 0}, {});
            else (void)builds[0].to16(f, x, codes16[0], {}, fpemu::sr_stream{1, 0, 0}, {});
          }
          for (std::size_t k = 0; is_op(kind) && k < 3; ++k) {  // the operands
            if (narrow) operands8[k] = fpemu::bench::op_operand(codes8[0], k, kind, fpemu::magnitude_mask(f));
            else operands16[k] = fpemu::bench::op_operand(codes16[0], k, kind, fpemu::magnitude_mask(f));
          }
          if (kind == "keystream" && fmt != formats.front()) break;  // no format of its own
          for (const std::string& mode : modes) {
            if (kind == "decode" && mode != modes.front()) break;  // no mode of its own
            const fpemu::rounding r = rounding_of(mode);
            const int width = fpemu::array_random_width(r);
            if (kind == "keystream" && !fpemu::is_stochastic(r.mode)) continue;
            const bool values = kind == "round" || kind == "decode";  // results in y, else in the codes
            std::vector<double> t[3];
            bool same = true;
            for (int k = -1; k < rounds; ++k) {  // round -1 warms up, and is not counted
              auto start = std::chrono::steady_clock::now();
              std::memcpy(copy.data(), x.data(), n * sizeof(float));
              if (k >= 0) t[0].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
              for (int turn = 0; turn < 2; ++turn) {
                const int b = turn ^ (k & 1);  // the order alternates (ABBA): neither always follows memcpy
                if (kind == "round") std::memcpy(y.data(), x.data(), n * sizeof(float));
                start = std::chrono::steady_clock::now();
                expected<std::uint8_t> flags = 0;
                if (kind == "round") {
                  flags = builds[b].round(f, y, r, fpemu::sr_stream{1, 0, 0}, {});
                } else if (kind == "decode") {
                  flags = narrow ? builds[b].decode8(f, codes8[0], y) : builds[b].decode16(f, codes16[0], y);
                } else if (kind == "keystream") {  // into an L1 chunk; the bits are compared below
                  for (std::size_t i = 0; i < n; i += fpemu::simd::keystream_chunk)
                    builds[b].keystream(1, 0, i, fpemu::simd::keystream_chunk, width, words[b].data());
                } else if (is_op(kind)) {
                  flags = narrow ? run_op(builds[b].ops8, kind, f, operands8, codes8[b], r)
                                 : run_op(builds[b].ops16, kind, f, operands16, codes16[b], r);
                } else if (narrow) {
                  flags = builds[b].to8(f, x, codes8[b], r, fpemu::sr_stream{1, 0, 0}, {});
                } else {
                  flags = builds[b].to16(f, x, codes16[b], r, fpemu::sr_stream{1, 0, 0}, {});
                }
                if (k >= 0) t[b + 1].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                if (!flags) usage(fmt + " " + mode + ": " + flags.message());
                if (values && turn == 0) first_values = y;
                if (values && turn == 1) same = same && std::memcmp(y.data(), first_values.data(), n * 4) == 0;
              }
              if (kind == "keystream" && k == -1) {  // the whole stream once, untimed
                std::vector<std::uint32_t> whole[2] = {std::vector<std::uint32_t>(n), std::vector<std::uint32_t>(n)};
                for (int b = 0; b < 2; ++b) builds[b].keystream(1, 0, 0, n, width, whole[b].data());
                same = whole[0] == whole[1];
              } else if (!values && kind != "keystream") {
                same = same && (narrow ? codes8[0] == codes8[1] : codes16[0] == codes16[1]);
              }
            }
            all_same = all_same && same;
            auto rate = [&](int i) { return static_cast<double>(n) / median(t[i]) / 1e9; };
            const std::string cell = kind == "keystream" ? mode : kind == "decode" ? fmt : fmt + " " + mode;
            std::printf("| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f%s |\n", target.c_str(), set.c_str(),
                        kind.c_str(), cell.c_str(), rate(0), rate(1), rate(2),
                        rate(2) / rate(1), same ? "" : " (results differ)");
            std::fflush(stdout);
          }
        }
      }
    }
  }
  return all_same ? 0 : 1;
}
