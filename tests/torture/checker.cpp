#include "checker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace redlock::torture {
namespace {

constexpr std::int64_t forever = std::numeric_limits<std::int64_t>::max();

struct interval {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

// One successful acquire and what became of it.
struct lease {
  int proc = 0;
  int worker = 0;
  std::string res;
  std::string token;
  std::int64_t invoke = 0;  // acquire invoked
  std::int64_t ok = 0;      // acquire completed
  std::int64_t deadline = 0;
  std::int64_t release = forever;  // release invoked
  std::int64_t open_from = 0;      // start of the current segment
  std::vector<interval> lapsed;    // segments that ended before a late extend
  std::size_t extends = 0;

  std::vector<interval> segments() const {
    auto all = lapsed;
    all.push_back({open_from, std::min(release, deadline)});
    std::erase_if(all, [](const interval& i) { return i.end <= i.start; });
    return all;
  }
};

struct section {
  int proc = 0;
  int worker = 0;
  std::string res;
  std::string token;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t read = -1;
  std::int64_t wrote = -1;
  std::int64_t fence = 0;
  std::int64_t write_t = 0;
  bool checked = false;  // written through the resource's fence check
};

// A fenced acquire that succeeded.
struct fenced_acquire {
  int proc = 0;
  int worker = 0;
  std::string token;
  std::int64_t invoke = 0;
  std::int64_t ok = 0;
  std::int64_t fence = 0;
};

struct sample {
  std::int64_t invoke = 0;
  std::int64_t done = 0;
  bool ok = false;
  bool refused = false;  // not_acquired: the lock was held by another owner
};

// Formats times relative to the start of the run.
class timeline {
 public:
  explicit timeline(std::int64_t zero) : zero_(zero) {}
  std::string at(std::int64_t t) const {
    if (t == forever) return "never";
    return fmt::format("{:+.6f}s", static_cast<double>(t - zero_) / 1e9);
  }

 private:
  std::int64_t zero_;
};

// "start", "heal-all" and "end" mark the phases of a run; they are no faults.
bool is_marker(const fault_event& f) {
  return f.node < 0 && (f.fault == "start" || f.fault == "heal-all" || f.fault == "end");
}

std::string where(const fault_event& f) {
  return f.node >= 0 ? fmt::format("on node {}", f.node) : std::string("on a client");
}

std::string short_token(const std::string& token) {
  return token.size() > 8 ? token.substr(0, 8) : token;
}

std::string owner(int proc, int worker) { return fmt::format("proc {} worker {}", proc, worker); }

// When a fault on a node was in place: from its start to the node's next
// heal (forever when none follows). The controller ends all the faults of a
// node at once, so a heal ends every fault open on its node.
struct node_fault {
  int node = -1;
  interval span;
};

std::vector<node_fault> node_faults(const std::vector<fault_event>& faults) {
  std::vector<node_fault> spans;
  std::map<int, std::vector<std::size_t>> open;  // node -> its faults not yet healed
  for (const auto& f : faults) {
    if (f.node < 0) continue;
    if (f.fault == "heal") {
      for (const auto i : open[f.node]) spans[i].span.end = std::min(spans[i].span.end, f.t);
      open[f.node].clear();
      continue;
    }
    open[f.node].push_back(spans.size());
    spans.push_back({f.node, {f.t, forever}});
  }
  return spans;
}

// Extra room around a fault for bytes the proxies deliver late.
constexpr std::int64_t fault_slack_ns = 1'000'000'000;

class checker {
 public:
  explicit checker(const run_data& run) : run_(run), time_(zero(run)) {}

  report run() {
    replay_histories();
    check_leases();
    check_sections();
    check_registers();
    check_acquire_fences();
    check_write_fences();
    read_findings();
    check_orphaned_votes();
    liveness();
    return std::move(report_);
  }

 private:
  static std::int64_t zero(const run_data& run) {
    if (auto start = run.marker("start")) return *start;
    std::int64_t first = forever;
    for (const auto& e : run.events) first = std::min(first, e.t);
    return first == forever ? 0 : first;
  }

  struct worker_state {
    std::map<op_kind, const event*> pending;  // the open invoke of each operation
  };

  op_figures& figures(op_kind op) {
    switch (op) {
      case op_kind::acquire:
        return report_.acquire;
      case op_kind::extend:
        return report_.extend;
      case op_kind::release:
        return report_.release;
      case op_kind::cs:
        break;
    }
    return report_.cs;
  }

