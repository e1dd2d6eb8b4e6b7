#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace redlock::cli {
namespace {

/// posix_spawn's attributes and file actions, freed on every path.
struct spawn_setup {
  spawn_setup() {
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_init(&actions);
  }
  ~spawn_setup() {
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
};

bool holds_terminal_foreground() {
  return isatty(STDIN_FILENO) == 1 && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

}  // namespace

child_process::child_process(const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& extra_env,
                             const std::vector<std::string>& removed_env,
                             const inherited_signals& inherited) {
  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view line(*entry);
    auto named = [&line](const std::string& name) {
      return line.starts_with(name) && line.size() > name.size() && line[name.size()] == '=';
    };
    bool replaced = false;
    for (const auto& [name, value] : extra_env) replaced = replaced || named(name);
    for (const auto& name : removed_env) replaced = replaced || named(name);
    if (!replaced) env_strings.emplace_back(line);
  }
  for (const auto& [name, value] : extra_env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  spawn_setup setup;
  // A group of its own (pgid = its pid). Signals as redlock found them:
  // those ignored then stay ignored, every other one at its default (not
  // our handlers or our own ignores), and the mask redlock started with.
  sigset_t to_default;
  sigfillset(&to_default);
  for (int s = 1; s < NSIG; ++s) {
    if (inherited.was_ignored(s)) sigdelset(&to_default, s);
  }
  posix_spawnattr_setpgroup(&setup.attributes, 0);
  posix_spawnattr_setsigdefault(&setup.attributes, &to_default);
  posix_spawnattr_setsigmask(&setup.attributes, &inherited.mask);
  posix_spawnattr_setflags(&setup.attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  gave_terminal_ = holds_terminal_foreground();
  if (gave_terminal_) posix_spawn_file_actions_addtcsetpgrp_np(&setup.actions, STDIN_FILENO);

  int failed =
      posix_spawnp(&pid_, argp[0], &setup.actions, &setup.attributes, argp.data(), envp.data());
  if (failed == ENOEXEC) {
    // No #! line: a shell script, as execvp(3) and shells treat it.
    std::string shell = "/bin/sh";
    argp.insert(argp.begin(), shell.data());
    failed =
        posix_spawn(&pid_, "/bin/sh", &setup.actions, &setup.attributes, argp.data(), envp.data());
  }
  if (failed != 0) {
    gave_terminal_ = false;
    throw std::system_error(failed, std::generic_category(), argv.front());
  }
}

child_process::~child_process() {
  // Not reaped: it is still running (redlock is failing); leave it be.
  take_back_terminal();
}

void child_process::signal_group(int signal_number) const noexcept {
  if (!reaped_) kill(-pid_, signal_number);
}

std::optional<int> child_process::try_wait() {
  if (reaped_) return std::nullopt;
  int status = 0;
  pid_t result = 0;
  do {
    result = waitpid(pid_, &status, WNOHANG);
  } while (result < 0 && errno == EINTR);
  if (result != pid_) return std::nullopt;
  reaped_ = true;
  take_back_terminal();
  if (WIFSIGNALED(status)) {
    ended_by_signal_ = WTERMSIG(status);
    return 128 + ended_by_signal_;
  }
  return WEXITSTATUS(status);
}

bool child_process::signal_group_members(int signal_number) const noexcept {
  return kill(-pid_, signal_number) == 0;
}

void child_process::take_back_terminal() noexcept {
  if (!gave_terminal_) return;
  gave_terminal_ = false;
  // We are in the background now: tcsetpgrp would stop us with SIGTTOU.
  sigset_t ttou;
  sigset_t previous;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &previous);
  tcsetpgrp(STDIN_FILENO, getpgrp());
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace redlock::cli
