// The vector array paths (src/array_simd.cpp, behind array.hpp) against the scalar core, bit for
// bit, on every Highway target the CPU has (each forced with hwy::SetSupportedTargetsForTest):
// codes, per-element flags, the union of the flags, and round_in_place's values (NaN == NaN),
// each call made with per-element flags and without (the kernels' flag-free path), the unions
// also over short windows (1 to 64 elements: tails, single and several vectors), for
//  - every named format of at most 16 bits the kernels take, tf32, e8m13, fp32 (binary64
//    inputs) and custom eXmY formats (odd biases, a one-bit exponent, e11m20, e8m22);
//  - binary32 and binary64 inputs: every finite value of the format, every midpoint between
//    adjacent values (and the quarter points around the smallest normal and the overflow
//    threshold), each +-1 ulp of the input type: every rounding boundary of the deterministic
//    modes (exhaustively for formats of <= 16 bits, <= 12 under AddressSanitizer, around
//    sampled codes for wider ones); plus
//    zeros, infinities, NaNs (quiet, signaling, payloads), binary32/64 subnormals, values above
//    the largest finite and far below the smallest subnormal, random bit patterns and random
//    values across the format's range, blocks of flag-free lanes (NaN payloads beside exact
//    values), of an arithmetic result's quiet NaN beside exact values, and of lanes that round
//    up to the smallest normal without tininess, in runs of
//    neighbouring inputs and shuffled;
//  - every mode (rne rna rz ru rd rto, sr with sr_bits 1 3 8 16 17 23 32, sr-exact on the
//    scalar path) under every overflow policy the format allows (saturate and nan on the inputs
//    near and above the overflow threshold, the non-finite ones and 1 in 8 of the rest); for sr
//    also every input moved onto the carry boundary of its keystream bits (the smallest value
//    that rounds away from zero with those bits) and just below it;
// element-wise arithmetic (apply, apply_fma, apply_sqrt: src/array_ops.cpp; on 32-bit and
// storage-width codes) on every pair of codes of the FP8/FP6/FP4 formats and on random and
// near-cancelling bf16/fp16 pairs in every mode, and its round-to-odd step on binary32 operands
// with full significands;
// decode_array (float, double) for every code, convert_array between format pairs for every
// source code (signaling NaNs included), fill_keystream against keystream_bits (also at the end
// of the 64-bit index space), results independent of thread count, array splitting, target and
// the floating-point environment (rounding direction, FTZ/DAZ), and the error paths. Each test
// case prints its case counts.
#include <doctest/doctest.h>

#include <hwy/targets.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <csignal>
#include <cfenv>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"
#include "src/array_simd.hpp"

using namespace fpemu;

namespace {

// ---- Targets --------------------------------------------------------------------------------

const std::vector<std::int64_t>& all_targets() {
  static const std::vector<std::int64_t> targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    return hwy::SupportedAndGeneratedTargets();
  }();
  return targets;
}

// Runs fn(target name) with the kernels dispatched to each target in turn.
template <class Fn>
void for_each_target(Fn fn) {
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer (./dev test's second pass) the best target only: every target is
  // checked bit for bit in the plain build (suite 'targets'), and five passes would make this
  // test the suite's slowest by far.
  const std::vector<std::int64_t> targets{all_targets().front()};
#else
  const std::vector<std::int64_t> targets = all_targets();
#endif
  for (const std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    const std::string name = hwy::TargetName(t);
    REQUIRE(std::string(simd::target_name()) == name);
    fn(name);
  }
  hwy::SetSupportedTargetsForTest(0);
}

// What the child process of the index-space test is running, for its alarm handler.
char g_current[256];
int g_current_length = 0;
extern "C" void on_alarm(int) {
  const char head[] = "TIMEOUT: did not return: ";
  (void)!write(STDOUT_FILENO, head, sizeof head - 1);
  (void)!write(STDOUT_FILENO, g_current,
               static_cast<std::size_t>(std::min<int>(g_current_length, sizeof g_current - 1)));
  (void)!write(STDOUT_FILENO, "\n", 1);
  _exit(3);
}

// ---- Mismatch bookkeeping -------------------------------------------------------------------

struct tally {
  std::uint64_t cases = 0, mismatches = 0;
  void bad(const std::string& what) {
    if (mismatches++ < 25) {
      std::printf("MISMATCH %s\n", what.c_str());
      std::fflush(stdout);
    }
  }
};

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}
std::uint64_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
std::uint64_t bits_of(double x) { return std::bit_cast<std::uint64_t>(x); }
template <class T>
std::string show(T x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
  return hex(bits_of(x)) + " (" + buf + ")";
}
bool same_value(float a, float b) { return bits_of(a) == bits_of(b) || (a != a && b != b); }

std::string describe(const format& f, const rounding& r) {
  std::string s = to_string(f) + " " + std::string(to_string(r.mode)) + " " + std::string(to_string(r.overflow));
  if (r.mode == round_mode::stochastic) s += " sr_bits=" + std::to_string(r.sr_bits);
  return s;
}

std::string result(std::uint32_t code, std::uint8_t flags) { return "code " + hex(code) + " flags " + hex(flags); }

constexpr std::uint32_t kUnwritten = 0xdeadbeef;
constexpr std::uint8_t kUnwrittenFlags = 0xee;

// ---- Formats, roundings, inputs -------------------------------------------------------------

format fmt(const char* spec) {
  const auto f = parse_format(spec);
  REQUIRE_MESSAGE(f.has_value(), spec);
  return *f;
}

constexpr int kSrBits[] = {1, 3, 8, 16, 17, 23, 32};

// The six deterministic modes and sr with every kSrBits, under every policy the format allows.
std::vector<rounding> roundings_for(const format& f) {
  std::vector<rounding> rs;
  const round_mode modes[] = {round_mode::nearest_even,    round_mode::nearest_away,    round_mode::toward_zero,
                              round_mode::toward_positive, round_mode::toward_negative, round_mode::to_odd};
  for (const overflow_policy p : {overflow_policy::ieee, overflow_policy::saturate, overflow_policy::nan}) {
    if (p == overflow_policy::nan && !has_nan(f)) continue;
    for (const round_mode m : modes) rs.push_back({m, p, 16});
    for (const int k : kSrBits) rs.push_back({round_mode::stochastic, p, k});
  }
  return rs;
}

// Every code of formats of at most kEveryCode bits (the sign included); for wider ones, the codes
// around zero, the smallest normal, 1.0 and the largest finite, the non-finite codes and random
// codes, with both signs. Under AddressSanitizer, which runs the best target only, the 16-bit
// formats are sampled too: every code of them runs on every target in the plain build (suite
// 'targets'), and under ASan bf16, fp16 and e6m9 took over half of the first test case's time.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kEveryCode = 12;
#else
constexpr int kEveryCode = 16;
#endif

// Under AddressSanitizer the cases that dominate its run sample too (every one runs whole on every
// target in the plain build): the tables of results every sixth rounding (and every sixth width of
// random bits), the one-pass probes at one lane of the two (the sanitizer pass ran test_array_simd
// for 266 s of a 31-minute CI, and 300 s of a 35-minute one; every third rounding, 204 s of a
// 31-minute one, 159 s alone, and every sixth 129 s alone).
#if defined(__SANITIZE_ADDRESS__)
constexpr int kEveryRounding = 6;
constexpr std::initializer_list<std::size_t> kProbeLanes = {11};
#else
constexpr int kEveryRounding = 1;
constexpr std::initializer_list<std::size_t> kProbeLanes = {0, 11};
#endif

// fn(Code{}) with Code the storage-width type of f's codes: uint8_t up to 8 bits, uint16_t up to
// 16, else uint32_t.
template <class Fn>
void with_storage_code(const format& f, Fn fn) {
  if (width(f) <= 8) {
    fn(std::uint8_t{});
  } else if (width(f) <= 16) {
    fn(std::uint16_t{});
  } else {
    fn(std::uint32_t{});
  }
}

std::vector<std::uint32_t> codes_of(const format& f, std::mt19937_64& rng, int random_codes = 10000) {
  std::vector<std::uint32_t> codes;
  if (width(f) <= kEveryCode) {
    for (std::uint32_t c = 0; c < (std::uint32_t{1} << width(f)); ++c) codes.push_back(c);
    return codes;
  }
  std::vector<std::uint32_t> mags;
  const std::int64_t top = magnitude_mask(f);
  for (const std::int64_t base : {std::int64_t{0}, std::int64_t{1} << f.frac_bits,
                                  std::int64_t{f.bias} << f.frac_bits, std::int64_t{max_finite_magnitude(f)},
                                  top}) {
    for (std::int64_t c = base - 256; c < base + 256; ++c)
      if (c >= 0 && c <= top) mags.push_back(static_cast<std::uint32_t>(c));
  }
  for (int i = 0; i < random_codes; ++i) mags.push_back(static_cast<std::uint32_t>(rng()) & magnitude_mask(f));
  for (const std::uint32_t m : mags) {
    codes.push_back(m);
    if (f.is_signed) codes.push_back(m | sign_mask(f));
  }
  return codes;
}

template <class T>
struct input_traits;
template <>
struct input_traits<float> {
  using U = std::uint32_t;
  static constexpr int digits = 24;
  static constexpr U specials[] = {
      0x00000000, 0x80000000, 0x7f800000, 0xff800000,  // zeros, infinities
      0x7fc00000, 0xffc00000, 0x7fffffff, 0xffffffff, 0x7fc00001, 0x7fe12345,  // quiet NaNs
      0x7f800001, 0xff800001, 0x7fbfffff, 0xffbfffff, 0x7f812345,              // signaling NaNs
      0x00000001, 0x80000001, 0x00000002, 0x00000003, 0x007fffff, 0x807fffff,  // subnormals
      0x00400000, 0x80400000, 0x00400001, 0x003fffff, 0x00012345, 0x80654321,
      0x00800000, 0x80800000, 0x00800001, 0x7f7fffff, 0xff7fffff, 0x7f000000,  // normal extremes
  };
};
template <>
struct input_traits<double> {
  using U = std::uint64_t;
  static constexpr int digits = 53;
  static constexpr U specials[] = {
      0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
      0x7ff8000000000000, 0xfff8000000000000, 0x7fffffffffffffff, 0xffffffffffffffff, 0x7ff8000000000001,
      0x7ff0000000000001, 0xfff0000000000001, 0x7ff7ffffffffffff, 0x7ff4000000000000,
      0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff, 0x800fffffffffffff, 0x0008000000000000,
      0x0010000000000000, 0x8010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff,
      0x36a0000000000000, 0xb6a0000000000000,  // 2^-149, the smallest binary32 subnormal
      0x36b0000000000000, 0x380fffffc0000000,  // 2^-148; the largest binary32 subnormal
      0x3810000000000000, 0x47efffffe0000000,  // binary32's smallest normal and largest finite
  };
};

// The inputs of the encode checks for format f in type T (see the file comment).
template <class T>
std::vector<T> inputs_for(const format& f, const std::vector<std::uint32_t>& codes, std::mt19937_64& rng,
                          int random_inputs = 8000) {
  using tr = input_traits<T>;
  using U = typename tr::U;
  constexpr T inf = std::numeric_limits<T>::infinity();
  constexpr int bits = sizeof(T) * 8;
  std::vector<T> v;
  // First a block that raises no flag in policy ieee: quiet NaNs with random payloads, exact
  // values of the format, zeros (a lane of such a vector that the kernels hand to the core must
  // not add a flag to the union).
  std::vector<double> exact;
  for (const std::uint32_t c : codes)
    if (const double x = to_double(f, c); std::isfinite(x) && static_cast<double>(static_cast<T>(x)) == x)
      exact.push_back(x);
  for (int i = 0; i < 256; ++i) {
    const U quiet_nan = (std::bit_cast<U>(inf) | (U{1} << (tr::digits - 2))) |
                        (static_cast<U>(rng()) >> (bits - tr::digits + 2)) | (static_cast<U>(rng() & 1) << (bits - 1));
    if (i % 4 == 0 || (i % 8 == 3)) {
      v.push_back(std::bit_cast<T>(quiet_nan));
    } else if (i % 8 == 7) {
      v.push_back(rng() & 1 ? T{0} : -T{0});
    } else {
      v.push_back(static_cast<T>(exact[rng() % exact.size()]));
    }
  }
  // Then the quiet NaN of an arithmetic result (no payload below the quiet bit) of either sign
  // between exact values: vectors the flag-free fast path takes whole, NaN lanes included (in a
  // format without NaNs they raise invalid, which the union must hold).
  const U canonical_nan = std::bit_cast<U>(inf) | (U{1} << (tr::digits - 2));
  for (int i = 0; i < 256; ++i) {
    if (i % 4 == 1) {
      v.push_back(std::bit_cast<T>(canonical_nan | (static_cast<U>(rng() & 1) << (bits - 1))));
    } else {
      v.push_back(static_cast<T>(exact[rng() % exact.size()]));
    }
  }
  // Then a block whose inexact lanes round, at p bits, up to the smallest normal (not tiny in
  // the nearest modes: they raise inexact but not underflow) between exact values and zeros
  // (no NaN: its vectors take the kernels' flag-free fast path).
  const double min_normal_f = min_normal(f), just_below = pow2(emin(f) - f.frac_bits - 2);
  for (int i = 0; i < 256; ++i) {
    const double u = static_cast<double>(1 + (rng() & 0xfffff)) * 0x1p-21;  // in (0, 1/2]
    const T x = static_cast<T>(min_normal_f - just_below * u);
    const double a = static_cast<double>(x);
    if (i % 4 == 0 && a < min_normal_f && a > min_normal_f - just_below) {
      v.push_back(rng() & 1 ? -x : x);
    } else if (i % 4 == 3) {
      v.push_back(rng() & 1 ? T{0} : -T{0});
    } else {
      v.push_back(static_cast<T>(exact[rng() % exact.size()]));
    }
  }
  const auto add3 = [&](double x) {
    const T t = static_cast<T>(x);
    v.push_back(t);
    v.push_back(std::nextafter(t, inf));
    v.push_back(std::nextafter(t, -inf));
  };
  const double ulp_max = pow2(emax(f) - f.frac_bits);
  for (const std::uint32_t c : codes) {
    const double x = to_double(f, c);
    if (!std::isfinite(x)) continue;
    add3(x);
    const std::uint32_t mag = c & magnitude_mask(f);
    const double sign = (c & sign_mask(f)) != 0 ? -1.0 : 1.0;
    // The distance to the next value away from zero (to the next p-bit value past the largest
    // finite one: the overflow threshold of the nearest modes lies halfway).
    const double gap = mag < max_finite_magnitude(f) ? to_double(f, c + 1) - x : sign * ulp_max;
    add3(x + gap / 2);
    if (mag == frac_mask(f) || mag == max_finite_magnitude(f)) {  // tininess, overflow thresholds
      add3(x + gap / 4);
      add3(x + 3 * (gap / 4));
    }
  }
  for (const auto b : tr::specials) v.push_back(std::bit_cast<T>(b));
  // Above the largest finite value; far below the smallest subnormal.
  const double mx = max_finite(f), mn = min_positive(f);
  for (const double s : {1.0, -1.0}) {
    for (const double x : {mx + ulp_max, mx + 1.5 * ulp_max, mx + 2 * ulp_max, 1.5 * mx, 2 * mx, 1e30 * mx})
      add3(s * x);
    for (int k = 2; k <= 80; k += 3) {
      add3(s * std::ldexp(mn, -k));
      add3(s * std::ldexp(mn * 1.75, -k));
    }
  }
  // Random bit patterns (every class), and random values across the format's range.
  std::uniform_int_distribution<int> exponent(emin(f) - f.frac_bits - 6, emax(f) + 3);
  for (int i = 0; i < random_inputs; ++i) {
    v.push_back(std::bit_cast<T>(static_cast<typename tr::U>(rng())));
    const T m = static_cast<T>(1) + std::ldexp(static_cast<T>(rng() >> (65 - tr::digits)), 1 - tr::digits);
    const T x = static_cast<T>(std::ldexp(static_cast<double>(m), exponent(rng)));
    v.push_back(rng() & 1 ? -x : x);
  }
  // Every other block of 1024 shuffled among themselves: vectors that mix every kind of lane,
  // besides the runs of neighbouring inputs.
  std::vector<std::size_t> mixed;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i / 1024 % 2 == 1) mixed.push_back(i);
  std::vector<std::size_t> order = mixed;
  std::shuffle(order.begin(), order.end(), rng);
  const std::vector<T> before = v;
  for (std::size_t j = 0; j < mixed.size(); ++j) v[mixed[j]] = before[order[j]];
  return v;
}

