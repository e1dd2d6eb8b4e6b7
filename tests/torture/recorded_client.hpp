// A worker's handle on its process's blocking Redlock client that records
// every operation in the worker's history: an invoke event before the call,
// an ok or fail event after it. The client itself is shared by all the
// workers of the process (blocking_client is thread-safe).
#pragma once

#include <redlock/blocking_client.hpp>

#include "history.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::torture {

/// Every lock key of a torture run starts with this.
inline constexpr std::string_view key_prefix = "torture:";

/// A client configuration for nodes on 127.0.0.1 at these ports (the
/// proxies), with the torture key prefix, whose log lines go to `log_file`
/// (appended; the client's warnings would drown the output otherwise).
client_config make_client_config(const std::vector<std::uint16_t>& ports,
                                 const std::filesystem::path& log_file);

/// The stable name of an outcome the checker counts: a redlock error's
/// to_string ("not_acquired", "lock_lost", ...), or another error's message.
std::string reason(const error_code& ec);

class recorded_client {
 public:
  recorded_client(blocking_client& client, worker_history history);

  lock acquire(const std::string& res, const lock_options& options, error_code& ec);
  /// On failure the returned handle may be empty or not (the library is
  /// moving to returning the same lock): callers go by `ec`.
  lock extend(const lock& held, milliseconds ttl, error_code& ec);
  /// errc::lock_lost (the lock had lapsed before the release) is recorded
  /// like any failure; it is information, not a fault of the run.
  std::size_t release(const lock& held, error_code& ec);

  /// A keeper's extension seen by the worker (the validity moved): recorded
  /// as an extend that ends now with the new deadline, so the checker's
  /// lease is never longer than what the worker was told.
  void observed_extension(const lock& held);

  worker_history& history() { return history_; }
  blocking_client& client() { return client_; }

 private:
  blocking_client& client_;
  worker_history history_;
};

}  // namespace redlock::torture
