// TLS towards a node: the client context built from its tls_config, the
// names set on each new stream (SNI, the name its certificate must carry),
// and what a failed handshake reports.
#pragma once

#include <redlock/config.hpp>
#include <redlock/detail/asio.hpp>
#include "detail/executor.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace redlock::detail {

/// A TCP socket on the client's strand (not behind an any_io_executor: each
/// completion would copy that, and a strand does not fit in its small buffer).
using tcp_socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, strand_type>;
using tls_stream = boost::asio::ssl::stream<tcp_socket>;

/// A client context for `tls`. Throws config_error (errc::invalid_tls)
/// naming `node` and the file that cannot be used.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const tls_config& tls,
                                                            std::string_view node);

/// Sends `tls.server_name` (or `host`) as SNI unless it is an IP address,
/// and, when verifying, requires the certificate to carry that name.
error_code prepare_tls_stream(tls_stream& stream, const tls_config& tls, const std::string& host);

/// What a failed handshake reports: the certificate verification failure
/// (tls_verify_category) when verifying and there was one, else `ec`.
/// (OpenSSL records a verify result even with verification off: a
/// handshake reset then is no certificate failure.)
error_code tls_handshake_error(tls_stream& stream, error_code ec, bool verifying);

}  // namespace redlock::detail
