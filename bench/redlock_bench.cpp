// redlock-bench: acquire/release latency, throughput and contention against
// real nodes; prints one JSON line of figures at the end.
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

#include "allocation_counter.hpp"
#include "args/options.hpp"
#include "stats.hpp"

#include <fmt/format.h>
#include <hiredis.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::bench::samples;
using std::chrono::milliseconds;
namespace args = redlock::args;

namespace {

enum class workload { latency, throughput, contention, held };
constexpr std::array all_workloads{workload::latency, workload::throughput, workload::contention,
                                   workload::held};

struct options {
  std::vector<redlock::node_config> nodes;
  workload kind = workload::latency;
  milliseconds duration{10'000};
  /// 0 until given: the workload's own default.
  unsigned concurrency = 0;
  milliseconds ttl{10'000};
  milliseconds warmup{1000};
  milliseconds hold{1};
  /// "none", or "noop": an observer that does nothing, to price the hooks.
  std::string observer = "none";
  /// Fenced acquires (lock_options::fenced).
  bool fenced = false;
  /// "none"; "one": node 0's fencing floor far above the others', so a
  /// quorum that counts node 0 disagrees; "all": every node's floor apart,
  /// so every quorum disagrees. Implies fenced.
  std::string fence_disagree = "none";
  /// held: how many kept locks.
  std::uint64_t locks = 100'000;
  /// client_config::key_prefix; empty: one of this process's own.
  std::string key_prefix;
  /// Contention: a file that gets every hold's times.
  std::string hold_log;
};

/// Where every node keeps its fencing state (docs/fencing.md).
constexpr const char* fencing_state_key = "redlock:fencing";
/// How far apart --fence-disagree puts the floors: far more than a run's
/// acquires, far less than the 2^53 the scripts handle exactly.
constexpr std::uint64_t floor_gap = 1'000'000'000'000;

/// Overrides every hook with nothing: what installing an observer costs.
struct noop_observer final : redlock::observer {
  void on_operation(const redlock::operation_report&) override {}
  void on_node_reply(const redlock::node_report&) override {}
  void on_connection(std::size_t, std::string_view, redlock::connection_event,
                     redlock::error_code) override {}
};

const char* name_of(workload w) {
  switch (w) {
    case workload::latency:
      return "latency";
    case workload::throughput:
      return "throughput";
    case workload::contention:
      return "contention";
    case workload::held:
      return "held";
  }
  return "?";
}

/// Declares the options on `app`; `o` holds the defaults and receives the values.
void add_options(CLI::App& app, options& o) {
  app.footer(
      "Prints one JSON line of figures at the end. Exit status: 0 done, 1 nothing but errors, "
      "2 bad command line.");
  args::add_nodes(app, o.nodes, "Redis masters to lock on (required)");
  std::vector<std::string> workload_names;
  for (const auto w : all_workloads) workload_names.emplace_back(name_of(w));
  const auto set_workload = [&o](const std::string& name) {
    for (const auto w : all_workloads) {
      if (name == name_of(w)) o.kind = w;
    }
  };
  app.add_option_function<std::string>(
         "--workload", set_workload,
         "latency: acquire and release, one at a time; throughput: the same, concurrently; "
         "contention: every worker after one resource, held for --hold; held: acquire --locks "
         "locks, keep them all extended (keeper) for --duration, count the lapses")
      ->check(CLI::IsMember(workload_names))
      ->default_str(name_of(o.kind));
  args::add_duration(app, "--duration", o.duration, "Measured time, after the warm-up");
  app.add_option("--concurrency", o.concurrency,
                 "Concurrent workers (default: latency 1, throughput 64, contention 8; latency "
                 "always runs 1)")
      ->check(CLI::Range(1U, std::numeric_limits<unsigned>::max(), "POSITIVE"));
  args::add_duration(app, "--ttl", o.ttl, "TTL of each lock");
  args::add_duration(app, "--warmup", o.warmup, "Time before the measured period (not counted)");
  args::add_duration(app, "--hold", o.hold, "How long contention's holders keep the lock");
  app.add_option("--locks", o.locks, "held: how many locks to acquire and keep")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--observer", o.observer,
                 "none, or noop: install an observer that does nothing (the hooks' cost)")
      ->check(CLI::IsMember({"none", "noop"}))
      ->capture_default_str();
  app.add_flag("--fenced", o.fenced,
               "Fenced acquires (lock_options::fenced; max_fenced_ttl = --ttl). A first fenced "
               "acquire seeds the nodes' fencing state (about --ttl) before the warm-up");
  app.add_option("--fence-disagree", o.fence_disagree,
                 "Make the nodes' fencing counters disagree before the warm-up (implies --fenced; "
                 "latency and throughput): one: node 0's floor far above the others', so quorums "
                 "that count node 0 take the write-back; all: every node's floor apart, so every "
                 "acquire takes it")
      ->check(CLI::IsMember({"none", "one", "all"}))
      ->capture_default_str();
  app.add_option("--key-prefix", o.key_prefix,
                 "Prefix of every key (default: redlock-bench:<pid>:); processes given the same "
                 "one contend for the same resource");
  app.add_option("--hold-log", o.hold_log,
                 "Contention: write the measured window and every hold to this file, a line "
                 "each: wait start, acquired, release start (ns of redlock::clock)");
}

/// What is wrong with the options taken together, if anything.
std::optional<std::string> command_line_problem(const options& o) {
  if (o.nodes.empty()) return "--nodes is required";
  if (o.duration <= milliseconds::zero()) return "--duration must be positive";
  if (o.kind == workload::held && (o.fenced || o.fence_disagree != "none" || o.observer != "none"))
    return "--workload held takes neither --fenced, --fence-disagree nor --observer (it installs "
           "its own observer to time the extensions)";
  if (o.fence_disagree != "none") {
    if (o.kind == workload::contention)
      return "--fence-disagree needs a workload that locks fresh resources (latency, throughput)";
    for (const auto& node : o.nodes) {
      if (node.tls.enabled) return "--fence-disagree sets the nodes up over plain TCP, not TLS";
    }
  }
  return std::nullopt;
}

struct cpu_times {
  double user = 0;
  double system = 0;
};

cpu_times cpu_now() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

long max_rss_kb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

/// Bytes the allocator has handed out and not had back (glibc).
std::size_t heap_in_use() { return ::mallinfo2().uordblks; }

long current_rss_kb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

/// A plain hiredis connection to one node, for setting the nodes up and
/// reading their counters around the run (never while measuring).
class setup_connection {
 public:
  explicit setup_connection(const redlock::node_config& node)
      : endpoint_(fmt::format("{}:{}", node.host, node.port)) {
    timeval timeout{5, 0};
    context_.reset(::redisConnectWithTimeout(node.host.c_str(), node.port, timeout));
    if (!context_ || context_->err) {
      throw std::runtime_error(fmt::format("{}: cannot connect: {}", endpoint_,
                                           context_ ? context_->errstr : "out of memory"));
    }
    ::redisSetTimeout(context_.get(), timeout);
    if (!node.password.empty()) {
      if (node.username.empty()) {
        command({"AUTH", node.password});
      } else {
        command({"AUTH", node.username, node.password});
      }
    }
    if (node.database != 0) command({"SELECT", std::to_string(node.database)});
  }

