// A move-only std::function: completion handlers (use_awaitable's among
// them) cannot be copied. std::move_only_function is C++23.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace redlock::detail {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
 public:
  unique_function() = default;

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, unique_function>>>
  unique_function(F&& f)
      : callable_(std::make_unique<holder<std::decay_t<F>>>(std::forward<F>(f))) {}

  explicit operator bool() const noexcept { return callable_ != nullptr; }

  R operator()(Args... args) { return callable_->call(std::forward<Args>(args)...); }

 private:
  struct callable {
    virtual ~callable() = default;
    virtual R call(Args... args) = 0;
  };
  template <class F>
  struct holder final : callable {
    explicit holder(F&& f) : function(std::move(f)) {}
    explicit holder(const F& f) : function(f) {}
    R call(Args... args) override { return function(std::forward<Args>(args)...); }
    F function;
  };

  std::unique_ptr<callable> callable_;
};

}  // namespace redlock::detail
