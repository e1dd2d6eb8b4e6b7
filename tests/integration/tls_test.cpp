// TLS towards the nodes, against redis-server with --tls-port and throwaway
// certificates: a good certificate locks; a wrong CA, an expired
// certificate and a wrong host name fail that node alone, with an error
// naming the cause; mutual TLS; settings that cannot work are refused when
// the client is made.
#include "test_env.hpp"

#include "support/tls_fixtures.hpp"

#include <string>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::log_level;
using redlock::test::test_certs;

namespace {

using redlock::test::tls_server_options;

/// TLS servers, admin connections to their plain ports, and a client
/// configuration for them.
struct tls_nodes : redlock::test::tls_cluster {
  redlock::itest::admins admin;

  explicit tls_nodes(const std::vector<tls_server_options>& nodes) : tls_cluster(nodes) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].tls_only) {
        admin.push_back(std::make_unique<redlock::test::admin_client>(servers[i]->port()));
      }
    }
  }

  /// Nodes on 127.0.0.1 at the TLS ports, TLS on, trusting the test CA.
  redlock::client_config config(const log_capture& log) const {
    redlock::client_config config;
    for (const auto port : tls_ports) {
      redlock::node_config node;
      node.port = port;
      config.nodes.push_back(node);
    }
    config.tls.enabled = true;
    config.tls.ca_file = test_certs().ca_file();
    config.key_prefix = unique_prefix();
    config.log = log.sink();
    config.warn_without_aof = false;
    config.reconnect = {10ms, 100ms, 0.5};
    return config;
  }
};

tls_server_options good_server() { return redlock::test::good_tls_server(); }

std::vector<tls_server_options> good_servers(std::size_t n) {
  return std::vector<tls_server_options>(n, good_server());
}

/// Acquires "job" with node 2 (at `port`) failing, and waits until the
/// failure is logged (the quorum may decide before it happens).
lock_result acquire_without_node_2(boost::asio::io_context& io, redlock::client& locks,
                                   const log_capture& log, std::uint16_t port) {
  auto got = acquire(io, locks, "job", once());
  INFO(describe_nodes(got.held) << log.dump());
  REQUIRE_FALSE(got.ec);
  CHECK(got.held.nodes()[2].state != status::acquired);
  const auto mentioned = fmt::format(":{}", port);
  run_until(
      io,
      [&] {
        return log.count(log_level::warning, mentioned) + log.count(log_level::error, mentioned) >
               0;
      },
      5s, "node 2's failure");
  return got;
}

}  // namespace

TEST_CASE("locks over TLS only, by IP address and by host name (rediss://)", "[integration][tls]") {
  auto only = good_server();
  only.tls_only = true;
  tls_nodes nodes(std::vector<tls_server_options>(3, only));
  log_capture log;
  auto config = nodes.config(log);
  // Node 2 by name, as an endpoint string: SNI and a DNS name to verify.
  config.nodes[2] = redlock::parse_node(fmt::format("rediss://localhost:{}", nodes.tls_ports[2]));
  CHECK(config.nodes[2].tls.enabled);
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);
  redlock::client rival(io.get_executor(), config);

  auto got = acquire(io, locks, "job", once());
  INFO(describe_nodes(got.held) << log.dump());
  REQUIRE_FALSE(got.ec);
  // Held: the rival, over the same TLS nodes, is refused on each of them.
  auto refused = acquire(io, rival, "job", once());
  INFO(describe_nodes(refused.held));
  CHECK(refused.ec == errc::not_acquired);
  CHECK(count_nodes(refused.held, status::held_elsewhere) >= 2);
  REQUIRE_FALSE(release(io, locks, got.held).ec);
  auto after = acquire(io, rival, "job", once());
  CHECK_FALSE(after.ec);
  CHECK(log.count(log_level::error) == 0);
}

