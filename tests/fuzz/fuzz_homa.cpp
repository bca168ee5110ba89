// libFuzzer target: the Homa-like scheduler's headers and state machines
// (issue 15; docs/homa.md), the responder fuzzer's companion for what the
// engine adds around the RC transport. One input is a script of records
//   [op][len][len bytes]
// run against a rig: a sender RC QP with the scheduler's sender state
// attached (transport/rc_homa.h: its requester gates long messages and
// sends MLENs), a plain receiver RC QP, and the receiver's GrantScheduler
// fed the way the engine feeds it (MLEN, bytes below the expected PSN).
//
// op % 8: 0 post a SEND or WRITE of a fuzzed length
//         1 pump the sender, deliver its frames (some dropped) to the
//           receiver, pump the receiver's ACKs back
//         2 advance the clock and run the sender's timer
//         3 poll the scheduler; deliver its grants (some dropped)
//         4 a GRANT with fuzzed psn, offset and priority to the sender
//         5 arbitrary bytes read as GRANT, CUTOFFS and MLEN headers; an
//           MLEN with fuzzed length to the scheduler
//         6 drop a message from the scheduler
//         7 move the sender to ERR, or RESET and connect it again
//
// Invariants checked (abort on violation):
//   - every frame either QP emits parses (ICRC included);
//   - the sender never sends a new data packet of a gated message at or
//     beyond the offset granted so far (unless its gate fell back);
//   - the scheduler's grants never pass their message's length, never go
//     back for a message, and what it has granted and not received stays
//     within max_incoming; it tracks at most max_messages;
//   - CUTOFFS headers that pass valid() give levels the sender can use;
//   - at the end, ERR completes every send WR exactly once.
//
// Built with -DUROCE_FUZZ_SEEDS instead: `fuzz_homa_seeds corpus DIR`
// writes a few scripts (a long WRITE granted to its end, with losses).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "datapath/transport/mr_table.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/wire/homa_cutoffs.h"
#include "datapath/wire/homa_grant.h"
#include "datapath/wire/homa_mlen.h"
#include "datapath/wire/parser.h"
#include "sched/grant_scheduler.h"

namespace {

using namespace uroce;
using namespace uroce::transport;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}
void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

constexpr std::uint32_t kSenderQpn = 0x21;
constexpr std::uint32_t kReceiverQpn = 0x42;
constexpr PdHandle kPd = 1;
constexpr std::size_t kMem = 1 << 16;
const wire::MacAddr kMacS{{2, 0, 0, 0, 0, 1}};
const wire::MacAddr kMacR{{2, 0, 0, 0, 0, 2}};
const wire::Ipv4Addr kIpS{0x0a000001};
const wire::Ipv4Addr kIpR{0x0a000002};

struct Tx {
  std::vector<std::uint8_t> buf;
  std::vector<std::vector<std::uint8_t>> out;
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    buf.assign(n, 0);
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) {
    wire::ParsedPacket p;
    check(wire::parse_roce({buf.data(), n}, p) == wire::ParseError::kOk, "emitted frame parses");
    out.emplace_back(buf.begin(), buf.begin() + n);
  }
};

struct Cq {
  std::map<std::uint64_t, bool> open;  // wr_id -> completed
  bool push(const Cqe& c) {
    auto it = open.find(c.wr_id);
    check(it != open.end(), "completion names a posted WR");
    check(!it->second, "WR completed once");
    it->second = true;
    return true;
  }
  bool all_done() const {
    for (const auto& [id, done] : open) {
      if (!done) return false;
    }
    return true;
  }
};

struct Timer {
  TimeNs at = 0;
  void arm(std::uint32_t, TimeNs t) { at = t; }
};

struct Rig {
  MrTable mrs{4};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(kMem, 0x3c);
  std::uint32_t key = 0;
  std::unique_ptr<RcQp> s, r;
  RcHomaTx homa;
  Tx stx, rtx;
  Cq scq, rcq_s, scq_r, rcq;
  Timer st, rt;
  TimeNs now = 1000;
  std::uint64_t next_wr = 1;
  sched::homa::GrantConfig gcfg = [] {
    sched::homa::GrantConfig g;
    g.rtt_bytes = 3000;
    g.unsched_bytes = 2000;
    g.grant_increment = 512;
    g.overcommit = 2;
    g.max_incoming = 6000;
    g.max_messages = 4;
    g.resend_ns = 50'000;
    return g;
  }();
  sched::homa::GrantScheduler sched{gcfg};
  std::vector<sched::homa::Grant> grants;
  std::map<std::uint64_t, std::uint64_t> granted;  // key -> last offset granted
  // The receiver's announced message (as the engine keeps it).
  bool rx_active = false;
  std::uint32_t rx_psn = 0;
  std::uint64_t rx_len = 0, rx_counted = 0;

