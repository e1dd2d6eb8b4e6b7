// How `exec` and `acquire` wait: past --wait, a bound on nodes that cannot
// answer, and a notice on stderr at intervals saying what is waited for.
#pragma once

#include "repeating_timer.hpp"
#include "session.hpp"

#include <redlock/observer.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace redlock::cli {

/// --unreachable-timeout and --notice-interval.
struct waiting_arguments {
  /// Exit 4 once no attempt has been answered by a quorum for this long;
  /// 0: no bound (lock_options::unreachable_timeout).
  std::chrono::milliseconds unreachable_timeout{30000};
  /// Say why it still waits every this long; 0: never.
  std::chrono::milliseconds notice_interval{10000};
};

/// Keeps each node's latest answer to an acquire attempt (installed as the
/// session's client observer), for the notices.
class acquire_answers final : public observer {
 public:
  explicit acquire_answers(std::size_t nodes) : latest_(nodes) {}
  void on_node_reply(const node_report& report) override;
  /// One entry per node, in configuration order; pending until it answers.
  const std::vector<node_outcome>& latest() const noexcept { return latest_; }

 private:
  std::vector<node_outcome> latest_;
};

/// What the nodes' latest answers say about a wait: "held elsewhere",
/// "2 of 3 nodes unreachable (127.0.0.1:7001: Connection refused; ...)",
/// both, or that no node has answered yet.
std::string waiting_reason(const std::vector<node_outcome>& latest,
                           const std::vector<node_config>& nodes);

/// While an acquire waits, says "still waiting for RESOURCE: <reason>" on
/// stderr every notice_interval (not with --quiet), until stop().
class wait_notices {
 public:
  wait_notices(session& s, std::string resource, std::chrono::milliseconds interval);
  void start();
  void stop();

 private:
  session& session_;
  std::string resource_;
  repeating_timer timer_;
};

}  // namespace redlock::cli
