// What every command shares: the global options, the client built from
// them, and the io_context it runs on (the tool is single-threaded).
#pragma once

#include <redlock/client.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace redlock::cli {

class acquire_answers;

/// The options given before the command.
struct global_options {
  std::vector<node_config> nodes;
  std::string prefix;
  std::string user;
  std::string password_env;
  std::chrono::milliseconds request_timeout{0};  ///< 0: derived from the TTL.
  std::chrono::milliseconds connect_timeout{1000};
  double drift_factor = 0.01;
  /// --max-fenced-ttl: client_config::max_fenced_ttl.
  std::chrono::milliseconds max_fenced_ttl{10000};
  bool verbose = false;
  bool quiet = false;
  bool warn_without_aof = true;
  /// --tls and its files; --tls-insecure sets verify to false.
  tls_config tls;
};

/// A command's arguments were wrong in a way only seen after parsing; the
/// message names the argument.
struct usage_problem {
  std::string what;
};

class session {
 public:
  /// Throws usage_problem for a bad configuration (no nodes, a password
  /// variable that is not set, ...).
  explicit session(const global_options& options);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  boost::asio::io_context& io() noexcept { return io_; }
  redlock::client& client() noexcept { return *client_; }
  const global_options& options() const noexcept { return options_; }
  /// Each node's latest answer to an acquire attempt (see wait_notices).
  const acquire_answers& answers() const noexcept { return *answers_; }

  /// Prints "redlock: <message>" on stderr unless --quiet (errors always).
  void say(const std::string& message) const;
  void warn(const std::string& message) const;
  void error(const std::string& message) const;

  /// Lock options for a command's --ttl, --lock-delay, --fence and the
  /// global --timeout; throws usage_problem naming the argument when the
  /// library would refuse them (a fenced TTL above --max-fenced-ttl
  /// included).
  lock_options lock_options_for(const std::string& resource, std::chrono::milliseconds ttl,
                                std::chrono::milliseconds lock_delay = {},
                                bool fenced = false) const;

  /// The timeout of a status read: --timeout, else 500 ms.
  std::chrono::milliseconds status_timeout() const noexcept {
    return options_.request_timeout.count() > 0 ? options_.request_timeout
                                                : std::chrono::milliseconds{500};
  }

  /// Starts an operation with `start(handler)` and runs the io_context
  /// until the handler, of signature void(Results...), has been called.
  template <class... Results, class Start>
  std::tuple<Results...> complete(Start&& start) {
    std::optional<std::tuple<Results...>> results;
    std::forward<Start>(start)([&results](Results... r) { results.emplace(std::move(r)...); });
    io_.restart();
    while (!results && io_.run_one() > 0) {
    }
    // The client keeps work on the io_context until it is closed, so the
    // loop only ends with the handler called.
    return std::move(results.value());
  }

  /// Closes the client and runs the io_context until its work is done
  /// (deletes already queued are written out first).
  void finish();

 private:
  global_options options_;
  boost::asio::io_context io_;
  std::shared_ptr<acquire_answers> answers_;
  std::unique_ptr<redlock::client> client_;
};

/// The message for an error code; for an invalid argument, naming the option.
std::string describe(error_code ec);
/// describe(ec), then each node that did not grant `failed` and why (see
/// redlock::describe_nodes), in parentheses; for a node it was decided
/// without, its latest answer in `answers` counts.
std::string describe(error_code ec, const lock& failed, const std::vector<node_config>& nodes,
                     const acquire_answers& answers);

}  // namespace redlock::cli
