#include <redlock/periodic.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace redlock {

schedule schedule::every(milliseconds interval, milliseconds offset) {
  if (interval.count() <= 0) {
    throw std::invalid_argument(
        fmt::format("redlock: schedule interval {} ms is not positive", interval.count()));
  }
  if (offset.count() < 0 || offset >= interval) {
    throw std::invalid_argument(
        fmt::format("redlock: schedule offset {} ms is not in [0, interval)", offset.count()));
  }
  schedule s;
  s.interval_ = interval;
  s.offset_ = offset;
  return s;
}

schedule schedule::daily_at(std::vector<std::chrono::minutes> times_of_day) {
  if (times_of_day.empty()) throw std::invalid_argument("redlock: daily schedule has no times");
  for (auto t : times_of_day) {
    if (t.count() < 0 || t >= std::chrono::hours(24)) {
      throw std::invalid_argument(
          fmt::format("redlock: daily time {} min is not in [00:00, 24:00)", t.count()));
    }
  }
  std::sort(times_of_day.begin(), times_of_day.end());
  times_of_day.erase(std::unique(times_of_day.begin(), times_of_day.end()), times_of_day.end());
  schedule s;
  s.times_of_day_ = std::move(times_of_day);
  return s;
}

schedule schedule::daily_at(std::string_view text) {
  std::vector<std::chrono::minutes> times;
  for (bool more = !text.empty(); more;) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    more = comma != std::string_view::npos;  // "12:00," has an empty last item
    text = more ? text.substr(comma + 1) : std::string_view{};
    int hours = -1;
    int minutes = -1;
    const auto colon = item.find(':');
    const bool parsed =
        colon != std::string_view::npos && colon > 0 && item.size() - colon == 3 &&
        std::from_chars(item.data(), item.data() + colon, hours).ptr == item.data() + colon &&
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), minutes).ptr ==
            item.data() + item.size();
    if (!parsed || hours < 0 || hours > 23 || minutes < 0 || minutes > 59) {
      throw std::invalid_argument(
          fmt::format("redlock: daily time \"{}\" is not HH:MM (00:00 to 23:59)", item));
    }
    times.push_back(std::chrono::hours(hours) + std::chrono::minutes(minutes));
  }
  return daily_at(std::move(times));
}

milliseconds schedule::shortest_gap() const {
  if (interval_.count() > 0) return interval_;
  // The gap across midnight counts too.
  milliseconds shortest = std::chrono::hours(24) - times_of_day_.back() + times_of_day_.front();
  for (std::size_t i = 1; i < times_of_day_.size(); ++i) {
    shortest = std::min<milliseconds>(shortest, times_of_day_[i] - times_of_day_[i - 1]);
  }
  return shortest;
}

wall_clock::time_point schedule::next_after(wall_clock::time_point after) const {
  using duration = wall_clock::duration;
  if (interval_.count() > 0) {
    const duration interval = interval_;
    const auto since = after.time_since_epoch() - duration(offset_);
    auto periods = since / interval;
    if (since % interval != duration::zero() && since < duration::zero()) --periods;
    return wall_clock::time_point(duration(offset_) + (periods + 1) * interval);
  }
  const auto day = std::chrono::floor<std::chrono::days>(after);
  for (auto d : {day, day + std::chrono::days(1)}) {
    for (auto t : times_of_day_) {
      if (d + t > after) return d + t;
    }
  }
  return day + std::chrono::days(1) + times_of_day_.front();  // not reached
}

}  // namespace redlock
