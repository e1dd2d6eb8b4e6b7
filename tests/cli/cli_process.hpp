// Runs the redlock tool (or any program) for the CLI tests: stdout and
// stderr captured, and two pipes to talk to the command `redlock exec` runs:
// it writes lines to fd 9 (read_line) and reads lines from fd 8 (feed), so a
// test waits for events instead of sleeping.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace redlock::clitest {

using namespace std::chrono_literals;

/// build/bin/redlock.
std::string cli_path();

struct outcome {
  int status = -1;  ///< Exit status, or 128 + the signal that ended it.
  int signal = 0;   ///< The signal that ended it; 0 if it exited.
  std::string out;
  std::string err;
  std::chrono::milliseconds took{0};
};

class process {
 public:
  /// Starts `argv` (argv[0] a path) with our environment minus
  /// REDLOCK_NODES and REDLOCK_NO_AOF_WARNING, plus `env`. `stderr_to_lines`, `stdout_to_lines`:
  /// that stream goes to the lines read_line() reads instead of being captured (the program must
  /// flush its lines: a pipe is not a terminal).
  explicit process(std::vector<std::string> argv,
                   std::vector<std::pair<std::string, std::string>> env = {},
                   bool stderr_to_lines = false, bool block_sigchld = false,
                   bool stdout_to_lines = false);
  /// Its stderr so far (empty when it goes to the lines).
  std::string err() const;
  ~process();
  process(const process&) = delete;
  process& operator=(const process&) = delete;

  pid_t pid() const noexcept { return pid_; }
  void signal(int signal_number) const;
  /// The next line written to fd 9; throws if none comes within `limit` or
  /// every writer closed it.
  std::string read_line(std::chrono::milliseconds limit = 10s);
  /// Writes `line` and a newline to fd 8.
  void feed(std::string_view line);
  /// Waits up to `limit` for the end (without reaping): true if it ended.
  bool ended_within(std::chrono::milliseconds limit) const;
  /// Waits for the end; throws (after killing it) past `limit`.
  outcome wait(std::chrono::milliseconds limit = 30s);

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int lines_fd_ = -1;  ///< Read end of fd 9.
  int feed_fd_ = -1;   ///< Write end of fd 8.
  std::string pending_;
  std::filesystem::path dir_;
  std::chrono::steady_clock::time_point started_;
  bool reaped_ = false;
};

/// Runs `redlock ARGS...` to its end.
outcome run_cli(std::vector<std::string> arguments,
                std::vector<std::pair<std::string, std::string>> env = {},
                std::chrono::milliseconds limit = 30s);

/// `--nodes` followed by the list for these ports.
std::vector<std::string> nodes_args(const std::vector<std::uint16_t>& ports);

/// The process exists and is not a zombie.
bool alive(pid_t pid);
/// Alive and not about to die: no SIGKILL is pending for it. A process
/// sent SIGKILL never runs its own code again, but it stays in /proc until
/// the kernel has scheduled its exit, which on a busy machine can come after
/// the process that killed it has exited.
bool running(pid_t pid);

/// Number of lines in `text`.
std::size_t line_count(std::string_view text);

}  // namespace redlock::clitest
