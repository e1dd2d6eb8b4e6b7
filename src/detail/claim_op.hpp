// Claiming one due time against the nodes, as claim_fsm decides: shared by
// periodic_job and async_claim_due.
#pragma once

#include "detail/due_plan.hpp"

#include <redlock/client.hpp>
#include <redlock/periodic.hpp>

#include <string>

namespace redlock::detail {

struct claim_request {
  std::string resource;  ///< `<name>:due:<id>`.
  occurrence due;
  claim_window window;           ///< On the claimer's clock.
  milliseconds clock_offset{0};  ///< The claimer's clock is system_clock + this.
  /// Each attempt's options: try once, the claim's TTL, the request timeout
  /// (also the read's timeout and the retry spread), the stop token.
  lock_options lock;
};

/// Claims `request.due`; `done` gets the result (never from inside this
/// function). The client must outlive the claim unless request.lock.stop
/// is requested first.
void start_claim(client& owner, claim_request request, completion<error_code, due_claim> done);

}  // namespace redlock::detail
