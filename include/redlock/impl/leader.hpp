// Template members of redlock::leader_election.
#pragma once

// Included at the end of <redlock/leader.hpp>; on its own it brings that in.
#include <redlock/leader.hpp>

#include <boost/system/system_error.hpp>

namespace redlock {

template <class CompletionToken>
auto leader_election::async_wait_elected(CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, leader_term)>(
      [this](auto handler) {
        start_wait_elected(
            detail::make_completion<error_code, leader_term>(std::move(handler), executor_));
      },
      token);
}

template <class CompletionToken>
auto leader_election::async_wait_term_end(const leader_term& term, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code)>(
      [this](auto handler, const leader_term& term) {
        if (!term.record_) {
          throw boost::system::system_error(errc::not_a_lock, "redlock: leader_election: no term");
        }
        start_wait_term_end(term,
                            detail::make_completion<error_code>(std::move(handler), executor_));
      },
      token, term);
}

}  // namespace redlock