  /// The reply to one command; throws on a failed connection or an error reply.
  std::string command(const std::vector<std::string>& words) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& w : words) {
      argv.push_back(w.data());
      lengths.push_back(w.size());
    }
    const std::unique_ptr<redisReply, void (*)(void*)> reply(
        static_cast<redisReply*>(::redisCommandArgv(context_.get(), static_cast<int>(argv.size()),
                                                    argv.data(), lengths.data())),
        ::freeReplyObject);
    if (!reply) throw std::runtime_error(fmt::format("{}: {}", endpoint_, context_->errstr));
    const std::string text(reply->str ? std::string(reply->str, reply->len) : std::string());
    if (reply->type == REDIS_REPLY_ERROR) {
      throw std::runtime_error(fmt::format("{}: {}: {}", endpoint_, words.front(), text));
    }
    if (reply->type == REDIS_REPLY_INTEGER) return std::to_string(reply->integer);
    return text;
  }

  /// Scripts the node has run (EVAL and EVALSHA calls) since it started.
  std::uint64_t scripts_run() {
    const auto info = command({"INFO", "commandstats"});
    std::uint64_t total = 0;
    for (const std::string_view name : {"cmdstat_eval:calls=", "cmdstat_evalsha:calls="}) {
      const auto at = info.find(name);
      if (at != std::string::npos) total += std::stoull(info.substr(at + name.size()));
    }
    return total;
  }

