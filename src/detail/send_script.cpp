#include "detail/operations.hpp"

namespace redlock::detail {

void send_script(connection& node, std::string_view evalsha, const eval_builder& eval,
                 connection::callback done) {
  node.send(evalsha, [node = node.shared_from_this(), eval, done = std::move(done)](
                         error_code ec, const reply& r) mutable {
    if (!ec && is_noscript(r)) {
      node->send((*eval)(), std::move(done));
      return;
    }
    done(ec, r);
  });
}

}  // namespace redlock::detail
