#include "support/tls_fixtures.hpp"

#include <fmt/format.h>

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace redlock::test {
namespace {

std::filesystem::path make_dir() {
  const char* env = std::getenv("REDLOCK_TEST_TMPDIR");
  const std::filesystem::path base = env != nullptr && *env != '\0'
                                         ? std::filesystem::path(env)
                                         : std::filesystem::temp_directory_path();
  std::filesystem::create_directories(base);
  std::string name = (base / "redlock-certs-XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp " + name);
  return name;
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

tls_certs make_certs() {
  tls_certs certs{make_dir()};
  const auto& d = certs.dir;
  const auto log = (d / "openssl.log").string();
  const auto run = [&](const std::string& command) {
    if (std::system(fmt::format("cd '{}' && {} >>'{}' 2>&1", d.string(), command, log).c_str()) !=
        0) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      throw std::runtime_error(
          fmt::format("test certificates: '{}' failed:\n{}", command, text.str()));
    }
  };
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  write(d / "ca.cnf", fmt::format(R"([ ca ]
default_ca = test_ca
[ test_ca ]
database = {0}/index.txt
new_certs_dir = {0}
certificate = {0}/ca.crt
private_key = {0}/ca.key
serial = {0}/serial
default_md = sha256
policy = any_name
unique_subject = no
[ any_name ]
commonName = supplied
[ server ]
subjectAltName = DNS:localhost,IP:127.0.0.1
extendedKeyUsage = serverAuth
[ client ]
extendedKeyUsage = clientAuth
)",
                                  d.string()));
  write(d / "index.txt", "");
  write(d / "serial", "1000\n");
  for (const char* ca : {"ca", "other-ca"}) {
    run(fmt::format("openssl req -x509 {} -keyout {}.key -out {}.crt -days 3650 -subj '/CN={}'",
                    key, ca, ca, ca));
  }
  // Each certificate: a request, then signed by the CA with its dates.
  const auto issue = [&](const char* name, const char* extensions, const char* dates) {
    run(fmt::format("openssl req {} -keyout {}.key -out {}.csr -subj '/CN={}'", key, name, name,
                    name));
    run(
        fmt::format("openssl ca -batch -notext -config ca.cnf -extensions {} {} -in {}.csr -out "
                    "{}.crt",
                    extensions, dates, name, name));
  };
  issue("server", "server", "-days 3650");
  issue("expired", "server", "-startdate 20200101000000Z -enddate 20200102000000Z");
  issue("client", "client", "-days 3650");
  return certs;
}

}  // namespace

const tls_certs& test_certs() {
  static const tls_certs certs = make_certs();
  return certs;
}

tls_server_options good_tls_server() {
  return {test_certs().server_cert(), test_certs().server_key()};
}

tls_cluster::tls_cluster(const std::vector<tls_server_options>& nodes) {
  for (const auto& node : nodes) {
    // A probed port can be taken before redis binds it: try fresh ones.
    for (int attempt = 0;; ++attempt) {
      const auto tls_port = find_free_port();
      server_options options;
      options.extra_args = {"--tls-port",         std::to_string(tls_port),
                            "--tls-cert-file",    node.cert,
                            "--tls-key-file",     node.key,
                            "--tls-ca-cert-file", test_certs().ca_file(),
                            "--tls-auth-clients", node.require_client_cert ? "yes" : "no"};
      if (node.tls_only) options.extra_args.insert(options.extra_args.end(), {"--port", "0"});
      auto server = std::make_unique<redis_server>(find_free_port(), options);
      try {
        server->start();
      } catch (const std::runtime_error&) {
        if (attempt == 2) throw;
        continue;
      }
      servers.push_back(std::move(server));
      tls_ports.push_back(tls_port);
      break;
    }
  }
}

}  // namespace redlock::test
