// The order of one connection's commands and replies, and what a lost link
// does to each, driven without sockets: the bytes a write would carry, the
// callbacks a reply or a failure reaches.
#include "detail/pipeline.hpp"
#include "detail/commands.hpp"
#include "detail/script_cache.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

// Named, so that a unity build can merge this file with the other tests.
namespace pipeline_test {

using namespace std::chrono_literals;
using redlock::clock;
using redlock::error_code;
using redlock::detail::pipeline;
using redlock::detail::reply;

namespace {

const clock::time_point t0{std::chrono::seconds(1000)};

/// What each command's callback saw, by the command's name.
struct journal {
  /// "name", or with " (repeated)", " (overtook)", or both, as the reply said.
  std::vector<std::string> answered;
  std::vector<std::string> failed;

  pipeline::callback record(std::string name) {
    return [this, name = std::move(name)](error_code ec, const reply& r) {
      if (ec) {
        failed.push_back(name);
      } else {
        std::string said = name;
        if (r.repeated) said += " (repeated)";
        if (r.overtook) said += " (overtook)";
        answered.push_back(said);
      }
    };
  }
};

/// A command sent again on a new link while `until` has not passed.
pipeline::retry retried(const std::string& bytes, clock::time_point until) {
  return {std::make_shared<const std::string>(bytes), until};
}

/// Answers every awaited command, as a node answering in order would.
void answer_all(pipeline& p) {
  while (p.awaiting() > 0) {
    reply r;
    auto [done, repeated, overtook] = p.pop_reply(r);
    r.repeated = repeated;
    r.overtook = overtook;
    done({}, r);
  }
}

/// Answers the next awaited command with `r`; false if nobody was told.
bool answer(pipeline& p, reply r) {
  auto [done, repeated, overtook] = p.pop_reply(r);
  if (!done) return false;
  r.repeated = repeated;
  r.overtook = overtook;
  done({}, r);
  return true;
}

reply error_reply(std::string_view text) {
  reply r;
  r.type = reply::kind::error;
  r.text = text;
  return r;
}

void fail_all(std::vector<pipeline::callback> callbacks) {
  for (auto& done : callbacks) done(redlock::errc::node_unavailable, reply{});
}

}  // namespace

TEST_CASE("pipeline: one write carries every command queued, replies go out in order") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"));
  p.push("B", j.record("b"));
  p.push_unanswered("S");
  REQUIRE(p.wants_write());
  CHECK(p.take_write_buffer() == "ABS");
  CHECK_FALSE(p.wants_write());
  CHECK(p.awaiting() == 2);
  answer_all(p);
  CHECK(j.answered == std::vector<std::string>{"a", "b"});
}

TEST_CASE("pipeline: what is queued during a write goes out in the next one") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"));
  CHECK(p.take_write_buffer() == "A");
  p.push("B", j.record("b"));
  CHECK(p.write_in_flight());
  CHECK_FALSE(p.wants_write());
  p.on_write_done();
  REQUIRE(p.wants_write());
  CHECK(p.take_write_buffer() == "B");
}

TEST_CASE("pipeline: corks nest, and only the last uncork lets the output go") {
  pipeline p;
  journal j;
  p.cork();
  p.cork();
  p.push("A", j.record("a"));
  CHECK_FALSE(p.wants_write());
  p.uncork();
  CHECK_FALSE(p.wants_write());
  p.uncork();
  CHECK(p.wants_write());
  p.uncork();  // one too many does not underflow
  p.cork();
  CHECK_FALSE(p.wants_write());
  p.uncork_all();
  CHECK(p.wants_write());
}

TEST_CASE("pipeline: a lost link fails the plain commands and keeps the due retries in order") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"), retried("A", t0 + 1s));
  p.push("B", j.record("b"));
  CHECK(p.take_write_buffer() == "AB");
  p.push("C", j.record("c"), retried("C", t0 + 1s));   // queued, not written
  p.push("D", j.record("d"), retried("D", t0 - 1ms));  // its time has passed
  p.hold("E", j.record("e"), retried("E", t0 + 1s));   // waiting for a link already

  p.drop_output();
  fail_all(p.on_link_lost(t0, false));
  CHECK(j.failed == std::vector<std::string>{"b", "d"});
  CHECK(p.awaiting() == 0);
  CHECK(p.held() == 3);

  p.hold("F", j.record("f"), retried("F", t0 + 1s));  // sent while down: behind the kept ones
  CHECK(p.on_link_ready(t0 + 10ms).empty());
  CHECK(p.take_write_buffer() == "ACEF");
  answer_all(p);
  // Only the written one may have run on the lost link.
  CHECK(j.answered == std::vector<std::string>{"a (repeated)", "c", "e", "f"});
}

