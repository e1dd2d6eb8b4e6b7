// What a node's answer to an acquire (SET NX PX) or an extend (the extend
// script) means for the quorum: the one place replies become votes.
#pragma once

#include "detail/reply.hpp"

#include <redlock/error.hpp>

namespace redlock::detail {

struct vote {
  enum class kind { granted, refused, failed };
  kind what = kind::failed;
  error_code error{};  ///< Why, when failed.
};

/// SET ... NX PX: OK is granted, nil refused (held by another owner).
vote acquire_vote(error_code ec, const reply& r) noexcept;
/// The extend script: 1 granted, 0 refused (the key is not ours any more).
vote extend_vote(error_code ec, const reply& r) noexcept;

}  // namespace redlock::detail
