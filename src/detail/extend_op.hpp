// client::async_extend: one round of the extend script on every node,
// decided by a quorum_fsm.
#pragma once

#include "detail/extension_batch.hpp"
#include "detail/lock_state.hpp"
#include "detail/operation.hpp"
#include "detail/quorum_fsm.hpp"

#include <optional>

namespace redlock::detail {

class extend_op final : public operation<extend_op, error_code, redlock::lock>,
                        public batched_extension {
 public:
  /// `with_outcomes`: the handle given to `done` tells each node's outcome
  /// (a keeper, which reads only the shared state, does without).
  extend_op(std::shared_ptr<client_core> core, redlock::lock held, milliseconds ttl,
            completion<error_code, redlock::lock> done, bool with_outcomes = true);
  void client_closed() override;
  /// The next start_here() adds a plain single-key lock's request to
  /// `batch` (sent when the batch is flushed) rather than sending its own.
  void send_in(extension_batch& batch) noexcept { batch_ = &batch; }
  void on_batched_reply(std::size_t node, error_code ec, const reply& r,
                        clock::time_point now) override;
  void on_batch_timeout(clock::time_point now) override;

 private:
  void run() override;
  void cancel() override;
  void refresh_never_holders();
  void decided(quorum_fsm::state state);
  void finish(error_code ec);

  redlock::lock held_;
  milliseconds ttl_;
  std::optional<quorum_fsm> round_;  ///< Made when the round starts.
  clock::time_point start_{};
  extension_batch* batch_ = nullptr;  ///< Only until run() has used it.
  bool with_outcomes_;
  bool timer_armed_ = false;  ///< Its own timer (a batched one has its call's).
  timer timer_;
};

}  // namespace redlock::detail
