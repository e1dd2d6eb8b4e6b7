// `redlock exec --once-per PERIOD`: CMD runs once per period across every
// machine running the same command line (a crontab line on each), through
// the library's one-shot claim (async_claim_due), then under the run lock
// as plain exec runs it.
#pragma once

#include "exec_command.hpp"
#include "session.hpp"
#include "signals.hpp"

#include <chrono>

namespace redlock::cli {

struct once_per_arguments {
  std::chrono::milliseconds period{0};                          ///< --once-per; 0: not given.
  std::chrono::milliseconds offset{0};                          ///< --offset.
  std::chrono::milliseconds max_skew{std::chrono::minutes(1)};  ///< --max-skew.
};

/// Checks --once-per, --offset and --max-skew; throws usage_problem naming
/// the option and its value.
void check_once_per(const once_per_arguments& once);

/// Claims the period's due time nearest this machine's clock; when this
/// machine wins it, runs CMD as run_exec does (same lock, signals, exit
/// statuses). Returns redlock's exit status; see docs/cli.md.
int run_once_per(session& s, const exec_arguments& arguments, const once_per_arguments& once,
                 const inherited_signals& inherited, int& die_with);

}  // namespace redlock::cli
