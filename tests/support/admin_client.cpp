#include "admin_client.hpp"

#include <hiredis.h>

#include <fmt/format.h>

#include <poll.h>
#include <sys/time.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>

namespace redlock::test {
namespace {

struct reply_deleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

admin_client::reply convert(const redisReply& r) {
  using kind = admin_client::reply::kind;
  admin_client::reply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      out.type = kind::string;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = kind::status;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = kind::error;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = kind::integer;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = kind::array;
      out.elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
      break;
    default:  // REDIS_REPLY_NIL
      out.type = kind::nil;
      break;
  }
  return out;
}

}  // namespace

admin_client::admin_client(std::uint16_t port, std::string password, std::string username)
    : port_(port), password_(std::move(password)), username_(std::move(username)) {
  connect();
}

admin_client::~admin_client() { disconnect(); }

void admin_client::connect() {
  context_ = redisConnectWithTimeout("127.0.0.1", port_, to_timeval(timeout_));
  if (context_ == nullptr) throw std::runtime_error("admin_client: out of memory");
  if (context_->err != 0) {
    const std::string reason = context_->errstr;
    disconnect();
    throw std::runtime_error(
        fmt::format("admin_client: connect to 127.0.0.1:{}: {}", port_, reason));
  }
  if (redisSetTimeout(context_, to_timeval(timeout_)) != REDIS_OK) {
    disconnect();
    throw std::runtime_error(fmt::format("admin_client: cannot set a timeout on port {}", port_));
  }
  if (password_.empty()) return;
  std::vector<std::string> auth = {"AUTH"};
  if (!username_.empty()) auth.push_back(username_);
  auth.push_back(password_);
  const reply r = command(auth);
  if (r.type == reply::kind::error) {
    disconnect();
    throw std::runtime_error(fmt::format("admin_client: AUTH on port {}: {}", port_, r.text));
  }
}

void admin_client::disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

void admin_client::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  if (context_ != nullptr && redisSetTimeout(context_, to_timeval(timeout_)) != REDIS_OK) {
    disconnect();
  }
}

void admin_client::reconnect() {
  disconnect();
  connect();
}

bool admin_client::stale() const {
  // RESP2 sends nothing unasked, so an idle connection that is readable has
  // been closed by the server (it was stopped or killed since).
  pollfd pfd{context_->fd, POLLIN, 0};
  return ::poll(&pfd, 1, 0) != 0;
}

admin_client::reply admin_client::command(const std::vector<std::string>& args) {
  if (context_ != nullptr && stale()) disconnect();
  if (context_ == nullptr) connect();
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  std::unique_ptr<redisReply, reply_deleter> r(static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data())));
  if (!r) {
    // The context is unusable after an I/O error (a late reply would be
    // read as the answer to the next command): drop it.
    const std::string reason = context_->errstr;
    disconnect();
    throw std::runtime_error(fmt::format("admin_client: {} on port {}: {}",
                                         args.empty() ? "(empty)" : args[0], port_, reason));
  }
  return convert(*r);
}

admin_client::reply admin_client::checked(const std::vector<std::string>& args) {
  reply r = command(args);
  if (r.type == reply::kind::error) {
    throw std::runtime_error(
        fmt::format("admin_client: {} on port {}: {}", args.at(0), port_, r.text));
  }
  return r;
}

std::optional<std::string> admin_client::get(const std::string& key) {
  reply r = checked({"GET", key});
  if (r.type == reply::kind::nil) return std::nullopt;
  return std::move(r.text);
}

long long admin_client::pttl(const std::string& key) { return checked({"PTTL", key}).integer; }

bool admin_client::exists(const std::string& key) { return checked({"EXISTS", key}).integer > 0; }

std::vector<std::string> admin_client::keys(const std::string& pattern) {
  std::vector<std::string> names;
  for (auto& e : checked({"KEYS", pattern}).elements) names.push_back(std::move(e.text));
  return names;
}

void admin_client::flushall() { checked({"FLUSHALL"}); }

}  // namespace redlock::test
