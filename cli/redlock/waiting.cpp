#include "waiting.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace redlock::cli {

void acquire_answers::on_node_reply(const node_report& report) {
  if (report.kind == operation_kind::acquire && report.node < latest_.size()) {
    latest_[report.node] = report.outcome;
  }
}

std::string waiting_reason(const std::vector<node_outcome>& latest,
                           const std::vector<node_config>& nodes) {
  using status = node_outcome::status;
  const auto count = [&](status s) {
    return static_cast<std::size_t>(std::count_if(
        latest.begin(), latest.end(), [s](const node_outcome& o) { return o.state == s; }));
  };
  const auto held = count(status::held_elsewhere);
  const auto failed = count(status::failed);
  if (failed == 0) return held > 0 ? "held elsewhere" : "no node has answered yet";
  // Only the failures in the list: "held elsewhere" is said once, before it.
  std::vector<node_outcome> failures;
  std::vector<node_config> failing;
  for (std::size_t i = 0; i < latest.size() && i < nodes.size(); ++i) {
    if (latest[i].state != status::failed) continue;
    failures.push_back(latest[i]);
    failing.push_back(nodes[i]);
  }
  auto unreachable = fmt::format("{} of {} nodes unreachable ({})", failed, latest.size(),
                                 describe_nodes(failures, failing));
  if (held == 0) return unreachable;
  return fmt::format("held elsewhere on {} of {} nodes; {}", held, latest.size(), unreachable);
}

wait_notices::wait_notices(session& s, std::string resource, std::chrono::milliseconds interval)
    : session_(s),
      resource_(std::move(resource)),
      timer_(s.io(), s.options().quiet ? std::chrono::milliseconds{0} : interval, [this] {
        session_.say(fmt::format(
            "still waiting for {}: {}", resource_,
            waiting_reason(session_.answers().latest(), session_.client().config().nodes)));
      }) {}

void wait_notices::start() { timer_.start(); }

// Also holds against a notice whose time had come as the acquire completed
// (it said "still waiting" for ever after, and the tool never exited).
void wait_notices::stop() { timer_.stop(); }

}  // namespace redlock::cli
