// The redlock tool against real redis-servers: what each command does, its
// exit statuses, signals, and every usage error.

#include "cli_process.hpp"

#include "support/admin_client.hpp"
#include "support/redis_server.hpp"
#include "support/tls_fixtures.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace redlock::clitest {
namespace {

using test::admin_client;
using test::cluster;

/// A cluster and the arguments that point the tool at it.
struct fixture {
  explicit fixture(std::size_t n = 3) : nodes(n) {
    for (std::size_t i = 0; i < n; ++i) ports.push_back(nodes.node(i).port());
  }
  std::vector<std::string> with_nodes(std::vector<std::string> arguments) const {
    auto all = nodes_args(ports);
    all.insert(all.end(), arguments.begin(), arguments.end());
    return all;
  }
  outcome run(std::vector<std::string> arguments, std::chrono::milliseconds limit = 30s) const {
    return run_cli(with_nodes(std::move(arguments)), {}, limit);
  }
  process start(std::vector<std::string> arguments, bool stderr_to_lines = false) const {
    auto all = with_nodes(std::move(arguments));
    all.insert(all.begin(), cli_path());
    return process(std::move(all), {}, stderr_to_lines);
  }
  /// SET commands node 0 has run so far.
  long long sets_on_first_node() const {
    const auto info = admin_client(ports[0]).command({"INFO", "commandstats"}).text;
    std::smatch m;
    if (!std::regex_search(info, m, std::regex("cmdstat_set:calls=([0-9]+)"))) return 0;
    return std::stoll(m[1].str());
  }
  /// Returns once node 0 has run more than `count` SETs: a waiter's attempt
  /// has reached it. A server counter has no push notification, so it is
  /// polled (bounded).
  void await_sets_beyond(long long count) const {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sets_on_first_node() <= count) {
      if (std::chrono::steady_clock::now() > deadline) FAIL("no attempt reached the node");
      std::this_thread::sleep_for(5ms);
    }
  }
  /// The value of `key` on every node (nullopt where absent).
  std::vector<std::optional<std::string>> values(const std::string& key) const {
    std::vector<std::optional<std::string>> found;
    for (const auto port : ports) found.push_back(admin_client(port).get(key));
    return found;
  }
  /// An operation completes at a quorum: the nodes beyond it may still be
  /// on their way there, so these wait (bounded) for every node.
  bool held_everywhere_by(const std::string& key, const std::string& token) const {
    return eventually([&] {
      for (const auto& value : values(key)) {
        if (value != token) return false;
      }
      return true;
    });
  }
  bool free_everywhere(const std::string& key) const {
    return eventually([&] {
      for (const auto& value : values(key)) {
        if (value) return false;
      }
      return true;
    });
  }
  /// Redis pushes no event for a key's change: polled, for at most 2 s.
  template <class Condition>
  static bool eventually(Condition condition) {
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (!condition()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  cluster nodes;
  std::vector<std::uint16_t> ports;
};

/// Where tests write files: REDLOCK_TEST_TMPDIR, else /tmp.
std::filesystem::path scratch_dir() {
  const char* env = std::getenv("REDLOCK_TEST_TMPDIR");
  return env != nullptr && *env != '\0' ? env : "/tmp";
}

/// Holds `resource` through the tool itself; returns the token.
std::string hold(const fixture& f, const std::string& resource, const std::string& ttl = "30s") {
  const auto held = f.run({"acquire", "--ttl", ttl, resource});
  REQUIRE(held.status == 0);
  auto token = held.out;
  while (!token.empty() && token.back() == '\n') token.pop_back();
  // It exits once a quorum has it: the tests count on every node.
  REQUIRE(f.held_everywhere_by(resource, token));
  return token;
}

}  // namespace

TEST_CASE("cli exec runs the command holding the lock and returns its exit status", "[cli][exec]") {
  fixture f;
  auto cmd = f.start({"exec", "job", "--", "sh", "-c",
                      "echo \"$REDLOCK_RESOURCE $REDLOCK_TOKEN $REDLOCK_VALIDITY_MS\" >&9; "
                      "read go <&8; exit 7"});
  const auto line = cmd.read_line();
  std::smatch m;
  REQUIRE(std::regex_match(line, m, std::regex("job ([0-9a-f]{32}) ([0-9]+)")));
  const auto token = m[1].str();
  const auto validity = std::stoll(m[2].str());
  CHECK(validity > 25000);
  CHECK(validity <= 30000);
  // While it runs, every node holds the key with the token CMD was given.
  CHECK(f.held_everywhere_by("job", token));
  cmd.feed("go");
  const auto done = cmd.wait();
  CHECK(done.status == 7);
  INFO(done.err);
  // Released when it exited.
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec reports a command killed by a signal as 128 + the signal", "[cli][exec]") {
  fixture f;
  const auto done = f.run({"exec", "job", "--", "sh", "-c", "kill -TERM $$"});
  CHECK(done.status == 128 + SIGTERM);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec reports a command that cannot be found as 127, holding nothing after",
          "[cli][exec]") {
  fixture f;
  const auto done = f.run({"exec", "job", "--", "/nonexistent/command"});
  CHECK(done.status == 127);
  CHECK(done.err.find("cannot run '/nonexistent/command'") != std::string::npos);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec conflict: exit 1 or --conflict-exit-code, and the command does not run",
          "[cli][exec]") {
  fixture f;
  const auto token = hold(f, "job");
  SECTION("-n makes one attempt") {
    const auto done = f.run({"exec", "-n", "job", "--", "sh", "-c", "echo ran >&9"});
    CHECK(done.status == 1);
    CHECK(done.err.find("held elsewhere") != std::string::npos);
  }
  SECTION("--conflict-exit-code") {
    const auto done =
        f.run({"exec", "-n", "--conflict-exit-code", "75", "job", "--", "echo", "ran"});
    CHECK(done.status == 75);
    CHECK(done.out.empty());
  }
  SECTION("--wait bounds the wait") {
    const auto done = f.run({"exec", "--wait", "400ms", "job", "--", "echo", "ran"});
    CHECK(done.status == 1);
    CHECK(done.out.empty());
    CHECK(done.took >= 400ms);
  }
  CHECK(f.held_everywhere_by("job", token));
}

TEST_CASE("cli exec waits for the holder's release by default", "[cli][exec]") {
  fixture f;
  auto holder = f.start({"exec", "job", "--", "sh", "-c", "echo in >&9; read go <&8"});
  REQUIRE(holder.read_line() == "in");
  // Counted once the holder's own SET has reached node 0 (it runs at a quorum).
  REQUIRE(fixture::eventually([&] { return admin_client(f.ports[0]).exists("job"); }));
  const auto sets = f.sets_on_first_node();
  auto waiter = f.start({"exec", "job", "--", "sh", "-c", "echo second >&9"});
  f.await_sets_beyond(sets);  // its first attempt was refused: it waits
  holder.feed("go");
  CHECK(holder.wait().status == 0);
  CHECK(waiter.read_line() == "second");
  CHECK(waiter.wait().status == 0);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec lost lock: a paused majority gets the command terminated and exit 3",
          "[cli][exec][lost]") {
  fixture f;
  const std::string lost_code = GENERATE("default", "42");
  std::vector<std::string> arguments{"exec", "--ttl", "1s", "--grace", "200ms"};
  if (lost_code != "default") arguments.insert(arguments.end(), {"--lost-exit-code", lost_code});
  arguments.insert(arguments.end(), {"job", "--", "sh", "-c", "echo $$ >&9; exec sleep 60"});
  auto cmd = f.start(arguments);
  CHECK(std::stoi(cmd.read_line()) > 0);
  f.nodes.node(0).pause();
  f.nodes.node(1).pause();
  const auto done = cmd.wait(10s);
  f.nodes.node(0).resume();
  f.nodes.node(1).resume();
  INFO(done.err);
  CHECK(done.status == (lost_code == "default" ? 3 : 42));
  CHECK(done.took < 5s);
  CHECK(done.err.find("lock lost on job") != std::string::npos);
}

TEST_CASE("cli exec lost lock: a command ignoring SIGTERM gets SIGKILL after --grace",
          "[cli][exec][lost]") {
  fixture f;
  auto cmd = f.start({"exec", "--ttl", "1s", "--grace", "300ms", "job", "--", "sh", "-c",
                      "trap '' TERM; echo $$ >&9; exec sleep 60"});
  CHECK(std::stoi(cmd.read_line()) > 0);
  f.nodes.node(1).pause();
  f.nodes.node(2).pause();
  const auto done = cmd.wait(10s);
  f.nodes.node(1).resume();
  f.nodes.node(2).resume();
  INFO(done.err);
  CHECK(done.status == 3);
  // SIGKILL after the grace, or sooner when the validity leaves less.
  CHECK(std::regex_search(done.err, std::regex("SIGKILL after (300|29[0-9])ms")));
}

// Issue 20 §1: SIGKILL came --grace after a signal fired a tenth of the TTL
// before the validity ended: a CMD ignoring SIGTERM ran on for seconds
// while another exec already held the lock and ran its own.
TEST_CASE("cli exec: a command ignoring SIGTERM is dead before its lock's validity ends",
          "[cli][exec][lost]") {
  fixture f;
  const auto first_log = scratch_dir() / fmt::format("exec-bound-{}-first", ::getpid());
  const auto second_log = scratch_dir() / fmt::format("exec-bound-{}-second", ::getpid());
  std::filesystem::remove(first_log);
  std::filesystem::remove(second_log);
  auto first = f.start({"-v", "exec", "--ttl", "3s", "--grace", "1s", "job", "--", "sh", "-c",
                        "trap '' TERM; echo started $$ >&9; "
                        "while :; do date +%s%N >> '" +
                            first_log.string() + "'; sleep 0.01; done"},
                       true);
  // "acquired job (valid for N ms)": the validity ends by N ms after this read.
  // A CMD ignoring SIGTERM must not outlive a failed test either.
  struct group_killer {
    pid_t pgid = 0;
    ~group_killer() {
      if (pgid > 0) ::kill(-pgid, SIGKILL);
    }
  } group;
  // (redlock says it after CMD has started: the two lines come in any order.)
  std::optional<std::chrono::system_clock::time_point> validity_end;
  bool started = false;
  while (!started || !validity_end) {
    const auto line = first.read_line();
    std::smatch m;
    if (std::regex_search(line, m, std::regex("acquired job \\(valid for ([0-9]+) ms\\)"))) {
      validity_end = std::chrono::system_clock::now() + std::chrono::milliseconds(std::stoll(m[1]));
    }
    if (line.rfind("started ", 0) == 0) {
      started = true;
      group.pgid = std::stoi(line.substr(8));
    }
  }
  REQUIRE(validity_end.has_value());
  // No extension can reach a quorum from now on.
  f.nodes.node(1).pause();
  f.nodes.node(2).pause();
  auto second = f.start({"exec", "--wait", "20s", "job", "--", "sh", "-c",
                         "date +%s%N > '" + second_log.string() + "'"});
  const auto lost = first.wait(10s);
  f.nodes.node(1).resume();
  f.nodes.node(2).resume();
  INFO(lost.err);
  CHECK(lost.status == 3);
  const auto won = second.wait(20s);
  INFO(won.err);
  CHECK(won.status == 0);

  std::ifstream first_lines(first_log);
  std::string line, last;
  while (std::getline(first_lines, line)) {
    if (!line.empty()) last = line;
  }
  std::ifstream second_lines(second_log);
  std::string second_start;
  std::getline(second_lines, second_start);
  REQUIRE_FALSE(last.empty());
  REQUIRE_FALSE(second_start.empty());
  const auto last_write = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(std::stoll(last))));
  INFO("last write "
       << std::chrono::duration_cast<std::chrono::milliseconds>(*validity_end - last_write).count()
       << " ms before the validity's end");
  CHECK(last_write < *validity_end);
  CHECK(std::stoll(second_start) > std::stoll(last));
  std::filesystem::remove(first_log);
  std::filesystem::remove(second_log);
}

