#include "worker_pool.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace redlock::torture {
namespace {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++: call the kernel directly.
int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

int poll_timeout(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 60'000));
}

}  // namespace

worker_pool::~worker_pool() {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    auto& w = workers_[i];
    if (w.stop_pipe >= 0) ::close(w.stop_pipe);
    if (!w.reaped) {
      ::kill(w.pid, SIGKILL);
      reap(i);
    }
    if (w.pidfd >= 0) ::close(w.pidfd);
  }
}

void worker_pool::spawn(const std::vector<std::string>& args) {
  // Everything the child needs is built before fork: between fork and exec
  // only async-signal-safe calls are allowed.
  std::vector<std::string> storage;
  storage.reserve(args.size() + 1);
  storage.emplace_back("redlock-torture");
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  static constexpr char exe[] = "/proc/self/exe";
  static constexpr char exec_failed[] = "redlock-torture: exec of a worker failed\n";

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw_errno("pipe2");
  const long open_max = std::clamp(::sysconf(_SC_OPEN_MAX), 256L, 65536L);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw_errno("fork");
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(pipe_fds[0], STDIN_FILENO);  // dup2 clears O_CLOEXEC on the copy
    // Not every descriptor of the controller is close-on-exec (the proxies'
    // sockets): a copy in the worker would keep a connection the proxy
    // resets or closes alive.
    if (::close_range(3, ~0U, 0) != 0) {
      for (long fd = 3; fd < open_max; ++fd) ::close(static_cast<int>(fd));
    }
    ::execv(exe, argv.data());
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, exec_failed, sizeof exec_failed - 1);
    ::_exit(127);
  }
  ::close(pipe_fds[0]);
  worker w;
  w.pid = child;
  w.stop_pipe = pipe_fds[1];
  w.pidfd = open_pidfd(child);
  if (w.pidfd < 0) {
    const int saved = errno;
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(w.stop_pipe);
    throw std::system_error(saved, std::generic_category(), "pidfd_open");
  }
  workers_.push_back(w);
}

std::string worker_pool::reap(std::size_t index) {
  auto& w = workers_[index];
  int status = 0;
  pid_t r;
  do r = ::waitpid(w.pid, &status, 0);
  while (r < 0 && errno == EINTR);
  w.reaped = true;
  if (r < 0) return fmt::format("worker {}: waitpid failed", index);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status))
    return fmt::format("worker {} exited with status {}", index, WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("worker {} killed by signal {}", index, WTERMSIG(status));
  return fmt::format("worker {}: wait status {:#x}", index, status);
}

std::optional<std::string> worker_pool::watch_until(
    std::chrono::steady_clock::time_point deadline) {
  std::vector<pollfd> fds;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (workers_[i].reaped) continue;
    fds.push_back({workers_[i].pidfd, POLLIN, 0});
    index.push_back(i);
  }
  for (;;) {
    const int timeout = poll_timeout(deadline);
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) throw_errno("poll");
    for (std::size_t k = 0; n > 0 && k < fds.size(); ++k) {
      if (fds[k].revents != 0) {
        const auto why = reap(index[k]);
        return fmt::format("worker {} exited before it was told to ({})", index[k],
                           why.empty() ? "status 0" : why);
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
  }
}

std::vector<std::string> worker_pool::stop_all(std::chrono::milliseconds limit) {
  for (auto& w : workers_) {
    if (w.stop_pipe >= 0) ::close(w.stop_pipe);
    w.stop_pipe = -1;
  }
  std::vector<std::string> problems;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    auto& w = workers_[i];
    if (w.reaped) continue;
    pollfd pfd{w.pidfd, POLLIN, 0};
    int n;
    do n = ::poll(&pfd, 1, poll_timeout(deadline));
    while (n < 0 && errno == EINTR);
    if (n == 0) {
      problems.push_back(
          fmt::format("worker {} did not stop within {} ms; killed", i, limit.count()));
      ::kill(w.pid, SIGKILL);
      reap(i);
      continue;
    }
    if (auto why = reap(i); !why.empty()) problems.push_back(std::move(why));
  }
  return problems;
}

void worker_pool::signal(std::size_t index, int sig) {
  const auto& w = workers_.at(index);
  if (!w.reaped) ::kill(w.pid, sig);
}

}  // namespace redlock::torture
