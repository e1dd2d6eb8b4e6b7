// `redlock exec --once-per`: machines running the same crontab line run the
// command once per period, against real redis-servers with the real tool.
// Each "machine" is a redlock process started at a chosen wall-clock time,
// as cron would start it; the starting times are the scenario, not a wait.

#include "cli_process.hpp"

#include "support/redis_server.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace redlock::clitest {
namespace {

using wall = std::chrono::system_clock;

/// Where tests write files: REDLOCK_TEST_TMPDIR, else /tmp.
std::filesystem::path scratch_file(const std::string& name) {
  const char* env = std::getenv("REDLOCK_TEST_TMPDIR");
  const std::filesystem::path dir = env != nullptr && *env != '\0' ? env : "/tmp";
  auto path = dir / fmt::format("redlock-once-per-{}-{}", ::getpid(), name);
  std::filesystem::remove(path);
  return path;
}

/// The lines of `path` (none when it does not exist).
std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

long long epoch_ms(wall::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

/// The first due time of `period` (from the epoch) at least `lead` from now.
wall::time_point next_due(std::chrono::milliseconds period, std::chrono::milliseconds lead) {
  const auto earliest = epoch_ms(wall::now() + lead);
  const auto p = period.count();
  return wall::time_point(std::chrono::milliseconds((earliest + p - 1) / p * p));
}

/// A cluster, and redlock started at chosen times with --nodes for it.
struct machines {
  test::cluster nodes{3};

  std::vector<std::string> argv(std::vector<std::string> arguments) const {
    std::vector<std::string> all{cli_path()};
    for (auto& a : nodes_args({nodes.node(0).port(), nodes.node(1).port(), nodes.node(2).port()})) {
      all.push_back(a);
    }
    all.push_back("--no-aof-warning");
    all.insert(all.end(), arguments.begin(), arguments.end());
    return all;
  }

  /// Starts `arguments` at `when` (the process starts as cron would start it).
  std::unique_ptr<process> start_at(wall::time_point when, std::vector<std::string> arguments) {
    std::this_thread::sleep_until(when);
    return std::make_unique<process>(argv(std::move(arguments)));
  }
};

/// `exec --once-per 3s --max-skew 1400ms` of `resource` running `script`.
std::vector<std::string> once_per(const std::string& resource, const std::string& script) {
  return {"exec", "--once-per", "3s", "--max-skew", "1400ms", "--ttl", "2s", resource, "--",
          "sh",   "-c",         script};
}

constexpr std::chrono::milliseconds period{3000};
/// When each machine's cron starts redlock, relative to the due time.
const std::vector<std::chrono::milliseconds> starts{-500ms, 0ms, 1000ms};

}  // namespace

TEST_CASE("cli exec --once-per: machines started 0, 0.5 and 1.5 s apart run CMD once per period",
          "[cli][once-per]") {
  machines m;
  const auto ran = scratch_file("ran");
  const auto plain = scratch_file("plain");
  const std::string record = fmt::format("echo \"$REDLOCK_DUE_MS\" >> {}", ran.string());
  const std::string record_plain = fmt::format("echo run >> {}", plain.string());
  constexpr int periods = 3;
  const auto first = next_due(period, 700ms);
  std::vector<std::unique_ptr<process>> once, overlap_only;
  for (int p = 0; p < periods; ++p) {
    const auto due = first + p * period;
    for (const auto offset : starts) {
      once.push_back(m.start_at(due + offset, once_per("report", record)));
      // Beside them, the old idiom: `exec -n` excludes only overlapping runs.
      overlap_only.push_back(
          std::make_unique<process>(m.argv({"exec", "-n", "plain", "--", "sh", "-c", record_plain})));
    }
  }
  std::map<std::string, int> claimed_elsewhere;
  for (auto& proc : once) {
    const auto done = proc->wait();
    INFO(done.err);
    CHECK(done.status == 0);
    if (done.err.find("was claimed elsewhere; not run here") != std::string::npos) {
      ++claimed_elsewhere["report"];
    }
  }
  for (auto& proc : overlap_only) proc->wait();

  std::map<std::string, int> runs;
  for (const auto& line : lines_of(ran)) ++runs[line];
  for (int p = 0; p < periods; ++p) {
    const auto id = std::to_string(epoch_ms(first + p * period));
    INFO("period due " << id);
    CHECK(runs[id] == 1);
  }
  CHECK(runs.size() == periods);  // nothing else ran
  CHECK(claimed_elsewhere["report"] == 2 * periods);
  // What the docs say about plain `exec -n` in a crontab: each run ended
  // before the next machine started, so each ran it.
  CHECK(lines_of(plain).size() > periods);
  std::filesystem::remove(ran);
  std::filesystem::remove(plain);
}

TEST_CASE("cli exec --once-per: a crashed run does not block the next period",
          "[cli][once-per]") {
  machines m;
  const auto ran = scratch_file("crash");
  // Records the period, tells the test its pid (fd 9), and stays until killed.
  const std::string record_and_hang =
      fmt::format("echo \"$REDLOCK_DUE_MS\" >> {}; echo $$ >&9; exec sleep 60", ran.string());
  const std::string record = fmt::format("echo \"$REDLOCK_DUE_MS\" >> {}", ran.string());
  const auto first = next_due(period, 700ms);

  /// Starts the machines of the period due `due`; returns the winner's
  /// process and its CMD's pid (the losers have exited 0 by then).
  auto run_period = [&](wall::time_point due, const std::string& script) {
    std::vector<std::unique_ptr<process>> all;
    for (const auto offset : starts) all.push_back(m.start_at(due + offset, once_per("job", script)));
    std::unique_ptr<process> winner;
    pid_t command = -1;
    for (auto& proc : all) {
      try {
        command = std::stoi(proc->read_line(5s));
        winner = std::move(proc);
      } catch (const std::exception&) {
        // A loser: it wrote nothing and exited.
        const auto done = proc->wait();
        INFO(done.err);
        CHECK(done.status == 0);
      }
    }
    REQUIRE(winner);
    return std::make_pair(std::move(winner), command);
  };

  SECTION("the command killed") {
    auto [winner, command] = run_period(first, record_and_hang);
    ::kill(command, SIGKILL);
    const auto done = winner->wait();
    CHECK(done.status == 128 + SIGKILL);  // released the run lock, as plain exec does
  }
  SECTION("redlock and the command killed, as in a machine crash") {
    auto [winner, command] = run_period(first, record_and_hang);
    winner->signal(SIGKILL);
    ::kill(command, SIGKILL);
    winner->wait();
    // Its run lock (--ttl 2s) lapses before the next period's winner gives up waiting.
  }
  // The next period runs exactly once.
  std::vector<std::unique_ptr<process>> next;
  for (const auto offset : starts) next.push_back(m.start_at(first + period + offset, once_per("job", record)));
  for (auto& proc : next) {
    const auto done = proc->wait();
    INFO(done.err);
    CHECK(done.status == 0);
  }
  std::map<std::string, int> runs;
  for (const auto& line : lines_of(ran)) ++runs[line];
  CHECK(runs.size() == 2);
  CHECK(runs[std::to_string(epoch_ms(first))] == 1);
  CHECK(runs[std::to_string(epoch_ms(first + period))] == 1);
  std::filesystem::remove(ran);
}

TEST_CASE("cli exec --once-per: outside every period's window, and usage errors",
          "[cli][once-per][usage]") {
  machines m;
  // An offset that puts the due time half an hour from now.
  const auto half_hour_ahead = (epoch_ms(wall::now()) + 30 * 60'000) % 3'600'000;
  const auto missed = run_cli(
      {"--nodes",
       fmt::format("127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}", m.nodes.node(0).port(),
                   m.nodes.node(1).port(), m.nodes.node(2).port()),
       "--no-aof-warning", "exec", "--once-per", "1h", "--offset",
       std::to_string(half_hour_ahead) + "ms", "job", "--", "true"});
  CHECK(missed.status == 2);
  CHECK(missed.err.find("no due time of --once-per 1h") != std::string::npos);

  struct bad_call {
    std::vector<std::string> options;
    std::string line;
  };
  const std::string three = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
  const std::vector<bad_call> calls{
      {{"--once-per", "0"}, "--once-per 0: the period must be positive"},
      {{"--once-per", "-1h"}, "--once-per"},
      {{"--once-per", "1h", "--offset", "1h"}, "--offset 1h must be less than --once-per 1h"},
      {{"--once-per", "1h", "--offset", "2h"}, "--offset 2h must be less than --once-per 1h"},
      {{"--once-per", "1h", "--max-skew", "30m"},
       "--max-skew 30m must be less than half of --once-per 1h"},
      {{"--once-per", "1m"}, "--max-skew 1m must be less than half of --once-per 1m"},
      {{"--offset", "1m"}, "--offset requires --once-per"},
      {{"--max-skew", "1m"}, "--max-skew requires --once-per"},
  };
  for (const auto& call : calls) {
    std::vector<std::string> arguments{"--nodes", three, "exec"};
    arguments.insert(arguments.end(), call.options.begin(), call.options.end());
    for (const char* rest : {"job", "--", "true"}) arguments.push_back(rest);
    const auto done = run_cli(arguments);
    INFO(fmt::format("{}", fmt::join(call.options, " ")) << "\n" << done.err);
    CHECK(done.status == 2);
    CHECK(done.err.find(call.line) != std::string::npos);
    CHECK(line_count(done.err) == 1);
  }
}

}  // namespace redlock::clitest
