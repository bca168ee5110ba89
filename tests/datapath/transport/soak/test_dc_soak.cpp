// Randomized soak of the DC transport (issue 16; not a source mirror: it
// drives DciQp and DctQp together through tests/datapath/transport/dc_sim.h).
// Five DCIs of four streams each against three DCTs on one SRQ, over a link
// that loses, duplicates and reorders, with the target's context pool small
// enough that contexts are retired under pressure all the time. Every DC
// operation (SEND, SEND with immediate, SEND with invalidate, RDMA WRITE,
// WRITE with immediate, READ, compare-and-swap, fetch-and-add) with message
// lengths from 0 to 256 KiB, each WR naming a random target and stream.
//
// What must hold, per seed:
// - every WR completes exactly once, successfully, with its opcode, and the
//   WRs of one stream complete in post order;
// - every byte of every WRITE and READ is where it belongs, and every SEND
//   and WRITE with immediate consumed exactly one receive, on its DCT, with
//   its bytes (and nothing past them), its immediate or its invalidation;
// - the fetch-and-adds on one shared word ran exactly once each: their
//   returned values, sorted, form the chain 0, a1, a1 + a2, ... and the word
//   ends at the sum; each compare-and-swap on its own word returned the old
//   value and left the swap (or, when it was built not to match, the old
//   value);
// - SEND with invalidate invalidated the keys it named and no other;
// - nothing more completes once the link has gone quiet.
//
// Receives are reposted a while after they complete, so the SRQ runs dry
// now and then and the RNR path runs too. A failure names its seed;
// UROCE_SOAK_SEED=<n> runs that seed alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/datapath/transport/dc_sim.h"

