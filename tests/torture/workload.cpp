#include "workload.hpp"

#include "protected_register.hpp"
#include "recorded_client.hpp"

#include <redlock/blocking_client.hpp>
#include <redlock/keeper.hpp>
#include <redlock/leader.hpp>

#include <fmt/format.h>

#include <poll.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace redlock::torture {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// True once the controller closed the pipe (or it broke).
bool pipe_closed(int fd) {
  if (fd < 0) return false;
  pollfd pfd{fd, POLLIN, 0};
  return ::poll(&pfd, 1, 0) > 0;
}

std::mt19937_64 seeded(std::uint64_t seed, int worker_id) {
  std::seed_seq seq{seed, static_cast<std::uint64_t>(worker_id)};
  return std::mt19937_64(seq);
}

void sleep_until(clock::time_point at) {
  for (auto now = clock::now(); now < at; now = clock::now()) std::this_thread::sleep_for(at - now);
}

// What the workers of a process share besides the client.
class crew {
 public:
  explicit crew(int stop_fd) : stop_fd_(stop_fd) {}

  bool stopping() {
    if (stopping_.load()) return true;
    if (pipe_closed(stop_fd_)) stopping_ = true;
    return stopping_.load();
  }

  // The first failure is the process's; the others stop at once.
  void fail(std::string what) {
    {
      const std::lock_guard guard(mutex_);
      if (!failure_) failure_ = std::move(what);
    }
    stopping_ = true;
  }

  std::optional<std::string> failure() {
    const std::lock_guard guard(mutex_);
    return failure_;
  }

 private:
  int stop_fd_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::optional<std::string> failure_;
};

class worker {
 public:
  worker(const workload_options& options, int id, blocking_client& client, history_writer& file)
      : options_(options),
        profile_(options.profile),
        rng_(seeded(options.seed, id)),
        client_(client, worker_history(file, id)),
        register_(options.store_port) {}

  void run(crew& mates) {
    while (!mates.stopping()) {
      iteration();
      if (profile_.max_pause.count() > 0)
        std::this_thread::sleep_for(between(0ms, profile_.max_pause));
    }
  }

 private:
  milliseconds between(milliseconds low, milliseconds high) {
    return milliseconds(std::uniform_int_distribution<long long>(low.count(), high.count())(rng_));
  }

  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  milliseconds random_ttl() { return between(profile_.min_ttl, profile_.max_ttl); }

  lock_options acquire_options() {
    lock_options opts;
    opts.ttl = random_ttl();
    opts.request_timeout = profile_.request_timeout;
    opts.fenced = profile_.fenced_locks;
    if (chance(profile_.try_once_share)) {
      opts.retry = retry_policy::try_once();
    } else {
      // Retries until the wait deadline, woken by the holder's release: the
      // hand-over within this client and the wake-ups across clients.
      opts.retry = retry_policy::fixed(profile_.retry_delay, 0, profile_.retry_jitter);
      opts.wait_timeout = between(profile_.min_wait, profile_.max_wait);
    }
    return opts;
  }

  void iteration() {
    std::uniform_int_distribution<int> pick_res(0, options_.resources - 1);
    const std::string res = fmt::format("r{}", pick_res(rng_));
    error_code ec;
    lock held = client_.acquire(res, acquire_options(), ec);
    if (ec) return;
    critical_section(held);
    if (profile_.hold_to_deadline) sleep_until(held.validity_deadline());
    client_.release(held, ec);  // lock_lost is only information: it is recorded
  }

  /// This critical section is one of those that stall (workload_profile::stall_every).
  bool stall_now() { return profile_.stall_every > 0 && ++sections_ % profile_.stall_every == 0; }

  bool enough_validity(const lock& held, milliseconds work) const {
    return held.valid() && held.remaining_validity() >= work + profile_.validity_margin;
  }

