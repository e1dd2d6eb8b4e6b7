// Re-seeds one node that lost its fencing state (fence_recovery.hpp): reads
// every other node's state, decides the floor (reseed_floor), reads again
// the nodes that were not valid when the rule needs it, and writes it
// to the node, which takes it only if its loss is still the one seen.
// Started by a fenced acquire that met the loss after the wait; nobody
// waits for it, and what it did is logged.
#pragma once

#include "detail/client_core.hpp"
#include "detail/fence_recovery.hpp"
#include "detail/timer.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {

class reseed_op : public std::enable_shared_from_this<reseed_op> {
 public:
  reseed_op(std::shared_ptr<client_core> core, std::size_t node, std::string loss_id,
            clock::duration timeout);
  void run();

 private:
  /// Reads the fencing state of the other nodes into `into` (the second
  /// time, only those that were not valid the first time).
  void read(std::vector<fence_reading>& into);
  void read_done();
  void write();
  void finish(std::string_view outcome);

  std::shared_ptr<client_core> core_;
  std::size_t node_;
  std::string loss_id_;
  clock::duration timeout_;
  timer timer_;
  std::vector<fence_reading> first_;  ///< Per node; the lost node's unused.
  std::vector<fence_reading> again_;  ///< The confirming reads.
  std::optional<std::uint64_t> floor_;
  std::uint64_t round_ = 0;  ///< Answers and timer events of an older round are ignored.
  std::size_t waiting_ = 0;
  bool confirming_ = false;
  bool finished_ = false;
};

}  // namespace redlock::detail
