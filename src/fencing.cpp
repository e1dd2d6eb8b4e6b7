// The resource side of fencing: the in-process checker and the Redis script.
#include <redlock/fencing.hpp>

#include <string>

namespace redlock {

bool fence_checker::admit(std::uint64_t fence, std::string_view token) {
  if (fence == 0) return false;  // not a fenced lock: no order to check
  const std::lock_guard guard(mutex_);
  if (fence < last_ || (fence == last_ && token != last_token_)) return false;
  if (fence != last_ || token != last_token_) {
    last_ = fence;
    last_token_.assign(token);
  }
  return true;
}

std::uint64_t fence_checker::last() const {
  const std::lock_guard guard(mutex_);
  return last_;
}

std::string fence_checker::last_token() const {
  const std::lock_guard guard(mutex_);
  return last_token_;
}

namespace {

// Lua numbers are doubles: every integer up to 2^53 - 1 (16 digits) is
// exact, in tonumber(), in the comparisons and in the integer reply. The
// fence is checked as text first, so a larger one is refused, not rounded.
// The record is "<fence> <token>": the token is everything after the first
// space, so a token may itself hold spaces.
constexpr std::string_view script = R"lua(
local f = ARGV[1]
if #f > 16 or not string.match(f, '^[1-9]%d*$') or tonumber(f) > 9007199254740991 then
  return redis.error_reply('ERR fence must be an integer in [1, 2^53-1], got: ' .. f)
end
local fence = tonumber(f)
local last, last_token = 0, nil
local record = redis.call('GET', KEYS[1])
if record then
  local space = string.find(record, ' ', 1, true)
  local recorded = space and string.sub(record, 1, space - 1)
  if not recorded or #recorded > 16 or not string.match(recorded, '^%d+$') then
    return redis.error_reply('ERR the fence record ' .. KEYS[1] .. ' is not "<fence> <token>"')
  end
  last = tonumber(recorded)
  last_token = string.sub(record, space + 1)
end
if fence < last or (fence == last and ARGV[2] ~= last_token) then
  return {0, last}
end
redis.call('SET', KEYS[1], f .. ' ' .. ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
return {1, fence}
)lua";

}  // namespace

std::string_view fenced_set_script() { return script; }

std::vector<std::string> fenced_set_command(std::string_view fence_key, std::string_view data_key,
                                            std::uint64_t fence, std::string_view token,
                                            std::string_view value) {
  return {"EVAL",
          std::string(script),
          "2",
          std::string(fence_key),
          std::string(data_key),
          std::to_string(fence),
          std::string(token),
          std::string(value)};
}

}  // namespace redlock
