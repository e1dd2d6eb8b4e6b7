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

// EVAL <script> <numkeys> <keys...> <token> <then...> [<owner> <delay>]
// [<channels...>]: the shape of every script call. A reentrant lock's
// scripts also take the owner and the lock-delay (ARGV[3], ARGV[4]);
// `channels` (one per key) go last when given.
std::string script_command(std::string_view script, const held_keys& held, std::string_view token,
                           std::initializer_list<std::string_view> then, std::string_view delay,
                           const std::vector<std::string>* channels = nullptr) {
  const decimal numkeys(static_cast<long long>(held.keys.size()));
  std::vector<std::string_view> args;
  args.reserve(5 + 2 * held.keys.size() + then.size());
  args.insert(args.end(), {"EVAL", script, numkeys.view()});
  args.insert(args.end(), held.keys.begin(), held.keys.end());
  args.push_back(token);
  args.insert(args.end(), then.begin(), then.end());
  if (!held.owner.empty()) args.insert(args.end(), {std::string_view(held.owner), delay});
  if (channels) args.insert(args.end(), channels->begin(), channels->end());
  return format_command(args);
}

}  // namespace

std::string acquire_command(const held_keys& held, std::string_view token,
                            std::chrono::milliseconds ttl, std::chrono::milliseconds lock_delay) {
  // A plain key lives ttl + delay; a reentrant hold's field expires after
  // the TTL alone and its script adds the delay to the key.
  const decimal key_ms((ttl + lock_delay).count());
  if (held.plain_single()) {
    return format_command({"SET", held.keys.front(), token, "NX", "PX", key_ms.view()});
  }
  if (held.owner.empty())
    return script_command(acquire_all_script(), held, token, {key_ms.view()}, {});
  const decimal ms(ttl.count());
  const decimal delay(lock_delay.count());
  return script_command(reentrant_acquire_script(), held, token, {ms.view()}, delay.view());
}

std::string fenced_acquire_command(const held_keys& held, std::string_view token,
                                   std::chrono::milliseconds ttl,
                                   std::chrono::milliseconds lock_delay) {
  held_keys with_state = held;
  with_state.keys.emplace_back(fencing_state_key);
  if (held.owner.empty()) {
    const decimal key_ms((ttl + lock_delay).count());
    return script_command(fenced_acquire_script(), with_state, token, {key_ms.view()}, {});
  }
  const decimal ms(ttl.count());
  const decimal delay(lock_delay.count());
  return script_command(fenced_reentrant_acquire_script(), with_state, token, {ms.view()},
                        delay.view());
}

std::string fence_write_back_command(const held_keys& held, std::span<const std::uint64_t> fences,
                                     std::string_view token) {
  const decimal numkeys(static_cast<long long>(held.keys.size() + 1));
  std::vector<std::string> texts;
  texts.reserve(fences.size());
  for (auto fence : fences) texts.push_back(std::to_string(fence));
  std::vector<std::string_view> args;
  args.reserve(6 + 2 * held.keys.size());
  args.insert(args.end(), {"EVAL", fence_write_back_script(), numkeys.view()});
  args.insert(args.end(), held.keys.begin(), held.keys.end());
  args.insert(args.end(), {fencing_state_key, token, held.owner});
  args.insert(args.end(), texts.begin(), texts.end());
  return format_command(args);
}

std::string fence_restart_check_command(std::string_view loss_id) {
  return format_command({"EVAL", fence_restart_check_script(), "1", fencing_state_key, loss_id});
}

std::string fence_state_command() {
  return format_command({"EVAL", fence_state_script(), "1", fencing_state_key});
}

std::string fence_reseed_command(std::string_view loss_id, std::uint64_t floor) {
  const auto text = std::to_string(floor);
  return format_command({"EVAL", fence_reseed_script(), "1", fencing_state_key, loss_id, text});
}

std::string release_command(const held_keys& held, std::string_view token,
                            std::string_view releaser, std::chrono::milliseconds lock_delay) {
  const auto script = held.owner.empty() ? release_script() : reentrant_release_script();
  const decimal delay(lock_delay.count());
  if (releaser.empty()) return script_command(script, held, token, {releaser}, delay.view());
  std::vector<std::string> channels;
  channels.reserve(held.keys.size());
  for (const auto& key : held.keys) channels.push_back(release_channel(key));
  return script_command(script, held, token, {releaser}, delay.view(), &channels);
}

std::string release_channel(std::string_view key) {
  constexpr std::string_view prefix = "redlock:released:";
  std::string channel;
  channel.reserve(prefix.size() + key.size());  // one allocation, not two
  channel.append(prefix).append(key);
  return channel;
}

std::string extend_command(const held_keys& held, std::string_view token,
                           std::chrono::milliseconds ttl, std::chrono::milliseconds lock_delay) {
  if (held.owner.empty()) {
    const decimal key_ms((ttl + lock_delay).count());
    return script_command(extend_script(), held, token, {key_ms.view()}, {});
  }
  const decimal ms(ttl.count());
  const decimal delay(lock_delay.count());
  return script_command(reentrant_extend_script(), held, token, {ms.view()}, delay.view());
}

std::string status_command(std::string_view key) {
  return format_command({"EVAL", status_script(), "1", key});
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
