// redlock-torture: runs Redlock clients against five local Redis nodes under
// injected faults, records every operation, and checks mutual exclusion.
// See usage_text below and tests/torture/CMakeLists.txt for the CI runs.
#include <redlock/redlock.hpp>  // first: <utility> before any Asio header

#include "checker.hpp"
#include "fault_schedule.hpp"
#include "history.hpp"
#include "json_line.hpp"
#include "negative_control.hpp"
#include "plans.hpp"
#include "scenarios.hpp"
#include "summary.hpp"
#include "torture_cluster.hpp"
#include "worker_pool.hpp"
#include "workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace redlock::torture;
using namespace std::chrono_literals;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

constexpr int exit_as_expected = 0;
constexpr int exit_unexpected = 1;
constexpr int exit_error = 2;

constexpr double drift_factor = 0.01;  // the clients' default
constexpr std::size_t lock_nodes = 5;

constexpr std::string_view usage_text =
    R"(usage: redlock-torture --out DIR [options]

Runs K client processes, each with one Redlock client shared by W concurrent
workers, against 5 local redis-server lock nodes (each behind a fault proxy)
under a seeded random fault schedule that keeps the Redlock assumptions, or
under a targeted plan, or runs one deterministic scenario; records every
operation and checks lease exclusion, critical-section overlap, lost updates
on a protected register, bogus successes, lock keys without TTL, votes of
failed attempts left on healthy nodes and lock keys left after the heal.

  --out DIR              run directory: histories, fault and check logs
                         (client-*.jsonl, faults.jsonl, checks.jsonl, *.log)
  --clients K            client processes (default 4, or the plan's)
  --workers-per-client W concurrent workers sharing each process's client
                         (default 8, or the plan's)
  --resources R          resources r0..r(R-1) (default 3, or the plan's)
  --duration S           seconds of faults before the heal phase (default 60,
                         or the plan's)
  --seed N               seed of the schedule and the clients (default: random, printed)
  --persistence none|always
                         lock nodes without persistence (killed nodes come back
                         after the max TTL) or with appendfsync always (killed
                         nodes restart at once); default none
  --plan NAME            run a targeted plan instead of the random schedule
                         (see --list-plans)
  --scenario NAME        run a deterministic scenario instead (see --list-scenarios);
                         the scenario sets the persistence itself
  --break NAME           switch on one of the library's deliberate defects in
                         every client (negative control; repeatable):
                         drop_drift, count_late_votes, skip_undo, settle_twice
  --expect-violation KIND
                         succeed only if the checker finds a violation of this
                         kind (repeatable: every kind must be found); kinds:
                         lease_overlap, cs_overlap, lost_update, no_ttl_key,
                         leftover_key, bogus_success, orphaned_votes
  --min-acquisitions N   fail unless at least N acquires succeeded (default 0)
  --check DIR            only check an existing run directory
  --list-scenarios       list the scenarios and exit
  --list-plans           list the plans and exit
  --help                 this text

Output: a summary, then one JSON line with every figure (the last line).
Exit status: 0 as expected (no violation, or with --expect-violation every
kind named found), 1 not as expected, 2 bad command line or the test setup
failed.
)";

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct options {
  // controller
  std::filesystem::path out;
  std::optional<int> clients;
  std::optional<int> workers_per_client;
  std::optional<int> resources;
  std::optional<long long> duration_s;
  std::optional<std::uint64_t> seed;
  std::string persistence = "none";
  std::string plan;
  std::string scenario;
  std::vector<std::string> broken;
  std::vector<violation_kind> expected;
  std::size_t min_acquisitions = 0;
  std::optional<std::filesystem::path> check_only;
  // worker
  bool worker = false;
  int proc = 0;
  std::vector<std::uint16_t> node_ports;
  std::uint16_t store_port = 0;
};

long long parse_integer(std::string_view flag, std::string_view text, long long min,
                        long long max) {
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
    throw usage_error(fmt::format("{}: '{}' is not an integer", flag, text));
  }
  if (value < min || value > max) {
    throw usage_error(fmt::format("{}: {} is out of range [{}, {}]", flag, text, min, max));
  }
  return value;
}

std::vector<std::uint16_t> parse_ports(std::string_view flag, std::string_view text) {
  std::vector<std::uint16_t> ports;
  for (;;) {
    const auto comma = text.find(',');
    ports.push_back(
        static_cast<std::uint16_t>(parse_integer(flag, text.substr(0, comma), 1, 65535)));
    if (comma == std::string_view::npos) return ports;
    text.remove_prefix(comma + 1);
  }
}

options parse_command_line(int argc, char** argv) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw usage_error(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    const auto flag = [&] {
      if (inline_value) throw usage_error(fmt::format("{} takes no value", arg));
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage_text.data(), stdout);
      std::exit(exit_as_expected);
    } else if (arg == "--list-scenarios") {
      for (const auto& s : all_scenarios()) {
        fmt::print("{:<30} {:<6} {}\n", s.name, s.breaks_assumption ? "breaks" : "safe",
                   s.description);
      }
      std::exit(exit_as_expected);
    } else if (arg == "--list-plans") {
      for (const auto& p : all_plans()) fmt::print("{:<18} {}\n", p.name, p.description);
      std::exit(exit_as_expected);
    } else if (arg == "--out") {
      opt.out = std::string(value());
    } else if (arg == "--clients") {
      opt.clients = static_cast<int>(parse_integer(arg, value(), 1, 64));
    } else if (arg == "--workers-per-client") {
      opt.workers_per_client = static_cast<int>(parse_integer(arg, value(), 1, 256));
    } else if (arg == "--resources") {
      opt.resources = static_cast<int>(parse_integer(arg, value(), 1, 10000));
    } else if (arg == "--duration") {
      opt.duration_s = parse_integer(arg, value(), 1, 7 * 24 * 3600);
    } else if (arg == "--seed") {
      opt.seed = static_cast<std::uint64_t>(
          parse_integer(arg, value(), 0, std::numeric_limits<std::int64_t>::max()));
    } else if (arg == "--persistence") {
      opt.persistence = std::string(value());
      if (opt.persistence != "none" && opt.persistence != "always") {
        throw usage_error("--persistence must be none or always");
      }
    } else if (arg == "--plan") {
      opt.plan = std::string(value());
      if (find_plan(opt.plan) == nullptr) {
        throw usage_error(fmt::format("unknown plan '{}' (see --list-plans)", opt.plan));
      }
    } else if (arg == "--scenario") {
      opt.scenario = std::string(value());
      if (find_scenario(opt.scenario) == nullptr) {
        throw usage_error(
            fmt::format("unknown scenario '{}' (see --list-scenarios)", opt.scenario));
      }
    } else if (arg == "--break") {
      const auto control = value();
      const auto& names = negative_control_names();
      if (std::find(names.begin(), names.end(), control) == names.end()) {
        std::string known;
        for (const auto n : names) known += fmt::format("{}{}", known.empty() ? "" : ", ", n);
        throw usage_error(fmt::format("unknown negative control '{}' ({})", control, known));
      }
      opt.broken.emplace_back(control);
    } else if (arg == "--expect-violation") {
      const auto text = value();
      const auto kind = parse_violation_kind(text);
      if (!kind) throw usage_error(fmt::format("unknown violation kind '{}'", text));
      opt.expected.push_back(*kind);
    } else if (arg == "--expect-violations") {
      throw usage_error(
          "--expect-violations was replaced by --expect-violation KIND (the kind that must be "
          "found; repeatable)");
    } else if (arg == "--min-acquisitions") {
      opt.min_acquisitions = static_cast<std::size_t>(parse_integer(arg, value(), 0, 1LL << 40));
    } else if (arg == "--check") {
      opt.check_only = std::string(value());
    } else if (arg == "--worker") {  // internal: one client process
      flag();
      opt.worker = true;
    } else if (arg == "--proc") {
      opt.proc = static_cast<int>(parse_integer(arg, value(), 0, 1000));
    } else if (arg == "--nodes") {
      opt.node_ports = parse_ports(arg, value());
    } else if (arg == "--store") {
      opt.store_port = static_cast<std::uint16_t>(parse_integer(arg, value(), 1, 65535));
    } else {
      throw usage_error(fmt::format("unknown argument '{}'", arg));
    }
  }
  if (opt.worker) {
    if (opt.node_ports.empty() || opt.store_port == 0 || opt.out.empty() || !opt.seed) {
      throw usage_error("--worker needs --nodes, --store, --out and --seed");
    }
  } else if (!opt.check_only && opt.out.empty()) {
    throw usage_error("--out DIR is required");
  }
  if (!opt.plan.empty() && !opt.scenario.empty()) {
    throw usage_error("--plan and --scenario exclude each other");
  }
  return opt;
}

