// Waiting means waiting, unreachable means a clear error in bounded time
// (issue 20, point 6): a set wait_timeout is the limit of the attempts; an
// acquire whose nodes cannot answer ends with quorum_unreachable after
// lock_options::unreachable_timeout, naming each node and why; refused
// credentials and certificates end it at once; and the blocking client's
// try_acquire_scoped_for.
#include "test_env.hpp"

#include "support/hostile_server.hpp"
#include "support/tls_fixtures.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

namespace {

milliseconds ms_since(steady::time_point start) {
  return std::chrono::duration_cast<milliseconds>(steady::now() - start);
}

/// Retries without a limit on attempts, no wait: only the bound under test
/// (or the kind of failure) can end the acquire.
redlock::lock_options retrying_for_ever() {
  redlock::lock_options options;
  options.ttl = 10s;
  options.retry = redlock::retry_policy::fixed(50ms, 0);
  return options;
}

/// An acquire of "job" retried without limit but for a 1 s unreachable
/// bound: what it ended with, after how long, and how the failure reads.
struct bounded_outcome {
  lock_result got;
  milliseconds elapsed{};
  std::string why;
};
redlock::lock_options unreachable_within_1s() {
  auto options = retrying_for_ever();
  options.unreachable_timeout = 1s;
  return options;
}
bounded_outcome acquire_within_unreachable_bound(env& e, redlock::client& locks) {
  const auto options = unreachable_within_1s();
  const auto start = steady::now();
  bounded_outcome out{acquire(e.io, locks, "job", options), {}, {}};
  out.elapsed = ms_since(start);
  out.why = redlock::describe_failure(out.got.ec, out.got.held, locks.config().nodes);
  return out;
}

/// Short connection timeouts and reconnect delays, so that a failing node
/// fails each attempt quickly.
void fail_fast(redlock::client_config& config) {
  config.connect_timeout = 300ms;
  config.stall_timeout = 300ms;
  config.reconnect = {10ms, 100ms, 0.5};
}

}  // namespace

// Issue 20: wait_timeout = 5 s with the default retry policy gave up after
// three attempts (184 ms).
TEST_CASE("a 2 s wait with the default retry policy waits the 2 s", "[integration][waiting]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  for (auto& admin : e.admin) REQUIRE(foreign_set_nx(*admin, e.key("busy"), "othertoken"));

  redlock::lock_options options;
  options.ttl = 10s;
  options.wait_timeout = 2s;
  REQUIRE_FALSE(options.retry.max_attempts);  // the default policy
  const auto start = steady::now();
  auto got = acquire(e.io, locks, "busy", options);
  const auto elapsed = ms_since(start);
  INFO("gave up after " << elapsed.count() << " ms");
  CHECK(got.ec == errc::not_acquired);
  CHECK(elapsed >= 2s - 100ms);
  CHECK(elapsed < 2s + 1500ms);
}

TEST_CASE("a release during a 2 s wait with the default retry policy is taken",
          "[integration][waiting]") {
  env e(3);
  redlock::client holder(e.io.get_executor(), e.config);
  redlock::client waiter(e.io.get_executor(), e.config);
  warm_up(e.io, holder);
  warm_up(e.io, waiter);
  const auto key = e.key("queue");
  auto held = acquire(e.io, holder, "queue", once());
  REQUIRE_FALSE(held.ec);

  redlock::lock_options options;
  options.ttl = 10s;
  options.wait_timeout = 2s;
  auto waited = make_pending();
  waiter.async_acquire("queue", options, store_in(waited));
  REQUIRE(e.someone_waits_for(key));
  // Well past where three attempts of the default policy end (~200 ms).
  wait_on_timer(e.io, 800ms);
  REQUIRE_FALSE(waited->has_value());

  REQUIRE_FALSE(release(e.io, holder, held.held).ec);
  const auto released_at = steady::now();
  run_until(e.io, [&] { return waited->has_value(); });
  INFO("acquired " << ms_since(released_at).count() << " ms after the release");
  REQUIRE_FALSE((*waited)->ec);
  CHECK(ms_since(released_at) < 1s);
  // A quorum, not every node: woken by the release's message from a node
  // that ran it first, the waiter may reach another ahead of the release
  // there, and be refused on it.
  CHECK(e.nodes_holding(key, (*waited)->held.token()) >= 2);
}

