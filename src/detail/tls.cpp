#include "detail/tls.hpp"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/ip/address.hpp>

namespace redlock::detail {
namespace {

bool is_ip_address(const std::string& name) {
  error_code ec;
  boost::asio::ip::make_address(name, ec);
  return !ec;
}

}  // namespace

std::shared_ptr<boost::asio::ssl::context> make_tls_context(const tls_config& tls,
                                                            std::string_view node) {
  namespace ssl = boost::asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  const auto use = [&](std::string_view what, const std::string& path, auto&& load) {
    error_code ec;
    load(ec);
    if (ec) {
      throw config_error(errc::invalid_tls,
                         fmt::format("redlock: invalid configuration: node {}: cannot use the TLS "
                                     "{} '{}': {}",
                                     node, what, path, ec.message()));
    }
  };
  if (tls.ca_file.empty() && tls.ca_dir.empty()) {
    use("default CA paths", "", [&](error_code& ec) { context->set_default_verify_paths(ec); });
  }
  if (!tls.ca_file.empty()) {
    use("CA file", tls.ca_file,
        [&](error_code& ec) { context->load_verify_file(tls.ca_file, ec); });
  }
  if (!tls.ca_dir.empty()) {
    use("CA directory", tls.ca_dir,
        [&](error_code& ec) { context->add_verify_path(tls.ca_dir, ec); });
  }
  if (!tls.cert_file.empty()) {
    use("certificate file", tls.cert_file,
        [&](error_code& ec) { context->use_certificate_chain_file(tls.cert_file, ec); });
  }
  if (!tls.key_file.empty()) {
    use("key file", tls.key_file, [&](error_code& ec) {
      context->use_private_key_file(tls.key_file, ssl::context::pem, ec);
    });
  }
  context->set_verify_mode(tls.verify ? ssl::verify_peer : ssl::verify_none);
  return context;
}

error_code prepare_tls_stream(tls_stream& stream, const tls_config& tls, const std::string& host) {
  const std::string& name = tls.server_name.empty() ? host : tls.server_name;
  SSL* ssl = stream.native_handle();
  const bool ip = is_ip_address(name);
  // SNI carries host names only (RFC 6066).
  if (!ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) {
    return errc::invalid_tls;
  }
  if (!tls.verify) return {};
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const int set = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                     : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  return set == 1 ? error_code{} : error_code(errc::invalid_tls);
}

error_code tls_handshake_error(tls_stream& stream, error_code ec, bool verifying) {
  if (!verifying) return ec;
  const long verified = SSL_get_verify_result(stream.native_handle());
  if (verified != X509_V_OK) return {static_cast<int>(verified), tls_verify_category()};
  return ec;
}

}  // namespace redlock::detail