// Review of issue 20 §1: CMD ended after the signal's time but before its
// handler ran, leaving a process in its group: redlock waited for a SIGKILL
// timer nobody had set, for ever, while the leftover ran without the lock.
TEST_CASE("cli exec: a command ending as its lock is lost leaves nothing running",
          "[cli][exec][lost]") {
  fixture f;
  auto cmd = f.start(
      {"exec", "--ttl", "1s", "job", "--", "sh", "-c", "sleep 1000 & echo $! >&9; sleep 0.3"});
  const auto leftover = std::stoi(cmd.read_line());
  // redlock is paused past its lock's validity (the key has gone from every
  // node); CMD ends meanwhile, its leftover does not.
  cmd.signal(SIGSTOP);
  const bool expired = fixture::eventually([&] {
    for (const auto& value : f.values("job")) {
      if (value) return false;
    }
    return true;
  });
  cmd.signal(SIGCONT);
  REQUIRE(expired);
  const auto done = cmd.wait(10s);
  INFO(done.err);
  CHECK(done.status == 3);
  CHECK_FALSE(running(leftover));
  if (alive(leftover)) ::kill(leftover, SIGKILL);
}

TEST_CASE("cli exec --max-hold ends the command as a lost lock", "[cli][exec]") {
  fixture f;
  auto cmd = f.start({"exec", "--ttl", "1s", "--max-hold", "1500ms", "--grace", "300ms", "job",
                      "--", "sh", "-c", "echo $$ >&9; exec sleep 60"});
  CHECK(std::stoi(cmd.read_line()) > 0);
  const auto done = cmd.wait(10s);
  INFO(done.err);
  CHECK(done.status == 3);
  CHECK(done.err.find("--max-hold reached on job") != std::string::npos);
  CHECK(done.took < 4s);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec forwards signals and releases only after the command has exited",
          "[cli][exec][signals]") {
  fixture f;
  const int forwarded = GENERATE(SIGINT, SIGTERM, SIGHUP);
  auto cmd = f.start({"exec", "job", "--", "sh", "-c",
                      "trap 'echo \"got $REDLOCK_TOKEN\" >&9; read go <&8; exit 5' INT TERM HUP; "
                      "echo ready >&9; while :; do sleep 0.05; done"});
  REQUIRE(cmd.read_line() == "ready");
  cmd.signal(forwarded);
  const auto got = cmd.read_line();
  REQUIRE(got.starts_with("got "));
  // The command is handling the signal: the lock is still held.
  CHECK(f.held_everywhere_by("job", got.substr(4)));
  cmd.feed("go");
  const auto done = cmd.wait();
  CHECK(done.status == 5);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec interrupted while waiting exits 128 + signal and leaves no key of its own",
          "[cli][exec][signals]") {
  fixture f;
  const auto token = hold(f, "job");
  const auto sets = f.sets_on_first_node();
  const std::string command = GENERATE("exec", "acquire");
  std::vector<std::string> arguments{"-v", command, "job"};
  if (command == "exec") arguments.insert(arguments.end(), {"--", "sh", "-c", "echo ran >&9"});
  auto waiter = f.start(arguments, true);
  f.await_sets_beyond(sets);  // refused once: it is waiting
  waiter.signal(SIGTERM);
  CHECK(waiter.read_line() == "redlock: acquiring job");
  CHECK(waiter.read_line() == "redlock: interrupted by signal 15 before acquiring job");
  const auto done = waiter.wait();
  CHECK(done.status == 128 + SIGTERM);
  CHECK(done.out.empty());
  CHECK(f.held_everywhere_by("job", token));
}

