// How `redlock exec` and `redlock acquire` wait (issue 20, point 6): for a
// holder as long as it takes, but for nodes that cannot answer only
// --unreachable-timeout (exit 4 naming each node and why); refused
// certificates and credentials end it at once; and "still waiting" notices
// every --notice-interval, unless -q.

#include "cli_process.hpp"

#include "support/hostile_server.hpp"
#include "support/redis_server.hpp"
#include "support/tls_fixtures.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::clitest {
namespace {

using test::cluster;

std::vector<std::uint16_t> ports_of(const cluster& nodes) {
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < nodes.size(); ++i) ports.push_back(nodes.node(i).port());
  return ports;
}

/// `--nodes` for `ports`, then `arguments`.
std::vector<std::string> on_nodes(const std::vector<std::uint16_t>& ports,
                                  std::vector<std::string> arguments) {
  auto all = nodes_args(ports);
  all.insert(all.end(), arguments.begin(), arguments.end());
  return all;
}

std::size_t occurrences(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

/// How many of `ports` `text` names as "127.0.0.1:P: <cause>".
std::size_t named_nodes(std::string_view text, const std::vector<std::uint16_t>& ports,
                        std::string_view cause) {
  std::size_t named = 0;
  for (const auto port : ports) {
    named += text.find(fmt::format("127.0.0.1:{}: {}", port, cause)) != std::string_view::npos;
  }
  return named;
}

/// "(127.0.0.1:P: Connection refused; ...)" for each of `ports`.
std::string refused_list(const std::vector<std::uint16_t>& ports) {
  std::string list;
  for (const auto port : ports) {
    if (!list.empty()) list += "; ";
    list += fmt::format("127.0.0.1:{}: Connection refused", port);
  }
  return "(" + list + ")";
}

}  // namespace

TEST_CASE("cli acquire and exec give up on nodes that cannot answer after --unreachable-timeout",
          "[cli][waiting]") {
  cluster nodes(3);
  const auto ports = ports_of(nodes);
  for (std::size_t i = 0; i < nodes.size(); ++i) nodes.node(i).stop();
  const auto every_node = refused_list(ports);

  for (const bool quiet : {false, true}) {
    INFO((quiet ? "with -q" : "without -q"));
    std::vector<std::string> global;
    if (quiet) global.push_back("-q");
    auto acquire = global;
    acquire.insert(acquire.end(), {"acquire", "--unreachable-timeout", "1s", "job"});
    const auto acquired = run_cli(on_nodes(ports, acquire), {}, 15s);
    INFO(acquired.err);
    CHECK(acquired.status == 4);
    CHECK(acquired.out.empty());
    CHECK(acquired.took >= 1s - 50ms);
    CHECK(acquired.took < 5s);
    CHECK_THAT(acquired.err,
               Catch::Contains("could not acquire job: quorum unreachable: too few Redis nodes "
                               "answered " +
                               every_node));

    auto exec = global;
    exec.insert(exec.end(), {"exec", "--unreachable-timeout", "1s", "job", "--", "sh", "-c",
                             "echo ran; exit 0"});
    const auto executed = run_cli(on_nodes(ports, exec), {}, 15s);
    INFO(executed.err);
    CHECK(executed.status == 4);
    CHECK(executed.out.empty());  // the command never ran
    CHECK(executed.took >= 1s - 50ms);
    CHECK(executed.took < 5s);
    CHECK_THAT(executed.err, Catch::Contains("could not acquire job: quorum unreachable: too few "
                                             "Redis nodes answered " +
                                             every_node));
  }
}

TEST_CASE("cli exec gives up on a hostile majority after --unreachable-timeout", "[cli][waiting]") {
  cluster nodes(1);
  std::vector<std::unique_ptr<test::hostile_server>> hostile;
  std::vector<std::uint16_t> ports{nodes.node(0).port()};
  for (int i = 0; i < 2; ++i) {
    hostile.push_back(std::make_unique<test::hostile_server>(test::hostile_behaviour::garbage));
    ports.push_back(hostile.back()->port());
  }
  const auto done =
      run_cli(on_nodes(ports, {"--connect-timeout", "300ms", "exec", "--unreachable-timeout", "1s",
                               "job", "--", "sh", "-c", "echo ran"}),
              {}, 15s);
  INFO(done.err);
  CHECK(done.status == 4);
  CHECK(done.out.empty());
  CHECK(done.took < 5s);
  for (std::size_t i = 1; i < ports.size(); ++i) {
    CHECK_THAT(done.err, Catch::Contains(fmt::format("127.0.0.1:{}: ", ports[i])));
  }
}

