// Template members of redlock::periodic_job.
#pragma once

// Included at the end of <redlock/periodic.hpp>; on its own it brings that in.
#include <redlock/periodic.hpp>

namespace redlock {

template <class CompletionToken>
auto periodic_job::async_wait_run(CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, job_run)>(
      [this](auto handler) {
        start_wait_run(detail::make_completion<error_code, job_run>(std::move(handler), executor_));
      },
      token);
}

}  // namespace redlock