TEST_CASE("cli acquire, extend and release round trip from a shell", "[cli][token]") {
  fixture f;
  const auto nodes = nodes_args(f.ports)[1];
  const std::string script = "set -e; export REDLOCK_NODES=" + nodes + "; r=" + cli_path() +
                             "\n"
                             "t=$($r acquire --ttl 10s job)\n"
                             "echo \"token $t\" >&9\n"
                             "read go <&8\n"
                             "$r extend --ttl 60s job \"$t\"\n"
                             "echo extended >&9\n"
                             "read go <&8\n"
                             "$r release job \"$t\"\n"
                             "echo released >&9\n";
  process shell({"/bin/sh", "-c", script});
  const auto token_line = shell.read_line();
  REQUIRE(std::regex_match(token_line, std::regex("token [0-9a-f]{32}")));
  const auto token = token_line.substr(6);
  CHECK(f.held_everywhere_by("job", token));
  for (const auto port : f.ports) CHECK(admin_client(port).pttl("job") <= 10000);
  shell.feed("go");
  REQUIRE(shell.read_line() == "extended");
  for (const auto port : f.ports) {
    CHECK(fixture::eventually([&] { return admin_client(port).pttl("job") > 50000; }));
  }
  shell.feed("go");
  REQUIRE(shell.read_line() == "released");
  CHECK(shell.wait().status == 0);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli --lock-delay: the keys live TTL + delay, and a release frees them at once",
          "[cli][token][lock-delay]") {
  fixture f;
  const auto held = f.run({"acquire", "--ttl", "2s", "--lock-delay", "5s", "job"});
  REQUIRE(held.status == 0);
  auto token = held.out;
  while (!token.empty() && token.back() == '\n') token.pop_back();
  REQUIRE(f.held_everywhere_by("job", token));
  for (const auto port : f.ports) {
    const auto pttl = admin_client(port).pttl("job");
    CHECK(pttl > 5000);
    CHECK(pttl <= 7000);
  }
  // extend adds the --lock-delay it is given: 15 s, minus what has passed
  // since it started (a fixed margin failed on a busy machine, where the
  // last nodes were read more than a second later). Without the delay the
  // keys would hold at most 10 s.
  const auto extend_started = std::chrono::steady_clock::now();
  REQUIRE(f.run({"extend", "--ttl", "10s", "--lock-delay", "5s", "job", token}).status == 0);
  for (const auto port : f.ports) {
    CHECK(fixture::eventually([&] {
      const auto pttl = admin_client(port).pttl("job");
      const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - extend_started);
      return pttl > 10000 && pttl >= 15000 - since.count() - 5;
    }));
  }
  REQUIRE(f.run({"release", "job", token}).status == 0);
  CHECK(f.free_everywhere("job"));
  // exec with a delay releases at once too.
  CHECK(f.run({"exec", "--lock-delay", "1h", "job", "--", "true"}).status == 0);
  CHECK(f.free_everywhere("job"));
  CHECK(f.run({"acquire", "-n", "job"}).status == 0);
}