TEST_CASE("a node whose certificate does not verify fails alone, naming the cause",
          "[integration][tls]") {
  struct fault {
    const char* name;
    const char* cause;
  };
  const auto which =
      GENERATE(fault{"a CA we do not trust", "self-signed certificate in certificate chain"},
               fault{"an expired certificate", "certificate has expired"},
               fault{"a wrong host name", "hostname mismatch"});
  INFO(which.name);
  auto servers = good_servers(5);
  const std::string name = which.name;
  if (name == "an expired certificate") {
    servers[4] = {test_certs().expired_cert(), test_certs().expired_key()};
  }
  tls_nodes nodes(servers);
  log_capture log;
  auto config = nodes.config(log);
  if (name == "a CA we do not trust") config.nodes[4].tls.ca_file = test_certs().other_ca_file();
  if (name == "a wrong host name") config.nodes[4].tls.server_name = "not-this-node.example";
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);

  auto got = acquire(io, locks, "job", once());
  INFO(describe_nodes(got.held) << log.dump());
  REQUIRE_FALSE(got.ec);
  const auto& failed = got.held.nodes()[4];
  // The node fails at once, or is still pending when the quorum decides.
  if (failed.state == status::failed) {
    CHECK(failed.error.category() == redlock::tls_verify_category());
    CHECK_THAT(failed.error.message(), Catch::Contains(which.cause));
  } else {
    CHECK(failed.state == status::pending);
  }
  run_until(
      io, [&] { return log.count(log_level::error, which.cause) >= 1; }, 5s, "the TLS error");
  CHECK(log.count(log_level::error, fmt::format("127.0.0.1:{}: TLS handshake failed: TLS "
                                                "certificate verification failed: ",
                                                nodes.tls_ports[4])) == 1);
  const auto key = config.key_prefix + "job";
  CHECK(poll_until(io, [&] {
    for (std::size_t i = 0; i < 4; ++i) {
      if (nodes.admin[i]->get(key) != got.held.token()) return false;
    }
    return true;
  }));
  CHECK_FALSE(nodes.admin[4]->exists(key));
  // Later operations fail on it at once, with the same cause.
  auto extended = extend(io, locks, got.held, 10s);
  REQUIRE_FALSE(extended.ec);
  CHECK(extended.held.nodes()[4].state != status::acquired);
  CHECK(log.count(log_level::error, "TLS handshake failed") == 1);
}

TEST_CASE("without verification an untrusted node connects, with a warning", "[integration][tls]") {
  tls_nodes nodes({{test_certs().expired_cert(), test_certs().expired_key()}});
  log_capture log;
  auto config = nodes.config(log);
  config.tls.verify = false;
  config.tls.ca_file.clear();
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);
  CHECK(log.count(log_level::warning, "TLS without certificate verification") == 1);
  auto got = acquire(io, locks, "job", once());
  INFO(log.dump());
  CHECK_FALSE(got.ec);
}

TEST_CASE("mutual TLS: a node that requires a client certificate fails without one",
          "[integration][tls]") {
  auto strict = good_server();
  strict.require_client_cert = true;
  tls_nodes nodes(std::vector<tls_server_options>(3, strict));
  log_capture log;
  auto config = nodes.config(log);
  for (std::size_t i : {0, 1}) {
    config.nodes[i].tls.cert_file = test_certs().client_cert();
    config.nodes[i].tls.key_file = test_certs().client_key();
  }
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);
  const auto got = acquire_without_node_2(io, locks, log, nodes.tls_ports[2]);
  const auto key = config.key_prefix + "job";
  CHECK(poll_until(io, [&] {
    return nodes.admin[0]->get(key) == got.held.token() &&
           nodes.admin[1]->get(key) == got.held.token();
  }));
  CHECK_FALSE(nodes.admin[2]->exists(key));
}

TEST_CASE("TLS to a plain port, and plain TCP to a TLS port, fail that node only",
          "[integration][tls]") {
  tls_nodes nodes(good_servers(3));
  log_capture log;
  auto config = nodes.config(log);
  SECTION("TLS to a plain port") { config.nodes[2].port = nodes.servers[2]->port(); }
  SECTION("plain TCP to a TLS port") {
    config.tls.enabled = false;
    for (std::size_t i : {0, 1}) config.nodes[i].port = nodes.servers[i]->port();
  }
  config.connect_timeout = 300ms;
  config.stall_timeout = 300ms;
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);
  acquire_without_node_2(io, locks, log, config.nodes[2].port);
}

TEST_CASE("TLS settings that cannot work are refused when the client is made",
          "[integration][tls]") {
  boost::asio::io_context io;
  redlock::client_config config;
  config.nodes = redlock::parse_nodes("rediss://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002");
  config.log = [](log_level, std::string_view) {};
  const auto refused = [&](std::string_view needle) {
    try {
      redlock::client locks(io.get_executor(), config);
    } catch (const redlock::config_error& e) {
      CHECK(e.code() == errc::invalid_tls);
      CHECK_THAT(e.what(), Catch::Contains(std::string(needle)));
      return true;
    }
    return false;
  };
  SECTION("a certificate without its key") {
    config.nodes[0].tls.cert_file = test_certs().client_cert();
    CHECK(refused("needs both cert_file and key_file"));
  }
  SECTION("a CA file that does not exist") {
    config.tls.ca_file = "/nonexistent/ca.crt";
    CHECK(refused("CA file '/nonexistent/ca.crt'"));
  }
  SECTION("a key that is not a key") {
    config.nodes[0].tls.cert_file = test_certs().client_cert();
    config.nodes[0].tls.key_file = test_certs().ca_file();
    CHECK(refused("key file"));
  }
}
