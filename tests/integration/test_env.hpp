// Shared helpers of the integration tests: a client configuration for a test
// cluster, a log sink that keeps the lines, a bounded way to run an
// io_context until an operation's handler has fired, and admin-side probes.
#pragma once

#include <redlock/redlock.hpp>  // first: it includes <utility> before any Asio header

#include "support/admin_client.hpp"
#include "support/fault_proxy.hpp"
#include "support/redis_server.hpp"

#include "detail/commands.hpp"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/system_error.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace redlock::itest {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;
using status = node_outcome::status;

/// No single operation in these tests may take longer: past it, it hangs.
inline constexpr milliseconds op_limit{10000};

// ---------------------------------------------------------------------------
// Configuration and logging

/// Keeps the client's log lines. The sink may be called from any thread
/// (blocking_client logs from its own), hence the mutex.
class log_capture {
 public:
  struct line {
    log_level level;
    std::string text;
  };

  log_sink sink() const {
    return [state = state_](log_level level, std::string_view text) {
      const std::lock_guard guard(state->mutex);
      state->lines.push_back({level, std::string(text)});
    };
  }

  std::vector<line> lines() const {
    const std::lock_guard guard(state_->mutex);
    return state_->lines;
  }

  /// Lines of `level` that contain `needle`.
  std::size_t count(log_level level, std::string_view needle = {}) const {
    const std::lock_guard guard(state_->mutex);
    return static_cast<std::size_t>(
        std::count_if(state_->lines.begin(), state_->lines.end(), [&](const line& l) {
          return l.level == level && l.text.find(needle) != std::string::npos;
        }));
  }

  /// Every line, for failure messages.
  std::string dump() const {
    std::string out;
    for (const auto& l : lines()) {
      out += fmt::format("[{}] {}\n", static_cast<int>(l.level), l.text);
    }
    return out;
  }

 private:
  struct shared {
    std::mutex mutex;
    std::vector<line> lines;
  };
  std::shared_ptr<shared> state_ = std::make_shared<shared>();
};

/// A key prefix no other test (or earlier client in this one) uses.
inline std::string unique_prefix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("itest:{}:{}:", ::getpid(), ++counter);
}

/// All nodes of `nodes`, a fresh key prefix, and `log` as the sink.
inline client_config make_config(const test::cluster& nodes, const log_capture& log) {
  client_config config;
  config.nodes = nodes.node_configs();
  config.key_prefix = unique_prefix();
  config.log = log.sink();
  // The test servers run without AOF on purpose: the warning would be noise.
  config.warn_without_aof = false;
  return config;
}

// ---------------------------------------------------------------------------
// Running operations to completion, never longer than a deadline

/// Runs `io` on this thread until `done()` holds. FAILs the test when that
/// takes longer than `limit`, or when the io_context runs out of work first
/// (then nothing is left that could make `done()` true).
template <class Predicate>
void run_until(boost::asio::io_context& io, Predicate done, milliseconds limit = op_limit,
               std::string_view what = "the operation") {
  const auto deadline = steady::now() + limit;
  io.restart();
  while (!done()) {
    const auto now = steady::now();
    if (now >= deadline) FAIL(what << " did not complete within " << limit.count() << " ms");
    if (io.run_one_for(deadline - now) == 0 && io.stopped() && !done()) {
      FAIL(what << ": the io_context ran out of work before it completed");
    }
  }
}

/// Starts an operation with a callback and runs `io` until the callback has
/// fired; returns its arguments. `start` receives the callback, whose
/// signature is void(Results...). The result lives in a shared_ptr so a
/// handler that fires after a failed test has returned touches no dead frame.
template <class... Results, class Start>
std::tuple<Results...> run_op(boost::asio::io_context& io, Start&& start,
                              milliseconds limit = op_limit) {
  auto result = std::make_shared<std::optional<std::tuple<Results...>>>();
  std::forward<Start>(start)([result](Results... r) { result->emplace(std::move(r)...); });
  run_until(
      io, [&] { return result->has_value(); }, limit);
  return std::move(**result);
}

