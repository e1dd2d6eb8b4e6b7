// client::async_status: one read-only script per node; done when every node
// answered or the timeout passed.
#pragma once

#include "detail/operation.hpp"
#include "detail/timer.hpp"

#include <redlock/status.hpp>

#include <string>

namespace redlock::detail {

class status_op final : public operation<status_op, error_code, resource_status> {
 public:
  status_op(std::shared_ptr<client_core> core, std::string resource, milliseconds timeout,
            completion<error_code, resource_status> done);
  void client_closed() override;

 private:
  void run() override;
  void cancel() override;
  void on_answer(std::size_t node, node_status answer);
  void finish();

  resource_status status_;
  milliseconds timeout_;
  std::size_t outstanding_ = 0;
  timer timer_;
};

}  // namespace redlock::detail
