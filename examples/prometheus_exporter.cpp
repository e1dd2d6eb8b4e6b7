// prometheus_exporter: a lock workload whose client reports through an
// observer (prometheus_metrics), served as Prometheus metrics over HTTP.
//
//   prometheus_exporter [--nodes H:P,...] [--listen HOST:PORT] [--resource NAME]
//                       [--interval DUR] [--hold DUR] [--iterations N]
//
// Defaults: the local cluster of scripts/cluster.sh (127.0.0.1:7001 ... 7005),
// 127.0.0.1:9464 (port 0: any free port), resource "demo", a lock acquired
// every 200ms and held 10ms, until SIGINT or SIGTERM. Prints
// "listening on HOST:PORT" on stdout once it accepts scrapes; then
//   curl localhost:9464/metrics
// Exit status: 0 after --iterations or a signal, 1 on failure, 2 bad usage.
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

#include "args/options.hpp"
#include "example_nodes.hpp"
#include "prometheus_metrics.hpp"

#include <fmt/core.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

auto use_awaitable_ec(redlock::error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
}

/// HTTP/1.1 on one io_context: GET /metrics renders the metrics; other
/// paths get 404, other methods on /metrics 405.
class metrics_server {
 public:
  metrics_server(asio::io_context& io, const tcp::endpoint& where,
                 std::shared_ptr<const prometheus_metrics> metrics)
      : acceptor_(io, where), metrics_(std::move(metrics)) {}

  tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  void start() { asio::co_spawn(acceptor_.get_executor(), accept_loop(), asio::detached); }

  /// Stops accepting and ends every open connection, so that run() can return.
  void stop() {
    redlock::error_code ignored;
    acceptor_.close(ignored);
    for (auto* stream : open_) stream->socket().close(ignored);
  }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      redlock::error_code ec;
      auto socket = co_await acceptor_.async_accept(use_awaitable_ec(ec));
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      if (ec) continue;  // e.g. out of descriptors: the next scrape may fare better
      asio::co_spawn(acceptor_.get_executor(), serve(beast::tcp_stream(std::move(socket))),
                     asio::detached);
    }
  }

  /// One connection: requests answered in turn while the client keeps it
  /// alive (Prometheus does), each read bounded so that a silent peer goes.
  asio::awaitable<void> serve(beast::tcp_stream stream) {
    open_.insert(&stream);
    beast::flat_buffer buffer;
    for (;;) {
      redlock::error_code ec;
      http::request<http::string_body> request;
      stream.expires_after(60s);
      co_await http::async_read(stream, buffer, request, use_awaitable_ec(ec));
      if (ec) break;
      auto response = respond(request);
      stream.expires_after(10s);
      co_await http::async_write(stream, response, use_awaitable_ec(ec));
      if (ec || !response.keep_alive()) break;
    }
    redlock::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    open_.erase(&stream);
  }

  http::response<http::string_body> respond(const http::request<http::string_body>& request) const {
    http::response<http::string_body> response;
    response.version(request.version());
    response.keep_alive(request.keep_alive());
    const auto target = request.target();
    auto path = std::string_view(target.data(), target.size());
    path = path.substr(0, path.find('?'));
    if (path == "/metrics" && request.method() == http::verb::get) {
      response.result(http::status::ok);
      response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      response.body() = metrics_->render();
    } else if (path == "/metrics") {
      response.result(http::status::method_not_allowed);
      response.set(http::field::allow, "GET");
      response.set(http::field::content_type, "text/plain");
      response.body() = "only GET\n";
    } else {
      response.result(http::status::not_found);
      response.set(http::field::content_type, "text/plain");
      response.body() = "not found: the metrics are at /metrics\n";
    }
    response.prepare_payload();
    return response;
  }

  tcp::acceptor acceptor_;
  std::shared_ptr<const prometheus_metrics> metrics_;
  std::set<beast::tcp_stream*> open_;  ///< Connections being served.
};

struct options {
  std::vector<redlock::node_config> nodes = example_local_cluster();
  std::string listen = "127.0.0.1:9464";
  std::string resource = "demo";
  std::chrono::milliseconds interval{200};
  std::chrono::milliseconds hold{10};
  long long iterations = 0;
};

/// HOST:PORT or [IPv6]:PORT, an address rather than a name; port 0 means
/// any free port.
tcp::endpoint parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument("--listen: expected HOST:PORT, got '" + text + "'");
  }
  auto host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto port_text = text.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5 ||
      std::stoul(port_text) > 65535) {
    throw std::invalid_argument("--listen: bad port '" + port_text + "'");
  }
  redlock::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::invalid_argument("--listen: not an IP address: '" + host + "'");
  return {address, static_cast<unsigned short>(std::stoul(port_text))};
}

