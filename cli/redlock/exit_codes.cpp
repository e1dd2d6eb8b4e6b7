#include "exit_codes.hpp"

namespace redlock::cli {

int exit_status_for(error_code ec) {
  if (!ec) return done;
  // Configuration the nodes refuse: credentials, certificates, nodes that
  // are no independent masters.
  if (is_invalid_argument(ec) || is_permanent_node_failure(ec)) {
    return usage;
  }
  if (ec == errc::not_acquired) return held_elsewhere;
  if (ec == errc::lock_lost || ec == errc::lock_expired || ec == errc::lock_expiring ||
      ec == errc::hold_limit_reached || ec == errc::lock_released) {
    return lost;
  }
  // quorum_unreachable, validity_expired (the nodes answered too slowly),
  // timeouts and connection errors.
  return unreachable;
}

}  // namespace redlock::cli
