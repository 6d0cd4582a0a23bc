// The core, fp<F> and the Boost backend against the cpp_bin_float reference (bin_float_reference.hpp):
// for each operand pair and operation, in every deterministic mode (rne rna rz ru rd rto), the
// core's code and error direction, the backend number<fpemu::mp::backend<F, R>>'s code, and in rne
// fp<F>'s operators, must equal the reference bit for bit.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "bin_float_reference.hpp"
#include "fpemu/boost_multiprecision.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/value.hpp"

namespace boost_test {

inline constexpr std::array<fpemu::round_mode, 6> kDeterministicModes = {
    fpemu::round_mode::nearest_even,    fpemu::round_mode::nearest_away,    fpemu::round_mode::toward_zero,
    fpemu::round_mode::toward_positive, fpemu::round_mode::toward_negative, fpemu::round_mode::to_odd};
inline constexpr const char* kModeNames[] = {"rne", "rna", "rz", "ru", "rd", "rto"};
inline const char* op_name(arith_op op) {
  static const char* const names[] = {"add", "sub", "mul", "div", "sqrt"};
  return names[static_cast<int>(op)];
}

// The backend's result code for op in mode R, one function per mode.
template <fpemu::format F, fpemu::rounding R>
std::uint32_t backend_result(arith_op op, std::uint32_t a, std::uint32_t b) {
  using backend = fpemu::mp::backend<F, R>;
  using number = boost::multiprecision::number<backend>;
  const number x(backend::from_code(a)), y(backend::from_code(b));
  switch (op) {
    case arith_op::add: return number(x + y).backend().code();
    case arith_op::sub: return number(x - y).backend().code();
    case arith_op::mul: return number(x * y).backend().code();
    case arith_op::div: return number(x / y).backend().code();
    case arith_op::sqrt: break;
  }
  return number(sqrt(x)).backend().code();
}
using backend_fn = std::uint32_t (*)(arith_op, std::uint32_t, std::uint32_t);
template <fpemu::format F, std::size_t... I>
constexpr std::array<backend_fn, sizeof...(I)> backend_table(std::index_sequence<I...>) {
  return {&backend_result<F, fpemu::rounding{kDeterministicModes[I]}>...};
}

template <fpemu::format F>
std::uint32_t fp_result(arith_op op, std::uint32_t a, std::uint32_t b) {
  const auto x = fpemu::fp<F>::from_code(a), y = fpemu::fp<F>::from_code(b);
  switch (op) {
    case arith_op::add: return (x + y).code();
    case arith_op::sub: return (x - y).code();
    case arith_op::mul: return (x * y).code();
    case arith_op::div: return (x / y).code();
    case arith_op::sqrt: break;
  }
  return sqrt(x).code();
}

inline fpemu::rounded core_result(const fpemu::format& f, arith_op op, std::uint32_t a, std::uint32_t b,
                                  fpemu::round_mode mode) {
  const fpemu::rounding r{mode};
  switch (op) {
    case arith_op::add: return fpemu::add(f, a, b, r);
    case arith_op::sub: return fpemu::sub(f, a, b, r);
    case arith_op::mul: return fpemu::mul(f, a, b, r);
    case arith_op::div: return fpemu::div(f, a, b, r);
    case arith_op::sqrt: break;
  }
  return fpemu::sqrt(f, a, r);
}

// Runs the cases of one format and counts them; prints the first mismatches in full.
template <fpemu::format F>
class bin_float_checker {
 public:
  explicit bin_float_checker(std::string label) : label_(std::move(label)), reference_(F) {}

  // One operand pair (b ignored by sqrt) in every deterministic mode.
  void check(arith_op op, std::uint32_t a, std::uint32_t b) {
    const exact_value nearest = reference_.exact(op, a, b, fpemu::round_mode::nearest_even);
    const bool sum_sign_depends_on_mode =
        nearest.cls == ref_value::kind::zero && (op == arith_op::add || op == arith_op::sub);
    const bin_float_reference::split where =
        nearest.cls == ref_value::kind::finite ? reference_.locate(nearest) : bin_float_reference::split{};
    for (std::size_t m = 0; m < kDeterministicModes.size(); ++m) {
      const fpemu::round_mode mode = kDeterministicModes[m];
      const exact_value exact = sum_sign_depends_on_mode && mode == fpemu::round_mode::toward_negative
                                    ? reference_.exact(op, a, b, mode)
                                    : nearest;
      const ref_result want = reference_.round(exact, where, mode);
      const fpemu::rounded core = core_result(F, op, a, b, mode);
      const std::uint32_t through_backend = backends_[m](op, a, b);
      const bool fp_ok = mode != fpemu::round_mode::nearest_even || fp_result<F>(op, a, b) == want.code;
      ++cases_;
      if (core.code == want.code && core.direction == want.direction && through_backend == want.code && fp_ok) continue;
      if (mismatches_++ < 8) {
        std::printf(
            "MISMATCH %s: %s(%s%s%s) %s\n    cpp_bin_float %s dir %d\n    core          %s dir %d\n"
            "    backend       %s%s\n",
            label_.c_str(), op_name(op), show(F, a).c_str(), op == arith_op::sqrt ? "" : ", ",
            op == arith_op::sqrt ? "" : show(F, b).c_str(), kModeNames[m], show(F, want.code).c_str(), want.direction,
            show(F, core.code).c_str(), core.direction, show(F, through_backend).c_str(),
            fp_ok ? "" : "\n    fp<F> operator differs");
      }
    }
  }

  void finish(std::uint64_t expected, const std::string& breakdown) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("%s: %s = %" PRIu64 " cases, %" PRIu64 " mismatches (%.1f s)\n", label_.c_str(), breakdown.c_str(),
                cases_, mismatches_, s);
    std::fflush(stdout);
    CHECK_MESSAGE(cases_ == expected, label_ << ": ran " << cases_ << " cases, expected " << expected);
    CHECK_MESSAGE(mismatches_ == 0, label_ << ": " << mismatches_ << " mismatches with cpp_bin_float");
  }

 private:
  std::string label_;
  bin_float_reference reference_;
  std::array<backend_fn, 6> backends_ = backend_table<F>(std::make_index_sequence<6>{});
  std::uint64_t cases_ = 0, mismatches_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace boost_test
