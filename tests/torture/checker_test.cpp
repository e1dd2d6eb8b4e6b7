// The checker on small synthetic histories: it must flag exactly the
// histories that break mutual exclusion.
#include "checker.hpp"
#include "summary.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace redlock::torture;

namespace {

constexpr std::int64_t ms = 1'000'000;  // history times are nanoseconds

// Builds a run in milliseconds; every call appends the events of one
// operation, as a client process records them.
class builder {
 public:
  run_data run;

  builder() { run.faults.push_back({0, "start", -1, {}}); }

  void acquire(int proc, const std::string& res, const std::string& token, std::int64_t invoke,
               std::int64_t ok, std::int64_t deadline) {
    add(proc, op_kind::acquire, event_type::invoke, invoke, res, {});
    auto& e = add(proc, op_kind::acquire, event_type::ok, ok, res, token);
    e.deadline = deadline * ms;
  }
  /// The events of one operation of worker `worker`: invoke, then ok or fail.
  event& invoke(int proc, int worker, op_kind op, std::int64_t t, const std::string& res,
                const std::string& token = {}) {
    auto& e = add(proc, op, event_type::invoke, t, res, token);
    e.worker = worker;
    return e;
  }
  event& done(int proc, int worker, op_kind op, event_type type, std::int64_t t,
              const std::string& res, const std::string& token = {}) {
    auto& e = add(proc, op, type, t, res, token);
    e.worker = worker;
    return e;
  }
  /// A lock key seen by the controller's scan of `node` at `at`.
  void key_seen(std::int64_t at, int node, const std::string& key, const std::string& token) {
    run.checks.push_back({at * ms, "key", node, key, 1000, token});
  }
  void acquire_failed(int proc, const std::string& res, std::int64_t invoke, std::int64_t done) {
    add(proc, op_kind::acquire, event_type::invoke, invoke, res, {});
    add(proc, op_kind::acquire, event_type::fail, done, res, {}).err = "not_acquired";
  }
  void extend(int proc, const std::string& res, const std::string& token, std::int64_t invoke,
              std::int64_t ok, std::int64_t deadline) {
    add(proc, op_kind::extend, event_type::invoke, invoke, res, token);
    add(proc, op_kind::extend, event_type::ok, ok, res, token).deadline = deadline * ms;
  }
  void extend_failed(int proc, const std::string& res, const std::string& token,
                     std::int64_t invoke, std::int64_t done) {
    add(proc, op_kind::extend, event_type::invoke, invoke, res, token);
    add(proc, op_kind::extend, event_type::fail, done, res, token).err = "lock lost";
  }
  void release(int proc, const std::string& res, const std::string& token, std::int64_t invoke) {
    add(proc, op_kind::release, event_type::invoke, invoke, res, token);
    add(proc, op_kind::release, event_type::ok, invoke + 1, res, token);
  }
  void cs(int proc, const std::string& res, const std::string& token, std::int64_t start,
          std::int64_t end, std::int64_t read) {
    add(proc, op_kind::cs, event_type::invoke, start, res, token);
    auto& e = add(proc, op_kind::cs, event_type::ok, end, res, token);
    e.read = read;
    e.wrote = read + 1;
  }
  void fenced_acquire(int proc, const std::string& res, const std::string& token,
                      std::int64_t invoke, std::int64_t ok, std::int64_t deadline,
                      std::int64_t fence) {
    acquire(proc, res, token, invoke, ok, deadline);
    run.events.back().fence = fence;
  }
  /// A section whose write (sent at `write_t`) was accepted: through the
  /// fence check when `checked`, else a plain SET that carried the fence.
  void fenced_cs(int proc, const std::string& res, const std::string& token, std::int64_t start,
                 std::int64_t write_t, std::int64_t end, std::int64_t read, std::int64_t fence,
                 bool checked) {
    cs(proc, res, token, start, end, read);
    auto& e = run.events.back();
    e.fence = fence;
    e.write_t = write_t * ms;
    e.checked = checked;
  }
  /// A section whose fenced write the resource refused as stale.
  void refused_cs(int proc, const std::string& res, const std::string& token, std::int64_t start,
                  std::int64_t write_t, std::int64_t end, std::int64_t fence) {
    add(proc, op_kind::cs, event_type::invoke, start, res, token).checked = true;
    auto& e = add(proc, op_kind::cs, event_type::fail, end, res, token);
    e.err = std::string(refused_section);
    e.fence = fence;
    e.write_t = write_t * ms;
    e.checked = true;
  }
  void fault(std::int64_t at, const std::string& what, int node) {
    run.faults.push_back({at * ms, what, node, {}});
  }
  void final_register(const std::string& res, std::int64_t value) {
    run.checks.push_back({0, "register", -1, res, value, {}});
  }

