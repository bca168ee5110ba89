// Randomized soak of the transports (issue 3): many RC QP pairs plus a UD
// and a UC pair between two hosts over one simulated link shared by all
// QPs, one virtual clock, a seeded random mix of operations, sizes, MTUs,
// SGE lists, inline data, fences and late receive WRs, under loss, reorder
// and duplication of 0 %, 1 % and 10 %. What each flow checks is described
// in soak_rc_flow.h and soak_dgram_flow.h; at the end the link must be
// empty, every frame slot returned, every queue drained and the counters
// consistent.
//
// Seeded: a failure prints its seed; UROCE_SOAK_SEED=<n> replays it (the
// same seed drives every impairment level).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/datapath/transport/soak/soak_dgram_flow.h"
#include "tests/datapath/transport/soak/soak_rc_flow.h"
#include "tests/datapath/transport/soak/soak_world.h"

#if defined(__SANITIZE_ADDRESS__)
#define UROCE_SOAK_SMALL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UROCE_SOAK_SMALL 1
#endif
#endif

namespace uroce::transport::soak {
namespace {

// Sanitizer builds run a smaller soak (same code paths, fewer WRs).
#ifdef UROCE_SOAK_SMALL
constexpr std::uint32_t kRcPairs = 6;
constexpr std::uint32_t kRcWrs = 60;
constexpr std::uint32_t kDgramMsgs = 120;
#else
constexpr std::uint32_t kRcPairs = 12;
constexpr std::uint32_t kRcWrs = 150;
constexpr std::uint32_t kDgramMsgs = 300;
#endif
constexpr std::uint32_t kDgramRecvs = 512;

std::uint64_t soak_seed(std::uint64_t fallback) {
  if (const char* s = std::getenv("UROCE_SOAK_SEED"); s != nullptr && *s != 0) {
    return std::strtoull(s, nullptr, 0);
  }
  return fallback;
}

port::SimLinkConfig link_config(double p, std::uint64_t seed) {
  port::SimDirectionConfig d;
  d.bandwidth_bps = 100'000'000'000ull;
  d.overhead_bytes = 20;
  d.propagation_ns = 2 * kNsPerUs;
  d.queue_frames = 16384;
  d.loss = p;
  d.reorder = p;
  d.duplicate = p;
  d.reorder_hold_ns = 5 * kNsPerUs;
  port::SimLinkConfig c = port::SimLinkConfig::symmetric(d, seed);
  c.pool_frames = 16384;
  c.slot_bytes = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
  return c;
}

class Soak {
 public:
  Soak(double p, std::uint64_t seed, std::size_t rx_buf = 0)
      : p_(p), seed_(seed), rng_(seed * 0x2545F4914F6CDD1Dull + 7), world_(link_config(p, seed)) {
    world_.set_rx_buf(rx_buf);
  }
  std::uint64_t chained() const { return world_.chained(); }

