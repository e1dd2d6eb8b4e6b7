// Reading the answers of client::async_status: pure, so it is unit-tested
// without sockets.
#pragma once

#include "detail/reply.hpp"

#include <redlock/status.hpp>

#include <cstddef>

namespace redlock::detail {

/// One node's answer to status_command() (or the error that stood in for it).
node_status read_node_status(error_code ec, const reply& answer);

/// Fills `answered`, `free` and `quorum_holder` from `status.nodes`.
void summarize(resource_status& status, std::size_t quorum);

}  // namespace redlock::detail
