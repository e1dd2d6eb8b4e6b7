#include "fault_proxy.hpp"

// GCC 12 warns, under -fsanitize=thread, about the std::atomic_thread_fence
// in Asio's std_fenced_block (TSan does not model fences; Asio's own locks
// order the handlers). It fires in every Asio user, not for anything here.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#include "resp_rewriter.hpp"

#include <redlock/detail/asio.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace redlock::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using boost::system::error_code;

struct fault_proxy::impl {
  class session;

  explicit impl(std::uint16_t upstream_port);

  /// Runs f on the proxy's thread and returns when it has run (rethrowing).
  template <typename F>
  void run_sync(F&& f);

  void accept();
  void start_session(tcp::socket socket);
  void forget(session* s);
  std::vector<std::shared_ptr<session>> snapshot() const;
  void pump_all();
  void change_partition(partition_mode mode);
  void stop();
  double jitter_share() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  tcp::endpoint upstream;
  std::uint16_t port = 0;

  // Only touched on the proxy's thread.
  delay request_delay{};
  delay reply_delay{};
  steady::duration batch_window{};
  bool replies_held = false;
  partition_mode mode = partition_mode::none;
  bool refusing = false;
  double ttl_factor = 1.0;
  bool stopping = false;
  std::mt19937_64 rng{std::random_device{}()};
  std::unordered_map<session*, std::shared_ptr<session>> sessions;

  // Read from any thread.
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> rewritten{0};
  std::atomic<std::uint64_t> from_clients{0};
  std::atomic<std::uint64_t> to_servers{0};
  std::atomic<std::uint64_t> from_servers{0};
  std::atomic<std::uint64_t> to_clients{0};
  std::atomic<std::uint64_t> dropped{0};

  std::thread thread;
};

namespace {

void reset_socket(tcp::socket& socket) {
  if (!socket.is_open()) return;
  error_code ignored;
  socket.set_option(asio::socket_base::linger(true, 0), ignored);
  socket.close(ignored);
}

}  // namespace

/// One client connection and its upstream connection.
class fault_proxy::impl::session : public std::enable_shared_from_this<session> {
 public:
  session(impl& owner, tcp::socket client)
      : owner_(owner),
        client_(std::move(client)),
        server_(owner.io),
        up_(owner.io, true),
        down_(owner.io, false) {}

  void start() {
    auto self = shared_from_this();
    error_code ignored;
    client_.set_option(tcp::no_delay(true), ignored);
    read(up_);
    server_.async_connect(owner_.upstream, [self](error_code ec) {
      if (self->closed_) return;
      if (ec) return self->abort();
      error_code ignored;
      self->server_.set_option(tcp::no_delay(true), ignored);
      self->server_connected_ = true;
      self->read(self->down_);
      self->pump(self->up_);
    });
  }

  void pump_all() {
    pump(up_);
    pump(down_);
  }

  /// partition_mode::drop began: what is queued is lost.
  void discard_queued() {
    for (direction* d : {&up_, &down_}) {
      for (const chunk& c : d->queue) owner_.dropped += c.bytes.size();
      if (!d->queue.empty()) lost_ = true;
      d->queue.clear();
    }
    if (rewriter_.buffered() > 0) lost_ = true;  // part of a command already went through
  }

  bool lost() const { return lost_; }

  /// RST on both sides.
  void abort() {
    if (closed_) return;
    auto self = shared_from_this();
    reset_socket(client_);
    reset_socket(server_);
    close();
  }

 private:
  struct chunk {
    steady::time_point read_at;
    double jitter_share = 0.0;  ///< Of the jitter this chunk waits, in [0, 1].
    std::string bytes;
    bool eof = false;  ///< The source sent FIN after the chunks before.
  };

  struct direction {
    direction(asio::io_context& io, bool upstream)
        : upstream(upstream), timer(io), read_pause(io) {}
    const bool upstream;  ///< client -> server
    std::deque<chunk> queue;
    std::string writing;  ///< The buffer of the write in flight.
    bool write_in_flight = false;
    bool eof_delivered = false;
    asio::steady_timer timer;
    std::optional<steady::time_point> timer_at;
    std::uint64_t timer_generation = 0;
    asio::steady_timer read_pause;  ///< With a batch window: reads at most once per window.
    std::array<char, 16 * 1024> buffer{};
  };

  tcp::socket& source(const direction& d) { return d.upstream ? client_ : server_; }
  tcp::socket& destination(const direction& d) { return d.upstream ? server_ : client_; }
  const delay& delay_of(const direction& d) const {
    return d.upstream ? owner_.request_delay : owner_.reply_delay;
  }

  bool blocked(const direction& d) const {
    if (owner_.mode == partition_mode::blackhole) return true;
    return d.upstream ? !server_connected_ : owner_.replies_held;
  }

  void read(direction& d) {
    auto self = shared_from_this();
    source(d).async_read_some(asio::buffer(d.buffer), [self, &d](error_code ec, std::size_t n) {
      self->on_read(d, ec, n);
    });
  }

