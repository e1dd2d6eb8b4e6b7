#include "detail/admission.hpp"
#include "detail/commands.hpp"
#include "detail/server_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace redlock::detail {
namespace {

/// INFO is not allowed to this user (ACL) or not there at all (renamed away):
/// the node can still serve locks, unchecked.
bool info_unavailable(std::string_view error) {
  return error.starts_with("NOPERM") || error.starts_with("ERR unknown command");
}

}  // namespace

std::vector<std::string> setup_commands(const node_config& node, bool subscriber) {
  std::vector<std::string> commands;
  if (!node.password.empty()) commands.push_back(auth_command(node.username, node.password));
  if (node.database != 0) commands.push_back(select_command(node.database));
  if (subscriber) commands.push_back(format_command({"PING"}));
  return commands;
}

admission::admission(bool warn_without_aof, std::shared_ptr<server_registry> servers,
                     std::size_t node_index, std::string endpoint)
    : warn_without_aof_(warn_without_aof),
      servers_(std::move(servers)),
      node_index_(node_index),
      endpoint_(std::move(endpoint)) {}

admission_verdict admission::judge(const reply& info) {
  admission_verdict verdict;
  if (info.is_error() && info_unavailable(info.text)) {
    if (!std::exchange(warned_unchecked_, true)) {
      verdict.unchecked_warning = fmt::format(
          "cannot check that it is an independent master (INFO answered: {})", info.text);
    }
    passed_ = true;
    return verdict;
  }
  std::vector<topology_risk> risks;
  if (info.is_error()) {
    // BUSY, LOADING, max clients, NOAUTH...: not a node to vote yet.
    verdict.refusal = classify_error_reply(info.text);
    verdict.reason = fmt::format("INFO failed: {}", info.text);
  } else if (info.type != reply::kind::string) {
    verdict.refusal = errc::protocol_error;
    verdict.reason = "INFO answered with something other than text";
  } else {
    const auto fields = parse_info(info.text);
    auto checked = check_topology(fields, warn_without_aof_);
    verdict.refusal = checked.refusal;
    verdict.reason = std::move(checked.reason);
    risks = std::move(checked.risks);
    if (!verdict.refusal && servers_) {
      if (auto other = servers_->claim(node_index_, fields.run_id, endpoint_)) {
        verdict.refusal = errc::same_server;
        verdict.reason = fmt::format(
            "it is the same Redis server as node {}, listed under another name. Its votes would "
            "count twice, so one server's word could make a majority (docs/safety.md, "
            "\"Topology checks\")",
            *other);
      }
    }
  }
  if (verdict.refusal) return verdict;
  for (auto& risk : risks) {
    // Once per risk and node: a risk that appears later is news.
    if (std::find(warned_risks_.begin(), warned_risks_.end(), risk.explanation) !=
        warned_risks_.end()) {
      continue;
    }
    warned_risks_.push_back(risk.explanation);
    verdict.new_risks.push_back(std::move(risk));
  }
  passed_ = true;
  return verdict;
}

}  // namespace redlock::detail