// x moved onto the stochastic-rounding carry boundary of the random bits `r` (k of them): with
// |x| = (K + d) * 2^q, q the exponent of the result's quantum, the core rounds away from zero
// iff floor(d * 2^k) + r >= 2^k. Returns the smallest T at or above (K + (2^k - r) / 2^k) * 2^q
// (which rounds away), or with `below` the largest T under it (which does not), with x's sign;
// x itself where no r carries (r = 0) or x is zero, infinite or NaN.
template <class T>
T at_carry(const format& f, T x, std::uint64_t r, int k, bool below) {
  r &= (std::uint64_t{1} << k) - 1;
  const double a = std::fabs(static_cast<double>(x));
  if (!(a > 0) || std::isinf(a) || r == 0) return x;
  const int q = std::max(std::ilogb(a), emin(f)) - f.frac_bits;
  const auto whole = static_cast<std::uint64_t>(std::floor(std::ldexp(a, -q)));  // K < 2^25
  if (whole >= (std::uint64_t{1} << 30)) return x;  // far above the format's range
  // The boundary N * 2^(q - k): N < 2^62, exact in long double (64 significant bits).
  const std::uint64_t n = (whole << k) + ((std::uint64_t{1} << k) - r);
  const long double boundary = std::ldexp(static_cast<long double>(n), q - k);
  constexpr T inf = std::numeric_limits<T>::infinity();
  T t = static_cast<T>(boundary);
  if (!below) {
    if (static_cast<long double>(t) < boundary) t = std::nextafter(t, inf);
  } else {
    while (static_cast<long double>(t) >= boundary) t = std::nextafter(t, -inf);
  }
  return std::signbit(x) ? -t : t;
}

// ---- The encode check -----------------------------------------------------------------------

struct counts {
  std::uint64_t codes = 0;    // (input, rounding, target) triples checked: code and flags
  std::uint64_t values = 0;   // round_in_place values checked
  std::uint64_t crafted = 0;  // of `codes`, those on a stochastic carry boundary
  std::uint64_t policy = 0;   // of `codes`, those under policy saturate or nan
  std::uint64_t windows = 0;  // short calls whose flag union was checked
  std::uint64_t narrow = 0;   // codes checked from calls into storage-width (uint8/uint16) codes
};

// Buffers for check_one.
struct scratch {
  std::vector<rounded> want;
  std::vector<float> want_value, inplace;
  std::vector<std::uint32_t> codes;
  std::vector<std::uint8_t> flags;
  explicit scratch(std::size_t n) : want(n), want_value(n), inplace(n), codes(n), flags(n) {}
};

// Window lengths for the union checks: tails alone, whole vectors of every width, both.
constexpr std::size_t kWindows[] = {1, 2, 3, 5, 8, 13, 16, 17, 24, 31, 32, 33, 48, 64};

// round_array of xs into f by r with keystream sr, and round_in_place for float-valued formats,
// each with per-element flags and without (the kernels' flag-free path), on every target,
// against from() per element: codes, flags, values (NaN == NaN) and the union of the flags.
// With `windows`, also both calls without flags over consecutive short windows of xs (the
// union of each window against the core's). `random`: element i's keystream bits, for sr.
template <class T>
void check_one(const format& f, const rounding& r, const sr_stream& sr, const std::vector<std::uint64_t>& random,
               const std::vector<T>& xs, scratch& s, const std::string& label, bool windows, tally& ty, counts& n) {
  constexpr bool is_double = std::is_same_v<T, double>;
  const bool values = !is_double && simd::values_are_floats(f);
  const bool sr_mode = r.mode == round_mode::stochastic;
  const std::size_t size = xs.size();
  std::uint8_t want_all = 0;
  for (std::size_t i = 0; i < size; ++i) {
    s.want[i] = from(f, xs[i], r, sr_mode ? random[i] : 0);
    want_all |= s.want[i].flags;
    if (values) s.want_value[i] = to_float(f, s.want[i].code);
  }
  const std::span<std::uint32_t> codes(s.codes.data(), size);
  const std::span<std::uint8_t> flags(s.flags.data(), size);
  const std::span<float> inplace(s.inplace.data(), values ? size : 0);
  for_each_target([&](const std::string& target) {
    const std::string where =
        std::string(is_double ? "double" : "float") + " -> " + describe(f, r) + label + " on " + target;
    // [b, e) of one call's results against the core: codes or values, flags when asked for.
    const auto compare = [&](const char* what, std::size_t b, std::size_t e, std::uint8_t all, bool with_flags) {
      const bool value_call = std::string_view(what).starts_with("round_in_place");
      std::uint8_t want_union = 0;
      for (std::size_t i = b; i < e; ++i) {
        want_union |= s.want[i].flags;
        const bool same = value_call ? same_value(inplace[i], s.want_value[i]) : codes[i] == s.want[i].code;
        if (!same || (with_flags && flags[i] != s.want[i].flags))
          ty.bad(where + ": " + what + ": input " + show(xs[i]) + " (element " + std::to_string(i) + "): core " +
                 (value_call ? show(s.want_value[i]) : hex(s.want[i].code)) + " flags " + hex(s.want[i].flags) +
                 ", array " + (value_call ? show(inplace[i]) : hex(codes[i])) +
                 (with_flags ? " flags " + hex(flags[i]) : std::string()));
      }
      if (all != want_union) {
        std::string in;
        for (std::size_t i = b; i < std::min(e, b + 4); ++i) in += " " + show(xs[i]);
        ty.bad(where + ": " + what + ": flag union of elements [" + std::to_string(b) + ", " + std::to_string(e) +
               ") " + hex(all) + ", core " + hex(want_union) + "; inputs" + in + (e - b > 4 ? " ..." : ""));
      }
    };
    // round_array into storage-width codes (a byte for formats of <= 8 bits, two for <= 16) over
    // [b, e), widened into `codes` for compare(). Each code's sentinel is the complement of the
    // expected one, so an unwritten code shows.
    const int narrow_bytes = width(f) <= 8 ? 1 : width(f) <= 16 ? 2 : 0;
    const auto narrow_call = [&](std::size_t b, std::size_t e, const sr_stream& at, bool with_flags) {
      const auto run = [&](auto tag) {
        using C = decltype(tag);
        std::vector<C> narrow(e - b);
        for (std::size_t i = b; i < e; ++i) narrow[i - b] = static_cast<C>(~s.want[i].code);
        const auto all = round_array(f, std::span<const T>(xs.data() + b, e - b), std::span<C>(narrow), r, at,
                                     with_flags ? flags.subspan(b, e - b) : std::span<std::uint8_t>{});
        REQUIRE_MESSAGE(all.has_value(), where);
        for (std::size_t i = b; i < e; ++i) codes[i] = narrow[i - b];
        compare(sizeof(C) == 1 ? "round_array into uint8 codes" : "round_array into uint16 codes", b, e, *all,
                with_flags);
        n.narrow += e - b;
      };
      if (narrow_bytes == 1) run(std::uint8_t{});
      if (narrow_bytes == 2) run(std::uint16_t{});
    };
    for (const bool with_flags : {true, false}) {
      if (with_flags && !label.empty()) continue;  // carry-boundary inputs: the flag-free path only
      std::fill(codes.begin(), codes.end(), kUnwritten);
      std::fill(flags.begin(), flags.end(), kUnwrittenFlags);
      const auto all =
          round_array(f, std::span<const T>(xs), codes, r, sr, with_flags ? flags : std::span<std::uint8_t>{});
      REQUIRE_MESSAGE(all.has_value(), where);
      compare(with_flags ? "round_array with flags" : "round_array", 0, size, *all, with_flags);
      n.codes += size;
      if (narrow_bytes != 0) {
        std::fill(flags.begin(), flags.end(), kUnwrittenFlags);
        narrow_call(0, size, sr, with_flags);
      }
      if (!label.empty()) n.crafted += size;
      if (r.overflow != overflow_policy::ieee) n.policy += size;
      if constexpr (!is_double) {
        if (!values) continue;
        std::copy(xs.begin(), xs.end(), inplace.begin());
        std::fill(flags.begin(), flags.end(), kUnwrittenFlags);
        const auto all2 = round_in_place(f, inplace, r, sr, with_flags ? flags : std::span<std::uint8_t>{});
        REQUIRE_MESSAGE(all2.has_value(), where);
        compare(with_flags ? "round_in_place with flags" : "round_in_place", 0, size, *all2, with_flags);
        n.values += size;
      }
    }
    if (!windows) return;
    std::size_t w = 0;
    for (std::size_t b = 0; b < size; ++w) {
      const std::size_t e = std::min(size, b + kWindows[w % std::size(kWindows)]);
      const sr_stream at{sr.seed, sr.stream, sr.first_index + b};
      const std::span<const T> in(xs.data() + b, e - b);
      const auto all = round_array(f, in, codes.subspan(b, e - b), r, at);
      REQUIRE_MESSAGE(all.has_value(), where);
      compare("round_array over a window", b, e, *all, false);
      if (w % 3 == 0) narrow_call(b, e, at, false);  // the tail's codes at storage width
      if constexpr (!is_double) {
        if (values) {
          std::copy(in.begin(), in.end(), inplace.begin() + static_cast<std::ptrdiff_t>(b));
          const auto all2 = round_in_place(f, inplace.subspan(b, e - b), r, at);
          REQUIRE_MESSAGE(all2.has_value(), where);
          compare("round_in_place over a window", b, e, *all2, false);
        }
      }
      ++n.windows;
      b = e;
    }
  });
}

// Every rounding of f over xs (check_one): policy ieee on every input; saturate and nan (which
// only the core applies, to the lanes the kernels hand it) on the inputs from a quarter of the
// largest finite value up, the non-finite ones and every 8th other one. For sr under policy
// ieee also xs moved onto the carry boundary of each element's keystream bits, and just below.
// Window checks (flag unions of short calls) for policy ieee, the deterministic modes and sr
// with 16 bits. Carry-boundary inputs go through the calls without flags only.
template <class T>
void check_encode(const format& f, const std::vector<T>& xs, tally& ty, counts& n, std::uint64_t& config) {
  constexpr bool is_double = std::is_same_v<T, double>;
  scratch s(xs.size());
  std::vector<T> crafted(xs.size()), policy_xs;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double a = std::fabs(static_cast<double>(xs[i]));
    if (!(a < max_finite(f) / 4) || i % 8 == 0) policy_xs.push_back(xs[i]);
  }
  std::vector<std::uint64_t> random(xs.size());
  for (const rounding& r : roundings_for(f)) {
    REQUIRE(simd::can_encode(f, r, is_double));
    ++config;
    const sr_stream sr{0x5eed0000 + config, static_cast<std::uint32_t>(config * 7), 977 * config + 3};
    const bool sr_mode = r.mode == round_mode::stochastic;
    const bool ieee = r.overflow == overflow_policy::ieee;
    const std::vector<T>& in = ieee ? xs : policy_xs;
    if (sr_mode) {
      for (std::size_t i = 0; i < in.size(); ++i)
        random[i] = keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r));
    }
    check_one(f, r, sr, random, in, s, "", ieee && (!sr_mode || r.sr_bits == 16), ty, n);
    if (!sr_mode || !ieee) continue;
    for (const bool below : {false, true}) {
      for (std::size_t i = 0; i < xs.size(); ++i) crafted[i] = at_carry(f, xs[i], random[i], r.sr_bits, below);
      check_one(f, r, sr, random, crafted, s, below ? " (inputs just below their carry)" : " (inputs at their carry)",
                false, ty, n);
    }
  }
}

// ---- Format lists ---------------------------------------------------------------------------

// The named formats of at most 16 bits that the kernels take.
std::vector<std::pair<std::string, format>> named_small_formats() {
  std::vector<std::pair<std::string, format>> v;
  for (const named_format& nf : named_formats())
    if (width(nf.fmt) <= 16 && simd::can_encode(nf.fmt, rounding{}, false)) v.emplace_back(nf.name, nf.fmt);
  return v;
}

struct timer {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

std::string target_list() {
  std::string s;
  for (const std::int64_t t : all_targets()) s += (s.empty() ? "" : " ") + std::string(hwy::TargetName(t));
  return s;
}

}  // namespace

TEST_CASE("vector round_array / round_in_place == the scalar core, bitwise, on every SIMD target: every rounding "
          "boundary of the <= 16-bit formats, sampled wider and custom formats, every mode, policy and sr_bits") {
  set_array_threads(1);
  MESSAGE("targets: " << target_list());
  REQUIRE(!all_targets().empty());

  // Exhaustive boundaries for the <= 16-bit formats (named and custom); sampled codes around
  // every boundary region for wider ones.
  std::vector<std::string> specs;
  const auto named = named_small_formats();
  std::vector<std::string> names;
  for (const auto& [name, f] : named) names.push_back(name);
  CHECK(names == std::vector<std::string>{"e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "bf16", "fp16", "e2m3fn",
                                          "e3m2fn", "e2m1fn"});
  specs = names;
  for (const char* s : {"e6m9", "e3m4", "e1m2:finite", "e4m3:fn:bias=1", "e4m7:bias=130", "e5m7:bias=145",
                        "e4m6:bias=-120", "tf32", "e8m13", "e8m22", "e11m20", "fp32"})
    specs.emplace_back(s);

  tally ty;
  counts n;
  std::uint64_t config = 0, inputs = 0;
  std::mt19937_64 rng(20240611);
  for (const std::string& spec : specs) {
    const timer t;
    const format f = fmt(spec.c_str());
    CAPTURE(spec);
    const std::vector<std::uint32_t> codes = codes_of(f, rng);
    const std::uint64_t before = n.codes, mismatches_before = ty.mismatches;
    if (simd::can_encode(f, rounding{}, false)) {
      const std::vector<float> xf = inputs_for<float>(f, codes, rng);
      inputs += xf.size();
      check_encode(f, xf, ty, n, config);
    }
    REQUIRE(simd::can_encode(f, rounding{}, true));
    const std::vector<double> xd = inputs_for<double>(f, codes, rng);
    inputs += xd.size();
    check_encode(f, xd, ty, n, config);
    std::printf("  %-16s %10" PRIu64 " cases, %" PRIu64 " mismatches  %.1f s\n", spec.c_str(), n.codes - before,
                ty.mismatches - mismatches_before, t.seconds());
    std::fflush(stdout);
  }
  MESSAGE(specs.size() << " formats, " << config << " (format, rounding, input type) configurations, " << inputs
                       << " inputs, " << all_targets().size() << " targets: " << n.codes << " codes+flags checked ("
                       << n.crafted << " of them sr inputs on or just below their carry, " << n.policy
                       << " under policy saturate or nan), " << n.windows << " short calls' flag unions, " << n.values
                       << " round_in_place values, " << n.narrow << " codes of calls into uint8/uint16 codes, "
                       << ty.mismatches << " mismatches");
  CHECK(ty.mismatches == 0);
  CHECK(n.narrow > 0);
  set_array_threads(0);
}