  void on_read(direction& d, error_code ec, std::size_t n) {
    if (closed_) return;
    if (ec == asio::error::eof) {
      if (owner_.mode == partition_mode::drop) {
        lost_ = true;  // the FIN is lost too; the heal resets the connection
        return;
      }
      d.queue.push_back({steady::now(), owner_.jitter_share(), {}, true});
      pump(d);
      return;
    }
    if (ec) return abort();
    (d.upstream ? owner_.from_clients : owner_.from_servers) += n;
    if (owner_.mode == partition_mode::drop) {
      lost_ = true;
      owner_.dropped += n;
    } else {
      d.queue.push_back(
          {steady::now(), owner_.jitter_share(), std::string(d.buffer.data(), n), false});
      pump(d);
    }
    if (closed_) return;
    if (owner_.batch_window == steady::duration::zero()) return read(d);
    // Let bytes gather in the kernel for a window, then take them in one read.
    d.read_pause.expires_after(owner_.batch_window);
    d.read_pause.async_wait([self = shared_from_this(), &d](error_code ec) {
      if (!ec && !self->closed_) self->read(d);
    });
  }

  steady::time_point due(const direction& d, const chunk& c) const {
    const delay& dl = delay_of(d);
    const std::chrono::duration<double, std::milli> jitter(static_cast<double>(dl.jitter.count()) *
                                                           c.jitter_share);
    return c.read_at + dl.fixed + std::chrono::duration_cast<steady::duration>(jitter);
  }

  /// Sends on whatever is due, in order; arms the timer for the rest.
  void pump(direction& d) {
    if (closed_ || d.write_in_flight || blocked(d)) return;
    const auto now = steady::now();
    std::string out;
    while (!d.queue.empty()) {
      chunk& c = d.queue.front();
      const auto at = due(d, c);
      if (at > now) {
        arm(d, at + owner_.batch_window);
        break;
      }
      if (c.eof) {
        if (!out.empty()) break;  // the FIN follows once the data is written
        d.queue.pop_front();
        deliver_eof(d);
        return;
      }
      if (d.upstream) {
        const auto before = rewriter_.rewritten();
        rewriter_.set_factor(owner_.ttl_factor);
        rewriter_.feed(c.bytes, out);
        owner_.rewritten += rewriter_.rewritten() - before;
      } else {
        out += c.bytes;
      }
      d.queue.pop_front();
    }
    if (out.empty()) return;
    d.writing = std::move(out);
    d.write_in_flight = true;
    auto self = shared_from_this();
    asio::async_write(destination(d), asio::buffer(d.writing),
                      [self, &d](error_code ec, std::size_t n) {
                        d.write_in_flight = false;
                        if (self->closed_) return;
                        if (ec) return self->abort();
                        (d.upstream ? self->owner_.to_servers : self->owner_.to_clients) += n;
                        self->pump(d);
                      });
  }

  void arm(direction& d, steady::time_point at) {
    if (d.timer_at == at) return;
    d.timer_at = at;
    d.timer.expires_at(at);  // cancels a wait for another time
    const auto generation = ++d.timer_generation;
    auto self = shared_from_this();
    d.timer.async_wait([self, &d, generation](error_code) {
      if (self->closed_ || generation != d.timer_generation) return;
      d.timer_at.reset();
      self->pump(d);
    });
  }

  void deliver_eof(direction& d) {
    d.eof_delivered = true;
    error_code ignored;
    destination(d).shutdown(tcp::socket::shutdown_send, ignored);
    if (up_.eof_delivered && down_.eof_delivered) {
      auto self = shared_from_this();
      client_.close(ignored);
      server_.close(ignored);
      close();
    }
  }

  /// The sockets are closed (or being reset): forget everything.
  void close() {
    closed_ = true;
    error_code ignored;
    client_.close(ignored);
    server_.close(ignored);
    for (direction* d : {&up_, &down_}) {
      d->timer.cancel();
      d->read_pause.cancel();
      d->queue.clear();
    }
    owner_.forget(this);
  }

  impl& owner_;
  tcp::socket client_;
  tcp::socket server_;
  direction up_;
  direction down_;
  resp_rewriter rewriter_;
  bool server_connected_ = false;
  bool lost_ = false;  ///< Bytes were dropped: reset on heal.
  bool closed_ = false;
};

fault_proxy::impl::impl(std::uint16_t upstream_port)
    : upstream(asio::ip::address_v4::loopback(), upstream_port) {
  const tcp::endpoint local(asio::ip::address_v4::loopback(), 0);
  acceptor.open(local.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(local);
  acceptor.listen();
  port = acceptor.local_endpoint().port();
}

template <typename F>
void fault_proxy::impl::run_sync(F&& f) {
  if (io.get_executor().running_in_this_thread()) {
    f();
    return;
  }
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  asio::post(io, [&] {
    try {
      f();
    } catch (...) {
      error = std::current_exception();
    }
    // Notify under the lock: the waiter destroys cv as soon as it sees done.
    std::lock_guard lock(mutex);
    done = true;
    cv.notify_one();
  });
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return done; });
  if (error) std::rethrow_exception(error);
}

