#include "detail/undo_op.hpp"

#include "detail/commands.hpp"

#include <algorithm>

namespace redlock::detail {
namespace {

// A plain attempt's keys were only ever its own: nobody waits for a lock
// nobody held. A reentrant attempt's field can be the last hold of a key the
// owner's other acquisitions held and have released meanwhile; the script
// then announces that it freed the resource (only then: an attempt alone on
// a node must not wake everyone at each undo), with a payload that is no
// client's id, so this client's waiters hear it too.
std::string_view announcement(const held_keys& keys) {
  return keys.owner.empty() ? std::string_view{} : std::string_view{"undo"};
}

}  // namespace

undo_op::undo_op(std::shared_ptr<client_core> core, const held_keys& keys, std::string_view token,
                 std::chrono::milliseconds lock_delay, undo_plan plan, clock::duration timeout,
                 clock::time_point retry_until, unique_function<void()> done)
    : core_(std::move(core)),
      command_(std::make_shared<const std::string>(
          release_command(keys, token, announcement(keys), lock_delay))),
      plan_(std::move(plan)),
      timeout_(timeout),
      retry_until_(retry_until),
      done_(std::move(done)),
      timer_(core_->strand()) {}

void undo_op::run() {
  auto self = shared_from_this();
  awaited_ =
      static_cast<std::size_t>(std::count(plan_.begin(), plan_.end(), undo_role::send_and_await));
  // Retried across reconnects: the delete must follow its SET wherever
  // that may have landed, even if the connection the SET went out on died.
  core_->pool().broadcast(
      command_, retry_until_,
      [self](std::size_t node, error_code, const reply&) { self->on_reply(node); },
      [this](std::size_t node) { return plan_[node] != undo_role::skip; });
  if (awaited_ == 0) {
    // Nothing to wait for; still call back from a handler, not from here.
    boost::asio::post(core_->strand(), [self] { self->finish(); });
    return;
  }
  timer_.expires_after(timeout_);
  timer_.async_wait([self](error_code ec) {
    if (!ec) self->finish();
  });
}

void undo_op::on_reply(std::size_t node) {
  if (plan_[node] == undo_role::send_and_await && --awaited_ == 0) finish();
}

void undo_op::finish() {
  if (!done_) return;
  timer_.cancel();
  auto done = std::move(done_);
  done_ = {};
  done();
}

}  // namespace redlock::detail
