// One long-lived, pipelined connection to one Redis node: the shell that
// the two kinds share (command_connection, subscriber_connection). Asio
// owns the socket; hiredis only parses replies; the pipeline decides what
// is written and which callback a reply goes to, the admission whether the
// node may vote.
#pragma once

#include <redlock/config.hpp>
#include <redlock/detail/asio.hpp>
#include <redlock/detail/unique_function.hpp>
#include <redlock/observer.hpp>
#include "detail/admission.hpp"
#include "detail/logger.hpp"
#include "detail/pipeline.hpp"
#include "detail/reply.hpp"
#include "detail/timer.hpp"
#include "detail/tls.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct redisReader;
struct redisReply;

namespace redlock::detail {

class server_registry;

struct connection_settings {
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds stall_timeout{3000};
  reconnect_policy reconnect{};
  logger log{};
  /// Read INFO while connecting: refuse a replica, a cluster-mode node or a
  /// server that another node of `servers` is already connected to, and
  /// warn (once) about settings that weaken the lock.
  bool check_topology = false;
  bool warn_without_aof = true;
  /// Takes those settings instead of the log when set (client_config::on_risk).
  risk_sink on_risk;
  std::shared_ptr<server_registry> servers;
  std::size_t node_index = 0;  ///< This node's index in `servers`.
  /// Told about connection changes (command connections only); may be null.
  observer* watcher = nullptr;
};

/// Commands are written in the order send() is called and their replies
/// matched in that order. Each callback is called exactly once: with the
/// reply, or with an error if the connection fails or shuts down first.
/// A caller that stopped waiting (a timeout) simply ignores its callback;
/// the reply still consumes its own slot, so it can never be mistaken for
/// the reply to a later command.
///
/// While connecting, commands wait; while reconnecting after a failure
/// (capped exponential backoff with jitter) they fail at once with the error
/// that broke the connection. All members must be called on the strand.
class connection : public std::enable_shared_from_this<connection> {
 public:
  using callback = pipeline::callback;

  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Starts connecting (and reconnecting after failures) until close().
  void start();
  /// Queues a RESP-formatted command (copied only if it must wait for the
  /// connection).
  ///
  /// `retry_until` set: the command is idempotent and must reach the node
  /// while that time has not passed. If the connection fails before its
  /// reply (or is down when it is sent), it is sent again, in order, first
  /// thing on the next connection (its reply then says `repeated` if the
  /// first copy had been written); past `retry_until` it fails with
  /// errc::node_timeout. Left unset, a down node fails it at once.
  void send(std::string_view command, callback done) {
    send_command(command, std::move(done), pipeline::retry{});
  }
  /// The same with a command that is idempotent and shared by every node's
  /// connection: kept by reference for a resend instead of copied.
  void send(std::shared_ptr<const std::string> command, callback done,
            clock::time_point retry_until) {
    const std::string_view bytes = *command;  // before `command` is moved from
    send_command(bytes, std::move(done), {std::move(command), retry_until});
  }
  /// Closes for good; everything pending fails with errc::connection_closed.
  /// Commands already queued on a ready connection are still written out
  /// (for at most connect_timeout) before the socket closes; during the
  /// set-up, those waiting for it are, once it is done (within the connect
  /// timeout that bounds it), and their callbacks then get
  /// errc::connection_closed.
  void close();
  /// Drops every callback without calling it (see client_core::abandon).
  virtual void abandon() noexcept;
  /// While corked, commands queue without being written; uncork() writes
  /// everything queued in one write. Nests.
  void cork() noexcept { pipeline_.cork(); }
  void uncork();

  bool ready() const noexcept { return state_ == state::ready; }
  /// "host:port", for logs and observers.
  std::string endpoint() const { return describe(); }
  const node_config& node() const noexcept { return node_; }

  virtual ~connection();

 protected:
  connection(strand_type strand, node_config node, connection_settings settings);

