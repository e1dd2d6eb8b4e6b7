// redlock-floor-bench: the machine's floor under redlock-bench's latency and
// throughput workloads. A minimal Redlock client with nothing between the
// program and the kernel: blocking POSIX sockets with TCP_NODELAY, one
// connection per node, commands written as RESP by hand. It sends what
// redlock sends for a single-resource lock (SET <key> <token> NX PX <ttl>,
// and for the release an EVAL of the library's own release script with the
// same arguments), so the nodes do the same work, and prints one JSON line
// with redlock-bench's field names. Only the command line (redlock_args) and
// the release script's text come from the project.
//
// A cycle: the acquire goes to every node (one write each), then the replies
// are read as they come; the acquire's clock stops when the quorum-th node
// has answered, and the release goes out then (as a Redlock client sends
// it: the other acquire answers are read meanwhile), its clock stopping at
// the quorum-th answer too. --release-after all reads every acquire answer
// first (an advantage a client that completes at a quorum cannot take). Throughput with --batch N
// (default: --concurrency) writes N acquires of distinct fresh keys to each node in one write,
// reads the N replies of each, then N releases in one write: each sample is a batch's time, until
// the quorum-th node answered all N.
#include "args/options.hpp"
#include "detail/scripts.hpp"
#include "stats.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace args = redlock::args;
using redlock::bench::samples;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

namespace {

struct options {
  std::vector<redlock::node_config> nodes;
  std::string workload = "latency";
  milliseconds duration{10'000};
  milliseconds warmup{1000};
  milliseconds ttl{10'000};
  /// 0 until given: throughput's batch then defaults to it.
  unsigned concurrency = 0;
  /// 0 until given.
  unsigned batch = 0;
  /// "eval" (what redlock sends) or "evalsha" (the script loaded first).
  std::string release = "eval";
  /// Latency: "quorum" sends the release once a quorum answered the acquire
  /// (as a Redlock client does); "all" once every node answered.
  std::string release_after = "quorum";
};

/// How long a node may take to answer before the run is abandoned.
constexpr int reply_timeout_ms = 10'000;

// ---- RESP ---------------------------------------------------------------------

void append_bulk(std::string& out, std::string_view arg) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, arg.size()).ptr;
  out.push_back('$');
  out.append(digits, end);
  out.append("\r\n").append(arg).append("\r\n");
}

/// Appends one command, as RESP (an array of bulk strings), to `out`.
void append_command(std::string& out, std::initializer_list<std::string_view> words) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, words.size()).ptr;
  out.push_back('*');
  out.append(digits, end);
  out.append("\r\n");
  for (auto word : words) append_bulk(out, word);
}

/// One reply: its type byte and its text (simple string, error or bulk
/// string) or number (integer); nil is a bulk string of length -1.
struct reply {
  char type = 0;
  std::string_view text;
  long long number = 0;
  bool nil = false;
};

// ---- a node -------------------------------------------------------------------

