#include "support/hostile_server.hpp"

#include <redlock/detail/asio.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <atomic>
#include <charconv>
#include <deque>
#include <optional>
#include <string>
#include <thread>

namespace redlock::test {
namespace {

using boost::asio::ip::tcp;
using error_code = boost::system::error_code;

/// Counts the complete commands (RESP arrays of bulk strings) in what a
/// client sent so far.
class command_counter {
 public:
  std::size_t feed(std::string_view bytes) {
    buffer_.append(bytes);
    std::size_t complete = 0;
    while (auto used = one_command()) {
      buffer_.erase(0, *used);
      ++complete;
    }
    return complete;
  }

 private:
  /// Bytes of the first command if it is all there.
  std::optional<std::size_t> one_command() const {
    std::size_t at = 0;
    const auto number_after = [&](char type) -> std::optional<long long> {
      if (at >= buffer_.size() || buffer_[at] != type) return std::nullopt;
      const auto end = buffer_.find("\r\n", at);
      if (end == std::string::npos) return std::nullopt;
      long long value = 0;
      std::from_chars(buffer_.data() + at + 1, buffer_.data() + end, value);
      at = end + 2;
      return value;
    };
    const auto count = number_after('*');
    if (!count) return std::nullopt;
    for (long long i = 0; i < *count; ++i) {
      const auto length = number_after('$');
      if (!length) return std::nullopt;
      at += static_cast<std::size_t>(*length) + 2;
      if (at > buffer_.size()) return std::nullopt;
    }
    return at;
  }

  std::string buffer_;
};

constexpr std::string_view huge_bulk_header = "$1099511627776\r\n";

}  // namespace

std::string_view name_of(hostile_behaviour behaviour) {
  switch (behaviour) {
    case hostile_behaviour::garbage:
      return "garbage";
    case hostile_behaviour::huge_bulk:
      return "huge bulk";
    case hostile_behaviour::endless_reply:
      return "endless reply";
    case hostile_behaviour::trickle:
      return "trickle";
    case hostile_behaviour::reset_mid_reply:
      return "reset mid-reply";
    case hostile_behaviour::error_always:
      return "error always";
    case hostile_behaviour::silent:
      return "silent";
  }
  return "?";
}

struct hostile_server::impl {
  hostile_behaviour behaviour;
  boost::asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0)};
  std::atomic<std::size_t> accepted{0};
  std::atomic<std::uint64_t> sent{0};
  std::thread thread;

  /// One client connection, treated per `behaviour`.
  struct session : std::enable_shared_from_this<session> {
    session(impl& owner, tcp::socket s) : server(owner), socket(std::move(s)), timer(owner.io) {}

    void start() { read(); }

    void read() {
      socket.async_read_some(
          boost::asio::buffer(input), [self = shared_from_this()](error_code ec, std::size_t n) {
            if (ec) return;
            self->on_commands(self->commands.feed(std::string_view(self->input.data(), n)));
            self->read();
          });
    }

    void on_commands(std::size_t count) {
      if (count == 0) return;
      const bool first = !answered;
      answered = true;
      switch (server.behaviour) {
        case hostile_behaviour::garbage:
          for (std::size_t i = 0; i < count; ++i) send("\x01\x02 not RESP \xff\r\n");
          return;
        case hostile_behaviour::huge_bulk:
          if (first) send(std::string(huge_bulk_header) + "abc");
          return;
        case hostile_behaviour::endless_reply:
          if (first) {
            send(std::string(huge_bulk_header));
            flood();
          }
          return;
        case hostile_behaviour::trickle:
          for (std::size_t i = 0; i < count; ++i) trickled.append("+OK\r\n");
          if (first) trickle_next();
          return;
        case hostile_behaviour::reset_mid_reply:
          if (first) {
            boost::asio::async_write(socket, boost::asio::buffer("$10\r\nabc", 8),
                                     [self = shared_from_this()](error_code, std::size_t n) {
                                       self->server.sent += n;
                                       error_code ignored;
                                       self->socket.set_option(
                                           boost::asio::socket_base::linger(true, 0), ignored);
                                       self->socket.close(ignored);
                                     });
          }
          return;
        case hostile_behaviour::error_always:
          for (std::size_t i = 0; i < count; ++i) send("-ERR nope\r\n");
          return;
        case hostile_behaviour::silent:
          return;
      }
    }

    /// Queued writes, in order.
    void send(std::string bytes) {
      outbox.push_back(std::move(bytes));
      if (outbox.size() == 1) write_front();
    }
    void write_front() {
      boost::asio::async_write(socket, boost::asio::buffer(outbox.front()),
                               [self = shared_from_this()](error_code ec, std::size_t n) {
                                 self->server.sent += n;
                                 self->outbox.pop_front();
                                 if (!ec && !self->outbox.empty()) self->write_front();
                               });
    }

    /// Bytes of the endless bulk string, until the client goes away.
    void flood() {
      boost::asio::async_write(socket, boost::asio::buffer(chunk),
                               [self = shared_from_this()](error_code ec, std::size_t n) {
                                 self->server.sent += n;
                                 if (!ec) self->flood();
                               });
    }

    void trickle_next() {
      timer.expires_after(std::chrono::milliseconds(100));
      timer.async_wait([self = shared_from_this()](error_code ec) {
        if (ec || !self->socket.is_open()) return;
        if (!self->trickled.empty()) {
          std::string one(1, self->trickled.front());
          self->trickled.erase(0, 1);
          self->send(std::move(one));
        }
        self->trickle_next();
      });
    }

    impl& server;
    tcp::socket socket;
    boost::asio::steady_timer timer;
    std::array<char, 16 * 1024> input{};
    command_counter commands;
    std::deque<std::string> outbox;
    std::string trickled;
    std::string chunk = std::string(64 * 1024, 'x');
    bool answered = false;
  };

  void accept() {
    acceptor.async_accept([this](error_code ec, tcp::socket socket) {
      if (ec) return;
      ++accepted;
      std::make_shared<session>(*this, std::move(socket))->start();
      accept();
    });
  }
};

hostile_server::hostile_server(hostile_behaviour behaviour) : impl_(std::make_unique<impl>()) {
  impl_->behaviour = behaviour;
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

hostile_server::~hostile_server() {
  impl_->io.stop();
  impl_->thread.join();
}

std::uint16_t hostile_server::port() const { return impl_->acceptor.local_endpoint().port(); }

std::size_t hostile_server::connections() const { return impl_->accepted.load(); }

std::uint64_t hostile_server::bytes_sent() const { return impl_->sent.load(); }

}  // namespace redlock::test