  lease* find_lease(const std::string& token) {
    const auto it = lease_by_token_.find(token);
    return it == lease_by_token_.end() ? nullptr : &leases_[it->second];
  }

  void replay_histories() {
    std::map<std::pair<int, int>, worker_state> workers;  // by (proc, worker)
    std::size_t unfinished = 0;
    for (const auto& e : run_.events) {
      if (e.op == op_kind::acquire || e.op == op_kind::extend) {
        max_ttl_ns_ = std::max(max_ttl_ns_, e.ttl_ms * 1'000'000);
      }
      auto& state = workers[{e.proc, e.worker}];
      auto& fig = figures(e.op);
      if (e.type == event_type::invoke) {
        ++fig.invoked;
        if (state.pending[e.op] != nullptr) ++unfinished;
        state.pending[e.op] = &e;
        if (e.op == op_kind::release) {
          if (auto* l = find_lease(e.token)) l->release = std::min(l->release, e.t);
        }
        continue;
      }
      const event* invoke = std::exchange(state.pending[e.op], nullptr);
      const std::int64_t invoked_at = invoke != nullptr ? invoke->t : e.t;
      if (e.type == event_type::fail) {
        ++fig.failed;
        ++fig.errors[e.err.empty() ? std::string("(no reason)") : e.err];
        if (e.op == op_kind::acquire) {
          samples_.push_back({invoked_at, e.t, false, e.err == "not_acquired"});
        }
        // A store failure leaves the register unknown; a section given up
        // wrote nothing.
        // A write the resource refused as stale wrote nothing either.
        if (e.op == op_kind::cs && e.err == refused_section) {
          ++report_.stale_writes_refused;
        } else if (e.op == op_kind::cs && e.err != given_up_section) {
          uncertain_.insert(e.res);
        }
        continue;
      }
      ++fig.ok;
      switch (e.op) {
        case op_kind::acquire: {
          samples_.push_back({invoked_at, e.t, true, false});
          returned_tokens_.insert(e.token);
          if (e.fence > 0) {
            ++report_.fenced_acquires;
            acquires_by_res_[e.res].push_back(
                {e.proc, e.worker, e.token, invoked_at, e.t, e.fence});
          }
          if (e.token.empty() || e.deadline <= 0) {
            bogus_success(e, invoked_at);
            break;
          }
          lease l;
          l.proc = e.proc;
          l.worker = e.worker;
          l.res = e.res;
          l.token = e.token;
          l.invoke = invoked_at;
          l.ok = e.t;
          l.open_from = e.t;
          l.deadline = e.deadline;
          lease_by_token_[e.token] = leases_.size();
          leases_.push_back(std::move(l));
          break;
        }
        case op_kind::extend:
          if (e.deadline <= 0) {
            bogus_success(e, invoked_at);
            break;
          }
          if (auto* l = find_lease(e.token)) {
            if (invoked_at >= l->deadline) {
              // Extended after the validity had ended: the lease lapsed in between.
              l->lapsed.push_back({l->open_from, std::min(l->release, l->deadline)});
              l->open_from = e.t;
            }
            l->deadline = e.deadline;
            ++l->extends;
          }
          break;
        case op_kind::release:
          break;
        case op_kind::cs:
          sections_.push_back({e.proc, e.worker, e.res, e.token, invoked_at, e.t, e.read, e.wrote,
                               e.fence, e.write_t, e.checked});
          if (e.checked) ++report_.fenced_writes_accepted;
          break;
      }
    }
    for (const auto& [who, state] : workers) {
      for (const auto& [op, invoke] : state.pending) {
        if (invoke != nullptr) ++unfinished;
      }
    }
    if (unfinished > 0) {
      report_.notes.push_back(
          fmt::format("{} operations were invoked but never completed", unfinished));
    }
    report_.leases = leases_.size();
  }

  // A success that holds nothing the checker could follow: no token to tell
  // the lock apart, or no validity to bound it.
  void bogus_success(const event& e, std::int64_t invoked_at) {
    violation v;
    v.kind = violation_kind::bogus_success;
    v.res = e.res;
    std::string what;
    if (e.token.empty()) what = "an empty token";
    if (e.deadline <= 0) {
      what += fmt::format("{}a validity deadline of {}", what.empty() ? "" : " and ", e.deadline);
    }
    v.what = fmt::format("{}: {} of {} reported success with {}", e.res, name(e.op),
                         owner(e.proc, e.worker), what);
    v.details.push_back(fmt::format("{} invoked {} ok {}{}", name(e.op), time_.at(invoked_at),
                                    time_.at(e.t),
                                    e.token.empty() ? "" : " token " + short_token(e.token)));
    report_.violations.push_back(std::move(v));
  }

