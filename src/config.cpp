#include <redlock/config.hpp>
#include "detail/quorum_fsm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

namespace redlock {
namespace {

/// `text` without the blanks around it.
std::string_view trimmed(std::string_view text) {
  constexpr std::string_view blanks = " \t\r\n";
  const auto first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

}  // namespace

node_config parse_node(std::string_view text) {
  text = trimmed(text);
  const auto full = text;
  const auto bad = [&] {
    return config_error(errc::invalid_node,
                        fmt::format("redlock: invalid node '{}': expected host:port", full));
  };
  bool tls = false;
  if (text.starts_with("rediss://")) {
    tls = true;
    text.remove_prefix(9);
  } else if (text.starts_with("redis://")) {
    text.remove_prefix(8);
  }
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) throw bad();
  auto host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') throw bad();
    host = host.substr(1, host.size() - 2);
  }
  const auto digits = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc{} || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    throw bad();
  }
  node_config node;
  node.host = std::string(host);
  node.port = static_cast<std::uint16_t>(port);
  node.tls.enabled = tls;
  return node;
}

tls_config effective_tls(const client_config& config, const node_config& node) {
  const auto& defaults = config.tls;
  tls_config tls = node.tls;
  tls.enabled = node.tls.enabled || defaults.enabled;
  const auto fill = [](std::string& field, const std::string& fallback) {
    if (field.empty()) field = fallback;
  };
  fill(tls.ca_file, defaults.ca_file);
  fill(tls.ca_dir, defaults.ca_dir);
  fill(tls.cert_file, defaults.cert_file);
  fill(tls.key_file, defaults.key_file);
  fill(tls.server_name, defaults.server_name);
  tls.verify = node.tls.verify && defaults.verify;
  return tls;
}

std::vector<node_config> parse_nodes(std::string_view text) {
  std::vector<node_config> nodes;
  while (true) {
    const auto comma = text.find(',');
    nodes.push_back(parse_node(text.substr(0, comma)));
    if (comma == std::string_view::npos) return nodes;
    text.remove_prefix(comma + 1);
  }
}

std::vector<node_config> nodes_from_env(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr || trimmed(value).empty()) return {};
  try {
    return parse_nodes(value);
  } catch (const config_error& e) {
    std::string_view what = e.what();
    constexpr std::string_view prefix = "redlock: ";
    if (what.starts_with(prefix)) what.remove_prefix(prefix.size());
    throw config_error(errc::invalid_node, fmt::format("redlock: {}: {}", variable, what));
  }
}

namespace {

/// The node list: some nodes, not too many, each complete and listed once.
void check_nodes(const client_config& config) {
  if (config.nodes.empty()) {
    throw config_error(errc::no_nodes, "redlock: invalid configuration: no Redis nodes configured");
  }
  if (config.nodes.size() > max_nodes) {
    throw config_error(
        errc::too_many_nodes,
        fmt::format("redlock: invalid configuration: {} nodes configured, at most {} "
                    "are supported (Redlock needs a few independent masters: 5 is "
                    "the usual choice)",
                    config.nodes.size(), max_nodes));
  }
  std::set<std::pair<std::string, std::uint16_t>> seen;
  for (std::size_t i = 0; i < config.nodes.size(); ++i) {
    const auto& node = config.nodes[i];
    if (node.host.empty() || node.port == 0 || node.database < 0) {
      throw config_error(
          errc::invalid_node,
          fmt::format("redlock: invalid configuration: node {} ('{}:{}', database {}) "
                      "needs a host, a non-zero port and a database >= 0",
                      i, node.host, node.port, node.database));
    }
    const auto tls = effective_tls(config, node);
    if (tls.enabled && tls.cert_file.empty() != tls.key_file.empty()) {
      throw config_error(
          errc::invalid_tls,
          fmt::format("redlock: invalid configuration: node {}:{}: a TLS client certificate "
                      "needs both cert_file and key_file",
                      node.host, node.port));
    }
    if (!seen.emplace(node.host, node.port).second) {
      throw config_error(errc::duplicate_node,
                         fmt::format("redlock: invalid configuration: node {}:{} is listed twice; "
                                     "Redlock needs N distinct, independent masters",
                                     node.host, node.port));
    }
  }
}

/// The drift factor and the connection's timeouts and reconnect delays.
void check_timing(const client_config& config) {
  if (!(config.drift_factor >= 0.0 && config.drift_factor < 1.0)) {
    throw config_error(
        errc::invalid_drift_factor,
        fmt::format("redlock: invalid configuration: drift_factor {} is not in [0, 1)",
                    config.drift_factor));
  }
  const auto& reconnect = config.reconnect;
  const auto positive = [](milliseconds d) { return d.count() > 0 && d <= max_duration; };
  if (!positive(reconnect.initial_delay) || !positive(reconnect.max_delay) ||
      reconnect.max_delay < reconnect.initial_delay ||
      !(reconnect.jitter >= 0.0 && reconnect.jitter <= 1.0) || !positive(config.connect_timeout) ||
      !positive(config.stall_timeout)) {
    throw config_error(
        errc::invalid_retry_policy,
        "redlock: invalid configuration: connect_timeout, stall_timeout and reconnect "
        "delays must be positive and at most 365 days, initial_delay <= max_delay, jitter in "
        "[0, 1]");
  }
}

}  // namespace

