// What the tool says to people (issue 22 §2): the AOF warning once per call
// in one short line, blanks in node lists, unknown and misplaced options
// named, --help without CLI11's internals.

#include "cli_process.hpp"

#include "support/redis_server.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace redlock::clitest {
namespace {

/// The lines of `text` that contain `part`.
std::vector<std::string> lines_with(const std::string& text, std::string_view part) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(part) != std::string::npos) found.push_back(line);
  }
  return found;
}

/// `--nodes` for `nodes` (without the --no-aof-warning of nodes_args()),
/// then `arguments`.
std::vector<std::string> on(const test::cluster& nodes, std::vector<std::string> arguments) {
  std::string list;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    list += fmt::format("{}127.0.0.1:{}", i == 0 ? "" : ",", nodes.node(i).port());
  }
  std::vector<std::string> all{"--nodes", list};
  all.insert(all.end(), arguments.begin(), arguments.end());
  return all;
}

/// A usage error: status 2, one line "redlock: ...", nothing on stdout.
void check_usage_error(const outcome& done) {
  INFO(done.err);
  CHECK(done.status == 2);
  CHECK(line_count(done.err) == 1);
  CHECK(done.err.starts_with("redlock: "));
  CHECK(done.out.empty());
}

}  // namespace

TEST_CASE("cli nodes without AOF get one short warning per call, naming the tool's switches",
          "[cli][messages]") {
  // The test servers run with appendonly no, like scripts/cluster.sh's.
  const test::cluster nodes(3);
  const auto warned = run_cli(on(nodes, {"status", "job"}));
  INFO(warned.err);
  REQUIRE(warned.status == 0);
  const auto lines = lines_with(warned.err, "AOF");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].starts_with("redlock: warning: 127.0.0.1:"));
  CHECK(lines[0].find("--no-aof-warning") != std::string::npos);
  CHECK(lines[0].find("REDLOCK_NO_AOF_WARNING=1") != std::string::npos);
  CHECK(lines[0].size() <= 130);
  // Not the library's sentence, nor its C++ field.
  CHECK(warned.err.find("warn_without_aof") == std::string::npos);
  CHECK(warned.err.find("appendonly") == std::string::npos);

  SECTION("--no-aof-warning silences it") {
    const auto quiet = run_cli(on(nodes, {"--no-aof-warning", "status", "job"}));
    CHECK(quiet.status == 0);
    CHECK(quiet.err.find("AOF") == std::string::npos);
  }
  SECTION("so does REDLOCK_NO_AOF_WARNING=1; 0 does not") {
    const auto quiet = run_cli(on(nodes, {"status", "job"}), {{"REDLOCK_NO_AOF_WARNING", "1"}});
    CHECK(quiet.status == 0);
    CHECK(quiet.err.find("AOF") == std::string::npos);
    const auto loud = run_cli(on(nodes, {"status", "job"}), {{"REDLOCK_NO_AOF_WARNING", "0"}});
    CHECK(loud.status == 0);
    CHECK(lines_with(loud.err, "AOF").size() == 1);
  }
  SECTION("another value of REDLOCK_NO_AOF_WARNING is a usage error naming it") {
    const auto bad = run_cli(on(nodes, {"status", "job"}), {{"REDLOCK_NO_AOF_WARNING", "yes"}});
    check_usage_error(bad);
    CHECK(bad.err.find("REDLOCK_NO_AOF_WARNING") != std::string::npos);
  }
  SECTION("-q silences it") {
    const auto quiet = run_cli(on(nodes, {"-q", "status", "job"}));
    CHECK(quiet.status == 0);
    CHECK(quiet.err.empty());
  }
}

TEST_CASE("cli blanks after the commas of a node list are ignored, in --nodes and REDLOCK_NODES",
          "[cli][messages]") {
  const test::cluster nodes(3);
  const auto list = fmt::format("127.0.0.1:{}, 127.0.0.1:{} ,  127.0.0.1:{}", nodes.node(0).port(),
                                nodes.node(1).port(), nodes.node(2).port());
  const auto given = run_cli({"--no-aof-warning", "--nodes", list, "status", "job"});
  INFO(given.err);
  CHECK(given.status == 0);
  CHECK(given.err.empty());
  const auto from_env = run_cli({"--no-aof-warning", "status", "job"}, {{"REDLOCK_NODES", list}});
  INFO(from_env.err);
  CHECK(from_env.status == 0);
  CHECK(from_env.err.empty());
}

TEST_CASE("cli a bad REDLOCK_NODES is a usage error naming the variable and the node",
          "[cli][messages]") {
  const auto bad = run_cli({"status", "job"}, {{"REDLOCK_NODES", "127.0.0.1:1,127.0.0.1:2,oops"}});
  check_usage_error(bad);
  CHECK(bad.err.find("REDLOCK_NODES: invalid node 'oops'") != std::string::npos);
  // Empty is as good as unset: --nodes is asked for.
  const auto empty = run_cli({"status", "job"}, {{"REDLOCK_NODES", " "}});
  check_usage_error(empty);
  CHECK(empty.err.find("--nodes (or REDLOCK_NODES) is required") != std::string::npos);
}