  void build() {
    Host& a = world_.host(0);
    Host& b = world_.host(1);
    static constexpr wire::PathMtu kMtus[] = {wire::PathMtu::k256, wire::PathMtu::k512,
                                              wire::PathMtu::k1024, wire::PathMtu::k2048,
                                              wire::PathMtu::k4096};
    for (std::uint32_t q = 0; q < kRcPairs; ++q) {
      RcQpConfig cfg;
      cfg.max_send_wr = 64;
      cfg.max_recv_wr = 64;
      RcEnd& x = world_.add_rc(a, 0x100 + q, cfg);
      RcEnd& y = world_.add_rc(b, 0x200 + q, cfg);
      rctest::ConnectParams cp;
      cp.mtu = kMtus[rng_.below(5)];
      // Some pairs start right below the 24-bit PSN wrap.
      cp.sq_psn = rng_.chance(0.3) ? 0xffffff - static_cast<std::uint32_t>(rng_.below(3000))
                                   : static_cast<std::uint32_t>(rng_.below(1u << 24));
      cp.rq_psn = rng_.chance(0.3) ? 0xffffff - static_cast<std::uint32_t>(rng_.below(3000))
                                   : static_cast<std::uint32_t>(rng_.below(1u << 24));
      cp.timeout = static_cast<std::uint8_t>(12 + rng_.below(3));
      cp.retry_cnt = 7;
      cp.rnr_retry = 7;
      cp.min_rnr_timer = static_cast<std::uint8_t>(1 + rng_.below(6));
      cp.max_rd_atomic = cp.max_dest_rd_atomic = static_cast<std::uint8_t>(1 + rng_.below(16));
      rctest::connect(*x.qp, y.qp->qpn(), b.mac, b.ip, cp);
      rctest::ConnectParams cb = cp;
      std::swap(cb.sq_psn, cb.rq_psn);
      rctest::connect(*y.qp, x.qp->qpn(), a.mac, a.ip, cb);
      RcMix mix;
      mix.wrs = kRcWrs;
      rc_.push_back(std::make_unique<RcFlow>(2 * q, a, x, b, y, rng_.next_u64(), mix));
      rc_.push_back(std::make_unique<RcFlow>(2 * q + 1, b, y, a, x, rng_.next_u64(), mix));
    }
    DgramMix dm;
    dm.msgs = kDgramMsgs;
    for (std::uint32_t i = 0; i < 2; ++i) {
      Host& h = world_.host(i);
      UdQpConfig u;
      u.qpn = 0x300 + i;
      u.max_recv_wr = kDgramRecvs;
      UdEnd& e = world_.add_ud(h, u);
      to_rts(*e.qp);
      UcQpConfig c;
      c.qpn = 0x400 + i;
      c.max_recv_wr = kDgramRecvs;
      world_.add_uc(h, c);
    }
    UcEnd& ca = *a.uc[0];
    UcEnd& cb = *b.uc[0];
    const wire::PathMtu uc_mtu = kMtus[rng_.below(5)];
    connect_uc(*ca.qp, cb.qp->qpn(), b, uc_mtu);
    connect_uc(*cb.qp, ca.qp->qpn(), a, uc_mtu);
    ud_.push_back(
        std::make_unique<UdFlow>(0, a, *a.ud[0], b, *b.ud[0], kDgramRecvs, rng_.next_u64(), dm));
    ud_.push_back(
        std::make_unique<UdFlow>(1, b, *b.ud[0], a, *a.ud[0], kDgramRecvs, rng_.next_u64(), dm));
    uc_.push_back(std::make_unique<UcFlow>(0, a, ca, b, cb, kDgramRecvs, rng_.next_u64(), dm));
    uc_.push_back(std::make_unique<UcFlow>(1, b, cb, a, ca, kDgramRecvs, rng_.next_u64(), dm));
  }

  // Runs until every flow is done and the link is empty. Empty string on
  // success, else what went wrong.
  std::string run() {
    VirtualClock& clock = world_.clock();
    const TimeNs limit = 3600 * kNsPerSec;
    for (;;) {
      bool moved = false;
      for (auto& f : rc_) moved |= f->post(clock.now());
      for (auto& f : ud_) moved |= f->post();
      for (auto& f : uc_) moved |= f->post();
      moved |= world_.pump(32);
      moved |= world_.deliver(512);
      moved |= world_.fire_timers();
      if (std::string e = drain(); !e.empty()) return e;
      if (finished() && quiet()) return {};
      if (moved) continue;
      std::optional<TimeNs> next = world_.next_event();
      for (auto& f : rc_) {
        if (auto t = f->next_late(); t && (!next || *t < *next)) next = t;
      }
      if (!next) return "stuck: nothing in flight, nothing due, work unfinished";
      if (*next > limit) return "virtual time limit passed";
      clock.advance_to(*next);
    }
  }

  std::string drain() {
    for (auto& f : rc_) {
      if (!f->error().empty() || !f->drain()) return f->error();
    }
    for (auto& f : ud_) {
      if (!f->error().empty() || !f->drain()) return f->error();
    }
    for (auto& f : uc_) {
      if (!f->error().empty() || !f->drain()) return f->error();
    }
    return {};
  }

  bool finished() const {
    for (auto& f : rc_) {
      if (!f->finished()) return false;
    }
    for (auto& f : ud_) {
      if (!f->finished()) return false;
    }
    for (auto& f : uc_) {
      if (!f->finished()) return false;
    }
    return true;
  }

  bool quiet() {
    port::SimLink& l = world_.link();
    if (l.in_flight_to(0) != 0 || l.in_flight_to(1) != 0) return false;
    for (unsigned i = 0; i < 2; ++i) {
      for (auto& e : world_.host(i).rc) {
        if (e->qp->has_output()) return false;
      }
    }
    return true;
  }

