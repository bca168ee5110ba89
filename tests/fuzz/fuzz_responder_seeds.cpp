// Seed corpus writer of fuzz_responder (fuzz_responder_rig.h):
// `fuzz_responder_seeds corpus DIR` runs normal exchanges between the rig
// and real peer QPs and records what the rig receives, one script per file.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_responder_rig.h"

using namespace uroce;
using namespace uroce::transport;
using namespace uroce::transport::fuzz_responder;

namespace {

constexpr std::uint32_t kPeerUdQpn = 0x35;

// Seed writer: the rig against real peers; what reaches the rig is
// recorded as a script.
struct Script {
  std::vector<std::uint8_t> bytes;
  void frame(std::uint8_t ctrl, const std::vector<std::uint8_t>& f) {
    bytes.push_back(ctrl);
    bytes.push_back(static_cast<std::uint8_t>(f.size()));
    bytes.push_back(static_cast<std::uint8_t>(f.size() >> 8));
    bytes.insert(bytes.end(), f.begin(), f.end());
  }
  void command(std::uint8_t ctrl, std::initializer_list<std::uint8_t> b) {
    frame(static_cast<std::uint8_t>(ctrl | kCommand), std::vector<std::uint8_t>(b));
  }
};

struct NullCq {
  bool push(const Cqe&) { return true; }
};

// An RC peer connected to the rig's RC QP, owning memory of its own.
struct Peer {
  MrTable mrs{4};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 16, 0x5a);
  std::uint32_t key = 0;
  std::unique_ptr<RcQp> qp;
  NullCq cq;
  TimerSlot timer;
  Peer() {
    int err = 0;
    key = mrs.reg({kPd, kPeerVa, mem.size(), access::kLocalWrite | access::kRemoteAny, mem.data()},
                  &err);
    check(key == peer_key(), "peer key as the rig expects");
    RcQpConfig c;
    c.qpn = kPeerRcQpn;
    c.pd = kPd;
    c.local = {kMacPeer, kIpPeer};
    qp = std::make_unique<RcQp>(c, mrs);
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemoteAny;
    qp->modify(kState | kPkeyIndex | kPort | kAccessFlags, a);
    a.qp_state = QpState::kRtr;
    a.av.dmac = kMacRig;
    a.av.dip = kIpRig;
    a.path_mtu = wire::PathMtu::k256;
    a.dest_qp_num = kRcQpn;
    a.rq_psn = kRcSqPsn;
    a.max_dest_rd_atomic = 2;
    qp->modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer, a);
    a.qp_state = QpState::kRts;
    a.sq_psn = kRcRqPsn;
    a.timeout = 10;
    a.retry_cnt = 3;
    a.max_rd_atomic = 2;
    qp->modify(kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic, a);
    // Room for the rig's SEND.
    RecvWr r;
    r.num_sge = 1;
    r.sge[0] = {kPeerVa + 8192, 1024, key};
    qp->post_recv(r);
    qp->post_recv(r);
  }
  SendWr wr(WrOpcode op, std::uint32_t len, std::uint64_t raddr, std::uint32_t rkey) {
    SendWr w;
    w.opcode = op;
    w.num_sge = 1;
    w.sge[0] = {kPeerVa, len, key};
    w.remote_addr = raddr;
    w.rkey = rkey;
    return w;
  }
};