 private:
  event& add(int proc, op_kind op, event_type type, std::int64_t t, const std::string& res,
             const std::string& token) {
    event e;
    e.proc = proc;
    e.op = op;
    e.type = type;
    e.t = t * ms;
    e.res = res;
    e.token = token;
    run.events.push_back(e);
    return run.events.back();
  }
};

}  // namespace

TEST_CASE("checker: one holder after the other is no violation", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 2, 500);
  b.cs(0, "r", "A", 3, 10, 0);
  b.release(0, "r", "A", 11);
  b.acquire(1, "r", "B", 5, 20, 600);
  b.cs(1, "r", "B", 21, 30, 1);
  b.release(1, "r", "B", 31);
  b.final_register("r", 2);
  const auto r = check(b.run);
  CHECK(r.total_violations() == 0);
  CHECK(r.leases == 2);
  CHECK(r.cs.ok == 2);
  CHECK(r.cs_outside_lease == 0);
  CHECK(r.lost_updates == 0);
}

TEST_CASE("checker: touching leases do not overlap", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 10, 100);    // validity ends at 100
  b.acquire(1, "r", "B", 50, 100, 300);  // B's lease starts exactly then
  b.release(1, "r", "B", 200);
  CHECK(check(b.run).total_violations() == 0);

  builder c;
  c.acquire(0, "r", "A", 0, 10, 1000);
  c.release(0, "r", "A", 100);  // released at 100
  c.acquire(1, "r", "B", 50, 100, 300);
  CHECK(check(c.run).total_violations() == 0);
}

TEST_CASE("checker: overlapping leases are reported with the faults between",
          "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 10, 1000);
  b.fault(50, "kill", 2);
  b.fault(5000, "pause", 1);  // long after: not listed
  b.acquire(1, "r", "B", 60, 70, 1000);
  b.release(0, "r", "A", 200);
  b.release(1, "r", "B", 300);
  const auto r = check(b.run);
  REQUIRE(r.count(violation_kind::lease_overlap) == 1);
  CHECK(r.total_violations() == 1);
  const auto& v = r.violations.front();
  CHECK(v.res == "r");
  std::string details;
  for (const auto& d : v.details) details += d + "\n";
  INFO(details);
  CHECK(details.find("proc 0") != std::string::npos);
  CHECK(details.find("proc 1") != std::string::npos);
  CHECK(details.find("kill on node 2") != std::string::npos);
  CHECK(details.find("pause") == std::string::npos);
}

TEST_CASE("checker: leases of different resources never conflict", "[torture][checker]") {
  builder b;
  b.acquire(0, "r1", "A", 0, 10, 1000);
  b.acquire(1, "r2", "B", 0, 10, 1000);
  CHECK(check(b.run).total_violations() == 0);
}

TEST_CASE("checker: a successful extend prolongs the lease", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 10, 100);
  b.extend(0, "r", "A", 50, 60, 400);
  b.acquire(1, "r", "B", 150, 200, 900);  // after A's first deadline, inside the extension
  const auto r = check(b.run);
  CHECK(r.count(violation_kind::lease_overlap) == 1);

  SECTION("a failed extend does not") {
    builder c;
    c.acquire(0, "r", "A", 0, 10, 100);
    c.extend_failed(0, "r", "A", 50, 60);
    c.acquire(1, "r", "B", 150, 200, 900);
    CHECK(check(c.run).total_violations() == 0);
  }
  SECTION("the extend replaces the deadline, even by an earlier one") {
    builder c;
    c.acquire(0, "r", "A", 0, 10, 1000);
    c.extend(0, "r", "A", 50, 60, 120);
    c.acquire(1, "r", "B", 150, 200, 900);
    CHECK(check(c.run).total_violations() == 0);
  }
}

TEST_CASE("checker: invoking release ends the lease", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 10, 1000);
  b.release(0, "r", "A", 100);
  b.acquire(1, "r", "B", 150, 200, 900);
  CHECK(check(b.run).total_violations() == 0);

  builder late;  // the same release, invoked after B got in
  late.acquire(0, "r", "A", 0, 10, 1000);
  late.acquire(1, "r", "B", 150, 200, 900);
  late.release(0, "r", "A", 250);
  CHECK(check(late.run).count(violation_kind::lease_overlap) == 1);
}