TEST_CASE("cli acquire, extend and release exit statuses", "[cli][token]") {
  fixture f;
  const auto token = hold(f, "job");
  CHECK(f.run({"acquire", "-n", "job"}).status == 1);
  const auto refused = f.run({"acquire", "--wait", "300ms", "job"});
  CHECK(refused.status == 1);
  CHECK(refused.out.empty());
  // Another holder's resource: not ours (1).
  CHECK(f.run({"extend", "job", "0123456789abcdef0123456789abcdef"}).status == 1);
  CHECK(f.run({"release", "job", "0123456789abcdef0123456789abcdef"}).status == 1);
  CHECK(f.held_everywhere_by("job", token));
  CHECK(f.run({"release", "job", token}).status == 0);
  CHECK(f.free_everywhere("job"));
  // Gone: lost or expired (3).
  CHECK(f.run({"release", "job", token}).status == 3);
  CHECK(f.run({"extend", "job", token}).status == 3);
}

TEST_CASE("cli commands exit 4 when too few nodes answer", "[cli][token]") {
  fixture f;
  f.nodes.node(0).stop();
  f.nodes.node(1).stop();
  const auto acquired = f.run({"acquire", "-n", "--ttl", "2s", "job"});
  CHECK(acquired.status == 4);
  CHECK(acquired.out.empty());
  CHECK(f.run({"exec", "-n", "--ttl", "2s", "job", "--", "true"}).status == 4);
  CHECK(f.run({"release", "job", "0123456789abcdef0123456789abcdef"}).status == 4);
  CHECK(f.run({"status", "job"}).status == 4);
}

