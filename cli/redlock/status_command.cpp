#include "status_command.hpp"

#include "exit_codes.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace redlock::cli {
namespace {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += c;  // UTF-8 passes through; other bytes are the holder's own
    }
  }
  return out + "\"";
}

std::string_view state_name(node_status::holding state) {
  switch (state) {
    case node_status::holding::unknown:
      return "unknown";
    case node_status::holding::free:
      return "free";
    case node_status::holding::plain:
      return "held";
    case node_status::holding::reentrant:
      return "held-reentrant";
    case node_status::holding::other:
      return "other-key";
  }
  return "unknown";
}

std::string endpoint(const node_config& node) {
  if (node.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", node.host, node.port);
  return fmt::format("{}:{}", node.host, node.port);
}

}  // namespace

std::string status_json(const resource_status& status, const client_config& config,
                        std::size_t quorum) {
  std::string out = fmt::format(
      R"({{"resource":{},"key":{},"quorum":{},"answered":{},"held":{},"holder":{},"nodes":[)",
      json_string(status.resource), json_string(config.key_prefix + status.resource), quorum,
      status.answered, status.quorum_holder ? "true" : "false",
      status.quorum_holder ? json_string(*status.quorum_holder) : "null");
  for (std::size_t i = 0; i < status.nodes.size(); ++i) {
    const auto& node = status.nodes[i];
    if (i > 0) out += ',';
    out += fmt::format(R"({{"node":{},"answered":{})", json_string(endpoint(config.nodes[i])),
                       node.answered() ? "true" : "false");
    if (node.answered()) {
      out += fmt::format(R"(,"state":"{}","holder":{},"ttl_ms":{})", state_name(node.state),
                         node.state == node_status::holding::free ? "null"
                                                                  : json_string(node.holder),
                         node.ttl ? std::to_string(node.ttl->count()) : "null");
    } else {
      out += fmt::format(R"(,"error":{})", json_string(node.error.message()));
    }
    out += '}';
  }
  return out + "]}";
}

std::string status_table(const resource_status& status, const client_config& config,
                         std::size_t quorum) {
  std::string out = fmt::format("{:<24} {:<15} {:<34} {}\n", "NODE", "STATE", "HOLDER", "TTL");
  for (std::size_t i = 0; i < status.nodes.size(); ++i) {
    const auto& node = status.nodes[i];
    if (!node.answered()) {
      out += fmt::format("{:<24} {:<15} {}\n", endpoint(config.nodes[i]), "no-answer",
                         node.error.message());
      continue;
    }
    const bool free = node.state == node_status::holding::free;
    out += fmt::format("{:<24} {:<15} {:<34} {}\n", endpoint(config.nodes[i]),
                       state_name(node.state), free ? "-" : node.holder,
                       node.ttl ? fmt::format("{}ms", node.ttl->count())
                                : (free ? "-" : "no expiry"));
  }
  if (status.quorum_holder) {
    out += fmt::format("{}: held by {} on a quorum ({} of {} answered, {} needed)\n",
                       status.resource, *status.quorum_holder, status.answered,
                       status.nodes.size(), quorum);
  } else if (status.answered >= quorum) {
    out += fmt::format("{}: not held by any holder on a quorum ({} of {} answered, {} needed)\n",
                       status.resource, status.answered, status.nodes.size(), quorum);
  } else {
    out += fmt::format("{}: unknown: only {} of {} nodes answered ({} needed)\n", status.resource,
                       status.answered, status.nodes.size(), quorum);
  }
  return out;
}

int run_status(session& s, const status_arguments& arguments) {
  if (arguments.resource.empty()) throw usage_problem{"RESOURCE must not be empty"};
  const auto timeout = s.options().request_timeout.count() > 0 ? s.options().request_timeout
                                                               : std::chrono::milliseconds{500};
  error_code result;
  resource_status found;
  bool finished = false;
  s.client().async_status(arguments.resource, timeout, [&](error_code ec, resource_status st) {
    result = ec;
    found = std::move(st);
    finished = true;
  });
  s.run_until(finished);
  if (result && result != errc::quorum_unreachable) {
    s.error(fmt::format("could not read {}: {}", arguments.resource, result.message()));
    return exit_status_for(result);
  }
  const auto& config = s.client().config();
  const auto text = arguments.json ? status_json(found, config, s.client().quorum()) + "\n"
                                   : status_table(found, config, s.client().quorum());
  std::fputs(text.c_str(), stdout);
  return result ? unreachable : done;
}

}  // namespace redlock::cli
