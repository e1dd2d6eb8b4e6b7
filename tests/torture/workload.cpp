#include "workload.hpp"

#include "protected_register.hpp"
#include "recorded_client.hpp"

#include <fmt/format.h>

#include <poll.h>
#include <unistd.h>

#include <exception>
#include <random>
#include <string>
#include <thread>

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;

// True once the controller closed the pipe (or it broke).
bool stop_requested(int fd) {
  if (fd < 0) return false;
  pollfd pfd{fd, POLLIN, 0};
  return ::poll(&pfd, 1, 0) > 0;
}

class worker {
 public:
  explicit worker(const workload_options& options)
      : options_(options),
        rng_(options.seed),
        history_(options.out_dir, options.proc),
        client_(make_client_config(options.node_ports,
                                   options.out_dir / fmt::format("client-{}.log", options.proc)),
                history_),
        register_(options.store_port) {}

  void run() {
    while (!stop_requested(options_.stop_fd)) iteration();
    history_.flush();
  }

 private:
  std::chrono::milliseconds random_ttl() {
    std::uniform_int_distribution<long long> pick(options_.min_ttl.count(),
                                                  options_.max_ttl.count());
    return std::chrono::milliseconds(pick(rng_));
  }

  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  void iteration() {
    std::uniform_int_distribution<int> pick_res(0, options_.resources - 1);
    const std::string res = fmt::format("r{}", pick_res(rng_));
    lock_options opts;
    opts.ttl = random_ttl();
    opts.retry = retry_policy::fixed(10ms, 3);
    error_code ec;
    lock held = client_.acquire(res, opts, ec);
    if (ec) return;
    critical_section(held);
    if (chance(0.25)) {
      lock extended = client_.extend(held, random_ttl(), ec);
      if (!ec) {
        held = extended;
        critical_section(held);
      }
    }
    client_.release(held, ec);
  }

  // Read-modify-write of the register, if enough validity is left for it.
  void critical_section(const lock& held) {
    std::uniform_int_distribution<int> pick_hold(0, 5);
    const auto hold = std::chrono::milliseconds(pick_hold(rng_));
    if (!held.valid() || held.remaining_validity() < hold + options_.validity_margin) return;
    const auto section = register_.begin(history_, held);
    if (hold.count() > 0) std::this_thread::sleep_for(hold);  // the work being protected
    register_.end(history_, section);
  }

  const workload_options& options_;
  std::mt19937_64 rng_;
  history_writer history_;
  recorded_client client_;
  protected_register register_;
};

}  // namespace

int run_workload(const workload_options& options) {
  try {
    worker w(options);
    w.run();
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "redlock-torture worker {}: {}\n", options.proc, error.what());
    return 1;
  }
}

}  // namespace redlock::torture
