#include "help.hpp"

#include <algorithm>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

namespace redlock::cli {
namespace {

/// The width of the option column, and of the whole text.
constexpr std::size_t option_column = 30;
constexpr std::size_t line_width = 80;

}  // namespace

help_formatter::help_formatter(std::string usage_tail) : usage_tail_(std::move(usage_tail)) {
  column_width(option_column);
  label("Positionals", "Arguments");
  label("Usage", "Usage");
}

std::string help_formatter::make_usage(const CLI::App* app, std::string name) const {
  std::ostringstream out;
  out << get_label("Usage") << ": ";
  // A command's usage: the global options go before it.
  const CLI::App* parent = app->get_parent();
  if (parent != nullptr) {
    out << parent->get_name() << " [GLOBAL OPTIONS] " << app->get_name();
  } else {
    out << name;
  }
  if (!app->get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty()) {
    out << " [OPTIONS]";
  }
  for (const auto* positional :
       app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    out << ' ' << make_option_usage(positional);
  }
  if (!usage_tail_.empty()) out << ' ' << usage_tail_;
  out << '\n';
  return out.str();
}

std::string help_formatter::make_option_name(const CLI::Option* option, bool is_positional) const {
  if (is_positional) return option->get_name(true, false);
  // "-v, --verbose": without the "{false}" CLI11 shows for a negated flag.
  std::vector<std::string> names;
  for (const auto& name : option->get_snames()) names.push_back("-" + name);
  for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

std::string help_formatter::make_option_opts(const CLI::Option* option) const {
  if (!option->get_option_text().empty()) return " " + option->get_option_text();
  // Only the value's type (DUR, H:P, FILE): a validator's description,
  // the default, "REQUIRED", "Needs:" and "Excludes:" are left out or said
  // in the description.
  if (option->get_type_size() == 0 || option->get_positional()) return {};
  return " " + option->get_type_name();
}

std::string help_formatter::make_option_desc(const CLI::Option* option) const {
  // '\x01' keeps "(default: 30s)" on one line; a blank once wrapped.
  constexpr char joined = '\x01';
  std::string text = option->get_description();
  const auto& fallback = option->get_default_str();
  if (!fallback.empty() && option->get_type_size() != 0) {
    text += std::string(" (default:") + joined + fallback + ")";
  }
  if (!option->get_envname().empty()) {
    text += std::string(" (env:") + joined + option->get_envname() + ")";
  }
  auto wrapped = wrap(text, line_width - option_column);
  std::replace(wrapped.begin(), wrapped.end(), joined, ' ');
  return wrapped;
}

std::string help_formatter::make_subcommand(const CLI::App* command) const {
  std::ostringstream out;
  CLI::detail::format_help(out, command->get_name(),
                           wrap(command->get_description(), line_width - option_column),
                           option_column);
  return out.str();
}

std::string help_formatter::make_footer(const CLI::App* app) const {
  if (app->get_footer().empty()) return {};
  return wrap(app->get_footer(), line_width) + "\n";
}

void use_help_formatter(CLI::App& app, const std::string& usage_tail) {
  app.formatter(std::make_shared<help_formatter>(usage_tail));
}

std::string wrap(const std::string& text, std::size_t width) {
  std::istringstream words(text);
  std::string out;
  std::size_t line = 0;
  std::string word;
  while (words >> word) {
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
  }
  return out;
}

namespace {

/// Every long name ("--ttl") and short name ("-n") of `app`'s options.
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* option : app.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

bool knows(const CLI::App& app, const std::string& name) {
  const auto names = option_names(app);
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_option_message(const CLI::App& root, const CLI::App* command,
                                   const std::string& argument) {
  // "--tll=5s" is the option "--tll".
  const auto name = argument.substr(0, argument.find('='));
  if (command != nullptr && knows(root, name)) {
    return name + " is a global option: give it before the command (" + root.get_name() + " " +
           name + " ... " + command->get_name() + " ...)";
  }
  if (command == nullptr) {
    // A command's option given before the command: where it belongs.
    std::string owners;
    for (const auto* sub : root.get_subcommands({})) {
      if (knows(*sub, name)) owners += (owners.empty() ? "" : ", ") + sub->get_name();
    }
    if (!owners.empty()) {
      return name + " is an option of " + owners + ": give it after the command";
    }
  }
  std::string message = "unknown option " + name;
  if (command != nullptr) message = command->get_name() + ": " + message;
  // The nearest option of the command, or of the root: a long name only
  // (a short one is one letter, every other one is as near).
  if (!name.starts_with("--")) return message;
  std::vector<std::string> known = option_names(command != nullptr ? *command : root);
  if (command != nullptr) {
    const auto global = option_names(root);
    known.insert(known.end(), global.begin(), global.end());
  }
  constexpr std::size_t close = 2;
  std::string nearest;
  std::size_t best = close + 1;
  for (const auto& candidate : known) {
    if (!candidate.starts_with("--")) continue;
    const auto distance = edit_distance(name, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  if (!nearest.empty()) {
    message += "; did you mean " + nearest + "?";
    if (command != nullptr && !knows(*command, nearest)) {
      message += " (a global option: give it before the command)";
    }
  }
  return message;
}

}  // namespace redlock::cli
