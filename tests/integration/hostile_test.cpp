// Nodes that misbehave on purpose (tests/support/hostile_server): garbage,
// a 1 TiB bulk length, a reply without end, bytes trickled one per 100 ms,
// a reset in mid-reply, an error for every command, silence. With three
// healthy nodes of five the lock keeps working beside any two of them; with
// three of them every operation fails cleanly within its timeouts; memory
// stays bounded and no key is left on the healthy nodes.
#include "test_env.hpp"

#include "support/hostile_server.hpp"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::test::hostile_behaviour;
using redlock::test::hostile_server;

namespace {

constexpr hostile_behaviour all_behaviours[] = {
    hostile_behaviour::garbage,         hostile_behaviour::huge_bulk,
    hostile_behaviour::endless_reply,   hostile_behaviour::trickle,
    hostile_behaviour::reset_mid_reply, hostile_behaviour::error_always,
    hostile_behaviour::silent,
};

/// The process's resident memory.
long long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0;
  long long resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

/// The healthy servers of `e` first, then `hostile` ones, with short
/// timeouts so that a misbehaving node is given up on quickly.
redlock::client_config with_hostile(env& e,
                                    const std::vector<std::unique_ptr<hostile_server>>& hostile) {
  auto config = e.config;
  for (const auto& server : hostile) {
    redlock::node_config node;
    node.port = server->port();
    config.nodes.push_back(node);
  }
  config.connect_timeout = 300ms;
  config.stall_timeout = 300ms;
  config.reconnect = {10ms, 100ms, 0.5};
  return config;
}

std::vector<std::unique_ptr<hostile_server>> hostile_servers(std::size_t n,
                                                             hostile_behaviour behaviour) {
  std::vector<std::unique_ptr<hostile_server>> servers;
  for (std::size_t i = 0; i < n; ++i)
    servers.push_back(std::make_unique<hostile_server>(behaviour));
  return servers;
}

}  // namespace

TEST_CASE("the lock works beside any two hostile nodes of five", "[integration][hostile]") {
  const auto behaviour = GENERATE(from_range(std::begin(all_behaviours), std::end(all_behaviours)));
  INFO("hostile nodes: " << name_of(behaviour));
  env e(3);
  const auto hostile = hostile_servers(2, behaviour);
  redlock::client locks(e.io.get_executor(), with_hostile(e, hostile));
  const auto before = resident_bytes();

  for (int round = 0; round < 3; ++round) {
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held) << e.log.dump());
    REQUIRE_FALSE(got.ec);
    for (std::size_t i : {3, 4}) CHECK(got.held.nodes()[i].state != status::acquired);
    REQUIRE(e.key_everywhere(e.key("job"), got.held.token()));
    auto extended = extend(e.io, locks, got.held, 10s);
    CHECK_FALSE(extended.ec);
    for (std::size_t i : {3, 4}) CHECK(extended.held.nodes()[i].state != status::acquired);
    CHECK_FALSE(release(e.io, locks, got.held).ec);
    CHECK(e.key_nowhere(e.key("job")));
  }
  // The hostile nodes were connected to (and dropped) again and again; the
  // operations completed with the healthy nodes, maybe before a connection
  // to a hostile one was accepted.
  for (const auto& server : hostile) {
    CHECK(poll_until(e.io, [&] { return server->connections() >= 1; }));
  }
  // A node that sends without end is cut off at the reply cap (64 MiB).
  CHECK(resident_bytes() - before < 256LL * 1024 * 1024);
}

TEST_CASE("with three hostile nodes of five every operation fails cleanly in time",
          "[integration][hostile]") {
  const auto behaviour = GENERATE(from_range(std::begin(all_behaviours), std::end(all_behaviours)));
  INFO("hostile nodes: " << name_of(behaviour));
  env e(2);
  const auto hostile = hostile_servers(3, behaviour);
  const auto config = with_hostile(e, hostile);
  redlock::client locks(e.io.get_executor(), config);
  const auto options = once();
  // The longest an operation may take: the node set-up, one request
  // timeout, and the undo's own, with a second of slack for a loaded machine.
  const auto bound = config.connect_timeout + 2 * redlock::effective_request_timeout(options) + 1s;

  auto start = steady::now();
  auto got = acquire(e.io, locks, "job", options);
  INFO(describe_nodes(got.held) << e.log.dump());
  CHECK(got.ec);
  CHECK(got.held.empty());
  CHECK(steady::now() - start < bound);

  // A handle known by its token, as another process would pass it on.
  const auto adopted = locks.adopt("job", "0123456789abcdef0123456789abcdef", options);
  start = steady::now();
  CHECK(extend(e.io, locks, adopted, 10s).ec);
  CHECK(release(e.io, locks, adopted).ec);
  CHECK(steady::now() - start < 2 * bound);
  // Whatever the healthy nodes granted was undone.
  CHECK(e.key_nowhere(e.key("job")));
}
