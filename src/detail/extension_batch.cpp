#include "detail/extension_batch.hpp"

#include "detail/commands.hpp"
#include "detail/node_pool.hpp"
#include "detail/scripts.hpp"

#include <algorithm>
#include <iterator>

namespace redlock::detail {

namespace {

/// One script call of a batch, shared by its nodes' reply callbacks and its
/// timer.
struct batch_call {
  batch_call(std::vector<extension_batch::entry> entries, const strand_type& strand)
      : entries(std::move(entries)), expiry_timer(strand) {}

  /// Times out the locks whose expiry has passed, then waits for the next.
  void arm(const std::shared_ptr<batch_call>& self, clock::time_point at) {
    expiry_timer.expires_at(at);
    expiry_timer.async_wait([self](error_code ec) {
      if (ec || self->unanswered == 0) return;
      const auto now = clock::now();
      for (const auto& e : self->entries) {
        if (e.expiry <= now) e.extension->on_batch_timeout(now);
      }
      if (const auto next = next_expiry(self->entries, now); next != clock::time_point::max()) {
        self->arm(self, next);
      }
    });
  }

  std::vector<extension_batch::entry> entries;
  timer expiry_timer;
  clock::time_point sent_at = clock::now();
  std::shared_ptr<const std::function<void(clock::duration)>> round_trips;
  std::size_t unanswered = 0;  ///< Nodes whose answer has not come.
};

}  // namespace

void extension_batch::add(std::string_view key, std::string_view token,
                          std::chrono::milliseconds key_ttl, clock::time_point expiry,
                          std::shared_ptr<batched_extension> extension) {
  entries_.push_back({key, token, std::to_string(key_ttl.count()), expiry, std::move(extension)});
}

clock::time_point next_expiry(const std::vector<extension_batch::entry>& entries,
                              clock::time_point now) noexcept {
  auto next = clock::time_point::max();
  for (const auto& e : entries) {
    if (e.expiry > now) next = std::min(next, e.expiry);
  }
  return next;
}

void extension_batch::flush(node_pool& pool, const strand_type& strand) {
  auto rest = std::exchange(entries_, {});
  for (std::size_t from = 0; from < rest.size(); from += keys_per_call) {
    const auto to = std::min(rest.size(), from + keys_per_call);
    auto call = std::make_shared<batch_call>(
        std::vector<entry>(std::make_move_iterator(rest.begin() + from),
                           std::make_move_iterator(rest.begin() + to)),
        strand);
    call->round_trips = round_trips_;
    // Before sending: a connection may answer from inside broadcast().
    call->unanswered = pool.size();
    pool.broadcast(extend_many_command(call->entries), [call](std::size_t node, error_code ec,
                                                              const reply& r) {
      if (--call->unanswered == 0) call->expiry_timer.cancel();
      // Each node's round trip (send to answer): how much may be in flight.
      if (!ec && call->round_trips) (*call->round_trips)(clock::now() - call->sent_at);
      // The clock is read for each lock: deciding one runs its
      // keeper, observer and stop callbacks, and a later lock
      // must not be judged at an earlier time (its validity
      // may end meanwhile).
      if (ec || !is_batch_answer(r, call->entries.size())) {
        // The whole call failed: so did each lock's extension.
        for (const auto& e : call->entries) {
          e.extension->on_batched_reply(node, ec, r, clock::now());
        }
        return;
      }
      for (std::size_t i = 0; i < call->entries.size(); ++i) {
        call->entries[i].extension->on_batched_reply(node, ec, answer_of(r, i), clock::now());
      }
    });
    if (call->unanswered > 0) call->arm(call, next_expiry(call->entries, clock::time_point::min()));
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
