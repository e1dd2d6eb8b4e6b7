#include "json_line.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstddef>

namespace redlock::torture {
namespace {

// A cursor over one line.
class parser {
 public:
  explicit parser(std::string_view text) : text_(text) {}

  std::optional<json_object> object(std::string& error) {
    json_object result;
    skip_space();
    if (!eat('{')) return fail(error, "expected '{'");
    skip_space();
    if (eat('}')) return finish(result, error);
    for (;;) {
      skip_space();
      std::string key;
      if (!string(key)) return fail(error, "expected a string key");
      skip_space();
      if (!eat(':')) return fail(error, "expected ':'");
      skip_space();
      json_value value;
      if (!parse_value(value)) return fail(error, fmt::format("bad value of \"{}\"", key));
      result.fields.insert_or_assign(std::move(key), std::move(value));
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) return finish(result, error);
      return fail(error, "expected ',' or '}'");
    }
  }

 private:
  std::optional<json_object> finish(json_object& result, std::string& error) {
    skip_space();
    if (pos_ != text_.size()) return fail(error, "text after the object");
    return std::move(result);
  }

  std::optional<json_object> fail(std::string& error, std::string_view what) {
    error = fmt::format("{} at column {}", what, pos_ + 1);
    return std::nullopt;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }

  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool parse_value(json_value& value) {
    if (pos_ >= text_.size()) return false;
    const char c = text_[pos_];
    if (c == '"') {
      std::string s;
      if (!string(s)) return false;
      value = std::move(s);
      return true;
    }
    if (literal("true")) {
      value = true;
      return true;
    }
    if (literal("false")) {
      value = false;
      return true;
    }
    if (literal("null")) {
      value = nullptr;
      return true;
    }
    return number(value);
  }

  bool number(json_value& value) {
    const std::size_t begin = pos_;
    bool is_integer = true;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '.' || c == 'e' || c == 'E') {
        is_integer = false;
      } else if (!(c == '-' || c == '+' || (c >= '0' && c <= '9'))) {
        break;
      }
      ++pos_;
    }
    const char* first = text_.data() + begin;
    const char* last = text_.data() + pos_;
    if (first == last) return false;
    if (is_integer) {
      std::int64_t i = 0;
      const auto [ptr, ec] = std::from_chars(first, last, i);
      if (ec != std::errc{} || ptr != last) return false;
      value = i;
      return true;
    }
    double d = 0;
    const auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec != std::errc{} || ptr != last) return false;
    value = d;
    return true;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(std::uint32_t& cp) {
    if (pos_ + 4 > text_.size()) return false;
    const auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, cp, 16);
    if (ec != std::errc{} || ptr != text_.data() + pos_ + 4) return false;
    pos_ += 4;
    return true;
  }

  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) return false;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && literal("\\u")) {
            std::uint32_t low = 0;
            if (!hex4(low) || low < 0xDC00 || low >= 0xE000) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;  // unterminated
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void json_writer::key(std::string_view k) {
  if (text_.size() > 1) text_ += ',';
  text_ += json_quote(k);
  text_ += ':';
}

json_writer& json_writer::field(std::string_view k, std::string_view value) {
  key(k);
  text_ += json_quote(value);
  return *this;
}

json_writer& json_writer::field(std::string_view k, std::int64_t value) {
  key(k);
  text_ += fmt::format("{}", value);
  return *this;
}

json_writer& json_writer::field(std::string_view k, double value) {
  key(k);
  // Shortest text that reads back as the same double; JSON has no NaN.
  text_ += std::isfinite(value) ? fmt::format("{}", value) : std::string("null");
  return *this;
}

json_writer& json_writer::field(std::string_view k, bool value) {
  key(k);
  text_ += value ? "true" : "false";
  return *this;
}

std::string json_object::text(std::string_view key, std::string_view fallback) const {
  const auto it = fields.find(key);
  if (it != fields.end()) {
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  }
  return std::string(fallback);
}

std::int64_t json_object::integer(std::string_view key, std::int64_t fallback) const {
  const auto it = fields.find(key);
  if (it == fields.end()) return fallback;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return *i;
  if (const auto* d = std::get_if<double>(&it->second)) return static_cast<std::int64_t>(*d);
  return fallback;
}

double json_object::number(std::string_view key, double fallback) const {
  const auto it = fields.find(key);
  if (it == fields.end()) return fallback;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  return fallback;
}

std::optional<json_object> parse_json_line(std::string_view line, std::string& error) {
  return parser(line).object(error);
}

}  // namespace redlock::torture
