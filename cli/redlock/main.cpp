// redlock: a distributed flock(1) over N independent Redis masters.
// See docs/cli.md (and redlock(1)) for every command, option and exit code.

#include "exec_command.hpp"
#include "exit_codes.hpp"
#include "help.hpp"
#include "once_per.hpp"
#include "session.hpp"
#include "signals.hpp"
#include "status_command.hpp"
#include "token_commands.hpp"

#include "args/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace redlock::cli;
namespace args = redlock::args;

/// --wait DUR and -n (--wait 0); absent, the wait for a holder has no
/// bound. --unreachable-timeout bounds the wait for nodes that cannot
/// answer; --notice-interval paces the "still waiting" notices.
void add_wait_options(CLI::App& command, std::optional<std::chrono::milliseconds>& wait,
                      waiting_arguments& waiting) {
  auto* bounded = args::add_duration(
      command, "--wait", wait,
      "Give up when the lock is still held elsewhere after DUR (default: wait as long as it "
      "takes)");
  command
      .add_flag_callback(
          "-n,--no-wait", [&wait] { wait = std::chrono::milliseconds{0}; },
          "Same as --wait 0: one attempt")
      ->excludes(bounded);
  args::add_duration(command, "--unreachable-timeout", waiting.unreachable_timeout,
                     "Exit 4 once no attempt has been answered by a majority of the nodes for "
                     "DUR (0: wait for them as long as it takes)");
  args::add_duration(command, "--notice-interval", waiting.notice_interval,
                     "While waiting, say why on stderr every DUR (0: never; -q: never)");
}

/// Gives a command what every command shares: the help layout, a footer
/// pointing at the global options, and its unknown arguments left for
/// main to name (rather than CLI11's "not expected").
void set_up_command(CLI::App& command, const std::string& usage_tail = {}) {
  use_help_formatter(command, usage_tail);
  command.group("Commands");
  command.allow_extras();
  command.footer(
      "Global options (--nodes, --prefix, --tls, ...) go before the command: see redlock "
      "--help and redlock(1).");
}

/// The first unknown option among `extras`, else the first of them.
std::string first_extra(const std::vector<std::string>& extras) {
  for (const auto& extra : extras) {
    if (extra.size() > 1 && extra.front() == '-') return extra;
  }
  return extras.front();
}

bool is_option(const std::string& argument) {
  return argument.size() > 1 && argument.front() == '-';
}

/// REDLOCK_NO_AOF_WARNING=1 is --no-aof-warning; 0 or empty is not. Returns
/// the error for any other value.
std::optional<std::string> read_no_aof_warning(global_options& global) {
  const char* value = std::getenv("REDLOCK_NO_AOF_WARNING");
  if (value == nullptr) return std::nullopt;
  const std::string_view text = value;
  if (text == "1") {
    global.warn_without_aof = false;
  } else if (!text.empty() && text != "0") {
    return fmt::format("REDLOCK_NO_AOF_WARNING must be 1 (no warning) or 0, not '{}'", text);
  }
  return std::nullopt;
}

/// What the command line says, and where CLI11 keeps it.
struct command_line {
  global_options global;
  exec_arguments exec_args;
  once_per_arguments once_args;
  token_arguments token_args;
  status_arguments status_args;
  CLI::Option* nodes_option = nullptr;
  CLI::App* exec = nullptr;
  CLI::Option* exec_ttl = nullptr;
  CLI::Option* once_per = nullptr;
  CLI::App* acquire = nullptr;
  CLI::Option* acquire_ttl = nullptr;
  CLI::App* extend = nullptr;
  CLI::App* release = nullptr;
  CLI::App* status = nullptr;
};