// The kernels' short ways (NormalRun, ScaledRun, HalfRun) take a vector whole when every lane is
// of their kind, told by a few compares against the format's thresholds; a lane just across one,
// alone among lanes well inside, is where such a compare set one off would show. So each input
// around the overflow threshold (the largest finite value, a quarter, half, three quarters of
// its ulp above, and the next binade: the thresholds of every mode) and around the tininess
// threshold (the same around the largest subnormal), each +-1 ulp of the input type, sits alone
// at a lane that moves with it, in 16 exact values of the top binade (which policies saturate and
// nan keep too), after 16 such values that raise inexact, underflow and overflow and hold a NaN
// (so that a run that waits for those flags takes the next vector whole). So do the input type's
// smallest and largest subnormals, which DAZ would read as zero (the conversion instruction of
// HalfRun does; also with FTZ and DAZ set), and the non-finite inputs.
TEST_CASE("a lone input at a rounding threshold among exact values, after lanes that raise the flags: round_array / "
          "round_in_place == the core, every <= 16-bit format, mode, policy and target, also with FTZ and DAZ") {
  set_array_threads(1);
  tally ty;
  counts n;
  std::uint64_t config = 0;
  for (const auto& [name, f] : named_small_formats()) {
    CAPTURE(name);
    const auto run = [&](auto tag) {
      using T = decltype(tag);
      constexpr T inf = std::numeric_limits<T>::infinity();
      std::vector<T> lone;
      for (const double sign : {1.0, -1.0}) {
        const double top = max_finite(f), top_gap = pow2(emax(f) - f.frac_bits);
        const double sub = f.subnormals ? to_double(f, frac_mask(f)) : min_normal(f), quantum = min_positive(f);
        for (const auto& [x, gap] : {std::pair{top, top_gap}, std::pair{sub, quantum}}) {
          for (const double part : {0.0, 0.25, 0.5, 0.75, 1.0}) {
            const T t = static_cast<T>(sign * (x + part * gap));
            for (const T y : {t, std::nextafter(t, inf), std::nextafter(t, -inf)}) lone.push_back(y);
          }
        }
        constexpr T smallest = std::numeric_limits<T>::denorm_min(), normal = std::numeric_limits<T>::min();
        for (const T y : {smallest, std::nextafter(normal, T{0})}) lone.push_back(static_cast<T>(sign) * y);
      }
      // And the non-finite inputs: infinities, a quiet NaN with a payload, a signaling one.
      using U = typename input_traits<T>::U;
      constexpr int kBits = sizeof(T) * 8, kDigits = input_traits<T>::digits;
      const U inf_bits = std::bit_cast<U>(inf), quiet = U{1} << (kDigits - 2), sign_bit = U{1} << (kBits - 1);
      for (const U b : {inf_bits, inf_bits | quiet | 0x12345, inf_bits | 0x12345})
        for (const U sign : {U{0}, sign_bit}) lone.push_back(std::bit_cast<T>(b | sign));
      std::mt19937_64 rng(77);
      const auto filler = [&] {  // an exact value of the top binade, either sign
        const auto down = static_cast<std::uint32_t>(rng() % (std::uint64_t{1} << f.frac_bits));
        return static_cast<T>(to_double(f, (max_finite_magnitude(f) - down) | (rng() & 1 ? sign_mask(f) : 0)));
      };
      std::vector<T> xs;
      for (std::size_t k = 0; k < lone.size(); ++k) {
        for (int j = 0; j < 16; ++j) xs.push_back(filler());
        xs[xs.size() - 16] = static_cast<T>(min_positive(f) / 8);  // inexact, tiny
        xs[xs.size() - 15] = static_cast<T>(-2 * max_finite(f));   // overflows
        xs[xs.size() - 14] = std::numeric_limits<T>::quiet_NaN();  // an arithmetic result's NaN
        for (int j = 0; j < 16; ++j) xs.push_back(j == static_cast<int>(k % 16) ? lone[k] : filler());
      }
      scratch sc(xs.size());
      std::vector<std::uint64_t> random(xs.size());
      for (const unsigned mxcsr_bits : {0u, 0x8040u}) {  // FTZ + DAZ: bits 15 and 6
#if defined(__x86_64__) || defined(__i386__)
        const unsigned mxcsr = __builtin_ia32_stmxcsr();
        __builtin_ia32_ldmxcsr(mxcsr | mxcsr_bits);
#else
        if (mxcsr_bits != 0) continue;
#endif
        for (const rounding& r : roundings_for(f)) {
          ++config;
          const sr_stream sr{0x10e0000 + config, 5, 31 * config};
          for (std::size_t i = 0; i < xs.size(); ++i)
            random[i] = keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r));
          check_one(f, r, sr, random, xs, sc, mxcsr_bits ? " (lone inputs, FTZ+DAZ)" : " (lone inputs)", false, ty, n);
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_ldmxcsr(mxcsr);
#endif
      }
    };
    if (simd::can_encode(f, rounding{}, false)) run(float{});
    run(double{});
  }
  MESSAGE(config << " (format, rounding, input type, environment) configurations: " << n.codes
                 << " codes+flags checked, " << n.values << " round_in_place values, " << ty.mismatches
                 << " mismatches");
  CHECK(n.codes > 0);
  CHECK(ty.mismatches == 0);
  set_array_threads(0);
}

// The kernels round subnormal results with the vector unit's Round and Trunc, whose direction is
// in the instruction; the targets that emulate them read the rounding direction instead (the
// kernels check fegetround() for that). Flushing to zero (FTZ) and denormals-are-zero (DAZ) must
// not change a code or a flag either: a binary32 subnormal input that DAZ reads as zero still
// rounds to zero and is still inexact.
TEST_CASE("vector round_array / round_in_place give the core's bits under every rounding direction of the "
          "floating-point environment, and with FTZ and DAZ set") {
  set_array_threads(1);
  struct environment {
    const char* name;
    int direction;
    unsigned mxcsr_bits;  // set on top, on x86
  };
  std::vector<environment> environments{
      {"upward", FE_UPWARD, 0}, {"downward", FE_DOWNWARD, 0}, {"toward zero", FE_TOWARDZERO, 0}};
#if defined(__x86_64__) || defined(__i386__)
  environments.push_back({"MXCSR upward, x87 nearest", FE_TONEAREST, 0x4000u});  // RC = 10
  environments.push_back({"FTZ+DAZ", FE_TONEAREST, 0x8040u});                     // bits 15 and 6
#endif
  tally ty;
  counts n;
  std::uint64_t config = 0;
  std::mt19937_64 rng(20261122);
  for (const environment& env : environments) {
    CAPTURE(env.name);
    for (const char* spec : {"e4m3fn", "e4m3fnuz", "e5m2"}) {
      CAPTURE(spec);
      const format f = fmt(spec);
      const std::vector<float> xs = inputs_for<float>(f, codes_of(f, rng), rng, 2000);
      REQUIRE(std::fesetround(env.direction) == 0);
#if defined(__x86_64__) || defined(__i386__)
      const unsigned mxcsr = __builtin_ia32_stmxcsr();
      __builtin_ia32_ldmxcsr(mxcsr | env.mxcsr_bits);
#endif
      const std::uint64_t before = ty.mismatches;
      check_encode(f, xs, ty, n, config);
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_ldmxcsr(mxcsr);
#endif
      REQUIRE(std::fesetround(FE_TONEAREST) == 0);
      CHECK_MESSAGE(ty.mismatches == before, spec << " under " << env.name);
    }
  }
  MESSAGE(environments.size() << " environments, " << config << " configurations, " << all_targets().size()
                              << " targets: " << n.codes << " codes+flags and " << n.values
                              << " round_in_place values checked, " << ty.mismatches << " mismatches");
  CHECK(n.codes > 0);
  set_array_threads(0);
}

TEST_CASE("sr-exact and formats the kernels do not take go through the scalar core unchanged") {
  set_array_threads(1);
  std::mt19937_64 rng(7);
  tally ty;
  std::uint64_t cases = 0;
  for (const char* spec : {"e4m3fn", "bf16", "e8m0fnu", "e5m2:unsigned", "e4m3:nosub", "e8m3:nozero:nosub"}) {
    const format f = fmt(spec);
    const std::vector<float> xs = inputs_for<float>(f, codes_of(f, rng, 500), rng, 2000);
    for (const rounding r : {rounding{round_mode::stochastic_exact, overflow_policy::ieee, 16},
                             rounding{round_mode::nearest_even, overflow_policy::saturate, 16},
                             rounding{round_mode::stochastic, overflow_policy::ieee, 5}}) {
      const bool vector = simd::can_encode(f, r, false);
      if (vector && r.mode != round_mode::stochastic_exact) continue;  // covered above
      const sr_stream sr{99, 5, 123};
      const int width = array_random_width(r);
      for_each_target([&](const std::string& target) {
        std::vector<std::uint32_t> codes(xs.size(), kUnwritten);
        std::vector<std::uint8_t> flags(xs.size(), kUnwrittenFlags);
        REQUIRE(round_array(f, std::span<const float>(xs), codes, r, sr, flags).has_value());
        for (std::size_t i = 0; i < xs.size(); ++i) {
          const rounded w = from(f, xs[i], r, keystream_bits(sr.seed, sr.stream, sr.first_index + i, width));
          if (w.code != codes[i] || w.flags != flags[i])
            ty.bad(describe(f, r) + " on " + target + ": input " + show(xs[i]) + " core " + result(w.code, w.flags) +
                   ", array " + result(codes[i], flags[i]));
          ++cases;
        }
      });
    }
  }
  MESSAGE(cases << " scalar-path cases, " << ty.mismatches << " mismatches");
  CHECK(ty.mismatches == 0);
  set_array_threads(0);
}

TEST_CASE("decode_array to float and double == to_float / to_double for every code, from 32-bit and storage-width "
          "codes, every target") {
  set_array_threads(1);
  tally ty;
  std::uint64_t float_cases = 0, double_cases = 0;
  std::vector<std::string> specs;
  for (const named_format& nf : named_formats())
    if (width(nf.fmt) <= 16) specs.emplace_back(nf.name);
  for (const char* s : {"tf32", "e8m13", "e6m9", "e3m4", "e1m2:finite", "e4m3:fn:bias=1", "e4m7:bias=130", "e5m2:bias=10",
                        "e5m7:bias=145", "e4m6:bias=-120", "e5m2:unsigned", "e4m3:nosub"})
    specs.emplace_back(s);
  std::mt19937_64 rng(3);
  for (const std::string& spec : specs) {
    const format f = fmt(spec.c_str());
    CAPTURE(spec);
    std::vector<std::uint32_t> codes;
    for (std::uint32_t c = 0; c < (std::uint32_t{1} << width(f)); ++c) codes.push_back(c);
    // Bits above the width (ignored by decode()).
    for (const std::uint32_t c : {std::uint32_t{1} << width(f), 0xffffffffu, 0x80000000u, 0xffu}) codes.push_back(c);
    for (int i = 0; i < 100; ++i) codes.push_back(static_cast<std::uint32_t>(rng()));
    // Every code again in random order: NaN and infinity codes in enough vectors that the
    // decoders fix them up on every vector (Decoder::Full's `specials`), not only after a branch.
    const std::size_t listed = codes.size();
    for (std::size_t i = 0; i < listed; ++i) codes.push_back(codes[i]);
    std::shuffle(codes.begin() + static_cast<std::ptrdiff_t>(listed), codes.end(), rng);
    std::vector<float> want_f(codes.size());
    std::vector<double> want_d(codes.size());
    const bool floats = simd::values_are_floats(f);
    for (std::size_t i = 0; i < codes.size(); ++i) {
      want_d[i] = to_double(f, codes[i]);
      if (floats) want_f[i] = to_float(f, codes[i]);
    }
    // The same codes at storage width (a byte for formats of <= 8 bits, two for <= 16), cut to
    // it: the bits above the width that are left are still ignored, so the wants are the same.
    std::vector<std::uint8_t> codes8;
    std::vector<std::uint16_t> codes16;
    for (const std::uint32_t c : codes) {
      if (width(f) <= 8) codes8.push_back(static_cast<std::uint8_t>(c));
      if (width(f) <= 16) codes16.push_back(static_cast<std::uint16_t>(c));
    }
    for_each_target([&](const std::string& target) {
      const auto check = [&]<class Code>(const std::vector<Code>& in) {
        const std::string where = spec + " on " + target + " from " + std::to_string(8 * sizeof(Code)) + "-bit codes";
        const auto compare = [&]<class T>(const std::vector<T>& want) {
          const std::string type = std::is_same_v<T, double> ? "double" : "float";
          std::vector<T> out(in.size(), T{-1});
          REQUIRE(decode_array(f, std::span<const Code>(in), std::span<T>(out)).has_value());
          for (std::size_t i = 0; i < in.size(); ++i) {
            if (bits_of(out[i]) != bits_of(want[i]))
              ty.bad("decode_array(" + type + ") " + where + ": code " + hex(in[i]) + " to_" + type + " " +
                     show(want[i]) + ", array " + show(out[i]));
          }
          return in.size();
        };
        double_cases += compare(want_d);
        if (floats) float_cases += compare(want_f);
      };
      check(codes);
      if (!codes16.empty()) check(codes16);
      if (!codes8.empty()) check(codes8);
    });
  }
  MESSAGE(specs.size() << " formats: " << float_cases << " float and " << double_cases
                       << " double decodes checked (every code; NaN payloads bitwise), " << ty.mismatches
                       << " mismatches");
  CHECK(ty.mismatches == 0);
  set_array_threads(0);
}

TEST_CASE("round_array_given_bits == the core with the same random words, every sr width, code width and target") {
  set_array_threads(1);
  tally ty;
  std::uint64_t cases = 0;
  std::mt19937_64 rng(11);
  for (const char* spec : {"bf16", "fp16", "e4m3fn", "e5m2", "e3m2fn", "e2m1fn", "e4m3fnuz"}) {
    const format f = fmt(spec);
    CAPTURE(spec);
    const std::vector<float> xs = inputs_for<float>(f, codes_of(f, rng), rng, 2000);
    std::vector<std::uint32_t> words(xs.size());
    for (std::uint32_t& w : words) w = static_cast<std::uint32_t>(rng());
    for (const int k : {1, 5, 16, 31, 32}) {
      const rounding r{round_mode::stochastic, overflow_policy::ieee, k};
      std::vector<std::uint32_t> want(xs.size());
      std::vector<std::uint8_t> want_flags(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const rounded res = from(f, xs[i], r, words[i]);
        want[i] = res.code;
        want_flags[i] = res.flags;
      }
      for_each_target([&](const std::string& target) {
        std::vector<std::uint32_t> out32(xs.size());
        std::vector<std::uint16_t> out16(xs.size());
        std::vector<std::uint8_t> out8(width(f) <= 8 ? xs.size() : 0), flags(xs.size());
        REQUIRE(round_array_given_bits(f, xs, std::span<std::uint32_t>(out32), r, words, flags).has_value());
        REQUIRE(round_array_given_bits(f, xs, std::span<std::uint16_t>(out16), r, words).has_value());
        if (!out8.empty()) REQUIRE(round_array_given_bits(f, xs, std::span<std::uint8_t>(out8), r, words).has_value());
        for (std::size_t i = 0; i < xs.size(); ++i) {
          if (out32[i] != want[i] || flags[i] != want_flags[i] || out16[i] != want[i] ||
              (!out8.empty() && out8[i] != want[i]))
            ty.bad(std::string(spec) + " sr" + std::to_string(k) + " on " + target + ": input " + show(xs[i]) +
                   " word " + hex(words[i]) + ": core " + hex(want[i]) + ", array " + hex(out32[i]));
        }
        cases += xs.size();
      });
    }
  }
  MESSAGE(cases << " given-bits roundings checked, " << ty.mismatches << " mismatches");
  CHECK(ty.mismatches == 0);
  const std::vector<float> x(4, 1.0f);
  std::vector<std::uint16_t> out(4);
  const std::vector<std::uint32_t> three(3), four(4);
  CHECK_FALSE(round_array_given_bits(fmt("bf16"), x, std::span<std::uint16_t>(out), rounding{}, four).has_value());
  CHECK_FALSE(round_array_given_bits(fmt("bf16"), x, std::span<std::uint16_t>(out),
                                     rounding{round_mode::stochastic_exact}, four).has_value());
  CHECK_FALSE(round_array_given_bits(fmt("bf16"), x, std::span<std::uint16_t>(out),
                                     rounding{round_mode::stochastic}, three).has_value());
  set_array_threads(0);
}

