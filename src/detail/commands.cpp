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

std::string_view acquire_all_script() {
  // Checked first, set after: all keys or none (a script runs atomically).
  return "for i = 1, #KEYS do\n"
         "  if redis.call('exists', KEYS[i]) == 1 then return false end\n"
         "end\n"
         "for i = 1, #KEYS do\n"
         "  redis.call('set', KEYS[i], ARGV[1], 'px', ARGV[2])\n"
         "end\n"
         "return redis.status_reply('OK')\n";
}

std::string_view reentrant_acquire_script() {
  return "for i = 1, #KEYS do\n"
         "  local kind = redis.call('type', KEYS[i]).ok\n"
         "  if kind ~= 'none' and (kind ~= 'hash' or\n"
         "      redis.call('hget', KEYS[i], 'owner') ~= ARGV[3]) then\n"
         "    return false\n"
         "  end\n"
         "end\n"
         "for i = 1, #KEYS do\n"
         "  redis.call('hset', KEYS[i], 'owner', ARGV[3], ARGV[1], '1')\n"
         // Never shorten: the owner's earlier acquisitions trust their expiry.
         "  if redis.call('pttl', KEYS[i]) < tonumber(ARGV[2]) then\n"
         "    redis.call('pexpire', KEYS[i], ARGV[2])\n"
         "  end\n"
         "end\n"
         "return redis.status_reply('OK')\n";
}

std::string_view extend_script() {
  // pcall: a key of another type (a reentrant lock's hash) is simply not ours.
  return "for i = 1, #KEYS do\n"
         "  if redis.pcall('get', KEYS[i]) ~= ARGV[1] then return 0 end\n"
         "end\n"
         "for i = 1, #KEYS do\n"
         // Never shorten: a handle may still trust the expiry set before.
         "  if redis.call('pttl', KEYS[i]) < tonumber(ARGV[2]) then\n"
         "    redis.call('pexpire', KEYS[i], ARGV[2])\n"
         "  end\n"
         "end\n"
         "return 1\n";
}

std::string_view reentrant_extend_script() {
  return "for i = 1, #KEYS do\n"
         "  if redis.call('type', KEYS[i]).ok ~= 'hash' or\n"
         "      redis.call('hget', KEYS[i], 'owner') ~= ARGV[3] or\n"
         "      redis.call('hexists', KEYS[i], ARGV[1]) == 0 then\n"
         "    return 0\n"
         "  end\n"
         "end\n"
         "for i = 1, #KEYS do\n"
         "  if redis.call('pttl', KEYS[i]) < tonumber(ARGV[2]) then\n"
         "    redis.call('pexpire', KEYS[i], ARGV[2])\n"
         "  end\n"
         "end\n"
         "return 1\n";
}

std::string_view release_script() {
  return "local all = 1\n"
         "for i = 1, #KEYS do\n"
         "  if redis.pcall('get', KEYS[i]) == ARGV[1] then\n"
         "    redis.call('del', KEYS[i])\n"
         // pcall: a user without channel permission still releases.
         "    if ARGV[2] ~= '' then redis.pcall('publish', ARGV[2 + i], ARGV[2]) end\n"
         "  else\n"
         "    all = 0\n"
         "  end\n"
         "end\n"
         "return all\n";
}

std::string_view reentrant_release_script() {
  return "local all = 1\n"
         "for i = 1, #KEYS do\n"
         "  if redis.call('type', KEYS[i]).ok == 'hash' and\n"
         "      redis.call('hget', KEYS[i], 'owner') == ARGV[3] and\n"
         "      redis.call('hdel', KEYS[i], ARGV[1]) == 1 then\n"
         // Only the owner field left: the last hold is gone.
         "    if redis.call('hlen', KEYS[i]) <= 1 then\n"
         "      redis.call('del', KEYS[i])\n"
         "      if ARGV[2] ~= '' then redis.pcall('publish', ARGV[3 + i], ARGV[2]) end\n"
         "    end\n"
         "  else\n"
         "    all = 0\n"
         "  end\n"
         "end\n"
         "return all\n";
}

std::string format_command(std::span<const std::string_view> args) {
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

std::string format_command(std::initializer_list<std::string_view> args) {
  return format_command(std::span<const std::string_view>(args.begin(), args.size()));
}

namespace {

// EVAL <script> <numkeys> <keys...> <token> <then...>: the shape of every
// script call; `channels` (one per key) go last when given.
std::string script_command(std::string_view script, const held_keys& held, std::string_view token,
                           std::initializer_list<std::string_view> then,
                           const std::vector<std::string>* channels = nullptr) {
  const decimal numkeys(static_cast<long long>(held.keys.size()));
  std::vector<std::string_view> args;
  args.reserve(4 + 2 * held.keys.size() + then.size());
  args.insert(args.end(), {"EVAL", script, numkeys.view()});
  args.insert(args.end(), held.keys.begin(), held.keys.end());
  args.push_back(token);
  args.insert(args.end(), then.begin(), then.end());
  if (!held.owner.empty()) args.push_back(held.owner);
  if (channels) args.insert(args.end(), channels->begin(), channels->end());
  return format_command(args);
}

}  // namespace

std::string acquire_command(const held_keys& held, std::string_view token,
                            std::chrono::milliseconds ttl) {
  const decimal ms(ttl.count());
  if (held.plain_single()) {
    return format_command({"SET", held.keys.front(), token, "NX", "PX", ms.view()});
  }
  return script_command(held.owner.empty() ? acquire_all_script() : reentrant_acquire_script(),
                        held, token, {ms.view()});
}

std::string release_command(const held_keys& held, std::string_view token,
                            std::string_view releaser) {
  const auto script = held.owner.empty() ? release_script() : reentrant_release_script();
  if (releaser.empty()) return script_command(script, held, token, {releaser});
  std::vector<std::string> channels;
  channels.reserve(held.keys.size());
  for (const auto& key : held.keys) channels.push_back(release_channel(key));
  return script_command(script, held, token, {releaser}, &channels);
}

std::string release_channel(std::string_view key) {
  constexpr std::string_view prefix = "redlock:released:";
  std::string channel;
  channel.reserve(prefix.size() + key.size());  // one allocation, not two
  channel.append(prefix).append(key);
  return channel;
}

std::string extend_command(const held_keys& held, std::string_view token,
                           std::chrono::milliseconds ttl) {
  const decimal ms(ttl.count());
  return script_command(held.owner.empty() ? extend_script() : reentrant_extend_script(), held,
                        token, {ms.view()});
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