// Removes the files of an earlier run (only those this program writes), so
// that they cannot mix with this one.
void prepare_out_dir(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto file = entry.path().filename().string();
    const bool ours =
        file == "faults.jsonl" || file == "checks.jsonl" ||
        (file.starts_with("client-") && (file.ends_with(".jsonl") || file.ends_with(".log")));
    if (ours && entry.is_regular_file()) std::filesystem::remove(entry.path());
  }
}

std::string join_ports(const std::vector<std::uint16_t>& ports) {
  std::string text;
  for (const auto p : ports) text += fmt::format("{}{}", text.empty() ? "" : ",", p);
  return text;
}

std::vector<std::string> resource_names(int resources) {
  std::vector<std::string> names;
  for (int r = 0; r < resources; ++r) names.push_back(fmt::format("r{}", r));
  return names;
}

// Scans the nodes' lock keys periodically while the controller waits, and
// notices a worker that exits before it was told to.
class watcher {
 public:
  watcher(worker_pool& workers, torture_cluster& cluster, milliseconds scan_interval)
      : workers_(workers),
        cluster_(cluster),
        scan_interval_(scan_interval),
        next_scan_(steady::now() + scan_interval) {}

  /// Throws std::runtime_error if a worker exits early.
  void wait_until(steady::time_point deadline) {
    for (;;) {
      if (auto failure = workers_.watch_until(std::min(deadline, next_scan_))) {
        throw std::runtime_error(*failure);
      }
      const auto now = steady::now();
      if (now >= next_scan_) {
        cluster_.scan_ttls();
        next_scan_ = now + scan_interval_;
      }
      if (now >= deadline) return;
    }
  }

