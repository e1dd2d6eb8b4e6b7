// `redlock acquire`, `extend` and `release`: a lock held across separate
// invocations, known by its token (for scripts in any language).
#pragma once

#include "session.hpp"
#include "waiting.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace redlock::cli {

struct token_arguments {
  std::string resource;
  std::string token;  ///< extend and release
  std::chrono::milliseconds ttl{30000};
  std::chrono::milliseconds lock_delay{0};        ///< acquire and extend
  std::optional<std::chrono::milliseconds> wait;  ///< acquire
  waiting_arguments waiting;                      ///< acquire
  bool fence = false;  ///< acquire --fence: a fenced acquire; its fence printed too
};

int run_acquire(session& s, const token_arguments& arguments);
int run_extend(session& s, const token_arguments& arguments);
int run_release(session& s, const token_arguments& arguments);

}  // namespace redlock::cli
