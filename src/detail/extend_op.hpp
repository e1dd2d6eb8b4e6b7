// client::async_extend: one round of the extend script on every node,
// decided by a quorum_fsm.
#pragma once

#include "detail/lock_state.hpp"
#include "detail/operation.hpp"
#include "detail/quorum_fsm.hpp"

#include <optional>

namespace redlock::detail {

class extend_op final : public operation<extend_op, error_code, redlock::lock> {
 public:
  extend_op(std::shared_ptr<client_core> core, redlock::lock held, milliseconds ttl,
            completion<error_code, redlock::lock> done);
  void client_closed() override;

 private:
  void run() override;
  void cancel() override;
  void refresh_never_holders();
  void decided(quorum_fsm::state state);
  void finish(error_code ec);

  redlock::lock held_;
  milliseconds ttl_;
  std::optional<quorum_fsm> round_;  ///< Made when the round starts.
  timer timer_;
};

}  // namespace redlock::detail
