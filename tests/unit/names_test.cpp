// to_string of every public enumeration: each enumerator has a name of its
// own, and only enumerators have one.
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>
#include <redlock/observer.hpp>
#include <redlock/periodic.hpp>
#include <redlock/status.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

/// A name as the enumerators are spelled: lower case, digits, underscores.
bool identifier_like(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// Every enumerator of `all` has a distinct identifier-like name, and no
/// other value from 0 to 255 has a name other than `fallback` (so that a
/// name added in src/names.cpp must be added to the list here too; an
/// enumerator added without a name is what -Wswitch reports there).
template <class Enum>
void check_names(std::initializer_list<Enum> all, std::string_view fallback) {
  std::set<std::string> names;
  for (const auto value : all) {
    const std::string name(to_string(value));
    INFO("enumerator " << static_cast<int>(value) << " is named \"" << name << "\"");
    CHECK(identifier_like(name));
    CHECK(names.insert(name).second);
  }
  CHECK(names.count(std::string(fallback)) == 0);
  for (int raw = 0; raw <= 255; ++raw) {
    const auto value = static_cast<Enum>(raw);
    if (std::find(all.begin(), all.end(), value) != all.end()) continue;
    INFO("value " << raw << " is no enumerator");
    CHECK(to_string(value) == fallback);
  }
}

}  // namespace

TEST_CASE("every errc has a name, the one it is spelled with", "[unit][names]") {
  using redlock::errc;
  CHECK(redlock::to_string(errc::not_acquired) == "not_acquired");
  CHECK(redlock::to_string(errc::quorum_unreachable) == "quorum_unreachable");
  CHECK(redlock::to_string(errc::reserved_key) == "reserved_key");
  CHECK(redlock::to_string(static_cast<errc>(0)) == "unknown");
  // A value is an errc exactly when the category has a message of its own
  // for it: a code added with a message but without a name fails here.
  std::set<std::string> names;
  int codes = 0;
  for (int value = 0; value <= 1000; ++value) {
    const auto e = static_cast<errc>(value);
    const auto message = redlock::error_code(e).message();
    const bool has_message = message.rfind("unknown redlock error", 0) != 0;
    const std::string name(redlock::to_string(e));
    INFO("errc " << value << ": message \"" << message << "\", name \"" << name << "\"");
    if (!has_message) {
      CHECK(name == "unknown");
      continue;
    }
    ++codes;
    CHECK(name != "unknown");
    CHECK(identifier_like(name));
    CHECK(names.insert(name).second);
  }
  CHECK(codes == static_cast<int>(errc::reserved_key));
}

TEST_CASE("every other public enumeration has a name for each enumerator", "[unit][names]") {
  using status = redlock::node_outcome::status;
  check_names({status::pending, status::acquired, status::held_elsewhere, status::failed},
              "unknown");
  CHECK(redlock::to_string(status::held_elsewhere) == "held_elsewhere");

  using holding = redlock::node_status::holding;
  check_names({holding::unknown, holding::free, holding::plain, holding::reentrant, holding::other},
              "invalid");
  CHECK(redlock::to_string(holding::unknown) == "unknown");

  using backoff = redlock::retry_policy::backoff;
  check_names({backoff::fixed, backoff::exponential}, "unknown");

  using level = redlock::log_level;
  check_names({level::debug, level::info, level::warning, level::error}, "unknown");
  CHECK(redlock::to_string(level::warning) == "warning");

  using occurrence = redlock::occurrence_outcome;
  check_names({occurrence::ran, occurrence::claimed_elsewhere, occurrence::previous_running,
               occurrence::missed, occurrence::failed, occurrence::contended},
              "unknown");
  CHECK(redlock::to_string(occurrence::previous_running) == "previous_running");

  using claim = redlock::claim_outcome;
  check_names(
      {claim::claimed, claim::claimed_elsewhere, claim::contended, claim::missed, claim::failed},
      "unknown");

  using kind = redlock::operation_kind;
  check_names({kind::acquire, kind::extend, kind::release}, "unknown");

  using event = redlock::connection_event;
  check_names({event::connected, event::disconnected, event::failed}, "unknown");

  using risk = redlock::node_risk;
  check_names({risk::replicas, risk::evicting_policy, risk::no_aof}, "unknown");
}