TEST_CASE("pipeline: a command kept over two lost links stays marked repeated") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"), retried("A", t0 + 1s));
  p.take_write_buffer();
  fail_all(p.on_link_lost(t0, false));
  CHECK(p.on_link_ready(t0).empty());
  // The second link is lost before the command is written again.
  fail_all(p.on_link_lost(t0 + 1ms, false));
  CHECK(p.on_link_ready(t0 + 2ms).empty());
  p.take_write_buffer();
  answer_all(p);
  CHECK(j.answered == std::vector<std::string>{"a (repeated)"});
}

TEST_CASE("pipeline: a command whose time passes while the link is down expires at the next link") {
  pipeline p;
  journal j;
  p.hold("A", j.record("a"), retried("A", t0 + 100ms));
  p.hold("B", j.record("b"), retried("B", t0 + 1s));
  auto expired = p.on_link_ready(t0 + 500ms);
  REQUIRE(expired.size() == 1);
  fail_all(std::move(expired));
  CHECK(j.failed == std::vector<std::string>{"a"});
  CHECK(p.take_write_buffer() == "B");
}

TEST_CASE("pipeline: closing for good keeps nothing for a next link") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"), retried("A", t0 + 1s));
  p.hold("B", j.record("b"), retried("B", t0 + 1s));
  p.take_write_buffer();
  fail_all(p.on_link_lost(t0, true));
  CHECK(j.failed == std::vector<std::string>{"a", "b"});
  CHECK(p.held() == 0);
  CHECK(p.awaiting() == 0);
}

TEST_CASE("pipeline: a held plain command is copied, a retried one is shared") {
  pipeline p;
  journal j;
  std::string plain = "PLAIN";
  p.hold(plain, j.record("plain"), {});
  plain.assign("XXXXX");
  auto shared = std::make_shared<const std::string>("SHARED");
  p.hold(*shared, j.record("shared"), {shared, t0 + 1s});
  CHECK(shared.use_count() == 2);
  CHECK(p.on_link_ready(t0).empty());
  CHECK(p.take_write_buffer() == "PLAINSHARED");
}

TEST_CASE("pipeline: a dropped link's unwritten output goes, its commands stay to be decided") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"));
  p.drop_output();
  CHECK_FALSE(p.has_output());
  CHECK(p.awaiting() == 1);
  fail_all(p.on_link_lost(t0, false));
  CHECK(j.failed == std::vector<std::string>{"a"});
}

TEST_CASE("pipeline: a write's buffer marks only the commands it carries as written") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"), retried("A", t0 + 1s));
  p.take_write_buffer();
  answer_all(p);
  p.push("B", j.record("b"), retried("B", t0 + 1s));  // queued after the write, never written
  fail_all(p.on_link_lost(t0, false));
  CHECK(p.on_link_ready(t0).empty());
  p.take_write_buffer();
  answer_all(p);
  CHECK(j.answered == std::vector<std::string>{"a", "b"});
}

TEST_CASE("pipeline: abandoning drops the callbacks uncalled and keeps the write's buffer") {
  pipeline p;
  journal j;
  p.push("AB", j.record("a"));
  p.hold("C", j.record("c"), {});
  const auto writing = p.take_write_buffer();
  {
    auto dropped = p.abandon();
    CHECK(dropped.awaited.size() == 1);
    CHECK(dropped.held.size() == 1);
  }
  CHECK(j.answered.empty());
  CHECK(j.failed.empty());
  CHECK(p.awaiting() == 0);
  CHECK(p.held() == 0);
  // A write still in flight reads this buffer (found by review: abandon()
  // once freed it with the rest).
  CHECK(writing == "AB");
}

