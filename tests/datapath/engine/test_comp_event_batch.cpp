#include "datapath/engine/comp_event_batch.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace uroce::engine::test {
namespace {

// A SOCK_SEQPACKET pair keeps each write(2) a message of its own, so the
// test sees how the records were grouped into writes.
struct Channel {
  int fd[2] = {-1, -1};
  Channel() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, fd), 0); }
  ~Channel() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  int wr() const { return fd[1]; }
  // The handles of each message readable now, one vector per write.
  std::vector<std::vector<std::uint64_t>> messages() const {
    std::vector<std::vector<std::uint64_t>> out;
    std::uint64_t buf[64];
    for (;;) {
      const ssize_t n = ::read(fd[0], buf, sizeof(buf));
      if (n <= 0) break;
      out.emplace_back(buf, buf + n / 8);
    }
    return out;
  }
};

using Msgs = std::vector<std::vector<std::uint64_t>>;

TEST(CompEventBatch_Add, ClosedWritesAtOnce) {
  Channel ch;
  CompEventCounters c;
  CompEventBatch b(&c);
  b.add(ch.wr(), 5);
  b.add(ch.wr(), 6);
  EXPECT_EQ(ch.messages(), (Msgs{{5}, {6}}));
  EXPECT_EQ(c.records, 2u);
  EXPECT_EQ(c.writes, 2u);
  EXPECT_EQ(b.queued(), 0u);
}

TEST(CompEventBatch_Close, OneWritePerChannelInFirstAddedOrder) {
  Channel x, y;
  CompEventCounters c;
  CompEventBatch b(&c);
  b.open();
  b.add(y.wr(), 1);
  b.add(x.wr(), 2);
  b.add(y.wr(), 3);
  b.add(x.wr(), 4);
  EXPECT_EQ(b.queued(), 4u);
  EXPECT_TRUE(x.messages().empty());  // nothing before the iteration ends
  b.close();
  EXPECT_FALSE(b.is_open());
  EXPECT_EQ(y.messages(), (Msgs{{1, 3}}));
  EXPECT_EQ(x.messages(), (Msgs{{2, 4}}));
  EXPECT_EQ(c.records, 4u);
  EXPECT_EQ(c.writes, 2u);
  EXPECT_EQ(c.errors, 0u);
}

TEST(CompEventBatch_Add, FullBatchIsWrittenFirst) {
  Channel ch;
  CompEventCounters c;
  CompEventBatch b(&c);
  b.open();
  for (std::uint64_t i = 0; i <= CompEventBatch::kMaxRecords; ++i) b.add(ch.wr(), i);
  EXPECT_EQ(b.queued(), 1u);
  b.close();
  const Msgs m = ch.messages();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].size(), CompEventBatch::kMaxRecords);
  EXPECT_EQ(m[0].front(), 0u);
  EXPECT_EQ(m[1], (std::vector<std::uint64_t>{CompEventBatch::kMaxRecords}));
  EXPECT_EQ(c.writes, 2u);
}

TEST(CompEventBatch_Close, FailedWriteCountsEachRecordLost) {
  Channel ok;
  CompEventCounters c;
  CompEventBatch b(&c);
  b.open();
  b.add(1 << 20, 1);  // not an fd
  b.add(1 << 20, 2);
  b.add(ok.wr(), 3);
  b.close();
  EXPECT_EQ(c.errors, 2u);
  EXPECT_EQ(c.records, 1u);
  EXPECT_EQ(c.writes, 1u);
  EXPECT_EQ(ok.messages(), (Msgs{{3}}));
}

}  // namespace
}  // namespace uroce::engine::test
