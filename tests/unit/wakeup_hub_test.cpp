#include "detail/wakeup_hub.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <string>

using redlock::detail::wakeup_hub;

namespace {

// No nodes: released_here and its memory need no connection (the hub only
// connects on the first wait).
wakeup_hub make_hub(boost::asio::io_context& io) {
  return wakeup_hub(boost::asio::make_strand(io.get_executor()), {}, {}, "me");
}

}  // namespace

TEST_CASE("wakeup_hub remembers this client's recent releases per key", "[unit][wakeup_hub]") {
  boost::asio::io_context io;
  auto hub = make_hub(io);
  const auto before = hub.releases_here();
  CHECK_FALSE(hub.released_here_since("k", before));

  hub.released_here("k");
  CHECK(hub.releases_here() == before + 1);
  CHECK(hub.released_here_since("k", before));
  CHECK_FALSE(hub.released_here_since("other", before));
  CHECK_FALSE(hub.released_here_since("k", hub.releases_here()));  // nothing since

  // Only the last few are remembered: an old release is forgotten, not
  // misreported.
  const auto mark = hub.releases_here();
  hub.released_here("k");
  for (int i = 0; i < 100; ++i) hub.released_here("busy-" + std::to_string(i));
  CHECK_FALSE(hub.released_here_since("k", mark));
  CHECK(hub.released_here_since("busy-99", mark));
}
