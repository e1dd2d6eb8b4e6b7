#include "torture_cluster.hpp"

#include "protected_register.hpp"
#include "recorded_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;
using proxy_mode = test::fault_proxy::partition_mode;

// Lists the lock keys with their PTTL and token in one atomic step.
constexpr std::string_view scan_script =
    "local out = {}\n"
    "for _, k in ipairs(redis.call('keys', ARGV[1])) do\n"
    "  out[#out + 1] = k\n"
    "  out[#out + 1] = redis.call('pttl', k)\n"
    "  out[#out + 1] = redis.call('get', k)\n"
    "end\n"
    "return out\n";

// Another process may take a probed port before redis binds it: retry.
std::unique_ptr<test::redis_server> start_server(test::server_options options) {
  for (int attempt = 1;; ++attempt) {
    auto server = std::make_unique<test::redis_server>(test::find_free_port(), options);
    try {
      server->start();
      return server;
    } catch (const std::runtime_error&) {
      if (attempt == 3) throw;
    }
  }
}

}  // namespace

torture_cluster::torture_cluster(const cluster_options& options, const std::filesystem::path& dir)
    : options_(options),
      active_(options.nodes),
      killed_at_(options.nodes),
      fault_log_(fault_log_path(dir)),
      check_log_(check_log_path(dir)) {
  test::server_options node_options;
  node_options.durability = options.durability;
  for (std::size_t i = 0; i < options.nodes; ++i) nodes_.push_back(start_server(node_options));
  store_ = start_server({});
  proxies_.resize(options.proxy_sets);
  for (auto& set : proxies_) {
    for (const auto& node : nodes_)
      set.push_back(std::make_unique<test::fault_proxy>(node->port()));
  }
  admins_.resize(options.nodes);
}

torture_cluster::~torture_cluster() {
  // Proxies first: their connections to the nodes go before the nodes do.
  proxies_.clear();
  for (auto& node : nodes_) node->resume();
}

std::vector<std::uint16_t> torture_cluster::proxy_ports(std::size_t set) const {
  std::vector<std::uint16_t> ports;
  for (const auto& proxy : proxies_.at(set)) ports.push_back(proxy->port());
  return ports;
}

test::admin_client& torture_cluster::admin(std::size_t i) {
  auto& admin = admins_.at(i);
  if (!admin) {
    admin = std::make_unique<test::admin_client>(nodes_.at(i)->port());
    admin->set_timeout(2s);
  }
  return *admin;
}

void torture_cluster::log_fault(std::string_view fault, int node, std::string detail) {
  const std::lock_guard guard(fault_log_mutex_);
  fault_log_.write(to_json(fault_event{now_ns(), std::string(fault), node, std::move(detail)}));
}

void torture_cluster::log_check(std::string_view check, int node, std::string key,
                                std::int64_t value, std::string token) {
  check_log_.write(to_json(
      check_event{now_ns(), std::string(check), node, std::move(key), value, std::move(token)}));
}

void torture_cluster::start_fault(const fault& f, bool alongside) {
  if (!alongside) end_fault(f.node);
  auto& server = *nodes_.at(f.node);
  const auto each_proxy = [&](auto action) {
    for (std::size_t set = 0; set < proxies_.size(); ++set) {
      if (!f.proxy_set || *f.proxy_set == set) action(*proxies_[set].at(f.node));
    }
  };
  switch (f.kind) {
    case fault_kind::pause:
      server.pause();
      break;
    case fault_kind::kill:
      server.kill();
      killed_at_[f.node] = clock::now();
      if (f.restart_at_once) server.start();
      break;
    case fault_kind::partition_blackhole:
      each_proxy([](test::fault_proxy& p) { p.partition(proxy_mode::blackhole); });
      break;
    case fault_kind::partition_drop:
      each_proxy([](test::fault_proxy& p) { p.partition(proxy_mode::drop); });
      break;
    case fault_kind::request_delay:
      each_proxy([&](test::fault_proxy& p) { p.set_request_delay({f.delay, f.jitter}); });
      break;
    case fault_kind::reply_delay:
      each_proxy([&](test::fault_proxy& p) { p.set_reply_delay({f.delay, f.jitter}); });
      break;
    case fault_kind::hold_replies:
      each_proxy([](test::fault_proxy& p) { p.hold_replies(true); });
      break;
    case fault_kind::fast_clock:
      each_proxy([&](test::fault_proxy& p) { p.set_ttl_factor(f.ttl_factor); });
      break;
    case fault_kind::reset_connections:
      each_proxy([](test::fault_proxy& p) { p.reset_connections(); });
      break;
    case fault_kind::refuse_connections:
      each_proxy([](test::fault_proxy& p) {
        p.refuse_new_connections(true);
        p.reset_connections();
      });
      break;
  }
  active_.at(f.node).push_back(f);
  log_fault(name(f.kind), static_cast<int>(f.node), describe(f));
}