  Rig() {
    int err = 0;
    key =
        mrs.reg({kPd, 0x100000, kMem, access::kLocalWrite | access::kRemoteAny, mem.data()}, &err);
    check(key != 0, "region registers");
    homa.gate_cfg = {gcfg.unsched_bytes, 200'000, 3};
    homa.peer.cutoffs.levels = 1;
    homa.peer.cutoffs.max_length.fill(UINT64_MAX);
    for (std::uint8_t p = 0; p < 8; ++p) homa.dscp[p] = static_cast<std::uint8_t>(8 * p);
    s = make(kSenderQpn, kMacS, kIpS);
    r = make(kReceiverQpn, kMacR, kIpR);
    connect(*s, kReceiverQpn, kMacR, kIpR, 100, 900);
    connect(*r, kSenderQpn, kMacS, kIpS, 900, 100);
    s->set_homa(&homa);
  }
  std::unique_ptr<RcQp> make(std::uint32_t qpn, const wire::MacAddr& mac, wire::Ipv4Addr ip) {
    RcQpConfig c;
    c.qpn = qpn;
    c.pd = kPd;
    c.local = {mac, ip};
    c.max_send_wr = 8;
    c.max_recv_wr = 8;
    return std::make_unique<RcQp>(c, mrs);
  }
  static void connect(RcQp& q, std::uint32_t dqpn, const wire::MacAddr& dmac, wire::Ipv4Addr dip,
                      std::uint32_t sq_psn, std::uint32_t rq_psn) {
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemoteAny;
    check(q.modify(kState | kPkeyIndex | kPort | kAccessFlags, a) == 0, "INIT");
    a.qp_state = QpState::kRtr;
    a.av.dmac = dmac;
    a.av.dip = dip;
    a.path_mtu = wire::PathMtu::k512;
    a.dest_qp_num = dqpn;
    a.rq_psn = rq_psn;
    a.max_dest_rd_atomic = 2;
    a.min_rnr_timer = 1;
    check(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                   a) == 0,
          "RTR");
    a.qp_state = QpState::kRts;
    a.sq_psn = sq_psn;
    a.timeout = 8;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 2;
    check(q.modify(kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic, a) == 0,
          "RTS");
  }

  void post(std::uint32_t len, bool write) {
    if (write || rcq.open.size() < 64) {
      RecvWr rw;
      rw.wr_id = next_wr++;
      rw.num_sge = 1;
      rw.sge[0] = {0x100000 + kMem / 2, static_cast<std::uint32_t>(kMem / 2), key};
      if (!write && r->post_recv(rw) == 0) rcq.open[rw.wr_id] = false;
    }
    SendWr w;
    w.wr_id = next_wr++;
    w.opcode = write ? WrOpcode::kRdmaWrite : WrOpcode::kSend;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {0x100000, len, key};
    w.remote_addr = 0x100000 + kMem / 2;
    w.rkey = key;
    if (s->post_send(w) == 0) scq.open[w.wr_id] = false;
  }

  // on_data for the announced message; a message the scheduler starts
  // afresh (first seen, or seen again after a drop) has granted nothing yet.
  sched::homa::DataResult track(std::uint64_t len, std::uint64_t bytes) {
    const std::uint64_t key = std::uint64_t{kReceiverQpn} << 24 | rx_psn;
    const std::uint64_t before = sched.counters().messages;
    const auto res = sched.on_data(key, 7, len, bytes, now);
    if (sched.counters().messages != before) granted.erase(key);
    return res;
  }

  // The receiver engine's part: MLEN and the bytes below the expected PSN.
  void count() {
    if (!rx_active) return;
    const std::int32_t pkts = Psn::diff(r->expected_psn(), Psn(rx_psn));
    if (pkts <= 0) return;
    const std::uint64_t bytes = std::min<std::uint64_t>(rx_len, std::uint64_t(pkts) * 512);
    if (bytes <= rx_counted) return;
    const auto res = track(rx_len, bytes - rx_counted);
    rx_counted = bytes;
    if (res != sched::homa::DataResult::kTracked) rx_active = false;
  }
  void mlen(std::uint32_t psn, std::uint64_t len) {
    if (len <= gcfg.unsched_bytes) return;
    if (!rx_active || rx_psn != psn) {
      rx_psn = psn & 0xFFFFFF;
      rx_len = len;
      rx_counted = 0;
    }
    rx_active = track(rx_len, 0) == sched::homa::DataResult::kTracked;
    count();
  }

