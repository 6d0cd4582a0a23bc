// Boost.Math in an emulated format against the same computation with MPFR, step by step.
//
// For one format F and mode R, each function below is evaluated at each of its arguments three
// times: on number<traced<fpemu::mp::backend<F, R>>>, on number<traced<mpfr_backend<F, R>>> and on
// the untraced number<fpemu::mp::backend<F, R>>. The two traces must be equal element by element
// (operation, operand codes, result code: every rounding, comparison and conversion Boost made),
// and the three results equal bit for bit. A function that throws must throw in both.
#pragma once

#include <doctest/doctest.h>

#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/quadrature/trapezoidal.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/roots.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "traced.hpp"

namespace boost_test {

namespace policies = boost::math::policies;
// Errors become results (NaN, infinity, the largest value), as in C's math library, so that a
// function whose intermediate values leave a narrow format still runs to its end in both types.
using quiet = policies::policy<
    policies::domain_error<policies::ignore_error>, policies::pole_error<policies::ignore_error>,
    policies::overflow_error<policies::ignore_error>, policies::underflow_error<policies::ignore_error>,
    policies::denorm_error<policies::ignore_error>, policies::evaluation_error<policies::ignore_error>,
    policies::rounding_error<policies::ignore_error>, policies::indeterminate_result_error<policies::ignore_error>>;

enum class function : std::uint8_t { exp, log, sqrt, erf, tgamma, gauss, trapezoidal, toms748, bisect, newton };

struct function_case {
  function fn;
  const char* name;
  std::vector<double> args;
};

// The functions and fixed arguments (each rounded into the format first, a recorded step too).
inline const std::vector<function_case>& function_cases() {
  constexpr double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  static const std::vector<function_case> cases{
      {function::exp, "exp", {0.0,  -0.0, 1e-3, -0.4, 0.5, 1,    -1,  2.5, -3.75, 7,
                              11.5, -14,  30,   88.5, 100, -110, 1e6, inf, -inf,  nan}},
      {function::log, "log", {0.0, -1, 1e-40, 1e-5, 0.3, 0.7, 1, 1.5, 2, 10, 300, 4e4, 1e30, inf, nan}},
      {function::sqrt, "sqrt", {0.0, -0.0, 1e-6, 0.3, 2, 3, 10, 400, 6e4, 1e30, -1, inf, nan}},
      {function::erf, "erf", {-3, -1, -0.3, 0.0, 1e-4, 0.25, 0.5, 0.9, 1.25, 2, 2.25, 4.25, 6, nan}},
      {function::tgamma, "tgamma", {0.1, 0.5, 1, 1.5, 2.5, 3.5, 5, 7.5, 12, 20, 40, -0.5, -2.5, 0.0, nan}},
      // Integral of exp(-t^2) over [0, x]: 7-point Gauss-Legendre.
      {function::gauss, "gauss<7> exp(-t^2)", {0.25, 1, 2, 4}},
      // Integral of 1 / (1 + t^2) over [0, x]: trapezoidal rule, at most 6 refinements.
      {function::trapezoidal, "trapezoidal 1/(1+t^2)", {0.5, 1, 3}},
      // Roots: t^3 = x by TOMS 748 and t^2 = x by bisection, both on [0, max(1, x)];
      // t^2 = x by Newton-Raphson from max(1, x) / 2.
      {function::toms748, "toms748 cbrt", {0.5, 2, 3, 10, 100}},
      {function::bisect, "bisect sqrt", {0.5, 2, 10}},
      {function::newton, "newton sqrt", {0.5, 2, 3, 10, 100}},
  };
  return cases;
}

// The fixed arguments above, plus a sweep over the format's codes: 8192 codes evenly spaced over
// all of them (every code of an 8-bit format: zeros, subnormals, NaN and infinities included) for
// the five functions, and 128 codes evenly spaced over the positive finite ones for the integrals
// and roots.
constexpr std::uint64_t kSweepCodes = 8192, kSweepPositive = 128;

inline std::uint64_t sweep_size(const fpemu::format& f, function fn) {
  const std::uint64_t codes = std::uint64_t{1} << ((f.is_signed ? 1 : 0) + f.exp_bits + f.frac_bits);
  return fn <= function::tgamma ? (codes < kSweepCodes ? codes : kSweepCodes) : kSweepPositive;
}

inline std::vector<double> sweep_arguments(const fpemu::format& f, function fn) {
  std::vector<double> args;
  const std::uint64_t codes = std::uint64_t{1} << ((f.is_signed ? 1 : 0) + f.exp_bits + f.frac_bits);
  const std::uint64_t n = sweep_size(f, fn);
  if (fn <= function::tgamma) {
    for (std::uint64_t i = 0; i < n; ++i)
      args.push_back(ref_decode(f, static_cast<std::uint32_t>(i * (codes / n))).value);
  } else {
    const std::uint32_t largest = ref_max(f, false);
    for (std::uint64_t i = 1; i <= n; ++i)
      args.push_back(ref_decode(f, static_cast<std::uint32_t>(largest * i / n)).value);
  }
  return args;
}

inline std::uint64_t expected_evaluations(const fpemu::format& f) {
  std::uint64_t n = 0;
  for (const function_case& c : function_cases()) n += c.args.size() + sweep_size(f, c.fn);
  return n;
}

template <class T>
T evaluate(function fn, const T& x) {
  namespace bm = boost::math;
  const T upper = x > 1 ? x : T(1);
  switch (fn) {
    case function::exp: return exp(x);
    case function::log: return log(x);
    case function::sqrt: return sqrt(x);
    case function::erf: return bm::erf(x, quiet());
    case function::tgamma: return bm::tgamma(x, quiet());
    case function::gauss:
      return bm::quadrature::gauss<T, 7>::integrate([](const T& t) { return T(exp(-t * t)); }, T(0), x);
    case function::trapezoidal:
      return bm::quadrature::trapezoidal([](const T& t) { return T(1 / (1 + t * t)); }, T(0), x,
                                         bm::tools::root_epsilon<T>(), 6, static_cast<T*>(nullptr),
                                         static_cast<T*>(nullptr), quiet());
    case function::toms748: {
      std::uintmax_t iterations = 40;
      const auto r = bm::tools::toms748_solve([&](const T& t) { return T(t * t * t - x); }, T(0), upper,
                                              bm::tools::eps_tolerance<T>(), iterations, quiet());
      return T((r.first + r.second) / 2);
    }
    case function::bisect: {
      std::uintmax_t iterations = 60;
      const auto r = bm::tools::bisect([&](const T& t) { return T(t * t - x); }, T(0), upper,
                                       bm::tools::eps_tolerance<T>(), iterations, quiet());
      return T((r.first + r.second) / 2);
    }
    case function::newton: {
      std::uintmax_t iterations = 40;
      return bm::tools::newton_raphson_iterate([&](const T& t) { return std::make_pair(T(t * t - x), T(2 * t)); },
                                               T(upper / 2), T(0), upper, std::numeric_limits<T>::digits, iterations);
    }
  }
  return x;
}

struct outcome {
  std::uint64_t result = 0;  // key of the result
  bool threw = false;
  std::string message;
};

template <class Number, class Backend = typename Number::backend_type>
outcome run(function fn, double argument, trace* steps) {
  Backend::sink = steps;
  outcome o;
  try {
    const Number x(argument);
    const Number y = evaluate(fn, x);
    o.result = key(y.backend().inner);
  } catch (const std::exception& e) {
    o.threw = true;
    o.message = e.what();
  }
  Backend::sink = nullptr;
  return o;
}

template <fpemu::format F>
std::string show_key(std::uint64_t k) {
  return k == kNaN ? std::string("NaN") : show(F, static_cast<std::uint32_t>(k));
}

template <fpemu::format F>
std::string show_step(const step& s) {
  std::string text = std::string(name(s.op)) + "(";
  const bool value_operands = s.op >= step_op::add && s.op <= step_op::compare;
  text += value_operands || s.op >= step_op::eq ? show_key<F>(s.in1) : std::to_string(s.in1);
  if (s.op >= step_op::add && s.op <= step_op::div)
    text += ", " + show_key<F>(s.in2);
  else if (s.in2 != 0)
    text += ", " + std::to_string(static_cast<std::int64_t>(s.in2));
  text += ") = ";
  text += rounds(s.op) ? show_key<F>(s.out) : std::to_string(static_cast<std::int64_t>(s.out));
  if (s.op == step_op::frexp) text += ", exponent " + std::to_string(static_cast<std::int64_t>(s.aux));
  return text;
}

struct comparison_totals {
  std::uint64_t runs = 0, steps = 0, roundings = 0, mismatched_runs = 0;
};

// Every function at every argument in format F, mode R: fpemu's trace == MPFR's trace, and the
// untraced backend's result == both. `label` names the format and mode in messages.
template <fpemu::format F, fpemu::rounding R>
comparison_totals compare_with_mpfr(const std::string& label) {
  using fpemu_number = boost::multiprecision::number<traced<fpemu::mp::backend<F, R>>>;
  using mpfr_number = boost::multiprecision::number<traced<mpfr_backend<F, R>>>;
  using plain_number = boost::multiprecision::number<fpemu::mp::backend<F, R>>;
  const auto start = std::chrono::steady_clock::now();
  comparison_totals t;
  for (const function_case& c : function_cases()) {
    std::vector<double> args = c.args;
    for (const double a : sweep_arguments(F, c.fn)) args.push_back(a);
    for (const double a : args) {
      trace fpemu_steps, mpfr_steps;
      const outcome e = run<fpemu_number>(c.fn, a, &fpemu_steps);
      const outcome m = run<mpfr_number>(c.fn, a, &mpfr_steps);
      ++t.runs;
      t.steps += fpemu_steps.size();
      for (const step& s : fpemu_steps) t.roundings += rounds(s.op) ? 1 : 0;

      std::string problem;
      std::size_t i = 0;
      while (i < fpemu_steps.size() && i < mpfr_steps.size() && fpemu_steps[i] == mpfr_steps[i]) ++i;
      if (i < fpemu_steps.size() || i < mpfr_steps.size()) {
        problem = "step " + std::to_string(i) + " of " + std::to_string(fpemu_steps.size()) + " (mpfr " +
                  std::to_string(mpfr_steps.size()) + ")\n    fpemu " +
                  (i < fpemu_steps.size() ? show_step<F>(fpemu_steps[i]) : std::string("(end)")) + "\n    mpfr  " +
                  (i < mpfr_steps.size() ? show_step<F>(mpfr_steps[i]) : std::string("(end)"));
      } else if (e.threw != m.threw || e.result != m.result) {
        problem = "results " + (e.threw ? "threw " + e.message : show_key<F>(e.result)) + " vs mpfr " +
                  (m.threw ? "threw " + m.message : show_key<F>(m.result));
      } else if (!e.threw) {
        std::uint64_t plain = 0;
        try {
          plain = key(evaluate(c.fn, plain_number(a)).backend());
        } catch (const std::exception& x) {
          problem = std::string("the untraced backend threw ") + x.what();
        }
        if (problem.empty() && plain != e.result)
          problem = "untraced backend " + show_key<F>(plain) + " vs traced " + show_key<F>(e.result);
      }
      if (!problem.empty()) {
        if (t.mismatched_runs++ < 5)
          std::printf("MISMATCH %s %s(%.17g): %s\n", label.c_str(), c.name, a, problem.c_str());
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("boost_math_mpfr %s: %" PRIu64 " evaluations, %" PRIu64 " steps compared (%" PRIu64
              " roundings), %" PRIu64 " mismatching evaluations (%.2f s)\n",
              label.c_str(), t.runs, t.steps, t.roundings, t.mismatched_runs, seconds);
  std::fflush(stdout);
  CHECK_MESSAGE(t.runs == expected_evaluations(F),
                label << ": ran " << t.runs << " evaluations, expected " << expected_evaluations(F));
  CHECK_MESSAGE(t.roundings > 10 * t.runs, label << ": only " << t.roundings << " roundings compared");
  CHECK_MESSAGE(t.mismatched_runs == 0, label << ": " << t.mismatched_runs << " evaluations differ from MPFR");
  return t;
}

}  // namespace boost_test
