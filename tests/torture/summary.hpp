// The program's output: a readable summary, then one JSON line with every
// figure (the last line of the output, for scripts).
#pragma once

#include "checker.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::torture {

struct run_description {
  std::string mode;      ///< "random", "plan", "scenario" or "check"
  std::string scenario;  ///< The scenario or plan; empty for the random schedule.
  std::uint64_t seed = 0;
  int clients = 0;
  int workers_per_client = 0;
  int resources = 0;
  double duration_s = 0;  ///< Of the fault phase.
  std::string persistence;
  std::vector<std::string> broken;  ///< Negative controls switched on in the clients.
  /// Kinds that must be found (a broken assumption or client); empty: none may be.
  std::vector<violation_kind> expected;
  std::size_t min_acquisitions = 0;
  /// Stale writes the resource's fence check must have refused: the fence
  /// was put to work, not only never contradicted.
  std::size_t min_refused_writes = 0;
  std::string out_dir;
  double elapsed_s = 0;
};

/// Whether the run went as expected: no violation and enough successful
/// acquisitions, or, with expected kinds, at least one violation of each.
bool as_expected(const report& r, const run_description& d);

/// The expected kinds the checker did not find.
std::vector<violation_kind> missing_kinds(const report& r, const run_description& d);

/// The readable summary, ending with the verdict line.
std::string summary_text(const report& r, const run_description& d, bool pass);
/// One line of JSON with every figure.
std::string summary_json(const report& r, const run_description& d, bool pass);

}  // namespace redlock::torture
