// Configuration and argument validation: each mistake gets its own error.
#include <redlock/config.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

using namespace std::chrono_literals;
using redlock::errc;

namespace {

redlock::node_config node(std::uint16_t port) {
  redlock::node_config n;
  n.port = port;
  return n;
}

redlock::client_config nodes(std::initializer_list<std::uint16_t> ports) {
  redlock::client_config config;
  for (auto p : ports) config.nodes.push_back(node(p));
  return config;
}

errc config_error_of(const redlock::client_config& config) {
  try {
    redlock::validate(config);
  } catch (const redlock::config_error& e) {
    return static_cast<errc>(e.code().value());
  }
  return errc{};
}

}  // namespace

TEST_CASE("client configuration errors are named", "[unit][config]") {
  CHECK(config_error_of({}) == errc::no_nodes);
  CHECK(config_error_of(nodes({7001, 7002, 7001})) == errc::duplicate_node);
  CHECK(config_error_of(nodes({7001, 0, 7003})) == errc::invalid_node);
  redlock::client_config many;
  for (std::uint16_t p = 7001; p <= 7065; ++p) many.nodes.push_back(node(p));
  CHECK(config_error_of(many) == errc::too_many_nodes);
  many.nodes.pop_back();
  CHECK(config_error_of(many) == errc{});  // 64 is allowed

  auto empty_host = nodes({7001, 7002, 7003});
  empty_host.nodes[1].host.clear();
  CHECK(config_error_of(empty_host) == errc::invalid_node);

  auto drift = nodes({7001, 7002, 7003});
  drift.drift_factor = 1.0;
  CHECK(config_error_of(drift) == errc::invalid_drift_factor);
  drift.drift_factor = -0.1;
  CHECK(config_error_of(drift) == errc::invalid_drift_factor);

  auto reconnect = nodes({7001, 7002, 7003});
  reconnect.reconnect.max_delay = 1ms;
  CHECK(config_error_of(reconnect) == errc::invalid_retry_policy);
}

TEST_CASE("the message names the offending node", "[unit][config]") {
  try {
    redlock::validate(nodes({7001, 7002, 7002}));
    FAIL("expected a config_error");
  } catch (const redlock::config_error& e) {
    CHECK(std::string(e.what()).find("127.0.0.1:7002") != std::string::npos);
  }
}

TEST_CASE("an even N or N < 3 is accepted with a warning", "[unit][config]") {
  CHECK(redlock::validate(nodes({7001, 7002, 7003})).empty());
  CHECK(redlock::validate(nodes({7001, 7002, 7003, 7004, 7005})).empty());
  CHECK(redlock::validate(nodes({7001})).size() == 1);
  CHECK(redlock::validate(nodes({7001, 7002})).size() == 1);
  const auto even = redlock::validate(nodes({7001, 7002, 7003, 7004}));
  REQUIRE(even.size() == 1);
  CHECK(even[0].find("even") != std::string::npos);
}

TEST_CASE("lock arguments are validated", "[unit][config]") {
  redlock::lock_options good;
  CHECK_FALSE(redlock::validate("job", good, 0.01));
  CHECK(redlock::validate("", good, 0.01) == errc::empty_resource);

  auto options = good;
  options.ttl = 0ms;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_ttl);
  options.ttl = -5ms;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_ttl);
  options.ttl = 2ms;  // drift alone is 2 ms
  CHECK(redlock::validate("job", options, 0.01) == errc::ttl_within_drift);
  options.ttl = 3ms;
  CHECK_FALSE(redlock::validate("job", options, 0.01));

  options = good;
  options.request_timeout = options.ttl;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_request_timeout);
  options.request_timeout = -1ms;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_request_timeout);

  options = good;
  options.retry = redlock::retry_policy::exponential(100ms, 10ms, 3);
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_retry_policy);
  options.retry = redlock::retry_policy::fixed(10ms, 3, 1.5);
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_retry_policy);
  options = good;
  options.wait_timeout = -1ms;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_retry_policy);

  options = good;
  options.min_validity = options.ttl;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_min_validity);
  options = good;
  options.unreachable_timeout = -1ms;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_retry_policy);
  options.unreachable_timeout = redlock::max_duration + 1ms;
  CHECK(redlock::validate("job", options, 0.01) == errc::invalid_retry_policy);
  options.unreachable_timeout = 30s;
  CHECK_FALSE(redlock::validate("job", options, 0.01));
}

TEST_CASE("request timeout defaults to a small fraction of the TTL", "[unit][config]") {
  redlock::lock_options options;
  options.ttl = 10000ms;
  CHECK(redlock::effective_request_timeout(options) == 500ms);
  options.ttl = 1000ms;
  CHECK(redlock::effective_request_timeout(options) == 50ms);
  options.ttl = 10ms;
  CHECK(redlock::effective_request_timeout(options) == 1ms);
  options.ttl = 60000ms;
  CHECK(redlock::effective_request_timeout(options) == 500ms);
  options.request_timeout = 30ms;
  CHECK(redlock::effective_request_timeout(options) == 30ms);
}

