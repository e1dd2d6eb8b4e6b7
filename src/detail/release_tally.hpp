// The decision of a release, without I/O: how many nodes deleted our key,
// how many no longer held it, and when that is enough to know.
#pragma once

#include "detail/vote.hpp"

#include <cstddef>

namespace redlock::detail {

class release_tally {
 public:
  enum class verdict {
    pending,   ///< Not enough answers yet.
    released,  ///< A quorum deleted our key.
    lost,      ///< More than N - quorum no longer held it: it had lapsed.
    unknown,   ///< Every node answered or failed, and neither is known.
  };

  explicit release_tally(std::size_t nodes) noexcept : nodes_(nodes) {}

  /// One node's vote on the delete (release_vote). After a verdict, votes
  /// only count.
  verdict on_answer(const vote& answer) noexcept;
  std::size_t removed() const noexcept { return removed_; }

 private:
  std::size_t nodes_;
  std::size_t outstanding_ = nodes_;
  std::size_t removed_ = 0;
  std::size_t absent_ = 0;
};

}  // namespace redlock::detail
