#include "pfc/alpha.h"

#include <gtest/gtest.h>

namespace uroce::pfc {
namespace {

TEST(ScenarioToml_Alpha, FractionsIntegersAndExactDecimals) {
  std::uint32_t n = 0;
  std::uint32_t d = 0;
  EXPECT_EQ(parse_alpha("1/16", n, d), "");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(d, 16u);
  EXPECT_EQ(parse_alpha("4/8", n, d), "");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(d, 2u);
  EXPECT_EQ(parse_alpha("8", n, d), "");
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(d, 1u);
  EXPECT_EQ(parse_alpha("0.0625", n, d), "");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(d, 16u);
  EXPECT_EQ(parse_alpha("0.3", n, d),
            "'0.3' is not a multiple of 1/65536; write it as a fraction such as \"3/10\"");
  EXPECT_EQ(parse_alpha("0", n, d), "'0' must be > 0");
  EXPECT_EQ(parse_alpha("70000", n, d),
            "'70000' is out of range (terms of the reduced fraction must be <= 65536)");
  EXPECT_EQ(parse_alpha("1/x", n, d), "'1/x' is not a fraction of whole numbers such as \"1/16\"");
  EXPECT_EQ(parse_alpha("-1", n, d), "'-1' is not a positive number or fraction");
}

}  // namespace
}  // namespace uroce::pfc
