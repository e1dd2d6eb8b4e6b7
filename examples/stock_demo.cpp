// stock_demo: the classic oversell demonstration.
//
// A shop has S items in stock, kept in a Redis instance of its own (--store,
// which is NOT one of the lock nodes). W worker processes sell concurrently;
// each sale is a read-modify-write: GET the stock, work a little, SET it to
// stock-1 and INCR the number sold. Without mutual exclusion two workers read
// the same stock and both sell the "last" item, so more than S get sold.
// With a Redlock over --nodes around each sale, exactly S are sold.
//
// The defaults are the local cluster of scripts/cluster.sh and
// docker-compose.yml: lock nodes 127.0.0.1:7001..7005, store 127.0.0.1:7100.
//
//   stock_demo
//   stock_demo --no-lock
//   stock_demo --nodes 127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003 --store 127.0.0.1:7000
//
// Output ends with one machine-readable line: sold=<n> remaining=<n> oversold=<n>
// Exit status: 0 nothing oversold (or --no-lock), 1 oversold although the lock
// was on, 2 bad command line, 3 a worker or the store failed.
#include <redlock/redlock.hpp>

#include "args/duration.hpp"
#include "args/options.hpp"
#include "example_nodes.hpp"

#include <fmt/core.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int exit_ok = 0;
constexpr int exit_oversold = 1;
constexpr int exit_failure = 3;  // 2, a bad command line, comes from redlock::args

using endpoint = redlock::node_config;

std::string to_string(const endpoint& e) {
  return e.host.find(':') == std::string::npos ? fmt::format("{}:{}", e.host, e.port)
                                               : fmt::format("[{}]:{}", e.host, e.port);
}

/// The store of docker-compose.yml (and scripts/demo.sh): 127.0.0.1:7100.
endpoint local_store() {
  endpoint store;
  store.host = "127.0.0.1";
  store.port = 7100;
  return store;
}

struct options {
  std::vector<endpoint> nodes = example_local_cluster();
  std::optional<endpoint> store = local_store();
  long long workers = 8;
  long long stock = 200;
  bool use_lock = true;
  std::chrono::milliseconds ttl{2000};
  std::string prefix = "demo:";
};

// ---------------------------------------------------------------------------
// Command line

