#include "detail/operations.hpp"

namespace redlock::detail {

release_op::release_op(std::shared_ptr<client_core> core, std::string key, std::string token,
                       milliseconds timeout, plan how, unique_function<void(result)> done)
    : core_(std::move(core)),
      key_(std::move(key)),
      token_(std::move(token)),
      channel_(how.announce ? release_channel(key_) : std::string()),
      timeout_(timeout),
      plan_(std::move(how)),
      done_(std::move(done)),
      timer_(core_->strand()) {
  core_->enroll(this);
}

release_op::~release_op() { core_->withdraw(this); }

void release_op::run() {
  auto self = shared_from_this();
  const auto command = release_command(key_, token_, channel_, core_->id());
  for (std::size_t i = 0; i < core_->size(); ++i) {
    if (plan_.nodes[i] == node_role::skip) continue;
    if (plan_.nodes[i] == node_role::send_and_await) ++outstanding_;
    send_script(core_->node(i), i, command, self);
  }
  if (outstanding_ == 0) {
    // Nothing to wait for; still complete from a handler, not from here.
    boost::asio::post(core_->strand(), [self] { self->finish(); });
    return;
  }
  timer_.expires_after(timeout_);
  timer_.async_wait([self](error_code ec) {
    if (!ec) self->finish();
  });
}

void release_op::on_reply(std::size_t node, error_code ec, const reply& r) {
  if (!done_) return;
  if (!ec && r.type == reply::kind::integer) {
    ++result_.answered;
    if (r.integer == 1) ++result_.removed;
  }
  if (plan_.nodes[node] == node_role::send_and_await && --outstanding_ == 0) return finish();
  if (plan_.enough_removed != 0 && result_.removed >= plan_.enough_removed) finish();
}

void release_op::abort() { finish(); }

std::string release_op::eval_form() const {
  return release_command(key_, token_, channel_, core_->id(), script_call::eval);
}

void release_op::finish() {
  if (!done_) return;
  timer_.cancel();
  auto done = std::move(done_);
  done_ = {};
  done(result_);
}

}  // namespace redlock::detail
