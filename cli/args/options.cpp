#include "options.hpp"

#include "duration.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

namespace redlock::args {
namespace {

/// The library's messages start with "redlock: "; the program's name
/// already begins the line.
std::string without_library_prefix(std::string what) {
  constexpr std::string_view prefix = "redlock: ";
  if (what.starts_with(prefix)) what.erase(0, prefix.size());
  return what;
}

/// An option whose text parse_duration reads, handed to `store`.
template <class Store>
CLI::Option* add_duration_option(CLI::App& app, const std::string& name, Store store,
                                 const std::string& description) {
  auto* option = app.add_option_function<std::string>(
      name,
      [store, name](const std::string& text) {
        try {
          store(parse_duration(text));
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(name, e.what());
        }
      },
      description);
  return option->type_name("DUR");
}

}  // namespace

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& target,
                          const std::string& description) {
  return add_duration_option(
             app, name, [&target](std::chrono::milliseconds value) { target = value; }, description)
      ->default_str(format_duration(target));
}

CLI::Option* add_duration(CLI::App& app, const std::string& name,
                          std::optional<std::chrono::milliseconds>& target,
                          const std::string& description) {
  return add_duration_option(
      app, name, [&target](std::chrono::milliseconds value) { target = value; }, description);
}

CLI::Option* add_nodes(CLI::App& app, std::vector<node_config>& target,
                       const std::string& description, const std::string& env) {
  // One value: a following word is never taken as one more node.
  auto* option = app.add_option_function<std::string>(
      "--nodes",
      [&target](const std::string& list) {
        try {
          target = parse_nodes(list);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError("--nodes", without_library_prefix(e.what()));
        }
      },
      description);
  option->type_name("H:P[,H:P...]");
  if (!env.empty()) option->envname(env);
  return option;
}

CLI::Option* add_endpoint(CLI::App& app, const std::string& name,
                          std::optional<node_config>& target, const std::string& description) {
  auto* option = app.add_option_function<std::string>(
      name,
      [&target, name](const std::string& text) {
        try {
          target = parse_node(text);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(name, without_library_prefix(e.what()));
        }
      },
      description);
  option->type_name("H:P");
  return option;
}

int usage_error(const CLI::App& app, const std::string& what) {
  const auto* root = &app;
  while (root->get_parent() != nullptr) root = root->get_parent();
  std::cerr << root->get_name() << ": " << what << " (see --help)\n";
  return 2;
}

namespace {

std::optional<int> report(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    app.exit(e);  // --help or --version, printed on stdout
    return 0;
  }
  // CLI11 names the option in its message; keep it to one line.
  std::string what = e.what();
  std::replace(what.begin(), what.end(), '\n', ' ');
  return usage_error(app, what);
}

}  // namespace

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report(app, e);
  }
  return std::nullopt;
}

std::optional<int> parse(CLI::App& app, std::vector<std::string> arguments) {
  // CLI11 takes the arguments last to first.
  std::reverse(arguments.begin(), arguments.end());
  try {
    app.parse(arguments);
  } catch (const CLI::ParseError& e) {
    return report(app, e);
  }
  return std::nullopt;
}

}  // namespace redlock::args