TEST_CASE("cli an unknown option is named, with the nearest known one when it is close",
          "[cli][messages]") {
  struct call {
    std::vector<std::string> arguments;
    std::string said;
    bool suggests;
  };
  const std::string three = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
  const std::vector<call> calls{
      {{"--nodes", three, "exec", "--tll", "5s", "job", "--", "true"},
       "exec: unknown option --tll; did you mean --ttl?",
       true},
      {{"--nodes", three, "acquire", "--tll", "5s", "job"},
       "acquire: unknown option --tll; did you mean --ttl?",
       true},
      {{"--nodes", three, "acquire", "--tll=5s", "job"},
       "acquire: unknown option --tll; did you mean --ttl?",
       true},
      {{"--nodes", three, "exec", "--no-wiat", "job", "--", "true"},
       "unknown option --no-wiat; did you mean --no-wait?",
       true},
      {{"--nodez", three, "status", "job"}, "unknown option --nodez; did you mean --nodes?", true},
      {{"--nodes", three, "status", "--frobnicate", "job"},
       "status: unknown option --frobnicate",
       false},
      {{"--nodes", three, "status", "-x", "job"}, "status: unknown option -x", false},
      // A global option's near miss after the command: where it belongs.
      {{"--nodes", three, "acquire", "--prefx", "p", "job"},
       "did you mean --prefix? (a global option: give it before the command)",
       true},
  };
  for (const auto& c : calls) {
    std::string shown;
    for (const auto& a : c.arguments) shown += " '" + a + "'";
    INFO("redlock" << shown);
    const auto done = run_cli(c.arguments, {}, 10s);
    check_usage_error(done);
    CHECK(done.err.find(c.said) != std::string::npos);
    CHECK((done.err.find("did you mean") != std::string::npos) == c.suggests);
    CHECK(done.err.find("the command goes after") == std::string::npos);
  }
}

TEST_CASE("cli a global option given after the command is told to go before it",
          "[cli][messages]") {
  const std::string three = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
  const std::vector<std::pair<std::vector<std::string>, std::string>> calls{
      {{"acquire", "job", "--nodes", three}, "--nodes is a global option"},
      {{"--nodes", three, "acquire", "--prefix", "app:", "job"}, "--prefix is a global option"},
      {{"--nodes", three, "exec", "-v", "job", "--", "true"}, "-v is a global option"},
      {{"--nodes", three, "status", "job", "--no-aof-warning"},
       "--no-aof-warning is a global option"},
  };
  // And the other way round.
  const auto early = run_cli({"--nodes", three, "--ttl", "5s", "acquire", "job"}, {}, 10s);
  check_usage_error(early);
  CHECK(early.err.find("--ttl is an option of exec, acquire, extend: give it after the command") !=
        std::string::npos);
  for (const auto& [arguments, said] : calls) {
    std::string shown;
    for (const auto& a : arguments) shown += " '" + a + "'";
    INFO("redlock" << shown);
    const auto done = run_cli(arguments, {}, 10s);
    check_usage_error(done);
    CHECK(done.err.find(said + ": give it before the command") != std::string::npos);
  }
}

TEST_CASE("cli --help reads like a synopsis: value types, defaults, no CLI11 internals",
          "[cli][messages]") {
  const std::regex internals(
      R"(\{false\}|\{true\}|\b(TEXT|INT|UINT|FLOAT)\b|in \[[0-9.]+ - [0-9.]+\]|Excludes:|Needs:|REQUIRED)");
  for (const std::string command : {"", "exec", "acquire", "extend", "release", "status"}) {
    std::vector<std::string> arguments;
    if (!command.empty()) arguments.push_back(command);
    arguments.push_back("--help");
    const auto done = run_cli(arguments, {}, 10s);
    INFO("redlock " << command << " --help\n" << done.out);
    REQUIRE(done.status == 0);
    std::smatch found;
    CHECK_FALSE(std::regex_search(done.out, found, internals));
    std::istringstream in(done.out);
    for (std::string line; std::getline(in, line);) {
      INFO(line);
      CHECK(line.size() <= 80);
    }
  }
  const auto root = run_cli({"--help"}, {}, 10s);
  CHECK(root.out.find("Usage: redlock [OPTIONS] COMMAND [ARGS...]\n") != std::string::npos);
  CHECK(std::regex_search(root.out, std::regex(R"(\n  --drift-factor F +Clock drift)")));
  CHECK(std::regex_search(root.out, std::regex(R"(\n  --nodes H:P\[,H:P\.\.\.\] +Redis masters)")));
  CHECK(root.out.find("(default: 0.01)") != std::string::npos);
  CHECK(std::regex_search(root.out, std::regex(R"(\n  --no-aof-warning +Do not warn)")));

  const auto exec = run_cli({"exec", "--help"}, {}, 10s);
  CHECK(
      exec.out.find("Usage: redlock [GLOBAL OPTIONS] exec [OPTIONS] RESOURCE -- CMD [ARGS...]\n") !=
      std::string::npos);
  CHECK(std::regex_search(exec.out, std::regex(R"(\n  --ttl DUR +TTL of the lock)")));
  CHECK(exec.out.find("(default: 30s)") != std::string::npos);
  const auto extend = run_cli({"extend", "--help"}, {}, 10s);
  CHECK(extend.out.find("Usage: redlock [GLOBAL OPTIONS] extend [OPTIONS] RESOURCE TOKEN\n") !=
        std::string::npos);
}

}  // namespace redlock::clitest
