// The resource the lock protects: a counter per resource in a separate Redis
// instance (the store, never a lock node). A critical section reads it and
// writes it plus one, so two holders at once show up as a lost update.
#pragma once

#include "history.hpp"

#include "support/admin_client.hpp"

#include <redlock/lock.hpp>

#include <cstdint>
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
  };

  /// Records the cs invoke, then reads reg:<res> (a missing key reads 0).
  open_section begin(worker_history& history, const lock& held);
  /// Writes read + 1, then records the cs ok. A store failure is recorded as
  /// a cs fail and rethrown: the store is outside the faults, so a failure
  /// there is a failure of the test setup.
  void end(worker_history& history, const open_section& section);
  /// Ends the section without writing (the holder could no longer be sure
  /// of its lock): records a cs fail with err "abandoned", which the checker
  /// knows left the register untouched.
  void abandon(worker_history& history, const open_section& section);

  /// The final value of reg:<res> (0 when missing).
  std::int64_t value(const std::string& res);

  static std::string key(const std::string& res) { return "reg:" + res; }

 private:
  test::admin_client store_;
};

}  // namespace redlock::torture
