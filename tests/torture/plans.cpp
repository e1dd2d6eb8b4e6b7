#include "plans.hpp"

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;

fault standing(fault_kind kind, std::size_t node) {
  fault f;
  f.kind = kind;
  f.node = node;
  return f;
}

// drop_drift: a lock valid until start + ttl, no drift allowance. Three
// nodes (a majority) expire keys 0.7% early, within the default allowance
// of 1% + 2 ms, and every holder keeps its lock to the very end of the
// validity it was told while others poll for it: a correct client's
// validity ends before those keys expire; the broken one's ends after, and
// a poller gets the majority in between.
plan_info fast_clock_hold() {
  plan_info plan;
  plan.name = "fast-clock-hold";
  plan.description =
      "nodes 0-2 expire keys 0.7% early (within the drift allowance); holders keep their lock "
      "to the end of its validity while others poll for it";
  plan.clients = 3;
  plan.resources = 2;
  plan.duration = 20s;
  auto& w = plan.workload;
  w.min_ttl = 1500ms;
  w.max_ttl = 2500ms;
  w.try_once_share = 0;
  w.retry_delay = 20ms;
  w.min_wait = 1000ms;
  w.max_wait = 3000ms;
  w.extend_share = 0;
  w.hold_to_deadline = true;
  for (std::size_t n = 0; n < 3; ++n) {
    auto f = standing(fault_kind::fast_clock, n);
    f.ttl_factor = 0.993;
    plan.faults.push_back(f);
  }
  return plan;
}

// count_late_votes: for the clients of proxy set 0 (processes 0 and 2),
// nodes 3 and 4 answer after the request timeout, so those clients' attempts
// time out there and the late replies arrive during the acquire's next
// attempt (request timeout 15 ms, retry after 5 ms, replies 25-40 ms late).
// Process 1 sees every node answer at once, so it takes locks with nodes 3
// and 4 in its majority. A correct client never counts a late reply; the
// broken one counts a grant its earlier attempt got (and undid) on 3 and 4
// while process 1 now holds them, and claims a majority it does not hold.
plan_info late_replies() {
  plan_info plan;
  plan.name = "late-replies";
  plan.description =
      "for processes 0 and 2, replies of nodes 3 and 4 come after the request timeout, during the "
      "next attempt; process 1 sees no fault; short TTLs, fast retries, one resource";
  plan.clients = 3;
  plan.resources = 1;
  plan.duration = 20s;
  plan.proxy_sets = 2;
  auto& w = plan.workload;
  w.min_ttl = 300ms;
  w.max_ttl = 800ms;
  w.request_timeout = 15ms;
  w.try_once_share = 0;
  w.retry_delay = 5ms;
  w.min_wait = 100ms;
  w.max_wait = 500ms;
  w.max_hold = 3ms;
  w.validity_margin = 50ms;
  for (std::size_t n = 3; n < 5; ++n) {
    auto f = standing(fault_kind::reply_delay, n);
    f.delay = 25ms;
    f.jitter = 15ms;
    f.proxy_set = 0;
    plan.faults.push_back(f);
  }
  return plan;
}

// skip_undo and settle_twice: no fault at all, many workers of every
// process racing for two resources, so attempts often split the votes and
// fail. Long TTLs keep an undone vote visible to the scans (every 250 ms)
// for well over orphan_grace; a correct client removes it within
// milliseconds. An attempt both granted and undone lets the next waiter in
// while its holder works.
plan_info contention() {
  plan_info plan;
  plan.name = "contention";
  plan.description =
      "no faults; every process's workers race for two resources with long TTLs, the nodes "
      "scanned every 250 ms";
  plan.clients = 4;
  plan.resources = 2;
  plan.duration = 15s;
  auto& w = plan.workload;
  w.min_ttl = 2000ms;
  w.max_ttl = 3000ms;
  w.max_hold = 10ms;
  w.min_wait = 100ms;
  w.max_wait = 1000ms;
  plan.scan_interval = 250ms;
  return plan;
}

}  // namespace

const std::vector<plan_info>& all_plans() {
  static const std::vector<plan_info> plans = {fast_clock_hold(), late_replies(), contention()};
  return plans;
}

const plan_info* find_plan(std::string_view name) {
  for (const auto& p : all_plans()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<fault> plan_faults(const plan_info& plan, std::chrono::milliseconds length) {
  auto faults = plan.faults;
  for (auto& f : faults) {
    f.start = 0ms;
    f.duration = length;
  }
  return faults;
}

}  // namespace redlock::torture