// Runs rig <-> peer until quiet; every frame the rig receives is recorded
// (ctrl: RC target, pump after). `dup_every` > 0 also records each n-th
// frame twice (a duplicate); `reverse` hands each batch to the rig last
// frame first (out of order).
void exchange(Rig& rig, Peer& peer, Script& s, unsigned dup_every, bool reverse = false) {
  std::vector<std::vector<std::uint8_t>> to_peer;
  std::vector<std::vector<std::uint8_t>> to_rig;
  rig.tx.record = &to_peer;
  CheckTx ptx;
  ptx.record = &to_rig;
  unsigned n = 0;
  for (int round = 0; round < 200; ++round) {
    rig.pump();
    auto pio = rc_io(ptx, peer.cq, peer.cq, peer.timer);
    peer.qp->pump_tx(rig.now, pio, 64);
    if (to_peer.empty() && to_rig.empty()) break;
    for (auto& f : to_peer) {
      wire::ParsedPacket p;
      if (wire::parse_roce(f, p) == wire::ParseError::kOk && p.bth.dest_qp() == kPeerRcQpn) {
        peer.qp->on_packet(p, rig.now, pio);
      }
    }
    to_peer.clear();
    std::vector<std::vector<std::uint8_t>> batch;
    batch.swap(to_rig);
    if (reverse) std::reverse(batch.begin(), batch.end());
    for (auto& f : batch) {
      wire::ParsedPacket p;
      if (wire::parse_roce(f, p) != wire::ParseError::kOk) continue;
      s.frame(kPump, f);
      rig.deliver(0, p);
      if (dup_every != 0 && ++n % dup_every == 0) {
        s.frame(kPump, f);
        rig.deliver(0, p);
      }
    }
  }
  rig.tx.record = nullptr;
}

// Frames a UD or UC peer sends to the rig.
std::vector<std::vector<std::uint8_t>> dgram_frames(bool uc) {
  MrTable mrs{2};
  std::vector<std::uint8_t> mem(4096);
  for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<std::uint8_t>(i * 7);
  int err = 0;
  const std::uint32_t key =
      mrs.reg({kPd, 0x8000000, mem.size(), access::kLocalWrite, mem.data()}, &err);
  std::vector<std::vector<std::uint8_t>> out;
  CheckTx tx;
  tx.record = &out;
  NullCq cq;
  auto sge = [&](SendWr& w, std::uint32_t len) {
    w.num_sge = 1;
    w.sge[0] = {0x8000000, len, key};
  };
  if (!uc) {
    UdQpConfig c;
    c.qpn = kPeerUdQpn;
    c.pd = kPd;
    c.local = {kMacPeer, kIpPeer};
    UdQp q(c, mrs);
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qkey = kQkey;
    q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v);
    v.qp_state = QpState::kRtr;
    q.modify(qp_attr::kState, v);
    v.qp_state = QpState::kRts;
    q.modify(qp_attr::kState | qp_attr::kSqPsn, v);
    for (std::uint32_t len : {0u, 64u, 1000u}) {
      SendWr w;
      w.opcode = len == 64 ? WrOpcode::kSendImm : WrOpcode::kSend;
      sge(w, len);
      w.ud = {kMacRig, kIpRig, kUdQpn, kQkey, 0, 64};
      q.post_send(w);
    }
    q.process_send(tx, cq, 16);
  } else {
    UcQpConfig c;
    c.qpn = kPeerUcQpn;
    c.pd = kPd;
    c.local = {kMacPeer, kIpPeer};
    UcQp q(c, mrs);
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kAccessFlags, v);
    v.qp_state = QpState::kRtr;
    v.av = {kMacRig, kIpRig, 0, 64};
    v.path_mtu = wire::PathMtu::k256;
    v.dest_qp_num = kUcQpn;
    v.rq_psn = kUcPsn;
    q.modify(qp_attr::kState | qp_attr::kAv | qp_attr::kPathMtu | qp_attr::kDestQpn |
                 qp_attr::kRqPsn,
             v);
    v.qp_state = QpState::kRts;
    v.sq_psn = kUcPsn;
    q.modify(qp_attr::kState | qp_attr::kSqPsn, v);
    SendWr w;
    w.opcode = WrOpcode::kSend;
    sge(w, 600);
    q.post_send(w);
    w.opcode = WrOpcode::kRdmaWriteImm;
    sge(w, 300);
    w.remote_addr = 0x10000 + 100;
    w.rkey = 1;  // patched below: the rig's keys are known only to the rig
    q.post_send(w);
    w.opcode = WrOpcode::kSendImm;
    sge(w, 0);
    q.post_send(w);
    q.process_send(tx, cq, 64);
  }
  return out;
}