TEST_CASE("sr-exact on lanes below the normal range at and next to their carry == the core, at shifts from s0 + 1 "
          "to 34 bits, where the high random word decides and where it does not, every target") {
  // Such a lane, its 24-bit significand v S bits above the quantum, rounds up when
  // ~R < v 2^(64-S) (R the element's 64 random bits); the kernels compare the high words: ~R's
  // and F, the fraction's top 32 bits (v mod 2^S) 2^(32-S), or v >> (S - 32) beyond 32 bits.
  // Inputs are made from the keystream so that F lands on, one unit above and one below ~R's
  // high word: at S = s0 + 1 and s0 + 2 (the first subnormal binades), at the S where
  // ~R_hi >> (32 - S) has 24 bits (24 to 32), and at 32 to 34.
  set_array_threads(1);
  tally ty;
  std::uint64_t cases = 0, crafted = 0, crafted_up = 0;
  const sr_stream sr{7, 3, 1000};
  const rounding r{round_mode::stochastic_exact};
  for (const char* spec : {"e4m3fn", "e5m2", "e2m1fn", "fp16"}) {
    const format f = fmt(spec);
    CAPTURE(spec);
    const int q = emin(f) - f.frac_bits, s0 = 23 - f.frac_bits;  // the quantum's exponent; the normal shift
    constexpr std::size_t n = 1 << 16;
    std::vector<float> xs(n);
    std::vector<int> shift(n);
    std::vector<bool> on_carry(n);
    std::mt19937_64 rng(5);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t bits = keystream_bits(sr.seed, sr.stream, sr.first_index + i, 64);
      const std::uint32_t not_hi = ~static_cast<std::uint32_t>(bits >> 32);
      const std::int64_t d = static_cast<std::int64_t>(rng() % 3) - 1;
      int S = 0;
      switch (i % 4) {
        case 0: S = s0 + 1 + static_cast<int>(i / 4 % 2); break;
        case 1: S = std::clamp(56 - static_cast<int>(std::bit_width(not_hi)), std::max(24, s0 + 1), 32); break;
        default: S = 32 + static_cast<int>(i / 4 % 3);
      }
      std::uint32_t v = static_cast<std::uint32_t>(rng() % (1u << 23)) | (1u << 23);
      // v with the bits below the quantum put on the carry, or -1 where they do not fit its 24 bits.
      std::int64_t placed = -1;
      if (S <= 32) {
        const std::int64_t low = static_cast<std::int64_t>(not_hi >> (32 - S)) + d;
        const std::int64_t above = S < 24 ? std::int64_t{v >> S} << S : 0;  // v's bits above the quantum
        if (low >= 0 && low < (std::int64_t{1} << S) && above + low >= (1 << 23) && above + low < (1 << 24))
          placed = above + low;
      } else {
        const std::int64_t top = static_cast<std::int64_t>(not_hi) + d;  // v >> (S - 32)
        if (top >= (std::int64_t{1} << (23 - (S - 32))) && top < (std::int64_t{1} << (24 - (S - 32))))
          placed = (top << (S - 32)) | static_cast<std::int64_t>(rng() & ((1u << (S - 32)) - 1));
      }
      on_carry[i] = placed >= 0;
      if (on_carry[i]) v = static_cast<std::uint32_t>(placed);
      shift[i] = S;
      const float x = std::ldexp(static_cast<float>(v), q - S);
      xs[i] = rng() & 1 ? -x : x;
    }
    std::vector<std::uint32_t> want(n);
    for (std::size_t i = 0; i < n; ++i) {
      want[i] = from(f, xs[i], r, keystream_bits(sr.seed, sr.stream, sr.first_index + i, 64)).code;
      if (on_carry[i]) {
        const auto v = static_cast<std::uint32_t>(std::ldexp(std::fabs(xs[i]), shift[i] - q));
        ++crafted;
        crafted_up += (want[i] & magnitude_mask(f)) != (shift[i] < 32 ? v >> shift[i] : 0);
      }
    }
    for_each_target([&](const std::string& target) {
      std::vector<std::uint32_t> out(n);
      std::vector<float> values(xs);
      REQUIRE(round_array(f, xs, std::span<std::uint32_t>(out), r, sr).has_value());
      REQUIRE(round_in_place(f, values, r, sr).has_value());
      for (std::size_t i = 0; i < n; ++i) {
        if (out[i] != want[i] || bits_of(values[i]) != bits_of(to_float(f, want[i])))
          ty.bad(std::string(spec) + " sr-exact on " + target + ": input " + show(xs[i]) + " element " +
                 std::to_string(i) + " (S = " + std::to_string(shift[i]) + "): core " + hex(want[i]) + ", array " +
                 hex(out[i]));
      }
      cases += n;
    });
  }
  MESSAGE(cases << " sr-exact lanes checked; of the inputs, " << crafted << " at or next to their carry, "
                << crafted_up << " of those rounding up; " << ty.mismatches << " mismatches");
  CHECK(crafted_up > 1000);
  CHECK(crafted - crafted_up > 1000);
  CHECK(ty.mismatches == 0);
  set_array_threads(0);
}

TEST_CASE("decode_array to float and double (convert_array into fp32) into a large, misaligned output (non-temporal "
          "stores) == to_float, to_double (convert()), every target") {
  set_array_threads(1);
  tally ty;
  std::uint64_t cases = 0;
  for (const char* spec : {"bf16", "fp16", "e4m3fn", "e4m3fnuz", "e2m1fn"}) {
    const format f = fmt(spec);
    CAPTURE(spec);
    // Every code, again and again, past the size from which decode_array streams its stores,
    // written one float past a vector boundary so that the head goes the unaligned way.
    const std::size_t n = (std::size_t{1} << 22) + 7;
    std::vector<std::uint32_t> codes(n);
    const std::uint32_t all = std::uint32_t{1} << width(f);
    for (std::size_t i = 0; i < n; ++i) codes[i] = static_cast<std::uint32_t>((i * 7919) % all);
    for_each_target([&](const std::string& target) {
      const auto decoded = [&]<class T>(T) {
        std::vector<T> buffer(n + 1, T{-1});
        const std::span<T> out(buffer.data() + 1, n);
        REQUIRE(decode_array(f, codes, out).has_value());
        for (std::size_t i = 0; i < n; ++i) {
          T want;
          if constexpr (std::is_same_v<T, float>) {
            want = to_float(f, codes[i]);
          } else {
            want = to_double(f, codes[i]);
          }
          if (bits_of(out[i]) != bits_of(want))
            ty.bad("decode_array(" + std::string(std::is_same_v<T, float> ? "float" : "double") + ") " +
                   std::string(spec) + " on " + target + ": code " + hex(codes[i]) + " at " + std::to_string(i));
        }
      };
      decoded(float{});
      decoded(double{});
      // convert_array into binary32 decodes straight into its output too, then puts the core's
      // results of the NaN and infinity codes over it.
      std::vector<std::uint32_t> words(n + 1, kUnwritten);
      const std::span<std::uint32_t> converted(words.data() + 1, n);
      REQUIRE(convert_array(formats::fp32, f, codes, converted).has_value());
      for (std::size_t i = 0; i < n; ++i) {
        if (converted[i] != convert(formats::fp32, f, codes[i]).code)
          ty.bad("convert_array to fp32 " + std::string(spec) + " on " + target + ": code " + hex(codes[i]) +
                 " at " + std::to_string(i));
      }
      cases += 3 * n;
    });
  }
  MESSAGE(cases << " streamed decodes and conversions checked, " << ty.mismatches << " mismatches");
  CHECK(ty.mismatches == 0);
  set_array_threads(0);
}

TEST_CASE("convert_array == convert() for every source code (NaNs, signaling ones included), every mode, policy, "
          "sr_bits and target") {
  set_array_threads(1);
  tally ty;
  std::uint64_t cases = 0, config = 0;
  const std::pair<const char*, const char*> pairs[] = {
      {"bf16", "e4m3fn"},   {"fp16", "e5m2"},     {"e5m2", "e4m3fn"},    {"bf16", "fp16"},
      {"fp16", "bf16"},     {"e4m3fn", "e2m1fn"}, {"e5m2fnuz", "e4m3fnuz"}, {"e4m3fnuz", "e5m2"},
      {"e3m2fn", "e2m3fn"}, {"fp16", "e3m4"},     {"tf32", "fp16"},      {"e8m13", "e4m3fn"},
      {"e5m2", "e11m20"},   {"e11m20", "bf16"},   {"e8m0fnu", "e4m3fn"}, {"bf16", "fp32"},
      {"e5m2", "fp32"},     {"e4m3fnuz", "fp32"}, {"e2m1fn", "fp32"},
  };
  std::mt19937_64 rng(11);
  for (const auto& [from_spec, to_spec] : pairs) {
    const format from_f = fmt(from_spec), to_f = fmt(to_spec);
    CAPTURE(from_spec);
    CAPTURE(to_spec);
    std::vector<std::uint32_t> codes = codes_of(from_f, rng, 20000);
    if (width(from_f) > 16 && has_inf(from_f)) {  // the non-finite codes: inf, signaling and quiet NaNs
      const std::uint32_t inf = exp_field_max(from_f) << from_f.frac_bits;
      const std::uint32_t quiet = std::uint32_t{1} << (from_f.frac_bits - 1);
      for (const std::uint32_t c : {inf, inf | 1, inf | quiet, inf | frac_mask(from_f)})
        for (const std::uint32_t s : {0u, sign_mask(from_f)}) codes.push_back(c | s);
    }
    for (const rounding& r : roundings_for(to_f)) {
      ++config;
      const sr_stream sr{0xc0de + config, static_cast<std::uint32_t>(config), 31 * config};
      const int width = array_random_width(r);
      std::vector<rounded> want(codes.size());
      std::uint8_t want_all = 0;
      for (std::size_t i = 0; i < codes.size(); ++i) {
        const std::uint64_t bits =
            r.mode == round_mode::stochastic ? keystream_bits(sr.seed, sr.stream, sr.first_index + i, width) : 0;
        want[i] = convert(to_f, from_f, codes[i], r, bits);
        want_all |= want[i].flags;
      }
      for_each_target([&](const std::string& target) {
        // From and into 32-bit codes, then storage-width ones (cut to the width: the bits above
        // it that are left are ignored, so the wants are the same).
        const auto check = [&]<class In, class Out>(In, Out) {
          const std::vector<In> in(codes.begin(), codes.end());
          std::vector<Out> out(codes.size(), static_cast<Out>(kUnwritten));
          std::vector<std::uint8_t> flags(codes.size(), kUnwrittenFlags);
          const auto all = convert_array<In, Out>(to_f, from_f, in, out, r, sr, flags);
          REQUIRE(all.has_value());
          const std::string where = std::string(from_spec) + " -> " + describe(to_f, r) + " on " + target + ", " +
                                    std::to_string(8 * sizeof(In)) + " to " + std::to_string(8 * sizeof(Out)) +
                                    " bits";
          if (*all != want_all) ty.bad(where + ": flag union " + hex(*all) + ", core " + hex(want_all));
          for (std::size_t i = 0; i < codes.size(); ++i) {
            if (out[i] != static_cast<Out>(want[i].code) || flags[i] != want[i].flags)
              ty.bad(where + ": code " + hex(codes[i]) + ": core " + result(want[i].code, want[i].flags) +
                     ", array " + result(out[i], flags[i]));
          }
          cases += codes.size();
        };
        check(std::uint32_t{}, std::uint32_t{});
        with_storage_code(from_f, [&](auto in) {
          with_storage_code(to_f, [&](auto out) {
            if (sizeof in + sizeof out < 8) check(in, out);
          });
        });
      });
    }
  }
  MESSAGE(std::size(pairs) << " format pairs, " << config << " (pair, rounding) configurations: " << cases
                           << " conversions checked, " << ty.mismatches << " mismatches");
  CHECK(ty.mismatches == 0);
  set_array_threads(0);
}

TEST_CASE("fill_keystream == keystream_bits at odd offsets and lengths, widths 16, 32 and 64 (its high word), every target") {
  tally ty;
  std::uint64_t cases = 0;
  const std::uint64_t firsts[] = {0,    1,    7,    15,    16,    17,    127,   128,
                                  129,  255,  4095, 4097,  65535, (1ull << 32) - 5, (1ull << 32) * 16 - 3,
                                  (1ull << 36) + 1, 0x123456789abcdefull, 0xffffffffffff0000ull,
                                  0xffffffffffffff00ull, 0xffffffffffffff9cull};  // the last two wrap past 2^64
  const std::size_t lengths[] = {0, 1, 2, 3, 5, 8, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1000, 4097};
  const std::pair<std::uint64_t, std::uint32_t> keys[] = {{0, 0}, {0x5eed, 3}, {0xfedcba9876543210ull, 0xffffffffu}};
  for_each_target([&](const std::string& target) {
    for (const auto& [seed, stream] : keys) {
      for (const int width : {16, 32, 64}) {
        for (const std::uint64_t first : firsts) {
          for (const std::size_t n : lengths) {
            std::vector<std::uint32_t> out(n + 1, kUnwritten);
            simd::fill_keystream(seed, stream, first, n, width, out.data());
            for (std::size_t i = 0; i < n; ++i) {
              // width 64: the high word, all the vector rule reads (array_params.hpp)
              const std::uint64_t want = keystream_bits(seed, stream, first + i, width) >> (width == 64 ? 32 : 0);
              if (out[i] != want)
                ty.bad("fill_keystream on " + target + " seed " + hex(seed) + " stream " + std::to_string(stream) +
                       " width " + std::to_string(width) + " first " + hex(first) + " n " + std::to_string(n) +
                       ": element " + std::to_string(i) + " " + hex(out[i]) + ", keystream_bits " + hex(want));
              ++cases;
            }
            if (out[n] != kUnwritten) ty.bad("fill_keystream on " + target + " wrote past n = " + std::to_string(n));
          }
        }
      }
    }
  });
  MESSAGE(cases << " keystream words checked, " << ty.mismatches << " mismatches");
  CHECK(ty.mismatches == 0);
}

