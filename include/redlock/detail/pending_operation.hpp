// The face an operation shows the template layer (client's async_*
// functions): start it, and cancel it from any thread.
#pragma once

#include <redlock/detail/asio.hpp>

#include <boost/version.hpp>
#if BOOST_VERSION >= 107700
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#endif

#include <memory>

namespace redlock::detail {

class pending_operation {
 public:
  /// Posts the operation's start onto the client's strand; once only.
  virtual void launch() = 0;
  /// Thread-safe: the operation ends as its documentation says, on the
  /// client's strand, unless it has already completed.
  virtual void request_cancel() = 0;

 protected:
  ~pending_operation() = default;
};

#if BOOST_VERSION >= 107700
/// The cancellation slot associated with a handler, read before the handler
/// is moved away.
template <class Handler>
auto cancellation_slot_of(const Handler& handler) {
  return boost::asio::get_associated_cancellation_slot(handler);
}

/// Connects `slot` to `op`: any cancellation type but none cancels.
template <class Slot>
void bind_cancellation(Slot slot, const std::shared_ptr<pending_operation>& op) {
  if (!slot.is_connected()) return;
  slot.assign([weak = std::weak_ptr<pending_operation>(op)](boost::asio::cancellation_type type) {
    if (type == boost::asio::cancellation_type::none) return;
    if (auto alive = weak.lock()) alive->request_cancel();
  });
}

/// Disconnects the handler's slot: the operation is over, and Asio lets a
/// slot be reused once its operation has completed.
template <class Handler>
void clear_cancellation(const Handler& handler) {
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.clear();
}
#else
// Boost 1.74 has no cancellation slots.
struct no_cancellation_slot {};
template <class Handler>
no_cancellation_slot cancellation_slot_of(const Handler&) {
  return {};
}
inline void bind_cancellation(no_cancellation_slot, const std::shared_ptr<pending_operation>&) {}
template <class Handler>
void clear_cancellation(const Handler&) {}
#endif

}  // namespace redlock::detail
