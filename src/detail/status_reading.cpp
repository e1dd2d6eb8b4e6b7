#include "detail/status_reading.hpp"

#include <charconv>
#include <map>
#include <string_view>
#include <utility>

namespace redlock::detail {
namespace {

node_status failed(error_code ec) {
  node_status out;
  out.error = ec;
  return out;
}

}  // namespace

node_status read_node_status(error_code ec, const reply& answer) {
  if (ec) return failed(ec);
  if (answer.is_error()) return failed(classify_error_reply(answer.text));
  if (answer.type != reply::kind::string) return failed(errc::protocol_error);
  node_status out;
  const auto text = answer.text;
  if (text == "none") {
    out.state = node_status::holding::free;
    return out;
  }
  // "<type> <pttl> <holder>"; the holder may itself contain spaces.
  const auto first = text.find(' ');
  const auto second = first == std::string_view::npos ? first : text.find(' ', first + 1);
  if (second == std::string_view::npos) return failed(errc::protocol_error);
  const auto kind = text.substr(0, first);
  const auto pttl_text = text.substr(first + 1, second - first - 1);
  long long pttl = 0;
  const auto parsed = std::from_chars(pttl_text.data(), pttl_text.data() + pttl_text.size(), pttl);
  if (parsed.ec != std::errc{} || parsed.ptr != pttl_text.data() + pttl_text.size()) {
    return failed(errc::protocol_error);
  }
  out.holder = std::string(text.substr(second + 1));
  if (pttl >= 0) out.ttl = std::chrono::milliseconds(pttl);
  if (kind == "string") {
    out.state = node_status::holding::plain;
  } else if (kind == "hash" && !out.holder.empty()) {
    out.state = node_status::holding::reentrant;
  } else {
    out.state = node_status::holding::other;
  }
  return out;
}

void summarize(resource_status& status, std::size_t quorum) {
  status.answered = 0;
  status.free = 0;
  status.quorum_holder.reset();
  // A reentrant owner id and a plain token that happen to be equal are
  // different holders.
  std::map<std::pair<node_status::holding, std::string_view>, std::size_t> votes;
  for (const auto& node : status.nodes) {
    if (!node.answered()) continue;
    ++status.answered;
    if (node.state == node_status::holding::free) {
      ++status.free;
    } else if (node.state == node_status::holding::plain ||
               node.state == node_status::holding::reentrant) {
      if (++votes[{node.state, node.holder}] == quorum) status.quorum_holder = node.holder;
    }
  }
}

}  // namespace redlock::detail