/// Runs `io` on this thread until `f` (from use_future, for an operation
/// on `io`) is ready; returns what it holds, or throws what it holds.
template <class T>
T get_running(boost::asio::io_context& io, std::future<T>& f, milliseconds limit = op_limit) {
  run_until(
      io, [&] { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }, limit,
      "the future");
  return f.get();
}

/// Lets `delay` pass while running `io`, on an asio timer: for tests about
/// time passing (a lock expiring), or pacing retries, never to wait for an
/// event that has a handler of its own.
inline void wait_on_timer(boost::asio::io_context& io, milliseconds delay) {
  boost::asio::steady_timer timer(io, delay);
  auto fired = std::make_shared<bool>(false);
  timer.async_wait([fired](error_code) { *fired = true; });
  run_until(
      io, [&] { return *fired; }, delay + 5s, "a timer");
}

/// The code of the boost::system::system_error that `act` throws; success
/// when it throws nothing.
template <class Act>
error_code code_of(Act&& act) {
  try {
    std::forward<Act>(act)();
  } catch (const boost::system::system_error& failure) {
    return failure.code();
  }
  return {};
}

struct lock_result {
  error_code ec;
  lock held;
};

struct unlock_result {
  error_code ec;
  std::size_t removed = 0;
};

inline lock_result acquire(boost::asio::io_context& io, client& locks, std::string resource,
                           const lock_options& options = {}) {
  auto [ec, held] = run_op<error_code, lock>(io, [&](auto handler) {
    locks.async_acquire(std::move(resource), options, std::move(handler));
  });
  return {ec, std::move(held)};
}

inline lock_result acquire_all(boost::asio::io_context& io, client& locks,
                               std::vector<std::string> resources, const lock_options& options) {
  auto [ec, held] = run_op<error_code, lock>(io, [&](auto handler) {
    locks.async_acquire_all(std::move(resources), options, std::move(handler));
  });
  return {ec, std::move(held)};
}

/// Where an operation started without waiting stores its outcome.
using pending_lock = std::shared_ptr<std::optional<lock_result>>;
inline pending_lock make_pending() { return std::make_shared<std::optional<lock_result>>(); }
/// The completion handler that fills `out`.
inline auto store_in(const pending_lock& out) {
  return [out](error_code ec, lock l) { out->emplace(lock_result{ec, std::move(l)}); };
}

inline unlock_result release(boost::asio::io_context& io, client& locks, const lock& held) {
  auto [ec, removed] = run_op<error_code, std::size_t>(
      io, [&](auto handler) { locks.async_release(held, std::move(handler)); });
  return {ec, removed};
}

inline lock_result extend(boost::asio::io_context& io, client& locks, const lock& held,
                          milliseconds ttl) {
  auto [ec, extended] = run_op<error_code, lock>(
      io, [&](auto handler) { locks.async_extend(held, ttl, std::move(handler)); });
  return {ec, std::move(extended)};
}

/// Options of a single attempt, no retry. The request timeout defaults to a
/// generous ttl/4 (at most 2 s) instead of the library's ttl/20 (at most
/// 500 ms): a test that is not about timeouts must not fail on a busy machine.
inline lock_options once(milliseconds ttl = 10s,
                         std::optional<milliseconds> request_timeout = std::nullopt) {
  lock_options options;
  options.ttl = ttl;
  options.request_timeout = request_timeout.value_or(std::min<milliseconds>(ttl / 4, 2s));
  options.retry = retry_policy::try_once();
  return options;
}

/// Options of a waiter that retries only every `retry_delay` (no jitter, 3
/// attempts), so a quick success can only come from a wake-up.
inline lock_options waiting(milliseconds retry_delay) {
  lock_options options;
  options.ttl = 10s;
  options.request_timeout = 2s;
  options.retry = retry_policy::fixed(retry_delay, 3, 0.0);
  return options;
}

