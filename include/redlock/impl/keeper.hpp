// Template members of redlock::keeper.
#pragma once

// Included at the end of <redlock/keeper.hpp>; on its own it brings that in.
#include <redlock/keeper.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <boost/version.hpp>
#if BOOST_VERSION >= 107700
#include <boost/asio/bind_cancellation_slot.hpp>
#endif

namespace redlock {

template <class CompletionToken>
auto keeper::async_wait_lost(CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code)>(
      [this](auto handler) {
        if (empty()) throw boost::system::system_error(errc::not_a_lock, "redlock: keeper");
        start_wait(detail::make_completion<error_code>(std::move(handler), get_executor()));
      },
      token);
}

template <class CompletionToken>
auto keeper::async_release(CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
      [this](auto handler) {
        if (empty()) throw boost::system::system_error(errc::not_a_lock, "redlock: keeper");
        auto slot = detail::cancellation_slot_of(handler);
        auto op = make_release(
            detail::make_completion<error_code, std::size_t>(std::move(handler), get_executor()));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token);
}

namespace detail {

/// async_acquire_kept's initiation: keep options checked, then the acquire,
/// then the keeper; the acquire gets the handler's cancellation slot.
struct initiate_acquire_kept {
  client& owner;

  template <class Handler>
  void operator()(Handler&& handler, std::vector<std::string> resources, lock_options options,
                  keep_options keep) const {
    auto slot = cancellation_slot_of(handler);
    // The keeper is made where the handler runs, once it can take it: not
    // on the client's strand, where it would keep extending a lock whose
    // handler never runs (and the handler's slot would be touched off its
    // executor).
    auto where = boost::asio::get_associated_executor(handler, owner.get_executor());
    auto done = make_completion<error_code, lock, keeper>(std::forward<Handler>(handler),
                                                          owner.get_executor());
    const auto drift = owner.config().drift_factor;
    // The acquire's own argument errors first, as async_acquire_all reports them.
    auto invalid = validate(resources, options, drift);
    if (!invalid) invalid = validate(keep, options.ttl, drift);
    if (invalid) {
      boost::asio::post(owner.get_executor(), [done = std::move(done), invalid]() mutable {
        done(invalid, lock{}, keeper{});
      });
      return;
    }
    auto then_keep = boost::asio::bind_executor(
        std::move(where), [&owner = owner, keep = std::move(keep), done = std::move(done)](
                              error_code ec, lock attempt) mutable {
          if (ec) return done(ec, std::move(attempt), keeper{});
          keeper kept(owner, attempt, std::move(keep));
          done({}, std::move(attempt), std::move(kept));
        });
#if BOOST_VERSION >= 107700
    if (slot.is_connected()) {
      owner.async_acquire_all(std::move(resources), std::move(options),
                              boost::asio::bind_cancellation_slot(slot, std::move(then_keep)));
      return;
    }
#endif
    (void)slot;
    owner.async_acquire_all(std::move(resources), std::move(options), std::move(then_keep));
  }
};

}  // namespace detail

template <class CompletionToken>
auto async_acquire_kept(client& owner, std::vector<std::string> resources, lock_options options,
                        keep_options keep, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, lock, keeper)>(
      detail::initiate_acquire_kept{owner}, token, std::move(resources), std::move(options),
      std::move(keep));
}

}  // namespace redlock
