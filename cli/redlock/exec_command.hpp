// `redlock exec`: runs a command while holding a lock, like flock(1).
#pragma once

#include "session.hpp"
#include "signals.hpp"
#include "waiting.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace redlock::cli {

struct exec_arguments {
  std::string resource;
  std::vector<std::string> command;
  std::chrono::milliseconds ttl{30000};
  std::chrono::milliseconds lock_delay{0};
  /// Unset: wait as long as it takes; 0: one attempt.
  std::optional<std::chrono::milliseconds> wait;
  waiting_arguments waiting;
  std::chrono::milliseconds max_hold{0};
  /// Unset: default_grace (see exec_timing.hpp).
  std::optional<std::chrono::milliseconds> grace;
  int conflict_exit_code = 1;
  int lost_exit_code = 3;
  /// --fence: a fenced acquire; CMD gets the fence as REDLOCK_FENCE.
  bool fence = false;
  /// Set for CMD besides REDLOCK_RESOURCE, REDLOCK_TOKEN, REDLOCK_VALIDITY_MS
  /// (and REDLOCK_FENCE).
  std::vector<std::pair<std::string, std::string>> environment;
  /// Called before the client closes when CMD never started (--once-per
  /// gives its claim back).
  std::function<void()> if_never_started;
};

/// Lock options for waiting as the --wait / -n and --unreachable-timeout
/// arguments say.
lock_options with_wait(lock_options options, std::optional<std::chrono::milliseconds> wait,
                       const waiting_arguments& waiting);

/// Runs the command; returns redlock's exit status. When CMD died of
/// SIGINT or SIGQUIT, `die_with` is set to that signal: redlock should die
/// of it too (see die_of), after the session is finished.
int run_exec(session& s, const exec_arguments& arguments, const inherited_signals& inherited,
             int& die_with);

}  // namespace redlock::cli