namespace uroce::transport::dctest {
namespace {

using rctest::wc_op;

constexpr std::uint32_t kMaxMsg = 256 * 1024;
constexpr std::uint32_t kDcis = 5;
constexpr std::uint32_t kStreams = 4;
constexpr std::uint32_t kDcts = 3;
// SRQ buffers, each big enough for the largest SEND plus a guard band that
// must stay untouched.
constexpr std::uint32_t kRecvBufs = 4;
constexpr std::uint32_t kGuard = 64;
constexpr std::uint64_t kRecvStride = kMaxMsg + 4096;
constexpr std::uint8_t kCanary = 0xA5;
constexpr TimeNs kRecvHold = 20 * kNsPerUs;
// Keys SEND with invalidate may name, and two more it never names, which
// must stay valid.
constexpr std::uint32_t kInvKeys = 6;
constexpr std::uint32_t kControlKeys = 2;
// The QP the windows are bound to (any: invalidation does not look at it).
constexpr std::uint32_t kWindowQpn = 0x20;
// The DCTs' min_rnr_timer, which is also the wait a BUSY answer asks for:
// 0.01 ms (IBTA table 45 code 1), shorter than a 256 KiB burst takes on
// this link, so a stream told BUSY resends its window while the last
// burst is still arriving. A target that answered every packet of a burst
// turned that into a retry storm (34 s for the soak instead of 3); it now
// answers only the opening packet (DctQp), and this keeps it tested.
constexpr std::uint8_t kMinRnrTimer = 1;

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
};

// Many messages under one packet, some of a few packets, a few of hundreds;
// 0 and exactly 256 KiB at fixed positions so every seed has both.
std::uint32_t pick_len(Rng& r, std::uint32_t i) {
  if (i % 50 == 7) return 0;
  if (i % 50 == 31) return kMaxMsg;
  const std::uint32_t u = r.below(100);
  if (u < 5) return 0;
  if (u < 45) return 1 + r.below(64);
  if (u < 75) return 65 + r.below(4096 - 64);
  if (u < 93) return 4097 + r.below(65536 - 4096);
  if (u < 98) return 65537 + r.below(kMaxMsg - 65536);
  return kMaxMsg;
}

enum class Kind : std::uint8_t {
  kWrite,
  kWriteImm,
  kRead,
  kSend,
  kSendImm,
  kSendInv,
  kCas,
  kFetchAdd
};
constexpr WrOpcode kOpcode[] = {WrOpcode::kRdmaWrite, WrOpcode::kRdmaWriteImm, WrOpcode::kRdmaRead,
                                WrOpcode::kSend,      WrOpcode::kSendImm,      WrOpcode::kSendInv,
                                WrOpcode::kCmpSwap,   WrOpcode::kFetchAdd};
constexpr WcOpcode kWcOpcode[] = {WcOpcode::kRdmaWrite, WcOpcode::kRdmaWrite, WcOpcode::kRdmaRead,
                                  WcOpcode::kSend,      WcOpcode::kSend,      WcOpcode::kSend,
                                  WcOpcode::kCompSwap,  WcOpcode::kFetchAdd};

Kind pick_kind(Rng& r) {
  const std::uint32_t u = r.below(100);
  if (u < 18) return Kind::kWrite;
  if (u < 28) return Kind::kWriteImm;
  if (u < 46) return Kind::kRead;
  if (u < 60) return Kind::kSend;
  if (u < 70) return Kind::kSendImm;
  if (u < 76) return Kind::kSendInv;
  if (u < 88) return Kind::kCas;
  return Kind::kFetchAdd;
}

bool consumes_recv(Kind k) {
  return k == Kind::kWriteImm || k == Kind::kSend || k == Kind::kSendImm || k == Kind::kSendInv;
}

struct Planned {
  Kind kind;
  std::uint32_t dci, dct, len;
  std::uint16_t stream;
  std::uint64_t a_off, b_off;  // source / destination (atomics: result / target word)
  std::uint64_t add_or_compare = 0, swap = 0, old = 0;
  std::uint32_t inv = 0;  // index into the invalidatable keys
};

// Payload bytes of WR `id`: a pure function of the seed and the id. Bytes 0..7
// carry the id itself, so a receive of 8 bytes or more names its SEND.
void fill(std::uint8_t* p, std::uint32_t len, std::uint64_t seed, std::uint64_t id) {
  Rng r{seed * 0x100000001B3ull ^ id};
  for (std::uint32_t k = 0; k < len; k += 8) {
    const std::uint64_t w = k == 0 ? id : r.next();
    std::memcpy(p + k, &w, std::min<std::uint32_t>(8, len - k));
  }
}

std::uint64_t take(std::uint64_t& top, std::uint64_t n) {
  const std::uint64_t at = top;
  top += (n + 63) & ~std::uint64_t{63};
  return at;
}

port::SimLinkConfig impaired_link(double loss, double dup, double reorder, std::uint64_t seed,
                                  TimeNs hold_ns) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  d.bandwidth_bps = 10'000'000'000;
  d.loss = loss;
  d.duplicate = dup;
  d.reorder = reorder;
  d.reorder_hold_ns = hold_ns;
  return port::SimLinkConfig::symmetric(d, seed);
}

struct SoakParams {
  const char* name;
  double loss, dup, reorder;
  std::uint32_t contexts;  // the target's responder contexts (DcTargetLimits)
  std::uint32_t wrs;       // per seed
  // How long a reordered frame is held: 2 ms lets old connections' packets
  // arrive after their contexts were retired.
  TimeNs hold_ns = 10 * kNsPerUs;
};

// gtest names a failing case by this, not by the struct's bytes.
void PrintTo(const SoakParams& p, std::ostream* os) { *os << p.name; }

// A receive that names no SEND (under 8 bytes, no immediate), compared as a
// multiset with what such SENDs carried.
using Anonymous = std::tuple<std::uint32_t, bool, std::uint32_t, std::vector<std::uint8_t>>;

class DcSoak {
 public:
  DcSoak(const SoakParams& p, std::uint64_t seed) : p_(p), seed_(seed), rng_{seed} {}