/// Declares the options on `app`; `opt` holds the defaults and receives the values.
void add_options(CLI::App& app, options& opt) {
  app.footer(
      "Exit status: 0 nothing oversold (always with --no-lock), 1 oversold with the lock, 2 bad "
      "command line, 3 a worker or the store failed.");
  redlock::args::add_nodes(app, opt.nodes,
                           "Redis masters used as lock nodes (default: the local cluster, "
                           "127.0.0.1:7001..7005)");
  redlock::args::add_endpoint(
      app, "--store", opt.store,
      "Redis instance holding the shop's data, not a lock node (default: 127.0.0.1:7100)");
  app.add_option("--workers", opt.workers, "Worker processes")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--stock", opt.stock, "Items in stock at the start")
      ->capture_default_str()
      ->check(CLI::Range(0, 1'000'000'000));
  app.add_flag_callback(
      "--no-lock", [&opt] { opt.use_lock = false; }, "Sell without the lock, to show the oversell");
  redlock::args::add_duration(app, "--ttl", opt.ttl, "Lock TTL (1ms to 24h)");
  app.add_option("--prefix", opt.prefix,
                 "Key prefix: the data keys are PREFIX+\"stock\" and PREFIX+\"sold\", the lock "
                 "key PREFIX+\"lock:stock\"; every key under PREFIX in the store is deleted at the "
                 "start")
      ->capture_default_str();
}

/// What is wrong with the options taken together, if anything.
std::optional<std::string> command_line_problem(const options& opt) {
  if (!opt.store) return "--store is required";
  if (opt.use_lock && opt.nodes.empty()) return "--nodes is required (or --no-lock)";
  if (opt.ttl < 1ms || opt.ttl > 24h) return "--ttl must be between 1ms and 24h";
  // The demo deletes every key under the prefix: an empty one would wipe the store.
  if (opt.prefix.empty()) return "--prefix must not be empty";
  for (const auto& node : opt.nodes) {
    if (node.host == opt.store->host && node.port == opt.store->port) {
      return fmt::format("--store {} must not be one of the lock nodes", to_string(node));
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Lock configuration

redlock::client_config make_client_config(const options& opt) {
  redlock::client_config config;
  config.nodes = opt.nodes;
  config.key_prefix = opt.prefix + "lock:";
  return config;
}

redlock::lock_options make_lock_options(const options& opt) {
  redlock::lock_options lock_opts;
  lock_opts.ttl = opt.ttl;
  // Workers queue up for the lock: keep retrying (no attempt limit) with a
  // short backoff, but give up after 10 s so a dead cluster is reported.
  lock_opts.retry = redlock::retry_policy::exponential(1ms, 20ms, 0);
  lock_opts.wait_timeout = 10s;
  return lock_opts;
}

/// Checks the lock configuration once, here, rather than in W workers;
/// prints its warnings. Returns what is wrong, if anything.
std::optional<std::string> lock_configuration_problem(const options& opt) {
  if (!opt.use_lock) return std::nullopt;
  const redlock::client_config config = make_client_config(opt);
  try {
    for (const auto& warning : redlock::validate(config)) {
      fmt::print(stderr, "stock_demo: warning: {}\n", warning);
    }
  } catch (const redlock::config_error& e) {
    std::string_view what = e.what();
    if (what.starts_with("redlock: ")) what.remove_prefix(9);  // our own line says it
    return fmt::format("--nodes: {}", what);
  }
  if (const auto ec = redlock::validate("stock", make_lock_options(opt), config.drift_factor)) {
    return fmt::format("--ttl: {}", ec.message());
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The shop's data store: a plain synchronous hiredis connection.

struct reply_deleter {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

struct context_deleter {
  void operator()(redisContext* c) const noexcept { redisFree(c); }
};

class store {
 public:
  explicit store(const endpoint& where) : name_(to_string(where)) {
    const timeval timeout{2, 0};
    ctx_.reset(redisConnectWithTimeout(where.host.c_str(), where.port, timeout));
    if (!ctx_) throw std::runtime_error(fmt::format("store {}: out of memory", name_));
    if (ctx_->err) throw std::runtime_error(fmt::format("store {}: {}", name_, ctx_->errstr));
    // A hung store must not hang the demo: fail commands after 5 s.
    redisSetTimeout(ctx_.get(), timeval{5, 0});
  }

  /// Runs one command; throws on an I/O error or an error reply.
  reply_ptr command(std::initializer_list<std::string_view> args) {
    return command_args(std::vector<std::string_view>(args));
  }

  reply_ptr command_args(const std::vector<std::string_view>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    void* raw =
        redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data());
    reply_ptr r(static_cast<redisReply*>(raw));
    if (!r) throw std::runtime_error(fmt::format("store {}: {}: {}", name_, args[0], ctx_->errstr));
    if (r->type == REDIS_REPLY_ERROR) {
      throw std::runtime_error(
          fmt::format("store {}: {}: {}", name_, args[0], std::string_view(r->str, r->len)));
    }
    return r;
  }

  /// GET of a key that must hold an integer.
  long long get_integer(std::string_view key) {
    const reply_ptr r = command({"GET", key});
    if (r->type == REDIS_REPLY_NIL) {
      throw std::runtime_error(fmt::format("store {}: key {} is missing", name_, key));
    }
    long long value = 0;
    const std::string_view text(r->str, r->len);
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (r->type != REDIS_REPLY_STRING || ec != std::errc{} || ptr != text.data() + text.size()) {
      throw std::runtime_error(
          fmt::format("store {}: key {} does not hold an integer", name_, key));
    }
    return value;
  }

  void set_integer(std::string_view key, long long value) {
    command({"SET", key, std::to_string(value)});
  }

  /// Deletes every key that starts with `prefix`.
  void delete_prefixed(std::string_view prefix) {
    // SCAN's MATCH is a glob pattern: escape its special characters.
    std::string pattern;
    for (const char c : prefix) {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
      pattern += c;
    }
    pattern += '*';
    std::string cursor = "0";
    do {
      const reply_ptr r = command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        throw std::runtime_error(fmt::format("store {}: unexpected SCAN reply", name_));
      }
      cursor.assign(r->element[0]->str, r->element[0]->len);
      const redisReply* keys = r->element[1];
      if (keys->elements > 0) {
        std::vector<std::string_view> del{"DEL"};
        for (std::size_t i = 0; i < keys->elements; ++i) {
          del.emplace_back(keys->element[i]->str, keys->element[i]->len);
        }
        command_args(del);
      }
    } while (cursor != "0");
  }

 private:
  std::string name_;
  std::unique_ptr<redisContext, context_deleter> ctx_;
};

// ---------------------------------------------------------------------------
// Workers

/// Releases the lock when the sale ends, however it ends (an exception from
/// the store included), instead of leaving the others waiting for the TTL.
class held_lock {
 public:
  held_lock(redlock::blocking_client& locks, redlock::lock held, long long worker)
      : locks_(locks), held_(std::move(held)), worker_(worker) {}
  held_lock(const held_lock&) = delete;
  held_lock& operator=(const held_lock&) = delete;
  ~held_lock() {
    redlock::error_code ec;
    locks_.release(held_, ec);
    // Not fatal: the key expires with its TTL; a lasting problem makes the
    // next acquire fail, and that is reported.
    if (ec) fmt::print(stderr, "worker {}: warning: release failed: {}\n", worker_, ec.message());
  }
  const redlock::lock& held() const noexcept { return held_; }

 private:
  redlock::blocking_client& locks_;
  redlock::lock held_;
  long long worker_;
};

/// Sells until the stock is gone. Returns the process's exit status.
int run_worker(long long id, const options& opt) noexcept {
  try {
    store db(*opt.store);
    const std::string stock_key = opt.prefix + "stock";
    const std::string sold_key = opt.prefix + "sold";

    std::optional<redlock::blocking_client> locks;
    if (opt.use_lock) {
      redlock::client_config config = make_client_config(opt);
      // The parent already printed the configuration warnings once; only
      // errors are worth repeating from every worker.
      config.log = [id](redlock::log_level level, std::string_view message) {
        if (level == redlock::log_level::error) {
          fmt::print(stderr, "worker {}: redlock: {}\n", id, message);
        }
      };
      locks.emplace(std::move(config));
    }
    const redlock::lock_options lock_opts = make_lock_options(opt);

    for (;;) {
      std::optional<held_lock> guard;
      if (locks) {
        redlock::error_code ec;
        redlock::lock held = locks->acquire("stock", lock_opts, ec);
        if (ec) {
          fmt::print(stderr, "worker {}: could not acquire the lock: {}\n", id, ec.message());
          return exit_failure;
        }
        guard.emplace(*locks, std::move(held), id);
      }

      const long long stock = db.get_integer(stock_key);
      if (stock <= 0) return exit_ok;  // sold out; the guard releases the lock

      // The simulated work of a sale (payment, ...): not synchronisation, it
      // only widens the window in which an unlocked read-modify-write races.
      std::this_thread::sleep_for(200us);

      // Do not write under a lock whose validity has run out: someone else
      // may hold it by now. (This narrows the window but cannot close it; a
      // real system would also fence the write, see docs/safety.md.)
      if (guard && !guard->held().valid()) {
        throw std::runtime_error("the lock's validity ran out during a sale; sale abandoned");
      }
      db.set_integer(stock_key, stock - 1);
      db.command({"INCR", sold_key});
    }
  } catch (const redlock::config_error& e) {
    fmt::print(stderr, "worker {}: bad lock configuration: {}\n", id, e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: {}\n", id, e.what());
  }
  return exit_failure;
}

// ---------------------------------------------------------------------------
// Parent

/// Waits for every worker; returns false if any failed.
bool wait_for_workers(const std::vector<pid_t>& pids) {
  bool all_ok = true;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    pid_t r = 0;
    do {
      r = waitpid(pids[i], &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      fmt::print(stderr, "stock_demo: waitpid for worker {}: {}\n", i + 1, std::strerror(errno));
      all_ok = false;
    } else if (WIFSIGNALED(status)) {
      fmt::print(stderr, "worker {}: killed by signal {} ({})\n", i + 1, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
      all_ok = false;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != exit_ok) {
      all_ok = false;  // the worker printed its own error
    }
  }
  return all_ok;
}

int run(const options& opt) {
  const std::string stock_key = opt.prefix + "stock";
  const std::string sold_key = opt.prefix + "sold";
  {
    // Reset the shop, then close the connection: children must not inherit it.
    store db(*opt.store);
    db.delete_prefixed(opt.prefix);
    db.set_integer(stock_key, opt.stock);
    db.set_integer(sold_key, 0);
  }

  // Fork before anything creates a thread or an io_context: fork copies
  // only the calling thread. Flush first so buffered output is not duplicated.
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  bool all_ok = true;
  for (long long id = 1; id <= opt.workers; ++id) {
    const pid_t pid = fork();
    if (pid == 0) {
      const int status = run_worker(id, opt);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(status);  // skip the parent's atexit handlers and static destructors
    }
    if (pid < 0) {
      fmt::print(stderr, "stock_demo: fork of worker {}: {}\n", id, std::strerror(errno));
      all_ok = false;
      break;  // wait for those already running
    }
    pids.push_back(pid);
  }
  all_ok = wait_for_workers(pids) && all_ok;
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

  store db(*opt.store);
  const long long remaining = db.get_integer(stock_key);
  const long long sold = db.get_integer(sold_key);
  const long long oversold = std::max(0LL, sold - opt.stock);

  const std::string mode =
      opt.use_lock
          ? fmt::format("with lock ({} node{}, ttl {})", opt.nodes.size(),
                        opt.nodes.size() == 1 ? "" : "s", redlock::args::format_duration(opt.ttl))
          : std::string("without lock");
  fmt::print("mode: {}, workers: {}, stock: {}, elapsed: {:.3f} s{}\n", mode, opt.workers,
             opt.stock, elapsed.count(), all_ok ? "" : " (some workers failed)");
  fmt::print("sold={} remaining={} oversold={}\n", sold, remaining, oversold);

  if (!all_ok) return exit_failure;
  if (oversold > 0 && opt.use_lock) return exit_oversold;
  return exit_ok;  // without the lock, the oversell is the point
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The oversell demonstration: W worker processes sell S items kept in a Redis store\n"
      "of their own, each sale a read-modify-write, with or without a Redlock around it.\n",
      "stock_demo"};
  options opt;
  add_options(app, opt);
  if (const auto exit_status = redlock::args::parse(app, argc, argv)) return *exit_status;
  if (const auto problem = command_line_problem(opt)) {
    return redlock::args::usage_error(app, *problem);
  }
  try {
    if (const auto problem = lock_configuration_problem(opt)) {
      return redlock::args::usage_error(app, *problem);
    }
    return run(opt);
  } catch (const std::exception& e) {
    fmt::print(stderr, "stock_demo: {}\n", e.what());
    return exit_failure;
  }
}
