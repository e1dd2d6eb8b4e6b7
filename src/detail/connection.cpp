#include "detail/connection.hpp"
#include "detail/admission.hpp"
#include "detail/backoff.hpp"
#include "detail/commands.hpp"
#include "detail/random.hpp"

#include <fmt/format.h>
#include <hiredis.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include <utility>

namespace redlock::detail {
namespace {

constexpr std::size_t read_chunk = 16 * 1024;

struct reply_deleter {
  void operator()(void* r) const { freeReplyObject(r); }
};

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

boost::asio::ip::tcp::socket& connection::lowest_layer() noexcept {
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

void connection::on_connected() {
  error_code ignored;
  lowest_layer().set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  lowest_layer().set_option(boost::asio::socket_base::keep_alive(true), ignored);
  state_ = state::handshaking;

  // Each must succeed.
  const auto setup = setup_commands(node_, settings_.subscriber);

  read();
  if (setup.empty()) return set_up();
  auto self = shared_from_this();
  for (std::size_t i = 0; i < setup.size(); ++i) {
    const bool last = i + 1 == setup.size();
    enqueue_write(setup[i], [this, self, last](error_code ec, const reply& r) {
      if (!ec && r.is_error()) ec = classify_error_reply(r.text);
      on_handshake_reply(ec, r, last);
    });
  }
}

void connection::on_handshake_reply(error_code ec, const reply& r, bool last) {
  if (state_ != state::handshaking) return;
  if (ec) {
    if (failures_.is_news(ec)) {
      settings_.log(log_level::error,
                    fmt::format("node {}: connection set-up refused: {}{}", describe(),
                                ec.message(), r.is_error() ? fmt::format(" ({})", r.text) : ""));
    }
    return fail(ec, true);
  }
  if (last) set_up();
}

void connection::set_up() {
  if (!settings_.check_topology) {
    checked();
    return become_ready(false);
  }
  if (admission_.passed_before()) return become_ready(true);
  // The first check waits for its verdict before anything else is sent: a
  // node that turns out to be another node's server must not run a single
  // command (its SET NX could make the other node answer nil). The connect
  // timeout bounds it, as it does the rest of the set-up.
  send_info();
}

void connection::send_info() {
  checking_ = true;
  enqueue_write(
      format_command({"INFO"}),
      [this, self = shared_from_this()](error_code ec, const reply& r) { on_info_reply(ec, r); });
}

void connection::on_info_reply(error_code ec, const reply& r) {
  if (ec || !checking_) return;  // the connection failed first
  auto verdict = admission_.judge(r);
  if (!verdict.unchecked_warning.empty()) {
    settings_.log(log_level::warning,
                  fmt::format("node {}: {}", describe(), verdict.unchecked_warning));
  }
  if (verdict.refusal) {
    // Logged when a series of failures starts or changes cause, so that a
    // refusal met after a plain connection failure is still explained.
    if (failures_.is_news(verdict.refusal)) {
      settings_.log(log_level::error,
                    fmt::format("node {}: refused: {}", describe(), verdict.reason));
    }
    // Every command behind INFO fails with the refusal: no reply of this
    // node has been read yet, so none can count as a vote.
    return fail(verdict.refusal, true);
  }
  for (const auto& risk : verdict.new_risks) {
    if (settings_.on_risk) {
      const auto endpoint = describe();
      settings_.on_risk({risk.kind, settings_.node_index, endpoint, risk.explanation});
    } else {
      settings_.log(log_level::warning,
                    fmt::format("node {}: {}", describe(), default_risk_warning(risk)));
    }
  }
  accepted();
}

void connection::accepted() {
  checked();
  if (settings_.watcher) {
    settings_.watcher->on_connection(settings_.node_index, describe(), connection_event::connected,
                                     {});
  }
  if (state_ == state::handshaking) become_ready(false);
}

void connection::checked() {
  checking_ = false;
  if (failures_.end()) {
    settings_.log(log_level::info, fmt::format("node {}: reconnected", describe()));
  }
}

void connection::become_ready(bool check_ahead) {
  connect_timer_.cancel();
  state_ = state::ready;
  cork();
  // A node that passed before is checked again on every reconnect, with the
  // commands right behind INFO so that it costs no round trip: its reply is
  // read before theirs, and a refusal fails them before any reply counts.
  if (check_ahead) send_info();
  // Before anything else this connection sends: a restart since the node's
  // fencing state was last checked makes it lost (docs/fencing.md).
  if (!settings_.subscriber) {
    enqueue_write(fence_restart_check_command(make_token()),
                  [this, self = shared_from_this()](error_code ec, const reply& r) {
                    on_restart_check_reply(ec, r);
                  });
  }
  const bool none_owed = pipeline_.awaiting() == 0;
  auto expired = pipeline_.on_link_ready(clock::now());
  if (none_owed && pipeline_.awaiting() > 0) note_owed_replies();
  uncork();
  // Only once everything still due is queued: these callbacks may send.
  for (auto& done : expired) done(errc::node_timeout, reply{});
  if (std::exchange(closing_, false)) return shutdown();
  if (ready_handler_) ready_handler_();
}

void connection::send_unanswered(std::string_view command) {
  if (state_ != state::ready) return;
  pipeline_.push_unanswered(command);
  if (!pipeline_.write_in_flight()) write();
}

void connection::on_push(push_handler handler) { push_handler_ = std::move(handler); }

void connection::on_ready(unique_function<void()> handler) { ready_handler_ = std::move(handler); }

void connection::send_command(std::string_view command, callback done, pipeline::retry again) {
  const auto wait = [&] { pipeline_.hold(command, std::move(done), std::move(again)); };
  switch (closing_ ? state::closed : state_) {
    case state::ready:
      enqueue_write(command, std::move(done), std::move(again), false);
      return;
    case state::idle:
    case state::connecting:
    case state::handshaking:
      return wait();
    case state::backoff:
      // Read the clock only here: the common, ready case must not pay for it.
      if (again.command && clock::now() < again.until) return wait();
      break;
    case state::closed:
      break;
  }
  // Fail fast: a down node must not cost the caller a request timeout.
  const error_code ec = state_ == state::closed || closing_ ? error_code(errc::connection_closed)
                        : failures_.last()                  ? failures_.last()
                                                            : error_code(errc::node_unavailable);
  boost::asio::post(strand_, [done = std::move(done), ec]() mutable { done(ec, reply{}); });
}

void connection::enqueue_write(std::string_view command, callback done, pipeline::retry again,
                               bool repeated) {
  if (pipeline_.awaiting() == 0) note_owed_replies();
  pipeline_.push(command, std::move(done), std::move(again), repeated);
  if (pipeline_.wants_write()) write();
}

void connection::note_owed_replies() {
  last_progress_ = clock::now();
  if (!stall_timer_armed_) watch_for_stall();
}

void connection::uncork() {
  pipeline_.uncork();
  if (state_ == state::ready && pipeline_.wants_write()) write();
}

void connection::watch_for_stall() {
  stall_timer_armed_ = true;
  stall_timer_.expires_at(last_progress_ + settings_.stall_timeout);
  stall_timer_.async_wait(
      [this, self = shared_from_this(), generation = generation_](error_code ec) {
        if (ec || generation != generation_) return;  // whoever cancelled has disarmed it
        stall_timer_armed_ = false;
        if (pipeline_.awaiting() == 0) return;
        if (clock::now() - last_progress_ >= settings_.stall_timeout) {
          return fail(boost::asio::error::timed_out);
        }
        watch_for_stall();
      });
}

void connection::write() {
  // Everything queued since the last write goes out in one write.
  const auto bytes = pipeline_.take_write_buffer();
  const auto generation = generation_;
  with_stream([&](auto& stream) {
    boost::asio::async_write(stream, boost::asio::buffer(bytes.data(), bytes.size()),
                             [this, self = shared_from_this(), slot = started_on_tls(), generation](
                                 error_code ec, std::size_t) {
                               if (slot) --slot->pending;
                               if (generation != generation_) return;
                               pipeline_.on_write_done();
                               if (state_ == state::closed) {
                                 // Flushing after shutdown(): close once everything is written.
                                 if (ec) return drop_socket();
                                 if (pipeline_.has_output()) return write();
                                 // All out: tell the node, and close once it has answered and
                                 // closed its side (reading on, so that unread replies do not make
                                 // our close a reset that could discard what we wrote).
                                 error_code ignored;
                                 lowest_layer().shutdown(
                                     boost::asio::ip::tcp::socket::shutdown_send, ignored);
                                 return;
                               }
                               if (ec) return fail(ec);
                               if (pipeline_.wants_write()) write();
                             });
  });
}

void connection::read() {
  const auto generation = generation_;
  with_stream([&](auto& stream) {
    stream.async_read_some(boost::asio::buffer(read_buffer_),
                           [this, self = shared_from_this(), slot = started_on_tls(), generation](
                               error_code ec, std::size_t n) {
                             if (slot) --slot->pending;
                             if (generation != generation_) return;
                             if (state_ == state::closed) {
                               // Flushing after shutdown(): the replies are nobody's; the node
                               // closing its side ends it.
                               if (ec) return drop_socket();
                               return read();
                             }
                             if (ec) return fail(ec);
                             on_read(n);
                           });
  });
}

void connection::on_read(std::size_t bytes) {
  const auto generation = generation_;
  last_progress_ = clock::now();
  if (redisReaderFeed(reader_.get(), read_buffer_.data(), bytes) != REDIS_OK) {
    return fail(errc::protocol_error);
  }
  // A bulk length of 2^40, or a reply that never ends: hiredis would buffer
  // all of it.
  if (reader_->len - reader_->pos > max_unparsed_reply_bytes) {
    return fail(errc::protocol_error);
  }
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) return fail(errc::protocol_error);
    if (raw == nullptr) break;
    std::unique_ptr<void, reply_deleter> owned(raw);
    if (pipeline_.awaiting() == 0) {
      const auto& pushed = *static_cast<const redisReply*>(raw);
      if (push_handler_ && pushed.type == REDIS_REPLY_ERROR) {
        // A refused SUBSCRIBE (e.g. an ACL user without channel rights):
        // waiters fall back to polling. Said once per connection.
        if (!std::exchange(warned_push_error_, true))
          settings_.log(log_level::warning,
                        fmt::format("node {}: subscription refused: {}", describe(),
                                    std::string_view(pushed.str, pushed.len)));
        continue;
      }
      // A reply nobody asked for is a protocol error, except a pub/sub push.
      if (!push_handler_ || pushed.type != REDIS_REPLY_ARRAY || pushed.elements < 2 ||
          pushed.element[0]->type != REDIS_REPLY_STRING ||
          pushed.element[1]->type != REDIS_REPLY_STRING) {
        return fail(errc::protocol_error);
      }
      std::string_view payload;
      if (pushed.elements >= 3 && pushed.element[2]->type == REDIS_REPLY_STRING) {
        payload = std::string_view(pushed.element[2]->str, pushed.element[2]->len);
      }
      push_handler_(std::string_view(pushed.element[0]->str, pushed.element[0]->len),
                    std::string_view(pushed.element[1]->str, pushed.element[1]->len), payload);
      if (generation != generation_ || state_ == state::closed) return;
      continue;
    }
    auto [done, repeated] = pipeline_.pop_reply();
    auto answer = reply_view(*static_cast<const redisReply*>(raw));
    answer.repeated = repeated;
    done(error_code{}, answer);
    // The callback may have shut the connection down.
    if (generation != generation_ || state_ == state::closed) return;
  }
  read();
}

void connection::on_restart_check_reply(error_code ec, const reply& r) {
  // A server that answered the check with an error did not run it: still
  // loading a snapshot, busy with a script, or refusing the script's first
  // write (MISCONF after a failed save, NOREPLICAS under
  // min-replicas-to-write). It would run fenced commands sent once it takes
  // them again against a state nobody checked: connect again, which checks
  // again. Only NOPERM (this user may not run EVAL or touch the state key)
  // and WRONGTYPE (the state key is not a hash) let the connection go on:
  // every fenced command is refused the same way.
  if (ec || !r.is_error() || r.text.starts_with("NOPERM") || r.text.starts_with("WRONGTYPE")) {
    return;
  }
  settings_.log(log_level::warning,
                fmt::format("node {}: the fencing restart check did not run ({}); "
                            "reconnecting",
                            describe(), r.text));
  fail(classify_error_reply(r.text), true);
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

void connection::shutdown() {
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
  auto push = std::move(push_handler_);
  auto ready = std::move(ready_handler_);
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