  std::string describe(const lease& l) const {
    std::string text = fmt::format("lease of {} token {}: acquire invoked {} ok {}, valid until {}",
                                   owner(l.proc, l.worker), short_token(l.token),
                                   time_.at(l.invoke), time_.at(l.ok), time_.at(l.deadline));
    if (l.extends > 0) text += fmt::format(" (after {} extends)", l.extends);
    text += fmt::format(", release invoked {}", time_.at(l.release));
    return text;
  }

  std::string describe(const section& s) const {
    std::string text =
        fmt::format("cs of {} token {}: {} .. {}, read {} wrote {}", owner(s.proc, s.worker),
                    short_token(s.token), time_.at(s.start), time_.at(s.end), s.read, s.wrote);
    if (s.fence > 0) {
      text += fmt::format(", fence {}, write sent {}{}", s.fence, time_.at(s.write_t),
                          s.checked ? " (fence-checked)" : " (plain)");
    }
    return text;
  }

  std::string describe(const fenced_acquire& a) const {
    return fmt::format("fenced acquire of {} token {}: invoked {} ok {}, fence {}",
                       owner(a.proc, a.worker), short_token(a.token), time_.at(a.invoke),
                       time_.at(a.ok), a.fence);
  }

  // Property P (docs/fencing.md): an acquire that completed before another
  // began got a smaller fence. All times are on one host-wide clock.
  void check_acquire_fences() {
    for (auto& [res, list] : acquires_by_res_) {
      std::vector<const fenced_acquire*> by_ok;
      std::vector<const fenced_acquire*> by_invoke;
      for (const auto& a : list) {
        by_ok.push_back(&a);
        by_invoke.push_back(&a);
      }
      std::sort(by_ok.begin(), by_ok.end(),
                [](const auto* a, const auto* b) { return a->ok < b->ok; });
      std::sort(by_invoke.begin(), by_invoke.end(),
                [](const auto* a, const auto* b) { return a->invoke < b->invoke; });
      const fenced_acquire* largest = nullptr;  // of those completed so far
      std::size_t next = 0;
      for (const auto* b : by_invoke) {
        for (; next < by_ok.size() && by_ok[next]->ok < b->invoke; ++next) {
          if (largest == nullptr || by_ok[next]->fence > largest->fence) largest = by_ok[next];
        }
        if (largest == nullptr || b->fence > largest->fence) continue;
        violation v;
        v.kind = violation_kind::fence_order;
        v.res = res;
        v.what = fmt::format(
            "{}: an acquire by {} got fence {}, not above fence {} of an acquire that completed "
            "before it began",
            res, owner(b->proc, b->worker), b->fence, largest->fence);
        v.details.push_back(describe(*largest));
        v.details.push_back(describe(*b));
        add_faults_between(v, largest->invoke, b->ok);
        report_.violations.push_back(std::move(v));
      }
    }
  }

  // The FencedMutex model: the writes the register accepted carry fences
  // that grow across holders. A write sent after another's was accepted
  // (its ok recorded) must carry a larger fence, or the same fence with the
  // same token (the same hold); one that does not is a stale write that
  // landed. Plain writes with a fence count too: that is what they miss.
  void check_write_fences() {
    std::map<std::string, std::vector<const section*>> by_res;
    for (const auto& s : sections_) {
      if (s.fence > 0 && s.write_t > 0) by_res[s.res].push_back(&s);
    }
    for (auto& [res, list] : by_res) {
      auto by_end = list;
      std::sort(by_end.begin(), by_end.end(),
                [](const section* a, const section* b) { return a->end < b->end; });
      std::sort(list.begin(), list.end(),
                [](const section* a, const section* b) { return a->write_t < b->write_t; });
      const section* largest = nullptr;  // of the writes accepted so far
      std::size_t next = 0;
      for (const auto* w : list) {
        for (; next < by_end.size() && by_end[next]->end < w->write_t; ++next) {
          if (largest == nullptr || by_end[next]->fence > largest->fence) largest = by_end[next];
        }
        if (largest == nullptr || w->fence > largest->fence ||
            (w->fence == largest->fence && w->token == largest->token)) {
          continue;
        }
        violation v;
        v.kind = violation_kind::stale_write;
        v.res = res;
        v.what = fmt::format(
            "{}: a write of {} with fence {} was accepted after a write with fence {} by {}", res,
            owner(w->proc, w->worker), w->fence, largest->fence,
            owner(largest->proc, largest->worker));
        v.details.push_back(describe(*largest));
        v.details.push_back(describe(*w));
        add_faults_between(v, w->start, w->write_t);
        report_.violations.push_back(std::move(v));
        ++report_.stale_writes_accepted;
      }
    }
  }

