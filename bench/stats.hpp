// Latency samples and their summary, as redlock-bench prints them. A fixed
// histogram (1 µs buckets up to 100 ms) keeps memory flat however long the
// run; the few slower samples are kept as they are.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::bench {

class samples {
 public:
  samples() : buckets_(bucket_count, 0) {}

  void add(std::chrono::nanoseconds value) {
    const auto micros = static_cast<std::size_t>(std::max<std::int64_t>(value.count(), 0) / 1000);
    if (micros < bucket_count) {
      ++buckets_[micros];
    } else {
      slow_.push_back(static_cast<double>(value.count()) / 1e6);
    }
    ++count_;
    sum_ms_ += static_cast<double>(value.count()) / 1e6;
    max_ms_ = std::max(max_ms_, static_cast<double>(value.count()) / 1e6);
  }
  std::size_t size() const { return count_; }

  /// {"n":..,"mean":..,"p50":..,"p90":..,"p99":..,"max":..} in milliseconds.
  std::string json() {
    std::sort(slow_.begin(), slow_.end());
    const double mean = count_ == 0 ? 0 : sum_ms_ / static_cast<double>(count_);
    return fmt::format(
        R"({{"n":{},"mean":{:.4f},"p50":{:.4f},"p90":{:.4f},"p99":{:.4f},"max":{:.4f}}})", count_,
        mean, percentile(0.50), percentile(0.90), percentile(0.99), max_ms_);
  }

 private:
  static constexpr std::size_t bucket_count = 100'000;

  // Nearest-rank percentile; a bucket reports its middle.
  double percentile(double p) const {
    if (count_ == 0) return 0;
    auto rank = static_cast<std::size_t>(p * static_cast<double>(count_) + 0.999999);
    rank = std::clamp<std::size_t>(rank, 1, count_);
    std::size_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
      seen += buckets_[i];
      if (seen >= rank) return (static_cast<double>(i) + 0.5) / 1000.0;
    }
    return slow_[rank - seen - 1];
  }

  std::vector<std::uint32_t> buckets_;
  std::vector<double> slow_;
  std::size_t count_ = 0;
  double sum_ms_ = 0;
  double max_ms_ = 0;
};

}  // namespace redlock::bench
