#include "detail/vote.hpp"

#include <charconv>

namespace redlock::detail {
namespace {

vote failure(error_code ec, const reply& r) noexcept {
  if (ec) return {vote::kind::failed, ec};
  if (r.is_error()) return {vote::kind::failed, classify_error_reply(r.text)};
  return {vote::kind::failed, make_error_code(errc::protocol_error)};
}

}  // namespace

vote acquire_vote(error_code ec, const reply& r) noexcept {
  if (!ec && r.is_ok()) return {vote::kind::granted, {}};
  if (!ec && r.type == reply::kind::nil) return {vote::kind::refused, {}};
  return failure(ec, r);
}

namespace {

// "lost <id>" from a node whose fencing state is lost.
bool read_loss(const reply& r, fenced_vote& out) {
  constexpr std::string_view lost = "lost ";
  if (r.type != reply::kind::string || !r.text.starts_with(lost)) return false;
  out.decision = {vote::kind::failed, make_error_code(errc::fence_state_lost)};
  out.loss_id = std::string(r.text.substr(lost.size()));
  return true;
}

}  // namespace

fenced_vote fenced_acquire_vote(error_code ec, const reply& r, std::size_t keys) {
  fenced_vote out;
  if (ec || r.is_error()) {
    out.decision = failure(ec, r);
    return out;
  }
  if (r.type == reply::kind::nil) {
    out.decision = {vote::kind::refused, {}};
    return out;
  }
  if (read_loss(r, out)) return out;
  constexpr std::string_view ok = "ok";
  auto rest = r.text;
  if (r.type == reply::kind::string && rest.starts_with(ok)) {
    rest.remove_prefix(ok.size());
    while (rest.size() > 1 && rest.front() == ' ') {
      rest.remove_prefix(1);
      std::uint64_t fence = 0;
      const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), fence);
      if (parsed != std::errc() || fence == 0) break;
      out.fences.push_back(fence);
      rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    }
    if (rest.empty() && out.fences.size() == keys) {
      out.decision = {vote::kind::granted, {}};
      return out;
    }
  }
  out.fences.clear();
  out.decision = {vote::kind::failed, make_error_code(errc::protocol_error)};
  return out;
}

fenced_vote write_back_vote(error_code ec, const reply& r) {
  fenced_vote out;
  if (!ec && read_loss(r, out)) return out;
  if (!ec && r.type == reply::kind::integer && r.integer == 1) {
    out.decision = {vote::kind::granted, {}};
    return out;
  }
  out.decision = failure(ec, r);
  return out;
}

vote extend_vote(error_code ec, const reply& r) noexcept {
  if (!ec && r.type == reply::kind::integer && (r.integer == 0 || r.integer == 1)) {
    return {r.integer == 1 ? vote::kind::granted : vote::kind::refused, {}};
  }
  return failure(ec, r);
}

vote release_vote(error_code ec, const reply& r) noexcept {
  if (!ec && r.type == reply::kind::integer) {
    if (r.integer == 1) return {vote::kind::granted, {}};
    if (r.integer == 0 && !r.repeated) return {vote::kind::refused, {}};
  }
  return failure(ec, r);
}

node_outcome as_outcome(const vote& v) noexcept {
  using status = node_outcome::status;
  switch (v.what) {
    case vote::kind::granted:
      return {status::acquired, {}};
    case vote::kind::refused:
      return {status::held_elsewhere, {}};
    case vote::kind::failed:
      break;
  }
  return {status::failed, v.error};
}

}  // namespace redlock::detail