TEST_CASE("cli status shows each node's holder and TTL, and the quorum's verdict",
          "[cli][status]") {
  fixture f;
  SECTION("free") {
    const auto shown = f.run({"status", "job"});
    CHECK(shown.status == 0);
    CHECK(shown.out.find("job: not held by any holder on a quorum (3 of 3 answered, 2 needed)") !=
          std::string::npos);
    const auto json = f.run({"status", "--json", "job"});
    CHECK(json.status == 0);
    CHECK(line_count(json.out) == 1);
    CHECK(json.out.find(R"("resource":"job","key":"job","quorum":2,"answered":3,"held":false,)"
                        R"("holder":null,"nodes":[{"node":"127.0.0.1:)") != std::string::npos);
    CHECK(json.out.find(R"("state":"free","holder":null,"ttl_ms":null)") != std::string::npos);
  }
  SECTION("held, one node paused") {
    const auto token = hold(f, "job");
    f.nodes.node(2).pause();
    const auto shown = f.run({"--timeout", "200ms", "status", "job"});
    const auto json = f.run({"--timeout", "200ms", "status", "--json", "job"});
    f.nodes.node(2).resume();
    CHECK(shown.status == 0);
    CHECK(shown.out.find("job: held by " + token + " on a quorum (2 of 3 answered, 2 needed)") !=
          std::string::npos);
    CHECK(shown.out.find("no-answer") != std::string::npos);
    CHECK(std::regex_search(shown.out, std::regex("held +" + token + " +[0-9]+ms")));
    CHECK(json.status == 0);
    CHECK(json.out.find(R"("held":true,"holder":")" + token + "\"") != std::string::npos);
    CHECK(std::regex_search(
        json.out, std::regex(R"("state":"held","holder":")" + token + R"(","ttl_ms":[0-9]+)")));
    CHECK(json.out.find(R"("answered":false,"error":)") != std::string::npos);
  }
  SECTION("a key without expiry, and a prefix") {
    admin_client(f.ports[0]).command({"SET", "app:job", "someone \"quoted\""});
    const auto json = f.run({"--prefix", "app:", "status", "--json", "job"});
    CHECK(json.out.find(R"("key":"app:job")") != std::string::npos);
    CHECK(json.out.find(R"("holder":"someone \"quoted\"","ttl_ms":null)") != std::string::npos);
    CHECK(json.out.find(R"("held":false)") != std::string::npos);
  }
}

TEST_CASE("cli exec: contending processes never overlap while a minority is paused and resumed",
          "[cli][exec][contention]") {
  fixture f(5);
  constexpr int workers = 4;
  constexpr int rounds = 15;
  const auto dir = scratch_dir() / ("contention-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // Each critical section logs its own start and end (wall clock, one
  // machine) to its worker's file.
  {
    std::ofstream section(dir / "section.sh");
    section << "echo \"start $(date +%s%N) $1\" >> \"$2\"\n"
               "sleep 0.02\n"
               "echo \"end $(date +%s%N) $1\" >> \"$2\"\n";
  }
  const auto nodes = nodes_args(f.ports)[1];
  std::vector<std::unique_ptr<process>> running;
  for (int w = 0; w < workers; ++w) {
    const auto log = (dir / ("worker" + std::to_string(w))).string();
    const std::string loop = "i=0; while [ $i -lt " + std::to_string(rounds) +
                             " ]; do i=$((i+1)); " + cli_path() + " --nodes " + nodes +
                             " exec --ttl 2s --wait 60s job -- sh " +
                             (dir / "section.sh").string() + " w" + std::to_string(w) + "r$i " +
                             log + " || exit $?; done";
    running.push_back(std::make_unique<process>(std::vector<std::string>{"/bin/sh", "-c", loop}));
  }
  // The fault schedule: a random minority (1 or 2 of 5) paused for a while,
  // then everyone resumed, until every worker is done.
  std::mt19937 random(7);
  const auto start = std::chrono::steady_clock::now();
  int pauses = 0;
  auto all_done = [&] {
    for (auto& p : running) {
      if (!p->ended_within(0ms)) return false;
    }
    return true;
  };
  while (!all_done() && std::chrono::steady_clock::now() - start < 90s) {
    std::vector<std::size_t> order{0, 1, 2, 3, 4};
    std::shuffle(order.begin(), order.end(), random);
    const std::size_t paused = 1 + random() % 2;
    for (std::size_t i = 0; i < paused; ++i) f.nodes.node(order[i]).pause();
    ++pauses;
    running.front()->ended_within(150ms);  // the pause's length, cut short by nothing else
    for (std::size_t i = 0; i < paused; ++i) f.nodes.node(order[i]).resume();
    running.front()->ended_within(100ms);
  }
  const auto took = std::chrono::steady_clock::now() - start;
  for (auto& p : running) {
    const auto done = p->wait(5s);
    INFO(done.err);
    CHECK(done.status == 0);
  }
  struct section {
    long long start = 0, end = 0;
    std::string name;
  };
  std::map<std::string, section> sections;
  for (int w = 0; w < workers; ++w) {
    std::ifstream log(dir / ("worker" + std::to_string(w)));
    std::string what, name;
    long long when = 0;
    while (log >> what >> when >> name) {
      (what == "start" ? sections[name].start : sections[name].end) = when;
      sections[name].name = name;
    }
  }
  std::vector<section> ordered;
  for (auto& [name, s] : sections) ordered.push_back(s);
  std::sort(ordered.begin(), ordered.end(),
            [](const section& a, const section& b) { return a.start < b.start; });
  CHECK(ordered.size() == workers * rounds);  // every section ran: steady progress
  int overlaps = 0;
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    if (ordered[i].start < ordered[i - 1].end) {
      ++overlaps;
      UNSCOPED_INFO(ordered[i - 1].name << " and " << ordered[i].name << " overlap");
    }
  }
  CHECK(overlaps == 0);
  CHECK(pauses >= 3);  // repeatedly
  CHECK(took < 60s);
  std::filesystem::remove_all(dir);
}

// Review findings: each failed before its fix.

TEST_CASE("cli exec after a loss kills what is left of the command's process group",
          "[cli][exec][lost]") {
  fixture f;
  auto cmd = f.start({"exec", "--ttl", "1s", "--grace", "500ms", "job", "--", "sh", "-c",
                      "sh -c 'trap \"\" TERM; echo $$ >&9; exec sleep 60' & wait"});
  const auto grandchild = std::stoi(cmd.read_line());
  f.nodes.node(0).pause();
  f.nodes.node(1).pause();
  const auto done = cmd.wait(10s);
  f.nodes.node(0).resume();
  f.nodes.node(1).resume();
  INFO(done.err);
  CHECK(done.status == 3);
  CHECK_FALSE(running(grandchild));
}

TEST_CASE("cli exec survives a closed or broken stderr while it holds the lock", "[cli][exec]") {
  fixture f;
  const std::string redirect = GENERATE("closed", "broken");
  const auto nodes = nodes_args(f.ports)[1];
  const std::string run =
      cli_path() + " --nodes " + nodes + " exec job -- sh -c 'echo ready >&9; read go <&8'";
  // A stopped node makes the client log a warning: a write to stderr.
  const std::string script =
      redirect == "closed" ? "exec 2>&-; " + run : "{ " + run + " 2>&1 >&3 3>&- | true; } 3>&1";
  process shell({"/bin/sh", "-c", script});
  REQUIRE(shell.read_line() == "ready");
  f.nodes.node(0).stop();
  shell.feed("go");
  const auto done = shell.wait();
  CHECK(done.status == 0);
  for (const auto port : {f.ports[1], f.ports[2]}) {
    CHECK(fixture::eventually([&] { return !admin_client(port).exists("job"); }));
  }
}

TEST_CASE("cli exec leaves a signal ignored at its start ignored", "[cli][exec][signals]") {
  fixture f;
  const auto nodes = nodes_args(f.ports)[1];
  process shell({"/bin/sh", "-c",
                 "trap '' HUP; exec " + cli_path() + " --nodes " + nodes +
                     " exec job -- sh -c 'echo ready >&9; read go <&8; kill -HUP $$; exit 4'"});
  REQUIRE(shell.read_line() == "ready");
  shell.signal(SIGHUP);  // to redlock (the shell exec'd it): ignored, as nohup wants
  shell.feed("go");      // CMD sends itself SIGHUP: ignored too, so it exits 4
  CHECK(shell.wait().status == 4);
}

TEST_CASE("cli exec works when started with SIGCHLD blocked", "[cli][exec][signals]") {
  fixture f;
  auto all = f.with_nodes({"exec", "job", "--", "true"});
  all.insert(all.begin(), cli_path());
  process blocked(all, {}, false, true);
  const auto done = blocked.wait(10s);
  CHECK(done.status == 0);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli exec dies of SIGINT when its command did, as a shell expects",
          "[cli][exec][signals]") {
  fixture f;
  // A shell that got ^C with its child stops its script only if the child
  // died of SIGINT too (an exit status of 130 is not the same).
  const auto done = f.run({"exec", "job", "--", "sh", "-c", "kill -INT $$"});
  CHECK(done.status == 128 + SIGINT);
  CHECK(done.signal == SIGINT);
  CHECK(f.free_everywhere("job"));
}

TEST_CASE("cli extend that finds the lock lost leaves no extended key behind", "[cli][token]") {
  fixture f;
  const std::string token = "0123456789abcdef0123456789abcdef";
  admin_client(f.ports[0]).command({"SET", "job", token, "PX", "5000"});
  admin_client(f.ports[1]).command({"SET", "job", "someone-else", "PX", "5000"});
  const auto done = f.run({"extend", "--ttl", "60s", "job", token});
  CHECK(done.status == 3);
  CHECK(admin_client(f.ports[0]).pttl("job") <= 5000);
}

TEST_CASE("cli status escapes what a foreign holder wrote", "[cli][status]") {
  fixture f;
  const std::string nasty = "a\xff\x1b[31mRED\nfake line \xe2\x82\xac";
  for (const auto port : {f.ports[0], f.ports[1]}) {
    admin_client(port).command({"SET", "job", nasty});
  }
  const auto json = f.run({"status", "--json", "job"});
  CHECK(line_count(json.out) == 1);
  CHECK(json.out.find(R"("holder":"a\ufffd\u001b[31mRED\u000afake line )"
                      "\xe2\x82\xac\"") != std::string::npos);
  const auto table = f.run({"status", "job"});
  CHECK(line_count(table.out) == 3 + 2);
  CHECK(table.out.find('\x1b') == std::string::npos);
  CHECK(table.out.find(R"(a\xff\x1b[31mRED\x0afake line \xe2\x82\xac)") != std::string::npos);
}

TEST_CASE("cli exec runs a script without a #! line with /bin/sh, and hides the password",
          "[cli][exec]") {
  test::server_options secured;
  secured.requirepass = "s3cret";
  cluster nodes(3, secured);
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < 3; ++i) ports.push_back(nodes.node(i).port());
  const auto script = scratch_dir() / ("noshebang-" + std::to_string(getpid()));
  {
    std::ofstream out(script);
    out << "echo \"password=${LOCK_PASSWORD:-unset} resource=$REDLOCK_RESOURCE\" >&9\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto arguments = nodes_args(ports);
  arguments.insert(arguments.begin(), cli_path());
  arguments.insert(arguments.end(),
                   {"--password-env", "LOCK_PASSWORD", "exec", "job", "--", script.string()});
  process cmd(arguments, {{"LOCK_PASSWORD", "s3cret"}});
  const auto done = cmd.wait();
  INFO(done.err);
  CHECK(done.status == 0);
  CHECK(cmd.read_line() == "password=unset resource=job");
  std::filesystem::remove(script);
}

TEST_CASE("cli reads the nodes from REDLOCK_NODES", "[cli]") {
  fixture f;
  const auto done = run_cli({"status", "job"}, {{"REDLOCK_NODES", nodes_args(f.ports)[1]}});
  CHECK(done.status == 0);
}

TEST_CASE("cli password from --password-env", "[cli]") {
  test::server_options secured;
  secured.requirepass = "s3cret";
  cluster nodes(3, secured);
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < 3; ++i) ports.push_back(nodes.node(i).port());
  auto arguments = nodes_args(ports);
  arguments.insert(arguments.end(), {"--password-env", "LOCK_PASSWORD", "acquire", "-n", "job"});
  CHECK(run_cli(arguments, {{"LOCK_PASSWORD", "s3cret"}}).status == 0);
  const auto refused = run_cli(arguments, {{"LOCK_PASSWORD", "wrong"}});
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
}

