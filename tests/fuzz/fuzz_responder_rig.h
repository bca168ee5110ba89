// The rig of fuzz_responder, a libFuzzer target: packets into the
// transports' receive paths (issue 3, "bad input"). One input is a script
// of records, each
//   [ctrl][len lo][len hi][len bytes]
// run against a fresh rig: an RC QP in RTS with receive WRs and send WRs
// outstanding (so both its responder and its completer take packets) and
// selective repeat attached (SR opcodes and SACKs, docs/lossy.md), a UD
// QP and a UC QP, and the DC pair (docs/dc.md): a DCT on a small context
// pool (two contexts, four record slots) with an SRQ, and a DCI with two
// errored streams and WRs outstanding, both running selective repeat
// (docs/lossy.md "DC": DC frames with and without the SR flag reach them),
// all over one MR table whose regions
// are heap blocks of exactly their registered length (ASan reports any
// byte the transport touches outside them).
//
// ctrl bits 0-1  target: 0 RC, 1 UD, 2 UC, 3 all three; a frame with a DC
//                opcode (0xE0-0xF8) goes, as the engine routes it, to the
//                DCT when it is a request and to the DCI when a response
//      bit 2     frame as given: no QPN rewrite, no checksum/ICRC repair
//                (otherwise the BTH destination QPN is set to the target's
//                and the IPv4 checksum and ICRC are made valid, so mutations
//                reach the transport rather than the parser's checks)
//      bits 3-5  advance the virtual clock by 4^k us before the record
//                (k = 7: 16 ms, past the RC retransmission timeout)
//      bit 6     after the record, let every QP transmit
//      bit 7     the record is a command, not a frame (see command())
//
// Invariants checked (abort on violation):
//   - every packet an RC, UD or UC QP is given is accounted for: the sum
//     of its counters grows (executed, duplicate, NAKed or dropped by
//     reason); the DC QPs are not held to it (an answer to a closing
//     connection's DISCONNECT changes no counter);
//   - every completion names a WR that was posted to that queue and not yet
//     completed; a successful receive fits its WR;
//   - every frame a QP emits parses as valid RoCEv2 (ICRC included);
//   - regions the QPs may not write (remote-read-only, another PD) keep
//     their bytes;
//   - at the end, moving every QP to ERR completes every WR still queued,
//     exactly once (the DCT's receives stay in its SRQ, as verbs has it).
//
// This header is the rig and the script runner, shared by the fuzz target
// (fuzz_responder.cpp) and its seed writer (fuzz_responder_seeds.cpp).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "datapath/transport/dci_qp.h"
#include "datapath/transport/dct_qp.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/srq.h"
#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"

