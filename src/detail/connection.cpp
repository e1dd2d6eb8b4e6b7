// A connection's life: connecting (TLS included), failing and reconnecting
// with backoff, shutting down and abandoning.
#include "detail/connection.hpp"
#include "detail/backoff.hpp"
#include "detail/random.hpp"

#include <fmt/format.h>
#include <hiredis.h>
#include <boost/asio/connect.hpp>

#include <utility>

namespace redlock::detail {
namespace {

constexpr std::size_t read_chunk = 16 * 1024;

}  // namespace

connection::connection(strand_type strand, node_config node, connection_settings settings)
    : strand_(strand),
      node_(std::move(node)),
      settings_(std::move(settings)),
      resolver_(strand_),
      socket_(strand_),
      connect_timer_(strand_),
      reconnect_timer_(strand_),
      stall_timer_(strand_),
      read_buffer_(read_chunk),
      reader_(create_reply_reader(), &redisReaderFree),
      admission_(settings_.warn_without_aof, settings_.servers, settings_.node_index, describe()) {
  if (!reader_) throw std::bad_alloc();
  if (node_.tls.enabled) tls_context_ = make_tls_context(node_.tls, describe());
}

connection::~connection() = default;

tcp_socket& connection::lowest_layer() noexcept {
  return tls_ ? tls_->stream.next_layer() : socket_;
}

std::string connection::describe() const { return fmt::format("{}:{}", node_.host, node_.port); }

void connection::start() {
  if (state_ == state::idle) connect();
}

void connection::connect() {
  state_ = state::connecting;
  const auto generation = ++generation_;
  auto self = shared_from_this();

  // Bounds the whole set-up, handshake included: commands queued behind it
  // must not wait for the stall timeout.
  connect_timer_.expires_after(settings_.connect_timeout);
  connect_timer_.async_wait([this, self, generation](error_code ec) {
    if (ec || generation != generation_) return;
    if (state_ != state::connecting && state_ != state::handshaking) return;
    fail(boost::asio::error::timed_out);
  });

  resolver_.async_resolve(
      node_.host, std::to_string(node_.port),
      [this, self, generation](error_code ec,
                               boost::asio::ip::tcp::resolver::results_type endpoints) {
        if (generation != generation_ || state_ != state::connecting) return;
        if (ec) return fail(ec);
        if (tls_context_) {
          // A TLS session cannot be reused after its socket closed: a new
          // stream per connection, kept alive by its pending operations.
          // Streams whose operations have all completed can go now.
          std::erase_if(retired_tls_, [](const auto& slot) { return slot->pending == 0; });
          tls_ = std::make_unique<tls_slot>(strand_, *tls_context_);
          if (const auto bad = prepare_tls_stream(tls_->stream, node_.tls, node_.host)) {
            return fail(bad);
          }
        }
        boost::asio::async_connect(
            lowest_layer(), endpoints,
            [this, self, generation](error_code ec, const boost::asio::ip::tcp::endpoint&) {
              if (generation != generation_ || state_ != state::connecting) return;
              if (ec) return fail(ec);
              if (tls_) return tls_handshake();
              on_connected();
            });
      });
}

void connection::tls_handshake() {
  const auto generation = generation_;
  auto* slot = tls_.get();
  ++slot->pending;
  slot->stream.async_handshake(boost::asio::ssl::stream_base::client,
                               [this, self = shared_from_this(), slot, generation](error_code ec) {
                                 --slot->pending;
                                 if (generation != generation_ || state_ != state::connecting)
                                   return;
                                 if (ec) {
                                   ec = tls_handshake_error(slot->stream, ec, node_.tls.verify);
                                   if (failures_.is_news(ec)) {
                                     settings_.log(log_level::error,
                                                   fmt::format("node {}: TLS handshake failed: {}",
                                                               describe(), ec.message()));
                                   }
                                   return fail(ec, true);
                                 }
                                 on_connected();
                               });
}

void connection::fail(error_code ec, bool logged) {
  if (state_ == state::closed || state_ == state::backoff) return;
  if (std::exchange(closing_, false)) {
    // Shut down during the set-up, which failed: no reconnect.
    state_ = state::closed;
    drop_socket();
    return fail_pending(errc::connection_closed);
  }
  // Log the loss of a checked, ready connection and the first failure of a
  // series, not every failed reconnect.
  if (!logged && ((state_ == state::ready && !checking_) || failures_.count() == 0)) {
    settings_.log(log_level::warning,
                  fmt::format("node {}: {}: {}", describe(),
                              state_ == state::connecting ? "cannot connect" : "connection lost",
                              ec.message()));
  }
  if (settings_.watcher) {
    const bool could_vote = state_ == state::ready && !checking_;
    settings_.watcher->on_connection(
        settings_.node_index, describe(),
        could_vote ? connection_event::disconnected : connection_event::failed, ec);
  }
  failures_.add(ec);
  checking_ = false;
  state_ = state::backoff;
  drop_socket();
  reconnect_timer_.expires_after(
      reconnect_delay(settings_.reconnect, failures_.count(), unit_random()));
  reconnect_timer_.async_wait([this, self = shared_from_this()](error_code waited) {
    if (waited || state_ != state::backoff) return;
    connect();
  });
  fail_pending(ec);
}

void connection::close() {
  if (state_ == state::closed || closing_) return;
  if ((state_ == state::connecting || state_ == state::handshaking) && pipeline_.held() > 0) {
    // What is queued for this node (a release's deletes, the SET of an
    // acquire that completed at a quorum without it) still goes out once
    // the set-up is done, within the connect timeout that bounds it, as it
    // would on a ready connection: a short-lived client must not leave keys
    // behind until their TTL, nor hold its lock on fewer nodes than it can.
    closing_ = true;
    return;
  }
  // Also with replies still owed: closing with unread data would reset the
  // connection, and a reset may discard bytes of ours not yet sent.
  const bool flush = state_ == state::ready && (pipeline_.write_in_flight() ||
                                                pipeline_.has_output() || pipeline_.awaiting() > 0);
  state_ = state::closed;
  reconnect_timer_.cancel();
  if (flush) {
    // Commands already queued (a release's deletes) still go out; nobody
    // waits for their replies. Bounded, in case the node stopped reading.
    connect_timer_.expires_after(settings_.connect_timeout);
    connect_timer_.async_wait(
        [this, self = shared_from_this(), generation = generation_](error_code ec) {
          if (!ec && generation == generation_) drop_socket();
        });
    pipeline_.uncork_all();
    if (pipeline_.wants_write()) {
      write();
    } else if (!pipeline_.write_in_flight()) {
      error_code ignored;
      lowest_layer().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    }
  } else {
    drop_socket();
  }
  fail_pending(errc::connection_closed);
}

void connection::abandon() noexcept {
  // Moved out first: destroying a callback may free what refers to us.
  auto commands = pipeline_.abandon();
  state_ = state::closed;
}

void connection::drop_socket() {
  ++generation_;  // handlers of this socket's operations now do nothing
  error_code ignored;
  lowest_layer().close(ignored);
  // Its operations, cancelled by the close, still refer to it: it is kept
  // until they have completed (connect() lets it go then).
  if (tls_) retired_tls_.push_back(std::move(tls_));
  resolver_.cancel();
  connect_timer_.cancel();
  stall_timer_.cancel();
  stall_timer_armed_ = false;
  pipeline_.drop_output();
  reader_.reset(create_reply_reader());  // a reader that saw a protocol error stays broken
  if (!reader_) throw std::bad_alloc();
}

void connection::fail_pending(error_code ec) {
  // Callbacks may send again (held, or failed fast) or shut down.
  for (auto& done : pipeline_.on_link_lost(clock::now(), state_ == state::closed)) {
    done(ec, reply{});
  }
}

}  // namespace redlock::detail
