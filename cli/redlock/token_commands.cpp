#include "token_commands.hpp"

#include "exec_command.hpp"
#include "exit_codes.hpp"

#include <fmt/format.h>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

#include <csignal>
#include <cstdio>
#include <stop_token>
#include <string>

namespace redlock::cli {
namespace {

/// Tells apart the two reasons a token no longer holds: another holder
/// has the resource on a quorum now (1), or nobody does (3: expired).
int lost_or_taken(session& s, const std::string& resource, const std::string& token) {
  const auto [ec, found] = s.complete<error_code, resource_status>([&](auto handler) {
    s.client().async_status(resource, s.status_timeout(), std::move(handler));
  });
  if (ec) {
    s.error(
        fmt::format("{} is not held by this token on a majority (who holds it could not be "
                    "read)",
                    resource));
    return lost;
  }
  if (found.quorum_holder && *found.quorum_holder != token) {
    s.error(fmt::format("{} is held by another token", resource));
    return held_elsewhere;
  }
  s.error(
      fmt::format("{} is not held by this token on a majority (expired or released)", resource));
  return lost;
}

lock adopted(session& s, const token_arguments& arguments) {
  try {
    return s.client().adopt(
        arguments.resource, arguments.token,
        s.lock_options_for(arguments.resource, arguments.ttl, arguments.lock_delay));
  } catch (const boost::system::system_error& e) {
    throw usage_problem{describe(e.code())};
  }
}

}  // namespace

int run_acquire(session& s, const token_arguments& arguments) {
  auto options = with_wait(
      s.lock_options_for(arguments.resource, arguments.ttl, arguments.lock_delay, arguments.fence),
      arguments.wait, arguments.waiting);
  std::stop_source stop;
  options.stop = stop.get_token();
  int interrupted_by = 0;
  boost::asio::signal_set interrupts(s.io(), SIGINT, SIGTERM, SIGHUP);
  interrupts.async_wait([&](error_code ec, int signal_number) {
    if (ec) return;
    interrupted_by = signal_number;
    stop.request_stop();  // an attempt in flight is undone first
  });
  if (s.options().verbose) s.say(fmt::format("acquiring {}", arguments.resource));
  wait_notices notices(s, arguments.resource, arguments.waiting.notice_interval);
  auto [result, held] = s.complete<error_code, lock>([&](auto handler) {
    s.client().async_acquire(arguments.resource, options, std::move(handler));
    notices.start();
  });
  notices.stop();
  interrupts.cancel();
  if (interrupted_by != 0) {
    s.say(fmt::format("interrupted by signal {} before acquiring {}", interrupted_by,
                      arguments.resource));
    if (!result) {
      s.complete<error_code, std::size_t>(
          [&](auto handler) { s.client().async_release(held, std::move(handler)); });
    }
    return signalled(interrupted_by);
  }
  if (result == errc::not_acquired) {
    s.say(fmt::format("{} is held elsewhere", arguments.resource));
    return held_elsewhere;
  }
  if (result) {
    s.error(fmt::format("could not acquire {}: {}", arguments.resource,
                        describe(result, held, s.client().config().nodes, s.answers())));
    return exit_status_for(result);
  }
  // The token on the first line, always; with --fence the fencing token on
  // the second, in decimal.
  std::printf("%s\n", held.token().c_str());
  if (arguments.fence) std::printf("%s\n", std::to_string(held.fence()).c_str());
  std::fflush(stdout);
  s.say(fmt::format("acquired {}; valid for {} ms", arguments.resource,
                    held.remaining_validity().count()));
  return done;
}

int run_extend(session& s, const token_arguments& arguments) {
  const auto handle = adopted(s, arguments);
  const auto [result, extended] = s.complete<error_code, lock>(
      [&](auto handler) { s.client().async_extend(handle, arguments.ttl, std::move(handler)); });
  if (result == errc::lock_lost) {
    // The extend may have landed on a minority that still held the token:
    // the lock is gone, so those keys must not outlive their old TTL.
    s.complete<error_code, std::size_t>(
        [&](auto handler) { s.client().async_release(handle, std::move(handler)); });
    return lost_or_taken(s, arguments.resource, arguments.token);
  }
  if (result) {
    s.error(fmt::format("could not extend {}: {}", arguments.resource, describe(result)));
    return exit_status_for(result);
  }
  s.say(fmt::format("extended {}; valid for {} ms", arguments.resource,
                    extended.remaining_validity().count()));
  return done;
}

int run_release(session& s, const token_arguments& arguments) {
  const auto handle = adopted(s, arguments);
  const auto [result, removed] = s.complete<error_code, std::size_t>(
      [&](auto handler) { s.client().async_release(handle, std::move(handler)); });
  if (result == errc::lock_lost) return lost_or_taken(s, arguments.resource, arguments.token);
  if (result) {
    s.error(fmt::format("could not release {}: {}", arguments.resource, result.message()));
    return exit_status_for(result);
  }
  if (s.options().verbose) {
    s.say(fmt::format("released {} on {} node(s)", arguments.resource, removed));
  }
  return done;
}

}  // namespace redlock::cli
