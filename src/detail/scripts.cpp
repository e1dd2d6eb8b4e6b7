#include "detail/scripts.hpp"

namespace redlock::detail {

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

// Shared head of the reentrant scripts (ARGV[3] is the owner, ARGV[4] the
// lock-delay in ms): the node's time in ms, and prune(key, keep), which
// drops the holds of `key` that expired more than `keep` ms ago (each token
// field holds its own expiry, now + TTL without the delay, so a hold nobody
// released ends with its TTL even while the owner's other holds keep the
// key) and returns the latest expiry of a live hold (0: none live) and the
// latest expiry of any hold kept (0: none kept). A hold that lapsed within
// the delay is kept: the key must outlive it by the delay whatever else is
// released. Fields that are not holds: `owner`, `fence`, and `released` (a
// hold was released while others remained, so whoever removes the last
// one, an undo included, must announce it). A value that is no timestamp
// was written by an earlier version (which stored '1'): live while the key
// is.
#define REDLOCK_REENTRANT_HEAD                                                              \
  "local t = redis.call('time')\n"                                                          \
  "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"                 \
  "local delay = tonumber(ARGV[4]) or 0\n"                                                  \
  "local function prune(key, keep)\n"                                                       \
  "  local fields = redis.call('hgetall', key)\n"                                           \
  "  local live, last = 0, 0\n"                                                             \
  "  for i = 1, #fields, 2 do\n"                                                            \
  "    if fields[i] ~= 'owner' and fields[i] ~= 'released' and fields[i] ~= 'fence' then\n" \
  "      local expiry = tonumber(fields[i + 1]) or 0\n"                                     \
  "      if expiry < 1e12 then expiry = now + redis.call('pttl', key) end\n"                \
  "      if expiry + keep <= now then\n"                                                    \
  "        redis.call('hdel', key, fields[i])\n"                                            \
  "      else\n"                                                                            \
  "        if expiry > last then last = expiry end\n"                                       \
  "        if expiry > now and expiry > live then live = expiry end\n"                      \
  "      end\n"                                                                             \
  "    end\n"                                                                               \
  "  end\n"                                                                                 \
  "  return live, last\n"                                                                   \
  "end\n"                                                                                   \
  "local function ms(n) return string.format('%.0f', n) end\n"

// Shared by the reentrant acquires (plain and fenced; `held` is the number
// of lock keys): every key absent, or a hash of ARGV[3] with a live hold,
// else nil; latest[i] is the latest expiry of key i's live holds (0: the
// key was absent). A key that exists is taken, whoever's it is, until its
// PX ends, also with no hold live: that is the lock-delay after the last
// live hold lapsed, in which nobody (its owner included) acquires it. A
// key without an expiry (none of these scripts leaves one) keeps no delay:
// with no hold live, it holds nothing.
#define REDLOCK_REENTRANT_CHECK                                              \
  "local ttl = tonumber(ARGV[2])\n"                                          \
  "local latest = {}\n"                                                      \
  "for i = 1, held do\n"                                                     \
  "  local kind = redis.call('type', KEYS[i]).ok\n"                          \
  "  latest[i] = 0\n"                                                        \
  "  if kind == 'hash' then\n"                                               \
  "    if redis.call('pttl', KEYS[i]) < 0 and prune(KEYS[i], 0) == 0 then\n" \
  "      redis.call('del', KEYS[i])\n"                                       \
  "    elseif redis.call('hget', KEYS[i], 'owner') ~= ARGV[3] then\n"        \
  "      return false\n"                                                     \
  "    else\n"                                                               \
  "      latest[i] = prune(KEYS[i], delay)\n"                                \
  "      if latest[i] == 0 then return false end\n"                          \
  "    end\n"                                                                \
  "  elseif kind ~= 'none' then\n"                                           \
  "    return false\n"                                                       \
  "  end\n"                                                                  \
  "end\n"

// Inside a loop over the keys, once the check passed: adds our hold
// (token field = its expiry) to KEYS[i]; the key lives as long as its
// longest hold, plus the delay, and is never shortened.
#define REDLOCK_REENTRANT_HOLD                                                \
  "  redis.call('hset', KEYS[i], 'owner', ARGV[3], ARGV[1], ms(now + ttl))\n" \
  "  local want = math.max(latest[i] - now, ttl) + delay\n"                   \
  "  if redis.call('pttl', KEYS[i]) < want then\n"                            \
  "    redis.call('pexpire', KEYS[i], ms(want))\n"                            \
  "  end\n"

std::string_view reentrant_acquire_script() {
  return REDLOCK_REENTRANT_HEAD "local held = #KEYS\n" REDLOCK_REENTRANT_CHECK
                                "for i = 1, #KEYS do\n" REDLOCK_REENTRANT_HOLD
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

std::string_view extend_many_script() {
  // One answer per key, as one string: cheaper to send and to read than an
  // array of integers.
  return "local out = {}\n"
         "for i = 1, #KEYS do\n"
         "  out[i] = '0'\n"
         "  if redis.pcall('get', KEYS[i]) == ARGV[2 * i - 1] then\n"
         "    if redis.call('pttl', KEYS[i]) < tonumber(ARGV[2 * i]) then\n"
         "      redis.call('pexpire', KEYS[i], ARGV[2 * i])\n"
         "    end\n"
         "    out[i] = '1'\n"
         "  end\n"
         "end\n"
         "return table.concat(out)\n";
}

std::string_view reentrant_extend_script() {
  return REDLOCK_REENTRANT_HEAD
      "local ttl = tonumber(ARGV[2])\n"
      "for i = 1, #KEYS do\n"
      "  if redis.call('type', KEYS[i]).ok ~= 'hash' or\n"
      "      redis.call('hget', KEYS[i], 'owner') ~= ARGV[3] then\n"
      "    return 0\n"
      "  end\n"
      // A lapsed hold stays lapsed (within the delay too).
      "  local mine = tonumber(redis.call('hget', KEYS[i], ARGV[1]) or 0) or 0\n"
      "  if mine <= now then return 0 end\n"
      "end\n"
      "for i = 1, #KEYS do\n"
      "  local mine = tonumber(redis.call('hget', KEYS[i], ARGV[1]))\n"
      "  if mine < now + ttl then redis.call('hset', KEYS[i], ARGV[1], ms(now + ttl)) end\n"
      // The key lives as long as its longest hold (even one without a TTL),
      // plus the delay.
      "  local want = math.max(prune(KEYS[i], delay) - now, ttl) + delay\n"
      "  if redis.call('pttl', KEYS[i]) < want then\n"
      "    redis.call('pexpire', KEYS[i], ms(want))\n"
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
  // ARGV[2]: the releasing client's id; 'undo' for the undo of a failed
  // attempt, which announces only what a release left to it (see the head).
  return REDLOCK_REENTRANT_HEAD
      "local all = 1\n"
      "for i = 1, #KEYS do\n"
      "  local ours = false\n"
      "  if redis.call('type', KEYS[i]).ok == 'hash' and\n"
      "      redis.call('hget', KEYS[i], 'owner') == ARGV[3] then\n"
      "    local mine = redis.call('hget', KEYS[i], ARGV[1])\n"
      "    if mine then\n"
      "      ours = (tonumber(mine) or 0) > now\n"
      "      redis.call('hdel', KEYS[i], ARGV[1])\n"
      "    end\n"
      "    local _, last = prune(KEYS[i], delay)\n"
      "    if last == 0 then\n"
      // The last hold is gone (none live, none lapsed within the delay):
      // the resource is free at once.
      "      local announce = ARGV[2] ~= 'undo' or redis.call('hexists', KEYS[i], 'released') == "
      "1\n"
      "      redis.call('del', KEYS[i])\n"
      "      if announce then redis.pcall('publish', ARGV[4 + i], ARGV[2]) end\n"
      "    else\n"
      "      if ARGV[2] ~= 'undo' and mine then redis.call('hset', KEYS[i], 'released', '1') end\n"
      // As long as the longest hold left needs, plus the delay; no longer.
      "      redis.call('pexpire', KEYS[i], ms(last + delay - now))\n"
      "    end\n"
      "  end\n"
      "  if not ours then all = 0 end\n"
      "end\n"
      "return all\n";
}

// Shared head of the fenced scripts (KEYS[#KEYS] is the state): a node
// whose state is not valid records the loss (the id ARGV[1], with the
// server's run id) unless one is recorded, and answers "lost <id>".
#define REDLOCK_FENCED_HEAD                                                            \
  "local state = KEYS[#KEYS]\n"                                                        \
  "if redis.call('hexists', state, 'valid') == 0 then\n"                               \
  "  local lost = redis.call('hget', state, 'lost')\n"                                 \
  "  if not lost then\n"                                                               \
  "    local info = redis.pcall('info', 'server')\n"                                   \
  "    local run = type(info) == 'string' and string.match(info, 'run_id:(%w+)')\n"    \
  "    lost = ARGV[1]\n"                                                               \
  "    redis.call('hset', state, 'lost', lost, 'seen', run or ('unknown:' .. lost))\n" \
  "  end\n"                                                                            \
  "  return 'lost ' .. lost\n"                                                         \
  "end\n"                                                                              \
  "local function num(v) return tonumber(v or '0') or 0 end\n"                         \
  "local function ms(n) return string.format('%.0f', n) end\n"                         \
  "local floor = num(redis.call('hget', state, 'floor'))\n"                            \
  "local top = num(redis.call('hget', state, 'max'))\n"                                \
  "local function issue(key)\n"                                                        \
  "  local c = math.max(num(redis.call('hget', state, 'c:' .. key)), floor) + 1\n"     \
  "  redis.call('hset', state, 'c:' .. key, ms(c))\n"                                  \
  "  if c > top then top = c end\n"                                                    \
  "  return c\n"                                                                       \
  "end\n"

// Lua numbers are doubles: counters are exact up to 2^53 - 1, which is
// also the largest fence fenced_set_script() takes. Past it max + 1 rounds
// back, and fences would repeat: a node there issues none (an error reply).
// Every counter and the floor are at most `top`.
#define REDLOCK_FENCE_ROOM                                                       \
  "if top >= 9007199254740991 then\n"                                            \
  "  return redis.error_reply('ERR redlock: fencing counters reached 2^53-1')\n" \
  "end\n"

std::string_view fenced_acquire_script() {
  return REDLOCK_FENCED_HEAD REDLOCK_FENCE_ROOM
      "for i = 1, #KEYS - 1 do\n"
      "  if redis.call('exists', KEYS[i]) == 1 then return false end\n"
      "end\n"
      "local out = 'ok'\n"
      "for i = 1, #KEYS - 1 do\n"
      "  redis.call('set', KEYS[i], ARGV[1], 'px', ARGV[2])\n"
      "  out = out .. ' ' .. ms(issue(KEYS[i]))\n"
      "end\n"
      "redis.call('hset', state, 'max', ms(top))\n"
      "return out\n";
}

std::string_view fenced_reentrant_acquire_script() {
  // The reentrant acquire, and per key: a hold re-entered (only while one
  // of its holds is live, never within the lock-delay after the last one
  // lapsed) answers the fence it stores; a new one gets a new fence, stored
  // in the hash.
  return REDLOCK_FENCED_HEAD REDLOCK_FENCE_ROOM REDLOCK_REENTRANT_HEAD
      "local held = #KEYS - 1\n" REDLOCK_REENTRANT_CHECK
      "local out = 'ok'\n"
      "for i = 1, #KEYS - 1 do\n"
      "  local fence = num(redis.call('hget', KEYS[i], 'fence'))\n"
      // A stored fence below the node's counter (or floor): another owner
      // got a larger fence here since (written back while this hold lived
      // only on a minority), so this is no longer the same hold's fence.
      "  if latest[i] == 0 or fence == 0 or\n"
      "      fence < math.max(num(redis.call('hget', state, 'c:' .. KEYS[i])), floor) then\n"
      "    fence = issue(KEYS[i])\n"
      "    redis.call('hset', KEYS[i], 'fence', ms(fence))\n"
      "  end\n"
      "  out = out .. ' ' .. ms(fence)\n" REDLOCK_REENTRANT_HOLD
      "end\n"
      "redis.call('hset', state, 'max', ms(top))\n"
      "return out\n";
}

std::string_view fence_write_back_script() {
  // ARGV: token (the loss id), owner ('' unless reentrant), one fence per key.
  return REDLOCK_FENCED_HEAD
      "for i = 1, #KEYS - 1 do\n"
      "  local fence = num(ARGV[2 + i])\n"
      "  if num(redis.call('hget', state, 'c:' .. KEYS[i])) < fence then\n"
      "    redis.call('hset', state, 'c:' .. KEYS[i], ms(fence))\n"
      "  end\n"
      "  if fence > top then top = fence end\n"
      "  if ARGV[2] ~= '' and redis.call('type', KEYS[i]).ok == 'hash' and\n"
      "      redis.call('hget', KEYS[i], 'owner') == ARGV[2] and\n"
      "      num(redis.call('hget', KEYS[i], 'fence')) < fence then\n"
      "    redis.call('hset', KEYS[i], 'fence', ms(fence))\n"
      "  end\n"
      "end\n"
      "redis.call('hset', state, 'max', ms(top))\n"
      "return 1\n";
}

#undef REDLOCK_FENCE_ROOM
#undef REDLOCK_FENCED_HEAD
#undef REDLOCK_REENTRANT_HOLD
#undef REDLOCK_REENTRANT_CHECK
#undef REDLOCK_REENTRANT_HEAD

// The server's run id, or one that matches no other (INFO refused).
#define REDLOCK_RUN_ID                                                                 \
  "local info = redis.pcall('info', 'server')\n"                                       \
  "local run = type(info) == 'string' and string.match(info, 'run_id:(%w+)') or nil\n" \
  "run = run or ('unknown:' .. ARGV[1])\n"

std::string_view fence_restart_check_script() {
  return REDLOCK_RUN_ID
      "if redis.call('exists', KEYS[1]) == 0 then return 0 end\n"
      "if redis.call('hget', KEYS[1], 'seen') == run then return 0 end\n"
      "redis.call('hdel', KEYS[1], 'valid')\n"
      "redis.call('hset', KEYS[1], 'seen', run, 'lost', ARGV[1])\n"
      "return 1\n";
}

std::string_view fence_state_script() {
  return "local valid = redis.call('hexists', KEYS[1], 'valid')\n"
         "return valid .. ' ' .. (redis.call('hget', KEYS[1], 'max') or '0') .. ' ' ..\n"
         "  (redis.call('hget', KEYS[1], 'lost') or '-')\n";
}

std::string_view fence_reseed_script() {
  return REDLOCK_RUN_ID
      "if redis.call('hexists', KEYS[1], 'valid') == 1 or\n"
      "    redis.call('hget', KEYS[1], 'lost') ~= ARGV[1] then\n"
      "  return 0\n"
      "end\n"
      "local top = math.max(tonumber(redis.call('hget', KEYS[1], 'max') or '0') or 0,\n"
      "                     tonumber(ARGV[2]))\n"
      "local text = string.format('%.0f', top)\n"
      "redis.call('hset', KEYS[1], 'floor', text, 'max', text, 'seen', run, 'valid', '1')\n"
      "redis.call('hdel', KEYS[1], 'lost')\n"
      "return 1\n";
}

#undef REDLOCK_RUN_ID

std::string_view status_script() {
  return "local kind = redis.call('type', KEYS[1])['ok']\n"
         "if kind == 'none' then return 'none' end\n"
         "local holder = ''\n"
         "if kind == 'string' then holder = redis.call('get', KEYS[1])\n"
         "elseif kind == 'hash' then holder = redis.call('hget', KEYS[1], 'owner') or '' end\n"
         "return kind .. ' ' .. redis.call('pttl', KEYS[1]) .. ' ' .. holder\n";
}

}  // namespace redlock::detail
