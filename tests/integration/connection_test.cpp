// The client's connections: one pipelined connection per node, replies
// matched to their own request even after a timeout, and shutdown with
// operations still pending.
#include "test_env.hpp"

#include "detail/command_connection.hpp"
#include "detail/commands.hpp"
#include "detail/subscriber_connection.hpp"
#include "support/fault_proxy.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

TEST_CASE("200 concurrent locks from one client share a single connection per node",
          "[integration]") {
  env e;
  constexpr std::size_t count = 200;

  // The admin connection is the only one so far.
  std::vector<long long> clients_before, connections_before;
  for (auto& admin : e.admin) {
    clients_before.push_back(info_field(*admin, "clients", "connected_clients"));
    connections_before.push_back(info_field(*admin, "stats", "total_connections_received"));
  }

  redlock::client locks(e.io.get_executor(), e.config);
  auto locked = std::make_shared<std::vector<lock_result>>();
  for (std::size_t i = 0; i < count; ++i) {
    locks.async_acquire("job-" + std::to_string(i), once(10s),
                        [locked](error_code ec, redlock::lock held) {
                          locked->push_back({ec, std::move(held)});
                        });
  }
  run_until(e.io, [&] { return locked->size() == count; });

  std::size_t succeeded = 0;
  for (const auto& r : *locked) succeeded += r.ec ? 0 : 1;
  CHECK(succeeded == count);

  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    // First every SET, also those of a node beyond the quorums: it has then
    // taken the client's connection too.
    CHECK(poll_until(e.io,
                     [&] { return e.admin[i]->keys(e.config.key_prefix + "*").size() == count; }));
    CHECK(info_field(*e.admin[i], "clients", "connected_clients") == clients_before[i] + 1);
    CHECK(info_field(*e.admin[i], "stats", "total_connections_received") ==
          connections_before[i] + 1);
  }

  auto unlocked = std::make_shared<std::vector<unlock_result>>();
  for (const auto& r : *locked) {
    locks.async_release(r.held, [unlocked](error_code ec, std::size_t removed) {
      unlocked->push_back({ec, removed});
    });
  }
  run_until(e.io, [&] { return unlocked->size() == count; });
  std::size_t fully_removed = 0;
  // Each unlock completes at a quorum; the last deletes follow.
  for (const auto& r : *unlocked) fully_removed += !r.ec && r.removed >= 3 ? 1 : 0;
  CHECK(fully_removed == count);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(poll_until(e.io, [&] { return e.admin[i]->keys(e.config.key_prefix + "*").empty(); }));
    CHECK(info_field(*e.admin[i], "stats", "total_connections_received") ==
          connections_before[i] + 1);
  }
}

// Node 0 is frozen while lock A is taken (A completes on the other four) and
// then unlocked (that release times out on node 0). Node 0 then owes two
// stale replies when it thaws, and lock B is sent right behind them. B is set
// up so that its outcome hinges on node 0's vote, and the stale replies say
// the opposite of B's own: misattributing one would flip B's result.
TEST_CASE("a late reply to a timed-out request is never taken for a later request's reply",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key_a = e.key("first");
  const auto key_b = e.key("second");
  // A and B complete at a quorum: a node beyond it gets its SETs (and their
  // undos and deletes) later. Counted from here (warm_up reached every node).
  std::vector<long long> sets;
  for (auto& a : e.admin) sets.push_back(command_calls(*a, "set"));
  const auto a_and_b_landed = [&](std::size_t i) {
    return command_calls(*e.admin[i], "set") >= sets[i] + 2;
  };

  // Takes and releases A with node 0 frozen, then thaws node 0.
  auto take_a_while_node_0_frozen = [&] {
    e.nodes.node(0).pause();
    auto a = acquire(e.io, locks, "first", once());
    INFO("A: " << describe_nodes(a.held));
    REQUIRE_FALSE(a.ec);
    REQUIRE(a.held.nodes()[0].state != status::acquired);
    const auto released = release(e.io, locks, a.held);  // at a quorum of nodes 1 to 4
    CHECK_FALSE(released.ec);
    CHECK(released.removed >= 3);
    e.nodes.node(0).resume();
  };

  SECTION("stale OK, 1 before B's nil") {
    // B is held elsewhere on 0, 1, 2: B must fail, and only node 0's nil can
    // make it fail. A stale OK counted for B would let it succeed.
    for (std::size_t i : {0, 1, 2}) REQUIRE(foreign_set_nx(*e.admin[i], key_b, "othertoken"));
    take_a_while_node_0_frozen();

    auto b = acquire(e.io, locks, "second", once());
    INFO("B: " << describe_nodes(b.held));
    CHECK(b.ec == errc::not_acquired);
    CHECK(b.held.nodes()[0].state == status::held_elsewhere);
    CHECK(e.admin[0]->get(key_b) == "othertoken");
    for (std::size_t i : {3, 4}) {  // B's attempt released
      CHECK(poll_until(e.io, [&] { return a_and_b_landed(i) && !e.admin[i]->exists(key_b); }));
    }
    // Node 0 ran A's late SET and then A's late release: A is gone there too.
    CHECK(poll_until(e.io, [&] { return !e.admin[0]->exists(key_a); }));
  }

  SECTION("stale nil, 0 before B's OK") {
    // A is held elsewhere on node 0 (its SET there answers nil), B on nodes 1
    // and 2: B needs node 0's OK. A stale nil counted for B would sink it.
    REQUIRE(foreign_set_nx(*e.admin[0], key_a, "othertoken"));
    for (std::size_t i : {1, 2}) REQUIRE(foreign_set_nx(*e.admin[i], key_b, "othertoken"));
    take_a_while_node_0_frozen();

    auto b = acquire(e.io, locks, "second", once());
    INFO("B: " << describe_nodes(b.held));
    REQUIRE_FALSE(b.ec);
    CHECK(b.held.nodes()[0].state == status::acquired);
    CHECK(e.admin[0]->get(key_b) == b.held.token());
    CHECK(e.admin[0]->get(key_a) == "othertoken");  // A's late release left it alone
    CHECK(release(e.io, locks, b.held).removed == 3);
  }

  for (std::size_t i = 1; i < 5; ++i) {
    CHECK(poll_until(e.io, [&] { return a_and_b_landed(i) && !e.admin[i]->exists(key_a); }));
  }
}