  void add_faults_between(violation& v, std::int64_t from, std::int64_t to) const {
    std::size_t listed = 0;
    for (const auto& f : run_.faults) {
      if (is_marker(f) || f.t < from || f.t > to) continue;
      v.details.push_back(fmt::format("fault {} {} {}{}", time_.at(f.t), f.fault, where(f),
                                      f.detail.empty() ? "" : " (" + f.detail + ")"));
      ++listed;
    }
    if (listed == 0) {
      v.details.push_back(
          fmt::format("no fault injected between {} and {}", time_.at(from), time_.at(to)));
    }
  }

  void check_leases() {
    struct piece {
      interval span;
      std::size_t lease = 0;
    };
    std::map<std::string, std::vector<piece>> by_res;
    for (std::size_t i = 0; i < leases_.size(); ++i) {
      for (const auto& span : leases_[i].segments()) by_res[leases_[i].res].push_back({span, i});
    }
    for (auto& [res, pieces] : by_res) {
      std::sort(pieces.begin(), pieces.end(),
                [](const piece& a, const piece& b) { return a.span.start < b.span.start; });
      std::vector<piece> open;
      for (const auto& p : pieces) {
        std::erase_if(open, [&](const piece& o) { return o.span.end <= p.span.start; });
        for (const auto& o : open) {
          const lease& first = leases_[o.lease];
          const lease& second = leases_[p.lease];
          if (first.token == second.token) continue;
          violation v;
          v.kind = violation_kind::lease_overlap;
          v.res = res;
          const auto overlap_end = std::min(o.span.end, p.span.end);
          v.what = fmt::format("{}: {} and {} both held the lock from {} to {}", res,
                               owner(first.proc, first.worker), owner(second.proc, second.worker),
                               time_.at(p.span.start), time_.at(overlap_end));
          v.details.push_back(describe(first));
          v.details.push_back(describe(second));
          add_faults_between(v, std::min(first.invoke, second.invoke),
                             std::max(first.ok, second.ok));
          report_.violations.push_back(std::move(v));
        }
        open.push_back(p);
      }
    }
  }

  // The lease a critical section ran under, if it was inside one of its segments.
  bool inside_own_lease(const section& s) {
    const lease* l = find_lease(s.token);
    if (l == nullptr) return false;
    for (const auto& span : l->segments()) {
      if (s.start >= span.start && s.end <= span.end) return true;
    }
    return false;
  }

  void check_sections() {
    std::map<std::string, std::vector<const section*>> by_res;
    for (const auto& s : sections_) {
      by_res[s.res].push_back(&s);
      if (!inside_own_lease(s)) {
        ++report_.cs_outside_lease;
        if (report_.cs_outside_lease <= 5) {
          report_.notes.push_back("critical section outside its own lease: " + describe(s));
        }
      }
    }
    for (auto& [res, list] : by_res) {
      std::sort(list.begin(), list.end(),
                [](const section* a, const section* b) { return a->start < b->start; });
      std::vector<const section*> open;
      for (const auto* s : list) {
        std::erase_if(open, [&](const section* o) { return o->end <= s->start; });
        for (const auto* o : open) {
          if (o->token == s->token) continue;
          // Both written through the fence check: the store ordered them,
          // and the fence rules judge them (a holder stopped after its
          // write, before recording it, overlaps harmlessly).
          if (o->checked && s->checked) continue;
          violation v;
          v.kind = violation_kind::cs_overlap;
          v.res = res;
          v.what = fmt::format("{}: critical sections of {} and {} overlap from {} to {}", res,
                               owner(o->proc, o->worker), owner(s->proc, s->worker),
                               time_.at(s->start), time_.at(std::min(o->end, s->end)));
          v.details.push_back(describe(*o));
          v.details.push_back(describe(*s));
          std::int64_t from = o->start;
          for (const auto* owner : {o, s}) {
            if (const auto* l = find_lease(owner->token)) {
              v.details.push_back(describe(*l));
              from = std::min(from, l->invoke);
            }
          }
          add_faults_between(v, from, s->start);
          report_.violations.push_back(std::move(v));
        }
        open.push_back(s);
      }
      sorted_sections_[res] = std::move(list);
    }
  }

