// redlock-bench: acquire/release latency, throughput and contention against
// real nodes; prints one JSON line of figures at the end.
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

#include "allocation_counter.hpp"
#include "stats.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::bench::samples;
using std::chrono::milliseconds;

namespace {

enum class workload { latency, throughput, contention };

struct options {
  std::vector<redlock::node_config> nodes;
  workload kind = workload::latency;
  double duration_s = 10;
  unsigned concurrency = 1;
  milliseconds ttl{10000};
  double warmup_s = 1;
  milliseconds hold{1};
};

const char* name_of(workload w) {
  switch (w) {
    case workload::latency:
      return "latency";
    case workload::throughput:
      return "throughput";
    case workload::contention:
      return "contention";
  }
  return "?";
}

[[noreturn]] void usage(std::string_view problem) {
  fmt::print(
      stderr,
      "redlock-bench: {}\n"
      "usage: redlock-bench --nodes H:P[,H:P...] [--workload latency|throughput|contention]\n"
      "       [--duration S] [--concurrency C] [--ttl MS] [--warmup S] [--hold MS]\n",
      problem);
  std::exit(2);
}

template <class Number>
Number number(std::string_view flag, std::string_view text) {
  Number value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < Number{}) {
    usage(fmt::format("{} needs a non-negative number, not '{}'", flag, text));
  }
  return value;
}

options parse(int argc, char** argv) {
  options o;
  bool concurrency_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    const std::string_view value = argv[++i];
    if (flag == "--nodes") {
      try {
        o.nodes = redlock::parse_nodes(value);
      } catch (const redlock::config_error& e) {
        usage(e.what());
      }
    } else if (flag == "--workload") {
      if (value == "latency")
        o.kind = workload::latency;
      else if (value == "throughput")
        o.kind = workload::throughput;
      else if (value == "contention")
        o.kind = workload::contention;
      else
        usage(fmt::format("unknown workload '{}'", value));
    } else if (flag == "--duration") {
      o.duration_s = number<double>(flag, value);
    } else if (flag == "--concurrency") {
      o.concurrency = number<unsigned>(flag, value);
      concurrency_given = true;
    } else if (flag == "--ttl") {
      o.ttl = milliseconds(number<long>(flag, value));
    } else if (flag == "--warmup") {
      o.warmup_s = number<double>(flag, value);
    } else if (flag == "--hold") {
      o.hold = milliseconds(number<long>(flag, value));
    } else {
      usage(fmt::format("unknown flag '{}'", flag));
    }
  }
  if (o.nodes.empty()) usage("--nodes is required");
  if (o.duration_s <= 0) usage("--duration must be positive");
  if (!concurrency_given)
    o.concurrency = o.kind == workload::throughput ? 64 : o.kind == workload::contention ? 8 : 1;
  if (o.kind == workload::latency) o.concurrency = 1;
  if (o.concurrency == 0) usage("--concurrency must be at least 1");
  return o;
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

long current_rss_kb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
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
  std::uint64_t errors = 0;
  std::uint64_t next_resource = 0;
  int holders = 0;
  std::uint64_t overlaps = 0;
  unsigned workers_left = 0;
  std::string first_error;

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

}  // namespace

int main(int argc, char** argv) {
  const options opts = parse(argc, argv);

  redlock::client_config config;
  config.nodes = opts.nodes;
  config.key_prefix = fmt::format("redlock-bench:{}:", ::getpid());

  asio::io_context io(1);
  std::optional<redlock::client> locks;
  try {
    locks.emplace(io.get_executor(), config);
  } catch (const redlock::config_error& e) {
    usage(e.what());
  }

  const auto start = redlock::clock::now();
  const auto warmup = std::chrono::duration_cast<redlock::clock::duration>(
      std::chrono::duration<double>(opts.warmup_s));
  const auto measured = std::chrono::duration_cast<redlock::clock::duration>(
      std::chrono::duration<double>(opts.duration_s));
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

  const auto cpu_end = cpu_now();
  const auto allocations = redlock::bench::allocations() - allocations_start;
  const double seconds = opts.duration_s;
  const double user = cpu_end.user - cpu_start.user;
  const double system = cpu_end.system - cpu_start.system;
  if (!r.first_error.empty())
    fmt::print(stderr, "redlock-bench: {} errors, first: {}\n", r.errors, r.first_error);

  std::string extra;
  if (opts.kind == workload::contention) {
    extra = fmt::format(R"(,"acquisitions_per_s":{:.1f},"wait_ms":{},"overlap_violations":{})",
                        static_cast<double>(r.cycles) / seconds, r.wait_ms.json(), r.overlaps);
  }
  fmt::print(
      R"({{"workload":"{}","concurrency":{},"duration_s":{:.1f},"cycles":{},"cycles_per_s":{:.1f},)"
      R"("acquire_ms":{},"release_ms":{},"errors":{},"client_cpu_s":{{"user":{:.3f},"system":{:.3f}}},)"
      R"("client_cpu_s_per_1000_cycles":{:.4f},"allocations_per_cycle":{:.1f},)"
      R"("max_rss_kb":{},"rss_kb_after_warmup":{},"rss_kb_end":{}{}}})"
      "\n",
      name_of(opts.kind), opts.concurrency, seconds, r.cycles,
      static_cast<double>(r.cycles) / seconds, r.acquire_ms.json(), r.release_ms.json(), r.errors,
      user, system, r.cycles == 0 ? 0.0 : (user + system) * 1000.0 / static_cast<double>(r.cycles),
      r.cycles == 0 ? 0.0 : static_cast<double>(allocations) / static_cast<double>(r.cycles),
      max_rss_kb(), rss_after_warmup, current_rss_kb(), extra);
  return r.errors == 0 || r.cycles > 0 ? 0 : 1;
}
