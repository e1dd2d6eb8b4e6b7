#include "redis_server.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

namespace redlock::test {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// A socket bound to 127.0.0.1:port (0: the kernel's choice) and the port it
// got; an empty socket and port 0 if the port is taken. `reuse`: as redis
// binds (SO_REUSEADDR, so TIME_WAIT leftovers do not count as taken).
std::pair<unique_fd, std::uint16_t> bind_loopback(std::uint16_t port, bool reuse) {
  unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw_errno("socket");
  const int one = 1;
  if (reuse) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return {unique_fd(-1), 0};
  }
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw_errno("getsockname");
  }
  return {std::move(fd), ntohs(addr.sin_port)};
}

std::uint16_t try_bind(std::uint16_t port) { return bind_loopback(port, true).second; }

int ephemeral_low() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  if (!(in >> low)) low = 32768;  // the kernel's default
  return low;
}

std::filesystem::path base_dir() {
  if (const char* env = std::getenv("REDLOCK_TEST_TMPDIR"); env != nullptr && *env != '\0') {
    std::filesystem::path dir(env);
    std::filesystem::create_directories(dir);
    return dir;
  }
  return std::filesystem::temp_directory_path();
}

std::filesystem::path make_server_dir(std::uint16_t port) {
  std::string name = (base_dir() / fmt::format("redlock-redis-{}-XXXXXX", port)).string();
  if (::mkdtemp(name.data()) == nullptr) throw_errno("mkdtemp " + name);
  return name;
}

// An unbound datagram socket autobound by the kernel to a unique abstract
// name: no path length limit, nothing to remove. `address` gets the
// NOTIFY_SOCKET form of the name ('@' stands for the leading NUL).
unique_fd open_notify_socket(std::string& address) {
  unique_fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw_errno("socket(AF_UNIX)");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(sa_family_t)) != 0) {
    throw_errno("bind(notify socket)");
  }
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw_errno("getsockname(notify socket)");
  }
  const std::size_t name_len = len - offsetof(sockaddr_un, sun_path);
  if (name_len < 2 || addr.sun_path[0] != '\0') {
    throw std::runtime_error("notify socket: no abstract address");
  }
  address = "@" + std::string(addr.sun_path + 1, name_len - 1);
  return fd;
}

// Drains the socket; true once a message holds the line READY=1.
bool received_ready(int fd) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) return false;
    std::string_view text(buf, static_cast<std::size_t>(n));
    while (!text.empty()) {
      const std::size_t end = std::min(text.find('\n'), text.size());
      if (text.substr(0, end) == "READY=1") return true;
      text.remove_prefix(std::min(end + 1, text.size()));
    }
  }
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return fmt::format("wait status {:#x}", status);
}