/// Nodes whose outcome is `state`.
inline std::size_t count_nodes(const lock& held, status state) {
  return static_cast<std::size_t>(
      std::count_if(held.nodes().begin(), held.nodes().end(),
                    [&](const node_outcome& o) { return o.state == state; }));
}

/// "0:acquired 1:failed(...) ...", for failure messages.
inline std::string describe_nodes(const lock& held) {
  std::string out;
  for (std::size_t i = 0; i < held.nodes().size(); ++i) {
    const auto& o = held.nodes()[i];
    out += fmt::format("{}:{}", i, redlock::to_string(o.state));
    if (o.error) out += fmt::format("({})", o.error.message());
    out += ' ';
  }
  return out;
}

/// Makes sure every connection of `locks` is set up, or has failed: a lock
/// and its unlock (each completes at a quorum), then a status read, which
/// waits for every node's answer or failure (for at most 2 s). Each
/// connection runs its commands in order, so a node that answered it has
/// run the lock's SET and delete too. (A second unlock of the same handle
/// would not do: it sends nothing.)
inline void warm_up(boost::asio::io_context& io, client& locks) {
  auto got = acquire(io, locks, "warm-up", once());
  REQUIRE_FALSE(got.ec);
  const auto released = release(io, locks, got.held);
  REQUIRE_FALSE(released.ec);
  REQUIRE(released.removed >= locks.quorum());
  run_op<error_code, resource_status>(
      io, [&](auto handler) { locks.async_status("warm-up", 2s, std::move(handler)); });
}

/// Every node's answers that a client reports to its observer, late ones
/// included. A lock handle's nodes() are what was known when the operation
/// completed, at a quorum: a slower node stays `pending` there for good, so
/// a test about that node waits here for its answer. Thread-safe (a
/// blocking_client reports from its own thread).
class answer_log final : public observer {
 public:
  struct answer {
    operation_kind kind;
    std::size_t node;
    node_outcome outcome;
  };

  void on_node_reply(const node_report& r) override {
    const std::lock_guard guard(mutex_);
    answers_.push_back({r.kind, r.node, r.outcome});
  }

  /// How many answers of `kind` node `node` gave so far.
  std::size_t count(operation_kind kind, std::size_t node) const {
    const std::lock_guard guard(mutex_);
    return static_cast<std::size_t>(
        std::count_if(answers_.begin(), answers_.end(),
                      [&](const answer& a) { return a.kind == kind && a.node == node; }));
  }

  /// The last answer of `kind` from `node`, if any.
  std::optional<node_outcome> last(operation_kind kind, std::size_t node) const {
    const std::lock_guard guard(mutex_);
    for (auto it = answers_.rbegin(); it != answers_.rend(); ++it) {
      if (it->kind == kind && it->node == node) return it->outcome;
    }
    return std::nullopt;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<answer> answers_;
};

/// Installs an answer_log as `config`'s observer (clients made from it
/// afterwards report there).
inline std::shared_ptr<answer_log> watch_answers(client_config& config) {
  auto answers = std::make_shared<answer_log>();
  config.observer = answers;
  return answers;
}

// ---------------------------------------------------------------------------
// The Redis side

using admins = std::vector<std::unique_ptr<test::admin_client>>;

/// One admin connection per node, authenticated if the node needs it.
inline admins connect_admins(const test::cluster& nodes) {
  admins out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out.push_back(std::make_unique<test::admin_client>(nodes.node(i).port(),
                                                       nodes.node(i).options().requirepass));
  }
  return out;
}

