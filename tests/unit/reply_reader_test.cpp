// The reply reader a connection parses a node's bytes with: hostile headers
// must not make it allocate what they claim.
#include "detail/reply.hpp"

#include <hiredis.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace reply_reader_test {

using redlock::detail::create_reply_reader;

namespace {

/// Feeds `bytes`; REDIS_OK with the reply's type, or REDIS_ERR.
std::pair<int, int> read_one(const std::string& bytes) {
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(create_reply_reader(),
                                                              &redisReaderFree);
  REQUIRE(reader);
  if (redisReaderFeed(reader.get(), bytes.data(), bytes.size()) != REDIS_OK) return {REDIS_ERR, 0};
  void* raw = nullptr;
  if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) return {REDIS_ERR, 0};
  const int type = raw == nullptr ? -1 : static_cast<const redisReply*>(raw)->type;
  freeReplyObject(raw);
  return {REDIS_OK, type};
}

}  // namespace

TEST_CASE("an array header claiming a billion elements is refused, not allocated",
          "[unit][reply]") {
  // Found by fuzz_replies: hiredis callocs the element pointers up front.
  CHECK(read_one("*1111111111\r\n").first == REDIS_ERR);
  CHECK(read_one("*2147483647\r\n").first == REDIS_ERR);
  CHECK(read_one("*-5\r\n").first == REDIS_ERR);
}

TEST_CASE("ordinary replies still parse", "[unit][reply]") {
  CHECK(read_one("*2\r\n:1\r\n$3\r\nabc\r\n") == std::pair{REDIS_OK, REDIS_REPLY_ARRAY});
  CHECK(read_one("*-1\r\n") == std::pair{REDIS_OK, REDIS_REPLY_NIL});
  CHECK(read_one("+OK\r\n") == std::pair{REDIS_OK, REDIS_REPLY_STATUS});
  CHECK(read_one("*65536\r\n") == std::pair{REDIS_OK, -1});  // the cap itself: waits for elements
}

}  // namespace reply_reader_test
