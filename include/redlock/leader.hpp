// Leader election over a Redlock lock: campaign, keep leadership by
// auto-extension, and step down so a follower takes over at once.
#pragma once

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/lease_token.hpp>
#include <redlock/lock.hpp>

#include <functional>
#include <memory>
#include <stop_token>
#include <string>

namespace redlock {

namespace detail {
class campaign;
}

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

 private:
  void step_down(detail::completion<error_code> done);

  client::executor_type executor_;
  std::shared_ptr<detail::campaign> campaign_;
};

}  // namespace redlock