TEST_CASE("destroying the client completes pending operations with operation_aborted",
          "[integration]") {
  env e;
  auto locks = std::make_unique<redlock::client>(e.io.get_executor(), e.config);
  warm_up(e.io, *locks);
  auto held = acquire(e.io, *locks, "held", once(30s));
  REQUIRE_FALSE(held.ec);
  REQUIRE(e.key_everywhere(e.key("held"), held.held.token()));

  // Every node frozen: nothing can complete on its own before the timeouts.
  for (std::size_t i = 0; i < 5; ++i) e.nodes.node(i).pause();
  auto result = std::make_shared<std::optional<error_code>>();

  SECTION("a lock") {
    locks->async_acquire("stuck", once(30s, 20s),
                         [result](error_code ec, redlock::lock) { result->emplace(ec); });
  }
  SECTION("an extend") {
    locks->async_extend(held.held, 30s,
                        [result](error_code ec, redlock::lock) { result->emplace(ec); });
  }
  SECTION("an unlock") {
    locks->async_release(held.held, [result](error_code ec, std::size_t) { result->emplace(ec); });
  }

  // Let the operation start and send its commands.
  e.io.restart();
  e.io.poll();
  REQUIRE_FALSE(result->has_value());

  locks.reset();
  run_until(
      e.io, [&] { return result->has_value(); }, 5s, "the aborted operation");
  CHECK(**result == boost::asio::error::operation_aborted);

  // Nothing of the client keeps running: the io_context runs out of work.
  e.io.restart();
  e.io.run_for(2s);
  CHECK(e.io.stopped());

  for (std::size_t i = 0; i < 5; ++i) e.nodes.node(i).resume();
}

TEST_CASE("close() aborts pending and later operations and leaves no work on the executor",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto held = acquire(e.io, locks, "held", once(30s));
  REQUIRE_FALSE(held.ec);
  for (std::size_t i = 0; i < 5; ++i) e.nodes.node(i).pause();

  auto pending = std::make_shared<std::optional<error_code>>();
  locks.async_acquire("stuck", once(30s, 20s),
                      [pending](error_code ec, redlock::lock) { pending->emplace(ec); });
  e.io.restart();
  e.io.poll();
  REQUIRE_FALSE(pending->has_value());

  locks.close();
  struct later_results {
    std::optional<error_code> locked, extended, unlocked;
  };
  auto later = std::make_shared<later_results>();
  locks.async_acquire("after-close", once(),
                      [later](error_code ec, redlock::lock) { later->locked = ec; });
  locks.async_extend(held.held, 30s,
                     [later](error_code ec, redlock::lock) { later->extended = ec; });
  locks.async_release(held.held, [later](error_code ec, std::size_t) { later->unlocked = ec; });
  run_until(e.io, [&] {
    return pending->has_value() && later->locked && later->extended && later->unlocked;
  });

  CHECK(**pending == boost::asio::error::operation_aborted);
  CHECK(*later->locked == boost::asio::error::operation_aborted);
  CHECK(*later->extended == boost::asio::error::operation_aborted);
  CHECK(*later->unlocked == boost::asio::error::operation_aborted);

  // The client still exists, but keeps nothing running.
  e.io.restart();
  e.io.run_for(2s);
  CHECK(e.io.stopped());

  for (std::size_t i = 0; i < 5; ++i) e.nodes.node(i).resume();
}