class node_link {
 public:
  explicit node_link(const redlock::node_config& node)
      : name_(fmt::format("{}:{}", node.host, node.port)) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const auto port = std::to_string(node.port);
    if (const int rc = ::getaddrinfo(node.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      throw std::runtime_error(fmt::format("{}: {}", name_, ::gai_strerror(rc)));
    }
    int last_errno = 0;
    for (auto* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ < 0) {
        last_errno = errno;
        continue;
      }
      if (::connect(fd_, a->ai_addr, a->ai_addrlen) != 0) {
        last_errno = errno;
        ::close(fd_);
        fd_ = -1;
      }
    }
    ::freeaddrinfo(found);
    if (fd_ < 0) {
      throw std::runtime_error(
          fmt::format("{}: cannot connect: {}", name_, std::strerror(last_errno)));
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!node.password.empty()) {
      std::string auth;
      if (node.username.empty()) {
        append_command(auth, {"AUTH", node.password});
      } else {
        append_command(auth, {"AUTH", node.username, node.password});
      }
      expect_ok(auth, "AUTH");
    }
    if (node.database != 0) {
      std::string select;
      append_command(select, {"SELECT", std::to_string(node.database)});
      expect_ok(select, "SELECT");
    }
  }
  node_link(const node_link&) = delete;
  node_link& operator=(const node_link&) = delete;
  node_link(node_link&& other) noexcept
      : name_(std::move(other.name_)),
        fd_(other.fd_),
        in_(std::move(other.in_)),
        start_(other.start_),
        end_(other.end_) {
    other.fd_ = -1;
  }
  node_link& operator=(node_link&&) = delete;
  ~node_link() {
    if (fd_ >= 0) ::close(fd_);
  }

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

  /// Writes all of `bytes` (blocking).
  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(fmt::format("{}: send: {}", name_, std::strerror(errno)));
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  /// Reads what the socket has (blocking until at least one byte).
  void receive() {
    if (start_ == end_) start_ = end_ = 0;
    if (end_ == in_.size()) {
      // Full: move what is left to the front, and grow if that frees nothing.
      std::memmove(in_.data(), in_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
      if (end_ == in_.size()) in_.resize(2 * in_.size());
    }
    ssize_t n = 0;
    do {
      n = ::recv(fd_, in_.data() + end_, in_.size() - end_, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      throw std::runtime_error(
          fmt::format("{}: {}", name_, n == 0 ? "connection closed" : std::strerror(errno)));
    }
    end_ += static_cast<std::size_t>(n);
  }

  /// The next complete reply in what was received, if there is one. Its
  /// text stays valid until the next receive().
  std::optional<reply> next() {
    const std::string_view rest(in_.data() + start_, end_ - start_);
    const auto eol = rest.find("\r\n");
    if (eol == std::string_view::npos) return std::nullopt;
    reply r;
    r.type = rest[0];
    const auto line = rest.substr(1, eol - 1);
    std::size_t used = eol + 2;
    switch (r.type) {
      case '+':
      case '-':
        r.text = line;
        break;
      case ':':
        r.number = number(line);
        break;
      case '$': {
        const auto length = number(line);
        if (length < 0) {
          r.nil = true;
          break;
        }
        const auto size = static_cast<std::size_t>(length);
        if (rest.size() < used + size + 2) return std::nullopt;
        r.text = rest.substr(used, size);
        used += size + 2;
        break;
      }
      default:
        throw std::runtime_error(fmt::format("{}: unexpected reply type '{}'", name_, r.type));
    }
    start_ += used;
    return r;
  }

  /// Sends one command and waits for its reply (setting up, not measured).
  reply call(std::string_view command) {
    send(command);
    for (;;) {
      if (auto r = next()) return *r;
      receive();
    }
  }

 private:
  long long number(std::string_view text) const {
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) {
      throw std::runtime_error(fmt::format("{}: bad number in a reply: '{}'", name_, text));
    }
    return value;
  }

  void expect_ok(std::string_view command, std::string_view what) {
    const auto r = call(command);
    if (r.type != '+') {
      throw std::runtime_error(fmt::format("{}: {}: {}", name_, what, r.text));
    }
  }

  std::string name_;
  int fd_ = -1;
  /// Received bytes: [start_, end_) not yet parsed.
  std::vector<char> in_ = std::vector<char>(64 * 1024);
  std::size_t start_ = 0;
  std::size_t end_ = 0;
};

// ---- the run ------------------------------------------------------------------

struct cpu_times {
  double user = 0;
  double system = 0;
};

cpu_times cpu_now() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

long max_rss_kb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

long current_rss_kb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

/// What one round (a command batch to every node) found.
struct round_result {
  /// When the quorum-th node had answered every command of the batch.
  steady::time_point quorum_at{};
  /// Commands of the batch that fewer than a quorum of nodes accepted.
  std::uint64_t failed = 0;
};

class floor_client {
 public:
  floor_client(std::vector<node_link> links, unsigned batch)
      : links_(std::move(links)),
        quorum_(links_.size() / 2 + 1),
        accepted_(batch),
        polls_(links_.size()),
        answered_(links_.size()),
        node_ms_(links_.size()) {}

  std::vector<samples>& node_ms() { return node_ms_; }
  const std::string& first_error() const { return first_error_; }

