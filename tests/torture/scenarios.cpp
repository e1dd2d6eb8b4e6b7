#include "scenarios.hpp"

#include "protected_register.hpp"
#include "recorded_client.hpp"
#include "torture_cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using proxy_mode = test::fault_proxy::partition_mode;

constexpr double drift_factor = 0.01;  // the clients' default
const std::string resource = "s";
const std::string lock_key = std::string(key_prefix) + resource;

struct actor {
  actor(std::string label, const std::filesystem::path& dir, int proc,
        const std::vector<std::uint16_t>& ports, std::uint16_t store_port)
      : label(std::move(label)),
        file(dir, proc),
        history(file, 0),
        library(make_client_config(ports, dir / fmt::format("client-{}.log", proc))),
        client(library, history),
        reg(store_port) {}

  std::string label;
  history_writer file;
  worker_history history;
  blocking_client library;
  recorded_client client;
  protected_register reg;
};

// The steps shared by the restart, clock-jump and fast-clock scenarios:
// A takes the lock on a chosen majority and works; the nodes are broken;
// B tries to take the lock; if B gets it while A's lock is still valid, both
// work at once. With the assumption kept, B gets it only after A's validity.
struct two_holders_plan {
  milliseconds ttl{3000};
  std::vector<std::size_t> isolate_a;   // nodes A cannot reach (dropped traffic)
  std::vector<std::size_t> a_majority;  // nodes that must hold A's key
  std::function<void()> before_a;       // faults in place before A acquires
  std::function<void()> break_nodes;    // faults once A holds the lock
  milliseconds b_wait{2000};            // how long B keeps trying
};

class script {
 public:
  script(torture_cluster& cluster, const std::filesystem::path& dir)
      : cluster_(cluster),
        a_("A", dir, 0, cluster.proxy_ports(0), cluster.store_port()),
        b_("B", dir, 1, cluster.proxy_ports(1), cluster.store_port()),
        start_(clock::now()) {}

  void two_holders(const two_holders_plan& plan) {
    warm_up();
    for (const auto n : plan.isolate_a) {
      cluster_.proxy(n, 0).partition(proxy_mode::drop);
      cluster_.log_fault("partition-drop", static_cast<int>(n), "client A only");
    }
    if (plan.before_a) plan.before_a();

    error_code ec;
    const lock a = acquire(a_, plan.ttl, retry_policy::try_once(), 0ms, ec);
    if (ec) throw std::runtime_error("scenario setup: A could not acquire: " + ec.message());
    await_holders(a.token(), plan.a_majority, plan.isolate_a);
    work_alone(a_, a);

    plan.break_nodes();

    const lock b = acquire(b_, plan.ttl, retry_policy::fixed(20ms, 0), plan.b_wait, ec);
    if (!ec) {
      if (a.valid()) {
        say("B holds the lock while A's is still valid: both work at once");
        const auto b_section = b_.reg.begin(b_.history, b);
        const auto a_section = a_.reg.begin(a_.history, a);
        b_.reg.end(b_.history, b_section);
        a_.reg.end(a_.history, a_section);
      } else {
        say("A's validity had ended when B got the lock");
        work_alone(b_, b);
      }
      release(b_, b);
      release(a_, a);
    } else {
      release(a_, a);
      const lock again = acquire(b_, plan.ttl, retry_policy::fixed(20ms, 0), 2000ms, ec);
      if (!ec) {
        work_alone(b_, again);
        release(b_, again);
      }
    }

    for (const auto n : plan.isolate_a) {
      cluster_.proxy(n, 0).partition(proxy_mode::none);
      cluster_.log_fault("heal", static_cast<int>(n), "client A reaches the node again");
    }
  }