  void run() {
    plan();
    DcTargetLimits limits;
    limits.contexts = p_.contexts;
    limits.records_log2 = 10;
    limits.stale_ns = 10 * kNsPerSec;
    const std::uint64_t mem =
        (std::max(top_a_, top_b_) + (1 << 20)) & ~std::uint64_t{(1 << 20) - 1};
    s_ = std::make_unique<DcSim>(impaired_link(p_.loss, p_.dup, p_.reorder, seed_, p_.hold_ns), mem,
                                 limits);
    for (std::uint32_t q = 0; q < kDcis; ++q) dcis_.push_back(&s_->add_dci(0x10 + q, 2));
    for (std::uint32_t d = 0; d < kDcts; ++d) s_->add_dct(0x20 + d, DcSim::kKey, kMinRnrTimer);
    // The keys SEND_WITH_INV names are type-2 windows over one MR (only
    // windows are invalidated, mr_table.h).
    int err = 0;
    const std::uint32_t base =
        s_->mrs_b.reg({DcSim::kPd, DcSim::kVa, 64,
                       access::kLocalWrite | access::kRemoteRead | access::kMwBind,
                       s_->mem_b.data()},
                      &err);
    ASSERT_NE(base, 0u) << err;
    for (std::uint32_t k = 0; k < kInvKeys + kControlKeys; ++k) {
      const std::uint32_t mw = s_->mrs_b.alloc_mw(DcSim::kPd, MwType::kType2, &err);
      std::uint32_t key = 0;
      ASSERT_EQ(s_->mrs_b.bind_mw(MwBind{mw, base, mw, DcSim::kVa, 64, access::kRemoteRead},
                                  DcSim::kPd, kWindowQpn, &key),
                MrError::kOk);
      keys_.push_back(key);
    }
    std::memset(s_->mem_b.data() + recv_base_, kCanary, kRecvBufs * kRecvStride);
    for (std::uint32_t b = 0; b < kRecvBufs; ++b) post_buf(b);
    for (std::uint64_t id = 1; id < wrs_.size(); ++id) post(id);

    std::size_t done = 0;
    const bool finished = s_->run(
        [&] {
          take_receives();
          done = s_->scq_a.wc.size();
          return done == wrs_.size() - 1;
        },
        20 * kNsPerSec);
    ASSERT_TRUE(finished) << where() << done << " of " << wrs_.size() - 1 << " completed";
    // Let retransmissions, duplicates and disconnects die out: nothing may
    // complete again.
    s_->run(
        [&] {
          take_receives();
          return false;
        },
        s_->clock.now() + 50 * kNsPerMs);
    check_sends();
    check_receives();
    check_memory();
    EXPECT_EQ(s_->parse_errors, 0u) << where();
    report();
  }

 private:
  std::string where() const {
    return p_.name + std::string(" seed ") + std::to_string(seed_) + ": ";
  }

  void plan() {
    wrs_.resize(1);  // ids start at 1
    fa_word_ = take(top_b_, 8);
    recv_base_ = take(top_b_, kRecvBufs * kRecvStride);
    for (std::uint32_t i = 0; i < p_.wrs; ++i) {
      Planned w{};
      w.kind = pick_kind(rng_);
      w.dci = rng_.below(kDcis);
      w.stream = static_cast<std::uint16_t>(rng_.below(kStreams));
      w.dct = 0x20 + rng_.below(kDcts);
      if (w.kind == Kind::kCas || w.kind == Kind::kFetchAdd) {
        w.len = 8;
        w.a_off = take(top_a_, 8);
        if (w.kind == Kind::kCas) {
          w.b_off = take(top_b_, 8);
          w.old = rng_.next();
          // One in five is built not to match: the word must keep its value.
          w.add_or_compare = rng_.below(5) == 0 ? ~w.old : w.old;
          w.swap = rng_.next();
        } else {
          w.b_off = fa_word_;
          w.add_or_compare = 1 + rng_.below(1000);
        }
      } else {
        w.len = pick_len(rng_, i);
        w.a_off = take(top_a_, w.len);
        if (w.kind == Kind::kWrite || w.kind == Kind::kWriteImm || w.kind == Kind::kRead) {
          w.b_off = take(top_b_, w.len);
        }
        w.inv = rng_.below(kInvKeys);
      }
      wrs_.push_back(w);
    }
  }