  // One sender turn to the receiver (drop: bit i drops frame i) and back.
  void exchange(std::uint32_t budget, std::uint64_t drop) {
    // The new packets of the gated message must be granted.
    const Psn high = s->next_psn();
    const bool gated = homa.gated && !homa.gate.fallen_back();
    const std::uint64_t allowed = homa.gate.allowed();
    const std::uint32_t gpsn = homa.gate.psn();
    const std::uint64_t gpkts = (homa.gate.length() + 511) / 512;
    auto sio = rc_io(stx, scq, rcq_s, st);
    s->pump_tx(now, sio, budget);
    unsigned i = 0;
    for (auto& f : stx.out) {
      wire::ParsedPacket p;
      check(wire::parse_roce(f, p) == wire::ParseError::kOk, "sender frame parses");
      const Psn psn(p.bth.psn());
      if (gated && p.info->transport == wire::Transport::kRc &&
          p.info->dir == wire::Direction::kRequest && !psn.before(high) &&
          Psn::forward(Psn(gpsn), psn) < gpkts) {
        check(std::uint64_t{Psn::forward(Psn(gpsn), psn)} * 512 < allowed,
              "a new packet of a gated message only below the granted offset");
      }
      if ((drop >> (i++ % 64) & 1) != 0) continue;
      if (p.info->transport == wire::Transport::kExt) {
        if (p.bth.opcode() == wire::op::kHomaMlen && p.payload.size() >= wire::HomaMlenHdr::kSize) {
          mlen(p.bth.psn(), wire::HomaMlenHdr::read(p.payload.data()).length());
        }
        continue;
      }
      auto rio = rc_io(rtx, scq_r, rcq, rt);
      r->on_packet(p, now, rio);
      count();
    }
    stx.out.clear();
    auto rio = rc_io(rtx, scq_r, rcq, rt);
    r->pump_tx(now, rio, 64);
    for (auto& f : rtx.out) {
      wire::ParsedPacket p;
      check(wire::parse_roce(f, p) == wire::ParseError::kOk, "receiver frame parses");
      s->on_packet(p, now, sio);
    }
    rtx.out.clear();
  }

  void poll_grants(std::uint64_t drop) {
    sched.poll(now, &grants);
    check(sched.tracked() <= gcfg.max_messages, "tracked within max_messages");
    check(sched.outstanding() <= gcfg.max_incoming, "outstanding within max_incoming");
    unsigned i = 0;
    for (const sched::homa::Grant& g : grants) {
      std::uint64_t& last = granted[g.key];
      check(g.offset >= last, "grants never go back");
      last = g.offset;
      if (g.key == (std::uint64_t{kReceiverQpn} << 24 | rx_psn)) {
        check(g.offset <= rx_len, "grant within the message");
      }
      if ((drop >> (i++ % 64) & 1) != 0) continue;
      if (s->homa_grant(static_cast<std::uint32_t>(g.key & 0xFFFFFF), g.offset, g.priority, now)) {
        // The sender has output again.
      }
    }
  }

  void advance(unsigned k) {
    now += (TimeNs{1} << (2 * (k % 10))) * kNsPerUs;
    if (st.at != 0 && st.at <= now) {
      st.at = 0;
      auto sio = rc_io(stx, scq, rcq_s, st);
      s->on_timer(now, sio);
      // A grant timeout asks for the MLEN again (the engine's homa_announce).
      if (homa.announce) {
        homa.announce = false;
        mlen(homa.gate.psn(), homa.gate.length());
      }
    }
    if (rt.at != 0 && rt.at <= now) {
      rt.at = 0;
      auto rio = rc_io(rtx, scq_r, rcq, rt);
      r->on_timer(now, rio);
    }
  }

  void headers(std::span<const std::uint8_t> b) {
    if (b.size() >= wire::HomaCutoffsHdr::kSize) {
      const wire::HomaCutoffsHdr c = wire::HomaCutoffsHdr::read(b.data());
      if (c.valid()) {
        transport::PeerCutoffs pc;
        pc.top_priority = c.top_priority();
        pc.cutoffs.levels = c.levels();
        for (std::uint32_t j = 0; j < 8; ++j) {
          const std::uint32_t m = c.max_length(j);
          pc.cutoffs.max_length[j] =
              m == wire::HomaCutoffsHdr::kAnyLength || j >= c.levels() ? UINT64_MAX : m;
        }
        for (std::uint64_t len : {1ull, 100ull, 5000ull, 1ull << 31}) {
          check(pc.priority_of(len) <= c.top_priority(), "cutoffs give a usable priority");
        }
        homa.peer = pc;
      }
    }
    if (b.size() >= wire::HomaGrantHdr::kSize) {
      const wire::HomaGrantHdr g = wire::HomaGrantHdr::read(b.data());
      s->homa_grant(homa.gate.psn(), g.offset(), g.priority() & 7, now);
    }
    if (b.size() >= wire::HomaMlenHdr::kSize) {
      const wire::HomaMlenHdr m = wire::HomaMlenHdr::read(b.data());
      mlen(homa.gate.psn(), m.length());
    }
  }

