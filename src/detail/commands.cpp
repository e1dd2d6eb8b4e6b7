#include "detail/commands.hpp"

#include <array>
#include <charconv>

namespace redlock::detail {
namespace {

// Decimal text of a number, without allocating.
struct decimal {
  explicit decimal(long long value) {
    const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
    length = static_cast<std::size_t>(result.ptr - digits.data());
  }
  std::string_view view() const { return {digits.data(), length}; }
  std::array<char, 24> digits{};
  std::size_t length = 0;
};

}  // namespace

std::string_view release_script() {
  return "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
         "  redis.call('del', KEYS[1])\n"
         // pcall: a user without channel permission still releases.
         "  if ARGV[2] ~= '' then redis.pcall('publish', ARGV[2], ARGV[3]) end\n"
         "  return 1\n"
         "end\n"
         "return 0\n";
}

std::string_view extend_script() {
  return "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
         // Never shorten: a handle may still trust the expiry set before.
         "  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then\n"
         "    redis.call('pexpire', KEYS[1], ARGV[2])\n"
         "  end\n"
         "  return 1\n"
         "end\n"
         "return 0\n";
}

std::string format_command(std::initializer_list<std::string_view> args) {
  // RESP: *<argc>\r\n then $<length>\r\n<bytes>\r\n per argument. Sized
  // first, so the command is one allocation (this is on every lock's path).
  const decimal argc(static_cast<long long>(args.size()));
  std::size_t size = 1 + argc.view().size() + 2;
  for (auto arg : args) {
    size += 1 + decimal(static_cast<long long>(arg.size())).view().size() + 2 + arg.size() + 2;
  }
  std::string command;
  command.reserve(size);
  command.append("*").append(argc.view()).append("\r\n");
  for (auto arg : args) {
    const decimal length(static_cast<long long>(arg.size()));
    command.append("$").append(length.view()).append("\r\n").append(arg).append("\r\n");
  }
  return command;
}

std::string acquire_command(std::string_view key, std::string_view token,
                            std::chrono::milliseconds ttl) {
  const decimal ms(ttl.count());
  return format_command({"SET", key, token, "NX", "PX", ms.view()});
}

std::string release_command(std::string_view key, std::string_view token, std::string_view channel,
                            std::string_view releaser) {
  return format_command({"EVAL", release_script(), "1", key, token, channel, releaser});
}

std::string release_channel(std::string_view key) {
  constexpr std::string_view prefix = "redlock:released:";
  std::string channel;
  channel.reserve(prefix.size() + key.size());  // one allocation, not two
  channel.append(prefix).append(key);
  return channel;
}

std::string extend_command(std::string_view key, std::string_view token,
                           std::chrono::milliseconds ttl) {
  const decimal ms(ttl.count());
  return format_command({"EVAL", extend_script(), "1", key, token, ms.view()});
}

std::string auth_command(std::string_view username, std::string_view password) {
  if (username.empty()) return format_command({"AUTH", password});
  return format_command({"AUTH", username, password});
}

std::string select_command(int database) {
  const decimal db(database);
  return format_command({"SELECT", db.view()});
}

}  // namespace redlock::detail
