// --help that reads like a man page's synopsis: option names with the type of
// their value (DUR, H:P, FILE) and nothing of CLI11's internals, defaults in
// the descriptions, and a usage line showing where global options and exec's
// "-- CMD" go.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace redlock::cli {

class help_formatter : public CLI::Formatter {
 public:
  /// `usage_tail` ends the usage line (e.g. "-- CMD [ARGS...]"); for the
  /// root, it stands where the command goes.
  explicit help_formatter(std::string usage_tail = {});

  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* option) const override;
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_subcommand(const CLI::App* command) const override;
  std::string make_footer(const CLI::App* app) const override;

 private:
  std::string usage_tail_;
};

/// Gives `app` a help_formatter with `usage_tail` (commands added later
/// inherit it) and the tool's labels.
void use_help_formatter(CLI::App& app, const std::string& usage_tail = {});

/// `text` broken into lines of at most `width` characters at blanks (a
/// longer word keeps its own line).
std::string wrap(const std::string& text, std::size_t width);

/// The usage error for `argument`, an option that `command` (nullptr: the
/// root, before any command) does not know: a global option given after
/// the command is told to go before it, and a command's option given
/// before the command to go after it; otherwise "unknown option X", with
/// the nearest known option when it is within an edit distance of 2.
std::string unknown_option_message(const CLI::App& root, const CLI::App* command,
                                   const std::string& argument);

/// Levenshtein distance between `a` and `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace redlock::cli