 private:
  std::string endpoint_;
  std::unique_ptr<redisContext, void (*)(redisContext*)> context_{nullptr, ::redisFree};
};

/// Raises the nodes' fencing floors (and max) so that fenced acquires of
/// fresh resources get different counters from different nodes: above the
/// largest counter any node holds, node 0 by floor_gap more than the rest
/// ("one"), or node i by i * floor_gap ("all"). Floors only grow, as the
/// library's own re-seeding does them, so no fence is reused.
void spread_fencing_floors(std::vector<setup_connection>& nodes, const std::string& how) {
  std::uint64_t top = 0;
  for (auto& node : nodes) {
    const auto max = node.command({"HGET", fencing_state_key, "max"});
    if (!max.empty()) top = std::max<std::uint64_t>(top, std::stoull(max));
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::uint64_t step = how == "all" ? i : (i == 0 ? 1 : 0);
    const auto floor = std::to_string(top + step * floor_gap);
    nodes[i].command({"HSET", fencing_state_key, "floor", floor, "max", floor});
  }
}

struct run {
  run(const options& o, redlock::client& l) : opts(o), locks(l) {}

  const options& opts;
  redlock::client& locks;
  redlock::clock::time_point measure_from{};
  redlock::clock::time_point stop_at{};
  std::string prefix = "r";
  samples acquire_ms;
  samples release_ms;
  samples wait_ms;
  std::uint64_t cycles = 0;
  /// Acquire-release cycles done, warm-up included (what the nodes ran).
  std::uint64_t all_cycles = 0;
  std::uint64_t errors = 0;
  std::uint64_t next_resource = 0;
  int holders = 0;
  std::uint64_t overlaps = 0;
  unsigned workers_left = 0;
  std::string first_error;
  /// Contention with --hold-log: each hold's wait start, acquired, release start.
  std::vector<std::array<redlock::clock::time_point, 3>> holds;

  bool measuring(redlock::clock::time_point t) const { return t >= measure_from; }
  void failed(const redlock::error_code& ec) {
    ++errors;
    if (first_error.empty()) first_error = ec.message();
  }
};

// Acquire then release a fresh resource, again and again.
asio::awaitable<void> cycle_worker(run& r) {
  redlock::lock_options lock_opts;
  lock_opts.ttl = r.opts.ttl;
  lock_opts.fenced = r.opts.fenced;
  lock_opts.retry = redlock::retry_policy::try_once();
  redlock::error_code ec;
  while (redlock::clock::now() < r.stop_at) {
    const auto resource = fmt::format("{}{}", r.prefix, r.next_resource++);
    const auto t0 = redlock::clock::now();
    auto held = co_await r.locks.async_acquire(resource, lock_opts,
                                               asio::redirect_error(asio::use_awaitable, ec));
    const auto t1 = redlock::clock::now();
    if (ec) {
      r.failed(ec);
      continue;
    }
    co_await r.locks.async_release(held, asio::redirect_error(asio::use_awaitable, ec));
    const auto t2 = redlock::clock::now();
    if (ec) r.failed(ec);
    ++r.all_cycles;
    if (r.measuring(t0)) {
      r.acquire_ms.add(t1 - t0);
      r.release_ms.add(t2 - t1);
      ++r.cycles;
    }
  }
}

// Everyone wants one resource: wait for it, hold it, release it.
asio::awaitable<void> contention_worker(run& r) {
  redlock::lock_options lock_opts;
  lock_opts.ttl = r.opts.ttl;
  lock_opts.fenced = r.opts.fenced;
  lock_opts.retry = redlock::retry_policy::exponential(1ms, 50ms, 0, 0.5);
  lock_opts.wait_timeout = 10s;
  asio::steady_timer hold(co_await asio::this_coro::executor);
  redlock::error_code ec;
  while (redlock::clock::now() < r.stop_at) {
    const auto t0 = redlock::clock::now();
    auto held = co_await r.locks.async_acquire(r.prefix + "contended", lock_opts,
                                               asio::redirect_error(asio::use_awaitable, ec));
    const auto t1 = redlock::clock::now();
    if (ec) {
      r.failed(ec);
      continue;
    }
    // All workers share one thread, so this counter sees every holder.
    if (r.holders++ > 0) ++r.overlaps;
    hold.expires_after(r.opts.hold);
    co_await hold.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    --r.holders;
    const auto t2 = redlock::clock::now();
    if (!r.opts.hold_log.empty()) r.holds.push_back({t0, t1, t2});
    co_await r.locks.async_release(held, asio::redirect_error(asio::use_awaitable, ec));
    const auto t3 = redlock::clock::now();
    if (ec) r.failed(ec);
    if (r.measuring(t0)) {
      r.wait_ms.add(t1 - t0);
      r.acquire_ms.add(t1 - t0);
      r.release_ms.add(t3 - t2);
      ++r.cycles;
    }
  }
}

