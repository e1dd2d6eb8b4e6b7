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
class core_executor {
 public:
  using inner_type = boost::asio::any_io_executor;

  // Implicit, as executor conversions are: the client's executor, or an
  // io_context's (so that a strand_type can be made from either directly).
  core_executor(inner_type inner)  // NOLINT(google-explicit-constructor)
      : inner_(std::move(inner)),
        blocking_(boost::asio::query(inner_, boost::asio::execution::blocking)) {}
  template <class Allocator, unsigned Bits>
  core_executor(  // NOLINT(google-explicit-constructor)
      const boost::asio::io_context::basic_executor_type<Allocator, Bits>& inner)
      : core_executor(inner_type(inner)) {}

  /// The client's executor, as it was given.
  const inner_type& inner() const noexcept { return inner_; }

  boost::asio::execution_context& query(boost::asio::execution::context_t) const noexcept {
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
    return core_executor(boost::asio::prefer(inner_, possibly));
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

}  // namespace redlock::detail