// Review finding: a node still being set up (its first INFO check, AUTH)
// when the client closed lost the deletes queued for it, so a short-lived
// client (the CLI's release) left the key there until its TTL.
TEST_CASE("close() during a node's set-up still sends the deletes queued for it", "[integration]") {
  env e;
  auto proxies = proxy_nodes(e, {4});
  redlock::client owner(e.io.get_executor(), e.config);
  auto held = acquire(e.io, owner, "handover", once(30s));
  REQUIRE_FALSE(held.ec);
  REQUIRE(e.key_everywhere(e.key("handover"), held.held.token()));

  // A second client, whose node 4 has not answered its set-up yet (held
  // until after the close, not merely late: a loaded machine could make the
  // quorum slower than any delay), releases the lock by its token and closes
  // as soon as a quorum confirmed.
  proxies[0]->hold_replies(true);
  redlock::client releaser(e.io.get_executor(), e.config);
  const auto adopted = releaser.adopt("handover", held.held.token(), once(30s));
  const auto released = release(e.io, releaser, adopted);
  REQUIRE_FALSE(released.ec);
  CHECK(e.admin[4]->exists(e.key("handover")));
  releaser.close();
  proxies[0]->hold_replies(false);
  CHECK(e.key_nowhere(e.key("handover")));
}

namespace {

/// One bare connection to node 0 of `e` through `proxy`, started and ready
/// (a PING answered), on a strand of `e.io`.
std::shared_ptr<redlock::detail::command_connection> ready_connection(
    env& e, redlock::test::fault_proxy& proxy, redlock::detail::strand_type& strand,
    redlock::detail::connection_settings settings, int database = 0) {
  redlock::node_config node;
  node.host = "127.0.0.1";
  node.port = proxy.port();
  node.database = database;
  auto conn =
      std::make_shared<redlock::detail::command_connection>(strand, node, std::move(settings));
  bool pinged = false;
  boost::asio::post(strand, [&] {
    conn->start();
    conn->send(redlock::detail::format_command({"PING"}),
               [&](error_code, const redlock::detail::reply&) { pinged = true; });
  });
  run_until(e.io, [&] { return pinged; });
  return conn;
}

}  // namespace

// Review mend: on reconnect, a retried command whose retry_until had passed
// was failed before the live ones were queued, so whatever its callback sent
// (the next attempt after an undo) went out ahead of a release's delete that
// had been waiting longer. Node 0 is behind a proxy and the connection
// selects database 1, so it is ready only once the node answers; the
// reconnect delay is a fixed 300 ms, long enough for X to expire first.
TEST_CASE("an expired retried command fails on reconnect only after the live ones are queued",
          "[integration]") {
  env e;
  redlock::test::fault_proxy proxy(e.nodes.node(0).port());
  redlock::detail::connection_settings settings;
  settings.reconnect.initial_delay = 300ms;
  settings.reconnect.max_delay = 300ms;
  settings.reconnect.jitter = 0.0;
  auto strand = redlock::detail::make_core_strand(e.io.get_executor());
  auto conn = ready_connection(e, proxy, strand, settings, 1);
  const auto list = e.key("order");
  using redlock::detail::format_command;
  using redlock::detail::reply;

  proxy.reset_connections();
  run_until(e.io, [&] { return !conn->ready(); });

  std::optional<error_code> x_error;
  bool y_done = false, z_done = false;
  boost::asio::post(strand, [&] {
    const auto now = redlock::clock::now();
    conn->send(
        std::make_shared<const std::string>(format_command({"RPUSH", list, "X"})),
        [&](error_code ec, const reply&) {
          x_error = ec;
          // What an undo's callback does: send the next command at once.
          conn->send(format_command({"RPUSH", list, "Z"}),
                     [&](error_code, const reply&) { z_done = true; });
        },
        now + 50ms);
    conn->send(
        std::make_shared<const std::string>(format_command({"RPUSH", list, "Y"})),
        [&](error_code, const reply&) { y_done = true; }, now + 10s);
  });
  run_until(
      e.io, [&] { return y_done && z_done; }, 5s);
  CHECK(*x_error == errc::node_timeout);
  e.admin[0]->command({"SELECT", "1"});
  const auto order = e.admin[0]->command({"LRANGE", list, "0", "-1"});
  e.admin[0]->command({"SELECT", "0"});
  REQUIRE(order.elements.size() == 2);
  CHECK(order.elements[0].text == "Y");
  CHECK(order.elements[1].text == "Z");
  boost::asio::post(strand, [conn] { conn->close(); });
  e.io.run_for(100ms);
}

