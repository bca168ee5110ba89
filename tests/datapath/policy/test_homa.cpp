// The Homa-like scheduler as a QP extension (datapath/policy/homa.h): the
// CUTOFFS handshake between two devices that both run it (and none with one
// that does not), a long message's scheduled bytes leaving only as GRANTs
// allow them, MLEN, cutoffs recomputed and published, and grants recovered
// over a lossy link.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "datapath/port/pcap_writer.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

VnicConfig homa_config(const wire::MacAddr& mac, wire::Ipv4Addr ip, bool on) {
  VnicConfig c = Host::config(mac, ip, 1500);
  c.homa.enabled = on;
  // Small enough that a 48 KiB message needs grants at the 1 KiB path MTU.
  c.homa.unsched_bytes = 8192;
  c.homa.rtt_bytes = 8192;
  c.homa.grant_increment = 2048;
  c.homa.resend_ns = 200'000;
  c.homa.grant_timeout_ns = 1'000'000;
  c.homa.cutoffs_every = 16;
  return c;
}

struct Homa : ::testing::Test, RcQpPair {
  port::SimLinkConfig link_cfg = link_1us(10'000'000'000, 5);
  std::unique_ptr<port::SimLink> link;
  bool a_on = true, b_on = true;
  std::unique_ptr<Host> a, b;
  VirtualClock clock;

  std::uint32_t b_overcommit = 4;
  std::uint32_t b_cutoffs_every = 16;

  void start() {
    link = std::make_unique<port::SimLink>(link_cfg);
    a = std::make_unique<Host>(*link, 0, homa_config(kMacA, kIpA, a_on));
    VnicConfig bc = homa_config(kMacB, kIpB, b_on);
    bc.homa.overcommit = b_overcommit;
    bc.homa.cutoffs_every = b_cutoffs_every;
    b = std::make_unique<Host>(*link, 1, bc);
    open(*a, *b);
    run(20);
  }
  void run(int n) { poll_both(*a, *b, clock, n); }
  // Polls until A's send CQ has `n` completions or `limit` iterations pass.
  std::vector<ib_uverbs_wc> wait_send(std::size_t n, int limit = 200'000) {
    return poll_until(*a, *b, clock, *ascq, n, limit);
  }
  void fill(Host& h, std::size_t off, std::size_t n, std::uint8_t seed) {
    for (std::size_t i = 0; i < n; ++i) h.mem[off + i] = static_cast<std::uint8_t>(seed + i * 7);
  }
};

TEST_F(Homa, Handshake_BothOn_ConnectionScheduled) {
  start();
  EXPECT_TRUE(status_of(a->vnic, 10).homa_peer);
  EXPECT_TRUE(status_of(b->vnic, 10).homa_peer);
  EXPECT_EQ(a->vnic.policy<policy::Homa>().counters().homa_peers, 1u);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_peers, 1u);
  EXPECT_GE(a->vnic.policy<policy::Homa>().counters().homa_rx_cutoffs, 1u);
  EXPECT_EQ(a->vnic.policy<policy::Homa>().counters().homa_rx_bad +
                b->vnic.policy<policy::Homa>().counters().homa_rx_bad,
            0u);
}

TEST_F(Homa, Handshake_PeerWithoutIt_StaysPlainRc) {
  b_on = false;
  start();
  EXPECT_FALSE(status_of(a->vnic, 10).homa_peer);
  // B's transport dropped the probe as any foreign opcode.
  EXPECT_GE(status_of(b->vnic, 10).rc.drop_not_rc, 1u);
  fill(*a, 0, 48 * 1024, 3);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  const auto wc = wait_send(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a->mem.data(), b->mem.data(), 48 * 1024), 0);
  EXPECT_EQ(status_of(a->vnic, 10).homa.mlen, 0u);
  EXPECT_EQ(status_of(a->vnic, 10).homa.gated, 0u);
  // A probed a bounded number of times, then gave up.
  EXPECT_LE(a->vnic.policy<policy::Homa>().counters().homa_tx_cutoffs, 4u);
}

TEST_F(Homa, Write_LongerThanUnscheduled_GrantedToTheEnd) {
  start();
  fill(*a, 0, 48 * 1024, 11);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  const auto wc = wait_send(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a->mem.data(), b->mem.data(), 48 * 1024), 0);
  const QpStatus s = status_of(a->vnic, 10);
  EXPECT_EQ(s.homa.gated, 1u);
  EXPECT_GE(s.homa.wait_grant, 1u);  // it did wait for grants
  EXPECT_GE(s.homa.grants, 1u);
  EXPECT_EQ(s.homa.fallbacks, 0u);
  EXPECT_EQ(s.homa.mlen, 1u);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_rx_mlen, 1u);
  EXPECT_GE(b->vnic.policy<policy::Homa>().counters().homa_tx_grants, (48u * 1024 - 8192) / 8192);
  const sched::homa::GrantScheduler* g = b->vnic.policy<policy::Homa>().grant_scheduler();
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->counters().messages, 1u);
  EXPECT_EQ(g->counters().completed, 1u);
  EXPECT_EQ(g->tracked(), 0u);
  EXPECT_EQ(g->outstanding(), 0u);
}

