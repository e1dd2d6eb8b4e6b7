// The command `redlock exec` runs: started in a process group of its own,
// so that the whole group can be signalled (a shell's pipeline included).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace redlock::cli {

class child_process {
 public:
  /// Starts `argv` (argv[0] looked up in PATH) with our environment plus
  /// `extra_env` (replacing variables of the same name), signals at their
  /// defaults and none blocked. When our stdin is a terminal whose
  /// foreground we hold, the child gets the foreground (so it can read the
  /// terminal, and ^C reaches it directly) until it ends. Throws
  /// std::system_error when it cannot be started (ENOENT: not found).
  child_process(const std::vector<std::string>& argv,
                const std::vector<std::pair<std::string, std::string>>& extra_env);
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

 private:
  void take_back_terminal() noexcept;

  pid_t pid_ = -1;
  bool reaped_ = false;
  bool gave_terminal_ = false;
};

}  // namespace redlock::cli
