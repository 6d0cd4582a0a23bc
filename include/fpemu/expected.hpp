// A value or an error message, for bad external input (format strings, numbers, options).
// A small stand-in for C++23 std::expected<T, std::string>; messages name the offending value
// and its valid range, and front ends print them as they are.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace fpemu {

struct error {
  std::string message;
};

template <class T>
class expected {
 public:
  expected(T value) : v_(std::move(value)) {}
  expected(error e) : v_(std::move(e)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const { return value(); }
  T& operator*() { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  // The error's message, or "" for a value (as expected<void> has it): a test may pass it as the
  // message of a check, which doctest evaluates on success too.
  const std::string& message() const {
    static const std::string none;
    return has_value() ? none : std::get<1>(v_).message;
  }

 private:
  std::variant<T, error> v_;
};

// Success or an error, for operations that fill their outputs in place.
template <>
class expected<void> {
 public:
  expected() = default;
  expected(error e) : e_(std::move(e.message)), failed_(true) {}

  bool has_value() const { return !failed_; }
  explicit operator bool() const { return has_value(); }
  const std::string& message() const { return e_; }

 private:
  std::string e_;
  bool failed_ = false;
};

}  // namespace fpemu
