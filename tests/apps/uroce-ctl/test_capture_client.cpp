#include "apps/uroce-ctl/capture_client.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace uroce::ctl_tool {
namespace {

TEST(CaptureRefusal_Text, EachRefusalSaysWhat) {
  EXPECT_EQ(capture_refusal(ENODEV, "uroce9"), "uroced has no device uroce9");
  EXPECT_EQ(capture_refusal(EBUSY, "uroce0"),
            "a capture of uroce0 already runs (one per device at a time)");
  EXPECT_EQ(capture_refusal(EPERM, "uroce0"),
            "only root may capture (a capture shows every client's payload)");
  EXPECT_EQ(capture_refusal(EINVAL, "uroce0"),
            "uroced refused the request: snaplen below 64 bytes, or a device name of 64 bytes or "
            "more");
  EXPECT_EQ(capture_refusal(EOPNOTSUPP, "uroce0"), "this uroced does not capture");
  EXPECT_EQ(capture_refusal(ESHUTDOWN, "uroce0"), "uroced is stopping");
  EXPECT_EQ(capture_refusal(ENOMEM, "uroce0"),
            "uroced has no memory for the capture's buffers (a smaller --snaplen needs less; its "
            "log says more)");
  EXPECT_EQ(capture_refusal(EPROTONOSUPPORT, "uroce0"),
            "uroced speaks another control protocol version (install uroce-ctl and uroced "
            "together)");
  EXPECT_EQ(capture_refusal(EIO, "uroce0"), "uroced refused the capture: Input/output error");
}

}  // namespace
}  // namespace uroce::ctl_tool