TEST_CASE("cli over TLS: --tls and rediss:// nodes, a CA we do not trust, --tls-insecure",
          "[cli][tls]") {
  const test::tls_cluster nodes(std::vector<test::tls_server_options>(3, test::good_tls_server()));
  const auto& certs = test::test_certs();
  const auto& p = nodes.tls_ports;
  const std::string listed =
      fmt::format("127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}", p[0], p[1], p[2]);
  const auto with = [&](std::string node_list, std::vector<std::string> tls,
                        std::vector<std::string> command) {
    std::vector<std::string> all{"--nodes", std::move(node_list)};
    all.insert(all.end(), tls.begin(), tls.end());
    all.insert(all.end(), command.begin(), command.end());
    return run_cli(all, {}, 30s);
  };
  const auto acquired =
      with(listed, {"--tls", "--tls-ca", certs.ca_file()}, {"acquire", "--ttl", "30s", "job"});
  INFO(acquired.err);
  REQUIRE(acquired.status == 0);
  const auto token = acquired.out.substr(0, acquired.out.find('\n'));
  // Held: by name (SNI, DNS name verified), through rediss:// endpoints.
  const std::string by_name = fmt::format(
      "rediss://localhost:{},rediss://localhost:{},rediss://"
      "localhost:{}",
      p[0], p[1], p[2]);
  CHECK(with(by_name, {"--tls-ca", certs.ca_file()}, {"acquire", "-n", "job"}).status == 1);
  CHECK(with(by_name, {"--tls-ca", certs.ca_file()}, {"release", "job", token}).status == 0);

  // A CA we do not trust: every node fails, naming the cause; a
  // configuration error (2), not an outage (4).
  const auto untrusted =
      with(listed, {"--tls", "--tls-ca", certs.other_ca_file()}, {"acquire", "-n", "job"});
  CHECK(untrusted.status == 2);
  CHECK(untrusted.out.empty());
  CHECK_THAT(untrusted.err, Catch::Contains("TLS certificate verification failed: self-signed "
                                            "certificate in certificate chain"));

  // --tls-insecure connects anyway, with a warning per node.
  const auto insecure = with(listed, {"--tls", "--tls-insecure"}, {"acquire", "-n", "job"});
  CHECK(insecure.status == 0);
  CHECK_THAT(insecure.err, Catch::Contains("TLS without certificate verification"));
}

