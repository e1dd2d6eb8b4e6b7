// Hooks for metrics and tracing: what the library does, as it happens.
#pragma once

#include <redlock/error.hpp>
#include <redlock/lock.hpp>

#include <chrono>
#include <cstddef>
#include <string_view>

namespace redlock {

/// The operations an observer hears about.
enum class operation_kind { acquire, extend, release };

/// The name used in logs and metrics: "acquire", "extend", "release".
std::string_view to_string(operation_kind kind) noexcept;

/// One operation, when its handler is about to be called.
struct operation_report {
  operation_kind kind;  ///< Which operation.
  /// The resource (the first one of a multi-resource acquire).
  std::string_view resource;
  error_code result;                 ///< What the handler gets.
  std::chrono::nanoseconds latency;  ///< From the start on the client's strand.
  /// Acquire: attempts made, those counted as refused without being sent
  /// included (a waiter's retry while a lock of its own client holds the
  /// resource: see docs/usage.md, Waiting); 1 for the others.
  unsigned attempts = 1;
};

/// One node's answer to one request of an operation (also a late one, after
/// the operation completed), or its failure.
struct node_report {
  operation_kind kind;        ///< The operation the request belonged to.
  std::size_t node;           ///< Index in client_config::nodes.
  std::string_view endpoint;  ///< "host:port".
  /// acquired: granted (or deleted, for a release); held_elsewhere: refused
  /// (another owner, or not ours); failed: see outcome.error.
  node_outcome outcome;
  std::chrono::nanoseconds latency;  ///< From the request's send to its answer.
};

/// A node's connection changing state.
enum class connection_event {
  connected,     ///< Connected, set up and checked: the node can vote.
  disconnected,  ///< A connection that could vote was lost.
  failed,        ///< An attempt to connect failed (or the node was refused).
};

/// The name used in logs and metrics: "connected", "disconnected", "failed".
std::string_view to_string(connection_event event) noexcept;

/// Receives what a client does. Install one with client_config::observer;
/// with none installed, the library pays one pointer test per event.
///
/// Every function is called on the client's strand (so never concurrently
/// for one client), must return quickly, and must not throw. The string
/// views are valid for the call only. The default implementations do
/// nothing: override what you need.
class observer {
 public:
  virtual ~observer() = default;

  /// An operation completed (its handler is about to be called).
  virtual void on_operation(const operation_report& /*report*/) {}
  /// A node answered a request, or the request failed on it.
  virtual void on_node_reply(const node_report& /*report*/) {}
  /// An acquire sends attempt number `attempt` (2 or more) after a failed
  /// one (`cause`: why the last attempt sent failed). Attempts counted as
  /// refused without being sent are not reported, so the numbers may skip.
  virtual void on_retry(std::string_view /*resource*/, unsigned /*attempt*/, error_code /*cause*/) {
  }
  /// An acquire found the resource held and waits for its release (or its
  /// retry delay) before trying again; again after each attempt counted as
  /// refused without being sent.
  virtual void on_wait(std::string_view /*resource*/) {}
  /// A kept lock gave its lost-lock signal (keep_options::on_lost).
  virtual void on_lock_lost(std::string_view /*resource*/, error_code /*reason*/) {}
  /// A node's connection changed state; `error` says why for failed and
  /// disconnected.
  virtual void on_connection(std::size_t /*node*/, std::string_view /*endpoint*/,
                             connection_event /*event*/, error_code /*error*/) {}

 protected:
  observer() = default;                            ///< For derived classes.
  observer(const observer&) = default;             ///< For derived classes.
  observer& operator=(const observer&) = default;  ///< For derived classes.
};

}  // namespace redlock