namespace uroce::transport::fuzz_responder {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

inline constexpr std::uint32_t kRcQpn = 0x12;
inline constexpr std::uint32_t kUdQpn = 0x13;
inline constexpr std::uint32_t kUcQpn = 0x14;
inline constexpr std::uint32_t kDctQpn = 0x15;
inline constexpr std::uint32_t kDciQpn = 0x16;
inline constexpr std::uint32_t kPeerRcQpn = 0x34;
inline constexpr std::uint32_t kPeerDctQpn = 0x37;
inline constexpr std::uint32_t kPeerDciQpn = 0x38;
inline constexpr std::uint64_t kDcKey = 0xdc0000000000dc01ull;
inline constexpr std::uint32_t kPeerUcQpn = 0x36;
inline constexpr std::uint32_t kQkey = 0x11111111;
inline constexpr std::uint32_t kRcRqPsn = 0xfffff0;  // close to the 24-bit wrap
inline constexpr std::uint32_t kRcSqPsn = 0x200;
inline constexpr std::uint32_t kUcPsn = 0x40;
inline constexpr PdHandle kPd = 1;
inline constexpr PdHandle kOtherPd = 2;
inline const wire::MacAddr kMacRig{{2, 0, 0, 0, 0, 1}};
inline const wire::MacAddr kMacPeer{{2, 0, 0, 0, 0, 2}};
inline const wire::Ipv4Addr kIpRig{0x0a000001};
inline const wire::Ipv4Addr kIpPeer{0x0a000002};

// The peer's memory in the seed exchanges: the key a fresh MR table gives
// its first region, so the rig's own requests can name it.
inline constexpr std::uint64_t kPeerVa = 0x7000000;
inline std::uint32_t peer_key() {
  static const std::uint32_t key = [] {
    MrTable t{4};
    std::uint8_t b = 0;
    int err = 0;
    return t.reg({kPd, kPeerVa, 1, access::kLocalWrite, &b}, &err);
  }();
  return key;
}

// A registered region in its own exactly-sized heap block.
struct Region {
  Region(MrTable& mrs, PdHandle pd, std::uint64_t iova, std::size_t len, std::uint32_t acc,
         std::uint8_t fill)
      : bytes(static_cast<std::uint8_t*>(std::malloc(len))), size(len), va(iova) {
    std::memset(bytes, fill, len);
    int err = 0;
    key = mrs.reg({pd, iova, len, acc, bytes}, &err);
    check(key != 0, "region registers");
  }
  ~Region() { std::free(bytes); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  std::uint8_t* bytes;
  std::size_t size;
  std::uint64_t va;
  std::uint32_t key = 0;
};

// TX sink: a buffer of exactly the requested size; every committed frame
// must parse.
struct CheckTx {
  std::vector<std::uint8_t> buf;
  std::vector<std::vector<std::uint8_t>>* record = nullptr;
  std::uint64_t frames = 0;
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    buf.assign(n, 0);
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) {
    check(n <= buf.size(), "commit within the allocation");
    wire::ParsedPacket p;
    check(wire::parse_roce({buf.data(), n}, p) == wire::ParseError::kOk, "emitted frame parses");
    ++frames;
    if (record != nullptr) record->emplace_back(buf.begin(), buf.begin() + n);
  }
};

// CQ sink that checks each completion against the WRs posted to its queue.
struct CheckCq {
  struct Posted {
    std::uint64_t wr_id;
    std::uint64_t cap;  // receive capacity
    bool done;
  };
  std::vector<Posted> posted;
  std::uint64_t completions = 0;
  bool recv = false;
  std::uint32_t grh = 0;  // bytes a UD receive adds before the payload

  void add(std::uint64_t wr_id, std::uint64_t cap = 0) { posted.push_back({wr_id, cap, false}); }
  bool push(const Cqe& c) {
    Posted* w = nullptr;
    for (Posted& p : posted) {
      if (p.wr_id == c.wr_id) w = &p;
    }
    check(w != nullptr, "completion names a posted WR");
    check(!w->done, "WR completed once");
    w->done = true;
    if (recv && static_cast<WcStatus>(c.status) == WcStatus::kSuccess &&
        static_cast<WcOpcode>(c.opcode) == WcOpcode::kRecv) {
      check(c.byte_len <= w->cap, "received bytes fit the WR");
    }
    ++completions;
    return true;
  }
  // Queued WRs vanish without completions when the QP goes to RESET.
  void discard_open() {
    for (Posted& p : posted) p.done = true;
  }
  std::uint64_t open() const {
    std::uint64_t n = 0;
    for (const Posted& p : posted) n += p.done ? 0 : 1;
    return n;
  }
};

struct TimerSlot {
  TimeNs at = 0;
  void arm(std::uint32_t, TimeNs t) { at = t; }
};

template <class C>
std::uint64_t counter_sum(const C& c) {
  static_assert(sizeof(C) % sizeof(std::uint64_t) == 0);
  std::uint64_t v[sizeof(C) / sizeof(std::uint64_t)];
  std::memcpy(v, &c, sizeof(C));
  std::uint64_t s = 0;
  for (std::uint64_t x : v) s += x;
  return s;
}

// The QPs under test, their memory and their sinks.
struct Rig {
  MrTable mrs{32};
  // Remote-accessible memory of the RC/UC responder.
  Region any{mrs, kPd, 0x10000, 4097, access::kLocalWrite | access::kRemoteAny, 0x11};
  Region write_only{mrs,
                    kPd,
                    0x20000,
                    100,
                    access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
                    0x22};
  Region atomics{mrs, kPd, 0x30000, 64, access::kLocalWrite | access::kRemoteAtomic, 0};
  Region read_only{mrs, kPd, 0x40000, 300, access::kRemoteRead, 0x44};
  Region other_pd{mrs, kOtherPd, 0x50000, 256, access::kLocalWrite | access::kRemoteAny, 0x55};
  // Local memory: receive buffers, the requester's sources and results.
  Region rc_recv{mrs, kPd, 0x60000, 3000, access::kLocalWrite, 0x66};
  Region local{mrs, kPd, 0x70000, 2048, access::kLocalWrite, 0x77};
  Region ud_recv{mrs, kPd, 0x80000, 1300, access::kLocalWrite, 0x88};
  Region uc_recv{mrs, kPd, 0x90000, 1500, access::kLocalWrite, 0x99};

