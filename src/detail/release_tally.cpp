#include "detail/release_tally.hpp"

#include "detail/quorum_fsm.hpp"

namespace redlock::detail {

release_tally::verdict release_tally::on_answer(const vote& answer) noexcept {
  if (outstanding_ > 0) --outstanding_;
  switch (answer.what) {
    case vote::kind::granted:
      ++removed_;
      break;
    case vote::kind::refused:
      ++absent_;
      break;
    case vote::kind::failed:
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
