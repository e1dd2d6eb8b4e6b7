// A user-space TCP proxy in front of one Redis node that injects latency,
// held replies, partitions, resets and a fast-running node clock, all
// controlled at run time by the test (this machine has no tc netem).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace redlock::test {

/// Listens on 127.0.0.1:port() and forwards every accepted connection to
/// 127.0.0.1:upstream_port (a new upstream connection per client; if that
/// connect fails, the client connection is reset).
///
/// The proxy runs its own io_context on its own thread. Every member
/// function is thread-safe; the control functions return once the new
/// setting applies, to data already queued inside the proxy too.
///
/// Each direction of each connection is a queue of chunks as they were read;
/// chunks leave in order, each when its delay is over, unless the direction
/// is blocked (blackhole, held replies). The proxy reads without limit, so
/// bytes pile up in it rather than in the kernel while blocked.
///
/// A FIN is forwarded in order after the data before it (it is queued like
/// data); a reset or an error on either side resets both sides at once.
class fault_proxy {
 public:
  /// Binds to a free port and starts forwarding. Throws boost::system::system_error.
  explicit fault_proxy(std::uint16_t upstream_port);
  /// Resets every connection, stops and joins the thread.
  ~fault_proxy();
  fault_proxy(const fault_proxy&) = delete;
  fault_proxy& operator=(const fault_proxy&) = delete;

  /// Where clients connect.
  std::uint16_t port() const;
  std::uint16_t upstream_port() const;

  /// Each chunk waits fixed + uniform[0, jitter] after it was read; order is
  /// kept (a chunk never leaves before the one read before it). A new delay
  /// applies to chunks already queued: their wait is recomputed from the time
  /// they were read. Throws std::invalid_argument on a negative duration.
  struct delay {
    std::chrono::milliseconds fixed{0};
    std::chrono::milliseconds jitter{0};
  };
  void set_request_delay(delay d);  ///< client -> server
  void set_reply_delay(delay d);    ///< server -> client
  /// Batching: each connection reads at most once per `window` per direction,
  /// and delayed chunks that fall due within `window` of the first one leave
  /// together in one write; so every byte is up to about two windows late.
  /// A real slow link costs this machine no CPU; this keeps a busy simulated
  /// one cheap (a few wake-ups per window, not several per command).
  /// Default 0: read at once, every chunk leaves on time.
  /// Throws std::invalid_argument on a negative window.
  void set_batch_window(std::chrono::microseconds window);

  /// While on, replies are kept in the proxy, not delivered; turning it off
  /// delivers them in order (subject to the reply delay).
  void hold_replies(bool on);

  enum class partition_mode {
    none,
    /// Nothing flows either way; bytes (and FINs) are kept and delivered on
    /// heal, as TCP retransmission delivers them after a partition heals.
    blackhole,
    /// Bytes are discarded both ways, those already queued in the proxy
    /// included; connections stay open. When the mode changes away from drop,
    /// every connection that lost bytes is reset: a TCP stream never has a
    /// hole, so the client must see a broken connection, not a corrupt one.
    /// A connection that lost nothing survives.
    drop,
  };
  void partition(partition_mode mode);

  /// Resets every current connection (SO_LINGER 0, then close), both sides.
  void reset_connections();
  /// While on, new connections are accepted and reset at once.
  void refuse_new_connections(bool on);

  /// Multiplies, on the way to the node, the PX of SET ... PX n, the n of
  /// PEXPIRE key n, and the last argument of EVAL/EVALSHA with numkeys 1 and
  /// exactly two ARGV (token, ttl): max(1, llround(n * factor)); 1.0 is off.
  /// Models a node whose clock runs fast (factor < 1: keys expire early).
  /// Applies to every command not yet sent to the node. See resp_rewriter.
  /// Throws std::invalid_argument unless factor is finite and > 0.
  void set_ttl_factor(double factor);

  /// Client connections currently open (refused ones never count).
  std::size_t connections() const;
  /// TTL arguments rewritten so far, over all connections.
  std::uint64_t rewritten_arguments() const;

  /// Byte counts since construction, over all connections; for tests that
  /// must wait until something reached the proxy.
  struct traffic_counters {
    std::uint64_t from_clients = 0;  ///< Read from clients.
    std::uint64_t to_servers = 0;    ///< Written to the node (after rewriting).
    std::uint64_t from_servers = 0;  ///< Read from the node.
    std::uint64_t to_clients = 0;    ///< Written to clients.
    std::uint64_t dropped = 0;       ///< Discarded by partition_mode::drop.
  };
  traffic_counters traffic() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace redlock::test
