// redlock-torture: runs Redlock clients against five local Redis nodes under
// injected faults, records every operation, and checks mutual exclusion.
// See usage_text below and tests/torture/CMakeLists.txt for the CI runs.
#include <redlock/redlock.hpp>  // first: <utility> before any Asio header

#include "checker.hpp"
#include "fault_schedule.hpp"
#include "history.hpp"
#include "json_line.hpp"
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

constexpr milliseconds max_ttl{2000};  // the workload's TTLs: 200 .. 2000 ms
constexpr double drift_factor = 0.01;  // the clients' default
constexpr std::size_t lock_nodes = 5;

constexpr std::string_view usage_text =
    R"(usage: redlock-torture --out DIR [options]

Runs K client processes against 5 local redis-server lock nodes (each behind
a fault proxy) under a seeded random fault schedule that keeps the Redlock
assumptions, or runs one deterministic scenario; records every operation and
checks lease exclusion, critical-section overlap, lost updates on a protected
register, lock keys without TTL and lock keys left after the heal.

  --out DIR              run directory: histories, fault and check logs
                         (client-*.jsonl, faults.jsonl, checks.jsonl, *.log)
  --clients K            client processes (default 4)
  --resources R          resources r0..r(R-1) (default 3)
  --duration S           seconds of faults before the heal phase (default 60)
  --seed N               seed of the schedule and the clients (default: random, printed)
  --persistence none|always
                         lock nodes without persistence (killed nodes come back
                         after the max TTL) or with appendfsync always (killed
                         nodes restart at once); default none
  --scenario NAME        run a deterministic scenario instead (see --list-scenarios);
                         the scenario sets the persistence itself
  --expect-violations    succeed only if the checker finds a violation
  --min-acquisitions N   fail unless at least N acquires succeeded (default 0)
  --check DIR            only check an existing run directory
  --list-scenarios       list the scenarios and exit
  --help                 this text