/// held: every extension's time and result, from the client's own hooks.
struct extension_observer final : redlock::observer {
  void on_operation(const redlock::operation_report& report) override {
    if (report.kind != redlock::operation_kind::extend) return;
    if (report.result) {
      ++failed;
      if (first_failure.empty()) first_failure = report.result.message();
    } else {
      latency_ms.add(report.latency);
    }
  }
  samples latency_ms;
  std::uint64_t failed = 0;
  std::string first_failure;
};

/// held: what the acquire workers share.
struct held_run {
  const options& opts;
  redlock::client& locks;
  std::vector<redlock::keeper> kept;
  std::uint64_t next = 0;
  std::uint64_t errors = 0;
  std::uint64_t lapses = 0;  ///< Lost-lock signals seen (on_lost).
  std::string first_error;
};

// Acquire fresh resources and keep them, until --locks are kept.
asio::awaitable<void> held_acquirer(held_run& h) {
  redlock::lock_options lock_opts;
  lock_opts.ttl = h.opts.ttl;
  lock_opts.retry = redlock::retry_policy::try_once();
  redlock::keep_options keep;
  keep.on_lost = [&h](redlock::error_code) { ++h.lapses; };
  redlock::error_code ec;
  while (h.next < h.opts.locks) {
    std::vector<std::string> resource{fmt::format("h{}", h.next++)};
    auto [held, kept] =
        co_await redlock::async_acquire_kept(h.locks, std::move(resource), lock_opts, keep,
                                             asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      ++h.errors;
      if (h.first_error.empty()) h.first_error = ec.message();
      continue;
    }
    h.kept.push_back(std::move(kept));
  }
}

// Release kept locks from the back of the list until none is left.
asio::awaitable<void> held_releaser(held_run& h) {
  redlock::error_code ec;
  while (!h.kept.empty()) {
    auto kept = std::move(h.kept.back());
    h.kept.pop_back();
    co_await kept.async_release(asio::redirect_error(asio::use_awaitable, ec));
    if (ec && ec != redlock::errc::lock_lost) {
      ++h.errors;
      if (h.first_error.empty()) h.first_error = ec.message();
    }
  }
}

/// Runs `workers` copies of `make()` on `io` and returns when all are done.
template <class MakeWorker>
void run_workers(asio::io_context& io, unsigned workers, MakeWorker make) {
  unsigned left = workers;
  for (unsigned i = 0; i < workers; ++i) {
    asio::co_spawn(io, make(), [&left](std::exception_ptr e) {
      --left;
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        fmt::print(stderr, "redlock-bench: worker failed: {}\n", ex.what());
      }
    });
  }
  while (left > 0) io.run_one();
}