pid_t waitpid_retry(pid_t pid, int* status, int flags) {
  pid_t r;
  do r = ::waitpid(pid, status, flags);
  while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

std::uint16_t find_free_port() {
  constexpr int first = 10000;
  const int low = ephemeral_low();
  if (low - first >= 1000) {
    thread_local std::mt19937 rng{std::random_device{}()};
    std::uniform_int_distribution<int> pick(first, low - 1);
    for (int i = 0; i < 200; ++i) {
      if (const auto port = try_bind(static_cast<std::uint16_t>(pick(rng)))) return port;
    }
  }
  if (const auto port = try_bind(0)) return port;  // let the kernel choose
  throw std::runtime_error("find_free_port: no free port on 127.0.0.1");
}

refusing_port::refusing_port() {
  // Without SO_REUSEADDR: Linux lets two SO_REUSEADDR sockets bind one port
  // while neither listens, and a redis-server could then take it.
  for (int i = 0; i < 200 && port_ == 0; ++i) {
    auto [fd, port] = bind_loopback(find_free_port(), false);
    if (port != 0) {
      fd_ = fd.release();
      port_ = port;
    }
  }
  if (port_ == 0) throw std::runtime_error("refusing_port: no free port on 127.0.0.1");
}

refusing_port::~refusing_port() {
  if (fd_ >= 0) ::close(fd_);
}

redis_server::redis_server(std::uint16_t port, server_options options)
    : port_(port), options_(std::move(options)), dir_(make_server_dir(port)) {}

redis_server::~redis_server() {
  try {
    stop();
  } catch (...) {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid_retry(pid_, nullptr, 0);
    }
    if (notify_fd_ >= 0) ::close(notify_fd_);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void redis_server::start() {
  if (pid_ > 0) throw std::logic_error(fmt::format("redis-server on port {} already runs", port_));

  // Not daemonized, so the pid is our child's. Readiness comes from the
  // systemd notify protocol: Debian's redis links libsystemd and, with
  // --supervised systemd, sends READY=1 to NOTIFY_SOCKET once it listens and
  // has loaded its AOF. No connect polling, and no AUTH needed to check. (A
  // redis without libsystemd never sends it: start() would time out, and the
  // log would say "systemd supervision error".)
  std::vector<std::string> args = {"redis-server"};
  const auto add = [&args](std::initializer_list<std::string> more) {
    args.insert(args.end(), more);
  };
  add({"--port", std::to_string(port_), "--bind", "127.0.0.1"});
  add({"--dir", dir_.string(), "--logfile", log_file().string()});
  add({"--pidfile", (dir_ / "redis.pid").string()});
  add({"--daemonize", "no", "--supervised", "systemd"});
  add({"--save", ""});
  switch (options_.durability) {
    case persistence::none:
      add({"--appendonly", "no"});
      break;
    case persistence::aof_everysec:
      add({"--appendonly", "yes", "--appendfsync", "everysec"});
      break;
    case persistence::aof_always:
      add({"--appendonly", "yes", "--appendfsync", "always"});
      break;
  }
  if (!options_.requirepass.empty()) add({"--requirepass", options_.requirepass});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  std::string notify_address;
  unique_fd notify = open_notify_socket(notify_address);

  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("NOTIFY_SOCKET=")) env.emplace_back(*e);
  }
  env.push_back("NOTIFY_SOCKET=" + notify_address);

  // Everything the child needs is prepared here: between fork and exec it
  // may only make async-signal-safe calls (other threads may hold locks).
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  const unique_fd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (devnull.get() < 0) throw_errno("open /dev/null");
  // Its stderr goes to the log too, so config errors show in log_tail().
  const unique_fd log(::open(log_file().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) throw_errno("open " + log_file().string());
  sigset_t no_signals;
  sigemptyset(&no_signals);
  const long open_max = std::clamp(::sysconf(_SC_OPEN_MAX), 256L, 65536L);
  const pid_t parent = ::getpid();
  static constexpr char exec_failed[] = "redis_server: exec redis-server failed\n";

  const pid_t child = ::fork();
  if (child < 0) throw_errno("fork");
  if (child == 0) {
    // Die with the test binary rather than outlive it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::sigprocmask(SIG_SETMASK, &no_signals, nullptr);
    ::dup2(devnull.get(), STDIN_FILENO);
    ::dup2(devnull.get(), STDOUT_FILENO);
    ::dup2(log.get(), STDERR_FILENO);
    // The test's sockets (listeners of proxies, other clients) must not stay
    // open in the server.
    if (::close_range(3, ~0U, 0) != 0) {
      for (long fd = 3; fd < open_max; ++fd) ::close(static_cast<int>(fd));
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, exec_failed, sizeof exec_failed - 1);
    ::_exit(127);
  }
  pid_ = child;
  paused_ = false;

  const auto deadline = steady::now() + start_timeout;
  std::string failure;
  for (;;) {
    if (received_ready(notify.get())) {
      // Kept open until the process is gone: redis reports STOPPING=1 on
      // shutdown and would log an error if nobody listened.
      notify_fd_ = notify.release();
      return;
    }
    int status = 0;
    if (waitpid_retry(pid_, &status, WNOHANG) == pid_) {
      forget();
      failure = describe_status(status);
      break;
    }
    const auto left = std::chrono::ceil<milliseconds>(deadline - steady::now());
    if (left <= milliseconds::zero()) {
      failure = fmt::format("no READY=1 within {} s", start_timeout.count());
      break;
    }
    // Wake at least every 20 ms to notice an early exit.
    pollfd pfd{notify.get(), POLLIN, 0};
    ::poll(&pfd, 1, static_cast<int>(std::min<milliseconds::rep>(left.count(), 20)));
  }
  if (pid_ > 0) kill();
  throw std::runtime_error(fmt::format("redis-server on port {} did not start ({}); {}:\n{}", port_,
                                       failure, log_file().string(), log_tail()));
}

void redis_server::stop() {
  if (pid_ <= 0) return;
  resume();
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!wait_exit(stop_timeout)) {
    ::kill(pid_, SIGKILL);
    reap();
  }
}

