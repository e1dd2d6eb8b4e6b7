#include "plans.hpp"

#include <random>

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;

fault standing(fault_kind kind, std::size_t node) {
  fault f;
  f.kind = kind;
  f.node = node;
  return f;
}

// Replies of nodes first .. last-1 reach the clients of proxy set 0 late.
void delay_replies(plan_info& plan, std::size_t first, std::size_t last,
                   std::chrono::milliseconds delay, std::chrono::milliseconds jitter) {
  for (auto n = first; n < last; ++n) {
    auto f = standing(fault_kind::reply_delay, n);
    f.delay = delay;
    f.jitter = jitter;
    f.proxy_set = 0;
    plan.faults.push_back(f);
  }
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

// count_late_votes: process 0 (proxy set 0) gets the replies of nodes 2, 3
// and 4, a majority, 48-56 ms late: after its 15 ms request timeout, while
// the same acquire's next attempt (27-33 ms later) is under way. Process 1
// (proxy set 1) sees no fault. When process 0's attempt finds the resource
// free it fails on the timeout, is undone, and process 1, refused meanwhile
// and polling at the same pace, takes the lock in the gap before process
// 0's next attempt. A correct client ignores the late grants of the undone
// attempt; the broken one counts them and claims the lock process 1 holds.
// One worker per process: with more, the process's own acquires fill the
// gap (measured: 2 workers catch the bug a third as often, 8 hardly ever).
plan_info late_replies() {
  plan_info plan;
  plan.name = "late-replies";
  plan.description =
      "process 0 gets the replies of nodes 2-4 after its request timeout, during its next "
      "attempt; process 1 sees no fault and takes the lock in between";
  plan.clients = 2;
  plan.workers_per_client = 1;
  plan.resources = 1;
  plan.duration = 20s;
  plan.proxy_sets = 2;
  auto& w = plan.workload;
  w.min_ttl = 300ms;
  w.max_ttl = 800ms;
  w.request_timeout = 15ms;
  w.try_once_share = 0;
  w.retry_delay = 30ms;
  w.retry_jitter = 0.1;
  w.min_wait = 100ms;
  w.max_wait = 500ms;
  w.max_hold = 50ms;
  w.max_pause = 20ms;
  w.validity_margin = 50ms;
  delay_replies(plan, 2, 5, 48ms, 8ms);
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

// Auto-extension: every critical section runs under a keeper for one to
// three TTLs and goes on only while the lost-lock signal is silent.
// Processes 0 and 2 (proxy set 0) get the replies of a majority (nodes 0-2)
// 30-70 ms late, against a 50 ms request timeout, so their extensions often
// fail and the signal must stop them before the validity ends; process 1
// sees no fault and takes the lock as soon as it expires. A keeper that
// extended a lock it had lost, or signalled too late, shows as overlapping
// sections or sections outside their lease.
plan_info kept() {
  plan_info plan;
  plan.name = "kept";
  plan.description =
      "every section runs under a keeper for 1-3 TTLs (200-500 ms) and heeds only its signal; "
      "processes 0 and 2 get the replies of nodes 0-2 30-70 ms late";
  plan.clients = 3;
  plan.workers_per_client = 4;
  plan.resources = 2;
  plan.duration = 20s;
  plan.proxy_sets = 2;
  auto& w = plan.workload;
  w.min_ttl = 200ms;
  w.max_ttl = 500ms;
  w.request_timeout = 50ms;
  w.retry_delay = 5ms;
  w.min_wait = 100ms;
  w.max_wait = 1500ms;
  w.keep_share = 1.0;
  w.keep_ttls = 3;
  w.validity_margin = 30ms;
  delay_replies(plan, 0, 3, 30ms, 40ms);
  return plan;
}

// Leader election: three contender processes campaign for r0; a leader
// runs critical sections while leading() says so, steps down after 100-600
// ms and campaigns again. Processes 0 and 2 get the replies of a majority
// late, as in `kept`, so their terms also end by the lost-lock signal and
// a follower takes over once the validity has run out. Two leaders at once
// show as overlapping leases or sections.
plan_info leader() {
  plan_info plan;
  plan.name = "leader";
  plan.description =
      "three processes each run one contender of a leader election for r0; a leader works "
      "while leading() says so and steps down after 100-600 ms; processes 0 and 2 get the "
      "replies of nodes 0-2 30-70 ms late";
  plan.clients = 3;
  plan.workers_per_client = 1;
  plan.resources = 1;
  plan.duration = 20s;
  plan.proxy_sets = 2;
  auto& w = plan.workload;
  w.leader_election = true;
  w.min_ttl = 200ms;
  w.max_ttl = 500ms;
  w.request_timeout = 50ms;
  w.retry_delay = 20ms;
  w.validity_margin = 30ms;
  delay_replies(plan, 0, 3, 30ms, 40ms);
  return plan;
}

// Jepsen's lock workload (etcd, Hazelcast's FencedLock): read-modify-write
// of a register under fenced locks while client processes are stopped past
// their validity (SIGSTOP, 0.6-1.2 s against TTLs of 300-500 ms) and nodes
// are paused and killed (restarted without their data). Holders work 0-40
// ms between their read and their write, so a stop often lands in between;
// and one section in 12 of each worker stalls there until another holder
// has written, so that some stale write is certain, not left to chance (a
// run of the unfenced plan once caught none). The unfenced plan writes the register plainly and
// must show stale writes and lost updates; the fenced one writes it through fenced_set_script.
plan_info pause_register(bool fenced) {
  plan_info plan;
  plan.name = fenced ? "fenced-pause" : "unfenced-pause";
  plan.description =
      fenced ? "fenced locks, the register written through the resource's fence check; client "
               "processes stopped 0.6-1.2 s (past their validity), holders stalled between read "
               "and write until another wrote, nodes paused and killed (restarted without data)"
             : "fenced locks, the register written plainly (the fence ignored); client processes "
               "stopped 0.6-1.2 s (past their validity), holders stalled between read and write "
               "until another wrote, nodes paused and killed (restarted without data)";
  plan.clients = 4;
  plan.workers_per_client = 4;
  plan.resources = 2;
  plan.duration = 15s;
  plan.node_pauses_and_kills = true;
  plan.client_pause = {600ms, 1200ms};
  auto& w = plan.workload;
  w.min_ttl = 300ms;
  w.max_ttl = 500ms;
  w.try_once_share = 0;
  w.retry_delay = 10ms;
  w.min_wait = 200ms;
  w.max_wait = 1500ms;
  w.max_hold = 40ms;
  w.extend_share = 0;
  w.validity_margin = 50ms;
  w.fenced_locks = true;
  w.fenced_writes = fenced;
  w.stall_every = 12;
  w.stall_max = 1500ms;
  return plan;
}

}  // namespace

const std::vector<plan_info>& all_plans() {
  static const std::vector<plan_info> plans = {
      fast_clock_hold(), late_replies(),        contention(),        kept(),
      leader(),          pause_register(false), pause_register(true)};
  return plans;
}

const plan_info* find_plan(std::string_view name) {
  for (const auto& p : all_plans()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<fault> plan_faults(const plan_info& plan, std::chrono::milliseconds length,
                               std::uint64_t seed) {
  if (plan.node_pauses_and_kills) {
    std::mt19937_64 rng(seed);
    const auto between = [&rng](std::chrono::milliseconds low, std::chrono::milliseconds high) {
      return std::chrono::milliseconds(
          std::uniform_int_distribution<long long>(low.count(), high.count())(rng));
    };
    schedule_options downtime;
    downtime.max_ttl = plan.workload.max_ttl;
    std::vector<fault> faults;
    // The first 3 s without faults: fresh nodes bootstrap their fencing
    // state only when every node answers (docs/fencing.md, "Bootstrap").
    for (auto t = between(3000ms, 3500ms); t < length;) {
      fault f;
      f.node = std::uniform_int_distribution<std::size_t>(0, 4)(rng);
      f.start = t;
      if (std::bernoulli_distribution(0.5)(rng)) {
        f.kind = fault_kind::pause;
        f.duration = between(200ms, 1500ms);
      } else {
        f.kind = fault_kind::kill;
        f.duration = min_downtime(downtime) + between(0ms, 500ms);
      }
      faults.push_back(f);
      t = f.end() + between(1000ms, 2000ms);
    }
    return faults;
  }
  auto faults = plan.faults;
  for (auto& f : faults) {
    f.start = 0ms;
    f.duration = length;
  }
  return faults;
}

}  // namespace redlock::torture
