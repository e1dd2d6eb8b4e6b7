// A move-only std::function: completion handlers (use_awaitable's among
// them) cannot be copied. std::move_only_function is C++23.
//
// Small callables (the per-node reply callbacks: a shared_ptr and an index)
// live inside the object, so the hot path does not allocate one per command.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace redlock::detail {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
 public:
  unique_function() noexcept = default;

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, unique_function>>>
  unique_function(F&& f) {
    using D = std::decay_t<F>;
    if constexpr (stored_inline<D>) {
      ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
      table_ = &inline_table<D>;
    } else {
      ::new (static_cast<void*>(storage_)) D*(new D(std::forward<F>(f)));
      table_ = &heap_table<D>;
    }
  }

  unique_function(unique_function&& other) noexcept { take(other); }
  unique_function& operator=(unique_function&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  unique_function(const unique_function&) = delete;
  unique_function& operator=(const unique_function&) = delete;
  ~unique_function() { reset(); }

  explicit operator bool() const noexcept { return table_ != nullptr; }

  R operator()(Args... args) { return table_->call(storage_, std::forward<Args>(args)...); }

 private:
  static constexpr std::size_t inline_size = 6 * sizeof(void*);

  template <class D>
  static constexpr bool stored_inline =
      sizeof(D) <= inline_size &&
      alignof(D) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<D>;

  struct operations {
    R (*call)(unsigned char* storage, Args&&... args);
    void (*relocate)(unsigned char* from, unsigned char* to) noexcept;
    void (*destroy)(unsigned char* storage) noexcept;
  };

  template <class D>
  static D& inline_object(unsigned char* storage) noexcept {
    return *std::launder(reinterpret_cast<D*>(storage));
  }
  template <class D>
  static D*& heap_pointer(unsigned char* storage) noexcept {
    return *std::launder(reinterpret_cast<D**>(storage));
  }

  template <class D>
  static constexpr operations inline_table{
      [](unsigned char* s, Args&&... args) -> R {
        return inline_object<D>(s)(std::forward<Args>(args)...);
      },
      [](unsigned char* from, unsigned char* to) noexcept {
        ::new (static_cast<void*>(to)) D(std::move(inline_object<D>(from)));
        inline_object<D>(from).~D();
      },
      [](unsigned char* s) noexcept { inline_object<D>(s).~D(); },
  };

  template <class D>
  static constexpr operations heap_table{
      [](unsigned char* s, Args&&... args) -> R {
        return (*heap_pointer<D>(s))(std::forward<Args>(args)...);
      },
      [](unsigned char* from, unsigned char* to) noexcept {
        ::new (static_cast<void*>(to)) D*(heap_pointer<D>(from));
      },
      [](unsigned char* s) noexcept { delete heap_pointer<D>(s); },
  };

  void take(unique_function& other) noexcept {
    if (other.table_ == nullptr) return;
    other.table_->relocate(other.storage_, storage_);
    table_ = std::exchange(other.table_, nullptr);
  }

  void reset() noexcept {
    if (table_ == nullptr) return;
    // Cleared first: destroying the callable may destroy whoever owns us.
    const operations* table = std::exchange(table_, nullptr);
    table->destroy(storage_);
  }

  alignas(std::max_align_t) unsigned char storage_[inline_size];
  const operations* table_ = nullptr;
};

}  // namespace redlock::detail
