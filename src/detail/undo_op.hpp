// Undoes a failed acquire attempt: deletes its token where the SET may have
// landed (per the plan), waits for the nodes that granted, and calls back.
// Internal: it announces nothing (nobody waits for a lock nobody held) and
// is not the public release.
#pragma once

#include "detail/acquire_fsm.hpp"
#include "detail/client_core.hpp"

#include <redlock/detail/unique_function.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace redlock::detail {

class undo_op final : public std::enable_shared_from_this<undo_op> {
 public:
  /// `retry_until`: after it the SET has expired anyway, so a delete that
  /// could not be delivered (node down, connection dropped) is retried on
  /// the node's next connection only until then.
  undo_op(std::shared_ptr<client_core> core, const held_keys& keys, std::string_view token,
          std::chrono::milliseconds lock_delay, undo_plan plan, clock::duration timeout,
          clock::time_point retry_until, unique_function<void()> done);
  void run();

 private:
  void on_reply(std::size_t node);
  void finish();

  std::shared_ptr<client_core> core_;
  std::shared_ptr<const std::string> command_;  ///< Shared by every node's connection.
  undo_plan plan_;
  clock::duration timeout_;
  clock::time_point retry_until_;
  unique_function<void()> done_;
  timer timer_;
  std::size_t awaited_ = 0;
};

}  // namespace redlock::detail
