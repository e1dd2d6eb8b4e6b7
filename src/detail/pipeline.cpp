#include "detail/pipeline.hpp"

#include <utility>

namespace redlock::detail {

void pipeline::push(std::string_view bytes, callback done, retry again, bool repeated) {
  output_.append(bytes);
  awaiting_.push_back({std::move(done), std::move(again), repeated});
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

pipeline::answered pipeline::pop_reply() {
  auto& front = awaiting_.front();
  answered result{std::move(front.done), front.repeated};
  awaiting_.pop_front();
  if (written_ > 0) --written_;
  return result;
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
      held_.push_back({{}, std::move(command.done), std::move(command.again), repeated});
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
    push(bytes, std::move(command.done), std::move(command.again), command.repeated);
  }
  return expired;
}

}  // namespace redlock::detail
