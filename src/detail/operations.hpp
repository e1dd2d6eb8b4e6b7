// The lock operations. Each fans one command out to every node, feeds the
// answers to a quorum_fsm (or counts them), and owns one timer.
#pragma once

#include "detail/client_core.hpp"

#include "detail/commands.hpp"
#include "detail/quorum_fsm.hpp"

namespace redlock::detail {

/// An operation that runs a script on the nodes: it can build the EVAL form
/// of its call (needed only when a node's script cache was flushed) and
/// takes each node's answer.
class script_operation {
 public:
  virtual std::string eval_form() const = 0;
  virtual void on_reply(std::size_t node, error_code ec, const reply& r) = 0;

 protected:
  ~script_operation() = default;
};

/// Sends an EVALSHA command to node `index`; on NOSCRIPT (the node's script
/// cache was flushed) sends `op`'s EVAL form instead. The answer goes to
/// op->on_reply(index, ...). The callback is small enough to need no
/// allocation of its own.
void send_script(connection& node, std::size_t index, std::string_view evalsha,
                 std::shared_ptr<script_operation> op);

/// Runs the release script for one token on the nodes and counts the
/// answers.
class release_op final : public abortable,
                         public script_operation,
                         public std::enable_shared_from_this<release_op> {
 public:
  struct result {
    std::size_t removed = 0;   ///< Nodes where our key was deleted.
    std::size_t answered = 0;  ///< Nodes that answered at all.
  };

  /// What the release does on one node.
  enum class node_role : unsigned char {
    skip,
    /// Send, but do not wait for the answer (a node that timed out on the
    /// acquire: its SET may still land, and the release follows it on the
    /// same connection).
    send_only,
    send_and_await,
  };

  struct plan {
    std::vector<node_role> nodes;  ///< One per node.
    /// Complete as soon as this many nodes confirmed the deletion; 0: wait
    /// for every awaited node (or the timeout).
    std::size_t enough_removed = 0;
    /// Publish the release to waiters (an unlock), or not (the undoing of a
    /// failed attempt, which frees nothing anyone waits for).
    bool announce = false;
  };

  release_op(std::shared_ptr<client_core> core, std::string key, std::string token,
             milliseconds timeout, plan how, unique_function<void(result)> done);
  ~release_op();
  void run();
  void abort() override;
  std::string eval_form() const override;
  void on_reply(std::size_t node, error_code ec, const reply& r) override;
  const std::string& key() const noexcept { return key_; }

 private:
  void finish();
  std::shared_ptr<client_core> core_;
  std::string key_;
  std::string token_;
  std::string channel_;
  milliseconds timeout_;
  plan plan_;
  unique_function<void(result)> done_;
  timer timer_;
  std::size_t outstanding_ = 0;
  result result_{};
};

/// client::async_acquire: attempts, releases after failed ones, retries.
class acquire_op final : public abortable, public std::enable_shared_from_this<acquire_op> {
 public:
  acquire_op(std::shared_ptr<client_core> core, std::string resource, lock_options options,
             completion<error_code, lock> done);
  ~acquire_op();
  void run();
  void abort() override;

 private:
  void attempt();
  void on_reply(std::uint64_t attempt, std::size_t node, error_code ec, const reply& r);
  void on_timeout(std::uint64_t attempt);
  void settle(quorum_fsm::state state);
  void on_released();
  void pause_until(clock::time_point at);
  void wait_for_release();
  void on_woken(wakeup_hub::wake_reason why);
  void stop_waiting();
  clock::duration wake_jitter() const;
  void complete(error_code ec, lock result);

  std::shared_ptr<client_core> core_;
  std::string resource_;
  std::string key_;
  lock_options options_;
  milliseconds request_timeout_;
  completion<error_code, lock> done_;
  quorum_fsm fsm_;
  timer timer_;
  std::string token_;
  std::uint64_t attempt_ = 0;
  std::uint64_t pause_ = 0;   ///< Bumped per pause, so a stale timer cannot start an attempt.
  std::uint64_t waiter_ = 0;  ///< Registration with the wakeup hub, 0 if none.
  std::uint64_t ticket_ = 0;  ///< Place in the hub's line, kept from the first wait on.
  std::uint64_t releases_here_at_attempt_ = 0;  ///< The hub's count when the attempt began.
  bool pausing_ = false;                        ///< Between attempts (not attempting or releasing).
  bool release_seen_ = false;       ///< A release was announced during the current attempt.
  bool release_seen_here_ = false;  ///< ... by this client itself (no jitter needed).
  clock::time_point wait_deadline_ = clock::time_point::max();
};

/// client::async_extend.
class extend_op final : public abortable,
                        public script_operation,
                        public std::enable_shared_from_this<extend_op> {
 public:
  extend_op(std::shared_ptr<client_core> core, lock held, milliseconds ttl,
            completion<error_code, lock> done);
  ~extend_op();
  void run();
  void abort() override;
  std::string eval_form() const override;
  void on_reply(std::size_t node, error_code ec, const reply& r) override;

 private:
  void settle(quorum_fsm::state state);

  std::shared_ptr<client_core> core_;
  lock held_;
  milliseconds ttl_;
  completion<error_code, lock> done_;
  quorum_fsm fsm_;
  timer timer_;
  bool finished_ = false;
};

}  // namespace redlock::detail