// The DC peer: a DCT (the rig's DCI's target) on a pool of its own, over
// memory the rig's DCI WRs name (peer_key()), and a DCI whose WRs go to
// the rig's DCT.
struct DcPeer {
  MrTable mrs{4};
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 16, 0x5a);
  std::uint32_t key = 0;
  std::unique_ptr<DcTargetPool> pool;
  std::unique_ptr<Srq> srq;
  std::unique_ptr<DctQp> dct;
  DcConnClock clock;
  std::unique_ptr<DciQp> dci;
  NullCq cq;
  TimerSlot timer;
  DcPeer() {
    int err = 0;
    key = mrs.reg({kPd, kPeerVa, mem.size(), access::kLocalWrite | access::kRemoteAny, mem.data()},
                  &err);
    check(key == peer_key(), "peer key as the rig expects");
    DcTargetLimits lim;
    lim.contexts = 64;
    // Selective repeat, as the rig's DC pair: its frames carry the SR flag.
    pool = std::make_unique<DcTargetPool>(lim, mrs, LocalPort{kMacPeer, kIpPeer}, true);
    SrqConfig sc;
    sc.srq_num = 1;
    sc.pd = kPd;
    srq = std::make_unique<Srq>(sc);
    RcQpConfig c;
    c.qpn = kPeerDctQpn;
    c.pd = kPd;
    c.local = {kMacPeer, kIpPeer};
    c.srq = srq.get();
    dct = std::make_unique<DctQp>(c, kDcKey, *pool);
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemoteAny;
    dct->modify(kState | kPkeyIndex | kPort | kAccessFlags, a);
    a.qp_state = QpState::kRtr;
    a.path_mtu = wire::PathMtu::k256;
    dct->modify(kState | kMinRnrTimer | kAv | kPathMtu, a);
    DciQpConfig d;
    d.rc.qpn = kPeerDciQpn;
    d.sr = true;
    d.sr_eth_mtu = 1500;
    d.rc.pd = kPd;
    d.rc.local = {kMacPeer, kIpPeer};
    dci = std::make_unique<DciQp>(d, mrs, clock);
    a = QpAttrValues{};
    a.qp_state = QpState::kInit;
    dci->modify(kState | kPkeyIndex | kPort, a);
    a.qp_state = QpState::kRtr;
    a.path_mtu = wire::PathMtu::k256;
    dci->modify(kState | kPathMtu, a);
    a.qp_state = QpState::kRts;
    a.timeout = 10;
    a.retry_cnt = 3;
    a.rnr_retry = 3;
    a.max_rd_atomic = 2;
    dci->modify(kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic, a);
  }
  // A WR of the peer's DCI to the rig's DCT on `stream`.
  void post(WrOpcode op, std::uint32_t len, std::uint64_t raddr, std::uint32_t rkey,
            std::uint16_t stream, std::uint64_t dc_key) {
    SendWr w;
    w.opcode = op;
    w.num_sge = 1;
    w.sge[0] = {kPeerVa + 8192, len, key};
    w.remote_addr = raddr;
    w.rkey = rkey;
    w.compare_add = 7;
    w.ud.dmac = kMacRig;
    w.ud.dip = kIpRig;
    w.ud.remote_qpn = kDctQpn;
    w.ud.dc_key = dc_key;
    w.ud.dc_stream = stream;
    w.ud.ah_num = 1;
    dci->post_send(w);
  }
};

