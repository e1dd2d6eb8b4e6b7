#include "once_per.hpp"

#include "exit_codes.hpp"

#include "args/duration.hpp"

#include <redlock/periodic.hpp>

#include <fmt/format.h>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <ctime>
#include <stop_token>
#include <string>

namespace redlock::cli {

namespace args = redlock::args;

namespace {

/// "2026-11-23T02:00:00Z" (with milliseconds when there are some).
std::string utc(wall_clock::time_point when) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(when);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(when - seconds);
  const std::time_t t = wall_clock::to_time_t(seconds);
  std::tm parts{};
  gmtime_r(&t, &parts);
  const auto text =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", parts.tm_year + 1900, parts.tm_mon + 1,
                  parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
  if (millis.count() == 0) return text + "Z";
  return fmt::format("{}.{:03}Z", text, millis.count());
}

std::string period_text(const once_per_arguments& once) {
  auto text = "--once-per " + args::format_duration(once.period);
  if (once.offset.count() > 0) text += " --offset " + args::format_duration(once.offset);
  return text;
}

}  // namespace

void check_once_per(const once_per_arguments& once) {
  const auto period = args::format_duration(once.period);
  if (once.period.count() <= 0) {
    throw usage_problem{fmt::format("--once-per {}: the period must be positive", period)};
  }
  if (once.offset >= once.period) {
    throw usage_problem{fmt::format("--offset {} must be less than --once-per {}",
                                    args::format_duration(once.offset), period)};
  }
  if (2 * once.max_skew >= once.period) {
    throw usage_problem{fmt::format("--max-skew {} must be less than half of --once-per {}",
                                    args::format_duration(once.max_skew), period)};
  }
}

int run_once_per(session& s, const exec_arguments& arguments, const once_per_arguments& once,
                 const inherited_signals& inherited, int& die_with) {
  check_once_per(once);
  due_claim_options options;
  options.when = schedule::every(once.period, once.offset);
  options.max_clock_skew = once.max_skew;
  // The claim's TTL is --ttl on top of the window; its attempts use --timeout.
  options.lock = s.lock_options_for(arguments.resource, arguments.ttl, arguments.lock_delay);
  // A machine late within one period's window must not find the next due
  // time nearer.
  if (const auto lag = effective_request_timeout(options.lock);
      2 * once.max_skew + lag >= once.period) {
    throw usage_problem{fmt::format(
        "--max-skew {}: twice it plus the request timeout ({}) must be less than --once-per {}",
        args::format_duration(once.max_skew), args::format_duration(lag),
        args::format_duration(once.period))};
  }
  std::stop_source interrupt;
  options.lock.stop = interrupt.get_token();

  // A signal while claiming: nothing has run; the claim is undone or given back.
  int interrupted_by = 0;
  boost::asio::signal_set signals(s.io());
  for (int forwarded : {SIGINT, SIGTERM, SIGHUP}) {
    if (!inherited.was_ignored(forwarded)) signals.add(forwarded);
  }
  signals.async_wait([&](error_code ec, int signal_number) {
    if (ec) return;
    interrupted_by = signal_number;
    interrupt.request_stop();
  });
  auto [ec, claim] = s.complete<error_code, due_claim>([&](auto handler) {
    async_claim_due(s.client(), arguments.resource, options, std::move(handler));
  });
  signals.cancel();
  const auto due = utc(claim.due.due);
  if (interrupted_by != 0) {
    s.say(fmt::format("interrupted by signal {} while claiming the period of {} due {}",
                      interrupted_by, arguments.resource, due));
    if (claim.outcome == claim_outcome::claimed) {
      s.complete<error_code, std::size_t>(
          [&](auto handler) { s.client().async_release(claim.claim, std::move(handler)); });
    }
    return signalled(interrupted_by);
  }
  switch (claim.outcome) {
    case claim_outcome::claimed:
      break;
    case claim_outcome::claimed_elsewhere:
      s.say(fmt::format("{}: the period due {} was claimed elsewhere; not run here",
                        arguments.resource, due));
      return done;
    case claim_outcome::contended:
      s.error(fmt::format(
          "{}: could not claim the period due {}: the claims of other machines kept splitting "
          "the votes until --max-skew {} was over; not run here",
          arguments.resource, due, args::format_duration(once.max_skew)));
      return arguments.conflict_exit_code;
    case claim_outcome::missed:
      s.error(fmt::format(
          "{}: no due time of {} within --max-skew {} of this machine's clock (the next is {}); "
          "not run",
          arguments.resource, period_text(once), args::format_duration(once.max_skew), due));
      return usage;
    case claim_outcome::failed:
      s.error(fmt::format("could not claim the period of {} due {}: {}", arguments.resource, due,
                          describe(ec)));
      return exit_status_for(ec);
  }
  if (s.options().verbose) {
    s.say(fmt::format("claimed the period of {} due {} (attempt {})", arguments.resource, due,
                      claim.attempts));
  }
  // CMD runs under the run lock, exactly as plain exec runs it.
  auto run = arguments;
  run.environment.emplace_back("REDLOCK_DUE_MS", claim.due.id);
  run.if_never_started = [&s, held = claim.claim] {
    // Another machine still within its window may take the period.
    s.client().async_release(held, [](error_code, std::size_t) {});
  };
  return run_exec(s, run, inherited, die_with);
}

}  // namespace redlock::cli
