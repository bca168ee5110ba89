#include "datapath/port/pcap_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <vector>

namespace uroce::port {
namespace {

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string tmp_path(const char* tag) {
  return "/tmp/uroce_test_pcap_" + std::to_string(getpid()) + "_" + tag;
}

TEST(PcapWriter_Write, HeaderAndRecordLayout) {
  const auto path = tmp_path("layout");
  PcapWriter w;
  ASSERT_EQ(w.open(path, 4), 0);
  const std::uint8_t frame[] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(w.write(3 * kNsPerSec + 7, frame), 0);
  EXPECT_EQ(w.frames_written(), 1u);
  ASSERT_EQ(w.close(), 0);
  const auto b = slurp(path);
  unlink(path.c_str());
  ASSERT_EQ(b.size(), 24u + 16u + 4u);
  const std::vector<std::uint8_t> magic = {0x4d, 0x3c, 0xb2, 0xa1};
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 4), magic);
  EXPECT_EQ(b[20], 1);  // LINKTYPE_ETHERNET
  EXPECT_EQ(b[24], 3);  // ts_sec
  EXPECT_EQ(b[28], 7);  // ts_nsec
  EXPECT_EQ(b[32], 4);  // incl_len = snaplen
  EXPECT_EQ(b[36], 6);  // orig_len
  EXPECT_EQ(b[40], 1);
  EXPECT_EQ(b[43], 4);
}

TEST(PcapWriter_Write, ClosedWriterGivesEbadf) {
  PcapWriter w;
  const std::uint8_t frame[] = {0};
  EXPECT_EQ(w.write(0, frame), EBADF);
}

TEST(PcapWriter_Open, MissingDirectoryGivesEnoent) {
  PcapWriter w;
  EXPECT_EQ(w.open("/nonexistent-dir-uroce/x.pcap"), ENOENT);
  EXPECT_FALSE(w.is_open());
}

}  // namespace
}  // namespace uroce::port