  // A checks its lock, then stalls for `pause` (as in a GC pause or SIGSTOP:
  // it makes no progress, the world goes on), then does its critical
  // section trusting the check it made before.
  void client_pause(milliseconds ttl, milliseconds pause) {
    warm_up();
    error_code ec;
    const lock a = acquire(a_, ttl, retry_policy::try_once(), 0ms, ec);
    if (ec) throw std::runtime_error("scenario setup: A could not acquire: " + ec.message());
    if (!a.valid()) throw std::runtime_error("scenario setup: A's lock is not valid");
    const auto paused_at = clock::now();
    cluster_.log_fault("pause-client", -1, fmt::format("client A for {} ms", pause.count()));
    say(fmt::format("A checked its lock ({} ms left) and is paused for {} ms",
                    a.remaining_validity().count(), pause.count()));

    const lock b = acquire(b_, ttl, retry_policy::fixed(20ms, 0), pause, ec);
    const bool b_holds = !ec;
    std::optional<protected_register::open_section> b_section;
    if (b_holds) b_section = b_.reg.begin(b_.history, b);

    std::this_thread::sleep_until(paused_at + pause);  // the rest of A's pause
    cluster_.log_fault("heal", -1, "client A resumes");
    say(fmt::format("A resumes; its lock is {}", a.valid() ? "still valid" : "no longer valid"));
    const auto a_section = a_.reg.begin(a_.history, a);
    if (b_section) b_.reg.end(b_.history, *b_section);
    a_.reg.end(a_.history, a_section);
    release(a_, a);
    if (b_holds) {
      release(b_, b);
    } else {
      const lock again = acquire(b_, ttl, retry_policy::fixed(20ms, 0), 2000ms, ec);
      if (!ec) {
        work_alone(b_, again);
        release(b_, again);
      }
    }
  }

  // Forward clock jump on a node: the key expires there now.
  void jump_clock(std::size_t node) {
    const auto reply = cluster_.admin(node).command({"PEXPIRE", lock_key, "1"});
    cluster_.log_fault("clock-jump", static_cast<int>(node),
                       fmt::format("PEXPIRE {} 1 -> {}", lock_key, reply.integer));
  }

  void set_clock_rate(const std::vector<std::size_t>& nodes, double factor) {
    for (const auto n : nodes) {
      for (std::size_t set = 0; set < 2; ++set) cluster_.proxy(n, set).set_ttl_factor(factor);
      cluster_.log_fault(factor == 1.0 ? "heal" : "fast-clock", static_cast<int>(n),
                         fmt::format("TTLs x{:.4f}", factor));
    }
  }

  void say(const std::string& text) const {
    fmt::print("  [{:+.3f}s] {}\n", std::chrono::duration<double>(clock::now() - start_).count(),
               text);
  }

 private:
  // One lock and unlock per client, so that both are connected everywhere.
  void warm_up() {
    for (actor* who : {&a_, &b_}) {
      error_code ec;
      lock_options options;
      options.ttl = 1000ms;
      options.retry = retry_policy::try_once();
      const lock held = who->client.acquire("warm-up-" + who->label, options, ec);
      if (ec) throw std::runtime_error("scenario warm-up failed: " + ec.message());
      who->client.release(held, ec);
    }
  }

  lock acquire(actor& who, milliseconds ttl, retry_policy retry, milliseconds wait,
               error_code& ec) {
    lock_options options;
    options.ttl = ttl;
    options.retry = retry;
    options.wait_timeout = wait;
    lock held = who.client.acquire(resource, options, ec);
    if (ec) {
      say(fmt::format("{} did not get the lock: {}", who.label, ec.message()));
    } else {
      say(fmt::format("{} got the lock, valid for {} ms", who.label,
                      held.remaining_validity().count()));
    }
    return held;
  }

  void release(actor& who, const lock& held) {
    error_code ec;
    const auto removed = who.client.release(held, ec);
    say(fmt::format("{} released ({} keys removed{})", who.label, removed,
                    ec ? ", " + ec.message() : std::string()));
  }

  void work_alone(actor& who, const lock& held) {
    if (!held.valid()) return;
    const auto section = who.reg.begin(who.history, held);
    who.reg.end(who.history, section);
  }

  bool holds(std::size_t node, const std::string& token) {
    return cluster_.admin(node).get(lock_key) == token;
  }

  // The SETs to the nodes outside the quorum may still be on their way:
  // wait (bounded) until the expected nodes hold the key, then check that
  // the isolated ones do not.
  void await_holders(const std::string& token, const std::vector<std::size_t>& expected,
                     const std::vector<std::size_t>& absent) {
    const auto deadline = clock::now() + 2s;
    for (const auto n : expected) {
      while (!holds(n, token)) {
        if (clock::now() > deadline) {
          throw std::runtime_error(fmt::format("scenario setup: node {} never got A's key", n));
        }
        std::this_thread::sleep_for(2ms);
      }
    }
    for (const auto n : absent) {
      if (holds(n, token)) {
        throw std::runtime_error(fmt::format("scenario setup: isolated node {} has A's key", n));
      }
    }
    std::string where;
    for (std::size_t n = 0; n < cluster_.size(); ++n) {
      if (holds(n, token)) where += fmt::format(" {}", n);
    }
    say("A's key is on nodes" + where);
  }

  torture_cluster& cluster_;
  actor a_;
  actor b_;
  clock::time_point start_;
};