  /// Writes `command` (a batch of `count` commands) to every node, then
  /// reads every node's `count` replies as they come; `accept(reply)` tells
  /// which replies count towards the quorum of their command. Per-node times
  /// are recorded when `per_node` is set.
  /// Waits until a node in polls_ has something to read.
  void wait_for_replies() {
    int ready = 0;
    do {
      ready = ::poll(polls_.data(), polls_.size(), reply_timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) throw std::system_error(errno, std::generic_category(), "poll");
    if (ready == 0) throw std::runtime_error("a node took over 10 s to answer");
  }

  struct cycle_result {
    steady::time_point acquired{};  ///< A quorum answered the acquire.
    steady::time_point released{};  ///< A quorum answered the release.
    std::uint64_t failed = 0;       ///< 1 if too few nodes granted or deleted.
  };

  /// One lock's acquire and release, as a Redlock client runs them: the
  /// release goes to every node as soon as a quorum answered the acquire,
  /// and the other nodes' acquire answers are read as they come, with the
  /// release answers. Per-node times (of the acquire) when `per_node`.
  template <typename AcceptAcquire, typename AcceptRelease>
  cycle_result cycle(std::string_view acquire, std::string_view release, AcceptAcquire acquire_ok,
                     AcceptRelease release_ok, bool per_node) {
    const auto t0 = steady::now();
    for (auto& link : links_) link.send(acquire);
    for (std::size_t i = 0; i < links_.size(); ++i) {
      polls_[i] = {links_[i].fd(), POLLIN, 0};
      answered_[i] = 0;  // 0: owes the acquire's answer, 1: the release's, 2: done
    }
    cycle_result result;
    std::size_t acquire_answers = 0;
    std::size_t granted = 0;
    std::size_t release_answers = 0;
    std::size_t deleted = 0;
    bool release_sent = false;
    while (release_answers < links_.size()) {
      wait_for_replies();
      for (std::size_t i = 0; i < links_.size(); ++i) {
        if (polls_[i].fd < 0 || polls_[i].revents == 0) continue;
        links_[i].receive();
        while (answered_[i] < 2) {
          if (answered_[i] == 1 && !release_sent) break;  // nothing owed yet
          const auto r = links_[i].next();
          if (!r) break;
          const bool acquire_answer = answered_[i] == 0;
          const bool ok = acquire_answer ? acquire_ok(*r) : release_ok(*r);
          if (!ok && first_error_.empty()) {
            first_error_ = fmt::format("{}: reply type '{}' {}", links_[i].name(), r->type,
                                       r->nil ? "nil" : std::string(r->text));
          }
          ++answered_[i];
          const auto now = steady::now();
          if (acquire_answer) {
            if (ok) ++granted;
            if (per_node) node_ms_[i].add(now - t0);
            if (++acquire_answers == quorum_) {
              result.acquired = now;
              for (auto& link : links_) link.send(release);
              release_sent = true;
            }
          } else {
            if (ok) ++deleted;
            if (++release_answers == quorum_) result.released = steady::now();
          }
        }
        if (answered_[i] == 2) polls_[i].fd = -1;
      }
    }
    if (granted < quorum_ || deleted < quorum_) result.failed = 1;
    return result;
  }

  template <typename Accept>
  round_result round(std::string_view command, unsigned count, Accept accept, bool per_node) {
    const auto t0 = steady::now();
    for (auto& link : links_) link.send(command);
    std::fill(accepted_.begin(), accepted_.begin() + count, 0U);
    for (std::size_t i = 0; i < links_.size(); ++i) {
      polls_[i] = {links_[i].fd(), POLLIN, 0};
      answered_[i] = 0;
    }
    round_result result;
    std::size_t nodes_done = 0;
    while (nodes_done < links_.size()) {
      wait_for_replies();
      for (std::size_t i = 0; i < links_.size(); ++i) {
        if (polls_[i].fd < 0 || polls_[i].revents == 0) continue;
        links_[i].receive();
        while (answered_[i] < count) {
          const auto r = links_[i].next();
          if (!r) break;
          if (accept(*r)) {
            ++accepted_[answered_[i]];
          } else if (first_error_.empty()) {
            first_error_ = fmt::format("{}: reply type '{}' {}", links_[i].name(), r->type,
                                       r->nil ? "nil" : std::string(r->text));
          }
          ++answered_[i];
        }
        if (answered_[i] == count) {
          const auto now = steady::now();
          polls_[i].fd = -1;
          if (++nodes_done == quorum_) result.quorum_at = now;
          if (per_node) node_ms_[i].add(now - t0);
        }
      }
    }
    for (unsigned k = 0; k < count; ++k) {
      if (accepted_[k] < quorum_) ++result.failed;
    }
    return result;
  }

 private:
  std::vector<node_link> links_;
  std::size_t quorum_;
  std::vector<unsigned> accepted_;
  std::vector<pollfd> polls_;
  std::vector<unsigned> answered_;
  std::vector<samples> node_ms_;
  std::string first_error_;
};

void add_options(CLI::App& app, options& o) {
  app.footer(
      "Prints one JSON line with redlock-bench's field names. Exit status: 0 done, 1 failed, 2 "
      "bad command line.");
  args::add_nodes(app, o.nodes, "Redis masters (required; plain TCP)");
  app.add_option("--workload", o.workload,
                 "latency: one cycle at a time; throughput: --batch cycles per write")
      ->check(CLI::IsMember({"latency", "throughput"}))
      ->capture_default_str();
  args::add_duration(app, "--duration", o.duration, "Measured time, after the warm-up");
  args::add_duration(app, "--warmup", o.warmup, "Time before the measured period (not counted)");
  args::add_duration(app, "--ttl", o.ttl, "PX of each SET");
  app.add_option("--concurrency", o.concurrency,
                 "Cycles in flight: throughput's --batch unless that is given (default 64); "
                 "latency always runs 1")
      ->check(CLI::Range(1U, 1'000'000U, "POSITIVE"));
  app.add_option("--batch", o.batch,
                 "Throughput: acquires (then releases) per write to each node (default: "
                 "--concurrency, else 64)")
      ->check(CLI::Range(1U, 1'000'000U, "POSITIVE"));
  app.add_option("--release", o.release,
                 "eval: send the release script as EVAL (as redlock does); evalsha: load it "
                 "first and send EVALSHA")
      ->check(CLI::IsMember({"eval", "evalsha"}))
      ->capture_default_str();
  app.add_option("--release-after", o.release_after,
                 "Latency: quorum: send the release as soon as a quorum answered the acquire "
                 "(what redlock does: the other nodes' answers come in meanwhile); all: once "
                 "every node answered")
      ->check(CLI::IsMember({"quorum", "all"}))
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The floor: a minimal raw-socket Redlock client (SET NX PX, release script), for "
      "comparing redlock-bench with.",
      "redlock-floor-bench"};
  options opts;
  add_options(app, opts);
  if (const auto exit_status = args::parse(app, argc, argv)) return *exit_status;
  if (opts.nodes.empty()) return args::usage_error(app, "--nodes is required");
  if (opts.duration <= milliseconds::zero())
    return args::usage_error(app, "--duration must be positive");
  for (const auto& node : opts.nodes) {
    if (node.tls.enabled) return args::usage_error(app, "--nodes: TLS is not supported");
  }
  const bool latency = opts.workload == "latency";
  unsigned batch = 1;
  if (!latency)
    batch = opts.batch != 0 ? opts.batch : opts.concurrency != 0 ? opts.concurrency : 64;
  const unsigned concurrency = batch;

