// A value or an error enum, for core functions that judge network input and must not throw on it.
#pragma once

#include <utility>
#include <variant>

namespace toast::tracker {

template <class T, class E>
class Result {
  public:
    Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like std::expected
    Result(E error) : v_(error) {}             // NOLINT

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<0>(v_); }
    T& value() & { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    const T* operator->() const { return &std::get<0>(v_); }
    E error() const { return std::get<1>(v_); }

  private:
    std::variant<T, E> v_;
};

}  // namespace toast::tracker