void fault_proxy::impl::accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket socket) {
    if (stopping || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors or the like: try again a little later, not in a busy loop.
      accept_retry.expires_after(std::chrono::milliseconds(10));
      accept_retry.async_wait([this](error_code wait_error) {
        if (!wait_error && !stopping) accept();
      });
      return;
    }
    if (refusing) {
      reset_socket(socket);
    } else {
      start_session(std::move(socket));
    }
    accept();
  });
}

void fault_proxy::impl::start_session(tcp::socket socket) {
  auto s = std::make_shared<session>(*this, std::move(socket));
  sessions.emplace(s.get(), s);
  open = sessions.size();
  s->start();
}

void fault_proxy::impl::forget(session* s) {
  sessions.erase(s);
  open = sessions.size();
}

std::vector<std::shared_ptr<fault_proxy::impl::session>> fault_proxy::impl::snapshot() const {
  std::vector<std::shared_ptr<session>> all;
  all.reserve(sessions.size());
  for (const auto& entry : sessions) all.push_back(entry.second);
  return all;
}

void fault_proxy::impl::pump_all() {
  for (const auto& s : snapshot()) s->pump_all();
}

void fault_proxy::impl::change_partition(partition_mode next) {
  const partition_mode previous = mode;
  mode = next;
  if (next == partition_mode::drop && previous != partition_mode::drop) {
    for (const auto& s : snapshot()) s->discard_queued();
  }
  if (previous == partition_mode::drop && next != partition_mode::drop) {
    for (const auto& s : snapshot()) {
      if (s->lost()) s->abort();
    }
  }
  pump_all();
}

void fault_proxy::impl::stop() {
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  accept_retry.cancel();
  for (const auto& s : snapshot()) s->abort();
}

fault_proxy::fault_proxy(std::uint16_t upstream_port)
    : impl_(std::make_unique<impl>(upstream_port)) {
  impl_->accept();
  impl_->thread = std::thread([state = impl_.get()] {
    for (;;) {
      try {
        state->io.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fault_proxy: handler threw: %s\n", e.what());
      }
    }
  });
}

fault_proxy::~fault_proxy() {
  impl_->run_sync([this] { impl_->stop(); });
  // Every socket and timer is closed: the aborted handlers start nothing new,
  // so run() returns once they have all run.
  impl_->work.reset();
  impl_->thread.join();
}

std::uint16_t fault_proxy::port() const { return impl_->port; }
std::uint16_t fault_proxy::upstream_port() const { return impl_->upstream.port(); }

namespace {

void check_delay(const fault_proxy::delay& d) {
  if (d.fixed.count() < 0 || d.jitter.count() < 0) {
    throw std::invalid_argument("fault_proxy: a delay cannot be negative");
  }
}

}  // namespace

void fault_proxy::set_request_delay(delay d) {
  check_delay(d);
  impl_->run_sync([this, d] {
    impl_->request_delay = d;
    impl_->pump_all();
  });
}

void fault_proxy::set_reply_delay(delay d) {
  check_delay(d);
  impl_->run_sync([this, d] {
    impl_->reply_delay = d;
    impl_->pump_all();
  });
}

void fault_proxy::set_batch_window(std::chrono::microseconds window) {
  if (window.count() < 0)
    throw std::invalid_argument("fault_proxy: a batch window cannot be negative");
  impl_->run_sync([this, window] {
    impl_->batch_window = window;
    impl_->pump_all();
  });
}

void fault_proxy::hold_replies(bool on) {
  impl_->run_sync([this, on] {
    impl_->replies_held = on;
    impl_->pump_all();
  });
}

void fault_proxy::partition(partition_mode mode) {
  impl_->run_sync([this, mode] { impl_->change_partition(mode); });
}

void fault_proxy::reset_connections() {
  impl_->run_sync([this] {
    for (const auto& s : impl_->snapshot()) s->abort();
  });
}

void fault_proxy::refuse_new_connections(bool on) {
  impl_->run_sync([this, on] { impl_->refusing = on; });
}

void fault_proxy::set_ttl_factor(double factor) {
  resp_rewriter check(factor);  // throws std::invalid_argument before anything changes
  impl_->run_sync([this, factor] {
    impl_->ttl_factor = factor;
    impl_->pump_all();
  });
}

std::size_t fault_proxy::connections() const { return impl_->open.load(); }

std::uint64_t fault_proxy::rewritten_arguments() const { return impl_->rewritten.load(); }

fault_proxy::traffic_counters fault_proxy::traffic() const {
  traffic_counters t;
  t.from_clients = impl_->from_clients.load();
  t.to_servers = impl_->to_servers.load();
  t.from_servers = impl_->from_servers.load();
  t.to_clients = impl_->to_clients.load();
  t.dropped = impl_->dropped.load();
  return t;
}

}  // namespace redlock::test