TEST_F(Homa, Write_WithinUnscheduled_NoGrantsNoMlen) {
  start();
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 8192)});
  ASSERT_EQ(wait_send(1).size(), 1u);
  EXPECT_EQ(status_of(a->vnic, 10).homa.mlen, 0u);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_tx_grants, 0u);
  EXPECT_EQ(status_of(a->vnic, 10).homa.wait_grant, 0u);
}

TEST_F(Homa, Send_MultiPacket_DataIntactAndLengthSeen) {
  start();
  fill(*a, 0, 40 * 1024, 5);
  bqp->post_recv(1, {b->sge(0, 48 * 1024)});
  shm::SendWqeFields f = send_wqe(1);
  aqp->post_send(f, {a->sge(0, 40 * 1024)});
  ASSERT_EQ(wait_send(1).size(), 1u);
  std::vector<ib_uverbs_wc> r;
  for (int i = 0; i < 1000 && r.empty(); ++i) {
    run(1);
    r = brcq->poll();
  }
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(r[0].byte_len, 40u * 1024);
  EXPECT_EQ(std::memcmp(a->mem.data(), b->mem.data(), 40 * 1024), 0);
  EXPECT_EQ(status_of(a->vnic, 10).homa.gated, 1u);
  EXPECT_GE(b->vnic.policy<policy::Homa>().counters().homa_tx_grants, 1u);
}

TEST_F(Homa, Cutoffs_RecomputedFromLengthsSeenAndPublished) {
  start();
  const std::uint32_t gen0 = b->vnic.policy<policy::Homa>().generation();
  // 16 messages (cutoffs_every) of lengths spread over two octaves.
  for (std::uint32_t i = 0; i < 16; ++i) {
    const std::uint32_t len = 256u << (i % 6);
    aqp->post_send(write_wqe(i + 1, b->va(0), b->key), {a->sge(0, len)});
    ASSERT_EQ(wait_send(1).size(), 1u) << i;
  }
  run(50);
  EXPECT_GT(b->vnic.policy<policy::Homa>().generation(), gen0);
  EXPECT_GE(b->vnic.policy<policy::Homa>().counters().homa_cutoffs_updates, 1u);
  EXPECT_GE(b->vnic.policy<policy::Homa>().cutoffs().levels, 2u);
  // The next packet A sent B carried... B's answer: A holds B's generation.
  aqp->post_send(write_wqe(100, b->va(0), b->key), {a->sge(0, 64)});
  ASSERT_EQ(wait_send(1).size(), 1u);
  run(50);
  EXPECT_GE(a->vnic.policy<policy::Homa>().counters().homa_rx_cutoffs, 2u);
}

// With the default interval (1,024 messages) the first cutoffs still come
// after 32 messages, the next after 64 more: a receiver does not keep
// every message at the top level through its first 1,024.
TEST_F(Homa, Cutoffs_FirstAfter32MessagesThenDoubling) {
  b_cutoffs_every = 1024;
  start();
  std::uint32_t id = 1;
  auto post = [&](std::uint32_t n, std::uint32_t len) {
    for (std::uint32_t i = 0; i < n; ++i) {
      aqp->post_send(write_wqe(id++, b->va(0), b->key), {a->sge(0, len)});
      ASSERT_EQ(wait_send(1).size(), 1u) << i;
    }
    run(50);
  };
  post(31, 256);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_cutoffs_updates, 0u);
  post(1, 256);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_cutoffs_updates, 1u);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().cutoffs().max_length[0], 256u);
  // Scheduled messages from now on (over unsched_bytes 8,192) would give
  // them the lowest level; the next recomputation is 64 messages later.
  post(63, 16384);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_cutoffs_updates, 1u);
  post(1, 16384);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().counters().homa_cutoffs_updates, 2u);
  const sched::homa::Cutoffs& c = b->vnic.policy<policy::Homa>().cutoffs();
  EXPECT_EQ(c.level_of(16384), c.levels - 1);
  EXPECT_LT(c.level_of(256), c.levels - 1);
}

