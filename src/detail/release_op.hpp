// client::async_release: deletes the lock's key where it still holds our
// token, announces the release to waiters, and hands it over at once to the
// longest waiter of this client.
#pragma once

#include "detail/deadline_queue.hpp"
#include "detail/lock_state.hpp"
#include "detail/operation.hpp"
#include "detail/release_tally.hpp"
#include "detail/vote.hpp"

namespace redlock::detail {

class release_op final : public operation<release_op, error_code, std::size_t>, private deadline {
 public:
  release_op(std::shared_ptr<client_core> core, redlock::lock held,
             completion<error_code, std::size_t> done);
  void client_closed() override;

 private:
  void run() override;
  void cancel() override;
  void on_reply(const vote& answer);
  /// Too few answers in time.
  void on_deadline() override;
  void finish(error_code ec);

  redlock::lock held_;
  release_tally tally_;
};

}  // namespace redlock::detail