  /// What the kind sends right after connecting, each of which must succeed.
  virtual std::vector<std::string> setup_commands() const = 0;
  /// Ready, corked: queues what must go before everything held meanwhile.
  virtual void queue_first() {}
  /// Ready, with everything due queued (and not closing).
  virtual void became_ready() {}
  /// A reply with no command waiting for it: true if the kind takes it (a
  /// pub/sub message), false for a protocol error.
  virtual bool take_unasked(const redisReply& r) {
    (void)r;
    return false;
  }

  /// Writes what the pipeline holds unless a write is in flight.
  void write_if_idle() {
    if (!pipeline_.write_in_flight()) write();
  }
  /// Queues for the next write (written now unless corked or writing).
  void enqueue_write(std::string_view command, callback done, pipeline::retry again = {},
                     bool repeated = false);
  /// `logged`: the caller has logged why, fail() need not.
  void fail(error_code ec, bool logged = false);
  std::string describe() const;

  const connection_settings& settings() const noexcept { return settings_; }
  pipeline& queued() noexcept { return pipeline_; }

 private:
  enum class state { idle, connecting, handshaking, ready, backoff, closed };

  void connect();
  void tls_handshake();
  void on_connected();
  /// The TCP socket: this connection's own, or the one under its TLS stream.
  tcp_socket& lowest_layer() noexcept;
  /// Calls `op` with the stream that reads and writes: TLS or plain TCP.
  template <class Op>
  void with_stream(Op&& op) {
    if (tls_) {
      op(tls_->stream);
    } else {
      op(socket_);
    }
  }
  void on_handshake_reply(error_code ec, const reply& r, bool last);
  /// AUTH and SELECT done: check the node, or become ready.
  void set_up();
  void send_info();
  void on_info_reply(error_code ec, const reply& r);
  /// The node may vote: its check passed, or INFO is not available to us.
  void accepted();
  /// The node passed the topology check (or none was made).
  void checked();
  /// `check_ahead`: send INFO ahead of the queued commands.
  void become_ready(bool check_ahead);
  void send_command(std::string_view command, callback done, pipeline::retry again);
  /// Replies are owed from now on: the stall timer watches for them.
  void note_owed_replies();
  void write();
  void read();
  void on_read(std::size_t bytes);
  void drop_socket();
  /// Fails or holds (for the next link) every command; see pipeline::on_link_lost.
  void fail_pending(error_code ec);
  void watch_for_stall();

  strand_type strand_;
  node_config node_;
  connection_settings settings_;
  boost::asio::ip::basic_resolver<boost::asio::ip::tcp, strand_type> resolver_;
  tcp_socket socket_;                                       ///< Unused with TLS.
  std::shared_ptr<boost::asio::ssl::context> tls_context_;  ///< Null: plain TCP.
  /// A TLS stream (with its own socket) and how many of its operations are
  /// still to complete: it must outlive them.
  struct tls_slot {
    tls_slot(strand_type strand, boost::asio::ssl::context& context) : stream(strand, context) {}
    tls_stream stream;
    unsigned pending = 0;
  };
  /// Counts an operation about to start on the current TLS stream, if any;
  /// its handler gives the count back.
  tls_slot* started_on_tls() noexcept {
    if (tls_) ++tls_->pending;
    return tls_.get();
  }
  std::unique_ptr<tls_slot> tls_;  ///< This connection's TLS stream; null: plain TCP.
  /// Streams of dropped connections whose operations have not all completed.
  std::vector<std::unique_ptr<tls_slot>> retired_tls_;
  timer connect_timer_;
  timer reconnect_timer_;
  timer stall_timer_;
  bool stall_timer_armed_ = false;
  clock::time_point last_progress_{};  ///< Last bytes read, or when replies became owed.

  state state_ = state::idle;
  /// Bumped on every (re)connect, so handlers of an older socket do nothing.
  std::uint64_t generation_ = 0;
  failure_series failures_;

  pipeline pipeline_;
  std::vector<char> read_buffer_;
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader_;
  admission admission_;
  bool checking_ = false;  ///< INFO sent on this connection, its reply not read yet.
  /// close() came during the set-up: finish it, send what is queued, close.
  bool closing_ = false;
};

}  // namespace redlock::detail