TEST_F(Homa, LossyLink_EveryMessageCompletes) {
  link_cfg.dir[0].loss = 0.05;
  link_cfg.dir[1].loss = 0.05;
  start();
  // The handshake may need a second probe over the lossy link.
  for (int i = 0; i < 20 && !status_of(a->vnic, 10).homa_peer; ++i) {
    aqp->post_send(write_wqe(900 + i, b->va(0), b->key), {a->sge(0, 64)});
    wait_send(1);
  }
  ASSERT_TRUE(status_of(a->vnic, 10).homa_peer);
  fill(*a, 0, 48 * 1024, 1);
  for (int m = 0; m < 20; ++m) {
    std::memset(b->mem.data(), 0, 48 * 1024);
    aqp->post_send(write_wqe(m + 1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
    const auto wc = wait_send(1);
    ASSERT_EQ(wc.size(), 1u) << m;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << m;
    ASSERT_EQ(std::memcmp(a->mem.data(), b->mem.data(), 48 * 1024), 0) << m;
  }
  const QpStatus s = status_of(a->vnic, 10);
  EXPECT_EQ(s.homa.gated, 20u);
  // Losses hit grants or MLENs too: recovered by resends or gate timeouts.
  const auto& g = b->vnic.policy<policy::Homa>().grant_scheduler()->counters();
  EXPECT_GT(g.resends + s.homa.timeouts, 0u);
}

// The frames of a pcap file the link wrote (classic format: a 24-byte
// header, then 16-byte record headers).
std::vector<std::vector<std::uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> b{std::istreambuf_iterator<char>(in), {}};
  std::vector<std::vector<std::uint8_t>> out;
  for (std::size_t at = 24; at + 16 <= b.size();) {
    std::uint32_t incl = 0;
    std::memcpy(&incl, b.data() + at + 8, 4);
    at += 16;
    if (at + incl > b.size()) break;
    out.emplace_back(b.begin() + at, b.begin() + at + incl);
    at += incl;
  }
  return out;
}

TEST_F(Homa, Priorities_UnscheduledByCutoffsScheduledByGrantControlOnTop) {
  const std::string path = "/tmp/uroce-homa-prio-" + std::to_string(::getpid()) + ".pcap";
  port::PcapWriter pcap;
  ASSERT_EQ(pcap.open(path), 0);
  link = std::make_unique<port::SimLink>(link_cfg);
  link->attach_pcap(0, &pcap);
  link->attach_pcap(1, &pcap);
  a = std::make_unique<Host>(*link, 0, homa_config(kMacA, kIpA, true));
  b = std::make_unique<Host>(*link, 1, homa_config(kMacB, kIpB, true));
  open(*a, *b);
  run(20);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  ASSERT_EQ(wait_send(1).size(), 1u);
  run(20);
  link->attach_pcap(0, nullptr);
  link->attach_pcap(1, nullptr);
  ASSERT_EQ(pcap.close(), 0);
  const auto frames = read_pcap(path);
  std::remove(path.c_str());
  // The default map: priority p at DSCP 8p. One level of unscheduled
  // bytes (nothing seen yet) at the top priority 7; one message granted:
  // scheduled level 0, priority 0.
  int unsched = 0, sched = 0, ctl = 0, acks = 0;
  for (const auto& f : frames) {
    wire::ParsedPacket p;
    ASSERT_EQ(wire::parse_roce(f, p), wire::ParseError::kOk);
    const std::uint8_t op = p.bth.opcode();
    if (p.info->transport == wire::Transport::kExt) {
      EXPECT_EQ(p.dscp(), 56) << wire::opcode_name(op);
      ++ctl;
    } else if (op == wire::op::kRcAck) {
      EXPECT_EQ(p.dscp(), 56);
      ++acks;
    } else if (p.info->op == wire::OpClass::kWrite) {
      const std::uint32_t idx =
          transport::Psn::forward(transport::Psn(100), transport::Psn(p.bth.psn()));
      const bool unscheduled = idx * 1024 < 8192;
      EXPECT_EQ(p.dscp(), unscheduled ? 56 : 0) << idx;
      (unscheduled ? unsched : sched) += 1;
    }
  }
  EXPECT_EQ(unsched, 8);
  EXPECT_EQ(sched, 40);
  EXPECT_GE(ctl, 4);  // probe, answer, MLEN, grants
  EXPECT_GE(acks, 1);
}

// Everything B sends is lost for 1 ms while A waits for grants: A's gate
// times out (MLEN again) and B re-sends its grant once the data went
// silent; the message then completes.
TEST_F(Homa, GrantsLost_ResentAndMessageCompletes) {
  start();
  fill(*a, 0, 48 * 1024, 9);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  run(30);  // the MLEN and the unscheduled bytes arrived; B granted some
  ASSERT_GE(b->vnic.policy<policy::Homa>().counters().homa_tx_grants, 1u);
  ImpairConfig lose;
  lose.drop_tx_rate = 1.0;
  b->vnic.set_impairment(lose);
  run(2000);  // 1 ms
  b->vnic.set_impairment(ImpairConfig{});
  const auto wc = wait_send(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a->mem.data(), b->mem.data(), 48 * 1024), 0);
  EXPECT_GE(b->vnic.policy<policy::Homa>().grant_scheduler()->counters().resends, 1u);
  EXPECT_GE(status_of(a->vnic, 10).homa.timeouts, 1u);
  EXPECT_EQ(status_of(a->vnic, 10).homa.fallbacks, 0u);
}