  std::unique_ptr<RcQp> rc;
  RcSr rc_sr;
  std::unique_ptr<UdQp> ud;
  std::unique_ptr<UcQp> uc;
  // The DC pair: the target's pool, SRQ and DCT, and an initiator.
  std::unique_ptr<DcTargetPool> pool;
  std::unique_ptr<Srq> srq;
  std::unique_ptr<DctQp> dct;
  DcConnClock dc_clock;
  std::unique_ptr<DciQp> dci;
  CheckTx tx;
  CheckCq rc_scq, rc_rcq, ud_scq, ud_rcq, uc_scq, uc_rcq, dct_rcq, dci_scq, dc_none;
  TimerSlot timer, dci_timer, dct_timer;
  TimeNs now = 1000;
  std::uint64_t next_wr = 1;

  // A type-2 window over write_only, bound on the RC QP: what a peer's
  // SEND_WITH_INVALIDATE may invalidate (only such windows can be).
  std::uint32_t inv_key = 0;

  Rig() {
    rc_rcq.recv = ud_rcq.recv = uc_rcq.recv = true;
    int mw_err = 0;
    const std::uint32_t mw = mrs.alloc_mw(kPd, MwType::kType2, &mw_err);
    check(mw != 0 &&
              mrs.bind_mw(MwBind{mw, write_only.key, mw, write_only.va, 100, access::kRemoteWrite},
                          kPd, kRcQpn, &inv_key) == MrError::kOk,
          "type-2 window binds");
    RcQpConfig rcfg;
    rcfg.qpn = kRcQpn;
    rcfg.pd = kPd;
    rcfg.local = {kMacRig, kIpRig};
    rcfg.max_send_wr = 8;
    rcfg.max_recv_wr = 8;
    rcfg.max_rd_atomic = 2;
    rcfg.max_dest_rd_atomic = 2;
    rc = std::make_unique<RcQp>(rcfg, mrs);
    rc->set_sr(&rc_sr);
    connect_rc();
    post_rc_work();

    UdQpConfig ucfg;
    ucfg.qpn = kUdQpn;
    ucfg.pd = kPd;
    ucfg.local = {kMacRig, kIpRig};
    ucfg.max_send_wr = 4;
    ucfg.max_recv_wr = 4;
    ud = std::make_unique<UdQp>(ucfg, mrs);
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qkey = kQkey;
    check(ud->modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v) ==
              0,
          "UD to INIT");
    v.qp_state = QpState::kRtr;
    check(ud->modify(qp_attr::kState, v) == 0, "UD to RTR");
    v.qp_state = QpState::kRts;
    v.sq_psn = 5;
    check(ud->modify(qp_attr::kState | qp_attr::kSqPsn, v) == 0, "UD to RTS");
    post_recv_ud(0, 40 + 1024);
    post_recv_ud(1100, 200);  // too short for most datagrams: LOC_LEN_ERR