/// The lock workload: acquire, hold, release, every interval; stop() ends it
/// early, releasing a lock it holds and cancelling an acquire that waits.
class workload {
 public:
  workload(redlock::client& locks, const options& opt)
      : locks_(locks), opt_(opt), timer_(locks.get_executor()) {}

  asio::awaitable<void> run() {
    redlock::lock_options lock;
    lock.ttl = 2s;
    // Waits for another holder (another exporter on the same resource) a
    // second at most, woken by its release.
    lock.retry = redlock::retry_policy::fixed(50ms, 0);
    lock.wait_timeout = 1s;
    lock.stop = stop_.get_token();
    for (long long n = 0; opt_.iterations == 0 || n < opt_.iterations; ++n) {
      redlock::error_code ec;
      if (n > 0) co_await pause(opt_.interval);
      if (stopping_) break;
      auto held = co_await locks_.async_acquire(opt_.resource, lock, use_awaitable_ec(ec));
      if (ec) continue;  // counted by the observer
      co_await pause(opt_.hold);
      co_await locks_.async_release(held, use_awaitable_ec(ec));
    }
  }

  void stop() {
    stopping_ = true;
    stop_.request_stop();
    timer_.cancel();
  }

 private:
  asio::awaitable<void> pause(std::chrono::milliseconds how_long) {
    if (stopping_) co_return;
    redlock::error_code ec;
    timer_.expires_after(how_long);
    co_await timer_.async_wait(use_awaitable_ec(ec));
  }

  redlock::client& locks_;
  const options& opt_;
  asio::steady_timer timer_;
  std::stop_source stop_;
  bool stopping_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  options opt;
  CLI::App app("A lock workload with its redlock::observer served as Prometheus metrics.",
               "prometheus_exporter");
  redlock::args::add_nodes(app, opt.nodes,
                           "Redis masters used as lock nodes (default: 127.0.0.1:7001..7005)");
  app.add_option("--listen", opt.listen, "Address to serve /metrics on (port 0: any free port)")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--resource", opt.resource, "Resource locked by the workload")
      ->capture_default_str();
  redlock::args::add_duration(app, "--interval", opt.interval, "Pause between two acquires");
  redlock::args::add_duration(app, "--hold", opt.hold, "How long each lock is held");
  app.add_option("--iterations", opt.iterations, "Acquires to make, then exit (0: until a signal)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  if (const auto status = redlock::args::parse(app, argc, argv)) return *status;
  tcp::endpoint where;
  try {
    where = parse_listen(opt.listen);
  } catch (const std::exception& e) {
    return redlock::args::usage_error(app, e.what());
  }

  try {
    redlock::client_config config;
    config.nodes = opt.nodes;
    std::vector<std::string> endpoints;
    for (const auto& node : config.nodes) {
      endpoints.push_back(fmt::format("{}:{}", node.host, node.port));  // as node_report names it
    }
    auto metrics = std::make_shared<prometheus_metrics>(std::move(endpoints));
    config.observer = metrics;

    // One thread: the observer (on the client's strand) and the scrapes
    // take turns; prometheus_metrics has a mutex anyway.
    asio::io_context io(1);
    redlock::client locks(io.get_executor(), config);
    metrics_server server(io, where, metrics);
    workload work(locks, opt);
    asio::signal_set signals(io, SIGINT, SIGTERM);

    const auto bound = server.local_endpoint();
    const auto address = bound.address().to_string();
    fmt::print("listening on {}:{}\n",
               bound.address().is_v6() ? fmt::format("[{}]", address) : address, bound.port());
    std::fflush(stdout);

    signals.async_wait([&](redlock::error_code ec, int) {
      if (!ec) work.stop();
    });
    server.start();
    int status = 0;
    asio::co_spawn(io, work.run(), [&](std::exception_ptr failure) {
      if (failure) {
        try {
          std::rethrow_exception(failure);
        } catch (const std::exception& e) {
          fmt::print(stderr, "prometheus_exporter: {}\n", e.what());
        } catch (...) {
          fmt::print(stderr, "prometheus_exporter: the workload failed\n");
        }
        status = 1;
      }
      // Nothing is held now; what is left ends and run() returns.
      locks.close();
      server.stop();
      signals.cancel();
    });
    io.run();
    return status;
  } catch (const redlock::config_error& e) {  // the nodes, as the client validates them
    return redlock::args::usage_error(app, e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "prometheus_exporter: {}\n", e.what());
    return 1;
  }
}
