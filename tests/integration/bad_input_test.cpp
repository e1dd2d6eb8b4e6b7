// Bad input through the API: resource names that are empty, huge or
// binary; zero, negative and absurd TTLs and timeouts; malformed endpoints;
// hosts that do not resolve and ports that refuse. Each is a clear error
// naming the problem, or works as any other name does; none crashes.
#include "test_env.hpp"

#include <limits>
#include <string>

using namespace redlock::itest;
using redlock::config_error;
using redlock::errc;
using redlock::lock_options;

namespace {

/// The error the client's constructor throws for `config`.
std::optional<config_error> refused_config(boost::asio::io_context& io,
                                           redlock::client_config config) {
  try {
    redlock::client locks(io.get_executor(), std::move(config));
  } catch (const config_error& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("huge and binary resource names lock like any other", "[integration][bad-input]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  std::string binary;
  for (int c = 0; c < 256; ++c) binary.push_back(static_cast<char>(c));
  const std::string huge(1024 * 1024, 'r');
  for (const auto& resource : {binary, huge, std::string("\r\n*1\r\n$4\r\nPING\r\n")}) {
    INFO("resource of " << resource.size() << " bytes");
    auto got = acquire(e.io, locks, resource, once());
    REQUIRE_FALSE(got.ec);
    CHECK(e.key_everywhere(e.key(resource), got.held.token()));
    // Held: a second acquire of the same name is refused.
    CHECK(acquire(e.io, locks, resource, once()).ec == errc::not_acquired);
    CHECK_FALSE(extend(e.io, locks, got.held, 10s).ec);
    CHECK_FALSE(release(e.io, locks, got.held).ec);
    CHECK(e.key_nowhere(e.key(resource)));
  }
}

TEST_CASE("bad lock arguments are refused with the errc that names them",
          "[integration][bad-input]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  struct bad_call {
    const char* what;
    std::string resource;
    lock_options options;
    errc expected;
  };
  const auto with = [](auto change) {
    auto options = once();
    change(options);
    return options;
  };
  using std::chrono::hours;
  const std::vector<bad_call> calls{
      {"empty resource", "", once(), errc::empty_resource},
      {"zero TTL", "r", with([](lock_options& o) { o.ttl = 0ms; }), errc::invalid_ttl},
      {"negative TTL", "r", with([](lock_options& o) { o.ttl = -5s; }), errc::invalid_ttl},
      {"TTL of milliseconds::max()", "r",
       with([](lock_options& o) { o.ttl = redlock::milliseconds::max(); }), errc::invalid_ttl},
      {"TTL of a thousand years", "r",
       with([](lock_options& o) { o.ttl = hours(24 * 365 * 1000); }), errc::invalid_ttl},
      {"TTL within the drift", "r", with([](lock_options& o) { o.ttl = 2ms; }),
       errc::ttl_within_drift},
      {"negative request timeout", "r", with([](lock_options& o) { o.request_timeout = -1ms; }),
       errc::invalid_request_timeout},
      {"request timeout past the TTL", "r", with([](lock_options& o) { o.request_timeout = 20s; }),
       errc::invalid_request_timeout},
      {"negative wait timeout", "r", with([](lock_options& o) { o.wait_timeout = -1ms; }),
       errc::invalid_retry_policy},
      {"wait timeout of milliseconds::max()", "r",
       with([](lock_options& o) { o.wait_timeout = redlock::milliseconds::max(); }),
       errc::invalid_retry_policy},
      {"retry delay of milliseconds::max()", "r", with([](lock_options& o) {
         o.retry = redlock::retry_policy::fixed(redlock::milliseconds::max(), 2);
       }),
       errc::invalid_retry_policy},
      {"negative min_validity", "r", with([](lock_options& o) { o.min_validity = -1ms; }),
       errc::invalid_min_validity},
  };
  for (const auto& call : calls) {
    INFO(call.what);
    auto got = acquire(e.io, locks, call.resource, call.options);
    CHECK(got.ec == call.expected);
    CHECK(redlock::is_invalid_argument(got.ec));
    CHECK(got.held.empty());
  }
  // Nothing reached the nodes.
  for (auto& admin : e.admin) CHECK(command_calls(*admin, "set") == 0);
  // An absurd extend TTL is refused too, and leaves the lock as it was.
  auto got = acquire(e.io, locks, "held", once());
  REQUIRE_FALSE(got.ec);
  CHECK(extend(e.io, locks, got.held, redlock::milliseconds::max()).ec == errc::invalid_ttl);
  CHECK(extend(e.io, locks, got.held, -1s).ec == errc::invalid_ttl);
  CHECK(got.held.valid());
  CHECK_FALSE(release(e.io, locks, got.held).ec);
}

TEST_CASE("bad client configurations are refused naming the problem", "[integration][bad-input]") {
  boost::asio::io_context io;
  redlock::client_config good;
  good.nodes = redlock::parse_nodes("127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003");
  good.log = [](redlock::log_level, std::string_view) {};
  struct bad_config {
    const char* what;
    void (*change)(redlock::client_config&);
    errc expected;
    const char* named;
  };
  const bad_config configs[] = {
      {"zero connect timeout", [](redlock::client_config& c) { c.connect_timeout = 0ms; },
       errc::invalid_retry_policy, "connect_timeout"},
      {"absurd connect timeout",
       [](redlock::client_config& c) { c.connect_timeout = redlock::milliseconds::max(); },
       errc::invalid_retry_policy, "connect_timeout"},
      {"absurd stall timeout",
       [](redlock::client_config& c) { c.stall_timeout = redlock::milliseconds::max(); },
       errc::invalid_retry_policy, "stall_timeout"},
      {"absurd reconnect delay",
       [](redlock::client_config& c) { c.reconnect.max_delay = redlock::milliseconds::max(); },
       errc::invalid_retry_policy, "reconnect"},
      {"empty host", [](redlock::client_config& c) { c.nodes[1].host.clear(); }, errc::invalid_node,
       "node 1"},
      {"port 0", [](redlock::client_config& c) { c.nodes[2].port = 0; }, errc::invalid_node,
       "node 2"},
      {"no nodes", [](redlock::client_config& c) { c.nodes.clear(); }, errc::no_nodes, "no Redis"},
  };
  for (const auto& bad : configs) {
    INFO(bad.what);
    auto config = good;
    bad.change(config);
    const auto refused = refused_config(io, config);
    REQUIRE(refused);
    CHECK(refused->code() == bad.expected);
    CHECK_THAT(refused->what(), Catch::Contains(bad.named));
  }
  for (const char* text : {"", ":", "host", "host:", ":6379", "host:0", "host:65536", "host:-1",
                           "host:63a", "[::1:6379", "rediss://", "redis://host"}) {
    INFO("endpoint '" << text << "'");
    try {
      redlock::parse_node(text);
      FAIL("accepted");
    } catch (const config_error& e) {
      CHECK(e.code() == errc::invalid_node);
      CHECK_THAT(e.what(), Catch::Contains(fmt::format("'{}'", text)));
    }
  }
}

TEST_CASE("a host that does not resolve and a port that refuses fail their node, named",
          "[integration][bad-input]") {
  env e(3);
  auto config = e.config;
  redlock::node_config unresolvable;
  unresolvable.host = "no-such-host.invalid";
  const redlock::test::refusing_port refused;
  redlock::node_config refusing;
  refusing.port = refused.port();
  SECTION("a minority: the lock works, the two nodes fail with the cause") {
    config.nodes.push_back(unresolvable);
    config.nodes.push_back(refusing);
    redlock::client locks(e.io.get_executor(), config);
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held) << e.log.dump());
    REQUIRE_FALSE(got.ec);
    run_until(
        e.io,
        [&] {
          return e.log.count(redlock::log_level::warning, "no-such-host.invalid:6379") > 0 &&
                 e.log.count(redlock::log_level::warning, fmt::format(":{}", refusing.port)) > 0;
        },
        5s, "both failures logged");
    CHECK(e.log.count(redlock::log_level::warning, "Connection refused") >= 1);
    // A sink gets the bare sentence: the "redlock: " prefix is the default
    // sink's, added in one place, not in every message for a sink to strip.
    for (const auto& l : e.log.lines()) {
      INFO(l.text);
      CHECK(l.text.starts_with("node "));
    }
    CHECK_FALSE(release(e.io, locks, got.held).ec);
  }
  SECTION("a majority: quorum_unreachable, and nothing left on the healthy node") {
    config.nodes.resize(1);
    config.nodes.push_back(unresolvable);
    config.nodes.push_back(refusing);
    redlock::client locks(e.io.get_executor(), config);
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held));
    CHECK(got.ec == errc::quorum_unreachable);
    CHECK(poll_until(e.io, [&] { return !e.admin[0]->exists(e.key("job")); }));
  }
}