    UcQpConfig ccfg;
    ccfg.qpn = kUcQpn;
    ccfg.pd = kPd;
    ccfg.local = {kMacRig, kIpRig};
    ccfg.max_send_wr = 4;
    ccfg.max_recv_wr = 4;
    uc = std::make_unique<UcQp>(ccfg, mrs);
    QpAttrValues c;
    c.qp_state = QpState::kInit;
    c.qp_access_flags = access::kRemoteWrite;
    check(uc->modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kAccessFlags,
                     c) == 0,
          "UC to INIT");
    c.qp_state = QpState::kRtr;
    c.av = {kMacPeer, kIpPeer, 0, 64};
    c.path_mtu = wire::PathMtu::k256;
    c.dest_qp_num = kPeerUcQpn;
    c.rq_psn = kUcPsn;
    check(uc->modify(qp_attr::kState | qp_attr::kAv | qp_attr::kPathMtu | qp_attr::kDestQpn |
                         qp_attr::kRqPsn,
                     c) == 0,
          "UC to RTR");
    c.qp_state = QpState::kRts;
    c.sq_psn = kUcPsn;
    check(uc->modify(qp_attr::kState | qp_attr::kSqPsn, c) == 0, "UC to RTS");
    post_recv_uc(0, 700);
    post_recv_uc(700, 800);
    make_dc();
  }

  // The DCT (key kDcKey) on a pool small enough that its table fills and
  // its records are overwritten, receives in its SRQ; the DCI with two
  // errored streams and WRs for the peer's DCT on both.
  void make_dc() {
    dct_rcq.recv = true;
    DcTargetLimits lim;
    lim.contexts = 2;
    lim.records_log2 = 2;
    lim.stale_ns = 50 * kNsPerMs;
    pool = std::make_unique<DcTargetPool>(lim, mrs, LocalPort{kMacRig, kIpRig}, true);
    SrqConfig sc;
    sc.srq_num = 1;
    sc.pd = kPd;
    sc.max_wr = 8;
    srq = std::make_unique<Srq>(sc);
    RcQpConfig c;
    c.qpn = kDctQpn;
    c.pd = kPd;
    c.local = {kMacRig, kIpRig};
    c.srq = srq.get();
    c.max_dest_rd_atomic = 2;
    dct = std::make_unique<DctQp>(c, kDcKey, *pool);
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemoteAny;
    check(dct->modify(kState | kPkeyIndex | kPort | kAccessFlags, a) == 0, "DCT to INIT");
    a.qp_state = QpState::kRtr;
    a.min_rnr_timer = 1;
    a.path_mtu = wire::PathMtu::k256;
    check(dct->modify(kState | kMinRnrTimer | kAv | kPathMtu, a) == 0, "DCT to RTR");
    post_recv_dct(0, 500);
    post_recv_dct(500, 100);

    DciQpConfig d;
    d.rc.qpn = kDciQpn;
    d.rc.pd = kPd;
    d.rc.local = {kMacRig, kIpRig};
    d.rc.max_send_wr = 8;
    d.log_streams = 1;
    d.log_errored = 1;
    d.sr = true;
    d.sr_eth_mtu = 1500;
    dci = std::make_unique<DciQp>(d, mrs, dc_clock);
    connect_dci();
    post_dci_work();
  }

  void connect_dci() {
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    check(dci->modify(kState | kPkeyIndex | kPort, a) == 0, "DCI to INIT");
    a.qp_state = QpState::kRtr;
    a.path_mtu = wire::PathMtu::k256;
    check(dci->modify(kState | kPathMtu, a) == 0, "DCI to RTR");
    a.qp_state = QpState::kRts;
    a.timeout = 10;
    a.retry_cnt = 2;
    a.rnr_retry = 2;
    a.max_rd_atomic = 2;
    check(dci->modify(kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic, a) == 0,
          "DCI to RTS");
  }

  void post_recv_dct(std::uint64_t off, std::uint32_t len) {
    RecvWr r;
    r.wr_id = next_wr++;
    r.num_sge = 1;
    r.sge[0] = {rc_recv.va + off, len, rc_recv.key};
    if (srq->post_recv(r) == 0) dct_rcq.add(r.wr_id, len);
  }
  // A DCI WR to the peer's DCT (the peer's key unless `key` is given).
  void post_send_dci(SendWr w, std::uint16_t stream, std::uint32_t dctn = kPeerDctQpn,
                     std::uint64_t key = kDcKey) {
    w.wr_id = next_wr++;
    w.flags |= send_flag::kSignaled;
    w.ud.dmac = kMacPeer;
    w.ud.dip = kIpPeer;
    w.ud.remote_qpn = dctn;
    w.ud.dc_key = key;
    w.ud.dc_stream = stream;
    w.ud.ah_num = 1;
    if (dci->post_send(w) == 0) dci_scq.add(w.wr_id);
  }
  // A WRITE and a fetch-and-add on stream 0, a READ on stream 1.
  void post_dci_work() {
    SendWr w;
    w.opcode = WrOpcode::kRdmaWrite;
    w.num_sge = 1;
    w.sge[0] = {local.va, 500, local.key};
    w.remote_addr = kPeerVa;
    w.rkey = peer_key();
    post_send_dci(w, 0);
    w.opcode = WrOpcode::kFetchAdd;
    w.sge[0] = {local.va + 1700, 8, local.key};
    w.remote_addr = kPeerVa + 4096;
    w.compare_add = 5;
    post_send_dci(w, 0);
    w = SendWr{};
    w.opcode = WrOpcode::kRdmaRead;
    w.num_sge = 1;
    w.sge[0] = {local.va + 1800, 200, local.key};
    w.remote_addr = kPeerVa + 2000;
    w.rkey = peer_key();
    post_send_dci(w, 1);
  }

  auto dci_io() { return rc_io(tx, dci_scq, dc_none, dci_timer); }
  auto dct_io() { return rc_io(tx, dc_none, dct_rcq, dct_timer); }

  void deliver_dc(const wire::ParsedPacket& p) {
    if (p.info->dir == wire::Direction::kRequest) {
      auto i = dct_io();
      dct->on_packet(p, now, i);
    } else {
      auto i = dci_io();
      dci->on_packet(p, now, i);
    }
  }

  void connect_rc() {
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemoteAny;
    check(rc->modify(kState | kPkeyIndex | kPort | kAccessFlags, a) == 0, "RC to INIT");
    a.qp_state = QpState::kRtr;
    a.av.dmac = kMacPeer;
    a.av.dip = kIpPeer;
    a.path_mtu = wire::PathMtu::k256;
    a.dest_qp_num = kPeerRcQpn;
    a.rq_psn = kRcRqPsn;
    a.max_dest_rd_atomic = 2;
    a.min_rnr_timer = 1;
    check(rc->modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                     a) == 0,
          "RC to RTR");
    a.qp_state = QpState::kRts;
    a.sq_psn = kRcSqPsn;
    a.timeout = 10;
    a.retry_cnt = 2;
    a.rnr_retry = 2;
    a.max_rd_atomic = 2;
    check(rc->modify(kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic, a) == 0,
          "RC to RTS");
  }

  void post_recv_rc(std::uint64_t off, std::uint32_t len, std::uint32_t sges) {
    RecvWr r;
    r.wr_id = next_wr++;
    r.num_sge = sges;
    std::uint64_t cap = 0;
    for (std::uint32_t i = 0; i < sges; ++i) {
      r.sge[i] = {rc_recv.va + off + i * (len + 16), len, rc_recv.key};
      cap += len;
    }
    if (rc->post_recv(r) == 0) rc_rcq.add(r.wr_id, cap);
  }
  void post_recv_ud(std::uint64_t off, std::uint32_t len) {
    RecvWr r;
    r.wr_id = next_wr++;
    r.num_sge = 1;
    r.sge[0] = {ud_recv.va + off, len, ud_recv.key};
    if (ud->post_recv(r) == 0) ud_rcq.add(r.wr_id, len);
  }
  void post_recv_uc(std::uint64_t off, std::uint32_t len) {
    RecvWr r;
    r.wr_id = next_wr++;
    r.num_sge = 1;
    r.sge[0] = {uc_recv.va + off, len, uc_recv.key};
    if (uc->post_recv(r) == 0) uc_rcq.add(r.wr_id, len);
  }
  void post_send_rc(SendWr w) {
    w.wr_id = next_wr++;
    w.flags |= send_flag::kSignaled;
    if (rc->post_send(w) == 0) rc_scq.add(w.wr_id);
  }

  // Receive WRs for the peer's SENDs, and the rig's own requests (the
  // peer's responses to them exercise the completer).
  void post_rc_work() {
    post_recv_rc(0, 1000, 1);
    post_recv_rc(1000, 300, 2);
    post_recv_rc(2000, 200, 4);
    SendWr w;
    w.opcode = WrOpcode::kRdmaWrite;
    w.num_sge = 1;
    w.sge[0] = {local.va, 600, local.key};
    w.remote_addr = kPeerVa;
    w.rkey = peer_key();
    post_send_rc(w);
    w = SendWr{};
    w.opcode = WrOpcode::kRdmaRead;
    w.num_sge = 2;
    w.sge[0] = {local.va + 700, 400, local.key};
    w.sge[1] = {local.va + 1200, 300, local.key};
    w.remote_addr = kPeerVa + 1000;
    w.rkey = peer_key();
    post_send_rc(w);
    w = SendWr{};
    w.opcode = WrOpcode::kFetchAdd;
    w.num_sge = 1;
    w.sge[0] = {local.va + 1600, 8, local.key};
    w.remote_addr = kPeerVa + 4096;
    w.rkey = peer_key();
    w.compare_add = 3;
    post_send_rc(w);
    w = SendWr{};
    w.opcode = WrOpcode::kSend;
    w.flags = send_flag::kInline;
    w.inline_len = 10;
    post_send_rc(w);
  }

  auto io() { return rc_io(tx, rc_scq, rc_rcq, timer); }

  void pump() {
    auto i = io();
    rc->pump_tx(now, i, 64);
    ud->process_send(tx, ud_scq, 8);
    uc->process_send(tx, uc_scq, 64);
    auto d = dci_io();
    dci->pump_tx(now, d, 64);
    auto t = dct_io();
    dct->pump_tx(now, t, 64);
  }

  void advance(unsigned k) {
    if (k != 0) now += (TimeNs{1} << (2 * k)) * kNsPerUs;
    if (timer.at != 0 && timer.at <= now) {
      timer.at = 0;
      auto i = io();
      rc->on_timer(now, i);
    }
    if (dci_timer.at != 0 && dci_timer.at <= now) {
      dci_timer.at = 0;
      auto i = dci_io();
      dci->on_timer(now, i);
    }
  }

  void deliver(unsigned target, const wire::ParsedPacket& p) {
    if (target == 0 || target == 3) {
      const std::uint64_t before = counter_sum(rc->counters()) + counter_sum(rc_sr.ctr);
      auto i = io();
      rc->on_packet(p, now, i);
      check(counter_sum(rc->counters()) + counter_sum(rc_sr.ctr) > before,
            "RC packet accounted for");
    }
    if (target == 1 || target == 3) {
      const std::uint64_t before = counter_sum(ud->counters());
      ud->on_packet(p, ud_rcq);
      check(counter_sum(ud->counters()) > before, "UD packet accounted for");
    }
    if (target == 2 || target == 3) {
      const std::uint64_t before = counter_sum(uc->counters());
      uc->on_packet(p, uc_rcq);
      check(counter_sum(uc->counters()) > before, "UC packet accounted for");
    }
  }

  // State changes and WRs the fuzzer may interleave with packets.
  void command(std::span<const std::uint8_t> b) {
    if (b.empty()) return;
    auto byte = [&](std::size_t i) -> std::uint32_t { return i < b.size() ? b[i] : 0; };
    QpAttrValues v;
    switch (b[0] % 10) {
      case 0:
        v.qp_state = QpState::kErr;
        rc->modify(qp_attr::kState, v);
        break;
      case 1:
        v.qp_state = QpState::kSqd;
        rc->modify(qp_attr::kState, v);
        break;
      case 2:
        v.qp_state = QpState::kRts;
        rc->modify(qp_attr::kState, v);
        // The peer answered the selective-repeat handshake (docs/lossy.md):
        // the rig's requester switches once its started WQEs completed.
        if ((byte(1) & 1) != 0) rc->sr_tx_start();
        break;
      case 3: post_recv_rc(byte(1) * 8, 1 + byte(2) * 4, 1 + byte(3) % 3); break;
      case 4: {
        // A send WR with fuzzer-chosen local and remote addresses.
        SendWr w;
        static constexpr WrOpcode kOps[] = {WrOpcode::kSend,      WrOpcode::kSendImm,
                                            WrOpcode::kRdmaWrite, WrOpcode::kRdmaWriteImm,
                                            WrOpcode::kRdmaRead,  WrOpcode::kCmpSwap,
                                            WrOpcode::kFetchAdd,  WrOpcode::kSendInv};
        w.opcode = kOps[byte(1) % 8];
        w.num_sge = 1;
        const std::uint32_t keys[] = {local.key, any.key, read_only.key, byte(4)};
        w.sge[0] = {local.va + byte(2) * 8, byte(3) * 9, keys[byte(5) % 4]};
        if (w.opcode == WrOpcode::kCmpSwap || w.opcode == WrOpcode::kFetchAdd) {
          w.sge[0].length = 8;
        }
        w.remote_addr = 0x10000 + byte(6) * 64;
        w.rkey = any.key;
        w.imm_or_inv = byte(7);
        post_send_rc(w);
        break;
      }
      case 5:
        // RESET, then a fresh connection with fresh WRs.
        v.qp_state = QpState::kReset;
        rc->modify(qp_attr::kState, v);
        rc_scq.discard_open();
        rc_rcq.discard_open();
        timer.at = 0;
        connect_rc();
        post_rc_work();
        break;
      case 6:
        post_recv_ud(byte(1) * 4, byte(2) * 5);
        post_recv_uc(byte(3) * 4, byte(4) * 5);
        break;
      case 7:
        v.qp_state = QpState::kErr;
        ud->modify(qp_attr::kState, v);
        uc->modify(qp_attr::kState, v);
        break;
      case 8: {
        // A DCI WR: fuzzer-chosen operation, stream (one the DCI lacks
        // too), target (another DCT: a switch) and key (a wrong one).
        SendWr w;
        static constexpr WrOpcode kOps[] = {WrOpcode::kSend, WrOpcode::kRdmaWrite,
                                            WrOpcode::kRdmaRead, WrOpcode::kFetchAdd};
        w.opcode = kOps[byte(1) % 4];
        w.num_sge = 1;
        w.sge[0] = {local.va + byte(2) * 4, w.opcode == WrOpcode::kFetchAdd ? 8 : byte(3) * 7,
                    local.key};
        w.remote_addr = kPeerVa + byte(4) * 16;
        w.rkey = peer_key();
        post_send_dci(w, static_cast<std::uint16_t>(byte(5) % 3),
                      (byte(6) & 1) != 0 ? kPeerDctQpn + 1 : kPeerDctQpn,
                      (byte(6) & 2) != 0 ? kDcKey ^ 1 : kDcKey);
        break;
      }
      default:
        switch (byte(1) % 4) {
          case 0:
            v.qp_state = QpState::kErr;
            dci->modify(qp_attr::kState, v);
            break;
          case 1:
            // RESET, then up again with fresh WRs.
            v.qp_state = QpState::kReset;
            dci->modify(qp_attr::kState, v);
            dci_scq.discard_open();
            dci_timer.at = 0;
            connect_dci();
            post_dci_work();
            break;
          case 2:
            // Out of RTR the DCT's contexts go; back to RTR through RESET.
            v.qp_state = QpState::kErr;
            dct->modify(qp_attr::kState, v);
            v.qp_state = QpState::kReset;
            dct->modify(qp_attr::kState, v);
            v.qp_state = QpState::kInit;
            v.qp_access_flags = access::kRemoteAny;
            dct->modify(qp_attr::kState | qp_attr::kAccessFlags, v);
            v.qp_state = QpState::kRtr;
            dct->modify(qp_attr::kState | qp_attr::kMinRnrTimer, v);
            break;
          default: post_recv_dct(byte(2) * 8, byte(3) * 5); break;
        }
        break;
    }
  }

  // Every QP to ERR; everything still queued must complete exactly once.
  void finish() {
    QpAttrValues v;
    v.qp_state = QpState::kErr;
    rc->modify(qp_attr::kState, v);
    ud->modify(qp_attr::kState, v);
    uc->modify(qp_attr::kState, v);
    dci->modify(qp_attr::kState, v);
    dct->modify(qp_attr::kState, v);
    auto i = io();
    rc->pump_tx(now, i, 64);
    ud->flush(ud_scq, ud_rcq);
    uc->flush(uc_scq, uc_rcq);
    dci->flush(dci_scq, dc_none);
    check(dc_none.completions == 0, "DC QPs complete nothing on their missing queues");
    for (const CheckCq* q : {&rc_scq, &rc_rcq, &ud_scq, &ud_rcq, &uc_scq, &uc_rcq, &dci_scq}) {
      check(q->open() == 0, "every WR completes after ERR");
    }
  }

  void check_untouched() const {
    for (std::size_t i = 0; i < read_only.size; ++i) {
      check(read_only.bytes[i] == 0x44, "read-only region unchanged");
    }
    for (std::size_t i = 0; i < other_pd.size; ++i) {
      check(other_pd.bytes[i] == 0x55, "other PD's region unchanged");
    }
  }
};