  // A token per acquire: a random 64-bit prefix and a counter, 32 hex digits
  // like redlock's; the releaser id (published on release) is the prefix.
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed)) {
    fmt::print(stderr, "redlock-floor-bench: getrandom failed\n");
    return 1;
  }
  const auto releaser = fmt::format("{:016x}{:016x}", seed, ~seed);
  const auto key_prefix = fmt::format("redlock-floor:{}:r", ::getpid());
  const auto ttl_text = std::to_string(opts.ttl.count());
  const std::string_view script = redlock::detail::release_script();

  std::optional<floor_client> client;
  std::string script_sha;
  try {
    std::vector<node_link> links;
    for (const auto& node : opts.nodes) links.emplace_back(node);
    if (opts.release == "evalsha") {
      for (auto& link : links) {
        std::string load;
        append_command(load, {"SCRIPT", "LOAD", script});
        const auto r = link.call(load);
        if (r.type != '$' || r.nil) {
          throw std::runtime_error(fmt::format("{}: SCRIPT LOAD: {}", link.name(), r.text));
        }
        script_sha.assign(r.text);
      }
    }
    client.emplace(std::move(links), batch);
  } catch (const std::exception& e) {
    fmt::print(stderr, "redlock-floor-bench: {}\n", e.what());
    return 1;
  }

  const auto set_ok = [](const reply& r) { return r.type == '+' && r.text == "OK"; };
  const auto deleted = [](const reply& r) { return r.type == ':' && r.number == 1; };

  std::vector<std::string> keys(batch);
  std::vector<std::string> tokens(batch);
  std::vector<std::string> channels(batch);
  std::string acquire;
  std::string release;
  std::uint64_t next_key = 0;
  std::uint64_t counter = 0;

  samples acquire_ms;
  samples release_ms;
  std::uint64_t cycles = 0;
  std::uint64_t errors = 0;
  const auto start = steady::now();
  const auto measure_from = start + opts.warmup;
  const auto stop_at = measure_from + opts.duration;
  bool measuring = false;
  cpu_times cpu_start{};
  long rss_after_warmup = 0;
  try {
    for (auto t0 = steady::now(); t0 < stop_at; t0 = steady::now()) {
      if (!measuring && t0 >= measure_from) {
        // The first round of the measured period: from here on, CPU counts
        // and every node's reply time is kept.
        measuring = true;
        cpu_start = cpu_now();
        rss_after_warmup = current_rss_kb();
      }
      acquire.clear();
      release.clear();
      for (unsigned k = 0; k < batch; ++k) {
        keys[k].assign(key_prefix);
        fmt::format_to(std::back_inserter(keys[k]), "{}", next_key++);
        tokens[k].clear();
        fmt::format_to(std::back_inserter(tokens[k]), "{:016x}{:016x}", seed, counter++);
        channels[k].assign("redlock:released:").append(keys[k]);
        append_command(acquire, {"SET", keys[k], tokens[k], "NX", "PX", ttl_text});
        if (script_sha.empty()) {
          append_command(release, {"EVAL", script, "1", keys[k], tokens[k], releaser, channels[k]});
        } else {
          append_command(release,
                         {"EVALSHA", script_sha, "1", keys[k], tokens[k], releaser, channels[k]});
        }
      }
      if (latency && opts.release_after == "quorum") {
        const auto lock = client->cycle(acquire, release, set_ok, deleted, measuring);
        errors += lock.failed;
        if (measuring) {
          acquire_ms.add(lock.acquired - t0);
          release_ms.add(lock.released - lock.acquired);
          cycles += 1;
        }
        continue;
      }
      const auto got = client->round(acquire, batch, set_ok, measuring);
      const auto t1 = steady::now();
      const auto gone = client->round(release, batch, deleted, false);
      errors += got.failed + gone.failed;
      if (measuring) {
        acquire_ms.add(got.quorum_at - t0);
        release_ms.add(gone.quorum_at - t1);
        cycles += batch;
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "redlock-floor-bench: {}\n", e.what());
    return 1;
  }

  const auto cpu_end = cpu_now();
  const double seconds = std::chrono::duration<double>(opts.duration).count();
  const double user = cpu_end.user - cpu_start.user;
  const double system = cpu_end.system - cpu_start.system;
  if (errors > 0) {
    fmt::print(stderr, "redlock-floor-bench: {} errors, first: {}\n", errors,
               client->first_error());
  }
  std::string per_node;
  for (auto& node : client->node_ms()) {
    per_node += per_node.empty() ? "" : ",";
    per_node += node.json();
  }
  fmt::print(
      R"({{"workload":"{}","batch":{},"release_command":"{}","release_after":"{}",)"
      R"("concurrency":{},"duration_s":{:.1f},)"
      R"("cycles":{},"cycles_per_s":{:.1f},"acquire_ms":{},"release_ms":{},"errors":{},)"
      R"("client_cpu_s":{{"user":{:.3f},"system":{:.3f}}},"client_cpu_s_per_1000_cycles":{:.4f},)"
      R"("max_rss_kb":{},"rss_kb_after_warmup":{},"rss_kb_end":{},"node_acquire_ms":[{}]}})"
      "\n",
      opts.workload, batch, script_sha.empty() ? "EVAL" : "EVALSHA",
      latency ? opts.release_after : "all", concurrency, seconds, cycles,
      static_cast<double>(cycles) / seconds, acquire_ms.json(), release_ms.json(), errors, user,
      system, cycles == 0 ? 0.0 : (user + system) * 1000.0 / static_cast<double>(cycles),
      max_rss_kb(), rss_after_warmup, current_rss_kb(), per_node);
  return errors == 0 || cycles > 0 ? 0 : 1;
}