TEST_CASE("checker: lost update detected", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 1, 1000);
  b.acquire(1, "r", "B", 0, 2, 1000);
  b.cs(0, "r", "A", 10, 30, 0);  // both read 0 and write 1
  b.cs(1, "r", "B", 20, 40, 0);
  b.release(0, "r", "A", 50);
  b.release(1, "r", "B", 50);
  b.final_register("r", 1);
  const auto r = check(b.run);
  CHECK(r.count(violation_kind::lease_overlap) == 1);
  CHECK(r.count(violation_kind::cs_overlap) == 1);
  CHECK(r.count(violation_kind::lost_update) == 2);  // the stale read, the final count
  CHECK(r.lost_updates == 1);
}

TEST_CASE("checker: a serial chain of critical sections is consistent", "[torture][checker]") {
  builder b;
  std::int64_t t = 0;
  for (int i = 0; i < 10; ++i) {
    const std::string token = "T" + std::to_string(i);
    b.acquire(i % 3, "r", token, t, t + 1, t + 100);
    b.cs(i % 3, "r", token, t + 2, t + 5, i);
    b.release(i % 3, "r", token, t + 6);
    t += 10;
  }
  b.final_register("r", 10);
  CHECK(check(b.run).total_violations() == 0);

  SECTION("a final value short of the count is a lost update") {
    b.run.checks.clear();
    b.final_register("r", 9);
    const auto r = check(b.run);
    CHECK(r.count(violation_kind::lost_update) == 1);
    CHECK(r.lost_updates == 1);
  }
}

TEST_CASE("checker: a stale read without overlap is a lost update", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 1, 100);
  b.cs(0, "r", "A", 2, 5, 0);
  b.release(0, "r", "A", 6);
  b.acquire(1, "r", "B", 10, 11, 100);
  b.cs(1, "r", "B", 12, 15, 0);  // should have read 1
  b.release(1, "r", "B", 16);
  const auto r = check(b.run);
  CHECK(r.count(violation_kind::lost_update) == 1);
  CHECK(r.count(violation_kind::cs_overlap) == 0);
}

TEST_CASE("checker: a paused holder overlaps in critical sections, not in leases",
          "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 1, 100);
  b.fault(5, "pause-client", -1);
  b.acquire(1, "r", "B", 101, 120, 1000);  // after A's validity
  b.cs(1, "r", "B", 121, 200, 0);
  b.cs(0, "r", "A", 150, 210, 0);  // A resumes and works on
  b.release(1, "r", "B", 201);
  b.release(0, "r", "A", 211);
  b.final_register("r", 1);
  const auto r = check(b.run);
  CHECK(r.count(violation_kind::lease_overlap) == 0);
  CHECK(r.count(violation_kind::cs_overlap) == 1);
  CHECK(r.count(violation_kind::lost_update) >= 1);
  CHECK(r.cs_outside_lease == 1);
}

TEST_CASE("checker: sections of one owner never conflict", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 1, 100);
  b.cs(0, "r", "A", 2, 50, 0);
  b.extend(0, "r", "A", 51, 52, 300);
  b.cs(0, "r", "A", 53, 200, 1);
  b.release(0, "r", "A", 201);
  b.final_register("r", 2);
  const auto r = check(b.run);
  CHECK(r.total_violations() == 0);
  CHECK(r.cs_outside_lease == 0);
}

TEST_CASE("checker: an extend after the validity ended leaves a gap", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 1, 100);
  b.acquire(1, "r", "B", 110, 120, 200);
  b.release(1, "r", "B", 150);
  b.extend(0, "r", "A", 160, 170, 400);  // cannot happen with the library; still sound
  b.release(0, "r", "A", 300);
  CHECK(check(b.run).total_violations() == 0);
}

TEST_CASE("checker: node findings are violations", "[torture][checker]") {
  builder b;
  b.run.checks.push_back({1, "scan", 0, {}, 3, {}});
  b.run.checks.push_back({2, "no-ttl", 1, "torture:r0", -1, {}});
  b.run.checks.push_back({3, "no-ttl", 1, "torture:r0", -1, {}});  // the same key, seen again
  b.run.checks.push_back({3, "leftover", 2, "torture:r1", 512, {}});
  const auto r = check(b.run);
  CHECK(r.ttl_scans == 1);
  CHECK(r.count(violation_kind::no_ttl_key) == 1);
  CHECK(r.count(violation_kind::leftover_key) == 1);
}

