// A blocking Redlock client that records every operation in a history:
// an invoke event before the call, an ok or fail event after it.
#pragma once

#include <redlock/blocking_client.hpp>

#include "history.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::torture {

/// Every lock key of a torture run starts with this.
inline constexpr std::string_view key_prefix = "torture:";

/// A client configuration for nodes on 127.0.0.1 at these ports (the
/// proxies), with the torture key prefix, whose log lines go to `log_file`
/// (appended; the client's warnings would drown the output otherwise).
client_config make_client_config(const std::vector<std::uint16_t>& ports,
                                 const std::filesystem::path& log_file);

class recorded_client {
 public:
  recorded_client(client_config config, history_writer& history);

  lock acquire(const std::string& res, const lock_options& options, error_code& ec);
  lock extend(const lock& held, milliseconds ttl, error_code& ec);
  std::size_t release(const lock& held, error_code& ec);

  history_writer& history() { return history_; }

 private:
  blocking_client client_;
  history_writer& history_;
};

}  // namespace redlock::torture