// The rig's DC pair against a DC peer until quiet; the peer's frames to
// the rig are recorded (the rig routes DC frames by their direction).
void exchange_dc(Rig& rig, DcPeer& peer, Script& s) {
  std::vector<std::vector<std::uint8_t>> to_peer;
  std::vector<std::vector<std::uint8_t>> to_rig;
  rig.tx.record = &to_peer;
  CheckTx ptx;
  ptx.record = &to_rig;
  for (int round = 0; round < 200; ++round) {
    rig.pump();
    auto pio = rc_io(ptx, peer.cq, peer.cq, peer.timer);
    peer.dci->pump_tx(rig.now, pio, 64);
    peer.dct->pump_tx(rig.now, pio, 64);
    if (to_peer.empty() && to_rig.empty()) break;
    for (auto& f : to_peer) {
      wire::ParsedPacket p;
      if (wire::parse_roce(f, p) != wire::ParseError::kOk || p.info == nullptr ||
          p.info->transport != wire::Transport::kDc) {
        continue;
      }
      if (p.info->dir == wire::Direction::kRequest && p.bth.dest_qp() == kPeerDctQpn) {
        peer.dct->on_packet(p, rig.now, pio);
      } else if (p.info->dir != wire::Direction::kRequest && p.bth.dest_qp() == kPeerDciQpn) {
        peer.dci->on_packet(p, rig.now, pio);
      }
    }
    to_peer.clear();
    std::vector<std::vector<std::uint8_t>> batch;
    batch.swap(to_rig);
    for (auto& f : batch) {
      wire::ParsedPacket p;
      if (wire::parse_roce(f, p) != wire::ParseError::kOk) continue;
      s.frame(kPump, f);
      rig.deliver_dc(p);
    }
  }
  rig.tx.record = nullptr;
}

// A selective-repeat peer's packets to the rig's RC QP (docs/lossy.md), as
// the rig expects them from PSN kRcRqPsn on (across the 24-bit wrap): a
// WRITE, two SENDs, a READ and a WRITE with immediate, delivered out of
// order with duplicates, a READ before its turn, one packet beyond the
// window, and a SACK for the rig's own requests.
Script sr_script(const Rig& rig) {
  Script s;
  std::vector<std::uint8_t> data(1024);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 5 + 1);
  auto frame = [&](std::uint8_t op, std::uint32_t off_psn, std::uint32_t rsn, std::uint32_t off,
                   std::uint32_t len, std::uint64_t va, std::uint32_t dma_len) {
    wire::PacketSpec p;
    p.eth_src = kMacPeer;
    p.eth_dst = kMacRig;
    p.ip_src = kIpPeer;
    p.ip_dst = kIpRig;
    p.opcode = op;
    p.dest_qp = kRcQpn;
    // Requests from the rig's expected PSN on; the SACK names the rig's
    // own first request.
    p.psn = op == wire::op::kSrSack ? kRcSqPsn : (kRcRqPsn + off_psn) & 0xffffff;
    p.pmtu = wire::PathMtu::k256;
    p.ack_req = true;
    const wire::OpcodeInfo& i = wire::opcode_info(op);
    if (i.has(wire::ExtHdr::kSrEth)) p.sr_eth = wire::SrEthHdr::make(rsn, off);
    if (i.has(wire::ExtHdr::kReth)) p.reth = wire::RethHdr::make(va, rig.any.key, dma_len);
    if (i.has(wire::ExtHdr::kImmDt)) p.immdt = wire::ImmDtHdr::make(0x0a0b0c0d);
    if (i.has(wire::ExtHdr::kAeth)) p.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
    if (i.has(wire::ExtHdr::kSackEth)) {
      wire::SrSackEthHdr k = wire::SrSackEthHdr::make(0, kRcSqPsn, 256);
      k.set_bit(1);
      p.sack_eth = k;
    }
    if (i.payload) p.payload = std::span<const std::uint8_t>(data.data(), len);
    std::vector<std::uint8_t> f(wire::roce_frame_size(p));
    check(wire::build_roce(p, f) > 0, "SR seed frame builds");
    return f;
  };
  namespace o = wire::op;
  const std::uint64_t va = rig.any.va;
  const std::vector<std::uint8_t> pkts[] = {
      frame(o::kSrWriteFirst, 0, 0, 0, 256, va, 612),  // PSN +0..+2: a WRITE
      frame(o::kSrWriteMiddle, 1, 0, 256, 256, va, 612),
      frame(o::kSrWriteLast, 2, 0, 512, 100, va, 612),
      frame(o::kSrSendFirst, 3, 0, 0, 256, 0, 0),  // +3, +4: SEND into the first WR
      frame(o::kSrSendLast, 4, 0, 256, 44, 0, 0),
      frame(o::kSrSendOnlyImm, 5, 1, 0, 10, 0, 0),            // +5: SEND into the second
      frame(o::kSrReadRequest, 6, 0, 0, 0, va + 1024, 300),   // +6, +7: READ
      frame(o::kSrWriteOnlyImm, 8, 2, 0, 16, va + 2048, 16),  // +8: the third WR
  };
  // Out of order, with duplicates (indices into pkts).
  for (int i : {7, 2, 6, 1, 5, 4, 2, 0, 3, 6, 7, 3}) s.frame(kPump, pkts[i]);
  s.frame(kPump, frame(o::kSrWriteOnly, 300, 0, 0, 8, va, 8));  // beyond the window
  s.frame(kPump, frame(o::kSrSack, 0, 0, 0, 0, 0, 0));
  return s;
}