const std::vector<std::size_t> first_three = {0, 1, 2};
const std::vector<std::size_t> last_two = {3, 4};
const std::vector<std::size_t> all_five = {0, 1, 2, 3, 4};

void restart(script& s, torture_cluster& cluster, bool delayed, milliseconds ttl) {
  two_holders_plan plan;
  plan.ttl = ttl;
  plan.isolate_a = last_two;
  plan.a_majority = first_three;
  plan.break_nodes = [&s, &cluster, delayed, ttl] {
    auto& node = cluster.node(0);
    node.kill();
    const auto killed = clock::now();
    cluster.log_fault("kill", 0, delayed ? "restart after the TTL" : "restart at once");
    if (delayed) std::this_thread::sleep_until(killed + ttl + 250ms);
    node.start();
    cluster.log_fault("heal", 0, "restarted");
    s.say(delayed ? "node 0 killed, restarted after the TTL"
                  : "node 0 killed and restarted at once");
  };
  s.two_holders(plan);
}

void clock_jump(script& s, bool minority) {
  two_holders_plan plan;
  plan.ttl = 3000ms;
  if (minority) {
    plan.a_majority = all_five;
  } else {
    plan.isolate_a = last_two;
    plan.a_majority = first_three;
  }
  plan.break_nodes = [&s, minority] {
    s.jump_clock(0);
    if (minority) s.jump_clock(1);
    s.say(minority ? "A's key expired early on nodes 0 and 1" : "A's key expired early on node 0");
  };
  plan.b_wait = minority ? 1000ms : 2000ms;
  s.two_holders(plan);
}

void fast_clock(script& s, double factor) {
  two_holders_plan plan;
  plan.ttl = 2000ms;
  plan.a_majority = first_three;
  plan.before_a = [&s, factor] { s.set_clock_rate(first_three, factor); };
  plan.break_nodes = [] {};
  plan.b_wait = 3000ms;
  s.two_holders(plan);
  s.set_clock_rate(first_three, 1.0);
}

}  // namespace

const std::vector<scenario_info>& all_scenarios() {
  using test::persistence;
  static const std::vector<scenario_info> list = {
      {"restart-without-persistence",
       "A's majority includes a node restarted at once without persistence", true,
       persistence::none, 3000ms},
      {"restart-with-aof-always", "the same restart, the node running appendfsync always", false,
       persistence::aof_always, 3000ms},
      {"delayed-restart", "the same crash, the node restarted only after the TTL", false,
       persistence::none, 2000ms},
      {"clock-jump", "a forward clock jump expires A's key early on one node of its majority", true,
       persistence::none, 3000ms},
      {"clock-jump-minority", "A holds all five nodes; the clock jumps on two of them", false,
       persistence::none, 3000ms},
      {"fast-clock", "three nodes' clocks run at twice the rate (TTLs x0.5)", true,
       persistence::none, 2000ms},
      {"fast-clock-within-drift", "three nodes' clocks run fast within the drift allowance", false,
       persistence::none, 2000ms},
      {"client-pause", "A pauses after checking its lock, past its validity, then works", true,
       persistence::none, 1000ms},
      {"client-pause-within-validity", "A pauses after checking its lock, within its validity",
       false, persistence::none, 1000ms},
  };
  return list;
}

const scenario_info* find_scenario(std::string_view name) {
  for (const auto& s : all_scenarios()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::vector<std::string> run_scenario(const scenario_info& scenario, torture_cluster& cluster,
                                      const std::filesystem::path& dir) {
  script s(cluster, dir);
  const std::string_view name = scenario.name;
  if (name == "restart-without-persistence" || name == "restart-with-aof-always") {
    restart(s, cluster, false, scenario.max_ttl);
  } else if (name == "delayed-restart") {
    restart(s, cluster, true, scenario.max_ttl);
  } else if (name == "clock-jump" || name == "clock-jump-minority") {
    clock_jump(s, name == "clock-jump-minority");
  } else if (name == "fast-clock") {
    fast_clock(s, 0.5);
  } else if (name == "fast-clock-within-drift") {
    fast_clock(s, 1 - drift_factor / 2);
  } else if (name == "client-pause") {
    s.client_pause(scenario.max_ttl, scenario.max_ttl * 3 / 2);
  } else if (name == "client-pause-within-validity") {
    s.client_pause(scenario.max_ttl, scenario.max_ttl * 3 / 10);
  } else {
    throw std::invalid_argument(fmt::format("unknown scenario {}", name));
  }
  cluster.heal_all();
  return {resource};
}

}  // namespace redlock::torture
