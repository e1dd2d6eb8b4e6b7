// The JSON-lines format of the torture logs.
#include "json_line.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

using namespace redlock::torture;

TEST_CASE("json lines: what is written reads back", "[torture][json]") {
  json_writer w;
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  w.field("s", "a \"quoted\"\\ line\nwith\ttabs \x01")
      .field("i", big)
      .field("n", -5)
      .field("d", 0.25)
      .field("b", true)
      .field("e", "");
  std::string error;
  const auto o = parse_json_line(w.str(), error);
  REQUIRE(o);
  CHECK(o->text("s") == "a \"quoted\"\\ line\nwith\ttabs \x01");
  CHECK(o->integer("i") == big);
  CHECK(o->integer("n") == -5);
  CHECK(o->number("d") == 0.25);
  CHECK(std::get<bool>(o->fields.at("b")));
  CHECK(o->text("e").empty());
  CHECK(o->integer("missing", 7) == 7);
  CHECK(o->text("i", "x") == "x");  // not a string
}

TEST_CASE("json lines: escapes and unicode", "[torture][json]") {
  std::string error;
  const auto o = parse_json_line(R"( {"a":"\u00e9\ud83d\ude00\/","b":null , "c":1e3} )", error);
  REQUIRE(o);
  CHECK(o->text("a") == "\xc3\xa9\xf0\x9f\x98\x80/");
  CHECK(std::holds_alternative<std::nullptr_t>(o->fields.at("b")));
  CHECK(o->number("c") == 1000);
  CHECK(o->integer("c") == 1000);
}

TEST_CASE("json lines: malformed lines are rejected", "[torture][json]") {
  std::string error;
  for (const char* bad :
       {"", "{", "[1]", R"({"a":})", R"({"a":1,})", R"({"a" 1})", R"({"a":"x)", R"({"a":1} x)",
        R"({a:1})", R"({"a":tru})", R"({"a":"\q"})", R"({"a":1.2.3})"}) {
    INFO(bad);
    CHECK_FALSE(parse_json_line(bad, error));
    CHECK_FALSE(error.empty());
  }
  CHECK(parse_json_line("{}", error));
}