 private:
  worker_pool& workers_;
  torture_cluster& cluster_;
  milliseconds scan_interval_;
  steady::time_point next_scan_;
};

// What the client processes do and under which faults: the random schedule
// or a plan.
struct run_setup {
  std::vector<fault> faults;  ///< By start time.
  milliseconds length{0};     ///< Of the fault phase.
  bool durable = false;
  milliseconds max_ttl{0};  // The longest TTL the clients use.
  milliseconds scan_interval{1000};
  milliseconds settle{0};  ///< Healthy time after the heal (liveness after faults).
  int clients = 0;
  int workers_per_client = 0;
  int resources = 0;
  std::size_t proxy_sets = 1;  ///< Process k uses set k % proxy_sets.
  /// A plan's faults stay for the whole fault phase, several on a node.
  bool standing_faults = false;
};

run_setup random_setup(const options& opt, std::uint64_t seed) {
  run_setup setup;
  setup.durable = opt.persistence == "always";
  setup.length = std::chrono::seconds(opt.duration_s.value_or(60));
  setup.clients = opt.clients.value_or(4);
  setup.workers_per_client = opt.workers_per_client.value_or(8);
  setup.resources = opt.resources.value_or(3);
  setup.max_ttl = workload_profile{}.max_ttl;
  schedule_options sched;
  sched.seed = seed;
  sched.length = setup.length;
  sched.nodes = lock_nodes;
  sched.max_faulted = (lock_nodes - 1) / 2;
  sched.max_ttl = setup.max_ttl;
  sched.drift_factor = drift_factor;
  sched.durable_nodes = setup.durable;
  setup.faults = make_schedule(sched);
  setup.settle = std::max<milliseconds>(3 * setup.max_ttl, 5s);
  return setup;
}

run_setup plan_setup(const options& opt, const plan_info& plan) {
  run_setup setup;
  setup.durable = opt.persistence == "always";
  setup.length = std::chrono::seconds(opt.duration_s.value_or(plan.duration.count()));
  setup.clients = opt.clients.value_or(plan.clients);
  setup.workers_per_client = opt.workers_per_client.value_or(plan.workers_per_client);
  setup.resources = opt.resources.value_or(plan.resources);
  setup.max_ttl = plan.workload.max_ttl;
  setup.faults = plan_faults(plan, setup.length);
  setup.scan_interval = plan.scan_interval;
  setup.proxy_sets = plan.proxy_sets;
  setup.standing_faults = true;
  setup.settle = 1s;
  return setup;
}