Output: a summary, then one JSON line with every figure (the last line).
Exit status: 0 as expected (no violation, or with --expect-violations at least
one), 1 not as expected, 2 bad command line or the test setup failed.
)";

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct options {
  // controller
  std::filesystem::path out;
  int clients = 4;
  int resources = 3;
  long long duration_s = 60;
  std::optional<std::uint64_t> seed;
  std::string persistence = "none";
  std::string scenario;
  bool expect_violations = false;
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
    } else if (arg == "--out") {
      opt.out = std::string(value());
    } else if (arg == "--clients") {
      opt.clients = static_cast<int>(parse_integer(arg, value(), 1, 64));
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
    } else if (arg == "--scenario") {
      opt.scenario = std::string(value());
      if (find_scenario(opt.scenario) == nullptr) {
        throw usage_error(
            fmt::format("unknown scenario '{}' (see --list-scenarios)", opt.scenario));
      }
    } else if (arg == "--expect-violations") {
      flag();
      opt.expect_violations = true;
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

// Scans the nodes for keys without TTL once a second while the controller
// waits, and notices a worker that exits before it was told to.
class watcher {
 public:
  watcher(worker_pool& workers, torture_cluster& cluster)
      : workers_(workers), cluster_(cluster), next_scan_(steady::now() + scan_interval) {}

  /// Throws std::runtime_error if a worker exits early.
  void wait_until(steady::time_point deadline) {
    for (;;) {
      if (auto failure = workers_.watch_until(std::min(deadline, next_scan_))) {
        throw std::runtime_error(*failure);
      }
      const auto now = steady::now();
      if (now >= next_scan_) {
        cluster_.scan_ttls();
        next_scan_ = now + scan_interval;
      }
      if (now >= deadline) return;
    }
  }

 private:
  static constexpr milliseconds scan_interval{1000};
  worker_pool& workers_;
  torture_cluster& cluster_;
  steady::time_point next_scan_;
};

// The random schedule with K client processes. Returns the resources.
std::vector<std::string> run_random(const options& opt, std::uint64_t seed) {
  const bool durable = opt.persistence == "always";
  schedule_options sched;
  sched.seed = seed;
  sched.length = std::chrono::seconds(opt.duration_s);
  sched.nodes = lock_nodes;
  sched.max_faulted = (lock_nodes - 1) / 2;
  sched.max_ttl = max_ttl;
  sched.drift_factor = drift_factor;
  sched.durable_nodes = durable;
  const auto faults = make_schedule(sched);
  std::map<std::string_view, int> by_kind;
  for (const auto& f : faults) ++by_kind[name(f.kind)];
  std::string kinds;
  for (const auto& [kind, n] : by_kind) kinds += fmt::format(" {}={}", kind, n);
  fmt::print("schedule: {} faults over {} s, at most {} of {} nodes at once:{}\n", faults.size(),
             opt.duration_s, max_concurrently_faulted(faults), lock_nodes, kinds);

  cluster_options copts;
  copts.nodes = lock_nodes;
  copts.durability =
      durable ? redlock::test::persistence::aof_always : redlock::test::persistence::none;
  copts.min_downtime = min_downtime(sched);
  torture_cluster cluster(copts, opt.out);
  fmt::print("lock nodes (proxies): {}; store: {}\n", join_ports(cluster.proxy_ports()),
             cluster.store_port());

  worker_pool workers;
  for (int k = 0; k < opt.clients; ++k) {
    workers.spawn({"--worker", "--proc", std::to_string(k), "--nodes",
                   join_ports(cluster.proxy_ports()), "--store",
                   std::to_string(cluster.store_port()), "--resources",
                   std::to_string(opt.resources), "--seed", std::to_string(seed + 1 + k), "--out",
                   opt.out.string()});
  }
  cluster.log_fault("start", -1, fmt::format("{} clients", opt.clients));
  const auto start = steady::now();
  watcher watch(workers, cluster);

  // Actions in time order: heals of faults that end within the fault phase, and starts.
  struct action {
    milliseconds at;
    bool heal;
    const fault* f;
  };
  std::vector<action> actions;
  for (const auto& f : faults) {
    actions.push_back({f.start, false, &f});
    if (f.end() < sched.length) actions.push_back({f.end(), true, &f});
  }
  std::stable_sort(actions.begin(), actions.end(), [](const action& a, const action& b) {
    return a.at != b.at ? a.at < b.at : a.heal > b.heal;
  });

  for (const auto& a : actions) {
    watch.wait_until(start + a.at);
    if (a.heal) {
      cluster.end_fault(a.f->node);
    } else {
      cluster.start_fault(*a.f);
    }
  }
  watch.wait_until(start + sched.length);
  fmt::print("fault phase over after {:.1f} s; healing\n",
             std::chrono::duration<double>(steady::now() - start).count());
  cluster.heal_all();
  // Clients keep going for a while with every node healthy: liveness after heal.
  const auto settle = std::max<milliseconds>(3 * max_ttl, 5s);
  watch.wait_until(steady::now() + settle);
  const auto problems = workers.stop_all(30s);
  cluster.log_fault("end", -1);
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += "\n  " + p;
    throw std::runtime_error("client processes failed:" + text);
  }
  // Every key left by the clients expires within a maximum TTL.
  std::this_thread::sleep_for(max_ttl + 250ms);
  cluster.scan_ttls();
  cluster.scan_leftovers();
  const auto resources = resource_names(opt.resources);
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

int run_worker(const options& opt) {
  workload_options w;
  w.proc = opt.proc;
  w.node_ports = opt.node_ports;
  w.store_port = opt.store_port;
  w.resources = opt.resources;
  w.seed = *opt.seed;
  w.out_dir = opt.out;
  w.stop_fd = 0;  // stdin: the controller's pipe
  w.max_ttl = max_ttl;
  return run_workload(w);
}

int controller(const options& opt) {
  const auto started = steady::now();
  run_description d;
  d.clients = opt.clients;
  d.resources = opt.resources;
  d.duration_s = static_cast<double>(opt.duration_s);
  d.persistence = opt.persistence;
  d.expect_violations = opt.expect_violations;
  d.min_acquisitions = opt.min_acquisitions;
  std::filesystem::path dir = opt.out;

  if (opt.check_only) {
    dir = *opt.check_only;
    d.mode = "check";  // the run's parameters are in its own output, not known here
    d.clients = d.resources = 0;
    d.duration_s = 0;
    d.persistence = "unknown";
  } else {
    d.seed = opt.seed.value_or(std::random_device{}() & 0x7fffffffU);
    prepare_out_dir(dir);
    if (!opt.scenario.empty()) {
      const auto& scenario = *find_scenario(opt.scenario);
      d.mode = "scenario";
      d.scenario = opt.scenario;
      d.clients = 2;
      d.resources = 1;
      d.duration_s = 0;
      d.persistence =
          scenario.durability == redlock::test::persistence::aof_always ? "always" : "none";
      fmt::print("redlock-torture: scenario {} ({}), out {}\n", scenario.name,
                 scenario.breaks_assumption ? "breaks an assumption" : "keeps the assumptions",
                 dir.string());
      if (scenario.breaks_assumption != opt.expect_violations) {
        fmt::print("note: this scenario {}; --expect-violations is {}\n",
                   scenario.breaks_assumption ? "breaks an assumption" : "keeps the assumptions",
                   opt.expect_violations ? "on" : "off");
      }
      std::fflush(stdout);
      run_one_scenario(opt, scenario);
    } else {
      d.mode = "random";
      fmt::print(
          "redlock-torture: seed {} clients {} resources {} duration {} s persistence {}, out {}\n",
          d.seed, opt.clients, opt.resources, opt.duration_s, opt.persistence, dir.string());
      fmt::print("replay with: --seed {}\n", d.seed);
      std::fflush(stdout);
      run_random(opt, d.seed);
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