  // The counters of every RC QP that left RTS, for a failure message.
  std::string dump_broken() {
    std::string o;
    for (unsigned i = 0; i < 2; ++i) {
      for (auto& e : world_.host(i).rc) {
        if (e->qp->state() == QpState::kRts) continue;
        const RcCounters& c = e->qp->counters();
        char b[512];
        std::snprintf(b, sizeof b,
                      "\nqp 0x%x state %d: nak_inv_req %llu nak_rem_access %llu "
                      "nak_rem_op %llu rx_error_naks %llu retry_exc %llu rnr_exc %llu "
                      "local_err %llu cq_overflow %llu ePSN %u next_psn %u unacked %u",
                      e->qp->qpn(), static_cast<int>(e->qp->state()),
                      static_cast<unsigned long long>(c.tx_nak_invalid_request),
                      static_cast<unsigned long long>(c.tx_nak_remote_access),
                      static_cast<unsigned long long>(c.tx_nak_remote_op),
                      static_cast<unsigned long long>(c.rx_error_naks),
                      static_cast<unsigned long long>(c.retry_exceeded),
                      static_cast<unsigned long long>(c.rnr_retry_exceeded),
                      static_cast<unsigned long long>(c.local_errors),
                      static_cast<unsigned long long>(c.cq_overflow), e->qp->expected_psn().value(),
                      e->qp->next_psn().value(), e->qp->unacked_psn().value());
        o += b;
        for (std::uint64_t k = e->rx_frames > e->last.size() ? e->rx_frames - e->last.size() : 0;
             k < e->rx_frames; ++k) {
          const RcEnd::Seen& f = e->last[k % e->last.size()];
          std::snprintf(b, sizeof b, "\n  t=%llu op=0x%02x psn=%u len=%u -> ePSN %u",
                        static_cast<unsigned long long>(f.at), f.opcode, f.psn, f.len,
                        f.epsn_after);
          o += b;
        }
      }
    }
    return o;
  }

  void check_end() {
    for (auto& f : rc_) EXPECT_TRUE(f->check_end()) << f->error();
    port::SimLink& l = world_.link();
    EXPECT_EQ(l.pool().in_use(), 0u);
    EXPECT_EQ(l.pool().bad_frees(), 0u);
    std::uint64_t dups = 0;
    std::uint64_t refused = 0;
    std::uint64_t tail_drops = 0;
    std::uint64_t ring_full = 0;
    for (unsigned i = 0; i < 2; ++i) {
      const port::SimDirectionCounters& c = l.counters(i);
      // The hosts' TX back-pressure keeps the link from overflowing: every
      // frame lost was lost to the configured impairment.
      tail_drops += c.drop_queue_full + c.drop_pool_exhausted + c.drop_oversize;
      dups += c.duplicated;
      const Host& h = world_.host(i);
      EXPECT_EQ(h.parse_errors, 0u);
      EXPECT_EQ(h.unknown_qpn, 0u);
      refused += h.tx.refused;
      ring_full += h.tx.ring_full;
    }
    EXPECT_EQ(refused, 0u);
    EXPECT_EQ(tail_drops, 0u);
    RcCounters sum;
    for (unsigned i = 0; i < 2; ++i) {
      for (auto& e : world_.host(i).rc) {
        const RcCounters& c = e->qp->counters();
        sum.tx_requests += c.tx_requests;
        sum.tx_retransmits += c.tx_retransmits;
        sum.timeouts += c.timeouts;
        sum.go_back_n += c.go_back_n;
        sum.tx_seq_naks += c.tx_seq_naks;
        sum.rx_duplicates += c.rx_duplicates;
        sum.rx_rnr_naks += c.rx_rnr_naks;
        sum.reads_replayed += c.reads_replayed;
        sum.atomics_replayed += c.atomics_replayed;
        sum.atomics_executed += c.atomics_executed;
      }
    }
    if (p_ > 0) {
      EXPECT_GT(sum.tx_retransmits, 0u);
      EXPECT_GT(sum.timeouts + sum.go_back_n, 0u);
      EXPECT_GT(sum.rx_duplicates, 0u);
    } else {
      EXPECT_EQ(sum.timeouts, 0u);
      EXPECT_EQ(sum.go_back_n, 0u);
      EXPECT_EQ(sum.tx_seq_naks, 0u);
      EXPECT_EQ(sum.rx_duplicates, 0u);
    }
    for (auto& f : ud_) {
      const Arrivals& a = f->arrivals();
      EXPECT_LE(a.repeats(), dups) << "UD";
      if (p_ == 0) {
        EXPECT_EQ(a.total(), kDgramMsgs) << "UD";
        EXPECT_EQ(a.missing(), 0u) << "UD";
        EXPECT_EQ(a.out_of_order(), 0u) << "UD";
      }
    }
    for (auto& f : uc_) {
      const Arrivals& a = f->arrivals();
      EXPECT_LE(a.repeats(), dups) << "UC";
      EXPECT_TRUE(f->check_writes(p_ == 0)) << f->error();
      if (p_ == 0) {
        EXPECT_EQ(a.total(), f->receives_expected()) << "UC";
        EXPECT_EQ(a.repeats(), 0u) << "UC";
        EXPECT_EQ(a.out_of_order(), 0u) << "UC";
      }
    }
    std::uint64_t bytes = 0;
    for (auto& f : rc_) bytes += f->bytes();
    std::printf(
        "soak p=%.2f seed=%llu: %u RC flows, %.1f MiB, virtual %.3f s, "
        "requests %llu, retransmits %llu, timeouts %llu, go-back-N %llu, "
        "RNR NAKs %llu, duplicates seen %llu, READs replayed %llu, "
        "atomics replayed %llu, link duplicates %llu, TX ring full %llu\n",
        p_, static_cast<unsigned long long>(seed_), static_cast<unsigned>(rc_.size()),
        bytes / 1048576.0, world_.clock().now() / 1e9,
        static_cast<unsigned long long>(sum.tx_requests),
        static_cast<unsigned long long>(sum.tx_retransmits),
        static_cast<unsigned long long>(sum.timeouts),
        static_cast<unsigned long long>(sum.go_back_n),
        static_cast<unsigned long long>(sum.rx_rnr_naks),
        static_cast<unsigned long long>(sum.rx_duplicates),
        static_cast<unsigned long long>(sum.reads_replayed),
        static_cast<unsigned long long>(sum.atomics_replayed),
        static_cast<unsigned long long>(dups), static_cast<unsigned long long>(ring_full));
  }

