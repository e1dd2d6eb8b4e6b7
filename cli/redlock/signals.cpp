#include "signals.hpp"

#include <cstdlib>
#include <initializer_list>

namespace redlock::cli {

inherited_signals take_over_signals() {
  inherited_signals found{};
  sigemptyset(&found.ignored);
  for (int s = 1; s < NSIG; ++s) {
    struct sigaction current {};
    if (sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      sigaddset(&found.ignored, s);
    }
  }
  sigprocmask(SIG_SETMASK, nullptr, &found.mask);

  for (int s : {SIGPIPE, SIGTTOU, SIGTTIN}) signal(s, SIG_IGN);
  sigset_t needed;
  sigemptyset(&needed);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&needed, s);
  sigprocmask(SIG_UNBLOCK, &needed, nullptr);
  return found;
}

void die_of(int signal_number) {
  signal(signal_number, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal_number);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(signal_number);
  std::_Exit(128 + signal_number);  // if it did not end us
}

}  // namespace redlock::cli
