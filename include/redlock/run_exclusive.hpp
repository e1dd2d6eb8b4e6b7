// Scoped locking for callbacks and coroutines: acquire, keep the lock
// extended while the caller's work runs, and release on every exit path.
#pragma once

#include <redlock/client.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/detail/exclusive_outcome.hpp>
#include <redlock/keeper.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace redlock {

/// What callback-style work calls once it is over: success, or its error.
using work_done = detail::unique_function<void(error_code)>;

namespace detail {

template <class Work>
struct exclusive_run {
  client& owner;
  Work work;
  completion<error_code> handler;
  keeper kept{};
  std::atomic<bool> work_over{false};

  exclusive_run(client& c, Work w, completion<error_code> h)
      : owner(c), work(std::move(w)), handler(std::move(h)) {}

  /// What the work gets as `done`: ends the work once, and if the work
  /// drops it without calling it, ends it as operation_aborted, so the lock
  /// is released and the handler called in any case.
  struct done_call {
    std::shared_ptr<exclusive_run> run;

    explicit done_call(std::shared_ptr<exclusive_run> r) : run(std::move(r)) {}
    done_call(done_call&& other) noexcept : run(std::move(other.run)) {}
    done_call& operator=(done_call&&) = delete;
    ~done_call() {
      if (run) run->end_work(run, boost::asio::error::operation_aborted);
    }
    void operator()(error_code ec) {
      auto self = std::move(run);
      if (self) self->end_work(self, ec);
    }
  };

  static void start(std::shared_ptr<exclusive_run> run, std::string resource, lock_options options,
                    keep_options keep) {
    auto& owner = run->owner;
    async_acquire_kept(owner, {std::move(resource)}, std::move(options), std::move(keep),
                       [run = std::move(run)](error_code ec, lock, keeper kept) mutable {
                         if (ec) return run->handler(ec);
                         run->kept = std::move(kept);
                         run->begin_work(run);
                       });
  }

  void begin_work(const std::shared_ptr<exclusive_run>& self) {
    try {
      work(kept, work_done(done_call(self)));
    } catch (...) {
      // Released on this exit path too (unless the work had ended first);
      // the exception goes on to run().
      if (!work_over.exchange(true)) kept.async_release([](error_code, std::size_t) {});
      throw;
    }
  }

  void end_work(const std::shared_ptr<exclusive_run>& self, error_code work_error) {
    if (work_over.exchange(true)) return;
    const auto lost_while_working = kept.lost_reason();
    kept.async_release([self, work_error, lost_while_working](error_code ec, std::size_t) {
      self->handler(judge_exclusive(work_error, lost_while_working, ec).error);
    });
  }
};

/// Starts the release of a coroutine's kept lock on every way out of its
/// frame, destruction included, unless it was released already.
struct release_on_exit {
  keeper& kept;
  bool released = false;
  ~release_on_exit() {
    if (!released && !kept.empty()) kept.async_release([](error_code, std::size_t) {});
  }
};

}  // namespace detail

