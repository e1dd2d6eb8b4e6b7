// A fake Redis node that misbehaves on purpose, for the hardening tests:
// what a broken or hostile server, or a broken network in front of one,
// can send.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace redlock::test {

enum class hostile_behaviour {
  garbage,          ///< Bytes that are no RESP at all, for every command.
  huge_bulk,        ///< "$1099511627776\r\n" (a 1 TiB bulk string), a few bytes, then nothing.
  endless_reply,    ///< That bulk header, then bytes without end.
  trickle,          ///< A valid "+OK" reply, one byte per 100 ms.
  reset_mid_reply,  ///< Half a reply, then a reset (SO_LINGER 0).
  error_always,     ///< "-ERR nope" to every command.
  silent,           ///< Accepts, reads everything, never sends a byte.
};

/// Its name in test output ("garbage", "huge bulk", ...).
std::string_view name_of(hostile_behaviour behaviour);

/// Listens on 127.0.0.1:port(), on its own thread, and treats every
/// connection per `behaviour`. It reads what clients send and counts the
/// commands in it (RESP arrays), so that replies, where there are any, go
/// one per command. Stops and joins in the destructor.
class hostile_server {
 public:
  explicit hostile_server(hostile_behaviour behaviour);
  ~hostile_server();
  hostile_server(const hostile_server&) = delete;
  hostile_server& operator=(const hostile_server&) = delete;

  std::uint16_t port() const;
  /// Connections accepted so far.
  std::size_t connections() const;
  /// Bytes sent so far, over all connections.
  std::uint64_t bytes_sent() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace redlock::test