bool write_file(const std::string& path, const std::vector<std::uint8_t>& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(b.data(), 1, b.size(), f) == b.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "corpus") {
    std::fprintf(stderr, "usage: %s corpus DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[2];
  int files = 0;
  auto emit = [&](const std::string& name, const Script& s) {
    // Each seed must itself run clean through the target.
    run_script(s.bytes.data(), s.bytes.size());
    if (!write_file(dir + "/" + name, s.bytes)) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name.c_str());
      std::exit(1);
    }
    ++files;
  };
  // One RC exchange per operation the peer can send, and one with all of
  // them and duplicates.
  struct Op {
    const char* name;
    WrOpcode op;
    std::uint32_t len;
    int target;  // 0 any, 1 write_only, 2 atomics, 3 read_only
  };
  const Op ops[] = {
      {"rc_send", WrOpcode::kSend, 600, 0},
      {"rc_send_imm", WrOpcode::kSendImm, 0, 0},
      {"rc_write", WrOpcode::kRdmaWrite, 700, 0},
      {"rc_write_small", WrOpcode::kRdmaWrite, 100, 1},
      {"rc_write_imm", WrOpcode::kRdmaWriteImm, 300, 0},
      {"rc_read", WrOpcode::kRdmaRead, 900, 0},
      {"rc_read_ro", WrOpcode::kRdmaRead, 300, 3},
      {"rc_cmp_swap", WrOpcode::kCmpSwap, 8, 2},
      {"rc_fetch_add", WrOpcode::kFetchAdd, 8, 2},
      {"rc_send_inv", WrOpcode::kSendInv, 40, 0},
  };
  for (int all = 0; all < 2; ++all) {
    for (const Op& o : ops) {
      Rig rig;
      Peer peer;
      Script s;
      const Region* t[] = {&rig.any, &rig.write_only, &rig.atomics, &rig.read_only};
      auto post = [&](const Op& x) {
        SendWr w =
            peer.wr(x.op, x.len, t[x.target]->va + (x.target == 2 ? 8 : 0), t[x.target]->key);
        if (x.op == WrOpcode::kSendImm || x.op == WrOpcode::kRdmaWriteImm) {
          w.imm_or_inv = 0x01020304;
        }
        if (x.op == WrOpcode::kSendInv) w.imm_or_inv = rig.inv_key;
        peer.qp->post_send(w);
      };
      if (all == 0) {
        post(o);
      } else {
        for (const Op& x : ops) post(x);
      }
      exchange(rig, peer, s, all == 0 ? 0 : 5);
      // The rig's own four requests were answered: the seed reaches the
      // completer as well as the responder.
      check(rig.rc_scq.completions == 4 && rig.rc->state() == QpState::kRts,
            "seed exchange completes the rig's requests");
      // A late retransmission timeout and a repeat of the whole exchange
      // (every packet now a duplicate).
      s.command(static_cast<std::uint8_t>(7 << kTimeShift | kPump), {3, 1, 2, 1});
      emit(std::string(all == 0 ? o.name : "rc_all") + ".bin", s);
      if (all != 0) break;
    }
  }
  for (int uc = 0; uc < 2; ++uc) {
    Rig rig;
    Script s;
    for (auto& f : dgram_frames(uc != 0)) {
      if (uc != 0) {
        // The UC WRITE must name the rig's region to get past the checks.
        wire::ParsedPacket p;
        if (wire::parse_roce(f, p) == wire::ParseError::kOk && p.has(wire::ExtHdr::kReth)) {
          const std::size_t reth = kBthOffset + wire::BthHdr::kSize;
          wire::RethHdr r = wire::RethHdr::make(p.reth.va(), rig.any.key, p.reth.dma_len());
          r.write(f.data() + reth);
          repair(f, kUcQpn);
        }
      }
      s.frame(static_cast<std::uint8_t>(uc != 0 ? 2 : 1), f);
    }
    emit(uc != 0 ? "uc.bin" : "ud.bin", s);
  }
  // DC: the peer's DCI runs every operation against the rig's DCT (on two
  // streams) while the peer's DCT answers the rig's DCI; then one with a
  // wrong key (KEY_VIOLATION on both sides' paths).
  for (int bad_key = 0; bad_key < 2; ++bad_key) {
    Rig rig;
    DcPeer peer;
    Script s;
    const std::uint64_t key = bad_key != 0 ? kDcKey ^ 1 : kDcKey;
    peer.post(WrOpcode::kRdmaWrite, 700, rig.any.va, rig.any.key, 0, key);
    peer.post(WrOpcode::kSend, 300, 0, 0, 0, key);
    peer.post(WrOpcode::kRdmaRead, 900, rig.any.va, rig.any.key, 1, key);
    peer.post(WrOpcode::kFetchAdd, 8, rig.atomics.va + 8, rig.atomics.key, 1, key);
    peer.post(WrOpcode::kCmpSwap, 8, rig.atomics.va + 16, rig.atomics.key, 0, key);
    exchange_dc(rig, peer, s);
    if (bad_key == 0) {
      check(rig.dci_scq.completions == 3 && rig.dci->state() == QpState::kRts,
            "seed exchange completes the rig's DCI WRs");
    }
    // A late timer (the idle disconnects, retransmissions) and new DCI work.
    s.command(static_cast<std::uint8_t>(7 << kTimeShift | kPump), {8, 1, 2, 3, 4, 1, 0});
    emit(bad_key != 0 ? "dc_bad_key.bin" : "dc.bin", s);
  }
  {
    Rig rig;
    emit("rc_sr.bin", sr_script(rig));
  }
  {
    // Both ends in selective repeat (the rig switched by a command), every
    // operation both ways, each batch out of order: the rig's READ
    // responses are placed out of order (docs/lossy.md "READ responses").
    Rig rig;
    Peer peer;
    RcSr peer_sr;
    peer.qp->set_sr(&peer_sr);
    peer.qp->sr_tx_start();
    Script s;
    const std::uint8_t start[] = {2, 1};
    s.command(0, {2, 1});
    rig.command(start);
    for (const Op& x : ops) {
      const Region* t[] = {&rig.any, &rig.write_only, &rig.atomics, &rig.read_only};
      SendWr w = peer.wr(x.op, x.len, t[x.target]->va + (x.target == 2 ? 8 : 0), t[x.target]->key);
      if (x.op == WrOpcode::kSendInv) w.imm_or_inv = rig.inv_key;
      peer.qp->post_send(w);
    }
    exchange(rig, peer, s, 7, true);
    check(rig.rc_sr.tx_on && rig.rc_sr.ctr.sr_rd_placed > 0,
          "seed exchange places the rig's READ responses out of order");
    s.command(static_cast<std::uint8_t>(7 << kTimeShift | kPump), {3, 1, 2, 1});
    emit("rc_sr_exchange.bin", s);
  }
  Script cmds;
  cmds.command(0, {4, 2, 3, 50, 0, 0, 5, 9});
  cmds.command(kPump, {1});
  cmds.command(kPump, {2});
  cmds.command(0, {5});
  cmds.command(kPump, {0});
  emit("commands.bin", cmds);
  std::printf("wrote %d seed files to %s\n", files, dir.c_str());
  return 0;
}