/// The held workload: acquire --locks kept locks (--concurrency at a time),
/// keep them for --duration, then release them. The memory per lock is the
/// growth from a connected, empty client to the end of the hold; CPU is that
/// of the hold alone. Returns the exit status.
int run_held(const options& opts, asio::io_context& io, redlock::client& locks,
             const extension_observer& extensions) {
  held_run h{opts, locks, {}, 0, 0, 0, {}};
  h.kept.reserve(opts.locks);
  {
    // Connect (and let the connections settle) before the empty reading.
    held_run probe{opts, locks, {}, opts.locks - 1, 0, 0, {}};
    run_workers(io, 1, [&] { return held_acquirer(probe); });
    run_workers(io, 1, [&] { return held_releaser(probe); });
  }
  const long rss_empty = current_rss_kb();
  const auto heap_empty = heap_in_use();
  const auto t0 = redlock::clock::now();
  run_workers(io, opts.concurrency, [&] { return held_acquirer(h); });
  const auto t1 = redlock::clock::now();
  const long rss_acquired = current_rss_kb();
  const auto kept = h.kept.size();

  const auto cpu_start = cpu_now();
  const auto allocations_start = redlock::bench::allocations();
  asio::steady_timer hold(io, opts.duration);
  bool held_done = false;
  hold.async_wait([&](boost::system::error_code) { held_done = true; });
  while (!held_done) io.run_one();
  const auto cpu_end = cpu_now();
  const auto allocations = redlock::bench::allocations() - allocations_start;
  const long rss_held = current_rss_kb();
  const auto heap_held = heap_in_use();
  std::uint64_t lost_at_end = 0;
  std::uint64_t extended = 0;
  for (const auto& k : h.kept) {
    if (k.lost()) ++lost_at_end;
    extended += k.extensions();
  }

  const auto t2 = redlock::clock::now();
  run_workers(io, opts.concurrency, [&] { return held_releaser(h); });
  const auto t3 = redlock::clock::now();
  locks.close();
  io.run();

  const double seconds = std::chrono::duration<double>(opts.duration).count();
  const double cpu = (cpu_end.user - cpu_start.user) + (cpu_end.system - cpu_start.system);
  const auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  if (!h.first_error.empty())
    fmt::print(stderr, "redlock-bench: {} errors, first: {}\n", h.errors, h.first_error);
  if (!extensions.first_failure.empty())
    fmt::print(stderr, "redlock-bench: {} extensions failed, first: {}\n", extensions.failed,
               extensions.first_failure);
  auto extend_ms = extensions.latency_ms;
  fmt::print(
      R"({{"workload":"held","locks":{},"kept":{},"concurrency":{},"ttl_ms":{},"duration_s":{:.1f},)"
      R"("acquire_s":{:.2f},"release_s":{:.2f},"lapses":{},"lost_at_end":{},"extensions":{},)"
      R"("extensions_per_s":{:.1f},"extensions_failed":{},"extend_ms":{},"errors":{},)"
      R"("client_cpu_s":{:.3f},"client_cpu_core_fraction":{:.4f},"allocations_per_extension":{:.1f},)"
      R"("rss_kb_empty":{},"rss_kb_acquired":{},"rss_kb_held":{},"max_rss_kb":{},)"
      R"("bytes_per_lock":{:.0f},"heap_bytes_per_lock":{:.0f}}})"
      "\n",
      opts.locks, kept, opts.concurrency, opts.ttl.count(), seconds, secs(t1 - t0), secs(t3 - t2),
      h.lapses, lost_at_end, extended, static_cast<double>(extended) / seconds, extensions.failed,
      extend_ms.json(), h.errors, cpu, cpu / seconds,
      extended == 0 ? 0.0 : static_cast<double>(allocations) / static_cast<double>(extended),
      rss_empty, rss_acquired, rss_held, max_rss_kb(),
      kept == 0 ? 0.0
                : static_cast<double>(rss_held - rss_empty) * 1024.0 / static_cast<double>(kept),
      kept == 0 ? 0.0
                : (static_cast<double>(heap_held) - static_cast<double>(heap_empty)) /
                      static_cast<double>(kept));
  return kept > 0 ? 0 : 1;
}

