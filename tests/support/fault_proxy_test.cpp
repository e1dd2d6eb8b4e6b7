// Checks of the fault proxy and of its RESP rewriter.
#include "fault_proxy.hpp"
#include "admin_client.hpp"
#include "redis_server.hpp"
#include "resp_rewriter.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

using redlock::test::admin_client;
using redlock::test::fault_proxy;
using redlock::test::redis_server;
using redlock::test::resp_rewriter;
using kind = admin_client::reply::kind;
using mode = fault_proxy::partition_mode;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

namespace {

// A command as a client sends it: an array of bulk strings.
std::string resp(std::initializer_list<std::string_view> args) {
  // append, not "literal" + std::string: GCC 12 -O3 warns (-Wrestrict, a false positive).
  std::string out = std::string("*").append(std::to_string(args.size())).append("\r\n");
  for (auto a : args) {
    out.append("$").append(std::to_string(a.size())).append("\r\n");
    out += a;
    out += "\r\n";
  }
  return out;
}

// Polls a condition that another thread makes true; false if it never does.
template <typename Predicate>
bool eventually(Predicate pred, milliseconds limit = milliseconds(5000)) {
  const auto deadline = steady::now() + limit;
  while (!pred()) {
    if (steady::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// A plain blocking TCP client, for what admin_client hides: it reconnects by
// itself, while these tests must see the very connection break.
class raw_client {
 public:
  enum class end { complete, timeout, closed, reset };
  struct received {
    std::string data;
    end how = end::complete;
  };

  explicit raw_client(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      const int error = errno;
      ::close(fd_);
      throw std::system_error(error, std::generic_category(), "connect");
    }
  }
  ~raw_client() { ::close(fd_); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  /// False if the connection is broken.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Reads until `bytes` bytes arrived, the connection ends, or the timeout.
  received receive(std::size_t bytes, milliseconds timeout = milliseconds(5000)) {
    received r;
    const auto deadline = steady::now() + timeout;
    while (r.data.size() < bytes) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady::now());
      if (left.count() <= 0) {
        r.how = end::timeout;
        return r;
      }
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;
      char buffer[4096];
      const auto want = std::min(sizeof buffer, bytes - r.data.size());
      const auto n = ::recv(fd_, buffer, want, 0);
      if (n == 0) {
        r.how = end::closed;
        return r;
      }
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        r.how = errno == ECONNRESET ? end::reset : end::closed;
        return r;
      }
      r.data.append(buffer, static_cast<std::size_t>(n));
    }
    return r;
  }

  /// One command, one reply of known length.
  std::string round_trip(std::string_view command, std::size_t reply_length) {
    if (!send(command)) return "(send failed)";
    return receive(reply_length).data;
  }

 private:
  int fd_;
};

const std::string pong = "+PONG\r\n";

// A reset, or a close seen after a failed send() took the ECONNRESET.
bool broken(raw_client::end how) {
  return how == raw_client::end::reset || how == raw_client::end::closed;
}

struct proxied_server {
  proxied_server() : server(redlock::test::find_free_port()) {
    server.start();
    proxy = std::make_unique<fault_proxy>(server.port());
  }
  redis_server server;
  std::unique_ptr<fault_proxy> proxy;
};

const char* const extend_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('pexpire', KEYS[1], ARGV[2])\n"
    "end\n"
    "return 0\n";

}  // namespace

// ---------------------------------------------------------------------------
// resp_rewriter

