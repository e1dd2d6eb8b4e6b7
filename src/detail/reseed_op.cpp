#include "detail/reseed_op.hpp"

#include "detail/commands.hpp"

#include <fmt/format.h>

namespace redlock::detail {

reseed_op::reseed_op(std::shared_ptr<client_core> core, std::size_t node, std::string loss_id,
                     clock::duration timeout)
    : core_(std::move(core)),
      node_(node),
      loss_id_(std::move(loss_id)),
      timeout_(timeout),
      timer_(core_->strand()),
      first_(core_->size()),
      again_(core_->size()) {}

void reseed_op::run() { read(first_); }

void reseed_op::read(std::vector<fence_reading>& into) {
  auto self = shared_from_this();
  const auto command = fence_state_command();
  ++round_;
  // The first round reads every other node, the second those not valid.
  const auto wanted = [this, again = &into == &again_](std::size_t i) {
    return i != node_ && !(again && first_[i].valid);
  };
  waiting_ = core_->pool().broadcast(
      command,
      [self, round = round_, &into](std::size_t node, error_code ec, const reply& r) {
        if (round != self->round_) return;
        if (!ec && r.type == reply::kind::string) {
          if (auto reading = parse_fence_reading(r.text)) into[node] = *reading;
        }
        if (--self->waiting_ == 0) self->read_done();
      },
      wanted);
  timer_.expires_after(timeout_);
  timer_.async_wait([self, round = round_](error_code ec) {
    if (!ec && round == self->round_) self->read_done();
  });
}

void reseed_op::read_done() {
  ++round_;  // later answers and the timer are of no use now
  timer_.cancel();
  std::vector<fence_reading> others;
  for (std::size_t i = 0; i < first_.size(); ++i) {
    if (i != node_) others.push_back(first_[i]);
  }
  if (!confirming_) {
    floor_ = reseed_floor(others, core_->size());
    if (!floor_) {
      return finish("not re-seeded yet: too few other nodes answered with valid fencing state");
    }
    if (needs_confirmation(others, core_->size())) {
      confirming_ = true;
      return read(again_);
    }
  } else {
    for (std::size_t i = 0; i < first_.size(); ++i) {
      if (i == node_ || first_[i].valid) continue;
      if (!still_lost(first_[i], again_[i])) {
        return finish("not re-seeded yet: another node's fencing state changed while it was read");
      }
    }
  }
  write();
}

void reseed_op::write() {
  auto self = shared_from_this();
  core_->pool().node(node_).send(
      fence_reseed_command(loss_id_, *floor_),
      [self, floor = *floor_](error_code ec, const reply& r) {
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
  core_->log(log_level::info, fmt::format("node {}: fencing state lost; {}",
                                          core_->pool().node(node_).endpoint(), outcome));
  core_->fence_losses().ended(node_, loss_id_);
}

}  // namespace redlock::detail
