#include "resp_rewriter.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace redlock::test {
namespace {

constexpr std::size_t max_line = 64 * 1024;                // Redis's PROTO_INLINE_MAX_SIZE
constexpr long long max_arguments = 1024LL * 1024 * 1024;  // Redis's multibulk limit
constexpr long long max_bulk = 512LL * 1024 * 1024;        // proto-max-bulk-len default

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    const auto lower = [](char c) {
      return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    };
    return lower(x) == lower(y);
  });
}

// A decimal integer in the form Redis's string2ll accepts: no sign but '-',
// no leading zeros, no spaces.
std::optional<long long> parse_integer(std::string_view text) {
  if (text.empty()) return std::nullopt;
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  const std::string_view digits = text.front() == '-' ? text.substr(1) : text;
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
  if (text.front() == '-' && value == 0) return std::nullopt;  // "-0"
  return value;
}

void check_factor(double factor) {
  if (!std::isfinite(factor) || factor <= 0.0) {
    throw std::invalid_argument("resp_rewriter: the TTL factor must be finite and > 0");
  }
}

}  // namespace

resp_rewriter::resp_rewriter(double factor) : factor_(factor) { check_factor(factor); }

void resp_rewriter::set_factor(double factor) {
  check_factor(factor);
  factor_ = factor;
}

long long resp_rewriter::scale(long long ms, double factor) {
  const double scaled = static_cast<double>(ms) * factor;
  // 2^63 is exactly representable; anything at or above it does not fit.
  if (scaled >= 9223372036854775808.0) return std::numeric_limits<long long>::max();
  return std::max(1LL, std::llround(scaled));
}

void resp_rewriter::feed(std::string_view input, std::string& output) {
  std::size_t at = 0;
  while (at < input.size()) {
    if (broken_) {
      output.append(input.substr(at));
      return;
    }
    switch (state_) {
      case state::command_start:
        if (input[at] == '*') {
          pending_.push_back('*');
          line_.clear();
          arguments_.clear();
          argc_ = 0;
          complete_ = 0;
          streaming_ = false;
          state_ = state::array_length;
          ++at;
        } else {
          state_ = state::inline_command;
        }
        break;

      case state::inline_command: {
        // Up to and including '\n', as Redis reads it; never rewritten.
        const auto newline = input.find('\n', at);
        const auto end = newline == std::string_view::npos ? input.size() : newline + 1;
        output.append(input.substr(at, end - at));
        at = end;
        if (newline != std::string_view::npos) state_ = state::command_start;
        break;
      }

      case state::array_length:
        if (take_line(input, at, output)) on_array_length(output);
        break;

      case state::bulk_start:
        if (input[at] != '$') {
          fail(output);
          break;
        }
        if (!streaming_) arguments_.push_back({pending_.size(), 0, 0});
        pending_.push_back('$');
        line_.clear();
        state_ = state::bulk_length;
        ++at;
        break;

      case state::bulk_length:
        if (take_line(input, at, output)) on_bulk_length(output);
        break;

      case state::bulk_data: {
        const auto n = std::min(static_cast<std::size_t>(remaining_), input.size() - at);
        pending_.append(input.substr(at, n));
        at += n;
        remaining_ -= static_cast<long long>(n);
        // Like Redis, the two bytes after the data are skipped, not checked.
        if (remaining_ == 0) on_argument_complete(output);
        break;
      }
    }
  }
  if (streaming_ && !broken_) {
    output += pending_;
    pending_.clear();
  }
}

bool resp_rewriter::take_line(std::string_view input, std::size_t& at, std::string& output) {
  const auto newline = input.find('\n', at);
  const auto end = newline == std::string_view::npos ? input.size() : newline + 1;
  const auto piece = input.substr(at, end - at);
  pending_.append(piece);
  line_.append(piece);
  at = end;
  if (line_.size() > max_line) {
    fail(output);
    return false;
  }
  if (newline == std::string_view::npos) return false;
  line_.pop_back();  // '\n'
  if (line_.empty() || line_.back() != '\r') {
    fail(output);
    return false;
  }
  line_.pop_back();
  return true;
}

void resp_rewriter::on_array_length(std::string& output) {
  const auto count = parse_integer(line_);
  if (!count || *count > max_arguments) return fail(output);
  if (*count <= 0) {  // Redis ignores an empty or null array.
    streaming_ = true;
    finish_command(output);
    return;
  }
  argc_ = *count;
  state_ = state::bulk_start;
}

void resp_rewriter::on_bulk_length(std::string& output) {
  const auto length = parse_integer(line_);
  if (!length || *length < 0 || *length > max_bulk) return fail(output);
  remaining_ = *length + 2;
  if (!streaming_) {
    arguments_.back().data = pending_.size();
    arguments_.back().length = static_cast<std::size_t>(*length);
  }
  state_ = state::bulk_data;
}

void resp_rewriter::on_argument_complete(std::string& output) {
  ++complete_;
  if (complete_ == 1 && !may_rewrite()) {
    streaming_ = true;
    arguments_.clear();
  }
  if (complete_ == argc_) {
    finish_command(output);
  } else {
    state_ = state::bulk_start;
  }
}

void resp_rewriter::finish_command(std::string& output) {
  if (streaming_) {
    output += pending_;
  } else {
    emit_command(output);
  }
  pending_.clear();
  arguments_.clear();
  streaming_ = false;
  state_ = state::command_start;
}

void resp_rewriter::fail(std::string& output) {
  output += pending_;
  pending_.clear();
  arguments_.clear();
  broken_ = true;
}

std::string_view resp_rewriter::argument_text(std::size_t index) const {
  const argument& a = arguments_.at(index);
  return std::string_view(pending_).substr(a.data, a.length);
}

bool resp_rewriter::may_rewrite() const {
  const auto name = argument_text(0);
  if (iequals(name, "set")) return argc_ >= 5;
  if (iequals(name, "pexpire")) return argc_ == 3 || argc_ == 4;
  if (iequals(name, "eval") || iequals(name, "evalsha")) return argc_ == 6;
  return false;
}

long long resp_rewriter::ttl_argument() const {
  const auto name = argument_text(0);
  if (iequals(name, "set")) {
    for (long long i = 3; i < argc_; ++i) {
      const auto option = argument_text(static_cast<std::size_t>(i));
      if (iequals(option, "px")) return i + 1 < argc_ ? i + 1 : -1;
      // These take a value too, which must not be read as an option.
      if (iequals(option, "ex") || iequals(option, "exat") || iequals(option, "pxat")) ++i;
    }
    return -1;
  }
  if (iequals(name, "pexpire")) return 2;
  if (argument_text(2) == "1") return 5;  // EVAL or EVALSHA with 6 arguments
  return -1;
}

void resp_rewriter::emit_command(std::string& output) {
  const long long index = factor_ == 1.0 ? -1 : ttl_argument();
  const auto ttl =
      index < 0 ? std::nullopt : parse_integer(argument_text(static_cast<std::size_t>(index)));
  if (!ttl || *ttl <= 0) {
    output += pending_;
    return;
  }
  const argument& a = arguments_.at(static_cast<std::size_t>(index));
  const std::string digits = std::to_string(scale(*ttl, factor_));
  output.append(pending_, 0, a.header);
  output += '$';
  output += std::to_string(digits.size());
  output += "\r\n";
  output += digits;
  output += "\r\n";
  output.append(pending_, a.data + a.length + 2, std::string::npos);
  ++rewritten_;
}

}  // namespace redlock::test