void redis_server::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  reap();
}

void redis_server::pause() {
  if (pid_ <= 0) {
    throw std::logic_error(fmt::format("redis-server on port {} is not running", port_));
  }
  if (paused_) return;
  ::kill(pid_, SIGSTOP);
  // Wait for the stop itself: SIGSTOP is delivered asynchronously.
  int status = 0;
  if (waitpid_retry(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status)) {
    paused_ = true;
    return;
  }
  forget();
  throw std::runtime_error(
      fmt::format("redis-server on port {} {} instead of pausing", port_, describe_status(status)));
}

void redis_server::resume() {
  if (pid_ <= 0 || !paused_) return;
  // Unlike SIGSTOP, SIGCONT takes effect before kill() returns.
  ::kill(pid_, SIGCONT);
  paused_ = false;
}

void redis_server::restart(bool crash) {
  if (crash) {
    kill();
  } else {
    stop();
  }
  start();
}

bool redis_server::running() const {
  if (pid_ <= 0) return false;
  // Peek without reaping, so that this can stay const.
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return false;
  }
  return info.si_pid == 0;
}

std::string redis_server::log_tail(std::size_t lines) const {
  std::ifstream in(log_file(), std::ios::binary);
  if (!in) return "(no log)";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t begin = text.size();
  if (begin > 0 && text[begin - 1] == '\n') --begin;
  for (std::size_t seen = 0; begin > 0; --begin) {
    if (text[begin - 1] == '\n' && ++seen == lines) break;
  }
  return text.substr(begin);
}

void redis_server::reap() {
  waitpid_retry(pid_, nullptr, 0);
  forget();
}

void redis_server::forget() {
  pid_ = -1;
  paused_ = false;
  if (notify_fd_ >= 0) ::close(notify_fd_);
  notify_fd_ = -1;
  // A killed server leaves its pid file; the test script's safety net must
  // not signal a later process that reuses the pid.
  std::error_code ignored;
  std::filesystem::remove(dir_ / "redis.pid", ignored);
}

bool redis_server::wait_exit(steady::duration limit) {
  const auto deadline = steady::now() + limit;
  auto nap = milliseconds(1);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid_retry(pid_, &status, WNOHANG);
    if (r == pid_ || r < 0) {  // r < 0: not our child any more
      forget();
      return true;
    }
    if (steady::now() >= deadline) return false;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, milliseconds(20));
  }
}

cluster::cluster(std::size_t n, server_options options) {
  nodes_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Another process may bind the probed port before redis does: retry
    // with a fresh port.
    for (int attempt = 1;; ++attempt) {
      auto server = std::make_unique<redis_server>(find_free_port(), options);
      try {
        server->start();
      } catch (const std::runtime_error&) {
        if (attempt == 3) throw;
        continue;
      }
      nodes_.push_back(std::move(server));
      break;
    }
  }
}

cluster::~cluster() {
  // Signal every node before the nodes' destructors wait for each in turn:
  // redis acts on SIGTERM in its 10 Hz cron, so each stop takes up to 100 ms.
  for (auto& node : nodes_) {
    node->resume();
    if (node->pid() > 0) ::kill(node->pid(), SIGTERM);
  }
}

std::vector<redlock::node_config> cluster::node_configs() const {
  std::vector<redlock::node_config> configs;
  for (const auto& server : nodes_) {
    redlock::node_config config;
    config.host = "127.0.0.1";
    config.port = server->port();
    config.password = server->options().requirepass;
    configs.push_back(std::move(config));
  }
  return configs;
}

}  // namespace redlock::test
