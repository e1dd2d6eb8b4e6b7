#include "detail/pipeline.hpp"

#include "detail/script_cache.hpp"

#include <utility>

namespace redlock::detail {

void pipeline::push(std::string_view bytes, callback done, retry again, bool repeated,
                    bool overtook) {
  output_.append(bytes);
  awaiting_.push_back({std::move(done), std::move(again), repeated, overtook});
}

void pipeline::hold(std::string_view bytes, callback done, retry again) {
  held_.push_back(
      {again.command ? std::string() : std::string(bytes), std::move(done), std::move(again)});
}

std::string_view pipeline::take_write_buffer() {
  writing_.clear();
  writing_.swap(output_);
  write_in_flight_ = true;
  written_ = awaiting_.size();
  return writing_;
}

pipeline::answered pipeline::pop_reply(const reply& r) {
  auto& front = awaiting_.front();
  std::string eval;
  // Only an error reply costs a look at the command.
  if (script_missing(r) && front.again.command) eval = eval_fallback(*front.again.command);
  auto command = std::move(front);
  awaiting_.pop_front();
  if (written_ > 0) --written_;
  if (eval.empty()) return {std::move(command.done), command.repeated, command.overtook};
  // Everything awaited now runs ahead of the EVAL.
  for (auto& later : awaiting_) later.overtook = true;
  // Its EVAL also stores the script on the node, so the EVALSHAs after it
  // find it again. The command keeps its EVALSHA form for a resend on a new
  // link, which loads the scripts before anything else.
  push(eval, std::move(command.done), std::move(command.again), command.repeated, command.overtook);
  return {};
}

std::vector<pipeline::callback> pipeline::on_link_lost(clock::time_point now, bool closing) {
  auto awaited = std::exchange(awaiting_, {});
  auto held = std::exchange(held_, {});
  const auto written = std::exchange(written_, 0);
  const auto due = [&](const retry& again) {
    return !closing && again.command && now < again.until;
  };
  std::vector<callback> failed;
  for (std::size_t i = 0; i < awaited.size(); ++i) {
    auto& command = awaited[i];
    if (due(command.again)) {
      // Written (maybe in part): it may have run, so its next answer is a repeat's.
      const bool repeated = i < written || command.repeated;
      held_.push_back(
          {{}, std::move(command.done), std::move(command.again), repeated, command.overtook});
    } else {
      failed.push_back(std::move(command.done));
    }
  }
  for (auto& command : held) {
    if (due(command.again)) {
      held_.push_back(std::move(command));
    } else {
      failed.push_back(std::move(command.done));
    }
  }
  return failed;
}

pipeline::dropped_callbacks pipeline::abandon() noexcept {
  written_ = 0;
  return {std::exchange(awaiting_, {}), std::exchange(held_, {})};
}

std::vector<pipeline::callback> pipeline::on_link_ready(clock::time_point now) {
  auto held = std::exchange(held_, {});
  std::vector<callback> expired;
  for (auto& command : held) {
    if (command.again.command && now >= command.again.until) {
      expired.push_back(std::move(command.done));
      continue;
    }
    const auto bytes = command.command();  // before `again` is moved from
    push(bytes, std::move(command.done), std::move(command.again), command.repeated,
         command.overtook);
  }
  return expired;
}

}  // namespace redlock::detail
