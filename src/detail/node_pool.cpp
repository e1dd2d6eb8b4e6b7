#include "detail/node_pool.hpp"

namespace redlock::detail {

void node_pool::start() {
  for (auto& c : connections_) c->start();
}

void node_pool::close() {
  for (auto& c : connections_) c->close();
}

void node_pool::abandon() noexcept {
  for (auto& c : connections_) c->abandon();
}

void node_pool::cork() noexcept {
  for (auto& c : connections_) c->cork();
}

void node_pool::uncork() {
  for (auto& c : connections_) c->uncork();
}

}  // namespace redlock::detail