std::vector<std::string> validate(const client_config& config) {
  check_nodes(config);
  check_timing(config);

  std::vector<std::string> warnings;
  const auto n = config.nodes.size();
  if (n < 3) {
    warnings.push_back(fmt::format(
        "{} node(s) configured: with fewer than 3 the lock cannot survive the loss of a "
        "node",
        n));
  } else if (n % 2 == 0) {
    warnings.push_back(
        fmt::format("{} nodes configured: an even N tolerates no more failures than N-1 ({} of {} "
                    "must agree)",
                    n, detail::quorum_of(n), n));
  }
  return warnings;
}

milliseconds effective_request_timeout(const lock_options& options) noexcept {
  if (options.request_timeout.count() > 0) return options.request_timeout;
  return std::clamp(options.ttl / 20, milliseconds{1}, milliseconds{500});
}

lock_options waiting_up_to(lock_options options, milliseconds wait) {
  if (wait <= milliseconds::zero()) {
    // The caller's policy stays, so that a bad one is still refused.
    options.retry.max_attempts = 1;
    options.wait_timeout = milliseconds::zero();
    return options;
  }
  // Without a delay of its own (try_once), it would spin.
  if (options.retry.base_delay <= milliseconds::zero()) options.retry = retry_policy{};
  options.retry.max_attempts = 0;  // the wait is the limit
  options.retry.wake_on_release = true;
  options.wait_timeout = wait == wait_forever ? milliseconds::zero() : wait;
  return options;
}

unsigned effective_max_attempts(const lock_options& options) noexcept {
  if (options.retry.max_attempts) return *options.retry.max_attempts;
  return options.wait_timeout.count() > 0 ? 0U : retry_policy::default_max_attempts;
}

error_code validate(std::string_view resource, const lock_options& options, double drift_factor) {
  if (resource.empty()) return errc::empty_resource;
  if (options.ttl.count() <= 0 || options.ttl > max_duration) return errc::invalid_ttl;
  if (options.ttl <= detail::drift_allowance(options.ttl, drift_factor))
    return errc::ttl_within_drift;
  // With both at most max_duration, ttl + lock_delay (the keys' PX) fits.
  static_assert(2 * max_duration.count() < std::numeric_limits<milliseconds::rep>::max() / 1000000);
  if (options.lock_delay.count() < 0 || options.lock_delay > max_duration) {
    return errc::invalid_lock_delay;
  }
  if (options.request_timeout.count() < 0 || options.request_timeout >= options.ttl) {
    return errc::invalid_request_timeout;
  }
  const auto& retry = options.retry;
  const auto in_range = [](milliseconds d) { return d.count() >= 0 && d <= max_duration; };
  if (!in_range(retry.base_delay) || !in_range(retry.max_delay) ||
      !in_range(options.wait_timeout) || !in_range(options.unreachable_timeout) ||
      (retry.mode == retry_policy::backoff::exponential && retry.base_delay > retry.max_delay) ||
      !(retry.jitter >= 0.0 && retry.jitter <= 1.0)) {
    return errc::invalid_retry_policy;
  }
  if (options.min_validity.count() < 0 || options.min_validity >= options.ttl) {
    return errc::invalid_min_validity;
  }
  return {};
}

error_code validate(const std::vector<std::string>& resources, const lock_options& options,
                    double drift_factor) {
  if (resources.empty()) return errc::no_resources;
  if (resources.size() > max_resources) return errc::too_many_resources;
  for (const auto& resource : resources) {
    if (auto invalid = validate(resource, options, drift_factor)) return invalid;
  }
  if (resources.size() == 1) return {};  // every acquire passes here: no allocation
  std::vector<std::string_view> sorted(resources.begin(), resources.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return errc::duplicate_resource;
  }
  return {};
}

error_code validate(const keep_options& options, milliseconds lock_ttl, double drift_factor) {
  const auto ttl = options.ttl.count() == 0 ? lock_ttl : options.ttl;
  if (!(options.extend_at > 0.0 && options.extend_at <= 0.9) || ttl.count() <= 0 ||
      ttl <= detail::drift_allowance(ttl, drift_factor) || options.lost_margin.count() < 0 ||
      options.max_hold.count() < 0) {
    return errc::invalid_keep_options;
  }
  // The margin must leave an extension room within the lock's own validity
  // too, not only within an extension's (keep_options::ttl may be longer).
  const auto shorter =
      lock_ttl > detail::drift_allowance(lock_ttl, drift_factor) ? std::min(ttl, lock_ttl) : ttl;
  const auto validity = shorter - detail::drift_allowance(shorter, drift_factor);
  if (std::chrono::duration<double>(options.lost_margin) >= options.extend_at * validity) {
    return errc::invalid_keep_options;
  }
  return {};
}

}  // namespace redlock