/// The global options, which go before the command; returns --nodes.
CLI::Option* add_global_options(CLI::App& app, global_options& global) {
  // Without --nodes, REDLOCK_NODES (read below, as the library's
  // nodes_from_env() reads it).
  auto* nodes = args::add_nodes(
      app, global.nodes,
      "Redis masters, comma-separated (at least 3, an odd number; default: REDLOCK_NODES)");
  app.add_option("--prefix", global.prefix,
                 "Key prefix: the key of RESOURCE is the prefix followed by RESOURCE")
      ->type_name("P");
  app.add_option("--user", global.user, "ACL user name (needs --password-env)")->type_name("NAME");
  app.add_option("--password-env", global.password_env,
                 "Name of the environment variable holding the password")
      ->type_name("VAR");
  args::add_duration(app, "--timeout", global.request_timeout,
                     "Per-node request timeout (default: TTL/20, at most 500ms)")
      ->default_str("");
  args::add_duration(app, "--connect-timeout", global.connect_timeout, "Connection timeout");
  app.add_option("--drift-factor", global.drift_factor,
                 "Clock drift allowance: drift = TTL * F + 2ms, F in [0, 1)")
      ->type_name("F")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0).description(""));
  args::add_duration(app, "--max-fenced-ttl", global.max_fenced_ttl,
                     "The longest TTL of a --fence acquire; also how long a node that lost its "
                     "fencing state (or never had one) sits out fenced acquires. Every client of "
                     "the same nodes must use the same value");
  app.add_flag_callback(
      "--no-aof-warning", [&global] { global.warn_without_aof = false; },
      "Do not warn about nodes running without AOF (when restarts are delayed by more than the "
      "longest TTL instead); also REDLOCK_NO_AOF_WARNING=1");
  app.add_flag("--tls", global.tls.enabled,
               "TLS to every node (a node written rediss://HOST:PORT has it on anyway)");
  app.add_option("--tls-ca", global.tls.ca_file,
                 "PEM file of the CAs to trust (default: the system's)")
      ->type_name("FILE");
  app.add_option("--tls-cert", global.tls.cert_file,
                 "Client certificate (PEM), for mutual TLS (needs --tls-key)")
      ->type_name("FILE")
      ->needs(app.add_option("--tls-key", global.tls.key_file, "Its private key (PEM)")
                  ->type_name("FILE"));
  app.get_option("--tls-key")->needs("--tls-cert");
  app.add_option("--tls-server-name", global.tls.server_name,
                 "Name the nodes' certificates must carry, sent as SNI (default: each host)")
      ->type_name("NAME");
  app.add_flag_callback(
      "--tls-insecure", [&global] { global.tls.verify = false; },
      "Do not verify the nodes' certificates (anyone on the path could pose as a node)");
  auto* verbose = app.add_flag("-v,--verbose", global.verbose, "Say what happens, on stderr");
  app.add_flag("-q,--quiet", global.quiet, "Print errors only")->excludes(verbose);
  return nodes;
}

