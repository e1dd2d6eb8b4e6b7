// The library's logging: a user-supplied sink, or stderr for warnings and errors.
#pragma once

#include <redlock/config.hpp>

#include <string_view>

namespace redlock::detail {

class logger {
 public:
  explicit logger(log_sink sink = {});
  void operator()(log_level level, std::string_view message) const;

 private:
  log_sink sink_;
};

}  // namespace redlock::detail
