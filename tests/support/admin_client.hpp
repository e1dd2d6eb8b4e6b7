// A synchronous hiredis connection for test assertions and admin commands.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace redlock::test {

/// Connects to 127.0.0.1:port. One client can outlive restarts and pauses of
/// its server: after an I/O error (timeout, server gone) the connection is
/// dropped, and a command reconnects when there is no connection or the
/// server has closed it. Not thread-safe.
class admin_client {
 public:
  /// Connects and AUTHs (with the user name if given) when a password is
  /// given. Throws std::runtime_error with the reason.
  explicit admin_client(std::uint16_t port, std::string password = {}, std::string username = {});
  ~admin_client();

  admin_client(const admin_client&) = delete;
  admin_client& operator=(const admin_client&) = delete;

  struct reply {
    enum class kind { string, status, error, integer, nil, array };
    kind type = kind::nil;
    std::string text;  ///< string, status and error
    long long integer = 0;
    std::vector<reply> elements;  ///< array
  };

  /// Sends one command. An error reply is returned, not thrown; an I/O
  /// error or timeout throws std::runtime_error.
  reply command(const std::vector<std::string>& args);

  // Helpers; these throw on an error reply too.
  std::optional<std::string> get(const std::string& key);
  long long pttl(const std::string& key);  ///< -2 missing, -1 no expiry
  bool exists(const std::string& key);
  std::vector<std::string> keys(const std::string& pattern = "*");
  void flushall();

  /// Connect and command timeout (default 5 s), so a paused server cannot
  /// hang a test. Applies to the current and later connections.
  void set_timeout(std::chrono::milliseconds timeout);
  /// Drops the connection and connects again; throws like the constructor.
  void reconnect();
  std::uint16_t port() const { return port_; }

 private:
  void connect();
  void disconnect();
  bool stale() const;
  reply checked(const std::vector<std::string>& args);  // throws on an error reply

  std::uint16_t port_;
  std::string password_;
  std::string username_;
  std::chrono::milliseconds timeout_{5000};
  redisContext* context_ = nullptr;
};

}  // namespace redlock::test
