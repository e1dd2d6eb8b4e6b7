// The error category: names, messages, and the invalid-argument condition.
#include <redlock/error.hpp>

#include <catch2/catch.hpp>

using redlock::errc;

TEST_CASE("errors have their own category and clear messages", "[unit][error]") {
  const redlock::error_code ec = errc::quorum_unreachable;
  CHECK(std::string(ec.category().name()) == "redlock");
  CHECK(ec.message().find("quorum") != std::string::npos);
  CHECK(redlock::error_code(errc::authentication_failed).message().find("authentication") !=
        std::string::npos);
  for (int value = static_cast<int>(errc::not_acquired);
       value <= static_cast<int>(errc::too_many_nodes); ++value) {
    const redlock::error_code e(value, redlock::error_category());
    CHECK(e.message().find("unknown") == std::string::npos);
  }
}

TEST_CASE("argument errors compare equal to invalid_argument", "[unit][error]") {
  CHECK(redlock::is_invalid_argument(errc::empty_resource));
  CHECK(redlock::is_invalid_argument(errc::duplicate_node));
  CHECK_FALSE(redlock::is_invalid_argument(errc::not_acquired));
  CHECK(redlock::error_code(errc::node_timeout) == boost::system::errc::timed_out);
  CHECK(redlock::error_code(errc::not_acquired) != boost::system::errc::invalid_argument);
}

TEST_CASE("failures that waiting cannot heal are told apart", "[unit][error]") {
  for (const auto lasting :
       {errc::authentication_failed, errc::replica_node, errc::cluster_node, errc::same_server}) {
    CHECK(redlock::is_permanent_node_failure(lasting));
  }
  CHECK(
      redlock::is_permanent_node_failure(redlock::error_code(19, redlock::tls_verify_category())));
  for (const auto passing : {errc::node_timeout, errc::node_unavailable, errc::protocol_error,
                             errc::server_error, errc::quorum_unreachable}) {
    CHECK_FALSE(redlock::is_permanent_node_failure(passing));
  }
  CHECK_FALSE(redlock::is_permanent_node_failure(
      boost::system::errc::make_error_code(boost::system::errc::connection_refused)));
  CHECK_FALSE(redlock::is_permanent_node_failure({}));
}
