// Whether a node may vote, decided without I/O: the set-up commands a new
// connection sends, the verdict on the node's INFO answer (accept, refuse
// with the cause, warn about risky settings), and what was already said
// about it, so that a warning is given once and a failure is logged when a
// series starts or changes cause. The connection shell sends and logs.
#pragma once

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include "detail/reply.hpp"
#include "detail/topology_check.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace redlock::detail {

class server_registry;

/// AUTH and SELECT as the node needs them, and a PING for a subscriber (so
/// that it is ready only once the node answers), in the order to send.
std::vector<std::string> setup_commands(const node_config& node, bool subscriber);

/// Consecutive failures of one connection: a failure is news (worth a log
/// line) when it starts a series or has another cause than the last one.
class failure_series {
 public:
  bool is_news(error_code ec) const noexcept { return count_ == 0 || ec != last_; }
  void add(error_code ec) noexcept {
    last_ = ec;
    ++count_;
  }
  /// The node answers again; returns whether it had failed before.
  bool end() noexcept {
    last_ = {};
    return std::exchange(count_, 0u) > 0;
  }
  unsigned count() const noexcept { return count_; }
  error_code last() const noexcept { return last_; }

 private:
  unsigned count_ = 0;
  error_code last_{};
};

struct admission_verdict {
  error_code refusal;  ///< Set: the node may not vote (and why, in `reason`).
  std::string reason;
  /// INFO is not allowed to this user or not there: the node votes
  /// unchecked. Set the first time only.
  std::string unchecked_warning;
  /// Risky settings not reported before on this connection.
  std::vector<topology_risk> new_risks;
};

class admission {
 public:
  /// `servers` may be null (no twin check); `endpoint` names the node in
  /// reasons.
  admission(bool warn_without_aof, std::shared_ptr<server_registry> servers, std::size_t node_index,
            std::string endpoint);

  /// Judges the node's answer to INFO.
  admission_verdict judge(const reply& info);
  /// A check of this node passed: later ones may be pipelined with the
  /// commands behind them.
  bool passed_before() const noexcept { return passed_; }

 private:
  bool warn_without_aof_;
  std::shared_ptr<server_registry> servers_;
  std::size_t node_index_;
  std::string endpoint_;
  bool passed_ = false;
  bool warned_unchecked_ = false;
  std::vector<std::string> warned_risks_;  ///< Explanations already reported.
};

}  // namespace redlock::detail
