#include "detail/vote.hpp"

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

vote extend_vote(error_code ec, const reply& r) noexcept {
  if (!ec && r.type == reply::kind::integer && (r.integer == 0 || r.integer == 1)) {
    return {r.integer == 1 ? vote::kind::granted : vote::kind::refused, {}};
  }
  return failure(ec, r);
}

deletion delete_outcome(error_code ec, const reply& r) noexcept {
  if (ec || r.type != reply::kind::integer) return deletion::unknown;
  if (r.integer == 1) return deletion::removed;
  if (r.integer == 0 && !r.repeated) return deletion::absent;
  return deletion::unknown;
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

node_outcome as_outcome(deletion d, error_code ec) noexcept {
  using status = node_outcome::status;
  switch (d) {
    case deletion::removed:
      return {status::acquired, {}};
    case deletion::absent:
      return {status::held_elsewhere, {}};
    case deletion::unknown:
      break;
  }
  return {status::failed, ec ? ec : error_code(errc::server_error)};
}

}  // namespace redlock::detail
