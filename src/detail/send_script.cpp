#include "detail/operations.hpp"

namespace redlock::detail {

void send_script(connection& node, std::function<std::string(script_call)> build,
                 connection::callback done) {
  auto command = build(script_call::evalsha);
  node.send(std::move(command), [node = node.shared_from_this(), build = std::move(build),
                                 done = std::move(done)](error_code ec, const reply& r) mutable {
    if (!ec && is_noscript(r)) {
      node->send(build(script_call::eval), std::move(done));
      return;
    }
    done(ec, r);
  });
}

}  // namespace redlock::detail
