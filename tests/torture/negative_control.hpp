// The library's deliberate defects (src/detail/negative_controls.hpp), by
// name, for --break: a torture run with one switched on must be caught by
// the checker, which shows that the checker can see that kind of bug.
#pragma once

#include <string_view>
#include <vector>

namespace redlock::torture {

/// drop_drift, count_late_votes, skip_undo, settle_twice.
const std::vector<std::string_view>& negative_control_names();

/// Switches the named defect on in this process, for every client created
/// afterwards; false (and nothing switched) for an unknown name.
bool break_on_purpose(std::string_view name);

}  // namespace redlock::torture
