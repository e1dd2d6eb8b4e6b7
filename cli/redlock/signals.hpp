// What redlock found in its signal state at start, and what it sets up for
// itself. CMD gets back what redlock found, so `nohup redlock exec ...` or a
// shell's `cmd &` work as they would without redlock in between.
#pragma once

#include <signal.h>

namespace redlock::cli {

struct inherited_signals {
  sigset_t ignored;  ///< Signals that were SIG_IGN at start: CMD keeps them ignored.
  sigset_t mask;     ///< The blocked set at start: CMD starts with it.

  bool was_ignored(int signal_number) const noexcept {
    return sigismember(&ignored, signal_number) == 1;
  }
};

/// Records the inherited state, then: SIGPIPE, SIGTTOU and SIGTTIN ignored
/// (a broken stderr, or a write while CMD holds the terminal, must not end
/// or stop redlock while it holds a lock), and SIGCHLD, SIGINT, SIGTERM and
/// SIGHUP unblocked (redlock waits for them).
inherited_signals take_over_signals();

/// Dies of `signal_number` (default action), so that a shell running
/// redlock sees the command as interrupted (and stops a loop on ^C).
[[noreturn]] void die_of(int signal_number);

}  // namespace redlock::cli