TEST_CASE("resp_rewriter: scale", "[support][proxy]") {
  CHECK(resp_rewriter::scale(10000, 0.1) == 1000);
  CHECK(resp_rewriter::scale(15, 0.1) == 2);  // llround(1.5)
  CHECK(resp_rewriter::scale(3, 0.1) == 1);   // never below 1
  CHECK(resp_rewriter::scale(1000, 2.5) == 2500);
  CHECK(resp_rewriter::scale(std::numeric_limits<long long>::max(), 10.0) ==
        std::numeric_limits<long long>::max());
  CHECK_THROWS_AS(resp_rewriter(0.0), std::invalid_argument);
  CHECK_THROWS_AS(resp_rewriter(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(resp_rewriter(std::numeric_limits<double>::infinity()), std::invalid_argument);
  resp_rewriter r;
  CHECK_THROWS_AS(r.set_factor(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK(r.factor() == 1.0);
}

namespace {

// Everything the rewriter must recognise or leave alone, as input and as the
// expected output at factor 0.1; rewrites counts the rewritten arguments.
struct stream_case {
  std::string input;
  std::string expected;
  std::uint64_t rewrites = 0;
};

stream_case mixed_stream() {
  stream_case s;
  const auto same = [&s](const std::string& command) {
    s.input += command;
    s.expected += command;
  };
  const auto changed = [&s](const std::string& from, const std::string& to) {
    s.input += from;
    s.expected += to;
    ++s.rewrites;
  };
  changed(resp({"SET", "k", "v", "NX", "PX", "10000"}),
          resp({"SET", "k", "v", "NX", "PX", "1000"}));
  changed(resp({"set", "k", "v", "px", "30000", "nx"}),
          resp({"set", "k", "v", "px", "3000", "nx"}));
  changed(resp({"SET", "k", "v", "PX", "3"}), resp({"SET", "k", "v", "PX", "1"}));
  changed(resp({"PEXPIRE", "k", "5000"}), resp({"PEXPIRE", "k", "500"}));
  changed(resp({"pexpire", "k", "5000", "GT"}), resp({"pexpire", "k", "500", "GT"}));
  changed(resp({"EVAL", extend_script, "1", "k", "tok", "5000"}),
          resp({"EVAL", extend_script, "1", "k", "tok", "500"}));
  changed(resp({"EvalSha", "0123456789abcdef0123456789abcdef01234567", "1", "k", "tok", "120"}),
          resp({"EvalSha", "0123456789abcdef0123456789abcdef01234567", "1", "k", "tok", "12"}));
  // Binary-safe: CRLF and RESP markers inside arguments.
  changed(resp({"SET", "a\r\n*3\r\n$", std::string_view("x\0y\r\n", 5), "PX", "100"}),
          resp({"SET", "a\r\n*3\r\n$", std::string_view("x\0y\r\n", 5), "PX", "10"}));
  // Left alone.
  same(resp({"SET", "k", "v"}));
  same(resp({"SET", "k", "v", "EX", "100"}));
  same(resp({"SET", "k", "v", "EX", "100", "NX"}));
  same(resp({"SET", "k", "v", "PX"}));
  same(resp({"SET", "k", "v", "PX", "0"}));
  same(resp({"SET", "k", "v", "PX", "-5"}));
  same(resp({"SET", "k", "v", "PX", "010"}));
  same(resp({"SET", "k", "v", "PX", "ten"}));
  same(resp({"SET", "k", "PX", "NX"}));
  same(resp({"PEXPIRE", "k"}));
  same(resp({"EXPIRE", "k", "100"}));
  same(resp({"PSETEX", "k", "1000", "v"}));
  same(resp({"EVAL", extend_script, "1", "k", "5000"}));
  same(resp({"EVAL", extend_script, "2", "k", "k2", "5000"}));
  same(resp({"EVAL", extend_script, "1", "k", "tok", "5000", "extra"}));
  same(resp({"GET", "k"}));
  same(resp({"PING"}));
  same("PING\r\n");  // inline commands
  same("SET k v PX 10000\r\n");
  same("\r\n");
  same("*0\r\n");  // empty arrays Redis skips
  same("*-1\r\n");
  changed(resp({"SET", "", "", "PX", "2000"}), resp({"SET", "", "", "PX", "200"}));
  same(resp({"GET", std::string(3000, 'x')}));
  return s;
}

std::string run(resp_rewriter& r, std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (auto p : pieces) r.feed(p, out);
  return out;
}

}  // namespace

TEST_CASE("resp_rewriter: output independent of how the stream is split", "[support][proxy]") {
  const stream_case s = mixed_stream();
  const std::string_view in = s.input;

  for (const double factor : {1.0, 0.1}) {
    CAPTURE(factor);
    const std::string& expected = factor == 1.0 ? s.input : s.expected;
    const std::uint64_t rewrites = factor == 1.0 ? 0 : s.rewrites;
    {
      resp_rewriter r(factor);
      CHECK(run(r, {in}) == expected);
      CHECK(r.rewritten() == rewrites);
      CHECK(r.buffered() == 0);
      CHECK_FALSE(r.passthrough());
    }
    bool all_equal = true;
    for (std::size_t cut = 0; cut <= in.size(); ++cut) {
      resp_rewriter r(factor);
      const std::string out = run(r, {in.substr(0, cut), in.substr(cut)});
      if (out != expected || r.rewritten() != rewrites || r.buffered() != 0) {
        all_equal = false;
        FAIL_CHECK("different output when split at byte " << cut);
        break;
      }
    }
    CHECK(all_equal);
    // Byte by byte, and in three pieces at a spread of cut pairs.
    {
      resp_rewriter r(factor);
      std::string out;
      for (char c : in) r.feed(std::string_view(&c, 1), out);
      CHECK(out == expected);
      CHECK(r.rewritten() == rewrites);
    }
    for (std::size_t a = 0; a <= in.size(); a += 37) {
      for (std::size_t b = a; b <= in.size(); b += 53) {
        resp_rewriter r(factor);
        if (run(r, {in.substr(0, a), in.substr(a, b - a), in.substr(b)}) != expected) {
          FAIL_CHECK("different output when split at bytes " << a << " and " << b);
          a = in.size();
          break;
        }
      }
    }
  }
}

TEST_CASE("resp_rewriter: holds back only commands it may rewrite", "[support][proxy]") {
  resp_rewriter r(0.5);
  std::string out;
  // A GET streams as soon as its name is known.
  r.feed("*2\r\n$3\r\nGE", out);
  CHECK(out.empty());
  r.feed("T\r\n$5\r\nab", out);
  CHECK(out == "*2\r\n$3\r\nGET\r\n$5\r\nab");
  CHECK(r.buffered() == 0);
  r.feed("cde\r\n", out);
  CHECK(out == resp({"GET", "abcde"}));

  // A SET with enough arguments waits for its last byte.
  out.clear();
  const std::string set = resp({"SET", "k", "v", "PX", "800"});
  r.feed(std::string_view(set).substr(0, set.size() - 1), out);
  CHECK(out.empty());
  CHECK(r.buffered() == set.size() - 1);
  r.set_factor(0.25);  // applies to the held-back command
  r.feed("\n", out);
  CHECK(out == resp({"SET", "k", "v", "PX", "200"}));
  CHECK(r.rewritten() == 1);

  // Factor 1.0 changes nothing and counts nothing.
  out.clear();
  r.set_factor(1.0);
  r.feed(set, out);
  CHECK(out == set);
  CHECK(r.rewritten() == 1);
}

TEST_CASE("resp_rewriter: a protocol error passes the rest through", "[support][proxy]") {
  for (const std::string& bad :
       {std::string("*2\r\n$3\r\nSET\r\n!oops\r\n"), std::string("*x\r\n"),
        std::string("*2\r\n$-1\r\n"), std::string("*1\n"), std::string("*1\r\n$99999999999\r\n"),
        "*5\r\n$3\r\nSET\r\n$" + std::string(70000, '1')}) {
    CAPTURE(bad);
    const std::string stream =
        resp({"SET", "a", "b", "PX", "100"}) + bad + resp({"SET", "k", "v", "PX", "100"});
    resp_rewriter r(0.1);
    const std::string out = run(r, {stream});
    CHECK(r.passthrough());
    CHECK(r.rewritten() == 1);
    CHECK(out == resp({"SET", "a", "b", "PX", "10"}) + bad + resp({"SET", "k", "v", "PX", "100"}));
    const std::size_t step = std::max<std::size_t>(1, stream.size() / 300);
    for (std::size_t cut = 0; cut <= stream.size(); cut += step) {
      resp_rewriter split(0.1);
      if (run(split, {std::string_view(stream).substr(0, cut),
                      std::string_view(stream).substr(cut)}) != out) {
        FAIL_CHECK("different output when split at byte " << cut);
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// fault_proxy against a real redis-server

TEST_CASE("fault_proxy: forwards commands and replies", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  CHECK(proxy.port() != 0);
  CHECK(proxy.port() != s.server.port());
  CHECK(proxy.upstream_port() == s.server.port());
  CHECK(proxy.connections() == 0);

  admin_client direct(s.server.port());
  {
    admin_client via(proxy.port());
    CHECK(via.command({"SET", "k", "v", "PX", "10000"}).text == "OK");
    CHECK(via.get("k") == "v");
    CHECK(direct.get("k") == "v");
    const auto ttl = direct.pttl("k");
    CHECK(ttl > 9000);
    CHECK(ttl <= 10000);
    const std::string big(1 << 20, 'b');  // larger than any socket buffer
    via.command({"SET", "big", big});
    CHECK(via.get("big") == big);
    CHECK(proxy.connections() == 1);
    admin_client second(proxy.port());
    CHECK(second.command({"PING"}).text == "PONG");
    CHECK(proxy.connections() == 2);
  }
  // Closing the clients closes their upstream connections too.
  CHECK(eventually([&] { return proxy.connections() == 0; }));
  CHECK(eventually([&] {
    const auto clients = direct.command({"CLIENT", "LIST"}).text;
    return std::count(clients.begin(), clients.end(), '\n') == 1;  // direct itself
  }));
  const auto t = proxy.traffic();
  CHECK(t.from_clients == t.to_servers);
  CHECK(t.from_servers == t.to_clients);
  CHECK(t.from_clients > (1u << 20));
  CHECK(t.dropped == 0);
  CHECK(proxy.rewritten_arguments() == 0);
}

TEST_CASE("fault_proxy: request and reply delays", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  admin_client via(proxy.port());
  CHECK(via.command({"PING"}).text == "PONG");  // connected through

  const auto timed_ping = [&via] {
    const auto start = steady::now();
    CHECK(via.command({"PING"}).text == "PONG");
    return steady::now() - start;
  };

  proxy.set_request_delay({milliseconds(100), milliseconds(0)});
  CHECK(timed_ping() >= milliseconds(100));
  proxy.set_request_delay({});
  proxy.set_reply_delay({milliseconds(100), milliseconds(0)});
  CHECK(timed_ping() >= milliseconds(100));
  proxy.set_request_delay({milliseconds(60), milliseconds(40)});
  CHECK(timed_ping() >= milliseconds(160));
  proxy.set_request_delay({});
  proxy.set_reply_delay({});
  CHECK(timed_ping() < milliseconds(100));

  CHECK_THROWS_AS(proxy.set_request_delay({milliseconds(-1), milliseconds(0)}),
                  std::invalid_argument);
  CHECK_THROWS_AS(proxy.set_reply_delay({milliseconds(0), milliseconds(-1)}),
                  std::invalid_argument);
}

TEST_CASE("fault_proxy: jitter keeps the byte order", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  proxy.set_request_delay({milliseconds(0), milliseconds(30)});
  proxy.set_reply_delay({milliseconds(0), milliseconds(30)});
  raw_client c(proxy.port());
  std::string expected;
  constexpr int count = 60;
  for (int i = 1; i <= count; ++i) {
    REQUIRE(c.send(resp({"INCR", "n"})));  // one write (one chunk) each
    expected.append(":").append(std::to_string(i)).append("\r\n");
  }
  const auto r = c.receive(expected.size());
  CHECK(r.how == raw_client::end::complete);
  CHECK(r.data == expected);
}

TEST_CASE("fault_proxy: a batch window keeps order and delays, and bounds the lateness",
          "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  proxy.set_batch_window(std::chrono::microseconds(5000));
  proxy.set_reply_delay({milliseconds(20), milliseconds(0)});
  raw_client c(proxy.port());
  std::string expected;
  constexpr int count = 40;
  const auto start = steady::now();
  for (int i = 1; i <= count; ++i) {
    REQUIRE(c.send(resp({"INCR", "n"})));  // one write (one chunk) each
    expected.append(":").append(std::to_string(i)).append("\r\n");
  }
  const auto r = c.receive(expected.size());
  const auto elapsed = steady::now() - start;
  CHECK(r.how == raw_client::end::complete);
  CHECK(r.data == expected);
  CHECK(elapsed >= milliseconds(20));
  CHECK(elapsed < milliseconds(20) + std::chrono::seconds(1));  // not lost in a window

  proxy.set_batch_window(std::chrono::microseconds(0));
  proxy.set_reply_delay({});
  CHECK(c.round_trip(resp({"PING"}), pong.size()) == pong);
  CHECK_THROWS_AS(proxy.set_batch_window(std::chrono::microseconds(-1)), std::invalid_argument);
}

TEST_CASE("fault_proxy: a new delay applies to bytes already queued", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  raw_client c(proxy.port());
  REQUIRE(c.round_trip(resp({"PING"}), pong.size()) == pong);

  proxy.set_request_delay({std::chrono::seconds(60), milliseconds(0)});
  const auto before = proxy.traffic();
  const auto start = steady::now();
  REQUIRE(c.send(resp({"PING"})));
  REQUIRE(eventually([&] { return proxy.traffic().from_clients > before.from_clients; }));
  CHECK(c.receive(pong.size(), milliseconds(100)).how == raw_client::end::timeout);
  proxy.set_request_delay({});
  CHECK(c.receive(pong.size()).data == pong);
  CHECK(steady::now() - start < std::chrono::seconds(30));
}

TEST_CASE("fault_proxy: held replies", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;

  SECTION("a command does not complete while replies are held") {
    admin_client via(proxy.port());
    via.set_timeout(milliseconds(200));
    CHECK(via.command({"PING"}).text == "PONG");
    proxy.hold_replies(true);
    CHECK_THROWS_AS(via.command({"SET", "k", "v"}), std::runtime_error);
    admin_client direct(s.server.port());
    CHECK(direct.get("k") == "v");  // the request went through
    proxy.hold_replies(false);
    CHECK(via.command({"PING"}).text == "PONG");  // on a fresh connection
  }

  SECTION("held replies are delivered in order when released") {
    raw_client c(proxy.port());
    REQUIRE(c.round_trip(resp({"PING"}), pong.size()) == pong);
    proxy.hold_replies(true);
    const auto before = proxy.traffic();
    REQUIRE(c.send(resp({"INCR", "n"}) + resp({"INCR", "n"})));
    REQUIRE(c.send(resp({"INCR", "n"})));
    // The node has answered all three; the proxy keeps the answers.
    REQUIRE(eventually([&] { return proxy.traffic().from_servers >= before.from_servers + 12; }));
    CHECK(c.receive(1, milliseconds(200)).how == raw_client::end::timeout);
    proxy.hold_replies(false);
    CHECK(c.receive(12).data == ":1\r\n:2\r\n:3\r\n");
  }
}

TEST_CASE("fault_proxy: blackhole keeps bytes and delivers them on heal", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  admin_client direct(s.server.port());
  admin_client via(proxy.port());
  CHECK(via.command({"PING"}).text == "PONG");

  proxy.partition(mode::blackhole);
  const auto before = proxy.traffic();
  auto pending = std::async(std::launch::async, [&via] { return via.command({"SET", "k", "v"}); });
  REQUIRE(eventually([&] { return proxy.traffic().from_clients > before.from_clients; }));
  CHECK(pending.wait_for(milliseconds(200)) == std::future_status::timeout);
  CHECK_FALSE(direct.exists("k"));
  CHECK(proxy.connections() == 1);

  proxy.partition(mode::none);
  const auto reply = pending.get();
  CHECK(reply.type == kind::status);
  CHECK(reply.text == "OK");
  CHECK(direct.get("k") == "v");
  CHECK(proxy.traffic().dropped == 0);

  SECTION("replies are kept too") {
    raw_client c(proxy.port());
    REQUIRE(c.round_trip(resp({"PING"}), pong.size()) == pong);
    // Hold the reply first, so that it is inside the proxy when the partition starts.
    proxy.hold_replies(true);
    const auto sent = proxy.traffic();
    REQUIRE(c.send(resp({"INCR", "n"})));
    REQUIRE(eventually([&] { return proxy.traffic().from_servers > sent.from_servers; }));
    proxy.partition(mode::blackhole);
    proxy.hold_replies(false);
    CHECK(c.receive(4, milliseconds(200)).how == raw_client::end::timeout);
    proxy.partition(mode::none);
    CHECK(c.receive(4).data == ":1\r\n");
  }
}

TEST_CASE("fault_proxy: drop discards bytes and resets on heal", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  admin_client direct(s.server.port());
  raw_client victim(proxy.port());
  raw_client idle(proxy.port());
  REQUIRE(victim.round_trip(resp({"PING"}), pong.size()) == pong);
  REQUIRE(idle.round_trip(resp({"PING"}), pong.size()) == pong);
  REQUIRE(proxy.connections() == 2);

  proxy.partition(mode::drop);
  const std::string set = resp({"SET", "dropped", "1"});
  REQUIRE(victim.send(set));
  REQUIRE(eventually([&] { return proxy.traffic().dropped >= set.size(); }));
  CHECK(victim.receive(1, milliseconds(200)).how == raw_client::end::timeout);
  CHECK_FALSE(direct.exists("dropped"));
  CHECK(proxy.connections() == 2);  // connections stay open

  proxy.partition(mode::none);
  // The connection that lost bytes is reset; the next command on it fails.
  victim.send(resp({"PING"}));  // may fail already, and then take the ECONNRESET
  const auto after = victim.receive(pong.size());
  CHECK(broken(after.how));
  CHECK(after.data.empty());
  CHECK_FALSE(direct.exists("dropped"));
  // One that lost nothing survives; new ones work.
  CHECK(idle.round_trip(resp({"PING"}), pong.size()) == pong);
  admin_client fresh(proxy.port());
  CHECK(fresh.command({"PING"}).text == "PONG");
  CHECK(eventually([&] { return proxy.connections() == 2; }));

  SECTION("bytes queued in the proxy are dropped too") {
    proxy.set_request_delay({std::chrono::seconds(60), milliseconds(0)});
    const auto before = proxy.traffic();
    REQUIRE(idle.send(resp({"SET", "queued", "1"})));
    REQUIRE(eventually([&] { return proxy.traffic().from_clients > before.from_clients; }));
    proxy.partition(mode::drop);
    proxy.set_request_delay({});
    proxy.partition(mode::none);
    CHECK(idle.receive(1).how == raw_client::end::reset);
    CHECK_FALSE(direct.exists("queued"));
  }
}

TEST_CASE("fault_proxy: reset_connections", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  raw_client first(proxy.port());
  raw_client second(proxy.port());
  REQUIRE(first.round_trip(resp({"PING"}), pong.size()) == pong);
  REQUIRE(second.round_trip(resp({"PING"}), pong.size()) == pong);
  REQUIRE(proxy.connections() == 2);

  proxy.reset_connections();
  CHECK(proxy.connections() == 0);
  CHECK(first.receive(1).how == raw_client::end::reset);
  second.send(resp({"PING"}));
  CHECK(broken(second.receive(pong.size()).how));

  raw_client third(proxy.port());
  CHECK(third.round_trip(resp({"PING"}), pong.size()) == pong);
  admin_client via(proxy.port());
  CHECK(via.command({"PING"}).text == "PONG");
}

TEST_CASE("fault_proxy: refuse_new_connections", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  raw_client existing(proxy.port());
  REQUIRE(existing.round_trip(resp({"PING"}), pong.size()) == pong);

  proxy.refuse_new_connections(true);
  raw_client refused(proxy.port());  // the kernel completes the handshake
  CHECK(refused.receive(1).how == raw_client::end::reset);
  CHECK_THROWS_AS(admin_client(proxy.port()).command({"PING"}), std::runtime_error);
  CHECK(proxy.connections() == 1);
  CHECK(existing.round_trip(resp({"PING"}), pong.size()) == pong);

  proxy.refuse_new_connections(false);
  raw_client later(proxy.port());
  CHECK(later.round_trip(resp({"PING"}), pong.size()) == pong);
  CHECK(proxy.connections() == 2);
}

TEST_CASE("fault_proxy: a node that is down resets the client", "[support][proxy]") {
  fault_proxy proxy(redlock::test::find_free_port());  // nothing listens there
  raw_client c(proxy.port());
  c.send(resp({"PING"}));
  CHECK(broken(c.receive(1).how));
  CHECK(eventually([&] { return proxy.connections() == 0; }));
}

TEST_CASE("fault_proxy: the node closing is passed on", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  {
    raw_client c(proxy.port());
    REQUIRE(c.round_trip(resp({"PING"}), pong.size()) == pong);
    c.send(resp({"QUIT"}));
    const auto r = c.receive(100);
    CHECK(r.data == "+OK\r\n");
    CHECK(r.how == raw_client::end::closed);
    CHECK(proxy.connections() == 1);  // half closed until the client closes too
  }
  CHECK(eventually([&] { return proxy.connections() == 0; }));
}

TEST_CASE("fault_proxy: the destructor resets open connections", "[support][proxy]") {
  redis_server server(redlock::test::find_free_port());
  server.start();
  auto proxy = std::make_unique<fault_proxy>(server.port());
  raw_client c(proxy->port());
  REQUIRE(c.round_trip(resp({"PING"}), pong.size()) == pong);
  proxy->partition(mode::blackhole);
  REQUIRE(c.send(resp({"PING"})));
  proxy.reset();
  CHECK(c.receive(1).how == raw_client::end::reset);
}

TEST_CASE("fault_proxy: TTL factor", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  admin_client direct(s.server.port());
  admin_client via(proxy.port());
  proxy.set_ttl_factor(0.1);

  const auto ttl_between = [&direct](const std::string& key, long long low, long long high) {
    const auto ttl = direct.pttl(key);
    INFO(key << " PTTL " << ttl);
    CHECK(ttl >= low);
    CHECK(ttl <= high);
  };

  // Rewritten.
  CHECK(via.command({"SET", "set-px", "v", "PX", "10000"}).text == "OK");
  ttl_between("set-px", 1, 1000);
  CHECK(via.command({"set", "set-lower", "v", "nx", "px", "10000"}).text == "OK");
  ttl_between("set-lower", 1, 1000);
  direct.command({"SET", "pexpire", "v"});
  CHECK(via.command({"PEXPIRE", "pexpire", "10000"}).integer == 1);
  ttl_between("pexpire", 1, 1000);
  direct.command({"SET", "eval", "tok"});
  CHECK(via.command({"EVAL", extend_script, "1", "eval", "tok", "5000"}).integer == 1);
  ttl_between("eval", 1, 500);
  const std::string sha = direct.command({"SCRIPT", "LOAD", extend_script}).text;
  direct.command({"SET", "evalsha", "tok"});
  CHECK(via.command({"EVALSHA", sha, "1", "evalsha", "tok", "8000"}).integer == 1);
  ttl_between("evalsha", 1, 800);
  CHECK(proxy.rewritten_arguments() == 5);

  // Untouched.
  CHECK(via.command({"SET", "plain", "v"}).text == "OK");
  CHECK(direct.pttl("plain") == -1);
  CHECK(via.command({"SET", "ex", "v", "EX", "100"}).text == "OK");
  ttl_between("ex", 90000, 100000);
  const char* const one_arg = "return redis.call('pexpire', KEYS[1], ARGV[1])";
  direct.command({"SET", "eval-1-arg", "v"});
  CHECK(via.command({"EVAL", one_arg, "1", "eval-1-arg", "5000"}).integer == 1);
  ttl_between("eval-1-arg", 4000, 5000);
  direct.command({"SET", "eval-2-keys", "v"});
  CHECK(via.command({"EVAL", one_arg, "2", "eval-2-keys", "other", "5000"}).integer == 1);
  ttl_between("eval-2-keys", 4000, 5000);
  CHECK(via.get("set-px") == "v");
  CHECK(proxy.rewritten_arguments() == 5);

  // Back to 1.0: off.
  proxy.set_ttl_factor(1.0);
  CHECK(via.command({"SET", "off", "v", "PX", "10000"}).text == "OK");
  ttl_between("off", 9000, 10000);
  CHECK(proxy.rewritten_arguments() == 5);
  // Above 1: the node's clock runs slow.
  proxy.set_ttl_factor(3.0);
  CHECK(via.command({"SET", "slow", "v", "PX", "10000"}).text == "OK");
  ttl_between("slow", 20001, 30000);
  CHECK(proxy.rewritten_arguments() == 6);

  CHECK_THROWS_AS(proxy.set_ttl_factor(0.0), std::invalid_argument);
  CHECK_THROWS_AS(proxy.set_ttl_factor(-2.0), std::invalid_argument);
}

TEST_CASE("fault_proxy: a TTL factor set while a command waits applies to it", "[support][proxy]") {
  proxied_server s;
  fault_proxy& proxy = *s.proxy;
  admin_client direct(s.server.port());
  raw_client c(proxy.port());
  REQUIRE(c.round_trip(resp({"PING"}), pong.size()) == pong);
  proxy.partition(mode::blackhole);
  const auto before = proxy.traffic();
  REQUIRE(c.send(resp({"SET", "k", "v", "PX", "10000"})));
  REQUIRE(eventually([&] { return proxy.traffic().from_clients > before.from_clients; }));
  proxy.set_ttl_factor(0.1);
  proxy.partition(mode::none);
  CHECK(c.receive(5).data == "+OK\r\n");
  const auto ttl = direct.pttl("k");
  CHECK(ttl > 0);
  CHECK(ttl <= 1000);
  CHECK(proxy.rewritten_arguments() == 1);
}
