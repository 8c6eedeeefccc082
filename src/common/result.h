// A small Expected<T, E> (std::expected is C++23): every fallible function in cage returns one, so
// errors travel as values across layers and no exception crosses a layer boundary.
#pragma once
#include <utility>
#include <variant>

namespace cage {

template <class E>
struct Unexpected {
  E error;
};

template <class T, class E>
class Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(implicit)
  Expected(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(implicit)
  Expected(Unexpected<E> u) : v_(std::in_place_index<1>, std::move(u.error)) {}  // NOLINT(implicit)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(v_); }
  E& error() { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

// Expected<void, E>: success carries nothing.
struct Ok {};

}  // namespace cage
