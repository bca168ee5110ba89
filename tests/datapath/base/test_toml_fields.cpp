// The shared strict TOML table reader (datapath/base/toml_fields.h): typed
// reads, range checks, unknown keys, and the two message styles.
#include "datapath/base/toml_fields.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace uroce::toml_fields {
namespace {

toml::table table_of(const std::string& text) {
  toml::table t;
  EXPECT_EQ(parse(text, "t.toml", &t), "");
  return t;
}

TEST(Parse_SyntaxError, NamesSourceLineAndColumn) {
  toml::table t;
  const std::string e = parse("a = 1\nb = = 2\n", "t.toml", &t);
  EXPECT_EQ(e.rfind("t.toml:2:", 0), 0u) << e;
}

TEST(Fields_Integer, ReadsInRangeAndLeavesAbsentKeys) {
  const toml::table t = table_of("a = 7\n");
  Fields f(t, "x", Style::kTerse);
  std::uint16_t a = 0;
  std::uint16_t b = 3;
  EXPECT_TRUE(f.integer("a", a, 0, 10));
  EXPECT_FALSE(f.integer("b", b, 0, 10));
  EXPECT_EQ(a, 7);
  EXPECT_EQ(b, 3);
  EXPECT_EQ(f.finish(), "");
}

TEST(Fields_Integer, OutOfRangeInEachStyle) {
  const toml::table t = table_of("a = 11\n");
  Fields terse(t, "x", Style::kTerse);
  Fields detailed(t, "x", Style::kDetailed);
  int a = 0;
  EXPECT_FALSE(terse.integer("a", a, 0, 10));
  EXPECT_FALSE(detailed.integer("a", a, 0, 10));
  EXPECT_EQ(terse.finish(), "x.a: 11 is outside 0..10");
  EXPECT_EQ(detailed.finish(), "x.a: 11 is out of range 0..10 (line 1)");
  EXPECT_EQ(a, 0);
}

TEST(Fields_Str, WrongTypeInEachStyle) {
  const toml::table t = table_of("\n s = 5\n");
  Fields terse(t, "x", Style::kTerse);
  Fields detailed(t, "x", Style::kDetailed);
  std::string s;
  terse.str("s", s);
  detailed.str("s", s);
  EXPECT_EQ(terse.finish(), "x.s: expected a string");
  EXPECT_EQ(detailed.finish(), "x.s: expected a string, got an integer (line 2)");
}

TEST(Fields_Finish, UnknownKeyInEachStyle) {
  const toml::table t = table_of("rate = 1\n");
  Fields terse(t, "link[0]", Style::kTerse);
  Fields detailed(t, "link[0]", Style::kDetailed);
  double r = 0;
  terse.number("rate_gbps", r, 0, 1, false);
  detailed.number("rate_gbps", r, 0, 1, false);
  EXPECT_EQ(terse.finish(), "link[0].rate: unknown key");
  EXPECT_EQ(detailed.finish(), "link[0]: unknown key 'rate' (did you mean 'rate_gbps'?) at line 1");
}

TEST(Fields_Finish, TopLevelKeyWithExpectedKeys) {
  const toml::table t = table_of("other = 1\n");
  Fields f(t, "", Style::kTerse);
  f.table("a");
  EXPECT_EQ(f.finish("[a]"), "other: unknown key (expected [a])");
}

TEST(Fields_Finish, FirstErrorWinsAndStopsLaterReads) {
  const toml::table t = table_of("a = \"x\"\nb = 2\n");
  Fields f(t, "x", Style::kTerse);
  int a = 0;
  int b = 0;
  f.integer("a", a);
  EXPECT_FALSE(f.integer("b", b));
  EXPECT_EQ(b, 0);
  EXPECT_FALSE(f.ok());
  EXPECT_EQ(f.finish(), "x.a: expected an integer");
}

TEST(Fields_Require, MissingKey) {
  const toml::table t = table_of("");
  Fields f(t, "scenario", Style::kDetailed);
  f.require("duration_ms");
  EXPECT_EQ(f.finish(), "scenario: missing key 'duration_ms'");
}

TEST(Fields_IntArray, NamesTheElement) {
  const toml::table t = table_of("m = [1, 2, 64]\n");
  Fields f(t, "p", Style::kTerse);
  std::vector<std::int64_t> got;
  EXPECT_FALSE(f.int_array("m", "an array of at most 8 integers", 8, 0, 63,
                           [&](std::size_t, std::int64_t v) { got.push_back(v); }));
  EXPECT_EQ(got, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(f.finish(), "p.m[2]: 64 is outside 0..63");
}

TEST(Fields_IntArray, TooLongIsATypeError) {
  const toml::table t = table_of("m = [1, 2, 3]\n");
  Fields f(t, "p", Style::kTerse);
  f.int_array("m", "an array of at most 2 integers", 2, 0, 7, [](std::size_t, std::int64_t) {});
  EXPECT_EQ(f.finish(), "p.m: expected an array of at most 2 integers");
}

TEST(Fields_ScalarText, StringIntegerAndFloat) {
  const toml::table t = table_of("s = \"1/16\"\ni = 2\nr = 0.25\nb = true\n");
  Fields f(t, "x", Style::kDetailed);
  std::string s, i, r, b;
  EXPECT_TRUE(f.scalar_text("s", s, "a fraction"));
  EXPECT_TRUE(f.scalar_text("i", i, "a fraction"));
  EXPECT_TRUE(f.scalar_text("r", r, "a fraction"));
  EXPECT_EQ(s, "1/16");
  EXPECT_EQ(i, "2");
  EXPECT_EQ(r, "0.25");
  EXPECT_FALSE(f.scalar_text("b", b, "a fraction"));
  EXPECT_EQ(f.finish(), "x.b: expected a fraction, got a boolean (line 4)");
}

TEST(Fields_StrList, ElementNotAStringInEachStyle) {
  const toml::table t = table_of("l = [\"a\", 1]\n");
  Fields terse(t, "eal", Style::kTerse);
  Fields detailed(t, "output", Style::kDetailed);
  std::vector<std::string> l{"kept"};
  EXPECT_FALSE(terse.str_list("l", l));
  detailed.str_list("l", l);
  EXPECT_EQ(l, std::vector<std::string>{"kept"});
  EXPECT_EQ(terse.finish(), "eal.l: expected an array of strings");
  EXPECT_EQ(detailed.finish(), "output.l: every element must be a string (line 1)");
}

TEST(Fields_Reject, ValueNamedByItsKey) {
  const toml::table t = table_of("mode = \"fast\"\n");
  Fields f(t, "x", Style::kDetailed);
  std::string mode;
  f.str("mode", mode);
  f.reject("mode", "'fast' is not a mode");
  EXPECT_EQ(f.finish(), "x.mode: 'fast' is not a mode (line 1)");
}

}  // namespace
}  // namespace uroce::toml_fields
