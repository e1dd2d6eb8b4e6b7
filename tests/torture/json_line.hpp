// Flat JSON objects, one per line: the format of every torture log file.
// Values are strings, integers (64-bit, exact: timestamps are nanoseconds),
// doubles, booleans or null; nothing nests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace redlock::torture {

/// Builds one line: `{"a":1,"b":"x"}` (no trailing newline).
class json_writer {
 public:
  json_writer& field(std::string_view key, std::string_view value);
  json_writer& field(std::string_view key, const char* value) {
    return field(key, std::string_view(value));
  }
  json_writer& field(std::string_view key, std::int64_t value);
  json_writer& field(std::string_view key, int value) {
    return field(key, static_cast<std::int64_t>(value));
  }
  json_writer& field(std::string_view key, std::size_t value) {
    return field(key, static_cast<std::int64_t>(value));
  }
  json_writer& field(std::string_view key, double value);
  json_writer& field(std::string_view key, bool value);
  /// The finished object.
  std::string str() const { return text_ + "}"; }

 private:
  void key(std::string_view k);
  std::string text_ = "{";
};

/// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

using json_value = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string>;

/// One parsed line.
class json_object {
 public:
  std::map<std::string, json_value, std::less<>> fields;

  bool has(std::string_view key) const { return fields.find(key) != fields.end(); }
  /// The string value, or `fallback` when absent or not a string.
  std::string text(std::string_view key, std::string_view fallback = {}) const;
  /// The integer value (a double is truncated), or `fallback`.
  std::int64_t integer(std::string_view key, std::int64_t fallback = 0) const;
  double number(std::string_view key, double fallback = 0) const;
};

/// Parses one flat object; on malformed text returns nothing and sets `error`.
std::optional<json_object> parse_json_line(std::string_view line, std::string& error);

}  // namespace redlock::torture