  void post(std::uint64_t id) {
    const Planned& w = wrs_[id];
    DcSim& s = *s_;
    SendWr wr =
        s.wr(id, kOpcode[static_cast<int>(w.kind)], w.dct, w.a_off, w.len, w.b_off, w.stream);
    switch (w.kind) {
      case Kind::kRead: fill(s.mem_b.data() + w.b_off, w.len, seed_, id); break;
      case Kind::kCas:
        std::memcpy(s.mem_b.data() + w.b_off, &w.old, 8);
        wr.compare_add = w.add_or_compare;
        wr.swap = w.swap;
        break;
      case Kind::kFetchAdd: wr.compare_add = w.add_or_compare; break;
      case Kind::kSendInv:
        fill(s.mem_a.data() + w.a_off, w.len, seed_, id);
        wr.imm_or_inv = keys_[w.inv];
        break;
      default:
        fill(s.mem_a.data() + w.a_off, w.len, seed_, id);
        wr.imm_or_inv = static_cast<std::uint32_t>(id);
        break;
    }
    if (w.kind == Kind::kSend || w.kind == Kind::kSendInv) {
      if (w.len < 8) {
        std::vector<std::uint8_t> bytes(s.mem_a.begin() + w.a_off,
                                        s.mem_a.begin() + w.a_off + w.len);
        const bool inv = w.kind == Kind::kSendInv;
        expected_anon_.emplace_back(w.dct, inv, inv ? keys_[w.inv] : 0, std::move(bytes));
      }
    }
    ASSERT_EQ(dcis_[w.dci]->post_send(wr), 0) << where() << "wr " << id;
  }

  void post_buf(std::uint32_t b) { s_->post_recv(b, recv_base_ + b * kRecvStride, kMaxMsg); }

  // Checks each new receive against the WR it names, clears its buffer back
  // to the canary and reposts it once kRecvHold has passed.
  void take_receives() {
    DcSim& s = *s_;
    while (recv_seen_ < s.rcq_b.wc.size()) {
      const Cqe c = s.rcq_b.wc[recv_seen_++];
      check_receive(c);
      held_.emplace_back(s.clock.now() + kRecvHold, static_cast<std::uint32_t>(c.wr_id));
    }
    while (!held_.empty() && held_.front().first <= s.clock.now()) {
      post_buf(held_.front().second);
      held_.erase(held_.begin());
    }
  }

  void check_receive(const Cqe& c) {
    DcSim& s = *s_;
    ASSERT_EQ(status(c), WcStatus::kSuccess) << where() << "receive " << c.wr_id;
    ASSERT_LT(c.wr_id, kRecvBufs);
    std::uint8_t* buf = s.mem_b.data() + recv_base_ + c.wr_id * kRecvStride;
    const bool is_send = wc_op(c) == WcOpcode::kRecv;
    const std::uint32_t landed = is_send ? c.byte_len : 0;
    ASSERT_LE(landed, kMaxMsg) << where();
    for (std::uint32_t k = landed; k < landed + kGuard; ++k) {
      ASSERT_EQ(buf[k], kCanary) << where() << "receive wrote past its " << landed << " bytes";
    }
    std::uint64_t id = 0;
    if ((c.wc_flags & wc_flag::kWithImm) != 0) {
      id = c.ex.imm_data;
    } else if (landed >= 8) {
      std::memcpy(&id, buf, 8);
    } else {
      ASSERT_TRUE(is_send) << where() << "WRITE with immediate without its immediate";
      const bool inv = (c.wc_flags & wc_flag::kWithInv) != 0;
      got_anon_.emplace_back(c.qp_num, inv, inv ? c.ex.invalidate_rkey : 0,
                             std::vector<std::uint8_t>(buf, buf + landed));
      std::memset(buf, kCanary, landed);
      return;
    }
    ASSERT_TRUE(id >= 1 && id < wrs_.size()) << where() << "receive names no WR: " << id;
    const Planned& w = wrs_[id];
    ++recvs_[id];
    EXPECT_TRUE(consumes_recv(w.kind)) << where() << "wr " << id;
    EXPECT_EQ(c.qp_num, w.dct) << where() << "wr " << id;
    EXPECT_EQ(c.byte_len, w.len) << where() << "wr " << id;
    EXPECT_EQ(is_send, w.kind != Kind::kWriteImm) << where() << "wr " << id;
    if (w.kind == Kind::kSendInv) {
      EXPECT_NE(c.wc_flags & wc_flag::kWithInv, 0u) << where() << "wr " << id;
      EXPECT_EQ(c.ex.invalidate_rkey, keys_[w.inv]) << where() << "wr " << id;
    } else {
      EXPECT_EQ(c.wc_flags & wc_flag::kWithInv, 0u) << where() << "wr " << id;
    }
    if (is_send && c.byte_len == w.len) {
      EXPECT_EQ(std::memcmp(buf, s.mem_a.data() + w.a_off, w.len), 0) << where() << "wr " << id;
    }
    std::memset(buf, kCanary, landed);
  }

