// The Prometheus exporter example: its metrics class on its own (text
// format, escaping, result labels), then the program against real
// redis-servers: its metrics over HTTP move with the workload, and a node
// that stops is seen down.
#include <redlock/detail/asio.hpp>  // first: <utility> before Asio

#include "cli_process.hpp"
#include "prometheus_metrics.hpp"

#include "support/redis_server.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <exception>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace redlock::clitest {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

struct http_reply {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

asio::awaitable<void> exchange(std::uint16_t port, std::vector<std::string> paths,
                               std::vector<http_reply>& replies) {
  boost::beast::tcp_stream stream(co_await asio::this_coro::executor);
  stream.expires_after(5s);  // every operation below fails past this
  co_await stream.async_connect({asio::ip::address_v4::loopback(), port}, asio::use_awaitable);
  boost::beast::flat_buffer buffer;
  for (const auto& path : paths) {
    http::request<http::empty_body> request(http::verb::get, path, 11);
    request.set(http::field::host, "127.0.0.1");
    co_await http::async_write(stream, request, asio::use_awaitable);
    http::response<http::string_body> response;
    co_await http::async_read(stream, buffer, response, asio::use_awaitable);
    replies.push_back({response.result_int(), std::string(response[http::field::content_type]),
                       std::move(response.body())});
  }
}

/// GETs each of `paths` in turn on one kept-alive connection to
/// 127.0.0.1:`port`; throws on any failure, or after 5 s.
std::vector<http_reply> http_get(std::uint16_t port, std::vector<std::string> paths) {
  asio::io_context io;
  std::vector<http_reply> replies;
  std::exception_ptr failure;
  asio::co_spawn(io, exchange(port, std::move(paths), replies),
                 [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return replies;
}

/// A scrape read as the text format 0.0.4: samples by series (name and
/// label set as written), and each family's TYPE. Fails the test on a line
/// that is neither a comment nor a well-formed sample, a sample whose family
/// had no HELP and TYPE before it, or a family declared twice.
struct scrape {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
  std::string text;

  double operator[](const std::string& series) const {
    const auto found = samples.find(series);
    return found == samples.end() ? -1 : found->second;
  }
};

scrape parse(std::string text) {
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*)");
  static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram))");
  // Label values: anything but an unescaped quote, backslash or newline.
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-z_]+="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-z_]+="(?:[^"\\\n]|\\[\\"n])*")*\})? (\S+))");
  scrape result;
  std::set<std::string> helped;
  std::istringstream lines(text);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    INFO("line: " << line);
    if (std::regex_match(line, m, help)) {
      CHECK(helped.insert(m[1].str()).second);
    } else if (std::regex_match(line, m, type)) {
      CHECK(helped.count(m[1].str()) == 1);
      CHECK(result.types.emplace(m[1].str(), m[2].str()).second);
    } else {
      REQUIRE(std::regex_match(line, m, sample));
      auto family = m[1].str();
      for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
        const auto base = family.substr(0, family.size() - std::min(family.size(), suffix.size()));
        if (family.ends_with(suffix) && result.types.count(base) == 1 &&
            result.types.at(base) == "histogram") {
          family = base;
        }
      }
      CHECK(result.types.count(family) == 1);
      std::size_t used = 0;
      const auto value = std::stod(m[3].str(), &used);
      CHECK(used == m[3].str().size());
      CHECK(result.samples.emplace(m[1].str() + m[2].str(), value).second);
    }
  }
  result.text = std::move(text);
  return result;
}

/// Scrapes until `done` holds of the metrics; bounded (the exporter has no
/// event a test could wait on but its own output).
template <class Predicate>
scrape scrape_until(std::uint16_t port, Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  for (;;) {
    auto metrics = parse(http_get(port, {"/metrics"}).at(0).body);
    if (done(metrics)) return metrics;
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL("the metrics never showed it:\n" << metrics.text);
    }
    std::this_thread::sleep_for(20ms);
  }
}

const std::vector<std::pair<std::string, std::string>> families{
    {"redlock_operations_total", "counter"},
    {"redlock_operation_duration_seconds", "histogram"},
    {"redlock_node_requests_total", "counter"},
    {"redlock_node_request_duration_seconds", "histogram"},
    {"redlock_acquire_retries_total", "counter"},
    {"redlock_acquire_waits_total", "counter"},
    {"redlock_locks_lost_total", "counter"},
    {"redlock_node_up", "gauge"},
    {"redlock_node_connection_events_total", "counter"},
};