/// `exec RESOURCE -- CMD`, and its --once-per form.
void add_exec_command(CLI::App& app, command_line& line, const std::string& lock_delay_help) {
  auto& exec_args = line.exec_args;
  auto& once_args = line.once_args;
  auto* exec = line.exec = app.add_subcommand(
      "exec", "Run CMD while holding RESOURCE, kept extended; release when it exits");
  set_up_command(*exec, "-- CMD [ARGS...]");
  exec->add_option("RESOURCE", exec_args.resource, "The resource to lock")->required();
  line.exec_ttl =
      args::add_duration(*exec, "--ttl", exec_args.ttl, "TTL of the lock and of each extension");
  args::add_duration(*exec, "--lock-delay", exec_args.lock_delay, lock_delay_help);
  exec->add_flag("--fence", exec_args.fence,
                 "Fenced acquire: CMD gets the lock's fencing token as REDLOCK_FENCE (the TTL "
                 "defaults to --max-fenced-ttl and may not exceed it)");
  add_wait_options(*exec, exec_args.wait, exec_args.waiting);
  args::add_duration(*exec, "--max-hold", exec_args.max_hold,
                     "Cap on the total hold time; reaching it counts as losing the lock (0: none)");
  args::add_duration(*exec, "--grace", exec_args.grace,
                     "After a loss: time between SIGTERM and SIGKILL to CMD's process group "
                     "(default 5s, or a quarter of the TTL when less); SIGKILL always comes "
                     "before the lock's validity ends, so it must fit in the TTL");
  exec->add_option("--conflict-exit-code", exec_args.conflict_exit_code,
                   "Exit status when the lock is held elsewhere (0 to 255)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(0, 255).description(""));
  exec->add_option("--lost-exit-code", exec_args.lost_exit_code,
                   "Exit status when the lock is lost while CMD runs (0 to 255)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(0, 255).description(""));
  auto* once_per = line.once_per = args::add_duration(
      *exec, "--once-per", once_args.period,
      "Run CMD once per DUR across every machine running this same line (periods from "
      "00:00 UTC, 1 Jan 1970, shifted by --offset); the others exit 0 without running it");
  once_per->default_str("");
  args::add_duration(*exec, "--offset", once_args.offset,
                     "--once-per: the due times are this long after the period's start")
      ->needs(once_per);
  args::add_duration(*exec, "--max-skew", once_args.max_skew,
                     "--once-per: how far apart the machines' clocks and start times may be "
                     "(less than half the period)")
      ->needs(once_per);
}

/// acquire, extend and release: a lock held between commands, by its token.
void add_token_commands(CLI::App& app, command_line& line, const std::string& lock_delay_help) {
  auto& token_args = line.token_args;
  auto* acquire = line.acquire = app.add_subcommand(
      "acquire", "Acquire RESOURCE; print its token on stdout (the validity on stderr)");
  set_up_command(*acquire);
  acquire->add_option("RESOURCE", token_args.resource, "The resource to lock")->required();
  line.acquire_ttl = args::add_duration(*acquire, "--ttl", token_args.ttl, "TTL of the lock");
  args::add_duration(*acquire, "--lock-delay", token_args.lock_delay, lock_delay_help);
  acquire->add_flag("--fence", token_args.fence,
                    "Fenced acquire: print the fencing token on a second line (the TTL defaults "
                    "to --max-fenced-ttl and may not exceed it)");
  add_wait_options(*acquire, token_args.wait, token_args.waiting);

  auto* extend = line.extend =
      app.add_subcommand("extend", "Extend the lock TOKEN holds on RESOURCE");
  set_up_command(*extend);
  extend->add_option("RESOURCE", token_args.resource, "The locked resource")->required();
  extend->add_option("TOKEN", token_args.token, "The token `redlock acquire` printed")->required();
  args::add_duration(*extend, "--ttl", token_args.ttl, "New TTL, from now");
  args::add_duration(*extend, "--lock-delay", token_args.lock_delay,
                     "The keys live this much longer than --ttl (give the acquire's --lock-delay)");

  auto* release = line.release =
      app.add_subcommand("release", "Release the lock TOKEN holds on RESOURCE");
  set_up_command(*release);
  release->add_option("RESOURCE", token_args.resource, "The locked resource")->required();
  release->add_option("TOKEN", token_args.token, "The token `redlock acquire` printed")->required();
}

void add_status_command(CLI::App& app, command_line& line) {
  auto& status_args = line.status_args;
  auto* status = line.status = app.add_subcommand(
      "status", "Show each node's holder and TTL for RESOURCE, and whether a quorum holds it");
  set_up_command(*status);
  status->add_option("RESOURCE", status_args.resource, "The resource")->required();
  status->add_flag("--json", status_args.json, "One JSON object instead of a table");
}

/// What CLI11 cannot check: unknown options and commands named, '--' and
/// CMD where exec needs them, REDLOCK_NODES and REDLOCK_NO_AOF_WARNING.
/// Returns the exit status of a usage error, if any.
std::optional<int> check_command_line(CLI::App& app, command_line& line, bool has_separator,
                                      const std::vector<std::string>& command) {
  auto& global = line.global;
  auto* exec = line.exec;
  // Unknown options first: one given before the command may have made
  // CLI11 take the command's name for its value.
  if (const auto before = app.remaining(); !before.empty() && is_option(first_extra(before))) {
    return args::usage_error(app, unknown_option_message(app, nullptr, first_extra(before)));
  }
  if (app.get_subcommands().empty()) {
    if (!app.remaining().empty()) {
      return args::usage_error(app, "unknown command '" + app.remaining().front() +
                                        "' (commands: exec, acquire, extend, release, status)");
    }
    return args::usage_error(app,
                             "a command is required: exec, acquire, extend, release or status");
  }
  const CLI::App* chosen = app.get_subcommands().front();
  if (const auto extras = chosen->remaining(); !extras.empty()) {
    const auto extra = first_extra(extras);
    if (is_option(extra)) {
      return args::usage_error(*chosen, unknown_option_message(app, chosen, extra));
    }
    if (exec->parsed()) {
      return args::usage_error(
          *exec, "exec: unexpected '" + extra + "': the command goes after '--' (RESOURCE -- CMD)");
    }
    return args::usage_error(app, "unexpected argument '" + extra + "'");
  }
  if (has_separator && !exec->parsed()) {
    return args::usage_error(app, "'--' only separates the command of exec");
  }
  if (exec->parsed() && (!has_separator || command.empty())) {
    return args::usage_error(*exec, "exec: missing '-- CMD [ARGS...]' after RESOURCE");
  }
  if (const auto extra = app.remaining(true); !extra.empty()) {
    return args::usage_error(app, "unexpected argument '" + extra.front() + "'");
  }
  if (line.nodes_option->count() == 0) {
    try {
      global.nodes = redlock::nodes_from_env();
    } catch (const redlock::config_error& e) {
      std::string what = e.what();
      if (what.starts_with("redlock: ")) what.erase(0, 9);
      return args::usage_error(app, what);
    }
  }
  if (auto problem = read_no_aof_warning(global)) return args::usage_error(app, *problem);
  line.exec_args.command = command;
  // A fenced lock may not outlive --max-fenced-ttl: without --ttl, that is
  // its TTL when shorter than the default.
  if (line.exec_args.fence && line.exec_ttl->count() == 0) {
    line.exec_args.ttl = std::min(line.exec_args.ttl, global.max_fenced_ttl);
  }
  if (line.token_args.fence && line.acquire_ttl->count() == 0) {
    line.token_args.ttl = std::min(line.token_args.ttl, global.max_fenced_ttl);
  }
  return std::nullopt;
}

/// Runs the command chosen; returns redlock's exit status.
int run_command(CLI::App& app, const command_line& line, const inherited_signals& inherited) {
  try {
    session s(line.global);
    int exit_status = usage;
    int die_with = 0;
    if (line.exec->parsed() && line.once_per->count() > 0) {
      exit_status = run_once_per(s, line.exec_args, line.once_args, inherited, die_with);
    } else if (line.exec->parsed()) {
      exit_status = run_exec(s, line.exec_args, inherited, die_with);
    } else if (line.acquire->parsed()) {
      exit_status = run_acquire(s, line.token_args);
    } else if (line.extend->parsed()) {
      exit_status = run_extend(s, line.token_args);
    } else if (line.release->parsed()) {
      exit_status = run_release(s, line.token_args);
    } else if (line.status->parsed()) {
      exit_status = run_status(s, line.status_args);
    }
    s.finish();
    if (die_with != 0) die_of(die_with);
    return exit_status;
  } catch (const usage_problem& problem) {
    return args::usage_error(app, problem.what);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redlock: %s\n", e.what());
    return unreachable;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto inherited = take_over_signals();
  // Everything after the first "--" is the command of `exec`, never options.
  std::vector<std::string> arguments(argv + 1, argv + argc);
  std::vector<std::string> command;
  const auto separator = std::find(arguments.begin(), arguments.end(), "--");
  const bool has_separator = separator != arguments.end();
  if (has_separator) {
    command.assign(separator + 1, arguments.end());
    arguments.erase(separator, arguments.end());
  }

  CLI::App app{"A distributed lock (Redlock) over N independent Redis masters.", "redlock"};
  use_help_formatter(app, "COMMAND [ARGS...]");
  app.set_version_flag("--version", "redlock " REDLOCK_VERSION);
  app.require_subcommand(0, 1);
  app.allow_extras();  // an unknown command or option is reported below, by name
  app.footer(
      "Exit status: 0 done, 1 held elsewhere / not ours, 2 usage or configuration error, 3 lock "
      "lost or expired, 4 nodes unreachable; exec returns its command's status. See redlock(1).");

  command_line line;
  line.nodes_option = add_global_options(app, line.global);
  const std::string lock_delay_help =
      "If the lock lapses without a release, nobody can acquire it for this much longer (the "
      "keys live TTL + this; the validity still ends with the TTL; a release frees it at once)";

  add_exec_command(app, line, lock_delay_help);
  add_token_commands(app, line, lock_delay_help);
  add_status_command(app, line);

  if (auto exit_status = args::parse(app, arguments)) return *exit_status;
  if (auto usage_error = check_command_line(app, line, has_separator, command)) return *usage_error;
  return run_command(app, line, inherited);
}
