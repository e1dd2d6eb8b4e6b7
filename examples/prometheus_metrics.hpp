// A redlock::observer that keeps Prometheus metrics and renders them in the
// text exposition format (version 0.0.4).
#pragma once

#include <redlock/observer.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

class prometheus_metrics final : public redlock::observer {
 public:
  /// `nodes`: the endpoints ("host:port") in configuration order, so that
  /// every node has its series from the start.
  explicit prometheus_metrics(std::vector<std::string> nodes);

  void on_operation(const redlock::operation_report& report) override;
  void on_node_reply(const redlock::node_report& report) override;
  void on_retry(std::string_view resource, unsigned attempt, redlock::error_code cause) override;
  void on_wait(std::string_view resource) override;
  void on_lock_lost(std::string_view resource, redlock::error_code reason) override;
  void on_connection(std::size_t node, std::string_view endpoint, redlock::connection_event event,
                     redlock::error_code error) override;

  /// Every metric family, with # HELP and # TYPE lines. Thread-safe.
  std::string render() const;

  /// A short, stable label value for an outcome: "ok", an errc's name
  /// ("not_acquired", "quorum_unreachable", ...), "invalid_argument",
  /// "tls_verification_failed", "aborted" (operation_aborted), or "error"
  /// for the rest (network errors among them).
  static std::string result_label(redlock::error_code ec);

 private:
  /// Seconds, for durations of lock operations and requests.
  static constexpr std::array<double, 11> bucket_bounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                        0.05,   0.1,   0.25,   0.5,   1.0};
  struct histogram {
    std::array<std::uint64_t, bucket_bounds.size()> buckets{};  ///< Not cumulative.
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  /// Label set as rendered ({a="x",b="y"}) to value.
  using counters = std::map<std::string, std::uint64_t>;

  mutable std::mutex mutex_;
  std::vector<std::string> nodes_;
  counters operations_;
  std::map<std::string, histogram> operation_seconds_;
  counters node_requests_;
  std::map<std::string, histogram> node_request_seconds_;
  std::uint64_t retries_ = 0;
  std::uint64_t waits_ = 0;
  counters locks_lost_;
  std::vector<int> node_up_;
  counters connection_events_;
};