// BTH destination QPN offset in an IPv4 RoCEv2 frame.
inline constexpr std::size_t kBthOffset =
    wire::EthHdr::kSize + wire::Ipv4Hdr::kSize + wire::UdpHdr::kSize;

// Rewrites the destination QPN and makes the IPv4 checksum and ICRC valid
// where the lengths allow.
inline void repair(std::span<std::uint8_t> f, std::uint32_t qpn) {
  if (f.size() >= kBthOffset + wire::BthHdr::kSize) {
    wire::BthHdr bth = wire::BthHdr::read(f.data() + kBthOffset);
    bth.set_dest_qp(qpn);
    bth.write(f.data() + kBthOffset);
  }
  constexpr std::size_t kIp = wire::EthHdr::kSize;
  if (f.size() < kIp + wire::kIcrcMaskedPrefix + wire::kIcrcSize) return;
  wire::Ipv4Hdr ip = wire::Ipv4Hdr::read(f.data() + kIp);
  ip.fill_checksum();
  ip.write(f.data() + kIp);
  const std::size_t ip_len = ip.total_length();
  if (ip_len >= wire::kIcrcMaskedPrefix + wire::kIcrcSize && ip_len <= f.size() - kIp) {
    wire::write_icrc(f.subspan(kIp, ip_len));
  }
}