TEST_CASE("cli acquire and exec fail at once on certificates and credentials the nodes refuse",
          "[cli][waiting]") {
  SECTION("a CA that did not sign the nodes' certificates") {
    const test::tls_cluster nodes(
        std::vector<test::tls_server_options>(3, test::good_tls_server()));
    const auto& p = nodes.tls_ports;
    const auto listed = fmt::format("127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}", p[0], p[1], p[2]);
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"acquire", "job"}, {"exec", "job", "--", "sh", "-c", "echo ran"}}) {
      std::vector<std::string> all{"--nodes", listed, "--tls", "--tls-ca",
                                   test::test_certs().other_ca_file()};
      all.insert(all.end(), command.begin(), command.end());
      const auto done = run_cli(all, {}, 15s);
      INFO(command.front() << ": " << done.err);
      CHECK(done.status == 2);
      CHECK(done.out.empty());
      CHECK(done.took < 5s);
      // Each node that failed is named with the cause (a majority; the
      // last may have been decided without).
      CHECK(named_nodes(done.err, p,
                        "TLS certificate verification failed: self-signed certificate in "
                        "certificate chain") >= 2);
    }
  }
  SECTION("a password the nodes refuse") {
    test::server_options secured;
    secured.requirepass = "s3cret";
    cluster nodes(3, secured);
    const auto ports = ports_of(nodes);
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"acquire", "job"}, {"exec", "job", "--", "sh", "-c", "echo ran"}}) {
      std::vector<std::string> all{"--password-env", "LOCK_PASSWORD"};
      all.insert(all.end(), command.begin(), command.end());
      const auto done = run_cli(on_nodes(ports, all), {{"LOCK_PASSWORD", "wrong"}}, 15s);
      INFO(command.front() << ": " << done.err);
      CHECK(done.status == 2);
      CHECK(done.out.empty());
      CHECK(done.took < 5s);
      CHECK_THAT(done.err, Catch::Contains("the nodes refused the credentials"));
      CHECK(named_nodes(done.err, ports, "authentication to the Redis node failed") >= 2);
    }
  }
}

TEST_CASE("cli says why it still waits every --notice-interval, and nothing with -q",
          "[cli][waiting]") {
  cluster nodes(3);
  const auto ports = ports_of(nodes);

  SECTION("held elsewhere") {
    const auto held = run_cli(on_nodes(ports, {"acquire", "--ttl", "30s", "job"}));
    REQUIRE(held.status == 0);
    const auto waited = run_cli(
        on_nodes(ports, {"acquire", "--wait", "1500ms", "--notice-interval", "300ms", "job"}));
    INFO(waited.err);
    CHECK(waited.status == 1);
    CHECK(occurrences(waited.err, "redlock: still waiting for job: held elsewhere\n") >= 2);

    const auto quiet = run_cli(on_nodes(
        ports, {"-q", "acquire", "--wait", "1500ms", "--notice-interval", "300ms", "job"}));
    INFO(quiet.err);
    CHECK(quiet.status == 1);
    CHECK(quiet.err.find("still waiting") == std::string::npos);
  }
  SECTION("nodes unreachable") {
    nodes.node(0).stop();
    nodes.node(1).stop();
    const auto expected =
        fmt::format("redlock: still waiting for job: 2 of 3 nodes unreachable {}\n",
                    refused_list({ports[0], ports[1]}));
    const auto waited =
        run_cli(on_nodes(ports, {"exec", "--unreachable-timeout", "1500ms", "--notice-interval",
                                 "300ms", "job", "--", "sh", "-c", "echo ran"}));
    INFO(waited.err);
    CHECK(waited.status == 4);
    CHECK(waited.out.empty());
    CHECK(occurrences(waited.err, expected) >= 2);

    const auto quiet = run_cli(
        on_nodes(ports, {"-q", "exec", "--unreachable-timeout", "1500ms", "--notice-interval",
                         "300ms", "job", "--", "sh", "-c", "echo ran"}));
    INFO(quiet.err);
    CHECK(quiet.status == 4);
    CHECK(quiet.err.find("still waiting") == std::string::npos);
  }
}

TEST_CASE("cli exec and acquire --help show the waiting options and their defaults",
          "[cli][waiting][usage]") {
  for (const auto* command : {"exec", "acquire"}) {
    const auto help = run_cli({command, "--help"});
    INFO(help.out);
    CHECK(help.status == 0);
    // The default ends the option's description (its next lines are
    // indented to the description column).
    const auto described = [&](const std::string& option, const std::string& fallback) {
      const std::string pattern =
          "\n  " + option + R"( +[^\n]*(\n {30}[^\n]*)*\(default: )" + fallback + R"(\))";
      return std::regex_search(help.out, std::regex(pattern));
    };
    CHECK(described("--unreachable-timeout DUR", "30s"));
    CHECK(described("--notice-interval DUR", "10s"));
  }
}

}  // namespace redlock::clitest