TEST_CASE("host:port lists are parsed, bad ones named", "[unit][config]") {
  const auto parsed = redlock::parse_nodes("127.0.0.1:7001,redis-b:7002,[::1]:7003");
  REQUIRE(parsed.size() == 3);
  CHECK(parsed[0].host == "127.0.0.1");
  CHECK(parsed[0].port == 7001);
  CHECK(parsed[1].host == "redis-b");
  CHECK(parsed[2].host == "::1");
  CHECK(parsed[2].port == 7003);
  for (const char* bad :
       {"", "host", ":7001", "host:", "host:0", "host:70000", "host:7x", "a:1,,b:2", "[::1:7003"}) {
    INFO(bad);
    CHECK_THROWS_AS(redlock::parse_nodes(bad), redlock::config_error);
  }
  try {
    redlock::parse_node("host:port");
  } catch (const redlock::config_error& e) {
    CHECK(std::string(e.what()).find("'host:port'") != std::string::npos);
    CHECK(e.code() == errc::invalid_node);
  }
}

TEST_CASE("blanks around the nodes of a list are ignored", "[unit][config]") {
  const auto parsed = redlock::parse_nodes(" a:1, b:2 ,\tc:3\n");
  REQUIRE(parsed.size() == 3);
  CHECK(parsed[0].host == "a");
  CHECK(parsed[1].host == "b");
  CHECK(parsed[1].port == 2);
  CHECK(parsed[2].host == "c");
  CHECK(redlock::parse_node("  rediss://[::1]:7003 ").host == "::1");
  // A blank is still not a node.
  for (const char* bad : {"a:1, ,b:2", "a:1,b:2, ", " "}) {
    INFO(bad);
    CHECK_THROWS_AS(redlock::parse_nodes(bad), redlock::config_error);
  }
}

namespace {

/// Sets (or with nullptr unsets) an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("nodes_from_env reads REDLOCK_NODES, or the variable named", "[unit][config]") {
  SECTION("a list, parsed as parse_nodes does") {
    const scoped_env set("REDLOCK_NODES", "10.0.0.1:6379, 10.0.0.2:6380,rediss://n3:6381");
    const auto nodes = redlock::nodes_from_env();
    REQUIRE(nodes.size() == 3);
    CHECK(nodes[1].host == "10.0.0.2");
    CHECK(nodes[1].port == 6380);
    CHECK(nodes[2].tls.enabled);
  }
  SECTION("unset, empty or blank: no nodes") {
    for (const char* value : {static_cast<const char*>(nullptr), "", "  "}) {
      const scoped_env set("REDLOCK_NODES", value);
      CHECK(redlock::nodes_from_env().empty());
    }
  }
  SECTION("bad content: an error naming the variable and the node") {
    const scoped_env set("REDLOCK_NODES", "a:1,b:2,c:x");
    try {
      (void)redlock::nodes_from_env();
      FAIL("no error");
    } catch (const redlock::config_error& e) {
      CHECK(e.code() == errc::invalid_node);
      CHECK(std::string(e.what()) ==
            "redlock: REDLOCK_NODES: invalid node 'c:x': expected host:port");
    }
  }
  SECTION("another variable") {
    const scoped_env set("MY_APP_LOCK_NODES", "a:1,b:2,c:3");
    const scoped_env unset("REDLOCK_NODES", nullptr);
    CHECK(redlock::nodes_from_env("MY_APP_LOCK_NODES").size() == 3);
    CHECK(redlock::nodes_from_env().empty());
  }
}

TEST_CASE("waiting_up_to: one attempt, a bounded wait, or no limit, woken by releases",
          "[unit][config]") {
  using redlock::lock_options;
  using redlock::waiting_up_to;
  lock_options mine;
  mine.retry = redlock::retry_policy::fixed(250ms, 7);
  mine.retry.wake_on_release = false;

  const auto once = waiting_up_to(mine, 0ms);
  CHECK(redlock::effective_max_attempts(once) == 1);
  CHECK(once.wait_timeout == 0ms);
  CHECK(waiting_up_to(mine, -5ms).retry.max_attempts == 1u);

  const auto bounded = waiting_up_to(mine, 3s);
  CHECK(bounded.wait_timeout == 3s);
  CHECK(redlock::effective_max_attempts(bounded) == 0);  // the wait is the limit
  CHECK(bounded.retry.wake_on_release);
  CHECK(bounded.retry.base_delay == 250ms);  // its own delays are kept

  const auto forever = waiting_up_to(mine, redlock::wait_forever);
  CHECK(forever.wait_timeout == 0ms);  // no limit
  CHECK(redlock::effective_max_attempts(forever) == 0);
  CHECK(forever.retry.wake_on_release);

  // Options without delays of their own (try_once) would spin: the
  // default delays pace the attempts instead.
  lock_options spinning;
  spinning.retry = redlock::retry_policy::try_once();
  const auto paced = waiting_up_to(spinning, 1s);
  CHECK(paced.retry.base_delay == redlock::retry_policy{}.base_delay);
  CHECK(redlock::effective_max_attempts(paced) == 0);
  CHECK(validate(std::string_view("r"), paced, 0.01) == redlock::error_code{});

  // A bad policy is refused whatever the wait (from review: a wait of 0
  // replaced it with try_once()).
  lock_options bad;
  bad.retry.jitter = 2.0;
  CHECK(validate(std::string_view("r"), waiting_up_to(bad, 0ms), 0.01) ==
        errc::invalid_retry_policy);
  CHECK(validate(std::string_view("r"), waiting_up_to(bad, 1s), 0.01) ==
        errc::invalid_retry_policy);
  // Longer than max_duration but not wait_forever: refused, not truncated.
  CHECK(validate(std::string_view("r"), waiting_up_to({}, redlock::wait_forever - 1ms), 0.01) ==
        errc::invalid_retry_policy);
}
