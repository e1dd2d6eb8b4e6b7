#include "detail/operations.hpp"

namespace redlock::detail {

void send_script(connection& node, std::string_view evalsha,
                 std::shared_ptr<const script_operation> op, connection::callback done) {
  node.send(evalsha, [node = node.shared_from_this(), op = std::move(op), done = std::move(done)](
                         error_code ec, const reply& r) mutable {
    if (!ec && is_noscript(r)) {
      node->send(op->eval_form(), std::move(done));
      return;
    }
    done(ec, r);
  });
}

}  // namespace redlock::detail
