// The batched extension's command and how its answer is split per lock.
#include "detail/extension_batch.hpp"

#include "detail/commands.hpp"
#include "detail/scripts.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace redlock::detail;
using namespace std::chrono_literals;

namespace {

reply string_reply(std::string_view text) {
  reply r;
  r.type = reply::kind::string;
  r.text = text;
  return r;
}

}  // namespace

TEST_CASE("extend_many: every key first, then each lock's token and key TTL",
          "[unit][extension_batch]") {
  const std::vector<extension_batch::entry> entries{{"k1", "t1", "2500", nullptr},
                                                    {"k2", "t2", "3000", nullptr}};
  CHECK(extend_many_command(entries) == format_command({"EVAL", extend_many_script(), "2", "k1",
                                                        "k2", "t1", "2500", "t2", "3000"}));
}

TEST_CASE("extend_many never shortens a key and answers one character per key",
          "[unit][extension_batch]") {
  const auto body = extend_many_script();
  CHECK(body.find("pttl") < body.find("pexpire"));
  CHECK(body.find("table.concat") != std::string_view::npos);
  // pcall: a reentrant lock's hash under the key is simply not ours.
  CHECK(body.find("redis.pcall('get'") != std::string_view::npos);
}

TEST_CASE("a batch answer is a string of one '0' or '1' per lock", "[unit][extension_batch]") {
  CHECK(is_batch_answer(string_reply("101"), 3));
  CHECK_FALSE(is_batch_answer(string_reply("10"), 3));    // a lock without an answer
  CHECK_FALSE(is_batch_answer(string_reply("1011"), 3));  // an answer without a lock
  CHECK_FALSE(is_batch_answer(string_reply("1x1"), 3));
  reply integer;
  integer.type = reply::kind::integer;
  integer.integer = 1;
  CHECK_FALSE(is_batch_answer(integer, 1));
  reply error;
  error.type = reply::kind::error;
  error.text = "1";
  CHECK_FALSE(is_batch_answer(error, 1));

  auto batch = string_reply("10");
  batch.repeated = true;
  const auto first = answer_of(batch, 0);
  const auto second = answer_of(batch, 1);
  CHECK(first.type == reply::kind::integer);
  CHECK(first.integer == 1);
  CHECK(second.integer == 0);
  CHECK(second.repeated);
}
