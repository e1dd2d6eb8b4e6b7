// How Catch prints the pure machines' actions and states in a failed check:
// by name ("undo", not "2"). Every unit test of a machine includes this.
#pragma once

#include "detail/acquire_fsm.hpp"
#include "detail/claim_fsm.hpp"
#include "detail/keep_fsm.hpp"
#include "detail/quorum_fsm.hpp"
#include "detail/release_tally.hpp"
#include "detail/vote.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

namespace redlock::detail::printing {

constexpr std::string_view name(acquire_fsm::action::kind k) noexcept {
  using kind = acquire_fsm::action::kind;
  switch (k) {
    case kind::none:
      return "none";
    case kind::send_attempt:
      return "send_attempt";
    case kind::undo:
      return "undo";
    case kind::pause:
      return "pause";
    case kind::complete:
      return "complete";
    case kind::write_back:
      return "write_back";
  }
  return "acquire action ?";
}

constexpr std::string_view name(acquire_fsm::phase p) noexcept {
  using phase = acquire_fsm::phase;
  switch (p) {
    case phase::idle:
      return "idle";
    case phase::attempting:
      return "attempting";
    case phase::writing_back:
      return "writing_back";
    case phase::undoing:
      return "undoing";
    case phase::pausing:
      return "pausing";
    case phase::done:
      return "done";
  }
  return "acquire phase ?";
}

constexpr std::string_view name(undo_role r) noexcept {
  switch (r) {
    case undo_role::skip:
      return "skip";
    case undo_role::send:
      return "send";
    case undo_role::send_and_await:
      return "send_and_await";
  }
  return "undo role ?";
}

constexpr std::string_view name(quorum_fsm::state s) noexcept {
  using state = quorum_fsm::state;
  switch (s) {
    case state::pending:
      return "pending";
    case state::reached:
      return "reached";
    case state::failed:
      return "failed";
  }
  return "round state ?";
}

constexpr std::string_view name(keep_action::kind k) noexcept {
  using kind = keep_action::kind;
  switch (k) {
    case kind::wait:
      return "wait";
    case kind::extend:
      return "extend";
    case kind::signal:
      return "signal";
    case kind::finished:
      return "finished";
  }
  return "keep action ?";
}

constexpr std::string_view name(claim_fsm::step::action a) noexcept {
  using action = claim_fsm::step::action;
  switch (a) {
    case action::attempt:
      return "attempt";
    case action::read_status:
      return "read_status";
    case action::wait:
      return "wait";
    case action::finish:
      return "finish";
  }
  return "claim action ?";
}

constexpr std::string_view name(release_tally::verdict v) noexcept {
  using verdict = release_tally::verdict;
  switch (v) {
    case verdict::pending:
      return "pending";
    case verdict::released:
      return "released";
    case verdict::lost:
      return "lost";
    case verdict::unknown:
      return "unknown";
  }
  return "release verdict ?";
}

constexpr std::string_view name(vote::kind k) noexcept {
  switch (k) {
    case vote::kind::granted:
      return "granted";
    case vote::kind::refused:
      return "refused";
    case vote::kind::failed:
      return "failed";
  }
  return "vote ?";
}

/// One of the enums above.
template <class T>
concept named = requires(T value) {
  name(value);
};

}  // namespace redlock::detail::printing

namespace Catch {

template <class T>
requires redlock::detail::printing::named<T>
struct StringMaker<T> {
  static std::string convert(T value) {
    return std::string(redlock::detail::printing::name(value));
  }
};

}  // namespace Catch