  void check_sends() {
    std::map<std::uint64_t, int> seen;
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint64_t> last;
    EXPECT_EQ(s_->scq_a.wc.size(), wrs_.size() - 1) << where();
    for (const Cqe& c : s_->scq_a.wc) {
      ASSERT_TRUE(c.wr_id >= 1 && c.wr_id < wrs_.size()) << where() << c.wr_id;
      const Planned& w = wrs_[c.wr_id];
      EXPECT_EQ(status(c), WcStatus::kSuccess) << where() << "wr " << c.wr_id;
      EXPECT_EQ(++seen[c.wr_id], 1) << where() << "wr " << c.wr_id << " completed again";
      EXPECT_EQ(wc_op(c), kWcOpcode[static_cast<int>(w.kind)]) << where() << "wr " << c.wr_id;
      EXPECT_EQ(c.qp_num, 0x10 + w.dci) << where() << "wr " << c.wr_id;
      std::uint64_t& prev = last[{w.dci, w.stream}];
      EXPECT_GT(c.wr_id, prev) << where() << "out of stream order: wr " << c.wr_id;
      prev = c.wr_id;
    }
  }

  void check_receives() {
    std::size_t want = 0;
    for (std::uint64_t id = 1; id < wrs_.size(); ++id) {
      const Planned& w = wrs_[id];
      if (!consumes_recv(w.kind)) continue;
      ++want;
      const bool named = w.kind == Kind::kWriteImm || w.kind == Kind::kSendImm || w.len >= 8;
      if (named) {
        EXPECT_EQ(recvs_[id], 1) << where() << "wr " << id << " receives";
      }
    }
    EXPECT_EQ(s_->rcq_b.wc.size(), want) << where();
    auto sorted = [](std::vector<Anonymous> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    EXPECT_TRUE(sorted(got_anon_) == sorted(expected_anon_))
        << where() << got_anon_.size() << " short receives, " << expected_anon_.size()
        << " short SENDs";
  }

  void check_memory() {
    DcSim& s = *s_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> adds;  // (returned, add)
    std::vector<bool> invalidated(kInvKeys, false);
    for (std::uint64_t id = 1; id < wrs_.size(); ++id) {
      const Planned& w = wrs_[id];
      std::uint64_t ret = 0, word = 0;
      if (w.kind == Kind::kCas || w.kind == Kind::kFetchAdd) {
        std::memcpy(&ret, s.mem_a.data() + w.a_off, 8);
        std::memcpy(&word, s.mem_b.data() + w.b_off, 8);
      }
      switch (w.kind) {
        case Kind::kWrite:
        case Kind::kWriteImm:
        case Kind::kRead:
          EXPECT_EQ(std::memcmp(s.mem_a.data() + w.a_off, s.mem_b.data() + w.b_off, w.len), 0)
              << where() << "wr " << id << " (" << w.len << " bytes)";
          break;
        case Kind::kCas:
          EXPECT_EQ(ret, w.old) << where() << "compare-and-swap wr " << id;
          EXPECT_EQ(word, w.add_or_compare == w.old ? w.swap : w.old)
              << where() << "compare-and-swap wr " << id;
          break;
        case Kind::kFetchAdd: adds.emplace_back(ret, w.add_or_compare); break;
        case Kind::kSendInv: invalidated[w.inv] = true; break;
        default: break;
      }
    }
    std::sort(adds.begin(), adds.end());
    std::uint64_t sum = 0;
    for (const auto& [ret, add] : adds) {
      EXPECT_EQ(ret, sum) << where() << "fetch-and-add chain";
      sum += add;
    }
    std::uint64_t v = 0;
    std::memcpy(&v, s.mem_b.data() + fa_word_, 8);
    EXPECT_EQ(v, sum) << where() << "fetch-and-add word";
    for (std::uint32_t k = 0; k < kInvKeys + kControlKeys; ++k) {
      std::uint8_t* host = nullptr;
      const MrError e = s.mrs_b.resolve_remote(keys_[k], DcSim::kPd, kWindowQpn, DcSim::kVa, 8,
                                               access::kRemoteRead, &host);
      const bool want = k < kInvKeys && invalidated[k];
      EXPECT_EQ(e, want ? MrError::kInvalidated : MrError::kOk) << where() << "key " << k;
    }
  }

  void report() const {
    const DcSim& s = *s_;
    std::uint64_t rnr = 0, busy = 0;
    for (const auto& [q, d] : s.dcts) {
      rnr += d->rc_counters().tx_rnr_naks;
      busy += d->counters().tx_busy;
    }
    const DcTargetCounters& t = s.pool->table().counters();
    std::printf(
        "[ dc soak  ] %s seed %llu: %zu WRs, %zu receives, %.1f ms virtual; "
        "opened %llu, retired under pressure %llu, BUSY %llu, RNR NAKs %llu\n",
        p_.name, static_cast<unsigned long long>(seed_), wrs_.size() - 1, s.rcq_b.wc.size(),
        static_cast<double>(s.clock.now()) / kNsPerMs, static_cast<unsigned long long>(t.opened),
        static_cast<unsigned long long>(t.retired_pressure), static_cast<unsigned long long>(busy),
        static_cast<unsigned long long>(rnr));
  }

  const SoakParams p_;
  const std::uint64_t seed_;
  Rng rng_;
  std::unique_ptr<DcSim> s_;
  std::vector<DciQp*> dcis_;
  std::vector<std::uint32_t> keys_;  // invalidatable keys, then the control keys
  std::vector<Planned> wrs_;
  std::uint64_t top_a_ = 0, top_b_ = 0;
  std::uint64_t fa_word_ = 0, recv_base_ = 0;
  std::size_t recv_seen_ = 0;
  std::vector<std::pair<TimeNs, std::uint32_t>> held_;  // (repost at, buffer)
  std::map<std::uint64_t, int> recvs_;
  std::vector<Anonymous> expected_anon_, got_anon_;
};

std::vector<std::uint64_t> seeds() {
  if (const char* e = std::getenv("UROCE_SOAK_SEED"); e != nullptr && *e != 0) {
    return {std::strtoull(e, nullptr, 0)};
  }
  return {1, 2, 3};
}

class DcSoakTest : public ::testing::TestWithParam<SoakParams> {};

TEST_P(DcSoakTest, EveryOpEveryByteExactlyOnce) {
  for (std::uint64_t seed : seeds()) {
    DcSoak soak(GetParam(), seed);
    soak.run();
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Impairments, DcSoakTest,
    ::testing::Values(SoakParams{"clean", 0, 0, 0, 4, 400},
                      SoakParams{"clean_two_contexts", 0, 0, 0, 2, 400},
                      SoakParams{"one_percent", 0.01, 0.01, 0.01, 4, 400},
                      SoakParams{"two_percent_reorder", 0.02, 0.02, 0.05, 4, 400},
                      SoakParams{"ten_percent_two_contexts", 0.1, 0.05, 0.1, 2, 200},
                      SoakParams{"late_duplicates", 0.01, 0.05, 0.2, 4, 400, 2 * kNsPerMs}),
    [](const ::testing::TestParamInfo<SoakParams>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace uroce::transport::dctest