  // Read-modify-write of the register, if enough validity is left for it;
  // some sections extend their lock half-way through.
  void critical_section(lock& held) {
    if (chance(profile_.keep_share)) return kept_section(held);
    const auto work = between(0ms, profile_.max_hold);
    if (!enough_validity(held, work)) return;
    if (profile_.fenced_writes) return fenced_section(held, work);
    const auto section = register_.begin(client_.history(), held);
    if (stall_now()) {
      register_.wait_for_other_write(section, profile_.stall_max);
    } else if (chance(profile_.extend_share)) {
      const auto first_half = work / 2;
      std::this_thread::sleep_for(first_half);
      extend_in_section(held);
      // The extend took time and may have failed: check again before writing.
      if (!enough_validity(held, work - first_half)) {
        register_.give_up(client_.history(), section);
        return;
      }
      std::this_thread::sleep_for(work - first_half);
    } else if (work.count() > 0) {
      std::this_thread::sleep_for(work);  // the work being protected
    }
    register_.end(client_.history(), section);
  }

  // The read-modify-write through the resource's fence check: a holder
  // paused past its validity (SIGSTOP) is refused by the store.
  void fenced_section(const lock& held, milliseconds work) {
    const auto section = register_.begin_fenced(client_.history(), held);
    if (!section) return;
    if (stall_now()) {
      register_.wait_for_other_write(*section, profile_.stall_max);
    } else if (work.count() > 0) {
      std::this_thread::sleep_for(work);
    }
    register_.end_fenced(client_.history(), *section);
  }

  // A section longer than the TTL under a keeper: it goes on while the
  // lost-lock signal is silent, trusting it alone (as its documentation
  // says work may) to stop it before the validity ends.
  void kept_section(lock& held) {
    constexpr auto slice = 5ms;
    const auto work = held.ttl() * std::uniform_int_distribution<int>(1, profile_.keep_ttls)(rng_);
    if (!enough_validity(held, slice)) return;
    keeper kept(client_.client().async_client(), held);
    const auto section = register_.begin(client_.history(), held);
    auto recorded_deadline = held.validity_deadline();
    const auto end = clock::now() + work;
    while (clock::now() < end) {
      const auto deadline = kept.held().validity_deadline();
      if (deadline > recorded_deadline) {
        client_.observed_extension(kept.held());
        recorded_deadline = deadline;
      }
      if (kept.lost()) {
        register_.give_up(client_.history(), section);
        return;
      }
      std::this_thread::sleep_for(slice);
    }
    register_.end(client_.history(), section);
  }

  void extend_in_section(lock& held) {
    error_code ec;
    lock extended = client_.extend(held, random_ttl(), ec);
    if (!ec) {
      held = std::move(extended);
    } else if (!extended.empty() && extended.validity_deadline() < held.validity_deadline()) {
      held = std::move(extended);  // a failed extend may cut the validity short
    }
  }

  const workload_options& options_;
  const workload_profile& profile_;
  std::mt19937_64 rng_;
  recorded_client client_;
  protected_register register_;
  int sections_ = 0;  ///< Critical sections begun.
};

// A contender for leadership of r0: the process's leader, when elected.
// Its terms are what the checker sweeps: an acquire (invoked when the
// campaign starts, ok when elected), the keeper's extensions as seen, the
// critical sections run while leading, and the release of the step-down.
class contender {
 public:
  contender(const workload_options& options, int id, blocking_client& client, history_writer& file)
      : profile_(options.profile),
        rng_(seeded(options.seed, id)),
        client_(client, worker_history(file, id)),
        register_(options.store_port) {}

  void run(crew& mates) {
    while (!mates.stopping()) term(mates);
  }

 private:
  // What the election's callbacks (on the client's strand) hand over.
  struct ballot {
    std::mutex mutex;
    std::condition_variable changed;
    std::optional<lock> held;
    lease_token term;
  };

  milliseconds between(milliseconds low, milliseconds high) {
    return milliseconds(std::uniform_int_distribution<long long>(low.count(), high.count())(rng_));
  }

  campaign_options options() {
    campaign_options opts;
    opts.lock.ttl = between(profile_.min_ttl, profile_.max_ttl);
    opts.lock.request_timeout = profile_.request_timeout;
    opts.lock.retry = retry_policy::fixed(profile_.retry_delay, 0, profile_.retry_jitter);
    return opts;
  }

