// Latency samples and their summary, as redlock-bench prints them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace redlock::bench {

class samples {
 public:
  void reserve(std::size_t n) { values_.reserve(n); }
  void add(std::chrono::nanoseconds value) { values_.push_back(value.count() / 1e6); }
  std::size_t size() const { return values_.size(); }

  /// {"n":..,"mean":..,"p50":..,"p90":..,"p99":..,"max":..} in milliseconds.
  std::string json() {
    std::sort(values_.begin(), values_.end());
    double sum = 0;
    for (double v : values_) sum += v;
    const double mean = values_.empty() ? 0 : sum / static_cast<double>(values_.size());
    return fmt::format(
        R"({{"n":{},"mean":{:.4f},"p50":{:.4f},"p90":{:.4f},"p99":{:.4f},"max":{:.4f}}})",
        values_.size(), mean, percentile(0.50), percentile(0.90), percentile(0.99),
        values_.empty() ? 0.0 : values_.back());
  }

 private:
  // Nearest-rank percentile of the sorted values.
  double percentile(double p) const {
    if (values_.empty()) return 0;
    auto rank = static_cast<std::size_t>(p * static_cast<double>(values_.size()) + 0.999999);
    rank = std::clamp<std::size_t>(rank, 1, values_.size());
    return values_[rank - 1];
  }

  std::vector<double> values_;
};

}  // namespace redlock::bench
