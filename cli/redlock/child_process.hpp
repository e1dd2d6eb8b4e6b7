// The command `redlock exec` runs: started in a process group of its own,
// so that the whole group can be signalled (a shell's pipeline included).
#pragma once

#include "signals.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace redlock::cli {

class child_process {
 public:
  /// Starts `argv` (argv[0] looked up in PATH; a file without a #! line
  /// runs with /bin/sh, as shells do) with our environment minus
  /// `removed_env`, plus `extra_env` (replacing variables of the same name),
  /// and the signal state redlock found at its start (`inherited`). When our stdin is a terminal
  /// whose foreground we hold, the child gets the foreground (so it can read the terminal, and ^C
  /// reaches it directly) until it ends. Throws std::system_error when it cannot be started
  /// (ENOENT: not found).
  child_process(const std::vector<std::string>& argv,
                const std::vector<std::pair<std::string, std::string>>& extra_env,
                const std::vector<std::string>& removed_env, const inherited_signals& inherited);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// Sends `signal_number` to the child's process group (while it has not
  /// been reaped).
  void signal_group(int signal_number) const noexcept;
  /// Reaps the child if it has ended: its exit status, or 128 + the signal
  /// that ended it.
  std::optional<int> try_wait();
  /// The signal that ended the reaped child; 0 if it exited.
  int ended_by_signal() const noexcept { return ended_by_signal_; }
  /// Sends `signal_number` to the child's process group while the group
  /// still has members, the child reaped or not (a group's id is not reused
  /// while it has members). False when it has none.
  bool signal_group_members(int signal_number) const noexcept;

 private:
  void take_back_terminal() noexcept;

  pid_t pid_ = -1;
  bool reaped_ = false;
  bool gave_terminal_ = false;
  int ended_by_signal_ = 0;
};

}  // namespace redlock::cli
