// Bytes from a hostile or broken node: every reply hiredis can make of them
// (any type, nesting, huge or negative lengths, truncation, in any split)
// goes through what the library does with a reply: votes, deletes, status.
#include "detail/reply.hpp"
#include "detail/status_reading.hpp"
#include "detail/vote.hpp"

#include <hiredis.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace {

using namespace redlock::detail;

void judge(const redisReply& parsed) {
  const auto r = reply_view(parsed);
  (void)acquire_vote({}, r);
  (void)extend_vote({}, r);
  (void)release_vote({}, r);
  (void)read_node_status({}, r);
  if (r.is_error()) (void)classify_error_reply(r.text);
  // Pub/sub pushes and multi-key replies are arrays: their elements too.
  if (parsed.type == REDIS_REPLY_ARRAY) {
    for (std::size_t i = 0; i < parsed.elements; ++i) judge(*parsed.element[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the read size, as a socket splits a stream anywhere.
  const std::size_t chunk = data[0] % 16 + 1;
  ++data;
  --size;
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(create_reply_reader(),
                                                              &redisReaderFree);
  for (std::size_t at = 0; at < size; at += chunk) {
    const auto n = std::min(chunk, size - at);
    if (redisReaderFeed(reader.get(), reinterpret_cast<const char*>(data + at), n) != REDIS_OK) {
      return 0;
    }
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) return 0;  // connection dropped
      if (raw == nullptr) break;
      judge(*static_cast<const redisReply*>(raw));
      freeReplyObject(raw);
    }
  }
  return 0;
}