/// Polls a condition on the Redis side every few ms (Redis offers no event
/// to wait for); false if it did not hold within `limit`. Between polls it
/// runs `io`, so the clients keep working meanwhile: a lock completes at
/// quorum, and the SET to a slower node may still be queued in the client.
template <class Predicate>
bool poll_until(boost::asio::io_context& io, Predicate condition, milliseconds limit = 2000ms,
                milliseconds interval = 5ms) {
  const auto deadline = steady::now() + limit;
  for (;;) {
    if (condition()) return true;
    if (steady::now() >= deadline) return false;
    const auto next = steady::now() + interval;
    io.restart();
    io.run_until(next);
    if (io.stopped()) std::this_thread::sleep_until(next);  // it had no work at all
  }
}

/// A numeric field of INFO <section> ("connected_clients", ...); -1 if absent.
inline long long info_field(test::admin_client& admin, const std::string& section,
                            std::string_view field) {
  const auto info = admin.command({"INFO", section});
  std::istringstream in(info.text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':') {
      return std::stoll(line.substr(field.size() + 1));
    }
  }
  return -1;
}

/// How often `command` (lower case: "set", "evalsha") ran since the last
/// CONFIG RESETSTAT, from INFO commandstats.
inline long long command_calls(test::admin_client& admin, std::string_view command) {
  const auto info = admin.command({"INFO", "commandstats"});
  const auto tag = fmt::format("cmdstat_{}:calls=", command);
  const auto at = info.text.find(tag);
  if (at == std::string::npos) return 0;
  return std::stoll(info.text.substr(at + tag.size()));
}

/// How many scripts (EVAL and EVALSHA calls) the node ran since the last
/// CONFIG RESETSTAT.
inline long long script_calls(test::admin_client& admin) {
  return command_calls(admin, "eval") + command_calls(admin, "evalsha");
}

/// Sets `key` to `value` with a TTL, as another Redlock client would
/// (NX: only if absent). True when it was set.
inline bool foreign_set_nx(test::admin_client& admin, const std::string& key,
                           const std::string& value, milliseconds ttl = 60s) {
  const auto r = admin.command({"SET", key, value, "NX", "PX", std::to_string(ttl.count())});
  return r.type == test::admin_client::reply::kind::status && r.text == "OK";
}

/// A test case's cluster, log, configuration, admin connections and
/// io_context. Declare the client after it, so the client goes first; the
/// destructor then lets the client's posted shutdown run.
struct env {
  explicit env(std::size_t n = 5, test::server_options options = {})
      : nodes(n, std::move(options)),
        config(make_config(nodes, log)),
        admin(connect_admins(nodes)) {}

  ~env() {
    // Run the shutdown that destroyed clients posted, so they close their
    // connections; bounded, though nothing should keep it running.
    io.restart();
    io.run_for(500ms);
  }

  env(const env&) = delete;
  env& operator=(const env&) = delete;

  /// The key a resource maps to in Redis.
  std::string key(std::string_view resource) const {
    return config.key_prefix + std::string(resource);
  }

  /// Waits until `key` holds `token` on every node (a lock completes at
  /// quorum, the other nodes' SET may still be on its way).
  bool key_everywhere(const std::string& key, const std::string& token) {
    const bool everywhere = poll_until(io, [&] {
      for (const auto& a : admin) {
        if (a->get(key) != token) return false;
      }
      return true;
    });
    if (!everywhere) {
      for (std::size_t i = 0; i < admin.size(); ++i) {
        UNSCOPED_INFO("node " << i << ": " << key << " = " << admin[i]->get(key).value_or("(nil)")
                              << ", PTTL " << admin[i]->pttl(key) << "; wanted " << token);
      }
    }
    return everywhere;
  }

  /// On how many nodes `key` exists now (holding `token`, if one is given).
  /// An operation that completed holds on a quorum at least; the other
  /// nodes' commands may still be on their way.
  std::size_t nodes_holding(const std::string& key, const std::string& token = {}) {
    return static_cast<std::size_t>(std::count_if(admin.begin(), admin.end(), [&](const auto& a) {
      return token.empty() ? a->exists(key) : a->get(key) == token;
    }));
  }

