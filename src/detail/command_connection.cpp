#include "detail/command_connection.hpp"
#include "detail/admission.hpp"
#include "detail/commands.hpp"
#include "detail/random.hpp"

#include <fmt/format.h>

namespace redlock::detail {

std::vector<std::string> command_connection::setup_commands() const {
  return detail::setup_commands(node(), false);
}

void command_connection::queue_first() {
  // A restart since the node's fencing state was last checked makes it
  // lost (docs/fencing.md).
  enqueue_write(fence_restart_check_command(make_token()),
                [this, self = shared_from_this()](error_code ec, const reply& r) {
                  on_restart_check_reply(ec, r);
                });
}

void command_connection::on_restart_check_reply(error_code ec, const reply& r) {
  // A server that answered the check with an error did not run it: still
  // loading a snapshot, busy with a script, or refusing the script's first
  // write (MISCONF after a failed save, NOREPLICAS under
  // min-replicas-to-write). It would run fenced commands sent once it takes
  // them again against a state nobody checked: connect again, which checks
  // again. Only NOPERM (this user may not run EVAL or touch the state key)
  // and WRONGTYPE (the state key is not a hash) let the connection go on:
  // every fenced command is refused the same way.
  if (ec || !r.is_error() || r.text.starts_with("NOPERM") || r.text.starts_with("WRONGTYPE")) {
    return;
  }
  settings().log(log_level::warning,
                 fmt::format("node {}: the fencing restart check did not run ({}); "
                             "reconnecting",
                             describe(), r.text));
  fail(classify_error_reply(r.text), true);
}

}  // namespace redlock::detail
