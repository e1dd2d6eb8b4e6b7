#include "session.hpp"

#include "waiting.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

namespace redlock::cli {

std::string describe(error_code ec) {
  if (ec == errc::empty_resource) return "RESOURCE must not be empty";
  if (ec == errc::empty_token) return "TOKEN must not be empty";
  if (ec == errc::invalid_ttl) return "--ttl must be positive";
  if (ec == errc::ttl_within_drift) return "--ttl must exceed the clock-drift allowance";
  if (ec == errc::invalid_request_timeout) return "--timeout must be shorter than --ttl";
  if (ec == errc::invalid_lock_delay) return "--lock-delay must be at most 8760h (365 days)";
  if (ec == errc::invalid_drift_factor) return "--drift-factor must be in [0, 1)";
  if (ec == errc::invalid_keep_options) return "--max-hold must not be negative";
  if (ec == errc::fenced_ttl_too_long) return "--ttl must not exceed --max-fenced-ttl with --fence";
  if (ec == errc::authentication_failed) {
    return "the nodes refused the credentials (--user, --password-env)";
  }
  return ec.message();
}

std::string describe(error_code ec, const lock& failed, const std::vector<node_config>& nodes,
                     const acquire_answers& answers) {
  auto text = describe(ec);
  // A node the last attempt was decided without: its latest answer (which
  // may have come after the decision) says more than "no answer yet".
  auto outcomes = failed.nodes();
  for (std::size_t i = 0; i < outcomes.size() && i < answers.latest().size(); ++i) {
    if (outcomes[i].state == node_outcome::status::pending) outcomes[i] = answers.latest()[i];
  }
  const auto which = describe_nodes(outcomes, nodes);
  if (!which.empty()) text += fmt::format(" ({})", which);
  return text;
}

namespace {

/// Writes one line to stderr; a stderr that is closed or broken must not
/// end redlock while it holds a lock and a child runs (EPIPE and EBADF are
/// ignored, and SIGPIPE is: see main).
void print_line(std::string_view line) noexcept {
  try {
    fmt::print(stderr, "{}\n", line);
  } catch (...) {  // NOLINT(bugprone-empty-catch): nowhere left to report it
  }
}

std::string node_error_option(const config_error& e) {
  if (e.code() == errc::invalid_drift_factor) return "--drift-factor: ";
  if (e.code() == errc::invalid_retry_policy) return "--connect-timeout: ";
  if (e.code() == errc::invalid_tls) return "--tls: ";
  return "--nodes: ";
}

}  // namespace

session::session(const global_options& options) : options_(options) {
  client_config config;
  config.nodes = options.nodes;
  if (config.nodes.empty()) throw usage_problem{"--nodes (or REDLOCK_NODES) is required"};
  std::string password;
  if (!options.password_env.empty()) {
    const char* value = std::getenv(options.password_env.c_str());
    if (value == nullptr) {
      throw usage_problem{
          fmt::format("--password-env: environment variable {} is not set", options.password_env)};
    }
    password = value;
  } else if (!options.user.empty()) {
    throw usage_problem{"--user needs --password-env"};
  }
  for (auto& node : config.nodes) {
    node.username = options.user;
    node.password = password;
  }
  config.key_prefix = options.prefix;
  config.drift_factor = options.drift_factor;
  config.max_fenced_ttl = options.max_fenced_ttl;
  config.connect_timeout = options.connect_timeout;
  config.warn_without_aof = options.warn_without_aof;
  config.tls = options.tls;
  answers_ = std::make_shared<acquire_answers>(config.nodes.size());
  config.observer = answers_;
  const bool verbose = options.verbose;
  const bool quiet = options.quiet;
  config.log = [verbose, quiet](log_level level, std::string_view line) {
    const auto least = verbose ? log_level::debug : quiet ? log_level::error : log_level::warning;
    if (level < least) return;
    print_line(fmt::format("redlock: {}", line));
  };
  // Risky node settings: the one about AOF, which every node of a local
  // test cluster has, once per call in one line naming the tool's switches;
  // the others as the library words them.
  config.on_risk = [quiet, warned = std::make_shared<bool>(false)](const node_risk_report& r) {
    if (quiet) return;
    if (r.risk == node_risk::no_aof) {
      if (std::exchange(*warned, true)) return;
      print_line(fmt::format(
          "redlock: warning: {}: no AOF, a restart forgets its locks (--no-aof-warning or "
          "REDLOCK_NO_AOF_WARNING=1 hides this)",
          r.endpoint));
      return;
    }
    print_line(fmt::format("redlock: warning: node {}: {}", r.endpoint, r.explanation));
  };
  try {
    client_ = std::make_unique<redlock::client>(io_.get_executor(), std::move(config));
  } catch (const config_error& e) {
    std::string what = e.what();
    if (what.starts_with("redlock: ")) what.erase(0, 9);  // our own line says it
    throw usage_problem{node_error_option(e) + what};
  }
}

session::~session() = default;

void session::say(const std::string& message) const {
  if (!options_.quiet) print_line("redlock: " + message);
}

void session::warn(const std::string& message) const {
  if (!options_.quiet) print_line("redlock: warning: " + message);
}

void session::error(const std::string& message) const { print_line("redlock: " + message); }

lock_options session::lock_options_for(const std::string& resource, std::chrono::milliseconds ttl,
                                       std::chrono::milliseconds lock_delay, bool fenced) const {
  lock_options options;
  options.ttl = ttl;
  options.lock_delay = lock_delay;
  options.request_timeout = options_.request_timeout;
  options.fenced = fenced;
  if (auto invalid = validate(resource, options, options_.drift_factor)) {
    throw usage_problem{describe(invalid)};
  }
  if (fenced && ttl > options_.max_fenced_ttl) {
    throw usage_problem{
        fmt::format("--ttl ({} ms) must not exceed --max-fenced-ttl ({} ms) with "
                    "--fence",
                    ttl.count(), options_.max_fenced_ttl.count())};
  }
  return options;
}

void session::finish() {
  client_->close();
  io_.restart();
  io_.run();
}

}  // namespace redlock::cli
