// The batched extension's command and how its answer is split per lock.
#include "detail/extension_batch.hpp"

#include "detail/commands.hpp"
#include "detail/node_pool.hpp"
#include "detail/scripts.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
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
  const std::vector<extension_batch::entry> entries{{"k1", "t1", "2500", {}, nullptr},
                                                    {"k2", "t2", "3000", {}, nullptr}};
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

namespace {

struct fake_extension final : batched_extension {
  std::vector<std::size_t> answered_nodes;
  std::vector<redlock::error_code> errors;
  int timeouts = 0;
  void on_batched_reply(std::size_t node, redlock::error_code ec, const reply&,
                        redlock::clock::time_point) override {
    answered_nodes.push_back(node);
    errors.push_back(ec);
  }
  void on_batch_timeout(redlock::clock::time_point) override { ++timeouts; }
};

}  // namespace

TEST_CASE("a batch call times each lock out at its own expiry, on one timer, until all answer",
          "[unit][extension_batch]") {
  boost::asio::io_context io;
  auto strand = make_core_strand(io.get_executor());
  // Never started: what is sent waits, and close() fails it.
  node_pool pool(strand, std::vector<redlock::node_config>(3),
                 [](std::size_t) { return connection_settings{}; });
  const auto now = redlock::clock::now();
  auto soon = std::make_shared<fake_extension>();
  auto later = std::make_shared<fake_extension>();
  auto never = std::make_shared<fake_extension>();
  extension_batch batch;
  batch.add("k1", "t1", 1000ms, now + 10ms, soon);
  batch.add("k2", "t2", 1000ms, now + 40ms, later);
  batch.add("k3", "t3", 1000ms, now + 1h, never);
  batch.flush(pool, strand);
  CHECK(batch.empty());

  io.run_for(std::chrono::milliseconds(200));
  CHECK(soon->timeouts >= 1);
  CHECK(later->timeouts >= 1);
  CHECK(never->timeouts == 0);
  CHECK(soon->answered_nodes.empty());

  // Every node answers (here: fails): each lock hears from each node once,
  // and the call's timer is cancelled, so nothing is left to run.
  pool.close();
  io.restart();
  const auto ran = io.run_for(std::chrono::seconds(5));
  CHECK(ran > 0);
  CHECK(io.stopped());
  for (const auto& e : {soon, later, never}) {
    std::sort(e->answered_nodes.begin(), e->answered_nodes.end());
    CHECK(e->answered_nodes == std::vector<std::size_t>{0, 1, 2});
    for (const auto& ec : e->errors) CHECK(ec == redlock::errc::connection_closed);
  }
  CHECK(never->timeouts == 0);
}

TEST_CASE("next_expiry: the earliest expiry still to come", "[unit][extension_batch]") {
  const auto t = redlock::clock::now();
  const std::vector<extension_batch::entry> entries{{"a", "t", "1", t + 5ms, nullptr},
                                                    {"b", "t", "1", t + 2ms, nullptr},
                                                    {"c", "t", "1", t + 9ms, nullptr}};
  CHECK(next_expiry(entries, t) == t + 2ms);
  CHECK(next_expiry(entries, t + 2ms) == t + 5ms);
  CHECK(next_expiry(entries, t + 9ms) == redlock::clock::time_point::max());
}
