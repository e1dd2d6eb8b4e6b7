// The redlock tool's exit statuses, shared by every command.
#pragma once

#include <redlock/error.hpp>

namespace redlock::cli {

enum exit_code : int {
  done = 0,
  held_elsewhere = 1,  ///< Not acquired, or the token is not the holder.
  usage = 2,           ///< Bad arguments or configuration.
  lost = 3,            ///< The lock was lost, or had expired.
  unreachable = 4,     ///< Too few nodes answered.
  cannot_execute = 126,
  command_not_found = 127,
};

/// 128 + the signal number, as shells report a signal.
constexpr int signalled(int signal_number) { return 128 + signal_number; }

/// The exit status for a failed lock operation.
int exit_status_for(error_code ec);

}  // namespace redlock::cli
