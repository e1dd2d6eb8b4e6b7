#include "fault_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <utility>

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;

// An instantaneous fault still counts as faulting its node for this long:
// the clients need a moment to reconnect or the node to come back.
constexpr milliseconds nominal_duration{500};

class generator {
 public:
  explicit generator(const schedule_options& options) : options_(options), rng_(options.seed) {}

  std::vector<fault> run() {
    std::vector<fault> faults;
    std::vector<milliseconds> busy_until(options_.nodes, 0ms);
    milliseconds t{0};
    for (;;) {
      t += between(options_.min_gap, options_.max_gap);
      if (t >= options_.length) break;
      std::vector<std::size_t> free;
      for (std::size_t n = 0; n < options_.nodes; ++n) {
        if (busy_until[n] <= t) free.push_back(n);
      }
      if (options_.nodes - free.size() >= options_.max_faulted || free.empty()) continue;
      const std::size_t node = free[pick_index(free.size())];
      fault f = make(pick_kind(), node, t);
      busy_until[node] = f.end();
      faults.push_back(f);
    }
    return faults;
  }

 private:
  milliseconds between(milliseconds low, milliseconds high) {
    return milliseconds(std::uniform_int_distribution<long long>(low.count(), high.count())(rng_));
  }

  std::size_t pick_index(std::size_t size) {
    return std::uniform_int_distribution<std::size_t>(0, size - 1)(rng_);
  }

  fault_kind pick_kind() {
    // Weights, in the order of all_fault_kinds.
    static constexpr int weights[] = {3, 2, 2, 2, 2, 2, 2, 2, 1, 1};
    static_assert(std::size(weights) == std::size(all_fault_kinds));
    std::discrete_distribution<std::size_t> pick(std::begin(weights), std::end(weights));
    return all_fault_kinds[pick(rng_)];
  }

  fault make(fault_kind kind, std::size_t node, milliseconds start) {
    fault f;
    f.kind = kind;
    f.node = node;
    f.start = start;
    switch (kind) {
      case fault_kind::pause:
        f.duration = between(200ms, 2500ms);
        break;
      case fault_kind::kill:
        f.restart_at_once = options_.durable_nodes;
        f.duration =
            f.restart_at_once ? nominal_duration : min_downtime(options_) + between(0ms, 1000ms);
        break;
      case fault_kind::partition_blackhole:
      case fault_kind::partition_drop:
        f.duration = between(200ms, 3000ms);
        break;
      case fault_kind::request_delay:
      case fault_kind::reply_delay:
        f.delay = between(1ms, 150ms);
        f.jitter = between(0ms, 50ms);
        f.duration = between(500ms, 3000ms);
        break;
      case fault_kind::hold_replies:
        f.duration = between(100ms, 2000ms);
        break;
      case fault_kind::fast_clock:
        f.ttl_factor =
            std::uniform_real_distribution<double>(1 - options_.drift_factor / 2, 1)(rng_);
        f.duration = between(1000ms, 5000ms);
        break;
      case fault_kind::reset_connections:
        f.duration = nominal_duration;
        break;
      case fault_kind::refuse_connections:
        f.duration = between(200ms, 2000ms);
        break;
    }
    return f;
  }

  const schedule_options& options_;
  std::mt19937_64 rng_;
};

}  // namespace

std::string_view name(fault_kind kind) {
  switch (kind) {
    case fault_kind::pause:
      return "pause";
    case fault_kind::kill:
      return "kill";
    case fault_kind::partition_blackhole:
      return "partition-blackhole";
    case fault_kind::partition_drop:
      return "partition-drop";
    case fault_kind::request_delay:
      return "request-delay";
    case fault_kind::reply_delay:
      return "reply-delay";
    case fault_kind::hold_replies:
      return "hold-replies";
    case fault_kind::fast_clock:
      return "fast-clock";
    case fault_kind::reset_connections:
      return "reset-connections";
    case fault_kind::refuse_connections:
      return "refuse-connections";
  }
  return "?";
}

namespace {

// What the fault does, without whom it concerns.
std::string describe_effect(const fault& f) {
  switch (f.kind) {
    case fault_kind::request_delay:
    case fault_kind::reply_delay:
      return fmt::format("{} {}+-{} ms for {} ms", name(f.kind), f.delay.count(), f.jitter.count(),
                         f.duration.count());
    case fault_kind::fast_clock:
      return fmt::format("{} x{:.4f} for {} ms", name(f.kind), f.ttl_factor, f.duration.count());
    case fault_kind::kill:
      return f.restart_at_once ? std::string("kill, restart at once")
                               : fmt::format("kill, restart after {} ms", f.duration.count());
    case fault_kind::reset_connections:
      return std::string(name(f.kind));
    default:
      return fmt::format("{} for {} ms", name(f.kind), f.duration.count());
  }
}

}  // namespace

std::string describe(const fault& f) {
  auto text = describe_effect(f);
  if (f.proxy_set) text += fmt::format(", for the clients of proxy set {}", *f.proxy_set);
  return text;
}

milliseconds min_downtime(const schedule_options& options) { return options.max_ttl + 250ms; }

std::vector<fault> make_schedule(const schedule_options& options) {
  return generator(options).run();
}

std::size_t max_concurrently_faulted(const std::vector<fault>& faults) {
  // +1 at each start, -1 at each end; an end sorts before a start at the same time.
  std::vector<std::pair<milliseconds, int>> steps;
  for (const auto& f : faults) {
    steps.emplace_back(f.start, 1);
    steps.emplace_back(f.end(), -1);
  }
  std::sort(steps.begin(), steps.end());
  std::size_t now = 0;
  std::size_t most = 0;
  for (const auto& [at, delta] : steps) {
    now = delta > 0 ? now + 1 : now - 1;
    most = std::max(most, now);
  }
  return most;
}

}  // namespace redlock::torture
