// A ready link's traffic: queueing commands (or holding and failing them
// while the link is down), writing, reading, and matching replies.
#include "detail/connection.hpp"

#include <hiredis.h>
#include <boost/asio/write.hpp>

#include <memory>

namespace redlock::detail {
namespace {

struct reply_deleter {
  void operator()(void* r) const { freeReplyObject(r); }
};

}  // namespace

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
                                 // Flushing after close(): close once everything is written.
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
                               // Flushing after close(): the replies are nobody's; the node
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
      if (!take_unasked(*static_cast<const redisReply*>(raw))) return fail(errc::protocol_error);
      // The kind's handler may have shut the connection down.
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

}  // namespace redlock::detail