/// Acquires `resource`, keeps it extended (keeper) while `work` runs, and
/// releases it when the work is done.
///
/// `work` is called as `work(redlock::keeper& kept, redlock::work_done done)`
/// on the client's executor once the lock is held; it calls `done(ec)` once
/// when it is over (from any thread). It should stop when kept.stop_token()
/// is requested or kept.async_wait_lost() completes.
///
/// Fencing: with options.fenced, kept.held().fence() (fences() for several
/// resources) is the run's fencing token, nonzero and the same for the
/// whole run (extensions keep it), larger than that of every fenced run or
/// acquire of the resource that completed before this one began. Send it
/// with every write the work makes (see lock_options::fenced and
/// include/redlock/fencing.hpp). With use_future or any other completion
/// token the work is called the same way.
///
/// Handler signature: `void(redlock::error_code)`.
///
/// Completion condition: the acquire failed; or the work called done and
/// the release completed.
///
/// Error codes: the acquire's errors (nothing ran); the error the work
/// passed to done; else the lost-lock signal's reason if it fired while the
/// work ran (the work may have run partly without the lock); else
/// errc::lock_lost if the release found the lock had lapsed; else success.
/// Other release failures are not reported: the work ran under the lock,
/// and keys a release could not reach expire with their TTL.
/// errc::invalid_keep_options (before acquiring) for bad `keep`.
///
/// Per-operation cancellation: options.stop cancels the acquire; the work
/// cancels itself. If the work drops `done` without calling it, that counts
/// as done(operation_aborted). If `work` throws when called (before calling
/// done), the release is started and the exception propagates out of the
/// executor's run(); the handler is not called.
///
/// The handler is never invoked from inside this function.
template <class Work, class CompletionToken>
auto async_run_exclusive(client& owner, std::string resource, lock_options options,
                         keep_options keep, Work work, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code)>(
      [&owner](auto handler, std::string resource, lock_options options, keep_options keep,
               Work work) {
        auto run = std::make_shared<detail::exclusive_run<Work>>(
            owner, std::move(work),
            detail::make_completion<error_code>(std::move(handler), owner.get_executor()));
        detail::exclusive_run<Work>::start(std::move(run), std::move(resource), std::move(options),
                                           std::move(keep));
      },
      token, std::move(resource), std::move(options), std::move(keep), std::move(work));
}

/// The coroutine form: `co_await run_exclusive(owner, resource, options,
/// keep, work)` acquires, keeps the lock extended while `co_await
/// work(kept)` runs (`work` takes a `redlock::keeper&` and returns an
/// awaitable), releases it, and returns what the work returned. With
/// options.fenced, kept.held().fence() is the run's fencing token (as for
/// async_run_exclusive).
///
/// Throws boost::system::system_error: with the acquire's error (nothing
/// ran); with errc::invalid_keep_options before acquiring; with the
/// lost-lock signal's reason if it fired while the work ran, or
/// errc::lock_lost if the release found the lock had lapsed (the work's
/// result is then dropped: it may have run partly without the lock). An
/// exception from the work starts the release and propagates. If the
/// coroutine frame is destroyed while suspended in the work, the release is
/// started too; it is sent only if the client's executor still runs (a
/// client on the same io_context that is being destroyed sends nothing, and
/// the key expires with its TTL).
template <class Work>
auto run_exclusive(client& owner, std::string resource, lock_options options, keep_options keep,
                   Work work)
    -> boost::asio::awaitable<typename std::invoke_result_t<Work&, keeper&>::value_type> {
  using result_type = typename std::invoke_result_t<Work&, keeper&>::value_type;
  error_code failed;
  // Made here: GCC 12 cannot keep an initializer list's array in a
  // coroutine frame ("array used as initializer").
  std::vector<std::string> resources;
  resources.push_back(std::move(resource));
  auto acquired =
      co_await async_acquire_kept(owner, std::move(resources), std::move(options), std::move(keep),
                                  boost::asio::redirect_error(boost::asio::use_awaitable, failed));
  if (failed) throw boost::system::system_error(failed, "redlock: run_exclusive");
  keeper& kept = std::get<1>(acquired);
  detail::release_on_exit guard{kept};
  std::exception_ptr failure;
  std::optional<std::conditional_t<std::is_void_v<result_type>, bool, result_type>> result;
  try {
    if constexpr (std::is_void_v<result_type>) {
      co_await work(kept);
      result.emplace(true);
    } else {
      result.emplace(co_await work(kept));
    }
  } catch (...) {
    failure = std::current_exception();
  }
  // An exception: the guard starts the release on the way out.
  if (failure) std::rethrow_exception(failure);
  const auto lost = kept.lost_reason();
  guard.released = true;
  error_code released;
  co_await kept.async_release(boost::asio::redirect_error(boost::asio::use_awaitable, released));
  if (const auto outcome = detail::judge_exclusive({}, lost, released); outcome.error) {
    throw boost::system::system_error(outcome.error, outcome.what);
  }
  if constexpr (!std::is_void_v<result_type>) co_return std::move(*result);
}

}  // namespace redlock
