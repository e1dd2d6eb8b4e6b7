// The handle of an acquired lock.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/error.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock {

/// What one node said to the last operation on a lock.
struct node_outcome {
  enum class status : std::uint8_t {
    pending,         ///< No answer yet when the operation completed (it did not wait).
    acquired,        ///< The node holds the key with our token.
    held_elsewhere,  ///< The key exists with another owner's token.
    failed,          ///< Timeout, connection or server error: see `error`.
  };
  status state = status::pending;
  error_code error{};
};

/// A lock held, or last held, on a quorum of nodes. A plain value: copying
/// it does not copy ownership in Redis, and destroying it releases nothing
/// (call client::async_release).
class lock {
 public:
  lock() = default;

  /// False for a default-constructed handle or one from a failed operation.
  bool empty() const noexcept { return token_.empty(); }

  const std::string& resource() const noexcept { return resource_; }
  /// The random value stored in Redis that proves ownership.
  const std::string& token() const noexcept { return token_; }
  std::chrono::milliseconds ttl() const noexcept { return ttl_; }

  /// Until then the lock is guaranteed to be held (under the algorithm's
  /// assumptions: see docs/safety.md). Measured on redlock::clock.
  clock::time_point validity_deadline() const noexcept { return deadline_; }
  /// Time left before validity_deadline(), zero once it has passed.
  std::chrono::milliseconds remaining_validity(clock::time_point now = clock::now()) const noexcept;
  bool valid(clock::time_point now = clock::now()) const noexcept {
    return !empty() && now < deadline_;
  }

  /// One entry per configured node, in configuration order.
  const std::vector<node_outcome>& nodes() const noexcept { return nodes_; }

  /// Builds a handle. The library does this; public for tests and adapters.
  lock(std::string resource, std::string token, std::chrono::milliseconds ttl,
       clock::time_point deadline, std::vector<node_outcome> nodes)
      : resource_(std::move(resource)),
        token_(std::move(token)),
        ttl_(ttl),
        deadline_(deadline),
        nodes_(std::move(nodes)) {}

 private:
  std::string resource_;
  std::string token_;
  std::chrono::milliseconds ttl_{0};
  clock::time_point deadline_{};
  std::vector<node_outcome> nodes_;
};

}  // namespace redlock
