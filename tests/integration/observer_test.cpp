// The observer hooks against real servers: operation outcomes with
// latency, each node's answers, retries and waits, lost locks and
// connection changes.
#include "test_env.hpp"

#include <redlock/keeper.hpp>
#include <redlock/observer.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace redlock::itest;
using redlock::connection_event;
using redlock::errc;
using redlock::error_code;
using redlock::operation_kind;

namespace {

/// Keeps every event (all calls come on the client's strand, this thread).
struct recorder final : redlock::observer {
  struct operation {
    operation_kind kind;
    std::string resource;
    error_code result;
    std::chrono::nanoseconds latency;
    unsigned attempts;
  };
  struct node_answer {
    operation_kind kind;
    std::size_t node;
    std::string endpoint;
    redlock::node_outcome outcome;
    std::chrono::nanoseconds latency;
  };
  struct connection {
    std::size_t node;
    connection_event event;
    error_code error;
  };
  std::vector<operation> operations;
  std::vector<node_answer> answers;
  std::vector<std::pair<unsigned, error_code>> retries;
  std::size_t waits = 0;
  std::vector<error_code> lost;
  std::vector<connection> connections;

  void on_operation(const redlock::operation_report& r) override {
    operations.push_back({r.kind, std::string(r.resource), r.result, r.latency, r.attempts});
  }
  void on_node_reply(const redlock::node_report& r) override {
    answers.push_back({r.kind, r.node, std::string(r.endpoint), r.outcome, r.latency});
  }
  void on_retry(std::string_view, unsigned attempt, error_code cause) override {
    retries.emplace_back(attempt, cause);
  }
  void on_wait(std::string_view) override { ++waits; }
  void on_lock_lost(std::string_view resource, error_code reason) override {
    CHECK(resource == "kept");
    lost.push_back(reason);
  }
  void on_connection(std::size_t node, std::string_view, connection_event event,
                     error_code error) override {
    connections.push_back({node, event, error});
  }

  std::size_t answers_of(operation_kind kind, redlock::node_outcome::status state) const {
    return static_cast<std::size_t>(std::count_if(answers.begin(), answers.end(), [&](auto& a) {
      return a.kind == kind && a.outcome.state == state;
    }));
  }
  std::size_t events(std::size_t node, connection_event event) const {
    return static_cast<std::size_t>(
        std::count_if(connections.begin(), connections.end(),
                      [&](auto& c) { return c.node == node && c.event == event; }));
  }
};

}  // namespace

TEST_CASE("the observer hears each operation, each node's answer and the connections",
          "[integration][observer]") {
  env e;
  e.nodes.node(4).stop();
  auto watching = std::make_shared<recorder>();
  auto config = e.config;
  config.observer = watching;
  redlock::client locks(e.io.get_executor(), config);

  auto got = acquire(e.io, locks, "job", once());
  REQUIRE_FALSE(got.ec);
  auto extended = extend(e.io, locks, got.held, 10s);
  REQUIRE_FALSE(extended.ec);
  REQUIRE_FALSE(release(e.io, locks, got.held).ec);
  // The operations complete at a quorum; the other answers follow.
  run_until(
      e.io, [&] { return watching->answers_of(operation_kind::release, status::acquired) == 4; },
      5s, "every release answer");

  REQUIRE(watching->operations.size() == 3);
  const operation_kind kinds[] = {operation_kind::acquire, operation_kind::extend,
                                  operation_kind::release};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& op = watching->operations[i];
    CHECK(op.kind == kinds[i]);
    CHECK(op.resource == "job");
    CHECK_FALSE(op.result);
    CHECK(op.latency > std::chrono::nanoseconds(0));
    CHECK(op.latency < 5s);
    CHECK(op.attempts == 1);
  }
  CHECK(watching->answers_of(operation_kind::acquire, status::acquired) == 4);
  CHECK(watching->answers_of(operation_kind::extend, status::acquired) == 4);
  // Node 4 is down: its requests fail, and its connection attempts too.
  // (The release's delete waits for it to come back, within the TTL.)
  CHECK(watching->answers_of(operation_kind::acquire, status::failed) == 1);
  CHECK(watching->answers_of(operation_kind::extend, status::failed) == 1);
  CHECK(watching->answers_of(operation_kind::release, status::failed) == 0);
  for (const auto& a : watching->answers) {
    if (a.outcome.state == status::failed) {
      CHECK(a.node == 4);
      CHECK(a.outcome.error);
      CHECK(a.endpoint == fmt::format("127.0.0.1:{}", e.nodes.node(4).port()));
    }
    CHECK(a.latency >= std::chrono::nanoseconds(0));
  }
  for (std::size_t i = 0; i < 4; ++i) CHECK(watching->events(i, connection_event::connected) == 1);
  CHECK(watching->events(4, connection_event::connected) == 0);
  CHECK(watching->events(4, connection_event::failed) >= 1);

  // A node restarted: disconnected, then connected again.
  e.nodes.node(0).restart();
  run_until(
      e.io, [&] { return watching->events(0, connection_event::connected) == 2; }, 5s,
      "the reconnect");
  CHECK(watching->events(0, connection_event::disconnected) == 1);
}

TEST_CASE("the observer hears an acquire's retries and waits, with the cause",
          "[integration][observer]") {
  env e;
  for (auto& admin : e.admin) REQUIRE(foreign_set_nx(*admin, e.key("busy"), "someone-else"));
  auto watching = std::make_shared<recorder>();
  auto config = e.config;
  config.observer = watching;
  redlock::client locks(e.io.get_executor(), config);
  auto options = once();
  options.retry = redlock::retry_policy::fixed(20ms, 3);
  auto got = acquire(e.io, locks, "busy", options);
  CHECK(got.ec == errc::not_acquired);
  REQUIRE(watching->operations.size() == 1);
  CHECK(watching->operations[0].attempts == 3);
  CHECK(watching->operations[0].result == errc::not_acquired);
  REQUIRE(watching->retries.size() == 2);
  CHECK(watching->retries[0].first == 2);
  CHECK(watching->retries[1].first == 3);
  CHECK(watching->retries[0].second == errc::not_acquired);
  CHECK(watching->waits == 2);
  CHECK(watching->answers_of(operation_kind::acquire, status::held_elsewhere) >= 9);
}

TEST_CASE("the observer hears a kept lock's loss", "[integration][observer]") {
  env e;
  auto watching = std::make_shared<recorder>();
  auto config = e.config;
  config.observer = watching;
  redlock::client locks(e.io.get_executor(), config);
  auto got = acquire(e.io, locks, "kept", once(600ms));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(e.key("kept"), got.held.token()));
  redlock::keeper kept(locks, got.held);
  for (std::size_t i = 0; i < 3; ++i) {
    e.admin[i]->command({"SET", e.key("kept"), "someone-else", "PX", "60000"});
  }
  run_until(
      e.io, [&] { return !watching->lost.empty(); }, 3s, "the lost-lock signal");
  CHECK(watching->lost == std::vector<error_code>{make_error_code(errc::lock_lost)});
  // The extension that found it lost was an operation like any other.
  CHECK(std::any_of(watching->operations.begin(), watching->operations.end(), [](auto& op) {
    return op.kind == operation_kind::extend && op.result == errc::lock_lost;
  }));
}
