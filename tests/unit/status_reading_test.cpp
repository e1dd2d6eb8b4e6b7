// Reading async_status's answers: each node's reply, and the quorum's holder.
#include "detail/status_reading.hpp"
#include "made_replies.hpp"

#include <catch2/catch.hpp>

using redlock::errc;
using redlock::error_code;
using redlock::node_status;
using redlock::resource_status;
using redlock::detail::read_node_status;
using redlock::detail::reply;
using redlock::detail::summarize;

namespace {

const auto text = redlock::test::text_reply;

node_status holding(node_status::holding state, std::string holder) {
  node_status n;
  n.state = state;
  n.holder = std::move(holder);
  return n;
}

}  // namespace

TEST_CASE("status replies: free, plain, reentrant, other, no expiry", "[unit][status]") {
  CHECK(read_node_status({}, text("none")).state == node_status::holding::free);

  const auto plain = read_node_status({}, text("string 1500 abc def"));
  CHECK(plain.state == node_status::holding::plain);
  CHECK(plain.holder == "abc def");  // the holder may hold spaces
  REQUIRE(plain.ttl);
  CHECK(plain.ttl->count() == 1500);

  const auto reentrant = read_node_status({}, text("hash 20 owner-1"));
  CHECK(reentrant.state == node_status::holding::reentrant);
  CHECK(reentrant.holder == "owner-1");

  CHECK(read_node_status({}, text("hash 20 ")).state == node_status::holding::other);
  CHECK(read_node_status({}, text("list -1 ")).state == node_status::holding::other);
  CHECK_FALSE(read_node_status({}, text("string -1 t")).ttl);
  CHECK(read_node_status({}, text("string -1 ")).holder.empty());
}

TEST_CASE("status replies that are errors or malformed read as no answer", "[unit][status]") {
  const auto failed = read_node_status(errc::node_timeout, {});
  CHECK_FALSE(failed.answered());
  CHECK(failed.error == errc::node_timeout);

  reply refused;
  refused.type = reply::kind::error;
  refused.text = "NOAUTH Authentication required.";
  CHECK(read_node_status({}, refused).error == errc::authentication_failed);

  for (const auto* body : {"string", "string 12", "string x t", "string 1x t", ""}) {
    INFO(body);
    CHECK(read_node_status({}, text(body)).error == errc::protocol_error);
  }
  reply number;
  number.type = reply::kind::integer;
  CHECK(read_node_status({}, number).error == errc::protocol_error);
}

TEST_CASE("summarize finds the holder on a quorum, and only a real one", "[unit][status]") {
  resource_status st;
  st.nodes = {holding(node_status::holding::plain, "t"), holding(node_status::holding::plain, "t"),
              holding(node_status::holding::free, ""), node_status{}, node_status{}};
  summarize(st, 3);
  CHECK(st.answered == 3);
  CHECK(st.free == 1);
  CHECK_FALSE(st.quorum_holder);

  st.nodes[3] = holding(node_status::holding::plain, "t");
  summarize(st, 3);
  CHECK(st.quorum_holder == "t");
  CHECK(st.answered == 4);

  // A reentrant owner id equal to a plain token is another holder; keys of
  // other types hold nothing.
  st.nodes = {holding(node_status::holding::plain, "x"),
              holding(node_status::holding::reentrant, "x"),
              holding(node_status::holding::other, "x")};
  summarize(st, 2);
  CHECK_FALSE(st.quorum_holder);
  CHECK(st.free == 0);
}