TEST_CASE("checker: liveness before and after the heal", "[torture][checker]") {
  builder b;
  b.acquire(0, "a", "T1", 0, 2, 100);  // 2 ms
  b.acquire_failed(0, "b", 10, 20);
  b.acquire(0, "c", "T2", 30, 34, 100);  // 4 ms
  b.run.faults.push_back({100 * ms, "heal-all", -1, {}});
  b.acquire(1, "d", "T3", 200, 201, 300);  // 1 ms
  b.fault(150, "pause", 0);
  b.run.faults.push_back({160 * ms, "heal", 0, "pause: resumed"});
  const auto r = check(b.run);
  CHECK(r.during_faults.attempts == 3);
  CHECK(r.during_faults.ok == 2);
  CHECK(r.during_faults.success_rate == Approx(2.0 / 3));
  CHECK(r.during_faults.p50_ms == Approx(2));
  CHECK(r.during_faults.p99_ms == Approx(4));
  CHECK(r.after_heal.attempts == 1);
  CHECK(r.after_heal.success_rate == Approx(1));
  CHECK(r.after_heal.p99_ms == Approx(1));
  CHECK(r.acquire.failed == 1);
  CHECK(r.acquire.errors.at("not_acquired") == 1);
  CHECK(r.during_faults.refused == 1);
  CHECK(r.during_faults.unavailable_rate == 0);
  CHECK(r.faults_injected == 1);  // the pause; not its heal, not the markers
}

TEST_CASE("checker: percentile is nearest-rank", "[torture][checker]") {
  CHECK(percentile({}, 50) == 0);
  CHECK(percentile({5}, 99) == 5);
  CHECK(percentile({4, 1, 3, 2}, 50) == 2);
  CHECK(percentile({4, 1, 3, 2}, 99) == 4);
  CHECK(percentile({4, 1, 3, 2}, 0) == 1);
}