/// The histogram `name{labels}`: buckets cumulative, +Inf equal to _count.
void check_histogram(const scrape& metrics, const std::string& name, const std::string& labels) {
  INFO(name << "{" << labels << "}");
  double previous = 0;
  for (const auto* le : {"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
                         "0.25", "0.5", "1", "+Inf"}) {
    const auto bucket = metrics[fmt::format(R"({}_bucket{{{},le="{}"}})", name, labels, le)];
    CHECK(bucket >= previous);
    previous = bucket;
  }
  CHECK(previous == metrics[fmt::format("{}_count{{{}}}", name, labels)]);
  CHECK(metrics[fmt::format("{}_sum{{{}}}", name, labels)] >= 0);
}

}  // namespace

TEST_CASE("prometheus_metrics renders the text format, escaping label values", "[exporter]") {
  prometheus_metrics metrics({"127.0.0.1:7001", "odd\"name\\with\nnewline:1"});
  metrics.on_connection(0, "127.0.0.1:7001", connection_event::connected, {});
  metrics.on_connection(1, "odd\"name\\with\nnewline:1", connection_event::failed,
                        make_error_code(boost::system::errc::connection_refused));
  operation_report acquire{operation_kind::acquire, "r", {}, 3ms, 1};
  metrics.on_operation(acquire);
  acquire.result = errc::not_acquired;
  acquire.latency = 2s;  // beyond the last bucket
  metrics.on_operation(acquire);
  metrics.on_operation({operation_kind::release, "r", errc::lock_lost, 700us, 1});
  metrics.on_retry("r", 2, errc::not_acquired);
  metrics.on_wait("r");
  metrics.on_lock_lost("r", errc::lock_expiring);
  node_report reply{operation_kind::acquire, 0, "127.0.0.1:7001", {}, 400us};
  reply.outcome.state = node_outcome::status::acquired;
  metrics.on_node_reply(reply);

  const auto text = metrics.render();
  const auto parsed = parse(text);
  for (const auto& [name, type] : families) {
    CHECK(parsed.types.count(name) == 1);
    if (parsed.types.count(name) == 1) CHECK(parsed.types.at(name) == type);
  }
  CHECK(parsed[R"(redlock_node_up{node="127.0.0.1:7001"})"] == 1);
  CHECK(parsed[R"(redlock_node_up{node="odd\"name\\with\nnewline:1"})"] == 0);
  CHECK(parsed[R"(redlock_operations_total{operation="acquire",result="ok"})"] == 1);
  CHECK(parsed[R"(redlock_operations_total{operation="acquire",result="not_acquired"})"] == 1);
  CHECK(parsed[R"(redlock_operations_total{operation="release",result="lock_lost"})"] == 1);
  CHECK(parsed[R"(redlock_operation_duration_seconds_bucket{operation="acquire",le="0.0025"})"] ==
        0);
  CHECK(parsed[R"(redlock_operation_duration_seconds_bucket{operation="acquire",le="0.005"})"] ==
        1);
  CHECK(parsed[R"(redlock_operation_duration_seconds_bucket{operation="acquire",le="1"})"] == 1);
  CHECK(parsed[R"(redlock_operation_duration_seconds_bucket{operation="acquire",le="+Inf"})"] == 2);
  CHECK(parsed[R"(redlock_operation_duration_seconds_sum{operation="acquire"})"] == Approx(2.003));
  CHECK(parsed[R"(redlock_operation_duration_seconds_bucket{operation="release",le="0.0005"})"] ==
        0);
  CHECK(parsed[R"(redlock_operation_duration_seconds_bucket{operation="release",le="0.001"})"] ==
        1);
  check_histogram(parsed, "redlock_operation_duration_seconds", R"(operation="acquire")");
  check_histogram(parsed, "redlock_node_request_duration_seconds", R"(node="127.0.0.1:7001")");
  CHECK(
      parsed
          [R"(redlock_node_requests_total{node="127.0.0.1:7001",operation="acquire",outcome="granted"})"] ==
      1);
  CHECK(parsed["redlock_acquire_retries_total"] == 1);
  CHECK(parsed["redlock_acquire_waits_total"] == 1);
  CHECK(parsed[R"(redlock_locks_lost_total{reason="lock_expiring"})"] == 1);
  CHECK(
      parsed[R"(redlock_node_connection_events_total{node="127.0.0.1:7001",event="connected"})"] ==
      1);

  CHECK(prometheus_metrics::result_label({}) == "ok");
  CHECK(prometheus_metrics::result_label(errc::quorum_unreachable) == "quorum_unreachable");
  CHECK(prometheus_metrics::result_label(errc::invalid_ttl) == "invalid_argument");
  // Every other redlock code is labelled with its name (redlock::to_string).
  CHECK(prometheus_metrics::result_label(errc::fence_state_lost) == "fence_state_lost");
  CHECK(prometheus_metrics::result_label(errc::lock_expiring) == "lock_expiring");
  CHECK(prometheus_metrics::result_label(boost::asio::error::operation_aborted) == "aborted");
  CHECK(prometheus_metrics::result_label(boost::asio::error::connection_refused) == "error");
}