inline constexpr std::uint8_t kTargetMask = 0x03;
inline constexpr std::uint8_t kAsIs = 0x04;
inline constexpr unsigned kTimeShift = 3;
inline constexpr std::uint8_t kPump = 0x40;
inline constexpr std::uint8_t kCommand = 0x80;

inline void run_script(const std::uint8_t* data, std::size_t size) {
  Rig rig;
  std::size_t pos = 0;
  while (pos + 3 <= size) {
    const std::uint8_t ctrl = data[pos];
    std::size_t len = data[pos + 1] | (std::size_t{data[pos + 2]} << 8);
    pos += 3;
    len = std::min(len, size - pos);
    const std::uint8_t* body = data + pos;
    pos += len;
    rig.advance((ctrl >> kTimeShift) & 7);
    if ((ctrl & kCommand) != 0) {
      rig.command({body, len});
    } else if (len != 0) {
      // A heap copy of exactly the frame, so over-reads are caught.
      std::unique_ptr<std::uint8_t[]> frame(new std::uint8_t[len]);
      std::memcpy(frame.get(), body, len);
      const std::span<std::uint8_t> f(frame.get(), len);
      const unsigned target = ctrl & kTargetMask;
      // A DC opcode goes to the DC QP of its direction (the engine's
      // routing, docs/dc.md "In the engine").
      const std::uint8_t op = len > kBthOffset ? frame[kBthOffset] : 0;
      const bool dc = wire::is_dc_opcode(op);
      if ((ctrl & kAsIs) == 0) {
        static constexpr std::uint32_t kQpns[] = {kRcQpn, kUdQpn, kUcQpn, kRcQpn};
        const bool request = wire::opcode_info(op).dir == wire::Direction::kRequest;
        repair(f, dc ? (request ? kDctQpn : kDciQpn) : kQpns[target]);
      }
      wire::ParsedPacket p;
      if (wire::parse_roce(f, p) == wire::ParseError::kOk) {
        if (dc && p.info != nullptr && p.info->transport == wire::Transport::kDc) {
          rig.deliver_dc(p);
        } else {
          rig.deliver(target, p);
        }
      }
    }
    if ((ctrl & kPump) != 0) rig.pump();
    rig.check_untouched();
  }
  rig.finish();
  rig.check_untouched();
}

}  // namespace uroce::transport::fuzz_responder
