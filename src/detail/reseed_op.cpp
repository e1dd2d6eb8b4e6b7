#include "detail/reseed_op.hpp"

#include "detail/commands.hpp"

#include <fmt/format.h>

namespace redlock::detail {

reseed_op::reseed_op(std::shared_ptr<node_set> nodes, std::size_t node, std::string loss_id,
                     clock::duration timeout)
    : nodes_(std::move(nodes)),
      node_(node),
      loss_id_(std::move(loss_id)),
      timeout_(timeout),
      timer_(nodes_->strand()),
      readings_(nodes_->size()) {}

void reseed_op::run() {
  auto self = shared_from_this();
  const auto command = fence_state_command();
  waiting_ = nodes_->size() - 1;
  for (std::size_t i = 0; i < nodes_->size(); ++i) {
    if (i == node_) continue;
    nodes_->node(i).send(command,
                         [self, i](error_code ec, const reply& r) { self->on_reading(i, ec, r); });
  }
  timer_.expires_after(timeout_);
  timer_.async_wait([self](error_code ec) {
    if (!ec) self->decide();
  });
}

void reseed_op::on_reading(std::size_t node, error_code ec, const reply& r) {
  if (decided_) return;
  if (!ec && r.type == reply::kind::string) {
    if (auto reading = parse_fence_reading(r.text)) readings_[node] = *reading;
  }
  if (--waiting_ == 0) decide();
}

void reseed_op::decide() {
  if (decided_) return;
  decided_ = true;
  timer_.cancel();
  std::vector<fence_reading> others;
  for (std::size_t i = 0; i < readings_.size(); ++i) {
    if (i != node_) others.push_back(readings_[i]);
  }
  const auto floor = reseed_floor(others, nodes_->size());
  if (!floor) {
    return finish("not re-seeded yet: too few other nodes answered with valid fencing state");
  }
  auto self = shared_from_this();
  nodes_->node(node_).send(fence_reseed_command(loss_id_, *floor),
                           [self, floor = *floor](error_code ec, const reply& r) {
                             if (!ec && r.type == reply::kind::integer && r.integer == 1) {
                               return self->finish(fmt::format("re-seeded (floor {})", floor));
                             }
                             self->finish(ec ? "not re-seeded: " + ec.message()
                                             : "not re-seeded: its loss changed meanwhile");
                           });
}

void reseed_op::finish(std::string_view outcome) {
  if (finished_) return;
  finished_ = true;
  nodes_->log(log_level::info, fmt::format("redlock: node {}: fencing state lost; {}",
                                           nodes_->node(node_).endpoint(), outcome));
  nodes_->fence_losses().ended(node_, loss_id_);
}

}  // namespace redlock::detail
