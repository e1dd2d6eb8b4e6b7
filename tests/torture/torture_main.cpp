// redlock-torture: runs Redlock clients against five local Redis nodes under
// injected faults, records every operation, and checks mutual exclusion.
// See --help (parse_command_line below) and tests/torture/CMakeLists.txt for
// the CI runs.
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

#include "args/options.hpp"

#include <fmt/format.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace redlock::torture;
using namespace std::chrono_literals;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;
namespace args = redlock::args;

constexpr int exit_as_expected = 0;
constexpr int exit_unexpected = 1;
constexpr int exit_error = 2;

constexpr double drift_factor = 0.01;  // the clients' default
constexpr std::size_t lock_nodes = 5;

// Help texts, wrapped for a terminal: CLI11 prints them as they are.
constexpr auto description =
    "Runs K client processes, each with one Redlock client shared by W concurrent\n"
    "workers, against 5 local redis-server lock nodes (each behind a fault proxy)\n"
    "under a seeded random fault schedule that keeps the Redlock assumptions, or\n"
    "under a targeted plan, or runs one deterministic scenario; records every\n"
    "operation and checks lease exclusion, critical-section overlap, lost updates\n"
    "on a protected register, bogus successes, lock keys without TTL, votes of\n"
    "failed attempts left on healthy nodes and lock keys left after the heal.\n";

constexpr auto footer =
    "Output: a summary, then one JSON line with every figure (the last line).\n"
    "Exit status: 0 as expected (no violation, or with --expect-violation every\n"
    "kind named found), 1 not as expected, 2 bad command line or the test setup\n"
    "failed.";

struct options {
  // controller
  std::filesystem::path out;
  std::optional<int> clients;
  std::optional<int> workers_per_client;
  std::optional<int> resources;
  std::optional<milliseconds> duration;
  std::optional<std::uint64_t> seed;
  std::string persistence = "none";
  std::string plan;
  std::string scenario;
  std::vector<std::string> broken;
  std::vector<violation_kind> expected;
  std::size_t min_acquisitions = 0;
  std::size_t min_refused_writes = 0;
  std::optional<std::filesystem::path> check_only;
  // worker
  bool worker = false;
  int proc = 0;
  std::vector<std::uint16_t> node_ports;
  std::uint16_t store_port = 0;
};

/// Accepts the names `known` accepts; refuses others, pointing at `list_flag`.
CLI::Validator known_name(std::string what, std::string list_flag,
                          std::function<bool(std::string_view)> known) {
  return CLI::Validator(
      [what, list_flag, known](const std::string& name) {
        return known(name) ? std::string()
                           : fmt::format("unknown {} '{}'; {} lists them", what, name, list_flag);
      },
      "");
}