TEST_CASE("unreachable_timeout ends an acquire of nodes that cannot answer, naming each",
          "[integration][waiting][unreachable]") {
  env e(3);
  // Node 2 is a port nothing listens on: it refuses every connection.
  const redlock::test::refusing_port refusing_node;
  const auto refusing = refusing_node.port();
  e.config.nodes[2].port = refusing;
  fail_fast(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  // Node 0 answers at first, then stops: 2 of 3 cannot answer.
  REQUIRE_FALSE(acquire(e.io, locks, "warm-up", once()).ec);
  const auto stopped = e.nodes.node(0).port();
  e.nodes.node(0).stop();

  auto [got, elapsed, why] = acquire_within_unreachable_bound(e, locks);
  INFO("after " << elapsed.count() << " ms: " << why);
  CHECK(got.ec == errc::quorum_unreachable);
  CHECK(elapsed >= 1s - 50ms);
  CHECK(elapsed < 1s + 1500ms);  // the bound, plus one attempt at most
  CHECK_THAT(why, Catch::StartsWith(got.ec.message()));
  CHECK_THAT(why, Catch::Contains(fmt::format("127.0.0.1:{}: ", stopped)));
  CHECK_THAT(why, Catch::Contains(fmt::format("127.0.0.1:{}: Connection refused", refusing)));
  // Node 1 answers: at most decided without ("no answer yet"), never failed.
  CHECK_THAT(why,
             !Catch::Contains(fmt::format("127.0.0.1:{}: Connection", e.nodes.node(1).port())));

  SECTION("the blocking client throws it, naming the nodes in what()") {
    redlock::blocking_client blocking(e.config);
    const auto blocking_start = steady::now();
    try {
      blocking.acquire("job", unreachable_within_1s());
      FAIL("acquired with 2 of 3 nodes unreachable");
    } catch (const boost::system::system_error& failure) {
      INFO(failure.what());
      CHECK(failure.code() == errc::quorum_unreachable);
      CHECK_THAT(failure.what(), Catch::Contains(fmt::format("127.0.0.1:{}: ", stopped)));
      CHECK_THAT(failure.what(),
                 Catch::Contains(fmt::format("127.0.0.1:{}: Connection refused", refusing)));
      CHECK_THAT(failure.what(), Catch::Contains(got.ec.message()));
    }
    CHECK(ms_since(blocking_start) < 1s + 1500ms);
  }

  SECTION("the scoped form names itself and the nodes in what()") {
    redlock::blocking_client blocking(e.config);
    try {
      auto scope = blocking.acquire_scoped("job", unreachable_within_1s());
      FAIL("acquired with 2 of 3 nodes unreachable");
    } catch (const boost::system::system_error& failure) {
      INFO(failure.what());
      CHECK(failure.code() == errc::quorum_unreachable);
      CHECK_THAT(failure.what(), Catch::StartsWith("redlock: acquire_scoped (127.0.0.1:"));
      CHECK_THAT(failure.what(),
                 Catch::Contains(fmt::format("127.0.0.1:{}: Connection refused", refusing)));
    }
  }
}

TEST_CASE("unreachable_timeout ends an acquire against a hostile majority",
          "[integration][waiting][unreachable]") {
  env e(1);
  std::vector<std::unique_ptr<redlock::test::hostile_server>> hostile;
  for (int i = 0; i < 2; ++i) {
    hostile.push_back(
        std::make_unique<redlock::test::hostile_server>(redlock::test::hostile_behaviour::garbage));
    redlock::node_config node;
    node.port = hostile.back()->port();
    e.config.nodes.push_back(node);
  }
  fail_fast(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  auto [got, elapsed, why] = acquire_within_unreachable_bound(e, locks);
  INFO("after " << elapsed.count() << " ms: " << why);
  CHECK(got.ec == errc::quorum_unreachable);
  CHECK(elapsed >= 1s - 50ms);
  CHECK(elapsed < 1s + 1500ms);
  for (const auto& server : hostile) {
    CHECK_THAT(why, Catch::Contains(fmt::format("127.0.0.1:{}: ", server->port())));
  }
  CHECK(e.key_nowhere(e.key("job")));
}

TEST_CASE("certificates that do not verify end an acquire at once, however it retries",
          "[integration][waiting][tls]") {
  const redlock::test::tls_cluster nodes(
      std::vector<redlock::test::tls_server_options>(3, redlock::test::good_tls_server()));
  log_capture log;
  redlock::client_config config;
  for (const auto port : nodes.tls_ports) {
    redlock::node_config node;
    node.port = port;
    config.nodes.push_back(node);
  }
  config.tls.enabled = true;
  config.tls.ca_file = redlock::test::test_certs().other_ca_file();  // not the nodes' CA
  config.key_prefix = unique_prefix();
  config.log = log.sink();
  config.warn_without_aof = false;
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);

  const auto start = steady::now();
  auto got = acquire(io, locks, "job", retrying_for_ever());
  const auto why = redlock::describe_failure(got.ec, got.held, config.nodes);
  INFO(why << "\n" << log.dump());
  CHECK(got.ec.category() == redlock::tls_verify_category());
  CHECK(ms_since(start) < 5s);  // one attempt: connect, handshake, refuse
  // Named on each node that failed (a majority; the last may have been
  // decided without).
  std::size_t named = 0;
  for (const auto port : nodes.tls_ports) {
    named += why.find(fmt::format("127.0.0.1:{}: TLS certificate verification failed: "
                                  "self-signed certificate in certificate chain",
                                  port)) != std::string::npos;
  }
  CHECK(named >= 2);
}

TEST_CASE("a password the nodes refuse ends an acquire at once, however it retries",
          "[integration][waiting]") {
  redlock::test::server_options secured;
  secured.requirepass = "s3cret";
  env e(3, secured);
  for (auto& node : e.config.nodes) node.password = "wrong";
  redlock::client locks(e.io.get_executor(), e.config);
  const auto start = steady::now();
  auto got = acquire(e.io, locks, "job", retrying_for_ever());
  INFO(describe_nodes(got.held) << e.log.dump());
  CHECK(got.ec == errc::authentication_failed);
  CHECK(ms_since(start) < 5s);
}

TEST_CASE("blocking try_acquire_scoped_for: held and kept extended, none after the wait, or thrown",
          "[integration][waiting][scoped]") {
  env e(3);
  redlock::blocking_client locks(e.config);
  const auto key = e.key("report");

  SECTION("free: held, and kept extended past its TTL") {
    auto options = once(500ms);
    auto scope = locks.try_acquire_scoped_for("report", 1s, options);
    REQUIRE(scope);
    REQUIRE(scope->owns_lock());
    const auto token = scope->held().token();
    wait_on_timer(e.io, 1200ms);  // time passing: more than twice the TTL
    CHECK(scope->held().valid());
    CHECK_FALSE(scope->lost());
    CHECK(e.key_everywhere(key, token));
    CHECK(scope->release() >= 2);
    CHECK(e.key_nowhere(key));
  }
  SECTION("held elsewhere for the whole wait: no lock, after the wait") {
    for (auto& admin : e.admin) REQUIRE(foreign_set_nx(*admin, key, "othertoken"));
    const auto start = steady::now();
    auto scope = locks.try_acquire_scoped_for("report", 1s);
    const auto elapsed = ms_since(start);
    INFO("gave up after " << elapsed.count() << " ms");
    CHECK_FALSE(scope);
    CHECK(elapsed >= 1s - 100ms);
    CHECK(elapsed < 1s + 1500ms);
    for (auto& admin : e.admin) CHECK(admin->get(key) == "othertoken");
  }
  SECTION("nodes that cannot answer: thrown, naming them, within unreachable_timeout") {
    e.nodes.node(0).stop();
    e.nodes.node(1).stop();
    redlock::lock_options options;
    options.unreachable_timeout = 500ms;
    const auto start = steady::now();
    try {
      locks.try_acquire_scoped_for("report", 10s, options);
      FAIL("acquired with 2 of 3 nodes stopped");
    } catch (const boost::system::system_error& failure) {
      INFO(failure.what());
      CHECK(failure.code() == errc::quorum_unreachable);
      for (const std::size_t i : {0, 1}) {
        CHECK_THAT(failure.what(),
                   Catch::Contains(fmt::format("127.0.0.1:{}: ", e.nodes.node(i).port())));
      }
    }
    CHECK(ms_since(start) < 500ms + 1500ms);
  }
  SECTION("invalid keep options: thrown before anything is sent") {
    redlock::keep_options keep;
    keep.extend_at = 2.0;
    const auto code = code_of([&] { locks.try_acquire_scoped_for("report", 1s, once(), keep); });
    CHECK(code == errc::invalid_keep_options);
    CHECK_FALSE(e.admin[0]->exists(key));
  }
}

// Review of issue 20 §6: a wait too long to convert exactly (seconds::max(),
// centuries) overflowed into no wait or an invalid argument.
TEST_CASE("a blocking wait of any length is a long wait, not an overflow",
          "[integration][waiting]") {
  env e(3);
  redlock::blocking_client locks(e.config);
  auto forever = locks.try_acquire_for("endless", std::chrono::seconds::max(), once(5s));
  REQUIRE(forever.has_value());
  auto centuries =
      locks.try_acquire_scoped_for("ages", std::chrono::hours(24 * 365 * 300), once(5s));
  REQUIRE(centuries.has_value());
  CHECK(centuries->owns_lock());
  locks.release(*forever);
}
