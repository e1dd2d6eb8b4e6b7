#include "detail/release_tally.hpp"

#include "detail/quorum_fsm.hpp"

namespace redlock::detail {

release_tally::verdict release_tally::on_answer(deletion answer) noexcept {
  if (outstanding_ > 0) --outstanding_;
  switch (answer) {
    case deletion::removed:
      ++removed_;
      break;
    case deletion::absent:
      ++absent_;
      break;
    case deletion::unknown:
      break;
  }
  const auto quorum = quorum_of(nodes_);
  // Enough deletes: nobody can be refused for lack of a quorum because of us.
  if (removed_ >= quorum) return verdict::released;
  // A majority did not hold our token: it had lapsed (or was never there).
  if (absent_ > nodes_ - quorum) return verdict::lost;
  return outstanding_ == 0 ? verdict::unknown : verdict::pending;
}

}  // namespace redlock::detail