/// Parses the command line into `opt`. Returns the exit status when the
/// program is to stop now (after --help, a list, or a usage error).
std::optional<int> parse_command_line(int argc, char** argv, options& opt) {
  CLI::App app{description, "redlock-torture"};
  app.footer(footer);

  app.add_option("--out", opt.out,
                 "Run directory: histories, fault and check logs (client-*.jsonl, faults.jsonl, "
                 "checks.jsonl, *.log); required unless --check")
      ->type_name("DIR");
  app.add_option("--clients", opt.clients, "Client processes (default 4, or the plan's)")
      ->check(CLI::Range(1, 64));
  app.add_option("--workers-per-client", opt.workers_per_client,
                 "Concurrent workers sharing each process's client (default 8, or the plan's)")
      ->check(CLI::Range(1, 256));
  app.add_option("--resources", opt.resources, "Resources r0..r(R-1) (default 3, or the plan's)")
      ->check(CLI::Range(1, 10000));
  milliseconds duration{0};
  auto* duration_option =
      args::add_duration(app, "--duration", duration,
                         "Time of faults before the heal phase, 1s to 7 days (default 60s, or "
                         "the plan's)")
          ->default_str("");
  app.add_option("--seed", opt.seed,
                 "Seed of the schedule and the clients (default: random, printed)")
      ->check(CLI::Range(std::uint64_t{0},
                         static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
  app.add_option("--persistence", opt.persistence,
                 "none: lock nodes without persistence (killed nodes come back after the max "
                 "TTL); always: appendfsync always (killed nodes restart at once)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "always"}));
  auto* plan_option =
      app.add_option("--plan", opt.plan,
                     "Run a targeted plan instead of the random schedule (see --list-plans)")
          ->type_name("NAME")
          ->check(known_name("plan", "--list-plans",
                             [](std::string_view name) { return find_plan(name) != nullptr; }));
  app.add_option("--scenario", opt.scenario,
                 "Run a deterministic scenario instead (see --list-scenarios); the scenario sets "
                 "the persistence itself")
      ->type_name("NAME")
      ->check(known_name("scenario", "--list-scenarios",
                         [](std::string_view name) { return find_scenario(name) != nullptr; }))
      ->excludes(plan_option);
  app.add_option("--break", opt.broken,
                 "Switch on one of the library's deliberate defects in every client (negative "
                 "control; repeatable)")
      ->allow_extra_args(false)
      ->check(CLI::IsMember(std::vector<std::string>(negative_control_names().begin(),
                                                     negative_control_names().end())));
  std::vector<std::string> expected_kinds;
  std::vector<std::string> kind_names;
  for (const auto kind : all_violation_kinds) kind_names.emplace_back(name(kind));
  app.add_option("--expect-violation", expected_kinds,
                 "Succeed only if the checker finds a violation of this kind (repeatable: every "
                 "kind must be found)")
      ->allow_extra_args(false)
      ->check(CLI::IsMember(kind_names));
  // The old spelling, unlisted: say what replaced it.
  auto* replaced_option = app.add_option("--expect-violations")->expected(0, 1)->group("");
  app.add_option("--min-acquisitions", opt.min_acquisitions,
                 "Fail unless at least N acquires succeeded")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 40));
  app.add_option("--min-refused-writes", opt.min_refused_writes,
                 "Fail unless the resource's fence check refused at least N stale writes")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 40));
  app.add_option("--check", opt.check_only, "Only check an existing run directory")
      ->type_name("DIR");
  bool list_scenarios = false;
  bool list_plans = false;
  app.add_flag("--list-scenarios", list_scenarios, "List the scenarios and exit");
  app.add_flag("--list-plans", list_plans, "List the plans and exit");

  // Listed apart: the controller starts each client process with these.
  const std::string internal = "Internal (how the program starts its client processes)";
  app.add_flag("--worker", opt.worker, "Run as one client process")->group(internal);
  app.add_option("--proc", opt.proc, "The process's number, as in client-N.jsonl")
      ->group(internal)
      ->check(CLI::Range(0, 1000));
  app.add_option("--nodes", opt.node_ports, "Ports of the lock nodes' proxies on 127.0.0.1")
      ->group(internal)
      ->type_name("PORT[,PORT...]")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::Range(1, 65535));
  app.add_option("--store", opt.store_port, "Port of the protected registers' store on 127.0.0.1")
      ->group(internal)
      ->type_name("PORT")
      ->check(CLI::Range(1, 65535));

  if (const auto exit_status = args::parse(app, argc, argv)) return exit_status;

  if (list_scenarios) {
    for (const auto& s : all_scenarios()) {
      fmt::print("{:<30} {:<6} {}\n", s.name, s.breaks_assumption ? "breaks" : "safe",
                 s.description);
    }
    return exit_as_expected;
  }
  if (list_plans) {
    for (const auto& p : all_plans()) fmt::print("{:<18} {}\n", p.name, p.description);
    return exit_as_expected;
  }
  if (replaced_option->count() > 0) {
    return args::usage_error(app,
                             "--expect-violations was replaced by --expect-violation KIND (the "
                             "kind that must be found; repeatable)");
  }
  if (duration_option->count() > 0) {
    if (duration < 1s || duration > 7 * 24h) {
      return args::usage_error(app, "--duration must be between 1s and 7 days (168h)");
    }
    opt.duration = duration;
  }
  for (const auto& kind : expected_kinds) opt.expected.push_back(*parse_violation_kind(kind));
  if (opt.worker) {
    if (opt.node_ports.empty() || opt.store_port == 0 || opt.out.empty() || !opt.seed) {
      return args::usage_error(app, "--worker needs --nodes, --store, --out and --seed");
    }
  } else if (!opt.check_only && opt.out.empty()) {
    return args::usage_error(app, "--out DIR is required");
  }
  return std::nullopt;
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