TEST_CASE("the Prometheus exporter serves metrics that follow the lock and its nodes",
          "[exporter]") {
  test::cluster nodes(3);
  std::vector<std::string> endpoints;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    endpoints.push_back(fmt::format("127.0.0.1:{}", nodes.node(i).port()));
  }
  process exporter({REDLOCK_EXPORTER_PATH, "--nodes", fmt::format("{}", fmt::join(endpoints, ",")),
                    "--listen", "127.0.0.1:0", "--interval", "10ms", "--hold", "1ms"},
                   {}, false, false, true);
  std::smatch m;
  const auto line = exporter.read_line();
  REQUIRE(std::regex_match(line, m, std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)")));
  const auto port = static_cast<std::uint16_t>(std::stoi(m[1].str()));

  const auto acquired = R"(redlock_operations_total{operation="acquire",result="ok"})";
  const auto granted_by = [](const std::string& node) {
    return fmt::format(
        R"(redlock_node_requests_total{{node="{}",operation="acquire",outcome="granted"}})", node);
  };
  // The acquires complete at a quorum: a slower node may connect and answer
  // later, so its figures are waited for too.
  auto metrics = scrape_until(port, [&](const scrape& s) {
    return s[acquired] >= 3 && std::all_of(endpoints.begin(), endpoints.end(),
                                           [&](auto& node) { return s[granted_by(node)] >= 1; });
  });
  INFO(metrics.text);
  for (const auto& [name, type] : families) {
    CHECK_THAT(metrics.text, Catch::Contains(fmt::format("\n# TYPE {} {}\n", name, type)));
  }
  CHECK(metrics[R"(redlock_operations_total{operation="release",result="ok"})"] >= 2);
  check_histogram(metrics, "redlock_operation_duration_seconds", R"(operation="acquire")");
  CHECK(metrics[R"(redlock_operation_duration_seconds_count{operation="acquire"})"] >= 3);
  for (const auto& node : endpoints) {
    CHECK(metrics[fmt::format(R"(redlock_node_up{{node="{}"}})", node)] == 1);
    CHECK(metrics[granted_by(node)] >= 1);
    check_histogram(metrics, "redlock_node_request_duration_seconds",
                    fmt::format(R"(node="{}")", node));
  }

  // Two requests on one kept-alive connection: the metrics, then a 404.
  const auto replies = http_get(port, {"/metrics", "/nothing"});
  CHECK(replies.at(0).status == 200);
  CHECK(replies.at(0).content_type.starts_with("text/plain; version=0.0.4"));
  CHECK(replies.at(1).status == 404);

  // A node stops: it is seen down, and its failed requests are counted.
  nodes.node(2).stop();
  const auto up = fmt::format(R"(redlock_node_up{{node="{}"}})", endpoints[2]);
  const auto failed = fmt::format(
      R"(redlock_node_requests_total{{node="{}",operation="acquire",outcome="failed"}})",
      endpoints[2]);
  const auto disconnected = fmt::format(
      R"(redlock_node_connection_events_total{{node="{}",event="disconnected"}})", endpoints[2]);
  const auto before = metrics[acquired];
  metrics = scrape_until(port, [&](const scrape& s) {
    return s[up] == 0 && s[failed] >= 1 && s[acquired] >= before + 3;
  });
  CHECK(metrics[disconnected] == 1);
  CHECK(metrics[fmt::format(R"(redlock_node_up{{node="{}"}})", endpoints[0])] == 1);

  exporter.signal(SIGTERM);
  const auto end = exporter.wait(10s);
  INFO(end.err);
  CHECK(end.status == 0);
}

TEST_CASE("the Prometheus exporter ends after --iterations and refuses a bad --listen",
          "[exporter]") {
  test::cluster nodes(3);
  std::vector<std::string> endpoints;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    endpoints.push_back(fmt::format("127.0.0.1:{}", nodes.node(i).port()));
  }
  const auto list = fmt::format("{}", fmt::join(endpoints, ","));
  process done({REDLOCK_EXPORTER_PATH, "--nodes", list, "--listen", "127.0.0.1:0", "--interval",
                "1ms", "--iterations", "5"});
  const auto end = done.wait(20s);
  INFO(end.err);
  CHECK(end.status == 0);
  CHECK(std::regex_search(end.out, std::regex("^listening on 127\\.0\\.0\\.1:[0-9]+\n$")));

  for (const auto* bad : {"nowhere", "127.0.0.1:99999", "localhost:1", "127.0.0.1:"}) {
    INFO(bad);
    process refused({REDLOCK_EXPORTER_PATH, "--nodes", list, "--listen", bad});
    const auto usage = refused.wait(10s);
    CHECK(usage.status == 2);
    CHECK_THAT(usage.err, Catch::Contains("--listen"));
  }
}

}  // namespace redlock::clitest