// Runs the client processes under `setup`'s faults, heals, lets them go on
// for the settle time, stops them and records what the nodes hold.
// Returns the resources.
std::vector<std::string> run_workers(const options& opt, std::uint64_t seed,
                                     const run_setup& setup) {
  std::map<std::string_view, int> by_kind;
  for (const auto& f : setup.faults) ++by_kind[name(f.kind)];
  std::string kinds;
  for (const auto& [kind, n] : by_kind) kinds += fmt::format(" {}={}", kind, n);
  fmt::print("faults: {} over {} ms, at most {} of {} nodes at once:{}\n", setup.faults.size(),
             setup.length.count(), max_concurrently_faulted(setup.faults), lock_nodes, kinds);

  cluster_options copts;
  copts.nodes = lock_nodes;
  copts.durability =
      setup.durable ? redlock::test::persistence::aof_always : redlock::test::persistence::none;
  schedule_options downtime;
  downtime.max_ttl = setup.max_ttl;
  copts.min_downtime = min_downtime(downtime);
  copts.proxy_sets = setup.proxy_sets;
  torture_cluster cluster(copts, opt.out);
  for (std::size_t set = 0; set < setup.proxy_sets; ++set) {
    fmt::print("lock nodes (proxy set {}): {}\n", set, join_ports(cluster.proxy_ports(set)));
  }
  fmt::print("store: {}\n", cluster.store_port());

  worker_pool workers;
  for (int k = 0; k < setup.clients; ++k) {
    std::vector<std::string> args = {
        "--worker",
        "--proc",
        std::to_string(k),
        "--nodes",
        join_ports(cluster.proxy_ports(static_cast<std::size_t>(k) % setup.proxy_sets)),
        "--store",
        std::to_string(cluster.store_port()),
        "--resources",
        std::to_string(setup.resources),
        "--workers-per-client",
        std::to_string(setup.workers_per_client),
        "--seed",
        std::to_string(seed + 1 + static_cast<std::uint64_t>(k)),
        "--out",
        opt.out.string()};
    if (!opt.plan.empty()) args.insert(args.end(), {"--plan", opt.plan});
    for (const auto& control : opt.broken) args.insert(args.end(), {"--break", control});
    workers.spawn(args);
  }
  cluster.log_fault(
      "start", -1, fmt::format("{} clients x {} workers", setup.clients, setup.workers_per_client));
  const auto start = steady::now();
  watcher watch(workers, cluster, setup.scan_interval);

  // Actions in time order: heals of faults that end within the fault phase, and starts.
  struct action {
    milliseconds at;
    bool heal;
    const fault* f;
  };
  std::vector<action> actions;
  for (const auto& f : setup.faults) {
    actions.push_back({f.start, false, &f});
    if (f.end() < setup.length) actions.push_back({f.end(), true, &f});
  }
  std::stable_sort(actions.begin(), actions.end(), [](const action& a, const action& b) {
    return a.at != b.at ? a.at < b.at : a.heal > b.heal;
  });

  for (const auto& a : actions) {
    watch.wait_until(start + a.at);
    if (a.heal) {
      cluster.end_fault(a.f->node);
    } else {
      cluster.start_fault(*a.f, setup.standing_faults);
    }
  }
  watch.wait_until(start + setup.length);
  fmt::print("fault phase over after {:.1f} s; healing\n",
             std::chrono::duration<double>(steady::now() - start).count());
  cluster.heal_all();
  // Clients keep going for a while with every node healthy: liveness after heal.
  watch.wait_until(steady::now() + setup.settle);
  const auto problems = workers.stop_all(30s);
  cluster.log_fault("end", -1);
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += "\n  " + p;
    throw std::runtime_error("client processes failed:" + text);
  }
  // Every key left by the clients expires within a maximum TTL.
  std::this_thread::sleep_for(setup.max_ttl + 250ms);
  cluster.scan_ttls();
  cluster.scan_leftovers();
  const auto resources = resource_names(setup.resources);
  cluster.record_registers(resources);
  cluster.flush_logs();
  return resources;
}

std::vector<std::string> run_one_scenario(const options& opt, const scenario_info& scenario) {
  cluster_options copts;
  copts.nodes = lock_nodes;
  copts.durability = scenario.durability;
  copts.proxy_sets = 2;
  torture_cluster cluster(copts, opt.out);
  fmt::print("scenario {}: {}\n", scenario.name, scenario.description);
  cluster.log_fault("start", -1, std::string(scenario.name));
  const auto resources = run_scenario(scenario, cluster, opt.out);
  cluster.log_fault("end", -1);
  std::this_thread::sleep_for(scenario.max_ttl + 250ms);
  cluster.scan_ttls();
  cluster.scan_leftovers();
  cluster.record_registers(resources);
  cluster.flush_logs();
  return resources;
}

// Before any client of this process exists: the switches are read by the
// clients' operations.
void switch_on_broken(const std::vector<std::string>& controls) {
  for (const auto& control : controls) break_on_purpose(control);
}

