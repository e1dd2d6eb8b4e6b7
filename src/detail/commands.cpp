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

/// The encoded size of a bulk string of `n` bytes: "$<n>\r\n<bytes>\r\n".
std::size_t bulk_size(std::size_t n) {
  return 1 + decimal(static_cast<long long>(n)).view().size() + 2 + n + 2;
}

/// Writes a RESP array of bulk strings into one string, an argument at a
/// time, without collecting the arguments first.
class command_writer {
 public:
  /// `argc` arguments whose bulk_size()s add up to `bulk_bytes`: the
  /// string is allocated once, at its final size.
  command_writer(std::size_t argc, std::size_t bulk_bytes) {
    const decimal count(static_cast<long long>(argc));
    command_.reserve(1 + count.view().size() + 2 + bulk_bytes);
    command_.append("*").append(count.view()).append("\r\n");
  }
  /// One argument made of `first` and then `second`.
  void arg(std::string_view first, std::string_view second = {}) {
    const decimal length(static_cast<long long>(first.size() + second.size()));
    command_.append("$").append(length.view()).append("\r\n");
    command_.append(first).append(second).append("\r\n");
  }
  std::string take() { return std::move(command_); }

 private:
  std::string command_;
};

}  // namespace

std::string format_command(std::span<const std::string_view> args) {
  std::size_t bulk_bytes = 0;
  for (auto arg : args) bulk_bytes += bulk_size(arg.size());
  command_writer command(args.size(), bulk_bytes);
  for (auto arg : args) command.arg(arg);
  return command.take();
}

std::string format_command(std::initializer_list<std::string_view> args) {
  return format_command(std::span<const std::string_view>(args.begin(), args.size()));
}

namespace {

// EVAL <script> <numkeys> <keys...> <token> <then...> [<owner> <delay>]
// [<channels...>]: the shape of every script call. A reentrant lock's
// scripts also take the owner and the lock-delay (ARGV[3], ARGV[4]);
// with `channels`, each key's release channel goes last.
std::string script_command(std::string_view script, const held_keys& held, std::string_view token,
                           std::initializer_list<std::string_view> then, std::string_view delay,
                           bool channels = false) {
  const decimal numkeys(static_cast<long long>(held.keys.size()));
  const bool owned = !held.owner.empty();
  std::size_t argc = 3 + held.keys.size() + 1 + then.size();
  std::size_t bulk_bytes = bulk_size(4) + bulk_size(script.size()) +
                           bulk_size(numkeys.view().size()) + bulk_size(token.size());
  for (const auto& key : held.keys) {
    bulk_bytes += bulk_size(key.size());
    if (channels) bulk_bytes += bulk_size(release_channel_prefix.size() + key.size());
  }
  for (auto arg : then) bulk_bytes += bulk_size(arg.size());
  if (owned) {
    argc += 2;
    bulk_bytes += bulk_size(held.owner.size()) + bulk_size(delay.size());
  }
  if (channels) argc += held.keys.size();

  command_writer command(argc, bulk_bytes);
  command.arg("EVAL");
  command.arg(script);
  command.arg(numkeys.view());
  for (const auto& key : held.keys) command.arg(key);
  command.arg(token);
  for (auto arg : then) command.arg(arg);
  if (owned) {
    command.arg(held.owner);
    command.arg(delay);
  }
  if (channels) {
    for (const auto& key : held.keys) command.arg(release_channel_prefix, key);
  }
  return command.take();
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
  return script_command(script, held, token, {releaser}, delay.view(), !releaser.empty());
}

std::string release_channel(std::string_view key) {
  std::string channel;
  channel.reserve(release_channel_prefix.size() + key.size());  // one allocation, not two
  channel.append(release_channel_prefix).append(key);
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
