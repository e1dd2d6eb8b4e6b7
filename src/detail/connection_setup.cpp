// A link's set-up, from connected to ready: the kind's set-up commands
// (AUTH, SELECT), the INFO admission check, and what goes first once ready.
#include "detail/commands.hpp"
#include "detail/connection.hpp"

#include <fmt/format.h>

namespace redlock::detail {

void connection::on_connected() {
  error_code ignored;
  lowest_layer().set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  lowest_layer().set_option(boost::asio::socket_base::keep_alive(true), ignored);
  state_ = state::handshaking;

  const auto setup = setup_commands();

  read();
  if (setup.empty()) return set_up();
  auto self = shared_from_this();
  for (std::size_t i = 0; i < setup.size(); ++i) {
    const bool last = i + 1 == setup.size();
    enqueue_write(setup[i], [this, self, last](error_code ec, const reply& r) {
      if (!ec && r.is_error()) ec = classify_error_reply(r.text);
      on_handshake_reply(ec, r, last);
    });
  }
}

void connection::on_handshake_reply(error_code ec, const reply& r, bool last) {
  if (state_ != state::handshaking) return;
  if (ec) {
    if (failures_.is_news(ec)) {
      settings_.log(log_level::error,
                    fmt::format("node {}: connection set-up refused: {}{}", describe(),
                                ec.message(), r.is_error() ? fmt::format(" ({})", r.text) : ""));
    }
    return fail(ec, true);
  }
  if (last) set_up();
}

void connection::set_up() {
  if (!settings_.check_topology) {
    checked();
    return become_ready(false);
  }
  if (admission_.passed_before()) return become_ready(true);
  // The first check waits for its verdict before anything else is sent: a
  // node that turns out to be another node's server must not run a single
  // command (its SET NX could make the other node answer nil). The connect
  // timeout bounds it, as it does the rest of the set-up.
  send_info();
}

void connection::send_info() {
  checking_ = true;
  enqueue_write(
      format_command({"INFO"}),
      [this, self = shared_from_this()](error_code ec, const reply& r) { on_info_reply(ec, r); });
}

void connection::on_info_reply(error_code ec, const reply& r) {
  if (ec || !checking_) return;  // the connection failed first
  auto verdict = admission_.judge(r);
  if (!verdict.unchecked_warning.empty()) {
    settings_.log(log_level::warning,
                  fmt::format("node {}: {}", describe(), verdict.unchecked_warning));
  }
  if (verdict.refusal) {
    // Logged when a series of failures starts or changes cause, so that a
    // refusal met after a plain connection failure is still explained.
    if (failures_.is_news(verdict.refusal)) {
      settings_.log(log_level::error,
                    fmt::format("node {}: refused: {}", describe(), verdict.reason));
    }
    // Every command behind INFO fails with the refusal: no reply of this
    // node has been read yet, so none can count as a vote.
    return fail(verdict.refusal, true);
  }
  for (const auto& risk : verdict.new_risks) {
    if (settings_.on_risk) {
      const auto endpoint = describe();
      settings_.on_risk({risk.kind, settings_.node_index, endpoint, risk.explanation});
    } else {
      settings_.log(log_level::warning,
                    fmt::format("node {}: {}", describe(), default_risk_warning(risk)));
    }
  }
  accepted();
}

void connection::accepted() {
  checked();
  if (settings_.watcher) {
    settings_.watcher->on_connection(settings_.node_index, describe(), connection_event::connected,
                                     {});
  }
  if (state_ == state::handshaking) become_ready(false);
}

void connection::checked() {
  checking_ = false;
  if (failures_.end()) {
    settings_.log(log_level::info, fmt::format("node {}: reconnected", describe()));
  }
}

void connection::become_ready(bool check_ahead) {
  connect_timer_.cancel();
  state_ = state::ready;
  cork();
  // A node that passed before is checked again on every reconnect, with the
  // commands right behind INFO so that it costs no round trip: its reply is
  // read before theirs, and a refusal fails them before any reply counts.
  if (check_ahead) send_info();
  queue_first();
  const bool none_owed = pipeline_.awaiting() == 0;
  auto expired = pipeline_.on_link_ready(clock::now());
  if (none_owed && pipeline_.awaiting() > 0) note_owed_replies();
  uncork();
  // Only once everything still due is queued: these callbacks may send.
  for (auto& done : expired) done(errc::node_timeout, reply{});
  if (std::exchange(closing_, false)) return close();
  became_ready();
}

}  // namespace redlock::detail
