// What a node's answer to an acquire (SET NX PX), an extend or a release
// (the scripts) means for the decision: the one place replies become votes.
#pragma once

#include "detail/reply.hpp"

#include <redlock/error.hpp>
#include <redlock/lock.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace redlock::detail {

struct vote {
  enum class kind { granted, refused, failed };
  kind what = kind::failed;
  error_code error{};  ///< Why, when failed.
};

/// A vote as the node outcome an observer is shown, for every operation
/// (for a release, acquired means deleted): the one place the two meet.
node_outcome as_outcome(const vote& v) noexcept;
/// SET ... NX PX: OK is granted, nil refused (held by another owner).
vote acquire_vote(error_code ec, const reply& r) noexcept;
/// A fenced acquire's answer (fenced_acquire_script): the vote, the fences
/// it granted (one per key), and the loss id of a node whose fencing state
/// is lost (a failed vote with errc::fence_state_lost).
struct fenced_vote {
  vote decision;
  std::vector<std::uint64_t> fences;
  std::string loss_id;
};
fenced_vote fenced_acquire_vote(error_code ec, const reply& r, std::size_t keys);
/// The write-back: 1 granted; "lost <id>" failed with errc::fence_state_lost.
fenced_vote write_back_vote(error_code ec, const reply& r);
/// The extend script: 1 granted, 0 refused (the key is not ours any more).
vote extend_vote(error_code ec, const reply& r) noexcept;

/// The release script: 1 granted (our key was there and is deleted), 0
/// refused (the key did not hold our token). Failed: no answer, an error,
/// or a 0 from a delete sent again after a reconnect (its first copy may
/// have deleted our key: errc::protocol_error, an answer we cannot use).
vote release_vote(error_code ec, const reply& r) noexcept;

}  // namespace redlock::detail
