// `redlock status`: what each node holds for a resource, as a table or JSON.
#pragma once

#include "session.hpp"

#include <redlock/status.hpp>

#include <string>

namespace redlock::cli {

struct status_arguments {
  std::string resource;
  bool json = false;
};

int run_status(session& s, const status_arguments& arguments);

/// The JSON form: one object on one line.
std::string status_json(const resource_status& status, const client_config& config,
                        std::size_t quorum);
/// The table form, ending with the quorum's verdict.
std::string status_table(const resource_status& status, const client_config& config,
                         std::size_t quorum);

}  // namespace redlock::cli