int run_worker(const options& opt) {
  switch_on_broken(opt.broken);
  workload_options w;
  w.proc = opt.proc;
  w.workers = opt.workers_per_client.value_or(8);
  w.node_ports = opt.node_ports;
  w.store_port = opt.store_port;
  w.resources = opt.resources.value_or(3);
  w.seed = *opt.seed;
  w.out_dir = opt.out;
  w.stop_fd = 0;  // stdin: the controller's pipe
  if (!opt.plan.empty()) w.profile = find_plan(opt.plan)->workload;
  return run_workload(w);
}

int controller(const options& opt) {
  const auto started = steady::now();
  run_description d;
  d.persistence = opt.persistence;
  d.broken = opt.broken;
  d.expected = opt.expected;
  d.min_acquisitions = opt.min_acquisitions;
  std::filesystem::path dir = opt.out;

  if (opt.check_only) {
    dir = *opt.check_only;
    d.mode = "check";  // the run's parameters are in its own output, not known here
    d.persistence = "unknown";
  } else {
    d.seed = opt.seed.value_or(std::random_device{}() & 0x7fffffffU);
    prepare_out_dir(dir);
    if (!opt.scenario.empty()) {
      const auto& scenario = *find_scenario(opt.scenario);
      d.mode = "scenario";
      d.scenario = opt.scenario;
      d.clients = 2;
      d.workers_per_client = 1;
      d.resources = 1;
      d.persistence =
          scenario.durability == redlock::test::persistence::aof_always ? "always" : "none";
      fmt::print("redlock-torture: scenario {} ({}), out {}\n", scenario.name,
                 scenario.breaks_assumption ? "breaks an assumption" : "keeps the assumptions",
                 dir.string());
      if (scenario.breaks_assumption == opt.expected.empty()) {
        fmt::print("note: this scenario {}, and {} violation kind is expected\n",
                   scenario.breaks_assumption ? "breaks an assumption" : "keeps the assumptions",
                   opt.expected.empty() ? "no" : "a");
      }
      std::fflush(stdout);
      switch_on_broken(opt.broken);  // the scenario's clients live in this process
      run_one_scenario(opt, scenario);
    } else {
      const plan_info* plan = opt.plan.empty() ? nullptr : find_plan(opt.plan);
      const auto setup = plan != nullptr ? plan_setup(opt, *plan) : random_setup(opt, d.seed);
      d.mode = plan != nullptr ? "plan" : "random";
      d.scenario = opt.plan;
      d.clients = setup.clients;
      d.workers_per_client = setup.workers_per_client;
      d.resources = setup.resources;
      d.duration_s = std::chrono::duration<double>(setup.length).count();
      std::string broken;
      for (const auto& control : opt.broken) broken += " " + control;
      fmt::print(
          "redlock-torture: {}{} seed {} clients {} x {} workers resources {} duration {} s "
          "persistence {}{}, out {}\n",
          plan != nullptr ? "plan " : "random schedule", opt.plan, d.seed, setup.clients,
          setup.workers_per_client, setup.resources, d.duration_s, opt.persistence,
          broken.empty() ? "" : ", BROKEN ON PURPOSE:" + broken, dir.string());
      if (plan != nullptr) fmt::print("plan: {}\n", plan->description);
      fmt::print("replay with: --seed {}\n", d.seed);
      std::fflush(stdout);
      run_workers(opt, d.seed, setup);
    }
  }
  d.out_dir = dir.string();
  const auto run = load_run(dir);
  const auto result = check(run);
  d.elapsed_s = std::chrono::duration<double>(steady::now() - started).count();
  const bool pass = as_expected(result, d);
  fmt::print("{}", summary_text(result, d, pass));
  fmt::print("{}\n", summary_json(result, d, pass));
  return pass ? exit_as_expected : exit_unexpected;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  try {
    opt = parse_command_line(argc, argv);
  } catch (const usage_error& error) {
    fmt::print(stderr, "redlock-torture: {}\n\n{}", error.what(), usage_text);
    return exit_error;
  }
  if (opt.worker) return run_worker(opt);
  try {
    return controller(opt);
  } catch (const std::exception& error) {
    std::fflush(stdout);
    fmt::print(stderr, "redlock-torture: error: {}\n", error.what());
    fmt::print("{{\"tool\":\"redlock-torture\",\"verdict\":\"error\",\"error\":{}}}\n",
               json_quote(error.what()));
    return exit_error;
  }
}
