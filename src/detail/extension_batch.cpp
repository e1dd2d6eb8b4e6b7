#include "detail/extension_batch.hpp"

#include "detail/commands.hpp"
#include "detail/node_pool.hpp"
#include "detail/scripts.hpp"

#include <algorithm>
#include <iterator>

namespace redlock::detail {

void extension_batch::add(std::string_view key, std::string_view token,
                          std::chrono::milliseconds key_ttl,
                          std::shared_ptr<batched_extension> extension) {
  entries_.push_back({key, token, std::to_string(key_ttl.count()), std::move(extension)});
}

void extension_batch::flush(node_pool& pool) {
  auto rest = std::exchange(entries_, {});
  for (std::size_t from = 0; from < rest.size(); from += keys_per_call) {
    const auto to = std::min(rest.size(), from + keys_per_call);
    auto call = std::make_shared<std::vector<entry>>(std::make_move_iterator(rest.begin() + from),
                                                     std::make_move_iterator(rest.begin() + to));
    pool.broadcast(extend_many_command(*call),
                   [call](std::size_t node, error_code ec, const reply& r) {
                     // One clock read for the call's answers, not one per lock.
                     const auto now = clock::now();
                     if (ec || !is_batch_answer(r, call->size())) {
                       // The whole call failed: so did each lock's extension.
                       for (const auto& e : *call) e.extension->on_batched_reply(node, ec, r, now);
                       return;
                     }
                     for (std::size_t i = 0; i < call->size(); ++i) {
                       (*call)[i].extension->on_batched_reply(node, ec, answer_of(r, i), now);
                     }
                   });
  }
}

std::string extend_many_command(const std::vector<extension_batch::entry>& entries) {
  const auto numkeys = std::to_string(entries.size());
  std::vector<std::string_view> args;
  args.reserve(3 + 3 * entries.size());
  args.insert(args.end(), {"EVAL", extend_many_script(), numkeys});
  for (const auto& e : entries) args.emplace_back(e.key);
  for (const auto& e : entries) args.insert(args.end(), {e.token, e.key_ttl_ms});
  return format_command(args);
}

bool is_batch_answer(const reply& r, std::size_t count) noexcept {
  return r.type == reply::kind::string && r.text.size() == count &&
         std::all_of(r.text.begin(), r.text.end(), [](char c) { return c == '0' || c == '1'; });
}

reply answer_of(const reply& batch, std::size_t i) noexcept {
  reply one;
  one.type = reply::kind::integer;
  one.integer = batch.text[i] == '1' ? 1 : 0;
  one.repeated = batch.repeated;
  return one;
}

}  // namespace redlock::detail
