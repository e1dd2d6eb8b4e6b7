// What a run under a kept lock reports, decided in one place for every
// style of run_exclusive (callback, coroutine, blocking) and the tool's exec.
#pragma once

#include <redlock/error.hpp>

namespace redlock::detail {

struct exclusive_outcome {
  error_code error;  ///< Success, or what the run reports.
  /// For the throwing styles: what went wrong, as the exception's what().
  const char* what = nullptr;
};

/// The work's own error first; else the lost-lock signal's reason, if it
/// fired while the work ran (the work may have run partly without the lock);
/// else errc::lock_lost if the release found the lock had lapsed. Other
/// release failures are not reported: the work ran under the lock, and the
/// keys a release could not reach expire with their TTL.
inline exclusive_outcome judge_exclusive(error_code work_error, error_code lost_while_working,
                                         error_code release_error) noexcept {
  if (work_error) return {work_error, "redlock: the work failed"};
  if (lost_while_working) {
    return {lost_while_working, "redlock: the lock was lost while the work ran"};
  }
  if (release_error == errc::lock_lost) {
    return {release_error, "redlock: the lock had lapsed before the release"};
  }
  return {};
}

}  // namespace redlock::detail
