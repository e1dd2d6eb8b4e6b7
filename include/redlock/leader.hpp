// Leader election over a Redlock lock: campaign, keep leadership by
// auto-extension, and step down so a follower takes over at once.
#pragma once

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/lease_token.hpp>
#include <redlock/lock.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

namespace redlock {

namespace detail {
class campaign;
struct term_record;
}  // namespace detail

/// How a leader_election campaigns and keeps leadership.
struct campaign_options {
  /// TTL and timeouts of the lock that stands for leadership. Its retry
  /// delays pace the campaign (a follower also tries again as soon as the
  /// leader's release is announced); its attempt limit and wait timeout are
  /// ignored: a campaign goes on until stepped down. With `lock.fenced`
  /// each term is a fenced acquire: the lock the elected_handler gets has
  /// the term's fence() (see leader_election); its TTL must then be at
  /// most client_config::max_fenced_ttl.
  lock_options lock{};
  /// How leadership is kept (auto-extension and the lost-lock signal);
  /// on_lost here is ignored in favour of the election's own.
  keep_options keep{};
};

/// One term of leadership, as leader_election::async_wait_elected gives it:
/// what the elected_handler receives, and the term's number. Copies refer
/// to the same term.
struct leader_term {
  /// The lock that stands for leadership (the elected_handler's `held`).
  lock held;
  /// The term's token (the elected_handler's `term`): stop_requested()
  /// turns true when the term ends, read from the clock; check it before
  /// each side effect. It never turns false again.
  lease_token token;
  /// Which of this contender's terms it is: 1 for its first (terms() once
  /// it was won); 0 for an empty term.
  unsigned number = 0;

  /// The term's fencing token (held.fence()): with campaign_options
  /// lock.fenced, the same for the whole term and larger than that of every
  /// term that ended before this one was won; 0 otherwise.
  std::uint64_t fence() const noexcept { return held.fence(); }

 private:
  friend class leader_election;
  friend class detail::campaign;
  std::shared_ptr<detail::term_record> record_;  ///< How the term ended, and who waits for it.
};

/// One contender for leadership of `resource`.
///
/// campaign() starts trying to acquire the lock; once it is held,
/// `on_elected(held, term)` is called and the lock is kept extended. When
/// the lost-lock signal fires (an extension found the lock lost, or no
/// extension landed `keep.lost_margin` before the validity ends), `term` is
/// stopped, then `on_lost(reason)` is called; once the validity has run out
/// (so the term's work had its margin to stop before anyone else leads),
/// the lock is released where it may remain and, after a retry delay (so
/// that the followers woken by that release go first), the campaign
/// resumes. step_down() ends the campaign
/// and releases leadership at once, so that a follower takes over without waiting out the TTL.
///
/// Callbacks run on a strand of the client's executor, one at a time, and
/// none starts after step_down()'s handler was called or the election was
/// destroyed. The client must outlive the election's step-down.
/// Leadership is exactly as safe as the lock: see docs/safety.md.
///
/// Besides the callbacks, or instead of them (the constructor without
/// handlers), terms can be awaited with any completion token:
/// async_wait_elected() gives the term, async_wait_term_end() tells when
/// and why it ended, e.g. in a coroutine:
///
///     auto term = co_await election.async_wait_elected(boost::asio::use_awaitable);
///     // lead while !term.token.stop_requested(), sending term.fence()
///     error_code why;
///     co_await election.async_wait_term_end(term,
///         boost::asio::redirect_error(boost::asio::use_awaitable, why));
///
/// Fenced terms (campaign_options::lock.fenced): each term's lock carries a
/// fencing token, `held.fence()` in on_elected, which stays the same for
/// the whole term and is larger than that of every term that ended before
/// this one was won (for any contender of the same resource). A leader that
/// was deposed while paused can go on acting after its term ended; to
/// refuse it, the leader sends its fence with every write or command, and
/// whoever receives them (followers, storage, downstream services) keeps
/// the largest fence seen and rejects anything carrying a smaller one
/// (fence_checker, fenced_set_script in include/redlock/fencing.hpp).
class leader_election {
 public:
  /// Called when elected: the lock that stands for leadership, and the
  /// term's token. `term.stop_requested()` turns true when the term ends:
  /// stepped down, the lost-lock signal delivered, or its time passed (read
  /// from the clock, so a leader resumed after a pause sees it at once,
  /// before the executor has run anything). Check it before each side
  /// effect; it never turns false again. A handler taking a
  /// `std::stop_token` instead gets the delivered signal's token, which may
  /// lag the term's end.
  using elected_handler = std::function<void(const lock& held, lease_token term)>;
  /// Called when leadership is lost, with the lost-lock signal's reason.
  using lost_handler = std::function<void(error_code reason)>;

