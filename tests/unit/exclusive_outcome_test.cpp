#include <redlock/detail/exclusive_outcome.hpp>

#include <boost/asio/error.hpp>
#include <catch2/catch.hpp>

#include <string>

using redlock::errc;
using redlock::error_code;
using redlock::detail::judge_exclusive;

TEST_CASE("judge_exclusive: the work's error, then the lost signal, then a lapsed release",
          "[unit][exclusive_outcome]") {
  const error_code work = boost::asio::error::operation_aborted;
  const error_code lost = errc::lock_expiring;
  const error_code lapsed = errc::lock_lost;
  const error_code unreachable = errc::quorum_unreachable;

  CHECK(judge_exclusive(work, lost, lapsed).error == work);
  CHECK(judge_exclusive({}, lost, lapsed).error == lost);
  CHECK(std::string(judge_exclusive({}, lost, {}).what).find("lost while the work ran") !=
        std::string::npos);
  CHECK(judge_exclusive({}, {}, lapsed).error == lapsed);
  CHECK(std::string(judge_exclusive({}, {}, lapsed).what).find("lapsed before the release") !=
        std::string::npos);
  // The work ran under the lock; a release that could not reach a quorum
  // leaves keys that expire with their TTL: not the run's failure.
  const auto fine = judge_exclusive({}, {}, unreachable);
  CHECK_FALSE(fine.error);
  CHECK(fine.what == nullptr);
  CHECK_FALSE(judge_exclusive({}, {}, {}).error);
}
