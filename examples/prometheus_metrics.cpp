#include "prometheus_metrics.hpp"

#include <redlock/error.hpp>

#include <boost/asio/error.hpp>

#include <fmt/format.h>

namespace {

/// A label value escaped per the text format: backslash, quote, newline.
std::string escaped(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

/// {name="value",...}
std::string labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
  std::string out = "{";
  for (const auto& [name, value] : pairs) {
    if (out.size() > 1) out += ',';
    out += fmt::format("{}=\"{}\"", name, escaped(value));
  }
  return out + "}";
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

prometheus_metrics::prometheus_metrics(std::vector<std::string> nodes)
    : nodes_(std::move(nodes)), node_up_(nodes_.size(), 0) {}

void prometheus_metrics::histogram::observe(double seconds) {
  for (std::size_t i = 0; i < bucket_bounds.size(); ++i) {
    if (seconds <= bucket_bounds[i]) {
      ++buckets[i];
      break;
    }
  }
  ++count;
  sum += seconds;
}

std::string prometheus_metrics::result_label(redlock::error_code ec) {
  using redlock::errc;
  if (!ec) return "ok";
  if (ec == boost::asio::error::operation_aborted) return "aborted";
  if (ec.category() == redlock::tls_verify_category()) return "tls_verification_failed";
  if (ec.category() != redlock::error_category()) return "error";  // network errors and others
  if (redlock::is_invalid_argument(ec)) return "invalid_argument";
  // The enumerator's name; a code newer than this library would be "unknown".
  const auto name = redlock::to_string(static_cast<errc>(ec.value()));
  return name == "unknown" ? "error" : std::string(name);
}

void prometheus_metrics::on_operation(const redlock::operation_report& report) {
  const std::lock_guard guard(mutex_);
  const auto operation = redlock::to_string(report.kind);
  ++operations_[labels({{"operation", operation}, {"result", result_label(report.result)}})];
  operation_seconds_[labels({{"operation", operation}})].observe(
      std::chrono::duration<double>(report.latency).count());
}

void prometheus_metrics::on_node_reply(const redlock::node_report& report) {
  using status = redlock::node_outcome::status;
  const std::lock_guard guard(mutex_);
  const char* outcome = "failed";
  switch (report.outcome.state) {
    case status::acquired:  // granted, or deleted for a release
      outcome = "granted";
      break;
    case status::held_elsewhere:  // another owner's, or not ours
      outcome = "refused";
      break;
    case status::pending:  // not reported by the library; kept apart if it ever is
      outcome = "pending";
      break;
    case status::failed:
      break;
  }
  ++node_requests_[labels({{"node", report.endpoint},
                           {"operation", redlock::to_string(report.kind)},
                           {"outcome", outcome}})];
  node_request_seconds_[labels({{"node", report.endpoint}})].observe(
      std::chrono::duration<double>(report.latency).count());
}

void prometheus_metrics::on_retry(std::string_view, unsigned, redlock::error_code) {
  const std::lock_guard guard(mutex_);
  ++retries_;
}

void prometheus_metrics::on_wait(std::string_view) {
  const std::lock_guard guard(mutex_);
  ++waits_;
}

void prometheus_metrics::on_lock_lost(std::string_view, redlock::error_code reason) {
  const std::lock_guard guard(mutex_);
  ++locks_lost_[labels({{"reason", result_label(reason)}})];
}

void prometheus_metrics::on_connection(std::size_t node, std::string_view endpoint,
                                       redlock::connection_event event, redlock::error_code) {
  const std::lock_guard guard(mutex_);
  if (node < node_up_.size()) node_up_[node] = event == redlock::connection_event::connected;
  ++connection_events_[labels({{"node", endpoint}, {"event", redlock::to_string(event)}})];
}

std::string prometheus_metrics::render() const {
  const std::lock_guard guard(mutex_);
  std::string out;
  const auto counter_lines = [&](std::string_view name, const counters& values) {
    for (const auto& [label_set, value] : values)
      out += fmt::format("{}{} {}\n", name, label_set, value);
  };
  const auto histogram_lines = [&](std::string_view name,
                                   const std::map<std::string, histogram>& values) {
    for (const auto& [label_set, h] : values) {
      // The label set without its closing brace, to append "le".
      const auto open = label_set.substr(0, label_set.size() - 1);
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i < bucket_bounds.size(); ++i) {
        cumulative += h.buckets[i];
        out +=
            fmt::format("{}_bucket{},le=\"{}\"}} {}\n", name, open, bucket_bounds[i], cumulative);
      }
      out += fmt::format("{}_bucket{},le=\"+Inf\"}} {}\n", name, open, h.count);
      out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, label_set, h.sum, name, label_set,
                         h.count);
    }
  };

  family(out, "redlock_operations_total", "counter", "Lock operations completed, by result.");
  counter_lines("redlock_operations_total", operations_);
  family(out, "redlock_operation_duration_seconds", "histogram",
         "Time from an operation's start to its completion.");
  histogram_lines("redlock_operation_duration_seconds", operation_seconds_);
  family(out, "redlock_node_requests_total", "counter",
         "Requests answered or failed per node: granted, refused or failed.");
  counter_lines("redlock_node_requests_total", node_requests_);
  family(out, "redlock_node_request_duration_seconds", "histogram",
         "Time from a request's send to its node's answer.");
  histogram_lines("redlock_node_request_duration_seconds", node_request_seconds_);
  family(out, "redlock_acquire_retries_total", "counter", "Acquire attempts after a failed one.");
  out += fmt::format("redlock_acquire_retries_total {}\n", retries_);
  family(out, "redlock_acquire_waits_total", "counter",
         "Times an acquire waited for a release or its retry delay.");
  out += fmt::format("redlock_acquire_waits_total {}\n", waits_);
  family(out, "redlock_locks_lost_total", "counter", "Lost-lock signals of kept locks, by reason.");
  counter_lines("redlock_locks_lost_total", locks_lost_);
  family(out, "redlock_node_up", "gauge", "1 while the node's connection can vote, else 0.");
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    out += fmt::format("redlock_node_up{} {}\n", labels({{"node", nodes_[i]}}), node_up_[i]);
  }
  family(out, "redlock_node_connection_events_total", "counter",
         "Connection changes per node: connected, disconnected, failed.");
  counter_lines("redlock_node_connection_events_total", connection_events_);
  return out;
}
