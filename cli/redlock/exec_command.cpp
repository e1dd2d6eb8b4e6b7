#include "exec_command.hpp"

#include "child_process.hpp"
#include "exec_timing.hpp"
#include "exit_codes.hpp"
#include "kill_watchdog.hpp"

#include "args/duration.hpp"

#include <redlock/keeper.hpp>

#include <fmt/format.h>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <ctime>
#include <memory>
#include <stop_token>
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace redlock::cli {

namespace args = redlock::args;

lock_options with_wait(lock_options options, std::optional<std::chrono::milliseconds> wait,
                       const waiting_arguments& waiting) {
  using std::chrono::milliseconds;
  // A release wakes the waiter at once; the delays only pace the attempts
  // while a holder that crashed lets its key expire.
  options.retry = retry_policy::exponential(milliseconds{100}, milliseconds{1000}, 0);
  options = waiting_up_to(std::move(options), wait.value_or(wait_forever));
  // Waiting for a holder may take for ever; waiting for nodes that cannot
  // answer may not.
  options.unreachable_timeout = waiting.unreachable_timeout;
  return options;
}

namespace {

/// One run of `redlock exec`, driven by events on the io_context: the
/// acquire, signals to redlock, the child's end, the lost-lock signal and
/// the grace timer.
class exec_run {
 public:
  exec_run(session& s, const exec_arguments& arguments, const inherited_signals& inherited)
      : session_(s),
        arguments_(arguments),
        inherited_(inherited),
        forwarded_(s.io()),
        child_ended_(s.io(), SIGCHLD),
        grace_timer_(s.io()),
        notices_(s, arguments.resource, arguments.waiting.notice_interval) {
    // A signal ignored when redlock started (nohup, `cmd &`) stays ignored,
    // by redlock and by CMD.
    for (int forwarded : {SIGINT, SIGTERM, SIGHUP}) {
      if (!inherited.was_ignored(forwarded)) forwarded_.add(forwarded);
    }
  }

  /// The signal CMD died of, when redlock should die of it too.
  int die_with() const noexcept { return die_with_; }

  int run() {
    auto options = with_wait(session_.lock_options_for(arguments_.resource, arguments_.ttl,
                                                       arguments_.lock_delay, arguments_.fence),
                             arguments_.wait, arguments_.waiting);
    auto planned = plan_exec_timing(options.ttl, arguments_.grace, session_.options().drift_factor);
    if (auto* problem = std::get_if<std::string>(&planned)) throw usage_problem{*problem};
    timing_ = std::get<exec_timing>(planned);
    if (validate(keep_options_for_command(), options.ttl, session_.options().drift_factor)) {
      throw usage_problem{"--max-hold must not be negative"};
    }
    options.stop = stop_waiting_.get_token();
    wait_for_signal();
    if (session_.options().verbose) {
      session_.say(fmt::format("acquiring {}", arguments_.resource));
    }
    keep_options keep = keep_options_for_command();
    keep.on_lost = [this](error_code reason) { lost(reason); };
    async_acquire_kept(
        session_.client(), {arguments_.resource}, options, std::move(keep),
        [this](error_code ec, lock held, keeper kept) { acquired(ec, held, std::move(kept)); });
    notices_.start();
    try {
      session_.io().run();
    } catch (...) {
      // Nothing may leave CMD running on after redlock: it would run on
      // without the lock. The keys expire with their TTL.
      if (child_ && !child_done_) {
        child_->signal_group(SIGKILL);
        while (!child_->try_wait()) {
          pause_briefly();
        }
      }
      throw;
    }
    return exit_status_;
  }

 private:
  void wait_for_signal() {
    forwarded_.async_wait([this](error_code ec, int signal_number) {
      if (ec) return;
      on_signal(signal_number);
      wait_for_signal();
    });
  }

  void on_signal(int signal_number) {
    if (child_) {
      // CMD decides what the signal means; the lock is released once it ends.
      child_->signal_group(signal_number);
    } else if (!interrupted_by_) {
      interrupted_by_ = signal_number;
      stop_waiting_.request_stop();  // the acquire undoes what it set, then ends
    }
  }

  void acquired(error_code ec, const lock& held, keeper kept) {
    notices_.stop();
    if (interrupted_by_) {
      session_.say(fmt::format("interrupted by signal {} before acquiring {}", interrupted_by_,
                               arguments_.resource));
      if (!ec) {
        // Acquired as the signal arrived: CMD never runs.
        keeper_ = std::move(kept);
        return release(signalled(interrupted_by_));
      }
      return end(signalled(interrupted_by_));
    }
    if (ec) {
      if (ec == errc::not_acquired) {
        if (!arguments_.wait || arguments_.wait->count() > 0) {
          session_.say(
              fmt::format("{} is still held elsewhere; gave up waiting", arguments_.resource));
        } else {
          session_.say(fmt::format("{} is held elsewhere", arguments_.resource));
        }
        return end(arguments_.conflict_exit_code);
      }
      session_.error(
          fmt::format("could not acquire {}: {}", arguments_.resource,
                      describe(ec, held, session_.client().config().nodes, session_.answers())));
      return end(exit_status_for(ec));
    }
    keeper_ = std::move(kept);
    start_command(held);
  }

  /// The signal comes early enough for SIGTERM, the grace and SIGKILL to
  /// fit before the validity ends; the extensions start before it.
  keep_options keep_options_for_command() const {
    keep_options keep;
    keep.max_hold = arguments_.max_hold;
    keep.lost_margin = timing_.lost_margin;
    keep.extend_at = timing_.extend_at;
    return keep;
  }

  void start_command(const lock& held) {
    const auto validity = held.remaining_validity();
    if (keeper_.lost() || validity.count() <= 0) {
      // Already past its lost-lock point (a TTL too short for the nodes'
      // latency, or --max-hold): CMD must not start without the lock.
      session_.error(fmt::format(
          "lock on {} lost before the command started ({})", arguments_.resource,
          keeper_.lost_reason() ? keeper_.lost_reason().message() : "no validity left"));
      return release(arguments_.lost_exit_code);
    }
    std::vector<std::string> removed_env;
    // The password is redlock's, not CMD's.
    if (!session_.options().password_env.empty()) {
      removed_env.push_back(session_.options().password_env);
    }
    try {
      auto environment = arguments_.environment;
      environment.insert(environment.begin(),
                         {{"REDLOCK_RESOURCE", arguments_.resource},
                          {"REDLOCK_TOKEN", held.token()},
                          {"REDLOCK_VALIDITY_MS", std::to_string(validity.count())}});
      if (held.fenced()) {
        environment.insert(environment.begin() + 3,
                           {"REDLOCK_FENCE", std::to_string(held.fence())});
      }
      child_ = std::make_unique<child_process>(arguments_.command, std::move(environment),
                                               removed_env, inherited_);
    } catch (const std::system_error& e) {
      session_.error(fmt::format("cannot run '{}': {}", arguments_.command.front(),
                                 std::strerror(e.code().value())));
      const int status = e.code().value() == ENOENT ? command_not_found : cannot_execute;
      return release(status);
    }
    watchdog_.emplace(keeper_.held(), child_->pid(), timing_.kill_margin);
    if (session_.options().verbose) {
      session_.say(fmt::format("acquired {} (valid for {} ms); running pid {}", arguments_.resource,
                               validity.count(), child_->pid()));
    }
    wait_for_child();
  }

  void wait_for_child() {
    child_ended_.async_wait([this](error_code ec, int) {
      if (ec) return;
      if (auto status = child_->try_wait()) return child_finished(*status);
      wait_for_child();
    });
  }

  void lost(error_code reason) {
    // Before CMD started, start_command sees it; after CMD ended,
    // child_finished does.
    if (!child_ || child_done_ || lost_reason_) return;
    terminate(reason, "");
  }

  /// SIGTERM to CMD's group now, SIGKILL after the grace or kill_margin
  /// before the validity ends, whichever is first (a signal delivered late,
  /// or a lock the nodes say is gone, whose validity was cut to its
  /// discovery, leaves less). Signals first, says why after: a stderr that
  /// blocks must not delay them (the watchdog's SIGKILL does not wait for
  /// this thread either).
  void terminate(error_code reason, const char* when) {
    lost_reason_ = reason;
    const auto now = clock::now();
    const auto deadline = keeper_.held().validity_deadline();
    const auto kill_at = std::min(now + timing_.grace, deadline - timing_.kill_margin);
    child_->signal_group_members(SIGTERM);
    grace_timer_.expires_after(std::max(clock::duration::zero(), kill_at - now));
    grace_timer_.async_wait([this](error_code ec) {
      if (ec) return;
      grace_over_ = true;
      // The whole group, CMD reaped or not: its children got SIGTERM too.
      child_->signal_group_members(SIGKILL);
      if (child_done_) release(arguments_.lost_exit_code);
    });
    const auto as_ms = [](clock::duration d) {
      return args::format_duration(
          std::max(std::chrono::milliseconds{0}, std::chrono::floor<std::chrono::milliseconds>(d)));
    };
    const bool hold_limit = reason == errc::hold_limit_reached;
    session_.error(fmt::format(
        "{} on {}{} ({}); terminating the command: SIGTERM now, SIGKILL after {} (the lock's "
        "validity ends in {})",
        hold_limit ? "--max-hold reached" : "lock lost", arguments_.resource, when,
        reason.message(), as_ms(kill_at - now), as_ms(deadline - now)));
  }

  void child_finished(int status) {
    child_done_ = true;
    if (session_.options().verbose) session_.say(fmt::format("command exited with {}", status));
    if (keeper_.lost() && !lost_reason_) {
      // The signal's time had come but its handler had not run yet: what
      // CMD left in its group is ended as after any loss.
      terminate(keeper_.lost_reason(), " as the command ended");
    }
    if (lost_reason_) {
      // Others in CMD's group get until the grace timer's SIGKILL.
      if (!grace_over_ && child_->signal_group_members(0)) return;
      child_->signal_group_members(SIGKILL);
      grace_timer_.cancel();
      return release(arguments_.lost_exit_code);
    }
    grace_timer_.cancel();
    if (watchdog_) watchdog_->disarm();
    const int ended_by = child_->ended_by_signal();
    if ((ended_by == SIGINT || ended_by == SIGQUIT) && !inherited_.was_ignored(ended_by)) {
      die_with_ = ended_by;
    }
    release(status);
  }

  void release(int status) {
    // Once: the grace timer's completion may already be queued when the
    // command's end cancels it, and it releases too.
    if (std::exchange(releasing_, true)) return;
    if (watchdog_) watchdog_->disarm();
    keeper_.async_release([this, status](error_code ec, std::size_t) { released(ec, status); });
  }

  void released(error_code ec, int status) {
    if (ec == errc::lock_lost && !lost_reason_) {
      // The keeper's signal would have come first if the validity had run
      // out; a majority lost our key some other way (a node restarted
      // empty, a key deleted by hand).
      session_.error(
          fmt::format("{} was no longer held when released: the command may have run "
                      "without the lock",
                      arguments_.resource));
      return end(arguments_.lost_exit_code);
    }
    if (ec && ec != errc::lock_lost) {
      session_.warn(
          fmt::format("release of {} was not confirmed ({}); its keys expire with their "
                      "TTL",
                      arguments_.resource, ec.message()));
    }
    end(status);
  }

  void end(int status) {
    if (watchdog_) watchdog_->disarm();
    exit_status_ = status;
    forwarded_.cancel();
    child_ended_.cancel();
    grace_timer_.cancel();
    keeper_.stop();
    if (!child_ && arguments_.if_never_started) arguments_.if_never_started();
    session_.client().close();
  }

  static void pause_briefly() {
    timespec delay{0, 10'000'000};
    nanosleep(&delay, nullptr);
  }

  session& session_;
  const exec_arguments& arguments_;
  const inherited_signals& inherited_;
  bool child_done_ = false;
  bool grace_over_ = false;
  bool releasing_ = false;  ///< release() ran: the lock is on its way out.
  int die_with_ = 0;
  boost::asio::signal_set forwarded_;
  boost::asio::signal_set child_ended_;
  boost::asio::steady_timer grace_timer_;
  wait_notices notices_;
  std::stop_source stop_waiting_;
  int interrupted_by_ = 0;
  keeper keeper_;
  std::unique_ptr<child_process> child_;
  error_code lost_reason_;
  int exit_status_ = 0;
  exec_timing timing_;
  /// Declared last: destroyed (joined) first, before the child it watches.
  std::optional<kill_watchdog> watchdog_;
};

}  // namespace

int run_exec(session& s, const exec_arguments& arguments, const inherited_signals& inherited,
             int& die_with) {
  exec_run run(s, arguments, inherited);
  const int status = run.run();
  die_with = run.die_with();
  return status;
}

}  // namespace redlock::cli
