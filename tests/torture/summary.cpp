#include "summary.hpp"

#include "json_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace redlock::torture {
namespace {

constexpr std::size_t shown_violations = 10;

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += fmt::format("{}{}", text.empty() ? "" : ", ", w);
  return text;
}

std::string errors_text(const op_figures& f) {
  if (f.errors.empty()) return {};
  std::vector<std::pair<std::string, std::size_t>> sorted(f.errors.begin(), f.errors.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [what, n] : sorted) {
    text += fmt::format("{}{}: {}", text.empty() ? "" : ", ", what, n);
  }
  return "  (" + text + ")";
}

std::string op_line(std::string_view label, const op_figures& f) {
  return fmt::format("{:<18} invoked {:>7}  ok {:>7}  failed {:>6}{}\n", label, f.invoked, f.ok,
                     f.failed, errors_text(f));
}

std::string liveness_line(std::string_view label, const liveness_figures& l) {
  if (l.attempts == 0) return fmt::format("{:<18} no acquire\n", label);
  return fmt::format(
      "{:<18} {} acquires: {:.2f}% acquired, {:.2f}% refused (held by another client), {:.2f}% "
      "without a quorum; time to acquire p50 {:.2f} ms, p99 {:.2f} ms\n",
      label, l.attempts, 100 * l.success_rate,
      l.attempts > 0 ? 100.0 * static_cast<double>(l.refused) / static_cast<double>(l.attempts)
                     : 0.0,
      100 * l.unavailable_rate, l.p50_ms, l.p99_ms);
}

void liveness_fields(json_writer& w, std::string_view prefix, const liveness_figures& l) {
  const auto key = [&](std::string_view name) { return fmt::format("{}_{}", prefix, name); };
  w.field(key("acquires"), l.attempts)
      .field(key("success_rate"), l.success_rate)
      .field(key("refused"), l.refused)
      .field(key("unavailable_rate"), l.unavailable_rate)
      .field(key("p50_ms"), l.p50_ms)
      .field(key("p99_ms"), l.p99_ms);
}

}  // namespace

std::vector<violation_kind> missing_kinds(const report& r, const run_description& d) {
  std::vector<violation_kind> missing;
  for (const auto kind : d.expected) {
    if (r.count(kind) == 0) missing.push_back(kind);
  }
  return missing;
}

bool as_expected(const report& r, const run_description& d) {
  if (!d.expected.empty()) return missing_kinds(r, d).empty();
  return r.total_violations() == 0 && r.acquire.ok >= d.min_acquisitions &&
         r.stale_writes_refused >= d.min_refused_writes;
}