TEST_CASE("checker: histories survive the trip through files", "[torture][checker]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("redlock-torture-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    history_writer a(dir, 0);
    history_writer b(dir, 1);
    event e;
    e.worker = 5;
    e.op = op_kind::acquire;
    e.type = event_type::invoke;
    e.t = 1'000 * ms;
    e.res = "r";
    e.ttl_ms = 500;
    a.record(e);
    e.type = event_type::ok;
    e.t = 1'010 * ms;
    e.token = "00ff";
    e.deadline = 1'400 * ms;
    a.record(e);
    event f;
    f.op = op_kind::acquire;
    f.type = event_type::fail;
    f.t = 1'020 * ms;
    f.res = "r";
    f.err = "said \"no\"\n";
    b.record(f);
    jsonl_file faults(fault_log_path(dir));
    faults.write(to_json(fault_event{990 * ms, "start", -1, {}}));
    faults.write(to_json(fault_event{1'005 * ms, "kill", 3, "restart after 2250 ms"}));
    jsonl_file checks(check_log_path(dir));
    checks.write(to_json(check_event{2'000 * ms, "register", -1, "r", 7, {}}));
    checks.write(to_json(check_event{2'100 * ms, "key", 4, "torture:r", 900, "00ff"}));
  }
  const auto run = load_run(dir);
  std::filesystem::remove_all(dir);
  REQUIRE(run.events.size() == 3);
  CHECK(run.events[0].proc == 0);
  CHECK(run.events[0].worker == 5);
  CHECK(run.events[0].ttl_ms == 500);
  CHECK(run.events[1].type == event_type::ok);
  CHECK(run.events[1].token == "00ff");
  CHECK(run.events[1].deadline == 1'400 * ms);
  CHECK(run.events[2].proc == 1);
  CHECK(run.events[2].worker == 0);
  CHECK(run.events[2].err == "said \"no\"\n");
  REQUIRE(run.faults.size() == 2);
  CHECK(run.faults[1].node == 3);
  CHECK(run.faults[1].detail == "restart after 2250 ms");
  CHECK(run.marker("start") == 990 * ms);
  REQUIRE(run.checks.size() == 2);
  CHECK(run.checks[0].value == 7);
  CHECK(run.checks[1].token == "00ff");
  CHECK(run.checks[1].node == 4);
}

TEST_CASE("checker: workers of one process are followed apart", "[torture][checker]") {
  builder b;
  // Two workers of process 0 interleave; a third one's acquire fails.
  b.invoke(0, 1, op_kind::acquire, 0, "r");
  b.invoke(0, 2, op_kind::acquire, 1, "r");
  b.invoke(0, 3, op_kind::acquire, 1, "s");
  b.done(0, 1, op_kind::acquire, event_type::ok, 4, "r", "A").deadline = 500 * ms;
  b.done(0, 3, op_kind::acquire, event_type::fail, 6, "s").err = "not_acquired";
  b.invoke(0, 1, op_kind::release, 10, "r", "A");
  b.done(0, 1, op_kind::release, event_type::ok, 11, "r", "A");
  b.done(0, 2, op_kind::acquire, event_type::ok, 12, "r", "B").deadline = 500 * ms;
  b.invoke(0, 2, op_kind::release, 20, "r", "B");
  b.done(0, 2, op_kind::release, event_type::ok, 21, "r", "B");
  const auto r = check(b.run);
  CHECK(r.total_violations() == 0);
  CHECK(r.notes.empty());  // every invoke found its completion
  CHECK(r.leases == 2);
  CHECK(r.during_faults.p99_ms == Approx(11));  // worker 2: invoked at 1, ok at 12
  CHECK(r.during_faults.refused == 1);

  SECTION("an overlap between two workers of one process names both") {
    builder c;
    c.invoke(0, 1, op_kind::acquire, 0, "r");
    c.done(0, 1, op_kind::acquire, event_type::ok, 4, "r", "A").deadline = 500 * ms;
    c.invoke(0, 2, op_kind::acquire, 1, "r");
    c.done(0, 2, op_kind::acquire, event_type::ok, 6, "r", "B").deadline = 500 * ms;
    const auto overlap = check(c.run);
    REQUIRE(overlap.count(violation_kind::lease_overlap) == 1);
    const auto& what = overlap.violations.front().what;
    CHECK(what.find("proc 0 worker 1") != std::string::npos);
    CHECK(what.find("proc 0 worker 2") != std::string::npos);
  }
}

TEST_CASE("checker: a success without a token or a validity is bogus", "[torture][checker]") {
  SECTION("empty token") {
    builder b;
    b.acquire(0, "r", "", 0, 5, 500);
    const auto r = check(b.run);
    CHECK(r.count(violation_kind::bogus_success) == 1);
    CHECK(r.total_violations() == 1);
    CHECK(r.leases == 0);
  }
  SECTION("epoch validity deadline") {
    builder b;
    b.acquire(0, "r", "A", 0, 5, 0);
    b.release(0, "r", "A", 10);
    const auto r = check(b.run);
    REQUIRE(r.count(violation_kind::bogus_success) == 1);
    CHECK(r.violations.front().what.find("validity deadline of 0") != std::string::npos);
  }
  SECTION("both") {
    builder b;
    b.acquire(0, "r", "", 0, 5, 0);
    const auto r = check(b.run);
    REQUIRE(r.count(violation_kind::bogus_success) == 1);
    CHECK(r.violations.front().what.find("an empty token and a validity deadline") !=
          std::string::npos);
  }
  SECTION("an extend reporting an epoch deadline") {
    builder b;
    b.acquire(0, "r", "A", 0, 5, 500);
    b.extend(0, "r", "A", 10, 12, 0);
    b.release(0, "r", "A", 20);
    const auto r = check(b.run);
    CHECK(r.count(violation_kind::bogus_success) == 1);
    CHECK(r.total_violations() == 1);
  }
  SECTION("failures carry no token and are not bogus") {
    builder b;
    b.acquire_failed(0, "r", 0, 5);
    CHECK(check(b.run).total_violations() == 0);
  }
}

TEST_CASE("checker: a critical section given up wrote nothing", "[torture][checker]") {
  builder b;
  b.acquire(0, "r", "A", 0, 1, 100);
  b.cs(0, "r", "A", 2, 5, 0);
  b.invoke(0, 0, op_kind::cs, 6, "r", "A");
  b.done(0, 0, op_kind::cs, event_type::fail, 8, "r", "A").err = std::string(given_up_section);
  b.release(0, "r", "A", 9);
  b.acquire(1, "r", "B", 10, 11, 100);
  b.cs(1, "r", "B", 12, 15, 1);
  b.release(1, "r", "B", 16);
  b.final_register("r", 2);
  const auto r = check(b.run);
  CHECK(r.total_violations() == 0);
  CHECK(r.cs.failed == 1);
  CHECK(r.notes.empty());  // the register was checked

  SECTION("a section that failed on the store leaves the register unchecked") {
    b.run.events[5].err = "store gone";
    b.run.checks.clear();
    b.final_register("r", 7);
    const auto unsure = check(b.run);
    CHECK(unsure.count(violation_kind::lost_update) == 0);
    REQUIRE(unsure.notes.size() == 1);
    CHECK(unsure.notes.front().find("register not checked") != std::string::npos);
  }
}

TEST_CASE("checker: votes of failed attempts left on a healthy node", "[torture][checker]") {
  builder b;
  b.invoke(0, 0, op_kind::acquire, 0, "r").ttl_ms = 3000;
  b.done(0, 0, op_kind::acquire, event_type::fail, 20, "r").err = "not_acquired";
  b.acquire(1, "r", "HELD", 0, 2, 2500);
  b.release(1, "r", "HELD", 2400);

  SECTION("seen for longer than the grace: a violation") {
    b.key_seen(100, 2, "torture:r", "LOST");
    b.key_seen(600, 2, "torture:r", "LOST");
    b.key_seen(1200, 2, "torture:r", "LOST");
    const auto r = check(b.run);
    REQUIRE(r.count(violation_kind::orphaned_votes) == 1);
    CHECK(r.total_violations() == 1);
    const auto& v = r.violations.front();
    CHECK(v.what.find("node 2") != std::string::npos);
    CHECK(v.what.find("3 scans") != std::string::npos);
  }
  SECTION("each node's key is judged apart") {
    b.key_seen(100, 2, "torture:r", "LOST");
    b.key_seen(100, 3, "torture:r", "LOST");
    b.key_seen(1200, 2, "torture:r", "LOST");
    b.key_seen(1200, 3, "torture:r", "LOST");
    CHECK(check(b.run).count(violation_kind::orphaned_votes) == 2);
  }
  SECTION("gone within the grace: no violation") {
    b.key_seen(100, 2, "torture:r", "LOST");
    b.key_seen(600, 2, "torture:r", "LOST");
    CHECK(check(b.run).total_violations() == 0);
  }
  SECTION("the key of a lock that was acquired is no orphan, however long it stays") {
    b.key_seen(100, 2, "torture:r", "HELD");
    b.key_seen(2300, 2, "torture:r", "HELD");
    CHECK(check(b.run).total_violations() == 0);
  }
  SECTION("a fault on the node around the sightings excuses it") {
    b.fault(50, "reset-connections", 2);
    b.run.faults.push_back({550 * ms, "heal", 2, "reset-connections: reconnected"});
    b.key_seen(600, 2, "torture:r", "LOST");
    b.key_seen(1700, 2, "torture:r", "LOST");
    const auto r = check(b.run);
    CHECK(r.total_violations() == 0);
    CHECK(r.orphans_near_faults == 1);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes.front().find("nodes faulted around them") != std::string::npos);
  }
  SECTION("a fault healed more than a maximum TTL before does not") {
    b.fault(50, "pause", 2);
    b.run.faults.push_back({100 * ms, "heal", 2, "pause: resumed"});
    b.key_seen(4200, 2, "torture:r", "LOST");  // > 100 ms + 3000 ms TTL + 1 s slack
    b.key_seen(5300, 2, "torture:r", "LOST");
    CHECK(check(b.run).count(violation_kind::orphaned_votes) == 1);
  }
  SECTION("nor does a fault on another node") {
    b.fault(50, "kill", 3);
    b.key_seen(100, 2, "torture:r", "LOST");
    b.key_seen(1200, 2, "torture:r", "LOST");
    CHECK(check(b.run).count(violation_kind::orphaned_votes) == 1);
  }
  SECTION("one heal ends every fault of its node") {
    b.fault(50, "reply-delay", 2);
    b.fault(50, "request-delay", 2);
    b.run.faults.push_back({60 * ms, "heal", 2, "request-delay: no request delay"});
    b.run.faults.push_back({60 * ms, "heal", 2, "reply-delay: no reply delay"});
    b.key_seen(4200, 2, "torture:r", "LOST");  // > 60 ms + 3000 ms TTL + 1 s slack
    b.key_seen(5300, 2, "torture:r", "LOST");
    CHECK(check(b.run).count(violation_kind::orphaned_votes) == 1);
  }
  SECTION("a fault without a heal lasts to the end") {
    b.fault(50, "clock-jump", 2);
    b.key_seen(9000, 2, "torture:r", "LOST");
    b.key_seen(9900 + 1200, 2, "torture:r", "LOST");
    CHECK(check(b.run).total_violations() == 0);
  }
}

TEST_CASE("checker: violation kinds by name", "[torture][checker]") {
  for (const auto kind : all_violation_kinds) CHECK(parse_violation_kind(name(kind)) == kind);
  CHECK(name(violation_kind::bogus_success) == "bogus_success");
  CHECK(name(violation_kind::orphaned_votes) == "orphaned_votes");
  CHECK_FALSE(parse_violation_kind("overlap").has_value());
}

TEST_CASE("checker: an expected kind must be found, not just any violation", "[torture][checker]") {
  builder b;  // two holders at once: every overlap kind but no lost update on record
  b.acquire(0, "r", "A", 0, 1, 1000);
  b.acquire(1, "r", "B", 0, 2, 1000);
  const auto r = check(b.run);
  REQUIRE(r.count(violation_kind::lease_overlap) == 1);
  run_description d;
  d.expected = {violation_kind::lease_overlap};
  CHECK(as_expected(r, d));
  CHECK(missing_kinds(r, d).empty());
  d.expected = {violation_kind::lease_overlap, violation_kind::orphaned_votes};
  CHECK_FALSE(as_expected(r, d));
  CHECK(missing_kinds(r, d) == std::vector{violation_kind::orphaned_votes});
  const auto text = summary_text(r, d, false);
  CHECK(text.find("expected violation kind orphaned_votes not found") != std::string::npos);
  d.expected.clear();
  CHECK_FALSE(as_expected(r, d));  // without expectations, any violation fails
}

TEST_CASE("checker: workers of one process share its history file", "[torture][checker]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("redlock-torture-threads-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  constexpr int workers = 4;
  constexpr int per_worker = 500;
  {
    history_writer file(dir, 3);
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&file, w] {
        worker_history history(file, w);
        for (int i = 0; i < per_worker; ++i) {
          event e;
          e.op = op_kind::acquire;
          e.type = event_type::invoke;
          e.t = i;
          e.res = "r";
          history.record(e);
        }
      });
    }
    for (auto& t : threads) t.join();
    file.flush();
  }
  const auto run = load_run(dir);
  std::filesystem::remove_all(dir);
  REQUIRE(run.events.size() == workers * per_worker);
  std::map<int, std::int64_t> next;  // each worker's events stay in its order
  for (const auto& e : run.events) {
    CHECK(e.proc == 3);
    CHECK(e.t == next[e.worker]++);
  }
  CHECK(next.size() == workers);
}

// The fenced register under client pauses (Jepsen's FencedMutex model):
// A is stopped past its validity between its read and its write; B takes
// the lock with a larger fence and writes.
TEST_CASE("checker: a paused holder's refused write is no violation", "[torture][checker][fence]") {
  builder b;
  b.fenced_acquire(0, "r", "A", 0, 1, 100, 7);
  b.fault(5, "pause-client", -1);
  b.acquire(1, "r", "B", 101, 120, 1000);
  b.run.events.back().fence = 8;
  b.fenced_cs(1, "r", "B", 121, 150, 200, 0, 8, true);
  b.refused_cs(0, "r", "A", 10, 300, 301, 7);  // A resumes; the store refuses its write
  b.release(1, "r", "B", 201);
  b.release(0, "r", "A", 302);
  b.final_register("r", 1);
  const auto r = check(b.run);
  CHECK(r.total_violations() == 0);
  CHECK(r.fenced_acquires == 2);
  CHECK(r.fenced_writes_accepted == 1);
  CHECK(r.stale_writes_refused == 1);
  CHECK(r.stale_writes_accepted == 0);
  CHECK(r.client_pauses == 1);
}

TEST_CASE("checker: a paused holder's plain write is a stale write", "[torture][checker][fence]") {
  builder b;
  b.fenced_acquire(0, "r", "A", 0, 1, 100, 7);
  b.fault(5, "pause-client", -1);
  b.fenced_acquire(1, "r", "B", 101, 120, 1000, 8);
  b.fenced_cs(1, "r", "B", 121, 150, 200, 0, 8, false);
  b.fenced_cs(0, "r", "A", 10, 300, 301, 0, 7, false);  // written plainly: overwrites B's
  b.release(1, "r", "B", 201);
  b.release(0, "r", "A", 302);
  b.final_register("r", 1);
  const auto r = check(b.run);
  CHECK(r.count(violation_kind::stale_write) == 1);
  CHECK(r.stale_writes_accepted == 1);
  CHECK(r.count(violation_kind::lost_update) >= 1);
  CHECK(r.count(violation_kind::fence_order) == 0);
}

TEST_CASE("checker: a stale write the resource accepted is flagged", "[torture][checker][fence]") {
  builder b;
  b.fenced_acquire(0, "r", "A", 0, 1, 100, 7);
  b.fenced_acquire(1, "r", "B", 101, 120, 1000, 8);
  b.fenced_cs(1, "r", "B", 121, 150, 200, 0, 8, true);
  // A broken resource let A's late write through: fence 7 after fence 8.
  b.fenced_cs(0, "r", "A", 201, 300, 301, 1, 7, true);
  b.release(1, "r", "B", 202);
  b.release(0, "r", "A", 302);
  b.final_register("r", 2);
  const auto r = check(b.run);
  REQUIRE(r.count(violation_kind::stale_write) == 1);
  CHECK(r.violations.front().what.find("fence 7") != std::string::npos);
  CHECK(r.count(violation_kind::lost_update) == 0);
  CHECK(r.count(violation_kind::cs_overlap) == 0);
}

TEST_CASE("checker: an equal fence is accepted only for the same token",
          "[torture][checker][fence]") {
  SECTION("the same hold writes twice") {
    builder b;
    b.fenced_acquire(0, "r", "A", 0, 1, 500, 3);
    b.fenced_cs(0, "r", "A", 2, 5, 10, 0, 3, true);
    b.fenced_cs(0, "r", "A", 11, 15, 20, 1, 3, true);
    b.release(0, "r", "A", 21);
    b.final_register("r", 2);
    CHECK(check(b.run).total_violations() == 0);
  }
  SECTION("another holder with the same fence") {
    builder b;
    b.fenced_acquire(0, "r", "A", 0, 10, 100, 3);
    b.fenced_cs(0, "r", "A", 11, 12, 15, 0, 3, true);
    b.release(0, "r", "A", 16);
    b.fenced_acquire(1, "r", "B", 5, 20, 300, 3);  // overlapping acquires: equal fences
    b.fenced_cs(1, "r", "B", 21, 25, 30, 1, 3, true);
    b.release(1, "r", "B", 31);
    b.final_register("r", 2);
    const auto r = check(b.run);
    CHECK(r.count(violation_kind::stale_write) == 1);
    CHECK(r.count(violation_kind::fence_order) == 0);  // B began before A completed
  }
}

TEST_CASE("checker: fences of acquires in real-time order must grow (P)",
          "[torture][checker][fence]") {
  SECTION("a later acquire with a smaller fence") {
    builder b;
    b.fenced_acquire(0, "r", "A", 0, 10, 100, 5);
    b.release(0, "r", "A", 20);
    b.fenced_acquire(1, "r", "B", 30, 40, 200, 5);
    b.release(1, "r", "B", 50);
    b.fenced_acquire(0, "r", "C", 60, 70, 300, 4);
    b.release(0, "r", "C", 80);
    const auto r = check(b.run);
    CHECK(r.count(violation_kind::fence_order) == 2);  // B (equal) and C (smaller)
  }
  SECTION("overlapping acquires are not ordered") {
    builder b;
    b.fenced_acquire(0, "r", "A", 0, 10, 100, 6);
    b.fenced_acquire(1, "r", "B", 5, 150, 300, 5);  // began before A completed
    b.release(0, "r", "A", 20);
    b.release(1, "r", "B", 160);
    CHECK(check(b.run).count(violation_kind::fence_order) == 0);
  }
  SECTION("other resources are not compared") {
    builder b;
    b.fenced_acquire(0, "r", "A", 0, 10, 100, 6);
    b.fenced_acquire(1, "s", "B", 20, 30, 300, 1);
    CHECK(check(b.run).count(violation_kind::fence_order) == 0);
  }
}

TEST_CASE("checker: fence-checked sections overlapping in time are judged by their fences",
          "[torture][checker][fence]") {
  builder b;
  b.fenced_acquire(0, "r", "A", 0, 1, 100, 1);
  b.fenced_acquire(1, "r", "B", 101, 110, 400, 2);
  // A was stopped after its write was accepted, before it recorded the ok.
  b.fenced_cs(0, "r", "A", 2, 5, 200, 0, 1, true);
  b.fenced_cs(1, "r", "B", 111, 115, 120, 1, 2, true);
  b.release(0, "r", "A", 201);
  b.release(1, "r", "B", 121);
  b.final_register("r", 2);
  const auto r = check(b.run);
  CHECK(r.total_violations() == 0);
}
