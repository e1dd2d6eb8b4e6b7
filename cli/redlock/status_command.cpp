#include "status_command.hpp"

#include "exit_codes.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace redlock::cli {
namespace {

/// Length of the valid UTF-8 sequence starting at text[i], 0 if none.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned min = 0;
  unsigned code = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, min = 0x80, code = lead & 0x1Fu;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min = 0x800, code = lead & 0x0Fu;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, code = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are invalid.
  if (code < min || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return 0;
  return length;
}

/// A JSON string: a foreign holder may be any bytes; invalid UTF-8 becomes
/// U+FFFD, so the output always parses.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += text[i++];
    } else if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\u{:04x}", byte);
      ++i;
    } else if (const auto length = utf8_length(text, i); length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out + "\"";
}

/// A holder as a table cell: printable ASCII as is, any other byte as \xNN,
/// so a holder cannot forge lines or send terminal escapes.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F && byte != '\\') {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
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
      out +=
          fmt::format(R"(,"state":"{}","holder":{},"ttl_ms":{})", state_name(node.state),
                      node.state == node_status::holding::free ? "null" : json_string(node.holder),
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
    out +=
        fmt::format("{:<24} {:<15} {:<34} {}\n", endpoint(config.nodes[i]), state_name(node.state),
                    free ? "-" : printable(node.holder),
                    node.ttl ? fmt::format("{}ms", node.ttl->count()) : (free ? "-" : "no expiry"));
  }
  if (status.quorum_holder) {
    out += fmt::format("{}: held by {} on a quorum ({} of {} answered, {} needed)\n",
                       printable(status.resource), printable(*status.quorum_holder),
                       status.answered, status.nodes.size(), quorum);
  } else if (status.answered >= quorum) {
    out += fmt::format("{}: not held by any holder on a quorum ({} of {} answered, {} needed)\n",
                       printable(status.resource), status.answered, status.nodes.size(), quorum);
  } else {
    out += fmt::format("{}: unknown: only {} of {} nodes answered ({} needed)\n",
                       printable(status.resource), status.answered, status.nodes.size(), quorum);
  }
  return out;
}

int run_status(session& s, const status_arguments& arguments) {
  if (arguments.resource.empty()) throw usage_problem{"RESOURCE must not be empty"};
  const auto [result, found] = s.complete<error_code, resource_status>([&](auto handler) {
    s.client().async_status(arguments.resource, s.status_timeout(), std::move(handler));
  });
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