  void state(std::span<const std::uint8_t> b) {
    QpAttrValues v;
    if (!b.empty() && b[0] % 2 == 0) {
      v.qp_state = QpState::kErr;
      s->modify(qp_attr::kState, v);
      return;
    }
    v.qp_state = QpState::kReset;
    s->modify(qp_attr::kState, v);
    for (auto& [id, done] : scq.open) done = true;  // RESET completes nothing
    st.at = 0;
    connect(*s, kReceiverQpn, kMacR, kIpR, 100, 900);
  }

  void finish() {
    QpAttrValues v;
    v.qp_state = QpState::kErr;
    s->modify(qp_attr::kState, v);
    auto sio = rc_io(stx, scq, rcq_s, st);
    s->pump_tx(now, sio, 64);
    check(scq.all_done(), "every send WR completes after ERR");
  }
};

std::uint64_t u64(std::span<const std::uint8_t> b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && at + i < b.size(); ++i) v |= std::uint64_t{b[at + i]} << (8 * i);
  return v;
}

void run_script(const std::uint8_t* data, std::size_t size) {
  Rig rig;
  std::size_t pos = 0;
  while (pos + 2 <= size) {
    const std::uint8_t op = data[pos];
    const std::size_t len = std::min<std::size_t>(data[pos + 1], size - pos - 2);
    const std::span<const std::uint8_t> b(data + pos + 2, len);
    pos += 2 + len;
    switch (op % 8) {
      case 0: rig.post(1 + static_cast<std::uint32_t>(u64(b, 0) % 20000), (op & 8) != 0); break;
      case 1: rig.exchange(1 + static_cast<std::uint32_t>(u64(b, 0) % 64), u64(b, 1)); break;
      case 2: rig.advance(static_cast<unsigned>(u64(b, 0))); break;
      case 3: rig.poll_grants(u64(b, 0)); break;
      case 4:
        rig.s->homa_grant(static_cast<std::uint32_t>(u64(b, 0)) & 0xFFFFFF, u64(b, 3) % 40000,
                          static_cast<std::uint8_t>(u64(b, 1) & 7), rig.now);
        break;
      case 5: rig.headers(b); break;
      case 6: rig.sched.drop(std::uint64_t{kReceiverQpn} << 24 | (u64(b, 0) & 0xFFFFFF)); break;
      default: rig.state(b); break;
    }
  }
  rig.finish();
}

}  // namespace

#ifndef UROCE_FUZZ_SEEDS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_script(data, size);
  return 0;
}

#else

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "corpus") {
    std::fprintf(stderr, "usage: %s corpus DIR\n", argv[0]);
    return 2;
  }
  // A long WRITE and a long SEND, exchanged and granted to the end, one
  // with every fifth frame and grant dropped and timers run.
  int files = 0;
  for (int lossy = 0; lossy < 2; ++lossy) {
    for (int write = 0; write < 2; ++write) {
      std::vector<std::uint8_t> s = {static_cast<std::uint8_t>(write != 0 ? 8 : 0), 2, 0x10, 0x27};
      const std::uint8_t drop = lossy != 0 ? 0x10 : 0;
      for (int round = 0; round < 40; ++round) {
        s.insert(s.end(), {1, 9, 63, drop, 0, 0, 0, 0, 0, 0, 0});
        s.insert(s.end(), {3, 8, drop, 0, 0, 0, 0, 0, 0, 0});
        if (lossy != 0) s.insert(s.end(), {2, 1, 4});
      }
      run_script(s.data(), s.size());
      const std::string path = std::string(argv[2]) + "/homa_" + (write != 0 ? "write" : "send") +
                               (lossy != 0 ? "_lossy" : "") + ".bin";
      FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr || std::fwrite(s.data(), 1, s.size(), f) != s.size() ||
          std::fclose(f) != 0) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        return 1;
      }
      ++files;
    }
  }
  std::printf("wrote %d seed files to %s\n", files, argv[2]);
  return 0;
}

#endif
