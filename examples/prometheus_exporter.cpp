// prometheus_exporter: a lock workload whose client reports through an
// observer (prometheus_metrics), served as Prometheus metrics over HTTP.
//   prometheus_exporter [--listen HOST:PORT] [--interval-ms N] [--iterations N] [host:port ...]
// Defaults: 127.0.0.1:9464, every 200 ms, forever, the local cluster of
// scripts/cluster.sh (127.0.0.1:7001 ... 7005). Then: curl localhost:9464/metrics
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

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
#include <boost/beast/http.hpp>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <string_view>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

/// One HTTP exchange: GET /metrics gets the metrics, anything else 404.
asio::awaitable<void> serve(tcp::socket socket, std::shared_ptr<const prometheus_metrics> metrics) {
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> request;
  redlock::error_code ec;
  co_await http::async_read(socket, buffer, request, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  http::response<http::string_body> response;
  response.version(request.version());
  response.keep_alive(false);
  if (request.method() == http::verb::get && request.target() == "/metrics") {
    response.result(http::status::ok);
    response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    response.body() = metrics->render();
  } else {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain");
    response.body() = "not found: try /metrics\n";
  }
  response.prepare_payload();
  co_await http::async_write(socket, response, asio::redirect_error(asio::use_awaitable, ec));
  socket.shutdown(tcp::socket::shutdown_send, ec);
}

asio::awaitable<void> listen(tcp::acceptor& acceptor,
                             std::shared_ptr<const prometheus_metrics> metrics) {
  for (;;) {
    redlock::error_code ec;
    auto socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;  // closed
    asio::co_spawn(acceptor.get_executor(), serve(std::move(socket), metrics), asio::detached);
  }
}

/// Acquire, hold a moment, release; every `interval`, `iterations` times
/// (0: until stopped).
asio::awaitable<void> workload(redlock::client& locks, std::chrono::milliseconds interval,
                               long iterations) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  redlock::lock_options options;
  options.ttl = 5s;
  options.retry = redlock::retry_policy::try_once();
  for (long n = 0; iterations == 0 || n < iterations; ++n) {
    redlock::error_code ec;
    auto held = co_await locks.async_acquire("demo", options,
                                             asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      timer.expires_after(1ms);
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      co_await locks.async_release(held, asio::redirect_error(asio::use_awaitable, ec));
    }
    timer.expires_after(interval);
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

struct arguments {
  std::string listen = "127.0.0.1:9464";
  std::chrono::milliseconds interval{200};
  long iterations = 0;
  int first_node = 1;  ///< argv index of the first host:port.
};

arguments parse(int argc, char** argv) {
  arguments args;
  int i = 1;
  for (; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--listen") {
      args.listen = argv[i + 1];
    } else if (flag == "--interval-ms") {
      args.interval = std::chrono::milliseconds(std::stol(argv[i + 1]));
    } else if (flag == "--iterations") {
      args.iterations = std::stol(argv[i + 1]);
    } else {
      break;
    }
  }
  args.first_node = i;
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  arguments args;
  redlock::client_config config;
  tcp::endpoint endpoint;
  try {
    args = parse(argc, argv);
    config.nodes = example_nodes(argc, argv, args.first_node);
    // HOST:PORT, port 0 meaning any free one.
    const auto colon = args.listen.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument("--listen needs HOST:PORT");
    const auto port = std::stoul(args.listen.substr(colon + 1));
    if (port > 65535) throw std::invalid_argument("--listen: port out of range");
    endpoint = tcp::endpoint(asio::ip::make_address(args.listen.substr(0, colon)),
                             static_cast<unsigned short>(port));
  } catch (const std::exception& e) {
    fmt::print(stderr,
               "prometheus_exporter: {}\nusage: prometheus_exporter [--listen HOST:PORT] "
               "[--interval-ms N] [--iterations N] [host:port ...]\n",
               e.what());
    return 2;
  }
  std::vector<std::string> endpoints;
  for (const auto& node : config.nodes)
    endpoints.push_back(fmt::format("{}:{}", node.host, node.port));
  auto metrics = std::make_shared<prometheus_metrics>(endpoints);
  config.observer = metrics;

  asio::io_context io(1);
  redlock::client locks(io.get_executor(), config);
  tcp::acceptor acceptor(io, endpoint);
  fmt::print(stderr, "prometheus_exporter: listening on {}:{} (GET /metrics)\n",
             acceptor.local_endpoint().address().to_string(), acceptor.local_endpoint().port());

  const auto stop = [&] {
    locks.close();
    redlock::error_code ignored;
    acceptor.close(ignored);
    io.stop();
  };
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](redlock::error_code ec, int) {
    if (!ec) stop();
  });
  asio::co_spawn(io, listen(acceptor, metrics), asio::detached);
  asio::co_spawn(io, workload(locks, args.interval, args.iterations), [&](std::exception_ptr) {
    if (args.iterations != 0) stop();
  });
  io.run();
  return 0;
}