void torture_cluster::end_fault(std::size_t node) {
  // The latest first: undone in the reverse order of their starts.
  auto& active = active_.at(node);
  while (!active.empty()) {
    const fault f = active.back();
    active.pop_back();
    end_one(f);
  }
}

void torture_cluster::end_one(const fault& f) {
  const auto node = f.node;
  auto& server = *nodes_.at(node);
  const auto each_proxy = [&](auto action) {
    for (std::size_t set = 0; set < proxies_.size(); ++set) {
      if (!f.proxy_set || *f.proxy_set == set) action(*proxies_[set].at(node));
    }
  };
  std::string what;
  switch (f.kind) {
    case fault_kind::pause:
      server.resume();
      what = "resumed";
      break;
    case fault_kind::kill:
      if (f.restart_at_once) {
        what = "restarted at its kill";
        break;
      }
      // The rule the schedule relies on, kept even if the schedule ran late.
      std::this_thread::sleep_until(killed_at_[node] + options_.min_downtime);
      server.start();
      what = fmt::format(
          "restarted {} ms after its kill",
          std::chrono::duration_cast<milliseconds>(clock::now() - killed_at_[node]).count());
      break;
    case fault_kind::partition_blackhole:
    case fault_kind::partition_drop:
      each_proxy([](test::fault_proxy& p) { p.partition(proxy_mode::none); });
      what = "partition healed";
      break;
    case fault_kind::request_delay:
      each_proxy([](test::fault_proxy& p) { p.set_request_delay({}); });
      what = "no request delay";
      break;
    case fault_kind::reply_delay:
      each_proxy([](test::fault_proxy& p) { p.set_reply_delay({}); });
      what = "no reply delay";
      break;
    case fault_kind::hold_replies:
      each_proxy([](test::fault_proxy& p) { p.hold_replies(false); });
      what = "replies released";
      break;
    case fault_kind::fast_clock:
      each_proxy([](test::fault_proxy& p) { p.set_ttl_factor(1.0); });
      what = "clock back to rate 1";
      break;
    case fault_kind::reset_connections:
      what = "reconnected";
      break;
    case fault_kind::refuse_connections:
      each_proxy([](test::fault_proxy& p) { p.refuse_new_connections(false); });
      what = "accepting connections";
      break;
  }
  log_fault("heal", static_cast<int>(node), fmt::format("{}: {}", name(f.kind), what));
}

void torture_cluster::heal_all() {
  // Kills last: their restart may have to wait out the downtime, and the
  // other faults should not last for that wait.
  const auto is_kill = [](const fault& f) { return f.kind == fault_kind::kill; };
  for (std::size_t i = 0; i < active_.size(); ++i) {
    if (std::none_of(active_[i].begin(), active_[i].end(), is_kill)) end_fault(i);
  }
  for (std::size_t i = 0; i < active_.size(); ++i) end_fault(i);
  log_fault("heal-all", -1);
}

std::vector<torture_cluster::lock_key> torture_cluster::lock_keys(std::size_t node) {
  const auto reply =
      admin(node).command({"EVAL", std::string(scan_script), "0", std::string(key_prefix) + "*"});
  if (reply.type != test::admin_client::reply::kind::array) {
    throw std::runtime_error(fmt::format("scan of node {}: {}", node, reply.text));
  }
  std::vector<lock_key> keys;
  for (std::size_t i = 0; i + 2 < reply.elements.size(); i += 3) {
    keys.push_back(
        {reply.elements[i].text, reply.elements[i + 1].integer, reply.elements[i + 2].text});
  }
  return keys;
}

std::size_t torture_cluster::scan_ttls() {
  std::size_t without_ttl = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i]->paused() || !nodes_[i]->running()) continue;
    const auto keys = lock_keys(i);
    log_check("scan", static_cast<int>(i), {}, static_cast<std::int64_t>(keys.size()));
    for (const auto& k : keys) log_check("key", static_cast<int>(i), k.key, k.pttl, k.token);
    for (const auto& k : keys) {
      if (k.pttl == -1) {
        log_check("no-ttl", static_cast<int>(i), k.key, k.pttl);
        ++without_ttl;
      }
    }
  }
  return without_ttl;
}

std::size_t torture_cluster::scan_leftovers() {
  std::size_t found = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (const auto& k : lock_keys(i)) {
      log_check("leftover", static_cast<int>(i), k.key, k.pttl);
      ++found;
    }
  }
  return found;
}

void torture_cluster::record_registers(const std::vector<std::string>& resources) {
  protected_register store(store_->port());
  for (const auto& res : resources) log_check("register", -1, res, store.value(res));
}

void torture_cluster::flush_logs() {
  fault_log_.flush();
  check_log_.flush();
}

}  // namespace redlock::torture
