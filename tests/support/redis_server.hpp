// Local redis-server processes owned by a test: start, stop, crash, pause.
#pragma once

#include <redlock/config.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace redlock::test {

/// A port on 127.0.0.1 that nothing is bound to right now. It is picked below
/// the kernel's ephemeral range: there a client's own socket may later take the
/// port, or a reconnect to a stopped node may connect to itself (TCP
/// simultaneous open), and the node could not be restarted.
std::uint16_t find_free_port();

/// A port on 127.0.0.1 that refuses every connection while this object
/// lives: bound and never listening, so that no other test (running at the
/// same time) can take it.
class refusing_port {
 public:
  refusing_port();
  ~refusing_port();
  refusing_port(const refusing_port&) = delete;
  refusing_port& operator=(const refusing_port&) = delete;
  std::uint16_t port() const noexcept { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

enum class persistence {
  none,          ///< No RDB, no AOF: a restart loses everything.
  aof_everysec,  ///< AOF, fsync once a second.
  aof_always,    ///< AOF, fsync before every reply.
};

struct server_options {
  persistence durability = persistence::none;
  std::string requirepass;              ///< Empty means no password.
  std::vector<std::string> extra_args;  ///< Appended to the command line.
};

/// One redis-server child process on 127.0.0.1.
///
/// Not thread-safe. The child gets SIGKILL when the thread that started it
/// exits (PR_SET_PDEATHSIG follows the thread, not the process), so start
/// servers from the test's main thread or another long-lived one.
class redis_server {
 public:
  /// Creates the server's directory; does not start it.
  explicit redis_server(std::uint16_t port, server_options options = {});
  /// Resumes if paused, then stops; removes the directory. Never throws.
  ~redis_server();

  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  /// Starts the server and waits until it accepts connections (at most
  /// start_timeout). Throws std::runtime_error with the tail of its log.
  void start();
  /// SIGTERM (after SIGCONT if paused) and reap; a clean shutdown.
  void stop();
  /// SIGKILL and reap: a crash, nothing more is flushed.
  void kill();
  /// SIGSTOP; returns once the process is stopped.
  void pause();
  /// SIGCONT. No-op unless paused.
  void resume();
  /// stop() (or kill() if crash) then start() on the same port and directory.
  void restart(bool crash = false);

  /// Started and not exited (paused counts as running).
  bool running() const;
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }
  std::uint16_t port() const { return port_; }
  const server_options& options() const { return options_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path log_file() const { return dir_ / "redis.log"; }
  /// The last lines of the server's log, for failure messages.
  std::string log_tail(std::size_t lines = 30) const;

  static constexpr std::chrono::seconds start_timeout{10};
  static constexpr std::chrono::seconds stop_timeout{10};

 private:
  void reap();    // blocking waitpid, then forget()
  void forget();  // the process is gone: clear the pid, remove the pid file
  bool wait_exit(std::chrono::steady_clock::duration limit);  // false on timeout

  std::uint16_t port_;
  server_options options_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  bool paused_ = false;
  int notify_fd_ = -1;  // systemd notify socket of the running process
};

/// N independent masters on free ports, all started by the constructor.
class cluster {
 public:
  explicit cluster(std::size_t n = 5, server_options options = {});
  /// Stops all nodes in parallel.
  ~cluster();
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  redis_server& node(std::size_t i) { return *nodes_.at(i); }
  const redis_server& node(std::size_t i) const { return *nodes_.at(i); }
  std::size_t size() const { return nodes_.size(); }
  /// Host 127.0.0.1, each port, and the password if one is required.
  std::vector<redlock::node_config> node_configs() const;

 private:
  std::vector<std::unique_ptr<redis_server>> nodes_;
};

}  // namespace redlock::test