// Sender-side priority: the TX classes follow the network priorities. A
// long message in its scheduled bytes sends in class 0 (its grants'
// priority); a short message posted meanwhile on another QP starts in
// class 7 (the unscheduled level of its length), and strict classes send
// it first.
TEST_F(Homa, SenderPriority_QpClassFollowsItsNextPacket) {
  start();
  auto aqp2 = a->make_qp(11, QpType::kRc, 1, 2);
  auto bqp2 = b->make_qp(11, QpType::kRc, 1, 2);
  a->connect(11, QpType::kRc, bqp2->qpn, kMacB, kIpB, 300, 700);
  b->connect(11, QpType::kRc, aqp2->qpn, kMacA, kIpA, 700, 300);
  run(20);
  ASSERT_TRUE(status_of(a->vnic, 11).homa_peer);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  for (int i = 0; i < 2000 && status_of(a->vnic, 10).homa.grants == 0; ++i) run(1);
  ASSERT_GE(status_of(a->vnic, 10).homa.grants, 1u);
  run(1);
  EXPECT_EQ(status_of(a->vnic, 10).tx_class, 0);
  aqp2->post_send(write_wqe(2, b->va(60000), b->key), {a->sge(0, 64)});
  a->vnic.poll(clock.now());
  EXPECT_EQ(status_of(a->vnic, 11).tx_class, 7);
  std::vector<std::uint64_t> order;
  for (int i = 0; i < 20000 && order.size() < 2; ++i) {
    run(1);
    for (const ib_uverbs_wc& w : ascq->poll()) order.push_back(w.wr_id);
  }
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], 2u);  // the short message first
}

// A live receiver that grants another message first for longer than the
// sender's grant timeouts (overcommit 1, a 100 Mb/s link: the first
// message takes 3.3 ms, three timeouts are 3 ms) answers each repeated
// MLEN with its grant again, so the waiting sender never falls back.
TEST_F(Homa, StarvedMessage_KeptAliveByRepeatedGrant) {
  link_cfg.dir[0].bandwidth_bps = 100'000'000;
  link_cfg.dir[1].bandwidth_bps = 100'000'000;
  b_overcommit = 1;
  start();
  auto aqp2 = a->make_qp(11, QpType::kRc, 1, 2);
  auto bqp2 = b->make_qp(11, QpType::kRc, 1, 2);
  a->connect(11, QpType::kRc, bqp2->qpn, kMacB, kIpB, 300, 700);
  b->connect(11, QpType::kRc, aqp2->qpn, kMacA, kIpA, 700, 300);
  run(200);
  ASSERT_TRUE(status_of(a->vnic, 11).homa_peer);
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 40 * 1024)});
  aqp2->post_send(write_wqe(2, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  const auto wc = wait_send(2, 400'000);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  const QpStatus s2 = status_of(a->vnic, 11);
  EXPECT_GE(s2.homa.timeouts, 1u);  // it waited past a timeout
  EXPECT_EQ(s2.homa.fallbacks, 0u);
  EXPECT_GE(s2.homa.mlen, 2u);  // the first and at least one repeat
}

TEST_F(Homa, DestroyQp_MessageForgotten) {
  start();
  aqp->post_send(write_wqe(1, b->va(0), b->key), {a->sge(0, 48 * 1024)});
  run(4);  // the MLEN (before the data) has arrived
  ASSERT_EQ(b->vnic.policy<policy::Homa>().counters().homa_rx_mlen, 1u);
  ASSERT_EQ(b->vnic.policy<policy::Homa>().grant_scheduler()->tracked(), 1u);
  EXPECT_EQ(b->vnic.destroy_qp(10), 0);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().grant_scheduler()->tracked(), 0u);
  EXPECT_EQ(b->vnic.policy<policy::Homa>().grant_scheduler()->outstanding(), 0u);
}

}  // namespace
}  // namespace uroce::engine::test
