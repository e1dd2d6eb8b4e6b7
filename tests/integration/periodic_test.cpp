// Once-per-period jobs across instances with clients (and clocks) of their own.
#include "test_env.hpp"

#include <redlock/periodic.hpp>

#include <map>
#include <memory>
#include <mutex>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
using redlock::occurrence;
using redlock::occurrence_outcome;

namespace {

/// What every instance did, by due time.
struct ledger {
  std::map<std::string, int> runs;      ///< Due id -> runs started.
  std::map<std::string, int> outcomes;  ///< Due id -> outcomes reported.
  std::map<occurrence_outcome, int> by_outcome;
  std::vector<std::pair<std::size_t, std::string>> ran_by;  ///< (instance, due id)
};

struct instance {
  instance(env& e, ledger& book, std::size_t index, milliseconds clock_offset,
           milliseconds work = 50ms)
      : locks(e.io.get_executor(), e.config), timer(e.io) {
    redlock::periodic_options options;
    options.when = redlock::schedule::every(1s);
    options.max_clock_skew = 400ms;
    options.lock = once(700ms);
    options.clock_offset = clock_offset;
    job.emplace(
        locks, "nightly", options,
        [this, &book, index, work](const occurrence& due, redlock::keeper&,
                                   redlock::work_done done) {
          ++book.runs[due.id];
          book.ran_by.emplace_back(index, due.id);
          timer.expires_after(work);
          timer.async_wait([done = std::make_shared<redlock::work_done>(std::move(done))](
                               error_code) mutable { (*done)({}); });
        },
        [&book](const occurrence& due, occurrence_outcome outcome, error_code) {
          ++book.outcomes[due.id];
          ++book.by_outcome[outcome];
        });
  }

  redlock::client locks;
  boost::asio::steady_timer timer;
  std::optional<redlock::periodic_job> job;
};

}  // namespace

TEST_CASE("periodic job: each due time runs once across instances whose clocks differ",
          "[integration][periodic]") {
  env e;
  ledger book;
  std::vector<std::unique_ptr<instance>> all;
  // Clocks 300 ms apart at most, within max_clock_skew (400 ms).
  all.push_back(std::make_unique<instance>(e, book, 0, -150ms));
  all.push_back(std::make_unique<instance>(e, book, 1, 0ms));
  all.push_back(std::make_unique<instance>(e, book, 2, 150ms));
  for (auto& i : all) warm_up(e.io, i->locks);
  for (auto& i : all) i->job->start();
  wait_on_timer(e.io, 4500ms);
  for (auto& i : all) i->job->stop();

  CHECK(book.runs.size() >= 4);
  for (const auto& [id, runs] : book.runs) {
    INFO("due " << id);
    CHECK(runs == 1);
  }
  // Every instance heard of every due time it considered, one way or another.
  CHECK(book.by_outcome[occurrence_outcome::ran] >= 4);
  CHECK(book.by_outcome[occurrence_outcome::claimed_elsewhere] >= 8);
  CHECK(book.by_outcome[occurrence_outcome::failed] == 0);
}

TEST_CASE("periodic job: a run that dies does not block the next due time",
          "[integration][periodic]") {
  env e;
  ledger book;
  // Instance 0's clock is ahead: it claims every due time first. Its job
  // never finishes, and its client dies during the first run.
  auto first = std::make_unique<instance>(e, book, 0, 200ms, 1h);
  auto second = std::make_unique<instance>(e, book, 1, 0ms);
  warm_up(e.io, first->locks);
  warm_up(e.io, second->locks);
  first->job->start();
  second->job->start();
  auto ran_by = [&](std::size_t who) {
    return std::count_if(book.ran_by.begin(), book.ran_by.end(),
                         [who](const auto& r) { return r.first == who; });
  };
  REQUIRE(poll_until(
      e.io, [&] { return ran_by(0) > 0; }, 4s));
  const auto crashed_due = std::find_if(book.ran_by.begin(), book.ran_by.end(), [](const auto& r) {
                             return r.first == 0;
                           })->second;
  const auto before_crash = ran_by(1);
  // The crash: nothing more from it, nothing released.
  first->job->stop();
  first->locks.close();
  // Its run lock (700 ms TTL) expires; the next due times run on the other.
  REQUIRE(poll_until(
      e.io, [&] { return ran_by(1) >= before_crash + 2; }, 5s));
  second->job->stop();
  CHECK(book.runs[crashed_due] == 1);  // the crashed due time is not run again
  for (const auto& [id, runs] : book.runs) {
    INFO("due " << id);
    CHECK(runs == 1);
  }
}

TEST_CASE("periodic job refuses bad options", "[integration][periodic]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  auto make = [&](std::string name, redlock::periodic_options options) {
    redlock::periodic_job job(locks, std::move(name), options,
                              [](const occurrence&, redlock::keeper&, redlock::work_done) {});
  };
  auto code_of = [&](std::string name, redlock::periodic_options options) -> error_code {
    try {
      make(std::move(name), options);
    } catch (const boost::system::system_error& failure) {
      return failure.code();
    }
    return {};
  };
  CHECK(code_of("", {}) == errc::empty_resource);
  redlock::periodic_options bad_keep;
  bad_keep.keep.extend_at = 2;
  CHECK(code_of("job", bad_keep) == errc::invalid_keep_options);
  redlock::periodic_options bad_skew;
  bad_skew.max_clock_skew = -1ms;
  CHECK_THROWS_AS(make("job", bad_skew), std::invalid_argument);
}
