// Checks of the test-support library itself.
#include "admin_client.hpp"
#include "redis_server.hpp"

#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>

using redlock::test::admin_client;
using redlock::test::cluster;
using redlock::test::persistence;
using redlock::test::redis_server;
using redlock::test::server_options;
using kind = admin_client::reply::kind;

namespace {

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

TEST_CASE("a cluster of 3 starts and each node answers", "[support]") {
  cluster c(3);
  REQUIRE(c.size() == 3);
  std::set<std::uint16_t> ports;
  for (std::size_t i = 0; i < c.size(); ++i) {
    CHECK(c.node(i).running());
    ports.insert(c.node(i).port());
    admin_client client(c.node(i).port());
    const auto pong = client.command({"PING"});
    CHECK(pong.type == kind::status);
    CHECK(pong.text == "PONG");
  }
  CHECK(ports.size() == 3);
  const auto configs = c.node_configs();
  REQUIRE(configs.size() == 3);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CHECK(configs[i].host == "127.0.0.1");
    CHECK(configs[i].port == c.node(i).port());
    CHECK(configs[i].password.empty());
  }
}

TEST_CASE("admin_client: SET, GET, PTTL and friends", "[support]") {
  redis_server server(redlock::test::find_free_port());
  server.start();
  admin_client client(server.port());

  CHECK(client.command({"SET", "with-ttl", "v1", "PX", "10000"}).text == "OK");
  CHECK(client.get("with-ttl") == "v1");
  const auto ttl = client.pttl("with-ttl");
  CHECK(ttl > 0);
  CHECK(ttl <= 10000);
  CHECK(client.exists("with-ttl"));

  // Binary-safe arguments.
  const std::string binary("a\0b\r\n", 5);
  client.command({"SET", "no-ttl", binary});
  CHECK(client.get("no-ttl") == binary);
  CHECK(client.pttl("no-ttl") == -1);

  CHECK_FALSE(client.get("missing").has_value());
  CHECK(client.pttl("missing") == -2);
  CHECK_FALSE(client.exists("missing"));

  auto names = client.keys();
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"no-ttl", "with-ttl"});
  CHECK(client.keys("with*") == std::vector<std::string>{"with-ttl"});

  const auto array = client.command({"MGET", "with-ttl", "missing"});
  REQUIRE(array.type == kind::array);
  REQUIRE(array.elements.size() == 2);
  CHECK(array.elements[0].type == kind::string);
  CHECK(array.elements[1].type == kind::nil);
  CHECK(client.command({"INCR", "counter"}).integer == 1);

  const auto error = client.command({"NO-SUCH-COMMAND"});
  CHECK(error.type == kind::error);
  client.command({"LPUSH", "list", "x"});
  CHECK_THROWS_AS(client.get("list"), std::runtime_error);  // WRONGTYPE

  client.flushall();
  CHECK(client.keys().empty());
}

TEST_CASE("admin_client: AUTH with requirepass", "[support]") {
  server_options options;
  options.requirepass = "s3cret";
  cluster c(1, options);
  CHECK(c.node_configs().at(0).password == "s3cret");

  CHECK_THROWS_AS(admin_client(c.node(0).port(), "wrong"), std::runtime_error);
  admin_client unauthenticated(c.node(0).port());
  CHECK(unauthenticated.command({"GET", "k"}).type == kind::error);
  admin_client client(c.node(0).port(), "s3cret");
  CHECK(client.command({"PING"}).text == "PONG");
  admin_client with_user(c.node(0).port(), "s3cret", "default");
  CHECK(with_user.command({"PING"}).text == "PONG");
}

TEST_CASE("pause makes a command time out and resume recovers", "[support]") {
  redis_server server(redlock::test::find_free_port());
  server.start();
  admin_client client(server.port());
  client.set_timeout(std::chrono::milliseconds(200));
  client.command({"SET", "k", "v"});

  server.pause();
  CHECK(server.paused());
  CHECK(server.running());
  const auto before = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(client.command({"GET", "k"}), std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - before >= std::chrono::milliseconds(150));

  server.resume();
  CHECK_FALSE(server.paused());
  CHECK(client.get("k") == "v");  // reconnects
}

TEST_CASE("aof_always keeps a key across a crash", "[support]") {
  redis_server server(redlock::test::find_free_port(), {persistence::aof_always, {}, {}});
  server.start();
  const pid_t first = server.pid();
  {
    admin_client client(server.port());
    client.command({"SET", "durable", "yes", "PX", "60000"});
  }
  server.kill();
  CHECK_FALSE(server.running());
  CHECK(process_gone(first));

  server.restart();  // not running: just starts
  admin_client client(server.port());
  CHECK(client.get("durable") == "yes");
  CHECK(client.pttl("durable") > 0);

  server.restart(/*crash=*/true);
  CHECK(client.get("durable") == "yes");  // the client reconnects
}

TEST_CASE("persistence none loses keys on restart", "[support]") {
  redis_server server(redlock::test::find_free_port());
  server.start();
  admin_client client(server.port());
  client.command({"SET", "volatile", "1"});

  server.restart();
  CHECK_FALSE(client.get("volatile").has_value());

  client.command({"SET", "volatile", "1"});
  server.restart(/*crash=*/true);
  CHECK_FALSE(client.get("volatile").has_value());
}

TEST_CASE("the destructor leaves no process behind", "[support]") {
  pid_t running = -1;
  pid_t paused = -1;
  std::filesystem::path dir;
  {
    redis_server server(redlock::test::find_free_port());
    server.start();
    running = server.pid();
    dir = server.dir();
    CHECK(std::filesystem::exists(dir / "redis.pid"));
    redis_server stopped(redlock::test::find_free_port());
    stopped.start();
    paused = stopped.pid();
    stopped.pause();
  }
  CHECK(process_gone(running));
  CHECK(process_gone(paused));
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("a failed start reports the server's log", "[support]") {
  redis_server taken_port(redlock::test::find_free_port());
  taken_port.start();

  redis_server clash(taken_port.port());
  try {
    clash.start();
    FAIL("start on a taken port succeeded");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("did not start"));
    CHECK_THAT(e.what(), Catch::Contains("in use"));
  }
  CHECK_FALSE(clash.running());

  redis_server bad(redlock::test::find_free_port(),
                   {persistence::none, {}, {"--no-such-option", "x"}});
  CHECK_THROWS_WITH(bad.start(), Catch::Contains("no-such-option"));
}