  /// Waits until `key` holds `token` on every node but those in `except`.
  bool key_everywhere_but(const std::string& key, const std::string& token,
                          std::initializer_list<std::size_t> except) {
    return poll_until(io, [&] {
      for (std::size_t i = 0; i < admin.size(); ++i) {
        if (std::find(except.begin(), except.end(), i) == except.end() &&
            admin[i]->get(key) != token) {
          return false;
        }
      }
      return true;
    });
  }

  /// Acquires and releases a lock once and waits until it reached every
  /// node: then each node has connected and passed its topology check
  /// (warm_up() also accepts a node that failed).
  void warm_up_everywhere(client& locks) {
    auto got = acquire(io, locks, "warm-up-everywhere", once());
    REQUIRE_FALSE(got.ec);
    REQUIRE(key_everywhere(key("warm-up-everywhere"), got.held.token()));
    REQUIRE_FALSE(release(io, locks, got.held).ec);
    REQUIRE(key_nowhere(key("warm-up-everywhere")));
  }

  /// Waits until `key` is gone from every node (an unlock completes at a
  /// quorum; the other nodes' deletes may still be on their way).
  bool key_nowhere(const std::string& key) {
    const bool gone = poll_until(io, [&] {
      for (const auto& a : admin) {
        if (a->exists(key)) return false;
      }
      return true;
    });
    if (!gone) {
      for (std::size_t i = 0; i < admin.size(); ++i) {
        UNSCOPED_INFO("node " << i << ": " << key << " = " << admin[i]->get(key).value_or("(nil)"));
      }
    }
    return gone;
  }

  /// Waits until a client subscribed to the release announcements of `key`
  /// on every node: it waits for that key (Redis' side, so polled).
  bool someone_waits_for(const std::string& key) {
    const auto channel = redlock::detail::release_channel(key);
    return poll_until(io, [&] {
      for (const auto& a : admin) {
        const auto r = a->command({"PUBSUB", "NUMSUB", channel});
        if (r.elements.size() != 2 || r.elements[1].integer < 1) return false;
      }
      return true;
    });
  }

  /// Unlocks `held` and checks that its keys then go from every node.
  unlock_result release_everywhere(client& locks, const lock& held) {
    auto released = release(io, locks, held);
    for (const auto& resource : held.resources()) {
      CHECK(key_nowhere(locks.config().key_prefix + resource));
    }
    return released;
  }

  test::cluster nodes;
  log_capture log;
  client_config config;
  admins admin;
  boost::asio::io_context io;
};

/// Puts a fault proxy in front of each of `which` nodes of `e`'s config.
inline std::vector<std::unique_ptr<redlock::test::fault_proxy>> proxy_nodes(
    env& e, std::initializer_list<std::size_t> which) {
  std::vector<std::unique_ptr<redlock::test::fault_proxy>> proxies;
  for (auto i : which) {
    proxies.push_back(std::make_unique<redlock::test::fault_proxy>(e.nodes.node(i).port()));
    e.config.nodes[i].port = proxies.back()->port();
  }
  return proxies;
}

}  // namespace redlock::itest

// Readable values in assertion messages.
namespace Catch {

template <>
struct StringMaker<boost::system::error_code> {
  static std::string convert(const boost::system::error_code& ec) {
    return fmt::format("{}:{} \"{}\"", ec.category().name(), ec.value(), ec.message());
  }
};

template <>
struct StringMaker<redlock::errc> {
  static std::string convert(redlock::errc e) {
    return StringMaker<boost::system::error_code>::convert(make_error_code(e));
  }
};

template <>
struct StringMaker<redlock::node_outcome::status> {
  static std::string convert(redlock::node_outcome::status s) {
    return std::string(redlock::to_string(s));
  }
};

}  // namespace Catch
