// The base of every operation: registers with the client core while it runs,
// completes exactly once, and takes cancellation requests from any thread
// onto the strand. The place where an observer will hook in.
#pragma once

#include "detail/client_core.hpp"

#include <redlock/detail/completion.hpp>
#include <redlock/detail/pending_operation.hpp>

#include <memory>
#include <utility>

namespace redlock::detail {

template <class Derived, class... Results>
class operation : public registered_operation,
                  public pending_operation,
                  public std::enable_shared_from_this<Derived> {
 public:
  operation(std::shared_ptr<client_core> core, completion<Results...> done)
      : core_(std::move(core)), done_(std::move(done)) {}
  operation(const operation&) = delete;
  operation& operator=(const operation&) = delete;

  void launch() final {
    boost::asio::post(core_->strand(), [self = this->shared_from_this()] { self->start_here(); });
  }

  /// launch() for a caller already on the strand (a keeper, whose
  /// extensions must go out inside its schedule's cork).
  void start_here() {
    if (completed()) return;                         // cancelled before it started
    if (core_->observer()) started_ = clock::now();  // no clock read for nobody
    core_->enroll(this);
    enrolled_ = true;
    if (core_->closed()) return client_closed();
    run();
  }

  void request_cancel() final {
    boost::asio::post(core_->strand(), [weak = this->weak_from_this()] {
      auto self = weak.lock();
      if (!self) return;
      operation& base = *self;
      if (!base.completed()) base.cancel();
    });
  }

 protected:
  /// On the strand, once, when launched (not if the client had closed).
  virtual void run() = 0;
  /// On the strand, while not completed: the caller asked to cancel.
  virtual void cancel() = 0;

  // Withdrawn on completion, on the strand: the last reference may be
  // dropped on any thread.
  ~operation() = default;

  bool completed() const noexcept { return !done_; }

  /// Calls the handler unless it was called before; true if it was called now.
  bool complete(Results... results) {
    if (!done_) return false;
    if (std::exchange(enrolled_, false)) core_->withdraw(this);
    auto done = std::move(done_);
    done_ = {};
    done(std::move(results)...);
    return true;
  }

  /// Tells the observer, if any, that node `node` answered (or failed) a
  /// request sent at `sent`.
  void report_node(operation_kind kind, std::size_t node, node_outcome outcome,
                   clock::time_point sent) const {
    auto* watching = core_->observer();
    if (!watching) return;
    const auto endpoint = core_->pool().node(node).endpoint();
    watching->on_node_reply({kind, node, endpoint, outcome, clock::now() - sent});
  }
  /// Tells the observer, if any, that the operation completes with `result`.
  void report_completion(operation_kind kind, std::string_view resource, error_code result,
                         unsigned attempts = 1) const {
    auto* watching = core_->observer();
    if (!watching) return;
    watching->on_operation({kind, resource, result, clock::now() - started_, attempts});
  }

  std::shared_ptr<client_core> core_;

 private:
  clock::time_point started_{};  ///< Read only when an observer is installed.
  completion<Results...> done_;
  bool enrolled_ = false;
};

}  // namespace redlock::detail
