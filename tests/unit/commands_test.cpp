// Command formatting and the scripts.
#include "detail/commands.hpp"
#include "detail/reply.hpp"

#include <hiredis.h>
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace std::chrono_literals;
using namespace redlock::detail;

namespace {
held_keys plain(std::string key) { return {{std::move(key)}, ""}; }
}  // namespace

TEST_CASE("acquire is SET key token NX PX ttl in RESP", "[unit][commands]") {
  CHECK(
      acquire_command(plain("locks:job"), "abc", 10000ms, 0ms) ==
      "*6\r\n$3\r\nSET\r\n$9\r\nlocks:job\r\n$3\r\nabc\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n");
  // A plain key lives TTL + lock-delay.
  CHECK(acquire_command(plain("k"), "t", 300ms, 400ms).ends_with("$2\r\nPX\r\n$3\r\n700\r\n"));
}

TEST_CASE("binary-safe arguments keep their length", "[unit][commands]") {
  const std::string key("a\0b", 3);
  CHECK(acquire_command(plain(key), "t", 1ms, 0ms) ==
        std::string(
            "*6\r\n$3\r\nSET\r\n$3\r\na\0b\r\n$1\r\nt\r\n$2\r\nNX\r\n$2\r\nPX\r\n$1\r\n1\r\n", 52));
}

TEST_CASE("release and extend always go out as EVAL, never EVALSHA", "[unit][commands]") {
  // EVALSHA could be answered NOSCRIPT after a SCRIPT FLUSH, and its EVAL
  // fallback would run behind commands sent after it.
  const std::string body(release_script());
  CHECK(release_command(plain("k"), "t", "me", 0ms) ==
        "*7\r\n$4\r\nEVAL\r\n$" + std::to_string(body.size()) + "\r\n" + body +
            "\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\nt\r\n$2\r\nme\r\n$18\r\nredlock:released:k\r\n");
  // No releaser: release without announcing it (and no channels).
  CHECK(release_command(plain("k"), "t", "", 0ms).ends_with("$1\r\nt\r\n$0\r\n\r\n"));
  // A plain lock's release takes no lock-delay.
  CHECK(release_command(plain("k"), "t", "me", 5ms) == release_command(plain("k"), "t", "me", 0ms));

  const auto extend = extend_command(plain("k"), "t", 2500ms, 0ms);
  CHECK(extend.starts_with("*6\r\n$4\r\nEVAL\r\n"));
  CHECK(extend.find(std::string(extend_script())) != std::string::npos);
  CHECK(extend.ends_with("$4\r\n2500\r\n"));
  // A plain lock's extension makes the key live TTL + lock-delay.
  CHECK(extend_command(plain("k"), "t", 2500ms, 500ms).ends_with("$4\r\n3000\r\n"));
}

TEST_CASE("a script call of every shape is the RESP of its arguments, in order",
          "[unit][commands]") {
  // Script calls are written an argument at a time; format_command writes
  // the same arguments from a list.
  const held_keys owned{{"a", "bb"}, "owner-1"};
  CHECK(release_command(owned, "tok", "me", 7ms) ==
        format_command({"EVAL", reentrant_release_script(), "2", "a", "bb", "tok", "me", "owner-1",
                        "7", "redlock:released:a", "redlock:released:bb"}));
  CHECK(release_command(owned, "tok", "", 7ms) ==
        format_command(
            {"EVAL", reentrant_release_script(), "2", "a", "bb", "tok", "", "owner-1", "7"}));
  const held_keys both{{"a", "bb"}, ""};
  CHECK(release_command(both, "tok", "me", 7ms) ==
        format_command({"EVAL", release_script(), "2", "a", "bb", "tok", "me", "redlock:released:a",
                        "redlock:released:bb"}));
  CHECK(extend_command(owned, "tok", 100ms, 7ms) ==
        format_command(
            {"EVAL", reentrant_extend_script(), "2", "a", "bb", "tok", "100", "owner-1", "7"}));
  CHECK(acquire_command(both, "tok", 100ms, 20ms) ==
        format_command({"EVAL", acquire_all_script(), "2", "a", "bb", "tok", "120"}));
}