TEST_CASE("fill_keystream and round_array at the end of the 64-bit index space: first_index + i wraps modulo 2^64, "
          "and every call returns") {
  // In a child process under an alarm, so that a call that never returns fails the test (exit
  // status 3, the call named) instead of hanging it.
  std::fflush(stdout);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGALRM, on_alarm);
    alarm(10);
    std::uint64_t bad = 0, cases = 0;
    for_each_target([&](const std::string& target) {
      for (const int width : {16, 32}) {
        for (const std::uint64_t back : {1ull, 2ull, 17ull, 64ull, 100ull, 128ull, 129ull, 4096ull, 5000ull}) {
          const std::uint64_t first = 0 - back;  // 2^64 - back
          for (const std::size_t n : {std::size_t{1}, std::size_t{back - 1}, std::size_t{back + 1},
                                      std::size_t{back + 300}}) {
            if (n == 0) continue;
            g_current_length = std::snprintf(g_current, sizeof g_current,
                                             "fill_keystream on %s width %d first 2^64-%" PRIu64 " n %zu",
                                             target.c_str(), width, back, n);
            std::vector<std::uint32_t> out(n, kUnwritten);
            simd::fill_keystream(0x5eed, 1, first, n, width, out.data());
            for (std::size_t i = 0; i < n; ++i) {
              ++cases;
              const std::uint64_t want = keystream_bits(0x5eed, 1, first + i, width);
              if (out[i] != want && bad++ < 10)
              {
                std::printf("MISMATCH %s: element %zu %s, keystream_bits %s\n", g_current, i, hex(out[i]).c_str(),
                            hex(want).c_str());
                std::fflush(stdout);
              }
            }
          }
        }
      }
      // The public path: bf16 sr over 300 elements from first_index 2^64 - 100.
      const sr_stream sr{7, 2, 0 - std::uint64_t{100}};
      const rounding r{round_mode::stochastic, overflow_policy::ieee, 16};
      std::vector<float> x(300);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i) * 0x1p-12f;
      std::vector<std::uint32_t> codes(x.size(), kUnwritten);
      g_current_length =
          std::snprintf(g_current, sizeof g_current, "round_array on %s, bf16 sr, first_index 2^64-100, 300 elements",
                        target.c_str());
      if (!round_array(formats::bf16, std::span<const float>(x), codes, r, sr).has_value()) ++bad;
      for (std::size_t i = 0; i < x.size(); ++i) {
        ++cases;
        const std::uint32_t want =
            from(formats::bf16, x[i], r, keystream_bits(sr.seed, sr.stream, sr.first_index + i, 16)).code;
        if (codes[i] != want && bad++ < 10)
        {
          std::printf("MISMATCH %s: element %zu code %s, core %s\n", g_current, i, hex(codes[i]).c_str(),
                      hex(want).c_str());
          std::fflush(stdout);
        }
      }
    });
    std::printf("  end of the index space: %" PRIu64 " cases, %" PRIu64 " mismatches\n", cases, bad);
    std::fflush(stdout);
    _exit(bad == 0 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK_MESSAGE(WEXITSTATUS(status) != 3, "a call did not return in 10 s (the TIMEOUT line above names it)");
  CHECK_MESSAGE(WEXITSTATUS(status) != 1, "mismatches (the MISMATCH lines above)");
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("stochastic results are the same for 1, 2 and 3 threads, for an array split in two calls, and on every "
          "target") {
  std::mt19937_64 rng(5);
  const format f = formats::bf16;
  const std::size_t n = 300007;  // several pool chunks, an odd tail
  std::vector<float> xf(n);
  std::uniform_real_distribution<float> u(-1000.0f, 1000.0f);
  for (float& x : xf) x = u(rng);
  xf[17] = std::numeric_limits<float>::infinity();
  xf[4099] = std::numeric_limits<float>::quiet_NaN();
  xf[70001] = 1e-42f;
  const std::vector<double> xd(xf.begin(), xf.end());
  std::uint64_t cases = 0;
  for (const int k : {3, 16, 23}) {
    const rounding r{round_mode::stochastic, overflow_policy::ieee, k};
    const sr_stream sr{0xabcdef, 9, 1000003};
    CAPTURE(k);
    // The core.
    std::vector<std::uint32_t> want(n);
    for (std::size_t i = 0; i < n; ++i)
      want[i] = from(f, xf[i], r, keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r))).code;
    std::vector<std::uint32_t> first_target;
    for_each_target([&](const std::string& target) {
      CAPTURE(target);
      for (const int threads : {1, 2, 3}) {
        set_array_threads(threads);
        CAPTURE(threads);
        std::vector<std::uint32_t> codes(n), codes_d(n);
        std::vector<float> values = xf;
        REQUIRE(round_array(f, std::span<const float>(xf), codes, r, sr).has_value());
        REQUIRE(round_array(f, std::span<const double>(xd), codes_d, r, sr).has_value());
        REQUIRE(round_in_place(f, std::span<float>(values), r, sr).has_value());
        CHECK(codes == want);
        CHECK(codes_d == want);
        std::size_t value_mismatches = 0;
        for (std::size_t i = 0; i < n; ++i) value_mismatches += !same_value(values[i], to_float(f, want[i]));
        CHECK(value_mismatches == 0);
        if (first_target.empty()) first_target = codes;
        CHECK(codes == first_target);  // the same seed gives the same codes on every target
        cases += 3 * n;
      }
      // Split in two calls at odd points, the second starting at first_index + split.
      set_array_threads(2);
      for (const std::size_t split : {std::size_t{1}, std::size_t{15}, std::size_t{17}, std::size_t{4097},
                                      std::size_t{65537}, std::size_t{200001}}) {
        CAPTURE(split);
        std::vector<std::uint32_t> codes(n);
        const std::span<const float> all(xf);
        const std::span<std::uint32_t> out(codes);
        REQUIRE(round_array(f, all.first(split), out.first(split), r, sr).has_value());
        REQUIRE(round_array(f, all.subspan(split), out.subspan(split), r,
                            sr_stream{sr.seed, sr.stream, sr.first_index + split})
                    .has_value());
        CHECK(codes == want);
        cases += n;
      }
    });
  }
  set_array_threads(0);
  MESSAGE(cases << " elements checked across threads 1/2/3, splits and targets");
}

// ---- Element-wise arithmetic ----------------------------------------------------------------

constexpr simd::lane_op kLaneOps[] = {simd::lane_op::add, simd::lane_op::sub, simd::lane_op::mul,
                                      simd::lane_op::div, simd::lane_op::fma, simd::lane_op::sqrt};
constexpr const char* kLaneOpNames[] = {"add", "sub", "mul", "div", "fma", "sqrt"};

// The deterministic modes under every policy the format allows, sr with 1, 3, 16 and 32 bits
// (lanes of either type: sr bits decide which) and sr-exact.
std::vector<rounding> op_roundings(const format& f) {
  std::vector<rounding> rs;
  for (const rounding& r : roundings_for(f))
    if (r.mode != round_mode::stochastic || r.overflow == overflow_policy::ieee) rs.push_back(r);
  std::erase_if(rs, [](const rounding& r) {
    return r.mode == round_mode::stochastic && r.sr_bits != 1 && r.sr_bits != 3 && r.sr_bits != 16 && r.sr_bits != 32;
  });
  rs.push_back({round_mode::stochastic_exact});
  return rs;
}

// The core's op on element i of a, b, c with element i's random bits, as apply would draw them.
rounded core_op(simd::lane_op op, const format& f, const rounding& r, const sr_stream& sr, std::size_t i,
                std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const std::uint64_t rnd =
      is_stochastic(r.mode) ? keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r)) : 0;
  switch (op) {
    case simd::lane_op::add: return add(f, a, b, r, rnd);
    case simd::lane_op::sub: return sub(f, a, b, r, rnd);
    case simd::lane_op::mul: return mul(f, a, b, r, rnd);
    case simd::lane_op::div: return div(f, a, b, r, rnd);
    case simd::lane_op::fma: return fma(f, a, b, c, r, rnd);
    case simd::lane_op::sqrt: return sqrt(f, a, r, rnd);
  }
  return {};
}

// The storage-width apply / apply_fma / apply_sqrt (codes of type Code, where f's fit), with
// per-element flags and without (fp16 and bf16 then take simd::one_pass_op), against `want`:
// codes, flags and the union, on all but the last 5 elements (so that the arrays end inside a
// vector). Returns the elements checked (once per call and element).
template <class Code>
std::uint64_t check_apply_narrow(simd::lane_op op, const format& f, const rounding& r, const sr_stream& sr,
                                 const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                                 const std::vector<std::uint32_t>& c, const std::vector<rounded>& want) {
  if (width(f) > static_cast<int>(8 * sizeof(Code)) || a.size() <= 5) return 0;
  const std::size_t n = a.size() - 5;
  const std::vector<Code> na(a.begin(), a.begin() + n), nb(b.begin(), b.begin() + n), nc(c.begin(), c.begin() + n);
  std::vector<Code> out(n), out_plain(n);
  std::vector<std::uint8_t> flags(n);
  auto call = [&](std::span<Code> o, std::span<std::uint8_t> fl) {
    switch (op) {
      case simd::lane_op::fma: return apply_fma(f, std::span<const Code>(na), nb, nc, o, r, sr, fl);
      case simd::lane_op::sqrt: return apply_sqrt(f, std::span<const Code>(na), o, r, sr, fl);
      default: return apply(static_cast<array_op>(op), f, std::span<const Code>(na), nb, o, r, sr, fl);
    }
  };
  const auto all = call(out, flags), all_plain = call(out_plain, {});
  REQUIRE(all.has_value());
  REQUIRE(all_plain.has_value());
  std::uint8_t want_all = 0;
  for (std::size_t i = 0; i < n; ++i) {
    want_all |= want[i].flags;
    if (out[i] == want[i].code && flags[i] == want[i].flags && out_plain[i] == want[i].code) continue;
    FAIL_CHECK(std::string(kLaneOpNames[static_cast<int>(op)])
               << " on " << 8 * sizeof(Code) << "-bit codes (" << hex(a[i]) << ", " << hex(b[i]) << ", " << hex(c[i])
               << ") element " << i << ": code " << hex(out[i]) << " / " << hex(out_plain[i]) << " flags "
               << int(flags[i]) << ", core " << hex(want[i].code) << " flags " << int(want[i].flags));
    return 0;
  }
  CHECK(*all == want_all);
  CHECK(*all_plain == want_all);
  return 2 * n;
}

// apply / apply_fma / apply_sqrt, with per-element flags and without, against `want` (the core's
// results): codes, flags and the union; then on storage-width codes where f's fit (a byte, two
// bytes). Returns the elements checked (once per call and element).
std::uint64_t check_apply(simd::lane_op op, const format& f, const rounding& r, const sr_stream& sr,
                          const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                          const std::vector<std::uint32_t>& c, const std::vector<rounded>& want) {
  const std::size_t n = a.size();
  std::vector<std::uint32_t> out(n), out_plain(n);
  std::vector<std::uint8_t> flags(n);
  auto call = [&](std::span<std::uint32_t> o, std::span<std::uint8_t> fl) {
    switch (op) {
      case simd::lane_op::fma: return apply_fma(f, a, b, c, o, r, sr, fl);
      case simd::lane_op::sqrt: return apply_sqrt(f, a, o, r, sr, fl);
      default: return apply(static_cast<array_op>(op), f, a, b, o, r, sr, fl);
    }
  };
  const auto all = call(out, flags), all_plain = call(out_plain, {});
  REQUIRE(all.has_value());
  REQUIRE(all_plain.has_value());
  std::uint8_t want_all = 0;
  for (std::size_t i = 0; i < n; ++i) {
    want_all |= want[i].flags;
    if (out[i] == want[i].code && flags[i] == want[i].flags && out_plain[i] == want[i].code) continue;
    FAIL_CHECK(std::string(kLaneOpNames[static_cast<int>(op)])
               << "(" << hex(a[i]) << ", " << hex(b[i]) << ", " << hex(c[i]) << ") element " << i << ": code "
               << hex(out[i]) << " / " << hex(out_plain[i]) << " flags " << int(flags[i]) << ", core "
               << hex(want[i].code) << " flags " << int(want[i].flags));
    return 0;
  }
  CHECK(*all == want_all);
  CHECK(*all_plain == want_all);
  return 2 * n + check_apply_narrow<std::uint16_t>(op, f, r, sr, a, b, c, want) +
         check_apply_narrow<std::uint8_t>(op, f, r, sr, a, b, c, want);
}

// Checks every op on (a, b, c) in every op_roundings mode on every target against the core, and
// that the lanes took every op the argument of array_ops.cpp covers: `lanes` counts (op,
// rounding, target) triples per path.
void check_ops_on_targets(const format& f, const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                          const std::vector<std::uint32_t>& c, std::uint64_t& checked, int lanes[3]) {
  const sr_stream sr{0x0dd5eedULL, 7, 12345};
  for (const rounding& r : op_roundings(f)) {
    CAPTURE(describe(f, r));
    for (const simd::lane_op op : kLaneOps) {
      CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
      std::vector<rounded> want(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) want[i] = core_op(op, f, r, sr, i, a[i], b[i], c[i]);
      for_each_target([&](const std::string& target) {
        CAPTURE(target);
        ++lanes[static_cast<int>(simd::op_lanes(op, f, r))];
        checked += check_apply(op, f, r, sr, a, b, c, want);
      });
    }
  }
}

