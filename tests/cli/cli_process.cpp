#include "cli_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace redlock::clitest {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::filesystem::path fresh_dir() {
  std::string base = "/tmp";
  if (const char* env = std::getenv("REDLOCK_TEST_TMPDIR"); env != nullptr && *env != '\0') {
    base = env;
  }
  std::string pattern = base + "/cli.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) fail("mkdtemp");
  return pattern;
}

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string cli_path() { return REDLOCK_CLI_PATH; }

process::process(std::vector<std::string> argv,
                 std::vector<std::pair<std::string, std::string>> env, bool stderr_to_lines,
                 bool block_sigchld, bool stdout_to_lines)
    : dir_(fresh_dir()) {
  int lines[2];
  int feed[2];
  if (pipe2(lines, O_CLOEXEC) != 0 || pipe2(feed, O_CLOEXEC) != 0) fail("pipe2");
  // Above 9: a pipe end numbered 8 or 9 would be overwritten by the other's
  // dup2 in the child.
  for (int* fd : {&lines[0], &lines[1], &feed[0], &feed[1]}) {
    const int high = fcntl(*fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0) fail("fcntl");
    close(*fd);
    *fd = high;
  }
  lines_fd_ = lines[0];
  feed_fd_ = feed[1];
  const auto out = (dir_ / "stdout").string();
  const auto err = (dir_ / "stderr").string();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (stdout_to_lines) {
    posix_spawn_file_actions_adddup2(&actions, lines[1], STDOUT_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
  }
  if (stderr_to_lines) {
    posix_spawn_file_actions_adddup2(&actions, lines[1], STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
  }
  posix_spawn_file_actions_adddup2(&actions, feed[0], 8);
  posix_spawn_file_actions_adddup2(&actions, lines[1], 9);

  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view line(*entry);
    if (line.starts_with("REDLOCK_NODES=") || line.starts_with("REDLOCK_NO_AOF_WARNING=")) {
      continue;
    }
    env_strings.emplace_back(line);
  }
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);

  started_ = std::chrono::steady_clock::now();
  // A parent that blocks SIGCHLD passes the mask on through exec.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (block_sigchld) {
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGCHLD);
    posix_spawnattr_setsigmask(&attributes, &blocked);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  }
  const int failed = posix_spawn(&pid_, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(lines[1]);
  close(feed[0]);
  if (failed != 0) {
    errno = failed;
    fail("posix_spawn " + argv.front());
  }
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd_ < 0) fail("pidfd_open");
}

process::~process() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {pidfd_, lines_fd_, feed_fd_}) {
    if (fd >= 0) close(fd);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string process::err() const { return slurp(dir_ / "stderr"); }

void process::signal(int signal_number) const {
  if (!reaped_) kill(pid_, signal_number);
}

std::string process::read_line(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (const auto end = pending_.find('\n'); end != std::string::npos) {
      auto line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw std::runtime_error("no line from the command in time");
    pollfd ready{lines_fd_, POLLIN, 0};
    if (poll(&ready, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) fail("poll");
    if (ready.revents == 0) continue;
    char buffer[512];
    const auto n = read(lines_fd_, buffer, sizeof buffer);
    if (n == 0) throw std::runtime_error("the command closed fd 9 without a line");
    if (n < 0 && errno != EINTR) fail("read");
    if (n > 0) pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

void process::feed(std::string_view line) {
  const std::string text = std::string(line) + "\n";
  if (write(feed_fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    fail("write to fd 8");
  }
}

bool process::ended_within(std::chrono::milliseconds limit) const {
  if (reaped_) return true;
  pollfd ended{pidfd_, POLLIN, 0};
  int ready = 0;
  do {
    ready = poll(&ended, 1, static_cast<int>(limit.count()));
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

outcome process::wait(std::chrono::milliseconds limit) {
  pollfd ended{pidfd_, POLLIN, 0};
  int ready = 0;
  do {
    ready = poll(&ended, 1, static_cast<int>(limit.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
    throw std::runtime_error("the process did not end in time; killed. stderr: " +
                             slurp(dir_ / "stderr"));
  }
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) fail("waitpid");
  reaped_ = true;
  outcome result;
  result.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started_);
  result.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  result.out = slurp(dir_ / "stdout");
  result.err = slurp(dir_ / "stderr");
  return result;
}

outcome run_cli(std::vector<std::string> arguments,
                std::vector<std::pair<std::string, std::string>> env,
                std::chrono::milliseconds limit) {
  arguments.insert(arguments.begin(), cli_path());
  process p(std::move(arguments), std::move(env));
  return p.wait(limit);
}

std::vector<std::string> nodes_args(const std::vector<std::uint16_t>& ports) {
  std::string list;
  for (const auto port : ports) {
    if (!list.empty()) list += ',';
    list += "127.0.0.1:" + std::to_string(port);
  }
  // The test servers run without AOF on purpose: the warning would be noise.
  return {"--nodes", list, "--no-aof-warning"};
}

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

bool running(pid_t pid) {
  if (!alive(pid)) return false;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  constexpr unsigned long long sigkill_bit = 1ull << (SIGKILL - 1);
  for (std::string line; std::getline(status, line);) {
    // Pending signals as hex masks: the process's own, and its group's.
    if (line.starts_with("SigPnd:") || line.starts_with("ShdPnd:")) {
      if (std::stoull(line.substr(7), nullptr, 16) & sigkill_bit) return false;
    }
  }
  return alive(pid);
}

std::size_t line_count(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace redlock::clitest
