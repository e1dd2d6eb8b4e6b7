// The executor under a client's strand, and the strand type every I/O
// object of the library (sockets, timers, the resolver) runs on.
#pragma once

#include <redlock/detail/asio.hpp>

#include <utility>

namespace redlock::detail {

/// The client's executor (any_io_executor), with the answer to the
/// `blocking` query kept beside it.
///
/// Why: in Boost 1.74, querying `blocking` on an any_io_executor allocates
/// its answer (a class type returned through the type erasure, new'd and
/// deleted), and a strand asks its inner executor on every function it is
/// given (strand_executor_service::do_execute) and whenever it is itself
/// asked. With a strand over any_io_executor that was an allocation per
/// handler run on the strand.
///
/// The answer kept is exact: it is read once from the executor given, and
/// the only operations that can change it are require(blocking.never)
/// (never, by definition) and prefer(blocking.possibly) (unchanged when it
/// is already `possibly`, else asked again). The other properties passed
/// on (outstanding work, relationship) leave the blocking behaviour of
/// every Asio executor as it was.
///
/// Those two cannot be queried here, so Asio takes an untracked, forking
/// executor to be one already: prefer(untracked) or prefer(fork) on a
/// core_executor (or its strand) keeps what was preferred before. Nothing
/// in the library or in Asio's own operations prefers either on the
/// client's strand.
class core_executor {
 public:
  using inner_type = boost::asio::any_io_executor;

  /// Wraps the client's executor. A named function, not a constructor from
  /// any_io_executor: Asio asks whether a type is an executor by how it is
  /// copied, and a constructor taking any_io_executor (which converts from
  /// any executor) makes that question depend on itself (Boost 1.81, and
  /// 1.74 once the constructor is explicit).
  static core_executor wrap(inner_type inner) {
    auto blocking = boost::asio::query(inner, boost::asio::execution::blocking);
    return {std::move(inner), blocking};
  }

  /// The client's executor, as it was given.
  const inner_type& inner() const noexcept { return inner_; }

  boost::asio::execution_context& query(boost::asio::execution::context_t) const {
    return boost::asio::query(inner_, boost::asio::execution::context);
  }
  boost::asio::execution::blocking_t query(boost::asio::execution::blocking_t) const noexcept {
    return blocking_;
  }

  core_executor require(boost::asio::execution::blocking_t::never_t never) const {
    return {boost::asio::require(inner_, never), boost::asio::execution::blocking.never};
  }
  core_executor prefer(boost::asio::execution::blocking_t::possibly_t possibly) const {
    if (blocking_ == boost::asio::execution::blocking.possibly) return *this;
    return wrap(boost::asio::prefer(inner_, possibly));
  }
  core_executor prefer(boost::asio::execution::outstanding_work_t::tracked_t p) const {
    return {boost::asio::prefer(inner_, p), blocking_};
  }
  core_executor prefer(boost::asio::execution::outstanding_work_t::untracked_t p) const {
    return {boost::asio::prefer(inner_, p), blocking_};
  }
  core_executor prefer(boost::asio::execution::relationship_t::fork_t p) const {
    return {boost::asio::prefer(inner_, p), blocking_};
  }
  core_executor prefer(boost::asio::execution::relationship_t::continuation_t p) const {
    return {boost::asio::prefer(inner_, p), blocking_};
  }

  template <class Function>
  void execute(Function&& f) const {
    inner_.execute(std::forward<Function>(f));
  }

  friend bool operator==(const core_executor& a, const core_executor& b) noexcept {
    return a.inner_ == b.inner_;
  }
  friend bool operator!=(const core_executor& a, const core_executor& b) noexcept {
    return !(a == b);
  }

 private:
  core_executor(inner_type inner, boost::asio::execution::blocking_t blocking) noexcept
      : inner_(std::move(inner)), blocking_(blocking) {}

  inner_type inner_;
  boost::asio::execution::blocking_t blocking_;
};

/// The client's strand: its operations, connections and timers all run on it.
using strand_type = boost::asio::strand<core_executor>;

/// A new strand of `executor`, as the client makes its own.
inline strand_type make_core_strand(boost::asio::any_io_executor executor) {
  return strand_type(core_executor::wrap(std::move(executor)));
}

}  // namespace redlock::detail
