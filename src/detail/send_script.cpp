#include "detail/operations.hpp"

namespace redlock::detail {

void send_script(connection& node, std::size_t index, std::string_view evalsha,
                 std::shared_ptr<script_operation> op) {
  // The connection calls its callbacks itself, so a plain pointer to it is
  // safe inside one.
  node.send(evalsha,
            [node = &node, index, op = std::move(op)](error_code ec, const reply& r) mutable {
              if (!ec && is_noscript(r)) {
                // Built before op is moved: argument evaluation order is unspecified.
                const auto eval = op->eval_form();
                node->send(eval, [index, op = std::move(op)](error_code ec, const reply& r) {
                  op->on_reply(index, ec, r);
                });
                return;
              }
              op->on_reply(index, ec, r);
            });
}

}  // namespace redlock::detail