// --hold-log's file: "window <measured from> <until>", then one line per hold
// (times in ns of redlock::clock, the same clock in every process).
void write_hold_log(const run& r) {
  const auto ns = [](redlock::clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  std::ofstream out(r.opts.hold_log);
  out << "window " << ns(r.measure_from) << ' ' << ns(r.stop_at) << '\n';
  for (const auto& [t0, t1, t2] : r.holds) out << ns(t0) << ' ' << ns(t1) << ' ' << ns(t2) << '\n';
  if (!out) fmt::print(stderr, "redlock-bench: cannot write {}\n", r.opts.hold_log);
}

// One fenced acquire and release, waiting as long as the nodes' first
// seeding takes (docs/fencing.md, "First use": max_fenced_ttl x 1.01 plus a
// request timeout), so that the measured acquires find valid state.
asio::awaitable<void> seed_fencing(redlock::client& locks, const options& o,
                                   redlock::error_code& ec) {
  redlock::lock_options lock_opts;
  lock_opts.ttl = o.ttl;
  lock_opts.fenced = true;
  lock_opts.retry = redlock::retry_policy::exponential(50ms, 1s, 0, 0.5);
  lock_opts.wait_timeout = 2 * o.ttl + 5s;
  auto held = co_await locks.async_acquire("fencing-seed", lock_opts,
                                           asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  co_await locks.async_release(held, asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Acquire/release latency, throughput and contention of redlock against real nodes.",
               "redlock-bench"};
  options opts;
  add_options(app, opts);
  if (const auto exit_status = args::parse(app, argc, argv)) return *exit_status;
  if (const auto problem = command_line_problem(opts)) return args::usage_error(app, *problem);
  // The workload's own concurrency unless given; latency always measures one at a time.
  if (opts.concurrency == 0 || opts.kind == workload::latency) {
    opts.concurrency = opts.kind == workload::throughput || opts.kind == workload::held ? 64
                       : opts.kind == workload::contention                              ? 8
                                                                                        : 1;
  }

  redlock::client_config config;
  config.nodes = opts.nodes;
  config.key_prefix =
      opts.key_prefix.empty() ? fmt::format("redlock-bench:{}:", ::getpid()) : opts.key_prefix;
  // Figures are taken on nodes without AOF (scripts/cluster.sh's default);
  // the warning would only clutter the output.
  config.warn_without_aof = false;
  if (opts.observer == "noop") config.observer = std::make_shared<noop_observer>();
  auto extensions = std::make_shared<extension_observer>();
  if (opts.kind == workload::held) config.observer = extensions;
  if (opts.fence_disagree != "none") opts.fenced = true;
  if (opts.fenced) config.max_fenced_ttl = opts.ttl;

  asio::io_context io(1);
  std::optional<redlock::client> locks;
  try {
    locks.emplace(io.get_executor(), config);
  } catch (const redlock::config_error& e) {
    std::string what = e.what();
    if (what.starts_with("redlock: ")) what.erase(0, 9);  // our own line says it
    return args::usage_error(app, "--nodes: " + what);
  }

  if (opts.kind == workload::held) return run_held(opts, io, *locks, *extensions);

  // Fenced: get the nodes' fencing state seeded first, then (maybe) make the
  // counters disagree, and read how many scripts each node has run so far.
  double seed_s = 0;
  std::vector<setup_connection> setup;
  std::vector<std::uint64_t> scripts_before;
  const bool count_scripts = opts.fenced && opts.kind != workload::contention;
  if (opts.fenced) {
    redlock::error_code ec;
    bool seeded = false;
    const auto t0 = redlock::clock::now();
    asio::co_spawn(io, seed_fencing(*locks, opts, ec), [&](std::exception_ptr) { seeded = true; });
    while (!seeded) io.run_one();
    seed_s = std::chrono::duration<double>(redlock::clock::now() - t0).count();
    if (ec) {
      fmt::print(stderr, "redlock-bench: the first fenced acquire failed: {}\n", ec.message());
      return 1;
    }
    fmt::print(stderr, "redlock-bench: first fenced acquire (fencing state seeded) in {:.2f} s\n",
               seed_s);
  }
  if (count_scripts) {
    bool plain_tcp = true;
    for (const auto& node : opts.nodes) plain_tcp = plain_tcp && !node.tls.enabled;
    try {
      if (plain_tcp) {
        for (const auto& node : opts.nodes) setup.emplace_back(node);
        if (opts.fence_disagree != "none") spread_fencing_floors(setup, opts.fence_disagree);
        for (auto& node : setup) scripts_before.push_back(node.scripts_run());
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "redlock-bench: setting the nodes up: {}\n", e.what());
      return 1;
    }
  }

  const auto start = redlock::clock::now();
  const auto warmup = std::chrono::duration_cast<redlock::clock::duration>(opts.warmup);
  const auto measured = std::chrono::duration_cast<redlock::clock::duration>(opts.duration);
  run r{opts, *locks};
  r.measure_from = start + warmup;
  r.stop_at = start + warmup + measured;
  r.workers_left = opts.concurrency;

  // CPU and memory are read when the measured period starts, after warm-up.
  cpu_times cpu_start{};
  long rss_after_warmup = 0;
  std::uint64_t allocations_start = 0;
  asio::steady_timer warmup_timer(
      io, std::chrono::duration_cast<std::chrono::steady_clock::duration>(warmup));
  warmup_timer.async_wait([&](boost::system::error_code) {
    cpu_start = cpu_now();
    rss_after_warmup = current_rss_kb();
    allocations_start = redlock::bench::allocations();
  });

  for (unsigned i = 0; i < opts.concurrency; ++i) {
    auto worker = opts.kind == workload::contention ? contention_worker(r) : cycle_worker(r);
    asio::co_spawn(io, std::move(worker), [&](std::exception_ptr e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          fmt::print(stderr, "redlock-bench: worker failed: {}\n", ex.what());
        }
      }
      if (--r.workers_left == 0) locks->close();
    });
  }
  io.run();
  if (!opts.hold_log.empty()) write_hold_log(r);

  const auto cpu_end = cpu_now();
  const auto allocations = redlock::bench::allocations() - allocations_start;
  const double seconds = std::chrono::duration<double>(opts.duration).count();
  const double user = cpu_end.user - cpu_start.user;
  const double system = cpu_end.system - cpu_start.system;
  if (!r.first_error.empty())
    fmt::print(stderr, "redlock-bench: {} errors, first: {}\n", r.errors, r.first_error);

  std::string extra;
  if (opts.fenced) {
    // Every cycle runs one script per node for the acquire and one for the
    // release; a write-back runs one more on every node. So the scripts a
    // node ran beyond two per cycle are the write-backs (exact when no
    // acquire failed: a failed one runs its own and its undo's).
    std::string write_backs = "null";
    std::string fraction = "null";
    std::string scripts_per_cycle = "null";
    std::uint64_t ran = 0;
    if (!scripts_before.empty() && r.all_cycles > 0) {
      try {
        for (std::size_t i = 0; i < setup.size(); ++i)
          ran += setup[i].scripts_run() - scripts_before[i];
      } catch (const std::exception& e) {
        fmt::print(stderr, "redlock-bench: reading the nodes' script counts: {}\n", e.what());
        ran = 0;
      }
    }
    if (ran > 0) {
      const double per_node = static_cast<double>(ran) / static_cast<double>(setup.size());
      const double backs = per_node - 2.0 * static_cast<double>(r.all_cycles);
      scripts_per_cycle = fmt::format("{:.3f}", per_node / static_cast<double>(r.all_cycles));
      write_backs = fmt::format("{:.0f}", backs);
      fraction = fmt::format("{:.4f}", backs / static_cast<double>(r.all_cycles));
    }
    extra += fmt::format(
        R"(,"fence_disagree":"{}","fence_seed_s":{:.2f},"all_cycles":{},)"
        R"("scripts_per_node_per_cycle":{},"write_backs":{},"write_back_fraction":{})",
        opts.fence_disagree, seed_s, r.all_cycles, scripts_per_cycle, write_backs, fraction);
  }
  if (opts.kind == workload::contention) {
    extra += fmt::format(R"(,"acquisitions_per_s":{:.1f},"wait_ms":{},"overlap_violations":{})",
                         static_cast<double>(r.cycles) / seconds, r.wait_ms.json(), r.overlaps);
  }
  fmt::print(
      R"({{"workload":"{}","observer":"{}","fenced":{},"concurrency":{},"duration_s":{:.1f},"cycles":{},"cycles_per_s":{:.1f},)"
      R"("acquire_ms":{},"release_ms":{},"errors":{},"client_cpu_s":{{"user":{:.3f},"system":{:.3f}}},)"
      R"("client_cpu_s_per_1000_cycles":{:.4f},"allocations_per_cycle":{:.1f},)"
      R"("max_rss_kb":{},"rss_kb_after_warmup":{},"rss_kb_end":{}{}}})"
      "\n",
      name_of(opts.kind), opts.observer, opts.fenced, opts.concurrency, seconds, r.cycles,
      static_cast<double>(r.cycles) / seconds, r.acquire_ms.json(), r.release_ms.json(), r.errors,
      user, system, r.cycles == 0 ? 0.0 : (user + system) * 1000.0 / static_cast<double>(r.cycles),
      r.cycles == 0 ? 0.0 : static_cast<double>(allocations) / static_cast<double>(r.cycles),
      max_rss_kb(), rss_after_warmup, current_rss_kb(), extra);
  return r.errors == 0 || r.cycles > 0 ? 0 : 1;
}