// Review finding: every retried command was marked `repeated` after a
// reconnect, even one that never left the client (corked, or queued behind
// a write), so a release ignored a "no key" that was in fact first-hand.
TEST_CASE("a retried command's reply is marked repeated only if its first copy was written",
          "[integration]") {
  env e;
  redlock::test::fault_proxy proxy(e.nodes.node(0).port());
  auto strand = redlock::detail::make_core_strand(e.io.get_executor());
  auto conn = ready_connection(e, proxy, strand, {});
  using redlock::detail::format_command;
  using redlock::detail::reply;

  std::optional<bool> repeated;
  const auto del = std::make_shared<const std::string>(format_command({"DEL", e.key("absent")}));
  const auto on_reply = [&](error_code ec, const reply& r) {
    if (!ec) repeated = r.repeated;
  };
  SECTION("written, then the connection dropped before its reply") {
    proxy.hold_replies(true);
    const auto before = proxy.traffic().to_servers;
    boost::asio::post(strand, [&] { conn->send(del, on_reply, redlock::clock::now() + 10s); });
    REQUIRE(poll_until(e.io, [&] { return proxy.traffic().to_servers > before; }));
    proxy.reset_connections();
    proxy.hold_replies(false);
    run_until(e.io, [&] { return repeated.has_value(); });
    CHECK(*repeated);
  }
  SECTION("corked, so never written, when the connection dropped") {
    boost::asio::post(strand, [&] {
      conn->cork();
      conn->send(del, on_reply, redlock::clock::now() + 10s);
    });
    proxy.reset_connections();
    run_until(e.io, [&] { return !conn->ready(); });
    run_until(e.io, [&] { return conn->ready(); });
    boost::asio::post(strand, [&] { conn->uncork(); });
    run_until(e.io, [&] { return repeated.has_value(); });
    CHECK_FALSE(*repeated);
  }
  boost::asio::post(strand, [conn] { conn->close(); });
  e.io.run_for(100ms);
}

// ASan found it with TLS: a client destroyed and then its io_context,
// without running the close the destruction posted, leaked everything
// its queued callbacks held (operation, handler, the client's state: a
// cycle). The context's shutdown now lets go of them.
TEST_CASE("destroying the io_context without running it after the client frees everything",
          "[integration]") {
  env e(3);
  for (std::size_t i = 0; i < 3; ++i) e.nodes.node(i).pause();
  std::weak_ptr<int> handler_alive;
  {
    boost::asio::io_context io;
    auto locks = std::make_unique<redlock::client>(io.get_executor(), e.config);
    auto sentinel = std::make_shared<int>(0);
    handler_alive = sentinel;
    locks->async_acquire("job", once(30s), [sentinel](error_code, redlock::lock) {});
    sentinel.reset();
    // Connected, the SETs queued on the paused nodes.
    io.run_for(200ms);
    REQUIRE_FALSE(handler_alive.expired());
    locks.reset();
  }
  CHECK(handler_alive.expired());
  for (std::size_t i = 0; i < 3; ++i) e.nodes.node(i).resume();
}

// Review finding (the connection split): a subscriber connection with no
// push handler took what the node sent unasked (a SUBSCRIBE's answer) in
// silence; as before the split, and as on a command connection, that is a
// protocol error that drops the link.
TEST_CASE("a subscriber connection without a push handler fails on a push", "[integration]") {
  env e;
  auto strand = redlock::detail::make_core_strand(e.io.get_executor());
  redlock::node_config node;
  node.port = e.nodes.node(0).port();
  std::vector<std::string> lines;
  redlock::detail::connection_settings settings;
  settings.log = redlock::detail::logger(
      [&](redlock::log_level, std::string_view line) { lines.emplace_back(line); });
  auto conn = std::make_shared<redlock::detail::subscriber_connection>(strand, node, settings);
  bool subscribed = false;
  conn->on_ready([&] {
    if (!std::exchange(subscribed, true)) {
      conn->send_unanswered(redlock::detail::format_command({"SUBSCRIBE", e.key("c")}));
    }
  });
  boost::asio::post(strand, [&] { conn->start(); });
  const auto lost = [&] {
    for (const auto& line : lines) {
      if (line.find("connection lost") != std::string::npos &&
          line.find(make_error_code(errc::protocol_error).message()) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  run_until(e.io, lost, 5s);
  CHECK(lost());
  boost::asio::post(strand, [conn] { conn->close(); });
  e.io.run_for(100ms);
}
