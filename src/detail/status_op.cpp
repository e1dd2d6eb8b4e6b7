#include "detail/status_op.hpp"

#include "detail/commands.hpp"
#include "detail/quorum_fsm.hpp"
#include "detail/status_reading.hpp"

namespace redlock::detail {

status_op::status_op(std::shared_ptr<client_core> core, std::string resource, milliseconds timeout,
                     completion<error_code, resource_status> done)
    : operation(std::move(core), std::move(done)), timeout_(timeout), timer_(core_->strand()) {
  status_.resource = std::move(resource);
}

void status_op::run() {
  if (status_.resource.empty()) {
    complete(errc::empty_resource, std::move(status_));
    return;
  }
  if (timeout_.count() <= 0) {
    complete(errc::invalid_request_timeout, std::move(status_));
    return;
  }
  status_.nodes.assign(core_->size(), node_status{});
  for (auto& node : status_.nodes) node.error = errc::node_timeout;
  outstanding_ = core_->size();
  const auto command = status_command(core_->key_for(status_.resource));
  auto self = shared_from_this();
  core_->pool().broadcast(command, [self](std::size_t node, error_code ec, const reply& r) {
    self->on_answer(node, read_node_status(ec, r));
  });
  timer_.expires_after(timeout_);
  timer_.async_wait([self](error_code ec) {
    if (!ec) self->finish();
  });
}

void status_op::on_answer(std::size_t node, node_status answer) {
  if (completed()) return;
  status_.nodes[node] = std::move(answer);
  if (--outstanding_ == 0) finish();
}

void status_op::cancel() { complete(boost::asio::error::operation_aborted, {}); }

void status_op::client_closed() { complete(boost::asio::error::operation_aborted, {}); }

void status_op::finish() {
  if (completed()) return;
  timer_.cancel();
  const auto quorum = quorum_of(core_->size());
  summarize(status_, quorum);
  const error_code ec =
      status_.answered < quorum ? make_error_code(errc::quorum_unreachable) : error_code{};
  complete(ec, std::move(status_));
}

}  // namespace redlock::detail
