// The resource the lock protects: a counter per resource in a separate Redis
// instance (the store, never a lock node). A critical section reads it and
// writes it plus one, so two holders at once show up as a lost update.
// Plainly (begin, end), or through the resource-side fence check
// (begin_fenced, end_fenced: fenced_set_script, include/redlock/fencing.hpp).
#pragma once

#include "history.hpp"

#include "support/admin_client.hpp"

#include <redlock/lock.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace redlock::torture {

class protected_register {
 public:
  /// Connects to the store on 127.0.0.1:port; throws std::runtime_error.
  explicit protected_register(std::uint16_t store_port);

  /// A critical section that has read the register and not yet written it.
  struct open_section {
    std::string res;
    std::string token;
    std::int64_t read = 0;
    std::int64_t fence = 0;  ///< lock::fence() of the holder (0: not fenced).
  };

  /// Records the cs invoke, then reads reg:<res> (a missing key reads 0).
  open_section begin(worker_history& history, const lock& held);
  /// Writes read + 1, then records the cs ok. A store failure is recorded as
  /// a cs fail and rethrown: the store is outside the faults, so a failure
  /// there is a failure of the test setup.
  void end(worker_history& history, const open_section& section);
  /// Ends the section without writing (the holder could no longer be sure
  /// of its lock): records a cs fail with err "given up", which the checker
  /// knows left the register untouched.
  void give_up(worker_history& history, const open_section& section);

  /// The fenced read-modify-write: first a claim, a fenced write of
  /// claim:<res> under the register's fence record fence:<res>, so that
  /// once this holder has read, no holder with a smaller fence can write;
  /// then the cs invoke and the read. A refused claim is recorded as a cs
  /// invoke and a cs fail with err refused_section, and gives nullopt.
  /// Without the claim, a stale holder's write could still land between a
  /// newer holder's read and write (its fence is the largest so far then),
  /// and the newer write would overwrite it: a lost update.
  std::optional<open_section> begin_fenced(worker_history& history, const lock& held);
  /// Writes read + 1 with fenced_set_script (fence and token of the
  /// section): a cs ok when the store accepted it, a cs fail with err
  /// refused_section when it refused it as stale.
  void end_fenced(worker_history& history, const open_section& section);

  /// Waits (polling the store) until reg:<res> holds something other than
  /// what the section read, for at most `max`; true when it changed.
  bool wait_for_other_write(const open_section& section, std::chrono::milliseconds max);

  /// The final value of reg:<res> (0 when missing).
  std::int64_t value(const std::string& res);

  static std::string key(const std::string& res) { return "reg:" + res; }
  static std::string fence_key(const std::string& res) { return "fence:" + res; }
  static std::string claim_key(const std::string& res) { return "claim:" + res; }

 private:
  /// Runs fenced_set_script; true when written, false when refused.
  bool fenced_set(const open_section& section, const std::string& data_key,
                  const std::string& value);

  test::admin_client store_;
};

}  // namespace redlock::torture