  void term(crew& mates) {
    const std::string res = "r0";
    auto opts = options();
    auto invoke = make_event(op_kind::acquire, event_type::invoke, res);
    invoke.ttl_ms = opts.lock.ttl.count();
    client_.history().record(invoke);

    auto vote = std::make_shared<ballot>();
    leader_election election(
        client_.client().async_client(), res, opts,
        [vote](const lock& held, lease_token term) {
          const std::lock_guard guard(vote->mutex);
          if (vote->held) return;  // one term per election: the first
          vote->held = held;
          vote->term = std::move(term);
          vote->changed.notify_all();
        },
        [](error_code) {});
    election.campaign();

    std::unique_lock guard(vote->mutex);
    while (!vote->held && !mates.stopping()) vote->changed.wait_for(guard, 20ms);
    std::optional<lock> held = vote->held;
    const lease_token term = vote->term;
    guard.unlock();
    if (!held) {
      step_down(election);
      return;
    }
    auto ok = make_event(op_kind::acquire, event_type::ok, res, held->token());
    ok.deadline = held->validity_deadline().time_since_epoch().count();
    client_.history().record(ok);

    lead(election, *held, term, mates);

    client_.history().record(make_event(op_kind::release, event_type::invoke, res, held->token()));
    const auto stepped = step_down(election);
    auto done = make_event(op_kind::release, stepped ? event_type::fail : event_type::ok, res,
                           held->token());
    if (stepped) done.err = reason(stepped);
    client_.history().record(std::move(done));
  }

  // The release's error (errc::lock_lost if the term had lapsed).
  static error_code step_down(leader_election& election) {
    std::promise<error_code> stepped;
    election.async_step_down([&stepped](error_code ec) { stepped.set_value(ec); });
    return stepped.get_future().get();
  }

  // Critical sections while leading() says so, until the term ends or its
  // time is up.
  void lead(const leader_election& election, const lock& held, const lease_token& term,
            crew& mates) {
    constexpr auto work = 2ms;
    const auto end = clock::now() + between(profile_.lead_min, profile_.lead_max);
    auto recorded_deadline = held.validity_deadline();
    while (clock::now() < end && !term.stop_requested() && !mates.stopping()) {
      if (held.validity_deadline() > recorded_deadline) {
        client_.observed_extension(held);
        recorded_deadline = held.validity_deadline();
      }
      // Trusting leading() alone, as its documentation says work may: a
      // signal that came late shows as two leaders' sections overlapping.
      if (!election.leading()) {
        std::this_thread::sleep_for(work);
        continue;
      }
      const auto section = register_.begin(client_.history(), held);
      std::this_thread::sleep_for(work);
      if (election.leading()) {
        register_.end(client_.history(), section);
      } else {
        register_.give_up(client_.history(), section);
      }
    }
  }

  const workload_profile& profile_;
  std::mt19937_64 rng_;
  recorded_client client_;
  protected_register register_;
};

}  // namespace

int run_workload(const workload_options& options) {
  try {
    history_writer file(options.out_dir, options.proc);
    crew mates(options.stop_fd);
    {
      auto config = make_client_config(
          options.node_ports, options.out_dir / fmt::format("client-{}.log", options.proc));
      // As docs/fencing.md advises: the workload's longest TTL, so that a
      // node restarted without its data is re-seeded soon.
      if (options.profile.fenced_locks) config.max_fenced_ttl = options.profile.max_ttl;
      blocking_client client(config);
      std::vector<std::jthread> threads;
      for (int id = 0; id < options.workers; ++id) {
        threads.emplace_back([&options, &client, &file, &mates, id] {
          try {
            if (options.profile.leader_election) {
              contender(options, id, client, file).run(mates);
            } else {
              worker(options, id, client, file).run(mates);
            }
          } catch (const std::exception& error) {
            mates.fail(fmt::format("worker {}: {}", id, error.what()));
          }
        });
      }
    }  // every worker joined, then the client closed
    file.flush();
    if (auto failure = mates.failure()) {
      fmt::print(stderr, "redlock-torture client process {}: {}\n", options.proc, *failure);
      return 1;
    }
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "redlock-torture client process {}: {}\n", options.proc, error.what());
    return 1;
  }
}

}  // namespace redlock::torture