  void check_registers() {
    std::map<std::string, std::int64_t> finals;
    bool registers_read = false;
    for (const auto& c : run_.checks) {
      if (c.check == "register") {
        finals[c.key] = c.value;
        registers_read = true;
      }
    }
    for (const auto& [res, list] : sorted_sections_) {
      if (uncertain_.contains(res)) {
        report_.notes.push_back(
            fmt::format("{}: a critical section failed midway; register not checked", res));
        continue;
      }
      std::int64_t expected = 0;
      const section* previous = nullptr;
      for (const auto* s : list) {
        if (s->read != expected) {
          violation v;
          v.kind = violation_kind::lost_update;
          v.res = res;
          v.what =
              previous == nullptr
                  ? fmt::format("{}: the first critical section read {}, not 0", res, s->read)
                  : fmt::format("{}: a critical section read {} but the one before it wrote {}",
                                res, s->read, expected);
          if (previous != nullptr) v.details.push_back(describe(*previous));
          v.details.push_back(describe(*s));
          add_faults_between(v, previous != nullptr ? previous->start : s->start, s->end);
          report_.violations.push_back(std::move(v));
        }
        expected = s->wrote;
        previous = s;
      }
      if (!registers_read) continue;
      const auto it = finals.find(res);
      const std::int64_t final_value = it == finals.end() ? 0 : it->second;
      const auto completed = static_cast<std::int64_t>(list.size());
      if (final_value != completed) {
        violation v;
        v.kind = violation_kind::lost_update;
        v.res = res;
        v.what = fmt::format("{}: the register holds {} after {} completed critical sections", res,
                             final_value, completed);
        report_.violations.push_back(std::move(v));
        if (completed > final_value) {
          report_.lost_updates += static_cast<std::size_t>(completed - final_value);
        }
      }
    }
    if (!registers_read && !sections_.empty()) {
      report_.notes.push_back("final register values were not recorded; only reads were checked");
    }
  }

  void read_findings() {
    for (const auto& f : run_.faults) {
      if (!is_marker(f) && f.fault != "heal") ++report_.faults_injected;
      if (f.fault == "pause-client") ++report_.client_pauses;
    }
    std::set<std::pair<int, std::string>> without_ttl;  // each key once, at its first sighting
    for (const auto& c : run_.checks) {
      if (c.check == "scan") {
        ++report_.ttl_scans;
      } else if ((c.check == "no-ttl" && without_ttl.emplace(c.node, c.key).second) ||
                 c.check == "leftover") {
        violation v;
        v.kind = c.check == "no-ttl" ? violation_kind::no_ttl_key : violation_kind::leftover_key;
        v.res = c.key;
        v.what =
            c.check == "no-ttl"
                ? fmt::format("node {}: lock key {} had no TTL at {}", c.node, c.key, time_.at(c.t))
                : fmt::format("node {}: lock key {} still there at {} (PTTL {} ms)", c.node, c.key,
                              time_.at(c.t), c.value);
        report_.violations.push_back(std::move(v));
      }
    }
  }

