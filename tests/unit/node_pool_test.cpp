#include "detail/node_pool.hpp"

#include <redlock/error.hpp>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

using redlock::detail::node_pool;

namespace {

// Connections that are never started open no socket: what is sent waits for
// a set-up that never comes, and close() fails it.
node_pool make_pool(boost::asio::io_context& io, std::size_t nodes) {
  return node_pool(redlock::detail::make_core_strand(io.get_executor()),
                   std::vector<redlock::node_config>(nodes),
                   [](std::size_t) { return redlock::detail::connection_settings{}; });
}

}  // namespace

TEST_CASE("node_pool::broadcast sends to the nodes asked for and names each answer's node",
          "[unit][node_pool]") {
  boost::asio::io_context io;
  auto pool = make_pool(io, 5);
  REQUIRE(pool.size() == 5);
  std::map<std::size_t, redlock::error_code> answers;
  const auto record = [&](std::size_t node, redlock::error_code ec, const redlock::detail::reply&) {
    CHECK(answers.emplace(node, ec).second);  // once per node
  };

  CHECK(pool.broadcast("*1\r\n$4\r\nPING\r\n", record, [](std::size_t i) { return i % 2 == 0; }) ==
        3);
  pool.close();
  io.poll();
  REQUIRE(answers.size() == 3);
  for (const auto& [node, ec] : answers) {
    CHECK(node % 2 == 0);
    CHECK(ec == redlock::errc::connection_closed);
  }
}

TEST_CASE("node_pool::broadcast of a shared command reaches every node by default",
          "[unit][node_pool]") {
  boost::asio::io_context io;
  auto pool = make_pool(io, 3);
  const auto command = std::make_shared<const std::string>("*1\r\n$4\r\nPING\r\n");
  std::vector<std::size_t> nodes;
  CHECK(
      pool.broadcast(command, redlock::clock::now(),
                     [&](std::size_t node, redlock::error_code ec, const redlock::detail::reply&) {
                       CHECK(ec);
                       nodes.push_back(node);
                     }) == 3);
  pool.close();
  io.poll();
  std::sort(nodes.begin(), nodes.end());
  CHECK(nodes == std::vector<std::size_t>{0, 1, 2});
}