 private:
  static void to_rts(UdQp& q) {
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qkey = UdFlow::kQkey;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v),
              0);
    v.qp_state = QpState::kRtr;
    ASSERT_EQ(q.modify(qp_attr::kState, v), 0);
    v.qp_state = QpState::kRts;
    v.sq_psn = 77;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kSqPsn, v), 0);
  }
  static void connect_uc(UcQp& q, std::uint32_t dest, const Host& peer, wire::PathMtu mtu) {
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qp_access_flags = access::kRemoteWrite;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort |
                           qp_attr::kAccessFlags,
                       v),
              0);
    v.qp_state = QpState::kRtr;
    v.av = {peer.mac, peer.ip, 0, 64};
    v.path_mtu = mtu;
    v.dest_qp_num = dest;
    v.rq_psn = 0xfffff0;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kAv | qp_attr::kPathMtu | qp_attr::kDestQpn |
                           qp_attr::kRqPsn,
                       v),
              0);
    v.qp_state = QpState::kRts;
    v.sq_psn = 0xfffff0;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kSqPsn, v), 0);
  }

  double p_;
  std::uint64_t seed_;
  SeededRng rng_;
  World world_;
  std::vector<std::unique_ptr<RcFlow>> rc_;
  std::vector<std::unique_ptr<UdFlow>> ud_;
  std::vector<std::unique_ptr<UcFlow>> uc_;
};

struct Level {
  const char* name;
  double p;
  std::uint64_t seed;
  std::size_t rx_buf = 0;  // World::set_rx_buf
};

class SoakLevels : public ::testing::TestWithParam<Level> {};

// Loss, reorder and duplication each at the level's probability, on both
// directions of the link.
TEST_P(SoakLevels, Run_EveryByteAndCompletionChecked) {
  const Level& lv = GetParam();
  const std::uint64_t seed = soak_seed(lv.seed);
  SCOPED_TRACE("replay with UROCE_SOAK_SEED=" + std::to_string(seed));
  Soak s(lv.p, seed, lv.rx_buf);
  s.build();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string err = s.run();
  ASSERT_EQ(err, "") << s.dump_broken();
  s.check_end();
  if (lv.rx_buf != 0) {
    EXPECT_GT(s.chained(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Impairments, SoakLevels,
                         ::testing::Values(Level{"Clean", 0.0, 101}, Level{"OnePercent", 0.01, 202},
                                           Level{"TenPercent", 0.10, 303},
                                           // 1 KiB RX buffers: every frame of a path MTU
                                           // of 1024 or more arrives chained.
                                           Level{"ChainedOnePercent", 0.01, 404, 1024}),
                         [](const auto& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace uroce::transport::soak
