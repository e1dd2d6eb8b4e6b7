// The Prometheus exporter example against real redis-servers: its metrics
// over HTTP move with the workload, and a node that stops is seen down.
#include "cli_process.hpp"

#include "support/redis_server.hpp"

#include <redlock/detail/asio.hpp>

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <signal.h>

#include <regex>
#include <string>
#include <thread>

namespace redlock::clitest {
namespace {

/// GET `path` from 127.0.0.1:`port`; the whole response, headers included.
std::string http_get(std::uint16_t port, const std::string& path) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::address_v4::loopback(), port});
  const auto request = fmt::format("GET {} HTTP/1.1\r\nHost: localhost\r\n\r\n", path);
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string response;
  boost::system::error_code ec;
  boost::asio::read(socket, boost::asio::dynamic_buffer(response), ec);  // to EOF
  return response;
}

/// The value of the sample line that starts with `series`, or -1.
double sample(const std::string& metrics, const std::string& series) {
  const auto at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + series.size() + 2));
}

/// Scrapes until `done(metrics)` holds; bounded (the exporter has no event
/// a test could wait on but its own output).
template <class Predicate>
std::string scrape_until(std::uint16_t port, Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    auto metrics = http_get(port, "/metrics");
    if (done(metrics)) return metrics;
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL("the metrics never showed it:\n" << metrics);
    }
    std::this_thread::sleep_for(20ms);
  }
}

}  // namespace

TEST_CASE("the Prometheus exporter serves metrics that follow the lock and its nodes",
          "[exporter]") {
  test::cluster nodes(3);
  std::vector<std::string> argv{REDLOCK_EXPORTER_PATH, "--listen", "127.0.0.1:0", "--interval-ms",
                                "10"};
  std::vector<std::string> endpoints;
  for (std::size_t i = 0; i < 3; ++i) {
    endpoints.push_back(fmt::format("127.0.0.1:{}", nodes.node(i).port()));
    argv.push_back(endpoints.back());
  }
  process exporter(argv, {}, true);
  std::smatch m;
  const auto line = exporter.read_line();
  REQUIRE(std::regex_search(line, m, std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)")));
  const auto port = static_cast<std::uint16_t>(std::stoi(m[1].str()));

  auto metrics = scrape_until(port, [](const std::string& text) {
    return sample(text, R"(redlock_operations_total{operation="acquire",result="ok"})") >= 3;
  });
  CHECK(http_get(port, "/metrics").starts_with("HTTP/1.1 200 OK"));
  CHECK_THAT(http_get(port, "/metrics"),
             Catch::Contains("Content-Type: text/plain; version=0.0.4"));
  CHECK(http_get(port, "/nothing").starts_with("HTTP/1.1 404"));
  for (const auto* family :
       {"redlock_operations_total counter", "redlock_operation_duration_seconds histogram",
        "redlock_node_requests_total counter", "redlock_node_request_duration_seconds histogram",
        "redlock_acquire_retries_total counter", "redlock_acquire_waits_total counter",
        "redlock_locks_lost_total counter", "redlock_node_up gauge",
        "redlock_node_connection_events_total counter"}) {
    CHECK_THAT(metrics, Catch::Contains(fmt::format("# TYPE {}\n", family)));
  }
  CHECK(sample(metrics, R"(redlock_operation_duration_seconds_count{operation="acquire"})") >= 3);
  for (const auto& node : endpoints) {
    CHECK(sample(metrics, fmt::format(R"(redlock_node_up{{node="{}"}})", node)) == 1);
  }

  // A node stops: it is seen down, and its failed requests are counted.
  nodes.node(2).stop();
  const auto down = fmt::format(R"(redlock_node_up{{node="{}"}})", endpoints[2]);
  const auto failed = fmt::format(
      R"(redlock_node_requests_total{{node="{}",operation="acquire",outcome="failed"}})",
      endpoints[2]);
  metrics = scrape_until(port, [&](const std::string& text) {
    return sample(text, down) == 0 && sample(text, failed) >= 1;
  });
  CHECK(sample(metrics, R"(redlock_operations_total{operation="acquire",result="ok"})") >= 3);

  exporter.signal(SIGTERM);
  CHECK(exporter.wait().status == 0);
}

}  // namespace redlock::clitest