TEST_CASE("apply, apply_fma and apply_sqrt == the core's ops, bitwise with flags, on every pair of codes of the "
          "FP8, FP6 and FP4 formats (random addends), every mode and target; the lanes take every op") {
  std::mt19937_64 rng(11);
  std::uint64_t checked = 0;
  for (const char* spec : {"e4m3fn", "e5m2", "e4m3fnuz", "e3m2fn", "e2m3fn", "e2m1fn"}) {
    const format f = fmt(spec);
    CAPTURE(spec);
    const std::uint32_t codes = std::uint32_t{1} << width(f);
    std::vector<std::uint32_t> a, b, c;
    for (std::uint32_t x = 0; x < codes; ++x) {
      for (std::uint32_t y = 0; y < codes; ++y) {
        a.push_back(x);
        b.push_back(y);
        c.push_back(static_cast<std::uint32_t>(rng() % codes));
      }
    }
    int lanes[3] = {};
    check_ops_on_targets(f, a, b, c, checked, lanes);
    // Every op in every mode runs in lanes, on every target (those without a fused multiply-add
    // too), where the floating-point environment lets them (the kernels' best target here).
    if (simd::op_lanes(simd::lane_op::div, f, {}) != simd::op_path::core) CHECK(lanes[0] == 0);
    MESSAGE(std::string(spec) << ": (op, rounding, target) triples in binary32 lanes " << lanes[1] << ", binary64 "
                 << lanes[2] << ", core " << lanes[0]);
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("apply and apply_sqrt on codes of at most 8 bits through the table of results == the core on every pair "
          "of bytes (bits beyond the format's width included), and on 16- and 32-bit codes with bits above the byte, "
          "with flags, every mode without random bits, policy and target") {
  // A table is made once the elements asked of an (op, format, rounding) sum to 2^21 at most
  // (array.cpp): the first call, of 2^21 + 3 elements, makes it; then every target reads it on
  // every pair.
  constexpr std::size_t kPairs = std::size_t{1} << 16, kFirst = (std::size_t{1} << 21) + 3;
  std::vector<std::uint8_t> a(kFirst), b(kFirst);
  for (std::size_t i = 0; i < kFirst; ++i) {
    a[i] = static_cast<std::uint8_t>(i >> 8);
    b[i] = static_cast<std::uint8_t>(i);
  }
  std::vector<std::uint8_t> out(kFirst), flags(kFirst);
  std::vector<std::uint16_t> a16(kPairs), b16(kPairs);  // with bits above the low byte
  std::vector<std::uint32_t> a32(kPairs), b32(kPairs);
  for (std::size_t i = 0; i < kPairs; ++i) {
    a32[i] = a[i] | static_cast<std::uint32_t>(i * 0x9e3779b9u & ~0xffu);
    b32[i] = b[i] | static_cast<std::uint32_t>(i * 0x85ebca6bu & ~0xffu);
    a16[i] = static_cast<std::uint16_t>(a32[i]);
    b16[i] = static_cast<std::uint16_t>(b32[i]);
  }
  std::uint64_t checked = 0;
  int sampled = 0;
  for (const char* spec : {"e4m3fn", "e5m2", "e4m3fnuz", "e3m2fn", "e2m1fn", "e8m0fnu"}) {
    const format f = fmt(spec);
    for (const rounding& r : roundings_for(f)) {
      if (r.mode == round_mode::stochastic || check(f, r) || sampled++ % kEveryRounding != 0) continue;
      CAPTURE(describe(f, r));
      for (const simd::lane_op op : {simd::lane_op::add, simd::lane_op::sub, simd::lane_op::mul, simd::lane_op::div,
                                     simd::lane_op::sqrt}) {
        CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
        std::vector<rounded> want(kPairs);
        std::uint8_t want_all = 0;
        for (std::size_t i = 0; i < kPairs; ++i) {
          want[i] = core_op(op, f, r, {}, i, a[i], b[i], 0);
          want_all |= want[i].flags;
        }
        // Codes and flags of the first n elements against the core's; the union too.
        auto check_call = [&](std::size_t n, std::span<std::uint8_t> fl) {
          const std::span<const std::uint8_t> x(a.data(), n), y(b.data(), n);
          const auto all = op == simd::lane_op::sqrt
                               ? apply_sqrt(f, x, std::span(out.data(), n), r, {}, fl)
                               : apply(static_cast<array_op>(op), f, x, y, std::span(out.data(), n), r, {}, fl);
          REQUIRE(all.has_value());
          CHECK(*all == want_all);
          for (std::size_t i = 0; i < n; ++i) {
            const rounded& w = want[i % kPairs];
            if (out[i] == w.code && (fl.empty() || fl[i] == w.flags)) continue;
            FAIL_CHECK("(" << hex(a[i]) << ", " << hex(b[i]) << ") element " << i << ": code " << hex(out[i])
                           << " flags " << int(fl.empty() ? 0 : fl[i]) << ", core " << hex(w.code) << " flags "
                           << int(w.flags));
            return;
          }
          checked += n;
        };
        check_call(kFirst, flags);
        REQUIRE(simd::has_table(op, f, r));
        // The same pairs as wider codes with bits above the low byte (which the table's index
        // drops and the core does not read), against the core on those codes.
        auto want_wide = [&](const auto& x, const auto& y) {
          std::vector<rounded> w(kPairs);
          for (std::size_t i = 0; i < kPairs; ++i) w[i] = core_op(op, f, r, {}, i, x[i], y[i], 0);
          return w;
        };
        const std::vector<rounded> want16 = want_wide(a16, b16), want32 = want_wide(a32, b32);
        auto check_wide = [&]<class Code>(const std::vector<Code>& x, const std::vector<Code>& y,
                                          const std::vector<rounded>& wants) {
          std::vector<Code> o(kPairs);
          std::vector<std::uint8_t> fl(kPairs);
          const auto all = op == simd::lane_op::sqrt
                               ? apply_sqrt(f, std::span<const Code>(x), std::span(o), r, {}, fl)
                               : apply(static_cast<array_op>(op), f, std::span<const Code>(x),
                                       std::span<const Code>(y), std::span(o), r, {}, fl);
          REQUIRE(all.has_value());
          CHECK(*all == want_all);
          for (std::size_t i = 0; i < kPairs; ++i) {
            const rounded& w = wants[i];
            if (o[i] == w.code && fl[i] == w.flags) continue;
            FAIL_CHECK(std::to_string(8 * sizeof(Code)) << "-bit codes (" << hex(x[i]) << ", " << hex(y[i])
                                                        << "): code " << hex(o[i]) << " flags " << int(fl[i])
                                                        << ", core " << hex(w.code) << " flags " << int(w.flags));
            return;
          }
          checked += kPairs;
        };
        for_each_target([&](const std::string& target) {
          CAPTURE(target);
          check_call(kPairs, std::span(flags.data(), kPairs));
          check_call(kPairs - 5, {});
          check_wide(a16, b16, want16);
          check_wide(a32, b32, want32);
        });
      }
    }
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("apply and apply_sqrt on codes of at most 8 bits in sr with 1 to 16 random bits through the table of "
          "results (each result's code and flags a step in the random value) == the core on every pair of bytes with "
          "4 or 8 random values each, with flags, every target") {
  // The table of k random bits is made once the elements asked sum to 2^21 (k + 2) (array.cpp):
  // calls of all n elements until it is there, then every target reads it. Every pair of bytes
  // (bits beyond the format's width included) at elements i and i + 2^16 j, each with its own
  // random value: with k <= 3 each value comes to most pairs.
  constexpr std::size_t kPairs = std::size_t{1} << 16;
  const sr_stream sr{0x5eedULL, 3, 1000};
  std::uint64_t checked = 0;
  int sampled_widths = 0;
  struct sampled {
    const char* spec;
    std::initializer_list<int> bits;
  };
  for (const sampled& s : {sampled{"e4m3fn", {1, 3, 8, 16}}, sampled{"e5m2", {3, 16}}, sampled{"e4m3fnuz", {3, 16}},
                           sampled{"e2m1fn", {3, 16}}}) {
    const format f = fmt(s.spec);
    for (const int k : s.bits) {
      if (sampled_widths++ % kEveryRounding != 0) continue;
      const rounding r{round_mode::stochastic, overflow_policy::ieee, k};
      CAPTURE(describe(f, r));
      const std::size_t n = kPairs * (k <= 3 ? 8 : 4);
      std::vector<std::uint8_t> a(n), b(n), out(n), flags(n);
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<std::uint8_t>(i >> 8);
        b[i] = static_cast<std::uint8_t>(i);
      }
      for (const simd::lane_op op : {simd::lane_op::add, simd::lane_op::sub, simd::lane_op::mul, simd::lane_op::div,
                                     simd::lane_op::sqrt}) {
        CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
        auto call = [&](std::size_t m, std::span<std::uint8_t> fl) {
          const std::span<const std::uint8_t> x(a.data(), m), y(b.data(), m);
          return op == simd::lane_op::sqrt
                     ? apply_sqrt(f, x, std::span(out.data(), m), r, sr, fl)
                     : apply(static_cast<array_op>(op), f, x, y, std::span(out.data(), m), r, sr, fl);
        };
        for (int calls = 0; !simd::has_table(op, f, r); ++calls) {
          REQUIRE(calls < 256);
          REQUIRE(call(n, {}).has_value());
        }
        std::vector<rounded> want(n);
        std::uint8_t want_all = 0;
        for (std::size_t i = 0; i < n; ++i) {
          want[i] = core_op(op, f, r, sr, i, a[i], b[i], 0);
          want_all |= want[i].flags;
        }
        for_each_target([&](const std::string& target) {
          CAPTURE(target);
          for (const bool with_flags : {true, false}) {
            const std::size_t m = with_flags ? n : n - 5;
            const auto all = call(m, with_flags ? std::span(flags.data(), m) : std::span<std::uint8_t>());
            REQUIRE(all.has_value());
            if (with_flags) CHECK(*all == want_all);
            for (std::size_t i = 0; i < m; ++i) {
              if (out[i] == want[i].code && (!with_flags || flags[i] == want[i].flags)) continue;
              FAIL_CHECK("(" << hex(a[i]) << ", " << hex(b[i]) << ") element " << i << " random "
                             << (keystream_bits(sr.seed, sr.stream, sr.first_index + i, 16) & ((1u << k) - 1))
                             << ": code " << hex(out[i]) << " flags " << int(with_flags ? flags[i] : 0) << ", core "
                             << hex(want[i].code) << " flags " << int(want[i].flags));
              break;
            }
            checked += m;
          }
        });
      }
    }
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("apply_fma on codes of at most 8 bits through the table of results (a row of results per exact product) "
          "== the core on every pair of bytes with four addends each (bits beyond the format's width included), and "
          "on 32-bit codes with bits above the byte, with flags, directed modes and policies, every target") {
  // The table is made once the elements asked of an fma, format and rounding sum to 2^24 where
  // lanes cover it, 2^19 where the core does (array.cpp): calls of 2^18 elements (checked by the
  // lane tests above) until it is there; then every target reads it on every triple below.
  constexpr std::size_t kTriples = std::size_t{1} << 18, kWide = std::size_t{1} << 14;
  std::mt19937_64 rng(0xf3a);
  std::vector<std::uint8_t> a(kTriples), b(kTriples), c(kTriples);
  for (std::size_t i = 0; i < kTriples; ++i) {  // pair i >> 2, a random addend
    a[i] = static_cast<std::uint8_t>(i >> 10);
    b[i] = static_cast<std::uint8_t>(i >> 2);
    c[i] = static_cast<std::uint8_t>(rng());
  }
  std::vector<std::uint32_t> a32(kWide), b32(kWide), c32(kWide);  // random pairs, bits above the byte
  for (std::size_t i = 0; i < kWide; ++i) {
    a32[i] = static_cast<std::uint32_t>(rng());
    b32[i] = static_cast<std::uint32_t>(rng());
    c32[i] = static_cast<std::uint32_t>(rng());
  }
  std::vector<std::uint8_t> out(kTriples), flags(kTriples);
  std::uint64_t checked = 0;
  for (const char* spec : {"e4m3fn", "e5m2", "e4m3fnuz", "e3m2fn", "e2m1fn", "e8m0fnu"}) {
    const format f = fmt(spec);
    for (const rounding& r : roundings_for(f)) {
      // The rows hold the core's results whatever the rounding (array.cpp): every directed mode with
      // policy ieee and nearest-even with the others for e4m3fn and e5m2, nearest-even and toward
      // -inf (which signs an exact zero sum negative) with policy ieee for the others.
      const bool fp8 = spec == std::string_view("e4m3fn") || spec == std::string_view("e5m2");
      const bool ieee = r.overflow == overflow_policy::ieee, rne = r.mode == round_mode::nearest_even;
      const bool taken = fp8 ? ieee || rne : ieee && (rne || r.mode == round_mode::toward_negative);
      if (r.mode == round_mode::stochastic || !taken || check(f, r)) continue;
      CAPTURE(describe(f, r));
      const std::span<const std::uint8_t> x(a), y(b), z(c);
      for (int call = 0; !simd::has_table(simd::lane_op::fma, f, r); ++call) {
        REQUIRE(call < 64);
        REQUIRE(apply_fma(f, x, y, z, std::span(out), r, {}).has_value());
      }
      std::vector<rounded> want(kTriples);
      std::uint8_t want_all = 0;
      for (std::size_t i = 0; i < kTriples; ++i) {
        want[i] = fma(f, a[i], b[i], c[i], r);
        want_all |= want[i].flags;
      }
      std::vector<rounded> want32(kWide);
      for (std::size_t i = 0; i < kWide; ++i) want32[i] = fma(f, a32[i], b32[i], c32[i], r);
      for_each_target([&](const std::string& target) {
        CAPTURE(target);
        const auto all = apply_fma(f, x, y, z, std::span(out), r, {}, flags);
        REQUIRE(all.has_value());
        CHECK(*all == want_all);
        for (std::size_t i = 0; i < kTriples; ++i) {
          if (out[i] == want[i].code && flags[i] == want[i].flags) continue;
          FAIL_CHECK("(" << hex(a[i]) << ", " << hex(b[i]) << ", " << hex(c[i]) << "): code " << hex(out[i])
                         << " flags " << int(flags[i]) << ", core " << hex(want[i].code) << " flags "
                         << int(want[i].flags));
          break;
        }
        std::vector<std::uint32_t> o(kWide);
        std::vector<std::uint8_t> fl(kWide);
        REQUIRE(apply_fma(f, std::span<const std::uint32_t>(a32), std::span<const std::uint32_t>(b32),
                          std::span<const std::uint32_t>(c32), std::span(o), r, {}, fl)
                    .has_value());
        for (std::size_t i = 0; i < kWide; ++i) {
          if (o[i] == want32[i].code && fl[i] == want32[i].flags) continue;
          FAIL_CHECK("32-bit codes (" << hex(a32[i]) << ", " << hex(b32[i]) << ", " << hex(c32[i]) << "): code "
                                      << hex(o[i]) << " flags " << int(fl[i]) << ", core " << hex(want32[i].code)
                                      << " flags " << int(want32[i].flags));
          break;
        }
        checked += kTriples + kWide;
      });
    }
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("apply_fma on byte codes in sr through the table of results (four entries per triple of a row) == the "
          "core on 2^18 triples with their own random values, bits beyond the byte included, with flags: e4m3fn, e5m2 "
          "and e4m3fnuz (saturating) with 3 random bits, every target") {
  // The table of k random bits is made once the elements asked sum to 2^24 (k + 2) (array.cpp):
  // calls of 2^20 elements (through the lanes, checked by the tests above) until it is there; then
  // every target reads it. Pairs i >> 2 with a random addend, as in the test above, on codes with
  // random bits above the byte too. k = 3 keeps the making of the tables short here (with 16 it
  // took about 15 s of this build's core calls a format): exhaustive_array_ops reads e4m3fn's and
  // e5m2's sr16 tables on every triple. Saturating, a sum rounded up past the largest finite keeps
  // its code and gains overflow: the flags step, and the four entries are read.
  constexpr std::size_t kTriples = std::size_t{1} << 18, kCall = std::size_t{1} << 20;
  std::mt19937_64 rng(0x5f3a);
  std::vector<std::uint32_t> a(kCall), b(kCall), c(kCall);
  for (std::size_t i = 0; i < kCall; ++i) {
    a[i] = static_cast<std::uint32_t>(i >> 10 & 0xff) | static_cast<std::uint32_t>(rng()) << 8;
    b[i] = static_cast<std::uint32_t>(i >> 2 & 0xff) | static_cast<std::uint32_t>(rng()) << 8;
    c[i] = static_cast<std::uint32_t>(rng());
  }
  const sr_stream sr{0xf3a5eedULL, 2, 77};
  std::vector<std::uint32_t> out(kCall);
  std::vector<std::uint8_t> flags(kTriples);
  std::uint64_t checked = 0;
  int sampled = 0;
  struct sampled_rounding {
    const char* spec;
    int k;
    overflow_policy policy;
  };
  for (const sampled_rounding& s : {sampled_rounding{"e4m3fn", 3, overflow_policy::ieee},
                                    sampled_rounding{"e5m2", 3, overflow_policy::ieee},
                                    sampled_rounding{"e4m3fnuz", 3, overflow_policy::saturate}}) {
    if (sampled++ % kEveryRounding != 0) continue;
    const format f = fmt(s.spec);
    const rounding r{round_mode::stochastic, s.policy, s.k};
    CAPTURE(describe(f, r));
    auto call = [&](std::size_t n, std::span<std::uint8_t> fl) {
      return apply_fma(f, std::span<const std::uint32_t>(a.data(), n), std::span<const std::uint32_t>(b.data(), n),
                       std::span<const std::uint32_t>(c.data(), n), std::span(out.data(), n), r, sr, fl);
    };
    for (int calls = 0; !simd::has_table(simd::lane_op::fma, f, r); ++calls) {
      REQUIRE(calls < 512);
      REQUIRE(call(kCall, {}).has_value());
    }
    std::vector<rounded> want(kTriples);
    std::uint8_t want_all = 0;
    for (std::size_t i = 0; i < kTriples; ++i) {
      want[i] = core_op(simd::lane_op::fma, f, r, sr, i, a[i], b[i], c[i]);
      want_all |= want[i].flags;
    }
    for_each_target([&](const std::string& target) {
      CAPTURE(target);
      const auto all = call(kTriples, flags);
      REQUIRE(all.has_value());
      CHECK(*all == want_all);
      for (std::size_t i = 0; i < kTriples; ++i) {
        if (out[i] == want[i].code && flags[i] == want[i].flags) continue;
        FAIL_CHECK("(" << hex(a[i]) << ", " << hex(b[i]) << ", " << hex(c[i]) << ") element " << i << ": code "
                       << hex(out[i]) << " flags " << int(flags[i]) << ", core " << hex(want[i].code) << " flags "
                       << int(want[i].flags));
        break;
      }
      checked += kTriples;
    });
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("simd::look_up == the table read element by element at the codes' low bytes: one, two and three operands "
          "(the pair's row, then the entry), codes of 1, 2 and 4 bytes (high bits set), lengths 0 to 70 from four "
          "starts, the last entry and row included, with and without flags, every target") {
  std::mt19937_64 rng(31);
  // (each with the spare element result_table_view asks for)
  std::vector<std::uint16_t> entries((std::size_t{1} << 16) + 1), rows((std::size_t{1} << 16) + 1);
  for (std::uint16_t& t : entries) t = static_cast<std::uint16_t>(rng());
  for (std::uint16_t& t : rows) t = static_cast<std::uint16_t>(rng() & 0xff);  // 2^8 rows of 2^8 entries
  rows[0xffff] = 0xff;
  std::vector<std::uint32_t> a(80), b(80), c(80);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::uint32_t>(rng());
    b[i] = static_cast<std::uint32_t>(rng());
    c[i] = static_cast<std::uint32_t>(rng());
  }
  a[40] = b[40] = c[40] = 0xffffffffu;  // the last entry and row
  std::uint64_t checked = 0;
  auto check_width = [&]<class Code>(Code) {
    std::vector<Code> x(a.size()), y(b.size()), z(c.size());  // truncated: high bits kept
    for (std::size_t i = 0; i < a.size(); ++i)
      x[i] = static_cast<Code>(a[i]), y[i] = static_cast<Code>(b[i]), z[i] = static_cast<Code>(c[i]);
    for_each_target([&](const std::string& target) {
      CAPTURE(target);
      CAPTURE(sizeof(Code));
      for (const int operands : {1, 2, 3}) {
        CAPTURE(operands);
        const simd::result_table_view table{operands, 0, entries.data(), rows.data(), nullptr};
        for (std::size_t start = 0; start < 4; ++start) {
          for (std::size_t n = 0; start + n <= 74; ++n) {
            for (const int way : {0, 1, 2, 3}) {  // with flags or not, by gathers or by loads
              CAPTURE(way);
              const bool with_flags = (way & 1) == 0;
              const auto reads = way & 2 ? simd::table_reads::loads : simd::table_reads::gathers;
              std::vector<Code> out(n + 1, static_cast<Code>(0xa5a5a5a5u));
              std::vector<std::uint8_t> fl(n + 1, 0x5a);
              const auto all = simd::look_up(table, x.data() + start, y.data() + start, z.data() + start, n,
                                             out.data(), with_flags ? fl.data() : nullptr, nullptr, reads);
              unsigned want_all = 0;
              for (std::size_t i = 0; i < n; ++i) {
                const std::size_t j = start + i;
                unsigned index = x[j] & 0xffu;
                if (operands >= 2) index = index << 8 | (y[j] & 0xffu);
                if (operands == 3) index = unsigned{rows[index]} << 8 | (z[j] & 0xffu);
                const unsigned entry = entries[index];
                want_all |= entry >> 8;
                REQUIRE(out[i] == (entry & 0xff));
                if (with_flags) REQUIRE(fl[i] == entry >> 8);
              }
              REQUIRE(out[n] == static_cast<Code>(0xa5a5a5a5u));  // nothing written past n
              REQUIRE(fl[n] == 0x5a);
              CHECK(all == want_all);
              checked += n;
            }
          }
        }
      }
    });
  };
  check_width(std::uint8_t{});
  check_width(std::uint16_t{});
  check_width(std::uint32_t{});
  MESSAGE(checked << " elements checked");
}

TEST_CASE("apply, apply_fma and apply_sqrt == the core's ops on random bf16 and fp16 operands, near-cancelling "
          "pairs and all specials, every mode and target; the lanes take every op in every mode on every target") {
  std::mt19937_64 rng(12);
  std::uint64_t checked = 0;
  for (const char* spec : {"bf16", "fp16"}) {
    const format f = fmt(spec);
    CAPTURE(spec);
    const std::uint32_t mask = (std::uint32_t{1} << width(f)) - 1;
    std::vector<std::uint32_t> a, b, c;
    auto push = [&](std::uint32_t x, std::uint32_t y) {
      a.push_back(x & mask);
      b.push_back(y & mask);
      c.push_back(static_cast<std::uint32_t>(rng()) & mask);
    };
    for (int i = 0; i < 40000; ++i) push(static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()));
    for (int i = 0; i < 20000; ++i) {  // b near -a or a: sums that cancel, quotients near 1
      const std::uint32_t x = static_cast<std::uint32_t>(rng());
      const std::uint32_t delta = static_cast<std::uint32_t>(rng() % 7) - 3;
      push(x, (x + delta) ^ (rng() % 2 ? sign_mask(f) : 0));
    }
    for (std::uint32_t x = 0; x <= mask; x += 97) push(x, 0);  // zeros, and sqrt over the range
    for (const std::uint32_t s : {0u, 1u, frac_mask(f), max_finite_magnitude(f), magnitude_mask(f)})
      for (std::uint32_t y = 0; y <= mask; y += 251) push(s | (y & sign_mask(f)), y);
    // Every triple of specials of either sign (zero, infinity, quiet and signaling NaNs, the
    // extremes, 1): fma's 0 x inf + NaN, which raises invalid, among them.
    const std::uint32_t inf = detail::inf_code(f, false), quiet = inf | (std::uint32_t{1} << (f.frac_bits - 1));
    std::vector<std::uint32_t> specials;
    for (const std::uint32_t s : {0u, 1u, inf, quiet, inf | 1u, max_finite_magnitude(f), from(f, 1.0).code})
      specials.insert(specials.end(), {s, s | sign_mask(f)});
    for (const std::uint32_t x : specials)
      for (const std::uint32_t y : specials)
        for (const std::uint32_t z : specials) {
          a.push_back(x), b.push_back(y), c.push_back(z);
        }
    int lanes[3] = {};
    check_ops_on_targets(f, a, b, c, checked, lanes);
    const int roundings = static_cast<int>(op_roundings(f).size());
    int targets = 0;
    for_each_target([&](const std::string&) { ++targets; });
    CHECK(lanes[0] == 0);  // binary64 div and sqrt without a fused multiply-add (SSE4) included
    CHECK(lanes[0] + lanes[1] + lanes[2] == 6 * roundings * targets);
    MESSAGE(std::string(spec) << ": (op, rounding, target) triples in binary32 lanes " << lanes[1] << ", binary64 "
                 << lanes[2] << ", core " << lanes[0]);
  }
  MESSAGE(checked << " elements checked");
}

// simd::one_pass_op stops at a vector that may raise a flag its chunk has not raised yet, so each
// probe runs in an array of its own: first lanes that raise one set of the op's flags (none, all,
// or all but one), then exact results, then the probe alone at a lane among exact results, then
// more of them. The probes: every pair of the operands below (every triple, over a few addends, for
// fma): both signs of zero, the extreme subnormals and normals, 1 and its neighbours, pairs whose
// sum, product or quotient lies at the overflow threshold of each direction (fp16: 65504 + 16 =
// 65520, 65504 + 15.99, 255.875 x 256 = 65504, 256 x 256; bf16: its largest finite plus half its
// ulp and just less, (2 - 2^-7) 2^63 x 2^64 and 2^64 x 2^64), products below bf16's normal range
// (which the core takes), infinities, quiet NaNs with and without a payload, and signaling ones
// with the payload bit below the quiet bit set and clear; and for fma, triples whose exact result
// lies just beyond a midpoint of the format that it rounds to at 24 bits, whose nearest-even
// rounding is not the midpoint's, with the product or the addend the larger (fp16:
// 1.5 x 1.333984375 + 2^-24, (1 + 2^-10) x 2046 2^-22 + (1 + 2^-10) and, among fp16's subnormals,
// 1269 2^-20 x 1885 2^-20 + 2^-15 = 2^-15 + 73 2^-25 + 2^-40; bf16: 1.5 x 1.359375 + 2^-133).
// Stochastic rounding reads each element's own random bits, so the flags a raiser raises depend
// on where it stands.
TEST_CASE("apply, apply_fma and apply_sqrt on fp16 and bf16 codes without per-element flags (one pass: "
          "simd::one_pass_op) == the core: every pair of special and threshold operands alone among exact results, "
          "after lanes raising none, all or all but one of the op's flags, every direction and sr with up to 16 "
          "bits, every target") {
  set_array_threads(1);
  struct format_operands {
    const char* name;
    std::vector<std::uint32_t> magnitudes, addends;
    std::vector<std::array<std::uint32_t, 3>> beyond_midpoints;  // fma
    std::uint32_t one;  // filler: 1 op 1 (fma: 1 x 1 + 1) is exact
  };
  const format_operands formats_checked[] = {
      {"fp16",
       {0x0000u, 0x0001u, 0x03ffu, 0x0400u, 0x0401u, 0x1400u, 0x3bffu, 0x3c00u, 0x3c01u, 0x4bffu, 0x4c00u, 0x5bffu,
        0x5c00u, 0x7bffu, 0x7c00u, 0x7e00u, 0x7e01u, 0x7c01u, 0x7d00u},
       {0x0000u, 0x8000u, 0x0001u, 0x3c00u, 0xfbffu, 0x7c00u, 0x7e00u, 0x7c01u},
       {{0x3e00u, 0x3d56u, 0x0001u}, {0x3c01u, 0x0ffeu, 0x3c01u}, {0x14f5u, 0x175du, 0x0200u}},
       0x3c00u},
      {"bf16",
       {0x0000u, 0x0001u, 0x007fu, 0x0080u, 0x0081u, 0x3f00u, 0x3f7fu, 0x3f80u, 0x3f81u, 0x7affu, 0x7b00u, 0x5f7fu,
        0x5f80u, 0x7f7fu, 0x7f80u, 0x7fc0u, 0x7fc1u, 0x7f81u, 0x7fa0u},
       {0x0000u, 0x8000u, 0x0001u, 0x3f80u, 0xff7fu, 0x7f80u, 0x7fc0u, 0x7f81u},
       {{0x3fc0u, 0x3faeu, 0x0001u}},
       0x3f80u},
  };
  const sr_stream sr{};
  std::uint64_t probes = 0, elements = 0;
  int mismatches = 0;
  std::map<std::string, int> one_pass_calls;
  for (const format_operands& fo : formats_checked) {
    const format f = fmt(fo.name);
    CAPTURE(fo.name);
    std::vector<std::uint32_t> operands;
    for (const std::uint32_t sign : {0x0000u, 0x8000u})
      for (const std::uint32_t m : fo.magnitudes) operands.push_back(sign | m);
    const std::vector<std::uint32_t>& addends = fo.addends;
    const std::uint32_t one = fo.one;
    for (const simd::lane_op op : kLaneOps) {
      CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
      std::vector<std::array<std::uint32_t, 3>> cases;
      for (const std::uint32_t x : operands)
        for (const std::uint32_t y : op == simd::lane_op::sqrt ? std::vector<std::uint32_t>{0} : operands)
          for (const std::uint32_t z : op == simd::lane_op::fma ? addends : std::vector<std::uint32_t>{0})
            cases.push_back({x, y, z});
      if (op == simd::lane_op::fma)
        for (const auto& t : fo.beyond_midpoints)
          for (const std::uint32_t sign : {0x0000u, 0x8000u}) cases.push_back({t[0] ^ sign, t[1], t[2] ^ sign});
      for (const rounding& r : roundings_for(f)) {
        if (r.mode == round_mode::stochastic_exact || r.mode == round_mode::nearest_away ||
            r.mode == round_mode::to_odd)
          continue;
        CAPTURE(describe(f, r));
        auto core = [&](const std::array<std::uint32_t, 3>& t, std::size_t i = 0) {
          return core_op(op, f, r, sr, i, t[0], t[1], t[2]);
        };
        REQUIRE(core({one, one, one}).flags == 0);
        // A case raising each flag the op raises here (with inexact, for overflow and underflow).
        std::vector<std::array<std::uint32_t, 3>> raisers;
        for (const std::uint8_t fl :
             {flag::invalid, flag::divide_by_zero, flag::overflow, flag::underflow, flag::inexact}) {
          const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& t) {
            const std::uint8_t got = core(t).flags;
            return got == fl || got == (fl | flag::inexact);
          });
          if (it != cases.end()) raisers.push_back(*it);
        }
        std::vector<std::vector<std::array<std::uint32_t, 3>>> prefixes = {{}, raisers};
        for (std::size_t k = 0; k < raisers.size(); ++k) {
          prefixes.push_back(raisers);
          prefixes.back().erase(prefixes.back().begin() + static_cast<std::ptrdiff_t>(k));
        }
        for_each_target([&](const std::string& target) {
          CAPTURE(target);
          if (!simd::one_pass_ops(op, f, r)) return (void)one_pass_calls[target + " " + fo.name];  // two passes
          ++one_pass_calls[target + " " + fo.name];
          for (const auto& prefix : prefixes) {
            for (const auto& probe : cases) {
              for (const std::size_t lane : kProbeLanes) {
                std::vector<std::uint16_t> a(64, one), b(64, one), c(64, one), out(64);
                std::uint8_t want_all = 0;
                std::vector<rounded> want(64, core({one, one, one}));
                auto put = [&](std::size_t i, const std::array<std::uint32_t, 3>& t) {
                  a[i] = static_cast<std::uint16_t>(t[0]), b[i] = static_cast<std::uint16_t>(t[1]);
                  c[i] = static_cast<std::uint16_t>(t[2]);
                  want[i] = core(t, i);
                };
                for (std::size_t i = 0; i < prefix.size(); ++i) put(i, prefix[i]);
                put(32 + lane, probe);
                for (const rounded& w : want) want_all |= w.flags;
                const std::span<const std::uint16_t> x(a);
                const auto all = op == simd::lane_op::fma    ? apply_fma(f, x, b, c, out, r, sr)
                                 : op == simd::lane_op::sqrt ? apply_sqrt(f, x, out, r, sr)
                                                             : apply(static_cast<array_op>(op), f, x, b, out, r, sr);
                REQUIRE(all.has_value());
                ++probes, elements += 64;
                bool same = *all == want_all;
                for (std::size_t i = 0; i < 64; ++i) same = same && out[i] == want[i].code;
                if (same || ++mismatches > 5) continue;
                FAIL_CHECK("probe (" << hex(probe[0]) << ", " << hex(probe[1]) << ", " << hex(probe[2]) << ") at lane "
                                     << lane << " after " << prefix.size() << " raisers: code " << hex(out[32 + lane])
                                     << " union " << int(*all) << ", core " << hex(want[32 + lane].code) << " union "
                                     << int(want_all));
              }
            }
          }
        });
      }
    }
  }
  for (const auto& [target, calls] : one_pass_calls)
    MESSAGE(target << ": " << calls << " (op, rounding) pairs in one pass");
  MESSAGE(probes << " probes, " << elements << " elements checked, " << mismatches << " mismatches");
  CHECK(mismatches == 0);
  // The one pass serves the four directions and sr with 1, 3, 8 and 16 bits under policy ieee, each
  // of the six ops, for fp16 and bf16 on every target but the scalar one.
  for (const auto& [key, calls] : one_pass_calls) {
    const bool scalar = key.starts_with("SCALAR") || key.starts_with("EMU128");
    CHECK(calls == (scalar ? 0 : 6 * 8));
  }
  set_array_threads(0);
}

TEST_CASE("apply's sr16 into bf16 and fp16 == the core where the exact result has bits beyond binary32's 24 (sums "
          "of operands far apart: bf16 17 to 40 binades, fp16 14 or more; quotients, roots), where the 16 bits read "
          "below the quantum end past a result rounded at 24 bits, every target") {
  // bf16: such a result differs from the exact one in sr16 with about one random word in 2^16
  // (P + k = 24 bits read against precise_enough's 23), so 2^18 lanes meet some on each op: with
  // every op counted exact in op_lanes (binary32 lanes for them all), this case fails. fp16 (P + k
  // = 27): the one pass reads 13 of the 16 bits in binary32 lanes and leaves the lanes whose carry
  // the other 3 decide, about one in 2^13, to the two passes (fp16_codes::Undecided); with none
  // left to them, this case fails.
  const rounding r{round_mode::stochastic, overflow_policy::ieee, 16};
  const sr_stream sr{0x5eed5eedULL, 3, 0};
  std::mt19937_64 rng(13);
  constexpr std::size_t kLanes = std::size_t{1} << 18;
  struct far_apart {
    const char* name;
    int frac_bits;
    std::uint32_t exponent_lo, exponents, gap_lo;  // a's biased exponent from lo on, b's gap_lo or more below
  };
  std::uint64_t checked = 0;
  for (const far_apart& fa : {far_apart{"bf16", 7, 100, 40, 17}, far_apart{"fp16", 10, 15, 16, 14}}) {
    const format f = fmt(fa.name);
    CAPTURE(fa.name);
    const std::uint32_t one = from(f, 1.0).code, fraction = (1u << fa.frac_bits) - 1;
    std::vector<std::uint32_t> a(kLanes), b(kLanes), ones(kLanes, one);
    for (std::size_t i = 0; i < kLanes; ++i) {
      const auto e = static_cast<std::uint32_t>(fa.exponent_lo + rng() % fa.exponents);
      const auto gap = static_cast<std::uint32_t>(fa.gap_lo + rng() % (std::min(e, 40u) - fa.gap_lo + 1));
      a[i] = static_cast<std::uint32_t>((rng() % 2) << 15 | e << fa.frac_bits | (rng() & fraction));
      b[i] = static_cast<std::uint32_t>((rng() % 2) << 15 | (e - gap) << fa.frac_bits | (rng() & fraction));
    }
    for (const simd::lane_op op :
         {simd::lane_op::add, simd::lane_op::sub, simd::lane_op::div, simd::lane_op::fma, simd::lane_op::sqrt}) {
      CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
      CHECK(simd::op_lanes(op, f, r) != simd::op_path::core);
      // fma as a * 1 + b: the same sums.
      const std::vector<std::uint32_t>& y = op == simd::lane_op::fma ? ones : b;
      std::vector<rounded> want(kLanes);
      for (std::size_t i = 0; i < kLanes; ++i) want[i] = core_op(op, f, r, sr, i, a[i], y[i], b[i]);
      for_each_target([&](const std::string& target) {
        CAPTURE(target);
        checked += check_apply(op, f, r, sr, a, y, b, want);
      });
    }
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("apply's div and sqrt in binary64 lanes == the core on quotients and roots just off the grid sr16 reads, "
          "which only the remainder's sign tells from their nearest binary64 value: e8m22, every target (those "
          "without a fused multiply-add form the sign from exact pieces)") {
  // e8m22 (P = 23) under sr16 reads 39 bits. Where a quotient or root x is off that grid but its
  // nearest binary64 value g is on it, the lanes round g to odd towards x, by the remainder's
  // sign; where x lies below g, g itself rounds to another code for one random word in 2^16.
  // Such pairs, about one random pair in 2^14, fill the arrays in turn, each meeting 2^15 random
  // words; the case counts the elements where rounding g gives another code than the core.
  const format f = fmt("e8m22");
  const rounding r{round_mode::stochastic, overflow_policy::ieee, 16};
  const sr_stream sr{0x7a11ULL, 5, 0};
  std::mt19937_64 rng(14);
  auto random_code = [&](bool negative) {  // 2^-27..2^28
    return static_cast<std::uint32_t>((negative ? 1u << 30 : 0u) | (100 + rng() % 55) << 22 | (rng() & 0x3fffff));
  };
  auto nearest = [&](simd::lane_op op, std::uint32_t x, std::uint32_t y) {  // g, and whether x is off the grid
    const double a = to_double(f, x), b = to_double(f, y);
    const double g = op == simd::lane_op::div ? a / b : std::sqrt(a);
    const double remainder = op == simd::lane_op::div ? std::fma(-g, b, a) : std::fma(-g, g, a);
    std::uint64_t bits;
    std::memcpy(&bits, &g, sizeof bits);
    return std::pair{g, (bits & 0x3fff) == 0 && remainder != 0};  // 53 - 39 bits below the grid
  };
  constexpr std::size_t kLanes = std::size_t{1} << 21, kPairs = 64;
  std::uint64_t checked = 0;
  for (const simd::lane_op op : {simd::lane_op::div, simd::lane_op::sqrt}) {
    CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
    std::vector<std::uint32_t> xs, ys;
    while (xs.size() < kPairs) {
      const std::uint32_t x = random_code(false), y = random_code(rng() % 2);
      if (nearest(op, x, y).second) xs.push_back(x), ys.push_back(y);
    }
    std::vector<std::uint32_t> a(kLanes), b(kLanes);
    std::vector<rounded> want(kLanes);
    std::size_t decisive = 0;
    for (std::size_t i = 0; i < kLanes; ++i) {
      a[i] = xs[i % kPairs], b[i] = ys[i % kPairs];
      want[i] = core_op(op, f, r, sr, i, a[i], b[i], 0);
      const std::uint64_t random = keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r));
      decisive += from(f, nearest(op, a[i], b[i]).first, r, random).code != want[i].code;
    }
    MESSAGE(std::string(kLaneOpNames[static_cast<int>(op)])
            << ": " << decisive << " elements where g rounds otherwise");
    CHECK(decisive > 0);
    for_each_target([&](const std::string& target) {
      CAPTURE(target);
      CHECK(simd::op_lanes(op, f, r) == simd::op_path::binary64);
      checked += check_apply(op, f, r, sr, a, b, b, want);
    });
  }
  MESSAGE(checked << " elements checked");
}

TEST_CASE("op_floats rounds to odd at 24 bits: == the core's binary32 ops in mode rto on random e8m22 operands "
          "(23-bit significands; 12-bit ones where a product must be exact; infinities), specials listed, every "
          "target") {
  // Values of the 8- and 16-bit formats never come within 2^-24 of a rounding boundary of their
  // own format in div and sqrt, so there the direction of the step to odd is exercised only
  // here. e8m22's values are binary32 values whose code is the binary32 bits shifted right once.
  const format f32 = formats::fp32, e8m22 = fmt("e8m22");
  const rounding rto{round_mode::to_odd};
  std::mt19937_64 rng(13);
  const std::size_t n = 20000;
  auto value = [&](int significand_bits) {
    const std::uint32_t sig = static_cast<std::uint32_t>(rng()) & ~((std::uint32_t{1} << (24 - significand_bits)) - 1);
    const std::uint32_t exponent = static_cast<std::uint32_t>(127 - 20 + static_cast<int>(rng() % 41));
    return (static_cast<std::uint32_t>(rng() & 1) << 31) | (exponent << 23) | (sig & 0x7fffffu);
  };
  const auto code = [](std::uint32_t bits) { return bits >> 1; };
  std::uint64_t checked = 0, specials = 0;
  for (const simd::lane_op op : kLaneOps) {
    CAPTURE(std::string(kLaneOpNames[static_cast<int>(op)]));
    const bool product = op == simd::lane_op::mul || op == simd::lane_op::fma;
    std::vector<std::uint32_t> a(n), b(n), c(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = value(product ? 12 : 23);
      b[i] = value(product ? 12 : 23);
      c[i] = value(23);
      if (i % 97 == 0) b[i] = a[i] ^ 0x80000000u;  // exact zero sums
      if (op == simd::lane_op::sqrt) a[i] &= 0x7fffffffu;
    }
    a[5] = 0x7f800000u;  // inf
    b[6] = 0x7fc00000u;  // NaN
    b[7] = 0;
    a[8] = 0xbf800000u;  // -1
    b[9] = 0xff800000u;  // -inf
    a[10] = 0xff800000u, b[10] = 0x7f800000u;  // -inf, inf
    std::vector<std::uint32_t> ca(n), cb(n), cc(n);
    for (std::size_t i = 0; i < n; ++i) ca[i] = code(a[i]), cb[i] = code(b[i]), cc[i] = code(c[i]);
    std::vector<float> z(n);
    std::vector<std::uint32_t> special(n);
    for (const bool toward_negative : {false, true}) {
      const rounding lane_r{toward_negative ? round_mode::toward_negative : round_mode::nearest_even};
      const rounding zero_r{toward_negative ? round_mode::toward_negative : round_mode::to_odd};
      for_each_target([&](const std::string& target) {
        CAPTURE(target);
        CAPTURE(toward_negative);
        const std::size_t count =
            simd::op_floats(op, e8m22, ca.data(), cb.data(), cc.data(), n, lane_r, z.data(), special.data(),
                            special.data());
        std::vector<bool> is_special(n);
        for (std::size_t k = 0; k < count; ++k) {
          // e8m22 is range-checked: its flag-raising lanes (x / 0, invalid) are the core's too.
          REQUIRE((special[k] >> simd::kLaneIndexBits) == 0u);
          is_special[special[k]] = true;
        }
        for (std::size_t i = 0; i < n; ++i) {
          const rounded want = core_op(op, f32, rto, {}, i, a[i], b[i], c[i]);
          // NaN results (invalid, or a NaN operand) and x / 0; and as e8m22's range needs the
          // lanes' range checks, infinite operands and results of the ops but sqrt (whose range
          // check is on tiny operands alone).
          const auto nan = [](std::uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; };
          const auto inf = [](std::uint32_t bits) { return (bits & 0x7fffffffu) == 0x7f800000u; };
          const bool want_special = (want.flags & (flag::invalid | flag::divide_by_zero)) != 0 || nan(a[i]) ||
                                    (op != simd::lane_op::sqrt && nan(b[i])) ||
                                    (op == simd::lane_op::div && (b[i] & 0x7fffffffu) == 0) ||
                                    (op != simd::lane_op::sqrt && (inf(a[i]) || inf(b[i]) || inf(want.code))) ||
                                    (op == simd::lane_op::fma && inf(c[i]));
          REQUIRE(is_special[i] == want_special);
          const std::uint32_t got = std::bit_cast<std::uint32_t>(z[i]);
          if (want_special) {
            REQUIRE(got == 0u);
            ++specials;
            continue;
          }
          // An exact zero: +0 or -0 by the mode, as the core has it.
          const std::uint32_t want_code = (want.code & 0x7fffffffu) == 0
                                              ? core_op(op, f32, zero_r, {}, i, a[i], b[i], c[i]).code
                                              : want.code;
          if (got != want_code) {
            FAIL_CHECK(std::string(kLaneOpNames[static_cast<int>(op)]) << "(" << hex(a[i]) << ", " << hex(b[i])
                                                                       << ", " << hex(c[i]) << "): " << hex(got)
                                                                       << ", core " << hex(want_code));
            return;
          }
          ++checked;
        }
      });
    }
  }
  MESSAGE(checked << " lanes checked, " << specials << " specials");
}

TEST_CASE("apply without per-element flags reports only its elements' flags: the zero-padded tail's 0 / 0 raises "
          "nothing") {
  // The last, partial vector of a call runs on codes padded with zeros; in div the padding lanes
  // compute 0 / 0, an invalid operation, whose flag must stay out of the union (with per-element
  // flags as without). fp16 and bf16 in nearest-even on binary32 lanes, fp16 in sr16 on binary64
  // lanes (1 / 1 is exact in every mode); 1 to 40 elements.
  const std::pair<format, rounding> cases[] = {
      {formats::fp16, rounding{}},
      {formats::bf16, rounding{}},
      {formats::fp16, rounding{round_mode::stochastic, overflow_policy::ieee, 16}}};
  for (const auto& [f, r] : cases) {
    CAPTURE(to_string(f));
    CAPTURE(static_cast<int>(r.mode));
    REQUIRE(simd::op_lanes(simd::lane_op::div, f, r) != simd::op_path::core);
    const std::uint32_t one = from(f, 1.0).code;
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      CAPTURE(hwy::TargetName(target));
      hwy::SetSupportedTargetsForTest(target);
      for (std::size_t n = 1; n <= 40; ++n) {
        CAPTURE(n);
        std::vector<std::uint32_t> a(n, one), b(n, one), out(n);
        std::vector<std::uint8_t> flags(n);
        for (const bool per_element : {false, true}) {
          const auto all =
              apply(array_op::div, f, a, b, out, r, {}, per_element ? std::span(flags) : std::span<std::uint8_t>());
          REQUIRE(all.has_value());
          CHECK(*all == 0);
          CHECK(std::count(out.begin(), out.end(), one) == static_cast<std::ptrdiff_t>(n));
        }
        a.back() = b.back() = 0;  // the last element's own 0 / 0
        CHECK(apply(array_op::div, f, a, b, out, r).value() == flag::invalid);
      }
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}

TEST_CASE("apply in a floating-point environment the lanes cannot use (rounding upward, FTZ/DAZ) goes to the core "
          "and gives its results") {
  const format f = formats::bf16;
  const std::vector<std::uint32_t> a = {0x0001, 0x3f80, 0x8001, 0x4049}, b = {0x0003, 0x3f81, 0x0001, 0xc049};
  const rounding r{};
  REQUIRE(simd::op_lanes(simd::lane_op::add, f, r) != simd::op_path::core);
  std::vector<std::uint32_t> out(a.size());
  auto check_core = [&](const char* what, bool lanes, const expected<std::uint8_t>& all) {
    CAPTURE(what);
    CHECK_FALSE(lanes);
    REQUIRE(all.has_value());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(out[i] == add(f, a[i], b[i], r).code);
  };
  {
    std::fesetround(FE_UPWARD);
    const bool lanes = simd::op_lanes(simd::lane_op::add, f, r) != simd::op_path::core;
    const auto all = apply(array_op::add, f, a, b, out, r);
    std::fesetround(FE_TONEAREST);
    check_core("rounding upward", lanes, all);
  }
#if defined(__x86_64__) || defined(__i386__)
  const unsigned saved = __builtin_ia32_stmxcsr();
  __builtin_ia32_ldmxcsr(saved | 0x8040u);  // FTZ + DAZ
  const bool lanes = simd::op_lanes(simd::lane_op::add, f, r) != simd::op_path::core;
  const auto all = apply(array_op::add, f, a, b, out, r);
  __builtin_ia32_ldmxcsr(saved);
  check_core("FTZ + DAZ", lanes, all);
#endif
}

TEST_CASE("round_in_place / decode_array(float) on formats whose values are not binary32 values, and size "
          "mismatches: errors naming the format or both spans") {
  std::vector<float> x(4, 1.0f);
  std::vector<std::uint32_t> codes(4, 0);
  for (const char* spec : {"fp32", "e11m20", "e8m0fnu", "e5m2:unsigned", "e5m7:bias=145", "e4m6:bias=-120",
                           "e4m3:nosub"}) {
    const format f = fmt(spec);
    CAPTURE(spec);
    REQUIRE_FALSE(simd::values_are_floats(f));
    const auto a = round_in_place(f, std::span<float>(x), rounding{});
    REQUIRE_FALSE(a.has_value());
    CHECK(a.message().find("format " + std::string(spec) + " ") != std::string::npos);
    CHECK(a.message().find("round_in_place") != std::string::npos);
    CHECK(x == std::vector<float>(4, 1.0f));  // nothing written
    std::vector<float> out(4, -1.0f);
    const auto d = decode_array(f, codes, std::span<float>(out));
    REQUIRE_FALSE(d.has_value());
    CHECK(d.message().find("format " + std::string(spec) + " ") != std::string::npos);
    CHECK(d.message().find("decode_array") != std::string::npos);
    CHECK(out == std::vector<float>(4, -1.0f));
  }
  // ... and every float-valued format of the encode test is accepted.
  for (const char* spec : {"bf16", "fp16", "e4m3fn", "e2m1fn", "tf32", "e8m13", "e8m22", "e6m9", "e1m2:finite"})
    CHECK_MESSAGE(simd::values_are_floats(fmt(spec)), spec);

  const format f = formats::bf16;
  std::vector<float> in(10, 1.0f);
  std::vector<double> ind(10, 1.0);
  std::vector<std::uint32_t> out9(9);
  std::vector<std::uint8_t> flags9(9);
  std::vector<float> outf9(9);
  const auto has = [](const expected<std::uint8_t>& e, const std::string& a, const std::string& b) {
    REQUIRE_FALSE(e.has_value());
    CHECK_MESSAGE(e.message().find(a) != std::string::npos, e.message());
    CHECK_MESSAGE(e.message().find(b) != std::string::npos, e.message());
  };
  has(round_array(f, std::span<const float>(in), out9), "'in' has 10 elements", "'out' has 9");
  has(round_array(f, std::span<const double>(ind), out9), "'in' has 10 elements", "'out' has 9");
  std::vector<std::uint32_t> out10(10);
  has(round_array(f, std::span<const float>(in), out10, rounding{}, sr_stream{}, flags9), "'in' has 10 elements",
      "'flags' has 9");
  has(round_in_place(f, std::span<float>(in), rounding{}, sr_stream{}, flags9), "'x' has 10 elements",
      "'flags' has 9");
  std::vector<std::uint32_t> codes10(10);
  has(decode_array(f, codes10, std::span<float>(outf9)), "'codes' has 10 elements", "'out' has 9");
  std::vector<double> outd9(9);
  has(decode_array(f, codes10, std::span<double>(outd9)), "'codes' has 10 elements", "'out' has 9");
  // Storage-width codes too narrow for the format: an error naming both widths, nothing written.
  std::vector<std::uint8_t> bytes10(10, 0x5a);
  has(round_array(f, std::span<const float>(in), std::span<std::uint8_t>(bytes10)), "format bf16 has 16-bit codes",
      "'out' holds 8-bit codes");
  std::vector<std::uint16_t> halves10(10, 0x5a5a);
  has(round_array(formats::fp32, std::span<const double>(ind), std::span<std::uint16_t>(halves10)),
      "format fp32 has 32-bit codes", "'out' holds 16-bit codes");
  const std::vector<std::uint8_t> byte_codes10(10, 0x3c);
  has(apply(array_op::add, f, std::span<const std::uint8_t>(byte_codes10), byte_codes10, bytes10),
      "format bf16 has 16-bit codes", "the operands and 'out' hold 8-bit codes");
  has(apply_sqrt(f, std::span<const std::uint8_t>(byte_codes10), bytes10), "format bf16 has 16-bit codes",
      "the operands and 'out' hold 8-bit codes");
  has(decode_array(f, std::span<const std::uint8_t>(byte_codes10), std::span<double>(outd9)),
      "format bf16 has 16-bit codes", "'codes' holds 8-bit codes");
  has(convert_array<std::uint8_t, std::uint8_t>(formats::e4m3fn, f, byte_codes10, bytes10),
      "format bf16 has 16-bit codes", "'in' holds 8-bit codes");
  has(convert_array<std::uint16_t, std::uint8_t>(f, formats::e4m3fn, halves10, bytes10),
      "format bf16 has 16-bit codes", "'out' holds 8-bit codes");
  CHECK(bytes10 == std::vector<std::uint8_t>(10, 0x5a));
  CHECK(halves10 == std::vector<std::uint16_t>(10, 0x5a5a));
  std::vector<std::uint8_t> bytes9(9);
  has(round_array(formats::e4m3fn, std::span<const float>(in), std::span<std::uint8_t>(bytes9)),
      "'in' has 10 elements", "'out' has 9");
  has(convert_array(formats::e4m3fn, f, codes10, out9), "'in' has 10 elements", "'out' has 9");
}