  // Rule 6: lock keys of failed attempts that stayed on a healthy node.
  void check_orphaned_votes() {
    struct sightings {
      std::int64_t first = 0;
      std::int64_t last = 0;
      std::int64_t first_pttl = 0;
      std::int64_t last_pttl = 0;
      std::size_t times = 0;
    };
    std::map<std::tuple<int, std::string, std::string>, sightings> seen;  // (node, key, token)
    for (const auto& c : run_.checks) {
      if (c.check != "key" || c.token.empty() || returned_tokens_.contains(c.token)) continue;
      auto& s = seen[{c.node, c.key, c.token}];
      if (s.times++ == 0) {
        s.first = c.t;
        s.first_pttl = c.value;
      }
      s.last = c.t;
      s.last_pttl = c.value;
    }
    const auto faults = node_faults(run_.faults);
    const auto grace = std::chrono::nanoseconds(orphan_grace).count();
    for (const auto& [where_seen, s] : seen) {
      const auto& [node, key, token] = where_seen;
      if (s.last - s.first < grace) continue;
      const interval judged{s.first - max_ttl_ns_ - fault_slack_ns, s.last};
      const bool near_fault = std::any_of(faults.begin(), faults.end(), [&](const node_fault& f) {
        return f.node == node && f.span.start <= judged.end && f.span.end >= judged.start;
      });
      if (near_fault) {
        ++report_.orphans_near_faults;
        continue;
      }
      violation v;
      v.kind = violation_kind::orphaned_votes;
      v.res = key;
      v.what = fmt::format(
          "node {}: lock key {} held token {}, which no successful acquire returned, from {} to "
          "{} ({} scans)",
          node, key, short_token(token), time_.at(s.first), time_.at(s.last), s.times);
      v.details.push_back(fmt::format("PTTL {} ms at the first sighting, {} ms at the last",
                                      s.first_pttl, s.last_pttl));
      v.details.push_back(
          fmt::format("a correct client undoes a failed attempt within its request timeout; no "
                      "fault on node {} from {} on",
                      node, time_.at(judged.start)));
      report_.violations.push_back(std::move(v));
    }
    if (report_.orphans_near_faults > 0) {
      report_.notes.push_back(fmt::format(
          "{} votes of failed attempts stayed longer than {} ms on nodes faulted around them "
          "(allowed: a SET left on a broken connection lives up to its TTL)",
          report_.orphans_near_faults, orphan_grace.count()));
    }
  }

  static liveness_figures figures_of(const std::vector<sample>& samples) {
    liveness_figures out;
    std::vector<double> latencies;
    for (const auto& s : samples) {
      ++out.attempts;
      if (s.refused) ++out.refused;
      if (!s.ok) continue;
      ++out.ok;
      latencies.push_back(static_cast<double>(s.done - s.invoke) / 1e6);
    }
    if (out.attempts > 0) {
      const auto attempts = static_cast<double>(out.attempts);
      out.success_rate = static_cast<double>(out.ok) / attempts;
      out.unavailable_rate = static_cast<double>(out.attempts - out.ok - out.refused) / attempts;
    }
    out.p50_ms = percentile(latencies, 50);
    out.p99_ms = percentile(latencies, 99);
    return out;
  }

  void liveness() {
    const auto heal = run_.marker("heal-all").value_or(forever);
    std::vector<sample> during;
    std::vector<sample> after;
    for (const auto& s : samples_) (s.invoke < heal ? during : after).push_back(s);
    report_.during_faults = figures_of(during);
    report_.after_heal = figures_of(after);
  }

  const run_data& run_;
  timeline time_;
  report report_;
  std::vector<lease> leases_;
  std::map<std::string, std::size_t> lease_by_token_;
  std::vector<section> sections_;
  std::map<std::string, std::vector<fenced_acquire>> acquires_by_res_;
  std::map<std::string, std::vector<const section*>> sorted_sections_;
  std::set<std::string> uncertain_;
  std::vector<sample> samples_;
  std::set<std::string> returned_tokens_;  // by acquires that reported success
  std::int64_t max_ttl_ns_ = 0;            // the longest TTL asked for
};

}  // namespace

std::string_view name(violation_kind kind) {
  switch (kind) {
    case violation_kind::lease_overlap:
      return "lease_overlap";
    case violation_kind::cs_overlap:
      return "cs_overlap";
    case violation_kind::lost_update:
      return "lost_update";
    case violation_kind::no_ttl_key:
      return "no_ttl_key";
    case violation_kind::leftover_key:
      return "leftover_key";
    case violation_kind::bogus_success:
      return "bogus_success";
    case violation_kind::orphaned_votes:
      return "orphaned_votes";
    case violation_kind::stale_write:
      return "stale_write";
    case violation_kind::fence_order:
      return "fence_order";
  }
  return "?";
}

std::optional<violation_kind> parse_violation_kind(std::string_view text) {
  for (const auto kind : all_violation_kinds) {
    if (name(kind) == text) return kind;
  }
  return std::nullopt;
}

std::size_t report::count(violation_kind kind) const {
  return static_cast<std::size_t>(std::count_if(
      violations.begin(), violations.end(), [kind](const violation& v) { return v.kind == kind; }));
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

report check(const run_data& run) { return checker(run).run(); }

}  // namespace redlock::torture