TEST_CASE("pipeline: a retry kept by a lost link fails when the link then closes for good") {
  pipeline p;
  journal j;
  p.push("A", j.record("a"));
  p.push("B", j.record("b"), retried("B", t0 + 10s));
  p.take_write_buffer();
  p.drop_output();
  fail_all(p.on_link_lost(t0, false));
  CHECK(j.failed == std::vector<std::string>{"a"});
  CHECK(p.held() == 1);
  // A's callback shut the connection down: the kept retry is failed too,
  // never left without its one call.
  fail_all(p.on_link_lost(t0, true));
  CHECK(j.failed == std::vector<std::string>{"a", "b"});
  CHECK(p.held() == 0);
}

TEST_CASE("pipeline: a release's EVALSHA answered NOSCRIPT goes out again as EVAL, at the back") {
  using redlock::detail::eval_fallback;
  using redlock::detail::held_keys;
  using redlock::detail::release_command;
  const auto release = release_command(held_keys{{"k"}, ""}, "t", "me", 0ms);
  const auto eval = eval_fallback(release);
  REQUIRE_FALSE(eval.empty());
  pipeline p;
  journal j;
  p.push(release, j.record("release"), retried(release, t0 + 1s));
  p.push("SET", j.record("set"));
  CHECK(p.take_write_buffer() == release + "SET");
  p.on_write_done();

  // The node had lost the script: nobody is told, the EVAL is queued.
  CHECK_FALSE(answer(p, error_reply("NOSCRIPT No matching script. Please use EVAL.")));
  CHECK(j.answered.empty());
  CHECK(p.awaiting() == 2);
  REQUIRE(p.wants_write());
  CHECK(p.take_write_buffer() == eval);
  // The SET written after the EVALSHA is answered first, marked: it ran
  // ahead of the release; the EVAL's answer goes to the release.
  answer_all(p);
  CHECK(j.answered == std::vector<std::string>{"set (overtook)", "release"});
  // What is sent from now on runs in order again.
  p.on_write_done();
  p.push("GET", j.record("get"));
  answer_all(p);
  CHECK(j.answered.back() == "get");
}

TEST_CASE("pipeline: NOSCRIPT reaches the caller when there is no EVAL to fall back to") {
  using redlock::detail::eval_fallback;
  using redlock::detail::format_command;
  using redlock::detail::held_keys;
  using redlock::detail::release_command;
  pipeline p;
  journal j;
  const auto release = release_command(held_keys{{"k"}, ""}, "t", "me", 0ms);
  // Not kept for a resend: no bytes to make the EVAL from.
  p.push(release, j.record("unkept"));
  // Kept, but not an EVALSHA of ours.
  const auto other = format_command({"EVALSHA", std::string(40, 'a'), "0"});
  p.push(other, j.record("other"), retried(other, t0 + 1s));
  // Kept, but the answer is another error.
  p.push(release, j.record("refused"), retried(release, t0 + 1s));
  p.take_write_buffer();
  CHECK(answer(p, error_reply("NOSCRIPT No matching script.")));
  CHECK(answer(p, error_reply("NOSCRIPT No matching script.")));
  CHECK(answer(p, error_reply("NOPERM no permissions to run the 'evalsha' command")));
  CHECK(j.answered == std::vector<std::string>{"unkept", "other", "refused"});
  CHECK(p.awaiting() == 0);
  CHECK_FALSE(p.has_output());
}

TEST_CASE("pipeline: a command that overtook a release stays marked across a lost link") {
  using redlock::detail::held_keys;
  using redlock::detail::release_command;
  const auto release = release_command(held_keys{{"k"}, ""}, "t", "me", 0ms);
  pipeline p;
  journal j;
  p.push(release, j.record("release"), retried(release, t0 + 1s));
  p.push("B", j.record("b"), retried("B", t0 + 1s));
  p.take_write_buffer();
  p.on_write_done();
  CHECK_FALSE(answer(p, error_reply("NOSCRIPT No matching script.")));
  p.take_write_buffer();  // the EVAL is written, then the link fails
  p.drop_output();
  CHECK(p.on_link_lost(t0, false).empty());
  REQUIRE(p.held() == 2);
  // The next link sends both again in the order they were awaited, B ahead
  // of the release (as its EVALSHA form: a new link loads the scripts
  // first), both as repeats.
  CHECK(p.on_link_ready(t0).empty());
  CHECK(p.take_write_buffer() == "B" + release);
  answer_all(p);
  CHECK(j.answered == std::vector<std::string>{"b (repeated) (overtook)", "release (repeated)"});
}

}  // namespace pipeline_test