TEST_CASE("cli with hosts that do not resolve and ports that refuse: exit 4, each node named",
          "[cli]") {
  // Two healthy nodes beside them: the tool exits once a quorum is out of
  // reach, and only the third failure decides that, so all three are named
  // before it does (with three bad nodes of three, the second decides).
  const test::refusing_port refused;
  const auto refusing = refused.port();
  const cluster healthy(2);
  const auto nodes = fmt::format(
      "no-such-host.invalid:6379,127.0.0.1:{},no-such-host-2.invalid:6379,"
      "127.0.0.1:{},127.0.0.1:{}",
      refusing, healthy.node(0).port(), healthy.node(1).port());
  const auto done = run_cli({"--nodes", nodes, "acquire", "-n", "job"}, {}, 30s);
  INFO(done.err);
  CHECK(done.status == 4);
  CHECK(done.out.empty());
  CHECK_THAT(done.err, Catch::Contains("no-such-host.invalid:6379"));
  CHECK_THAT(done.err, Catch::Contains("no-such-host-2.invalid:6379"));
  CHECK_THAT(done.err, Catch::Contains(fmt::format("127.0.0.1:{}: cannot connect: Connection "
                                                   "refused",
                                                   refusing)));
}

TEST_CASE("cli usage errors exit 2 with one line naming the argument", "[cli][usage]") {
  struct bad_call {
    std::vector<std::string> arguments;
    std::string named;
  };
  // Three nodes, so that no warning about N precedes the error.
  const std::string three = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
  const std::vector<bad_call> calls{
      {{"--nodes", three, "exec", "--bogus", "job", "--", "true"}, "--bogus"},
      {{"--nodes", three, "--ttl", "1s", "status", "job"}, "--ttl"},
      {{"--nodes", three, "exec", "--ttl", "2000", "job", "--", "true"}, "--ttl"},
      {{"--nodes", three, "exec", "--ttl", "5x", "job", "--", "true"}, "--ttl"},
      {{"--nodes", three, "exec", "--ttl", "0", "job", "--", "true"}, "--ttl"},
      {{"--nodes", three, "exec", "--ttl", "-1s", "job", "--", "true"}, "--ttl"},
      {{"--nodes", three, "acquire", "--ttl", "0", "job"}, "--ttl"},
      {{"--nodes", three, "exec", "--wait", "soon", "job", "--", "true"}, "--wait"},
      {{"--nodes", three, "exec", "--grace", "1", "job", "--", "true"}, "--grace"},
      {{"--nodes", three, "exec", "--ttl", "2s", "--grace", "5s", "job", "--", "true"},
       "--grace 5s does not fit in --ttl 2s"},
      {{"--nodes", three, "exec", "--ttl", "1s", "--grace", "-1s", "job", "--", "true"}, "--grace"},
      {{"--nodes", three, "exec", "-n", "--wait", "1s", "job", "--", "true"}, "--wait"},
      {{"--nodes", "localhost", "status", "job"}, "--nodes"},
      {{"--nodes", "127.0.0.1:99999", "status", "job"}, "--nodes"},
      {{"--nodes", "127.0.0.1:1,127.0.0.1:1", "status", "job"}, "--nodes"},
      {{"status", "job"}, "--nodes"},
      {{"--nodes", three, "exec", "job", "true"}, "--"},
      {{"--nodes", three, "exec", "job", "--"}, "--"},
      {{"--nodes", three, "acquire", "job", "--", "true"}, "--"},
      {{"--nodes", three, "exec", "", "--", "true"}, "RESOURCE"},
      {{"--nodes", three, "acquire", ""}, "RESOURCE"},
      {{"--nodes", three, "status", ""}, "RESOURCE"},
      {{"--nodes", three, "release", "job", ""}, "TOKEN"},
      {{"--nodes", three, "release", "job"}, "TOKEN"},
      {{"--nodes", three, "exec", "--", "true"}, "RESOURCE"},
      {{"--nodes", three, "--timeout", "30s", "acquire", "--ttl", "10s", "job"}, "--timeout"},
      {{"--nodes", three, "--drift-factor", "1.5", "status", "job"}, "--drift-factor"},
      {{"--nodes", three, "--password-env", "REDLOCK_TEST_UNSET", "status", "job"},
       "--password-env"},
      {{"--nodes", three, "exec", "--lost-exit-code", "300", "job", "--", "true"},
       "--lost-exit-code"},
      {{"--nodes", three, "exec", "--max-hold", "-5s", "job", "--", "true"}, "--max-hold"},
      {{"--nodes", three, "-q", "-v", "status", "job"}, "--verbose"},
      {{"--nodes", three}, "a command is required"},
      {{"--nodes", three, "status", "job", "extra"}, "extra"},
      {{"--nodes", three, "lock", "job"}, "unknown command 'lock'"},
      {{"--nodes", three, "lock"}, "unknown command 'lock'"},
      {{"--nodes", three, "--nodes", three, "status", "job"}, "--nodes"},
      {{"--nodes", "rediss://localhost", "status", "job"}, "--nodes"},
      {{"--nodes", three, "acquire", "--ttl", "10000h", "job"}, "--ttl"},
      {{"--nodes", three, "acquire", "--lock-delay", "-1s", "job"}, "--lock-delay"},
      {{"--nodes", three, "acquire", "--lock-delay", "5", "job"}, "--lock-delay"},
      {{"--nodes", three, "exec", "--lock-delay", "10000h", "job", "--", "true"},
       "--lock-delay: '10000h' is too long"},
      {{"--nodes", three, "--connect-timeout", "10000h", "status", "job"}, "--connect-timeout"},
      {{"--nodes", three, "--connect-timeout", "0", "status", "job"}, "--connect-timeout"},
      {{"--nodes", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3x", "status", "job"}, "127.0.0.1:3x"},
      {{"--nodes", three, "--tls-cert", "client.crt", "status", "job"}, "--tls-key"},
      {{"--nodes", three, "acquire", "--fence", "--ttl", "11s", "job"}, "--max-fenced-ttl"},
      {{"--nodes", three, "--max-fenced-ttl", "1s", "exec", "--fence", "--ttl", "2s", "job", "--",
        "true"},
       "--max-fenced-ttl"},
      {{"--nodes", three, "--tls", "--tls-ca", "/nonexistent/ca.crt", "status", "job"},
       "--tls: invalid configuration: node 127.0.0.1:1: cannot use the TLS CA file "
       "'/nonexistent/ca.crt'"},
  };
  for (const auto& call : calls) {
    std::string shown;
    for (const auto& a : call.arguments) shown += " '" + a + "'";
    INFO("redlock" << shown);
    const auto done = run_cli(call.arguments, {}, 10s);
    INFO(done.err);
    CHECK(done.status == 2);
    CHECK(line_count(done.err) == 1);
    CHECK(done.err.starts_with("redlock: "));
    CHECK(done.err.find(call.named) != std::string::npos);
    CHECK(done.out.empty());
  }
}

TEST_CASE("cli --fence: exec puts a growing fence in REDLOCK_FENCE, acquire prints it",
          "[cli][fence]") {
  fixture f;
  // Fresh nodes sit out fenced acquires for --max-fenced-ttl (and a bit)
  // before they are seeded: the first acquire waits that out.
  // Long enough that the acquired lock is still held when it is released
  // on a busy machine.
  const std::vector<std::string> fenced{"--max-fenced-ttl", "3s"};
  auto run_fenced = [&](std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), fenced.begin(), fenced.end());
    return f.run(std::move(arguments));
  };
  std::vector<long long> fences;
  for (int run = 0; run < 2; ++run) {
    const auto done =
        run_fenced({"exec", "--fence", "job", "--", "sh", "-c", "echo \"$REDLOCK_FENCE\""});
    INFO(done.err);
    REQUIRE(done.status == 0);
    std::smatch m;
    REQUIRE(std::regex_match(done.out, m, std::regex("([0-9]+)\n")));
    fences.push_back(std::stoll(m[1].str()));
  }
  CHECK(fences[0] > 0);
  CHECK(fences[1] > fences[0]);
  // Without --fence, no fence.
  const auto plain = f.run({"exec", "job", "--", "sh", "-c", "echo \"${REDLOCK_FENCE-unset}\""});
  CHECK(plain.out == "unset\n");

  const auto acquired = run_fenced({"acquire", "--fence", "job"});
  INFO(acquired.err);
  REQUIRE(acquired.status == 0);
  std::smatch m;
  REQUIRE(std::regex_match(acquired.out, m, std::regex("([0-9a-f]{32})\n([0-9]+)\n")));
  CHECK(std::stoll(m[2].str()) > fences[1]);
  // The TTL defaulted to --max-fenced-ttl.
  for (const auto port : f.ports) CHECK(admin_client(port).pttl("job") <= 3000);
  CHECK(run_fenced({"release", "job", m[1].str()}).status == 0);
}

TEST_CASE("cli --help on every command and --version", "[cli][usage]") {
  for (const std::string command : {"", "exec", "acquire", "extend", "release", "status"}) {
    std::vector<std::string> arguments;
    if (!command.empty()) arguments.push_back(command);
    arguments.push_back("--help");
    const auto done = run_cli(arguments, {}, 10s);
    INFO(command);
    CHECK(done.status == 0);
    CHECK(done.out.find("--help") != std::string::npos);
    if (!command.empty()) {
      CHECK(done.out.find("redlock [GLOBAL OPTIONS] " + command) != std::string::npos);
    }
  }
  const auto version = run_cli({"--version"}, {}, 10s);
  CHECK(version.status == 0);
  CHECK(std::regex_match(version.out, std::regex("redlock [0-9]+\\.[0-9]+\\.[0-9]+\n")));
}

}  // namespace redlock::clitest
