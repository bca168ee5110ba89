// Messages of 1 GiB (issue 3: "messages up to at least 1 GiB"; rxe stops at
// 8 MiB): one RDMA WRITE, one RDMA READ and one SEND of 1 GiB each through an
// RC pair over the simulated link (100 Gb/s, back-pressured TX), with a little loss so go-back-N runs in
// the middle of a huge message, every byte checked against a pattern. Needs
// about 2 GiB of memory; suite 'slow' (not part of the sanitizer run).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tests/datapath/transport/soak/soak_memory.h"
#include "tests/datapath/transport/soak/soak_world.h"

namespace uroce::transport {
namespace {

using rctest::status;
using soak::Host;
using soak::RcEnd;
using soak::Region;
using soak::World;

constexpr std::uint64_t kGiB = 1ull << 30;

std::uint64_t word(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t z = (i + salt) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 31);
}

void fill(std::uint8_t* p, std::uint64_t len, std::uint64_t salt) {
  for (std::uint64_t i = 0; i < len / 8; ++i) {
    const std::uint64_t w = word(i, salt);
    std::memcpy(p + 8 * i, &w, 8);
  }
}

// Offset of the first 8-byte word that differs from the pattern, or -1.
std::int64_t first_bad(const std::uint8_t* p, std::uint64_t len, std::uint64_t salt) {
  for (std::uint64_t i = 0; i < len / 8; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + 8 * i, 8);
    if (w != word(i, salt)) return static_cast<std::int64_t>(8 * i);
  }
  return -1;
}

port::SimLinkConfig lossy_link() {
  port::SimDirectionConfig d;
  d.bandwidth_bps = 100'000'000'000ull;
  d.propagation_ns = 2 * kNsPerUs;
  d.queue_frames = 8192;
  d.loss = 1e-5;
  port::SimLinkConfig c = port::SimLinkConfig::symmetric(d, 4242);
  c.pool_frames = 8192;
  c.slot_bytes = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
  return c;
}

SendWr one_sge(std::uint64_t id, WrOpcode op, const Region& local, const Region& remote) {
  SendWr w;
  w.wr_id = id;
  w.opcode = op;
  w.flags = send_flag::kSignaled;
  w.num_sge = 1;
  w.sge[0] = {local.va, static_cast<std::uint32_t>(kGiB), local.key};
  w.remote_addr = remote.va;
  w.rkey = remote.key;
  return w;
}

TEST(RcQpLarge, OnPacket_OneGibWriteReadAndSendArriveIntact) {
  World w(lossy_link());
  Host& ha = w.host(0);
  Host& hb = w.host(1);
  RcEnd& a = w.add_rc(ha, 0x101, RcQpConfig{});
  RcEnd& b = w.add_rc(hb, 0x202, RcQpConfig{});
  rctest::ConnectParams cp;
  cp.mtu = wire::PathMtu::k4096;
  cp.retry_cnt = 7;
  rctest::connect(*a.qp, b.qp->qpn(), hb.mac, hb.ip, cp);
  std::swap(cp.sq_psn, cp.rq_psn);
  rctest::connect(*b.qp, a.qp->qpn(), ha.mac, ha.ip, cp);
  const std::uint32_t all = access::kLocalWrite | access::kRemoteAny;
  Region ma(ha.mrs, Host::kPd, 0x40000000, kGiB, all);
  Region mb(hb.mrs, Host::kPd, 0x80000000, kGiB, all);
  const TimeNs limit = 600 * kNsPerSec;
  const auto t0 = std::chrono::steady_clock::now();
  const auto secs = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  // WRITE A -> B.
  fill(ma.mem.data(), kGiB, 1);
  ASSERT_EQ(a.qp->post_send(one_sge(1, WrOpcode::kRdmaWrite, ma, mb)), 0);
  ASSERT_TRUE(w.run_until([&] { return a.scq.wc.size() == 1; }, limit));
  EXPECT_EQ(status(a.scq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(a.scq.wc[0].byte_len, kGiB);
  EXPECT_EQ(first_bad(mb.mem.data(), kGiB, 1), -1);
  const double t_write = secs();

  // READ B -> A (A cleared first).
  std::memset(ma.mem.data(), 0, kGiB);
  ASSERT_EQ(a.qp->post_send(one_sge(2, WrOpcode::kRdmaRead, ma, mb)), 0);
  ASSERT_TRUE(w.run_until([&] { return a.scq.wc.size() == 2; }, limit));
  EXPECT_EQ(status(a.scq.wc[1]), WcStatus::kSuccess);
  EXPECT_EQ(a.scq.wc[1].byte_len, kGiB);
  EXPECT_EQ(first_bad(ma.mem.data(), kGiB, 1), -1);
  const double t_read = secs();

  // SEND A -> B into one 1 GiB receive buffer.
  fill(ma.mem.data(), kGiB, 2);
  RecvWr r;
  r.wr_id = 3;
  r.num_sge = 1;
  r.sge[0] = {mb.va, static_cast<std::uint32_t>(kGiB), mb.key};
  ASSERT_EQ(b.qp->post_recv(r), 0);
  ASSERT_EQ(a.qp->post_send(one_sge(4, WrOpcode::kSend, ma, mb)), 0);
  ASSERT_TRUE(w.run_until([&] { return a.scq.wc.size() == 3 && b.rcq.wc.size() == 1; }, limit));
  EXPECT_EQ(status(a.scq.wc[2]), WcStatus::kSuccess);
  EXPECT_EQ(status(b.rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(b.rcq.wc[0].byte_len, kGiB);
  EXPECT_EQ(first_bad(mb.mem.data(), kGiB, 2), -1);

  const RcCounters& ca = a.qp->counters();
  EXPECT_EQ(a.qp->state(), QpState::kRts);
  EXPECT_EQ(b.qp->state(), QpState::kRts);
  EXPECT_EQ(ha.parse_errors + hb.parse_errors, 0u);
  EXPECT_EQ(ha.tx.refused + hb.tx.refused, 0u);
  EXPECT_GT(ca.go_back_n + ca.timeouts, 0u);  // the loss was recovered from
  std::printf(
      "1 GiB WRITE %.1f s, READ %.1f s, SEND %.1f s (wall, incl. fill and "
      "check); virtual %.3f s; A: requests %llu, retransmits %llu, "
      "go-back-N %llu, timeouts %llu\n",
      t_write, t_read - t_write, secs() - t_read, w.clock().now() / 1e9,
      static_cast<unsigned long long>(ca.tx_requests),
      static_cast<unsigned long long>(ca.tx_retransmits),
      static_cast<unsigned long long>(ca.go_back_n), static_cast<unsigned long long>(ca.timeouts));
}

}  // namespace
}  // namespace uroce::transport
