// Command-line options shared by every program of the project (the redlock
// tool, the demo, the benchmark and the torture program), on CLI11.
#pragma once

#include <redlock/config.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace redlock::args {

/// An option taking a duration (see parse_duration) into `target`, whose
/// value beforehand is shown as the default.
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& target,
                          const std::string& description);

/// The same into an optional, left empty when the option is absent.
CLI::Option* add_duration(CLI::App& app, const std::string& name,
                          std::optional<std::chrono::milliseconds>& target,
                          const std::string& description);

/// `--nodes H:P[,H:P...]` into `target`, parsed as
/// redlock::parse_nodes does; read from environment variable `env` when
/// given and the option is absent.
CLI::Option* add_nodes(CLI::App& app, std::vector<node_config>& target,
                       const std::string& description, const std::string& env = {});

/// `--name H:P`: one endpoint.
CLI::Option* add_endpoint(CLI::App& app, const std::string& name,
                          std::optional<node_config>& target, const std::string& description);

/// Parses the command line. Returns the exit status when the program is to
/// stop now: 0 after --help or --version (printed on stdout), 2 after a
/// usage error, printed on stderr as one line "<program>: <what>" naming
/// the argument. Returns nothing when the program is to go on.
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

/// The same for an argument list (without the program name).
std::optional<int> parse(CLI::App& app, std::vector<std::string> arguments);

/// Prints a usage error as parse() does and returns 2, for the checks a
/// program makes after parsing.
int usage_error(const CLI::App& app, const std::string& what);

}  // namespace redlock::args
