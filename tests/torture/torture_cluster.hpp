// The system under test: N lock nodes (local redis-servers), a fault proxy in
// front of each node for each client group, and the store holding the
// protected registers. Applies faults, logs them to the fault log, and scans
// the nodes for keys without TTL or left behind (the check log).
#pragma once

#include "fault_schedule.hpp"
#include "history.hpp"

#include "support/admin_client.hpp"
#include "support/fault_proxy.hpp"
#include "support/redis_server.hpp"

#include <redlock/clock.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::torture {

struct cluster_options {
  std::size_t nodes = 5;
  test::persistence durability = test::persistence::none;
  /// Proxies per node: one per group of clients that must be faulted apart.
  std::size_t proxy_sets = 1;
  /// A killed node without persistence is restarted no earlier than this
  /// after its kill, whatever the schedule says.
  milliseconds min_downtime{2250};
};

class torture_cluster {
 public:
  /// Starts every server and proxy; opens the fault and check logs in `dir`.
  /// Must run on a long-lived thread (the servers die with the thread that
  /// started them). Throws std::runtime_error.
  torture_cluster(const cluster_options& options, const std::filesystem::path& dir);
  ~torture_cluster();
  torture_cluster(const torture_cluster&) = delete;
  torture_cluster& operator=(const torture_cluster&) = delete;

  std::size_t size() const { return nodes_.size(); }
  test::redis_server& node(std::size_t i) { return *nodes_.at(i); }
  test::fault_proxy& proxy(std::size_t node, std::size_t set = 0) {
    return *proxies_.at(set).at(node);
  }
  /// The ports clients of proxy set `set` connect to, in node order.
  std::vector<std::uint16_t> proxy_ports(std::size_t set = 0) const;
  std::uint16_t store_port() const { return store_->port(); }
  /// An admin connection straight to node i (not through a proxy).
  test::admin_client& admin(std::size_t i);

  /// Appends to the fault log, stamped now. node -1 for a marker (or a
  /// fault of the client processes). Thread-safe.
  void log_fault(std::string_view fault, int node, std::string detail = {});

  /// Applies a fault of the schedule to node f.node, through every proxy set
  /// (or only f.proxy_set). Ends the faults active on that node first,
  /// unless `alongside` (a plan's faults of different kinds on one node).
  void start_fault(const fault& f, bool alongside = false);
  /// Ends every fault active on `node`, if any (a killed node is restarted,
  /// waiting first for its minimum downtime if need be).
  void end_fault(std::size_t node);
  /// Ends every active fault, then writes the "heal-all" marker.
  void heal_all();

  /// Scans every node that is up and not paused for lock keys; logs a "scan"
  /// per node, a "key" per lock key (with its token) and a "no-ttl" per key
  /// without expiry. Returns the number of keys without expiry.
  std::size_t scan_ttls();
  /// Scans every node (all must be up): logs a "leftover" per lock key found.
  std::size_t scan_leftovers();
  /// Logs the final value of each resource's register.
  void record_registers(const std::vector<std::string>& resources);
  void flush_logs();

 private:
  struct lock_key {
    std::string key;
    long long pttl = 0;
    std::string token;
  };
  std::vector<lock_key> lock_keys(std::size_t node);
  void end_one(const fault& f);
  void log_check(std::string_view check, int node, std::string key, std::int64_t value,
                 std::string token = {});

  cluster_options options_;
  std::vector<std::unique_ptr<test::redis_server>> nodes_;
  std::vector<std::vector<std::unique_ptr<test::fault_proxy>>> proxies_;  // [set][node]
  std::unique_ptr<test::redis_server> store_;
  std::vector<std::unique_ptr<test::admin_client>> admins_;
  std::vector<std::vector<fault>> active_;  // by node
  std::vector<clock::time_point> killed_at_;
  std::mutex fault_log_mutex_;  // the client-pause thread logs too
  jsonl_file fault_log_;
  jsonl_file check_log_;
};

}  // namespace redlock::torture