// Stops a random client process (SIGSTOP: every worker of it, mid-operation
// or not) for a random time, resumes it (SIGCONT), waits a little, and so
// on until told to stop; a pause under way always ends with its SIGCONT.
// Logs "pause-client" and "heal" with node -1.
void pause_clients(std::stop_token stop, worker_pool& workers, torture_cluster& cluster,
                   std::pair<milliseconds, milliseconds> length, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto between = [&rng](milliseconds low, milliseconds high) {
    return milliseconds(std::uniform_int_distribution<long long>(low.count(), high.count())(rng));
  };
  std::mutex mutex;
  std::condition_variable_any wake;
  const auto idle = [&](milliseconds time) {
    std::unique_lock guard(mutex);
    wake.wait_for(guard, stop, time, [] { return false; });
    return !stop.stop_requested();
  };
  // Not before the fencing state of fresh nodes is bootstrapped (plans.cpp).
  if (!idle(3000ms)) return;
  while (idle(between(200ms, 1000ms))) {
    const auto k = std::uniform_int_distribution<std::size_t>(0, workers.size() - 1)(rng);
    const auto pause = between(length.first, length.second);
    workers.signal(k, SIGSTOP);
    cluster.log_fault("pause-client", -1,
                      fmt::format("client process {} stopped for {} ms", k, pause.count()));
    std::this_thread::sleep_for(pause);
    workers.signal(k, SIGCONT);
    cluster.log_fault("heal", -1, fmt::format("client process {} continued", k));
  }
}

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
  /// SIGSTOP of client processes: each for first .. second (none if 0).
  std::pair<milliseconds, milliseconds> client_pause{};
};

run_setup random_setup(const options& opt, std::uint64_t seed) {
  run_setup setup;
  setup.durable = opt.persistence == "always";
  setup.length = opt.duration.value_or(60s);
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

run_setup plan_setup(const options& opt, const plan_info& plan, std::uint64_t seed) {
  run_setup setup;
  setup.durable = opt.persistence == "always";
  setup.length = opt.duration.value_or(plan.duration);
  setup.clients = opt.clients.value_or(plan.clients);
  setup.workers_per_client = opt.workers_per_client.value_or(plan.workers_per_client);
  setup.resources = opt.resources.value_or(plan.resources);
  setup.max_ttl = plan.workload.max_ttl;
  setup.faults = plan_faults(plan, setup.length, seed);
  setup.scan_interval = plan.scan_interval;
  setup.proxy_sets = plan.proxy_sets;
  setup.standing_faults = !plan.node_pauses_and_kills;
  setup.client_pause = plan.client_pause;
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
    std::vector<std::string> worker_args = {
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
    if (!opt.plan.empty()) worker_args.insert(worker_args.end(), {"--plan", opt.plan});
    for (const auto& control : opt.broken) {
      worker_args.insert(worker_args.end(), {"--break", control});
    }
    workers.spawn(worker_args);
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

  std::jthread pauser;
  if (setup.client_pause.second.count() > 0) {
    pauser = std::jthread(pause_clients, std::ref(workers), std::ref(cluster), setup.client_pause,
                          seed ^ 0x9e3779b97f4a7c15ULL);
  }
  for (const auto& a : actions) {
    watch.wait_until(start + a.at);
    if (a.heal) {
      cluster.end_fault(a.f->node);
    } else {
      cluster.start_fault(*a.f, setup.standing_faults);
    }
  }
  watch.wait_until(start + setup.length);
  if (pauser.joinable()) {
    pauser.request_stop();
    pauser.join();
  }
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
  d.min_refused_writes = opt.min_refused_writes;
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
      const auto setup =
          plan != nullptr ? plan_setup(opt, *plan, d.seed) : random_setup(opt, d.seed);
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
  if (const auto exit_status = parse_command_line(argc, argv, opt)) return *exit_status;
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