std::string summary_text(const report& r, const run_description& d, bool pass) {
  std::string out = "== results ==\n";
  out += op_line("acquire", r.acquire);
  out += op_line("extend", r.extend);
  out += op_line("release", r.release);
  out += op_line("critical section", r.cs);
  out += fmt::format("{:<18} {} leases; {} critical sections outside their own lease\n", "leases",
                     r.leases, r.cs_outside_lease);
  out += fmt::format("{:<18} {} injected; {} node scans for keys without TTL\n", "faults",
                     r.faults_injected, r.ttl_scans);
  std::string kinds;
  for (const auto kind : all_violation_kinds) {
    kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", name(kind), r.count(kind));
  }
  out += fmt::format("{:<18} {} ({})\n", "violations", r.total_violations(), kinds);
  out += fmt::format("{:<18} {}\n", "lost updates", r.lost_updates);
  if (r.fenced_acquires > 0 || r.client_pauses > 0) {
    out += fmt::format(
        "{:<18} {} client pauses; {} fenced acquires; fence-checked writes {} accepted, {} "
        "refused as stale; stale writes accepted {}\n",
        "fencing", r.client_pauses, r.fenced_acquires, r.fenced_writes_accepted,
        r.stale_writes_refused, r.stale_writes_accepted);
  }
  out += liveness_line("during faults", r.during_faults);
  out += liveness_line("after heal", r.after_heal);

  for (std::size_t i = 0; i < r.violations.size() && i < shown_violations; ++i) {
    const auto& v = r.violations[i];
    out += fmt::format("VIOLATION {}: {}\n", name(v.kind), v.what);
    for (const auto& line : v.details) out += fmt::format("    {}\n", line);
  }
  if (r.violations.size() > shown_violations) {
    out += fmt::format("... and {} more violations (see the histories in {})\n",
                       r.violations.size() - shown_violations, d.out_dir);
  }
  for (const auto& note : r.notes) out += fmt::format("note: {}\n", note);

  const auto broken = join(d.broken);
  const auto what_broke = broken.empty() ? std::string("the broken assumption")
                                         : fmt::format("the broken client ({})", broken);
  std::string why;
  if (!d.expected.empty()) {
    std::vector<std::string> missing;
    for (const auto kind : missing_kinds(r, d)) missing.emplace_back(name(kind));
    std::vector<std::string> expected;
    for (const auto kind : d.expected) expected.emplace_back(name(kind));
    why = pass ? fmt::format("{} found, as expected: the checker catches {}", join(expected),
                             what_broke)
               : fmt::format(
                     "expected violation kind {} not found ({} violations of other kinds): "
                     "the checker did not catch {}",
                     join(missing), r.total_violations(), what_broke);
  } else if (r.total_violations() > 0) {
    why = "violations found";
  } else if (r.acquire.ok < d.min_acquisitions) {
    why = fmt::format("no violation, but only {} successful acquisitions (at least {} required)",
                      r.acquire.ok, d.min_acquisitions);
  } else if (r.stale_writes_refused < d.min_refused_writes) {
    why = fmt::format(
        "no violation, but only {} stale writes refused by the fence check (at least {} "
        "required): the fence was not put to the test",
        r.stale_writes_refused, d.min_refused_writes);
  } else {
    why = "no violation, as expected";
  }
  if (!pass && !d.broken.empty() && r.total_violations() == 0) {
    out +=
        "note: nothing at all was found: is the switch wired into this build of the library? "
        "(src/detail/negative_controls.hpp)\n";
  }
  out += fmt::format("verdict: {} - {}\n", pass ? "PASS" : "FAIL", why);
  return out;
}

std::string summary_json(const report& r, const run_description& d, bool pass) {
  json_writer w;
  w.field("tool", "redlock-torture").field("mode", d.mode);
  if (!d.scenario.empty()) w.field("scenario", d.scenario);
  std::string expected;
  for (const auto kind : d.expected) {
    expected += fmt::format("{}{}", expected.empty() ? "" : ",", name(kind));
  }
  w.field("seed", static_cast<std::int64_t>(d.seed))
      .field("clients", d.clients)
      .field("workers_per_client", d.workers_per_client)
      .field("resources", d.resources)
      .field("duration_s", d.duration_s)
      .field("persistence", d.persistence)
      .field("broken", join(d.broken))
      .field("expected_violations", expected)
      .field("acquire_invoked", r.acquire.invoked)
      .field("acquire_ok", r.acquire.ok)
      .field("acquire_failed", r.acquire.failed)
      .field("extend_invoked", r.extend.invoked)
      .field("extend_ok", r.extend.ok)
      .field("release_invoked", r.release.invoked)
      .field("release_ok", r.release.ok)
      .field("cs_completed", r.cs.ok)
      .field("cs_failed", r.cs.failed)
      .field("cs_outside_lease", r.cs_outside_lease)
      .field("orphans_near_faults", r.orphans_near_faults)
      .field("faults_injected", r.faults_injected)
      .field("ttl_scans", r.ttl_scans)
      .field("client_pauses", r.client_pauses)
      .field("fenced_acquires", r.fenced_acquires)
      .field("fenced_writes_accepted", r.fenced_writes_accepted)
      .field("stale_writes_refused", r.stale_writes_refused)
      .field("stale_writes_accepted", r.stale_writes_accepted)
      .field("violations", r.total_violations());
  for (const auto kind : all_violation_kinds) w.field(name(kind), r.count(kind));
  w.field("lost_updates", r.lost_updates);
  liveness_fields(w, "during_faults", r.during_faults);
  liveness_fields(w, "after_heal", r.after_heal);
  w.field("elapsed_s", d.elapsed_s)
      .field("out", d.out_dir)
      .field("verdict", pass ? "pass" : "fail");
  return w.str();
}

}  // namespace redlock::torture
