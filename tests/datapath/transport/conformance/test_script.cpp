#include "tests/datapath/transport/conformance/script.h"

#include <gtest/gtest.h>

namespace uroce::transport::conformance {
namespace {

TEST(ParseTime, Units) {
  EXPECT_EQ(parse_time("0"), TimeNs{0});
  EXPECT_EQ(parse_time("250ns"), TimeNs{250});
  EXPECT_EQ(parse_time("3us"), TimeNs{3000});
  EXPECT_EQ(parse_time("0.65ms"), TimeNs{650000});
  EXPECT_EQ(parse_time("67.108864ms"), TimeNs{67108864});
  EXPECT_EQ(parse_time("1s"), TimeNs{1000000000});
  EXPECT_EQ(parse_time("4.096us"), TimeNs{4096});
}

TEST(ParseTime, RejectsMalformed) {
  EXPECT_FALSE(parse_time(""));
  EXPECT_FALSE(parse_time("5"));  // no unit
  EXPECT_FALSE(parse_time("5m"));
  EXPECT_FALSE(parse_time("1.5ns"));  // finer than a nanosecond
  EXPECT_FALSE(parse_time("1.0001us"));
  EXPECT_FALSE(parse_time(".5us"));
  EXPECT_FALSE(parse_time("5.us"));
  EXPECT_FALSE(parse_time("-1us"));
  EXPECT_FALSE(parse_time("1e3us"));
}

TEST(ParseNumber, DecimalAndHex) {
  EXPECT_EQ(parse_number("100"), 100u);
  EXPECT_EQ(parse_number("0xfffffe"), 0xfffffeu);
  EXPECT_EQ(parse_number("0xFFFFFFFFFFFFFFFF"), ~std::uint64_t{0});
  EXPECT_FALSE(parse_number("0x"));
  EXPECT_FALSE(parse_number("12a"));
  EXPECT_FALSE(parse_number("0x10000000000000000"));
  EXPECT_FALSE(parse_number(""));
}

TEST(FormatTime, PicksTheCoarsestExactUnit) {
  EXPECT_EQ(format_time(0), "0");
  EXPECT_EQ(format_time(643000), "643us");
  EXPECT_EQ(format_time(4000000), "4ms");
  EXPECT_EQ(format_time(4096), "4096ns");
}

TEST(ParseScript, SplitsPrefixWordsAndKeys) {
  const ParseResult r = parse_script(
      "# a comment\n"
      "\n"
      "qp rc qpn=0x12   # trailing comment\n"
      "at 3us send rc_send_only psn=5 ackreq len=300\n"
      "by 1ms wc sq wr=1 status=success\n");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0].no, 3);
  EXPECT_EQ(r.lines[0].cmd, "qp");
  EXPECT_EQ(r.lines[0].words, std::vector<std::string>{"rc"});
  EXPECT_EQ(*r.lines[0].find("qpn"), "0x12");
  const Line& s = r.lines[1];
  EXPECT_EQ(s.no, 4);
  EXPECT_EQ(s.mode, TimeMode::kAt);
  EXPECT_EQ(s.time, TimeNs{3000});
  EXPECT_EQ(s.words, (std::vector<std::string>{"rc_send_only", "ackreq"}));
  EXPECT_EQ(*s.find("len"), "300");
  EXPECT_EQ(r.lines[2].mode, TimeMode::kBy);
}

struct BadLine {
  const char* text;
  int line;
  const char* message_part;
};

TEST(ParseScript, ErrorsNameTheLine) {
  const BadLine cases[] = {
      {"qp rc\nfrobnicate x=1\n", 2, "unknown command 'frobnicate'"},
      {"qp rc\n\nat 3us send rc_send_only psn=1 colour=red\n", 3, "unknown key 'colour'"},
      {"qp rc\nsend rc_send_only psn=1 ackreq sometimes\n", 2, "unknown word 'sometimes'"},
      {"qp rc\nat 3 send rc_send_only psn=1\n", 2, "bad time '3'"},
      {"qp rc\nat 3us\n", 2, "needs a time and a command"},
      {"qp rc\nby 3us recv rc_ack psn=1\n", 2, "'by' is only for"},
      {"qp rc\nsend rc_send_only psn=1 psn=2\n", 2, "given twice"},
      {"qp rc\nsend rc_send_only psn=\n", 2, "malformed 'psn='"},
      {"qp rc\nwc\n", 2, "missing its queue"},
      {"qp\n", 1, "missing its type"},
      {"qp rc\nrecv psn=3\n", 2, "missing its opcode"},
  };
  for (const BadLine& c : cases) {
    const ParseResult r = parse_script(c.text);
    EXPECT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error_line, c.line) << c.text;
    EXPECT_NE(r.error.find(c.message_part), std::string::npos) << c.text << " -> " << r.error;
  }
}

}  // namespace
}  // namespace uroce::transport::conformance