  /// Throws boost::system::system_error with errc::empty_resource or
  /// errc::invalid_keep_options (and the lock options' own argument
  /// errors), errc::fenced_ttl_too_long for a fenced lock whose TTL exceeds
  /// client_config::max_fenced_ttl.
  leader_election(client& owner, std::string resource, campaign_options options,
                  elected_handler on_elected, lost_handler on_lost);
  /// A contender without callbacks: wait for its terms with
  /// async_wait_elected() and async_wait_term_end(). Throws as the
  /// constructor above does.
  explicit leader_election(client& owner, std::string resource, campaign_options options = {});
  /// Steps down without waiting: the step-down is queued on the client's
  /// executor, which must still run it (destroy the election before the
  /// client, and keep the client's executor running until it has).
  ~leader_election();
  leader_election(const leader_election&) = delete;
  leader_election& operator=(const leader_election&) = delete;

  /// Starts campaigning; once only (later calls do nothing).
  void campaign();
  /// This contender leads now (thread-safe): elected, and the term's
  /// lost-lock signal has not come due, which this reads on time even while
  /// the client's executor is held up.
  bool leading() const noexcept;
  /// Terms won so far (thread-safe).
  unsigned terms() const noexcept;

  /// Ends the campaign: a pending attempt is cancelled (its votes undone),
  /// a current term is stopped (its token requested; on_lost is not called)
  /// and its lock released at once, so a follower takes over at once: stop
  /// the term's work before stepping down.
  ///
  /// Handler signature: `void(redlock::error_code)`: the release's error
  /// (errc::lock_lost if the term had lapsed), success otherwise.
  /// Completion condition: the campaign is over and nothing is held.
  /// Per-operation cancellation: none. The handler is never invoked from
  /// inside this function.
  template <class CompletionToken>
  auto async_step_down(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(error_code)>(
        [this](auto handler) {
          step_down(detail::make_completion<error_code>(std::move(handler), executor_));
        },
        token);
  }

  /// Waits until this contender leads.
  ///
  /// Handler signature: `void(redlock::error_code, redlock::leader_term)`.
  ///
  /// Completion condition: a term is current at the call (the wait then
  /// completes with that term; one whose lost-lock signal has come due does
  /// not count), or the next term is won (the handler runs after the
  /// elected_handler was called for it); or the campaign is over.
  ///
  /// Error codes: success with the term; boost::asio::error::operation_aborted,
  /// with an empty term, when the campaign ended before a term was won:
  /// stepped down (async_step_down(), or the election destroyed) or the
  /// client closed.
  ///
  /// Per-operation cancellation: none; step down to end every wait. Any
  /// number of waits may be pending (before campaign() too): each gets the
  /// term.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_wait_elected(CompletionToken&& token);

  /// Waits for the end of `term` (a term of any leader_election, from
  /// async_wait_elected()). Throws boost::system::system_error
  /// (errc::not_a_lock) for an empty term.
  ///
  /// Handler signature: `void(redlock::error_code reason)`.
  ///
  /// Completion condition: the term ended, now or before the call: its
  /// lost-lock signal was delivered, or it was stepped down. (The term's
  /// token reads the clock, so it may turn true before.)
  ///
  /// Error codes: when leadership was lost, the lost-lock signal's reason,
  /// the one the lost_handler gets (errc::lock_lost, errc::lock_expiring,
  /// errc::hold_limit_reached, errc::lock_released,
  /// errc::connection_closed); boost::asio::error::operation_aborted when
  /// the term ended by a step-down (async_step_down(), or the election
  /// destroyed).
  ///
  /// Per-operation cancellation: none. Any number of waits may be pending.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_wait_term_end(const leader_term& term, CompletionToken&& token);

 private:
  void step_down(detail::completion<error_code> done);
  void start_wait_elected(detail::completion<error_code, leader_term> done);
  void start_wait_term_end(const leader_term& term, detail::completion<error_code> done);

  client::executor_type executor_;
  std::shared_ptr<detail::campaign> campaign_;
};

}  // namespace redlock

#include <redlock/impl/leader.hpp>
