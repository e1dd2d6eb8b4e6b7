// TLS test fixtures: throwaway certificates made with the openssl tool (a
// CA, a second CA nobody trusts, a server certificate for localhost and
// 127.0.0.1, an expired one, a client certificate for mutual TLS), and
// redis-servers that serve TLS with them.
#pragma once

#include "support/redis_server.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace redlock::test {

struct tls_certs {
  std::filesystem::path dir;
  std::string ca_file() const { return (dir / "ca.crt").string(); }
  std::string other_ca_file() const { return (dir / "other-ca.crt").string(); }
  std::string server_cert() const { return (dir / "server.crt").string(); }
  std::string server_key() const { return (dir / "server.key").string(); }
  /// Valid for localhost and 127.0.0.1, but from 2020-01-01 to 2020-01-02.
  std::string expired_cert() const { return (dir / "expired.crt").string(); }
  std::string expired_key() const { return (dir / "expired.key").string(); }
  std::string client_cert() const { return (dir / "client.crt").string(); }
  std::string client_key() const { return (dir / "client.key").string(); }
};

/// Made once per process, under REDLOCK_TEST_TMPDIR (or the temp dir).
/// Throws std::runtime_error with openssl's output if a step fails.
const tls_certs& test_certs();

/// How one TLS server is started.
struct tls_server_options {
  std::string cert;
  std::string key;
  bool tls_only = false;             ///< --port 0: no plain port at all.
  bool require_client_cert = false;  ///< --tls-auth-clients yes.
};

/// The test CA's server certificate.
tls_server_options good_tls_server();

/// Redis servers serving TLS, each with its own certificate, on ports of
/// their own (trusting the test CA for client certificates); unless
/// tls_only, also plain TCP on servers[i]->port(), for admin connections.
struct tls_cluster {
  explicit tls_cluster(const std::vector<tls_server_options>& nodes);
  std::vector<std::unique_ptr<redis_server>> servers;
  std::vector<std::uint16_t> tls_ports;
};

}  // namespace redlock::test
