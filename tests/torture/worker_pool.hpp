// The client processes of a run: this same program exec'ed in worker mode
// (exec, not a bare fork: the controller already runs the proxies' threads).
// Each worker's stdin is a pipe from the controller; closing it tells the
// worker to finish its current operation and exit.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace redlock::torture {

class worker_pool {
 public:
  worker_pool() = default;
  /// Kills (SIGKILL) and reaps any worker still running.
  ~worker_pool();
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;

  /// Starts /proc/self/exe with `args` (argv[0] excluded). The worker gets
  /// SIGKILL if the thread that called this exits. Throws std::system_error.
  void spawn(const std::vector<std::string>& args);

  /// Waits until `deadline` (steady clock), returning early with a
  /// description if a worker exits meanwhile: workers exit only when told to.
  std::optional<std::string> watch_until(std::chrono::steady_clock::time_point deadline);

  /// Closes every worker's pipe, then waits up to `limit` for all to exit.
  /// Returns the problems: non-zero exits, signals, workers that had to be
  /// killed after the limit.
  std::vector<std::string> stop_all(std::chrono::milliseconds limit);

  /// Sends `sig` to worker `index` (SIGSTOP, SIGCONT: a client pause), if
  /// it still runs.
  void signal(std::size_t index, int sig);

  std::size_t size() const { return workers_.size(); }

 private:
  struct worker {
    pid_t pid = -1;
    int pidfd = -1;
    int stop_pipe = -1;  // write end; closing it stops the worker
    bool reaped = false;
  };
  std::string reap(std::size_t index);  // empty when the exit was clean
  std::vector<worker> workers_;
};

}  // namespace redlock::torture