TEST_CASE("several keys or a reentrant owner take one script call", "[unit][commands]") {
  const held_keys both{{"a", "b"}, ""};
  const auto acquire = acquire_command(both, "t", 100ms, 20ms);
  CHECK(acquire.starts_with("*7\r\n$4\r\nEVAL\r\n"));
  CHECK(acquire.find(std::string(acquire_all_script())) != std::string::npos);
  CHECK(acquire.ends_with("$1\r\n2\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nt\r\n$3\r\n120\r\n"));

  // Channels follow the releaser, one per key, in key order.
  CHECK(release_command(both, "t", "me", 0ms)
            .ends_with("$1\r\nt\r\n$2\r\nme\r\n$18\r\nredlock:released:a\r\n"
                       "$18\r\nredlock:released:b\r\n"));

  // Reentrant: ARGV is token, TTL (without the lock-delay: a hold's own
  // expiry), owner, lock-delay, then the channels.
  const held_keys reentrant{{"a"}, "owner-1"};
  const auto again = acquire_command(reentrant, "t", 100ms, 250ms);
  CHECK(again.starts_with("*8\r\n$4\r\nEVAL\r\n"));
  CHECK(again.find(std::string(reentrant_acquire_script())) != std::string::npos);
  CHECK(again.ends_with("$1\r\nt\r\n$3\r\n100\r\n$7\r\nowner-1\r\n$3\r\n250\r\n"));
  CHECK(release_command(reentrant, "t", "me", 250ms)
            .ends_with("$2\r\nme\r\n$7\r\nowner-1\r\n$3\r\n250\r\n"
                       "$18\r\nredlock:released:a\r\n"));
  CHECK(release_command(reentrant, "t", "", 0ms)
            .ends_with("$1\r\nt\r\n$0\r\n\r\n$7\r\nowner-1\r\n$1\r\n0\r\n"));
  const auto extend = extend_command(reentrant, "t", 5ms, 250ms);
  CHECK(extend.find(std::string(reentrant_extend_script())) != std::string::npos);
  CHECK(extend.ends_with("$1\r\nt\r\n$1\r\n5\r\n$7\r\nowner-1\r\n$3\r\n250\r\n"));
}

TEST_CASE("fenced acquires: the state key last, the lock-delay as the others", "[unit][commands]") {
  const auto plain_fenced = fenced_acquire_command(plain("k"), "t", 100ms, 50ms);
  CHECK(plain_fenced.find(std::string(fenced_acquire_script())) != std::string::npos);
  CHECK(
      plain_fenced.ends_with("$1\r\n2\r\n$1\r\nk\r\n$15\r\nredlock:fencing\r\n"
                             "$1\r\nt\r\n$3\r\n150\r\n"));
  const auto reentrant = fenced_acquire_command({{"k"}, "o"}, "t", 100ms, 50ms);
  CHECK(reentrant.find(std::string(fenced_reentrant_acquire_script())) != std::string::npos);
  CHECK(
      reentrant.ends_with("$15\r\nredlock:fencing\r\n$1\r\nt\r\n$3\r\n100\r\n"
                          "$1\r\no\r\n$2\r\n50\r\n"));
}

TEST_CASE("the extend scripts never shorten a key", "[unit][commands]") {
  for (const std::string_view body :
       {extend_script(), reentrant_extend_script(), reentrant_acquire_script()}) {
    CHECK(body.find("pttl") != std::string::npos);
    CHECK(body.find("pttl") < body.find("pexpire"));
  }
}

TEST_CASE("releases are announced on a channel named after the key", "[unit][commands]") {
  CHECK(release_channel("app:job") == "redlock:released:app:job");
}

TEST_CASE("connection set-up commands", "[unit][commands]") {
  CHECK(auth_command("", "pw") == "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n");
  CHECK(auth_command("user", "pw") == "*3\r\n$4\r\nAUTH\r\n$4\r\nuser\r\n$2\r\npw\r\n");
  CHECK(select_command(12) == "*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n");
}

TEST_CASE("error replies are classified", "[unit][reply]") {
  CHECK(classify_error_reply("WRONGPASS invalid username-password pair or user is disabled.") ==
        redlock::errc::authentication_failed);
  CHECK(classify_error_reply("NOAUTH Authentication required.") ==
        redlock::errc::authentication_failed);
  CHECK(classify_error_reply("ERR AUTH <password> called without any password configured") ==
        redlock::errc::authentication_failed);
  CHECK(classify_error_reply("OOM command not allowed") == redlock::errc::server_error);

  reply ok{reply::kind::status, 0, "OK"};
  CHECK(ok.is_ok());
}

// Our RESP encoder must produce exactly what hiredis' reference formatter
// does, for empty, binary and long arguments too.
TEST_CASE("format_command matches hiredis' formatter byte for byte", "[unit][commands]") {
  const std::string binary("a\0b\r\nc", 7);
  const std::string long_arg(100000, 'x');
  const std::vector<std::vector<std::string_view>> cases = {
      {"PING"}, {"SET", "k", "", "NX"}, {"SET", binary, long_arg}, {"EVALSHA", "0123", "1", "k"}};
  for (const auto& args : cases) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (auto a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    char* reference = nullptr;
    const int size = redisFormatCommandArgv(&reference, static_cast<int>(args.size()), argv.data(),
                                            lengths.data());
    REQUIRE(size > 0);
    const std::string expected(reference, static_cast<std::size_t>(size));
    redisFreeCommand(reference);
    std::string ours;
    switch (args.size()) {
      case 1:
        ours = format_command({args[0]});
        break;
      case 3:
        ours = format_command({args[0], args[1], args[2]});
        break;
      case 4:
        ours = format_command({args[0], args[1], args[2], args[3]});
        break;
    }
    CHECK(ours == expected);
  }
}
