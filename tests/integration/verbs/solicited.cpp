// solicited: solicited-only CQ arming end to end (issue 28, must-show 4),
// between uroce0 (sender) and uroce1 (receiver) of one uroced, run through
// uroce-run. The receiver's receive CQ (rcq) and a marker CQ (mcq) share one
// completion channel; both belong to uroce1, whose engine writes the
// channel's records in the order of its iterations.
//
// The property, without any "nothing happened within N ms" guess: after a
// completion has been polled from rcq, a marker SEND into mcq (armed for the
// next completion) produces a record that can only come after any record
// rcq's completion caused. So the first record read after the marker
// completed tells whether rcq fired:
//   1. rcq armed solicited-only; a plain SEND completes in rcq; the marker:
//      the first record must be mcq's (no event for the plain SEND).
//   2. rcq re-armed solicited-only (the arming still stands: a no-op); a
//      SEND with IBV_SEND_SOLICITED completes: the next record must be
//      rcq's (one event); a second solicited SEND without re-arming and the
//      marker: the next record must be mcq's (one-shot: exactly one event).
//   3. rcq armed solicited-only; a plain SEND larger than the posted receive
//      completes in rcq in error (IBV_WC_LOC_LEN_ERR): the next record must
//      be rcq's (an unsuccessful completion fires a solicited-only arming).
// Prints one line per check and exits 0 only when every check passed.
//
//   solicited DEV_SEND DEV_RECV GID_INDEX
#include <infiniband/verbs.h>

#include <poll.h>
#include "probe.h"
#include "rc_connect.h"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using probe::die;
using probe::failures;
using probe::report;

constexpr int kGid = 1;
constexpr std::size_t kBuf = 4096;
constexpr int kWaitMs = 20000;  // generous: only a broken run waits this long

int g_gid_index = kGid;

ibv_qp* make_qp(ibv_pd* pd, ibv_cq* scq, ibv_cq* rcq) {
  ibv_qp_init_attr ia{};
  ia.send_cq = scq;
  ia.recv_cq = rcq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 16;
  ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (qp == nullptr) die("ibv_create_qp");
  return qp;
}

void connect_qp(ibv_qp* qp, std::uint32_t dest_qpn, const ibv_gid& dgid) {
  const char* step = nullptr;
  if (uroce_it::rc_connect(qp, {dest_qpn, dgid, g_gid_index}, &step) != 0) die(step);
}

// One completion from `cq`, waiting up to kWaitMs; false on timeout.
bool poll_one(ibv_cq* cq, ibv_wc* wc) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  for (;;) {
    const int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) die("ibv_poll_cq");
    if (n == 1) return true;
    if (std::chrono::steady_clock::now() > end) return false;
  }
}

// The next completion record of the channel, or nullptr on timeout.
ibv_cq* next_event(ibv_comp_channel* ch) {
  pollfd p{ch->fd, POLLIN, 0};
  const int r = poll(&p, 1, kWaitMs);
  if (r < 0) die("poll");
  if (r == 0) return nullptr;
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  if (ibv_get_cq_event(ch, &cq, &ctx) != 0) die("ibv_get_cq_event");
  ibv_ack_cq_events(cq, 1);
  return cq;
}

struct Pair {
  ibv_qp* tx = nullptr;  // on the sender
  ibv_qp* rx = nullptr;  // on the receiver
  ibv_mr* rx_mr = nullptr;
  std::vector<std::uint8_t> rx_buf = std::vector<std::uint8_t>(16 * kBuf);
  std::uint64_t next_recv = 0;

  // Posts one receive of `len` bytes.
  void post_recv(std::uint32_t len) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(rx_buf.data() + (next_recv % 16) * kBuf), len,
                rx_mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = next_recv++;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(rx, &wr, &bad) != 0) die("ibv_post_recv");
  }
};

struct Sender {
  ibv_cq* scq = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kBuf, 0x5a);

  // A signalled SEND of `len` bytes on `qp`; waits for its completion and
  // returns its status.
  int send(ibv_qp* qp, std::uint32_t len, bool solicited) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data()), len, mr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0);
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qp, &wr, &bad) != 0) die("ibv_post_send");
    ibv_wc wc{};
    if (!poll_one(scq, &wc)) return -1;
    return wc.status;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: solicited DEV_SEND DEV_RECV GID_INDEX\n");
    return 2;
  }
  g_gid_index = std::atoi(argv[3]);
  ibv_context* cs = probe::open_device(argv[1]);
  ibv_context* cr = probe::open_device(argv[2]);
  ibv_pd* ps = ibv_alloc_pd(cs);
  ibv_pd* pr = ibv_alloc_pd(cr);
  if (ps == nullptr || pr == nullptr) die("ibv_alloc_pd");
  ibv_gid gs{}, gr{};
  if (ibv_query_gid(cs, 1, g_gid_index, &gs) != 0 || ibv_query_gid(cr, 1, g_gid_index, &gr) != 0)
    die("ibv_query_gid");
  ibv_comp_channel* ch = ibv_create_comp_channel(cr);
  if (ch == nullptr) die("ibv_create_comp_channel");
  Sender s;
  s.scq = ibv_create_cq(cs, 64, nullptr, nullptr, 0);
  ibv_cq* rcq = ibv_create_cq(cr, 64, nullptr, ch, 0);
  ibv_cq* mcq = ibv_create_cq(cr, 64, nullptr, ch, 0);
  ibv_cq* rscq = ibv_create_cq(cr, 64, nullptr, nullptr, 0);  // the receiver's send side
  if (s.scq == nullptr || rcq == nullptr || mcq == nullptr || rscq == nullptr) die("ibv_create_cq");
  s.mr = ibv_reg_mr(ps, s.buf.data(), s.buf.size(), IBV_ACCESS_LOCAL_WRITE);
  if (s.mr == nullptr) die("ibv_reg_mr");

  Pair data, marker;
  for (Pair* p : {&data, &marker}) {
    p->tx = make_qp(ps, s.scq, s.scq);
    p->rx = make_qp(pr, rscq, p == &data ? rcq : mcq);
    p->rx_mr = ibv_reg_mr(pr, p->rx_buf.data(), p->rx_buf.size(), IBV_ACCESS_LOCAL_WRITE);
    if (p->rx_mr == nullptr) die("ibv_reg_mr");
    connect_qp(p->tx, p->rx->qp_num, gr);
    connect_qp(p->rx, p->tx->qp_num, gs);
    for (int i = 0; i < 8; ++i) p->post_recv(kBuf);
  }

  // The marker: mcq armed for its next completion, one SEND into it, its
  // completion polled. Any record rcq's earlier completions caused was
  // written before mcq's.
  auto fire_marker = [&]() {
    if (ibv_req_notify_cq(mcq, 0) != 0) die("ibv_req_notify_cq mcq");
    if (s.send(marker.tx, 8, false) != IBV_WC_SUCCESS) die("marker SEND");
    ibv_wc wc{};
    if (!poll_one(mcq, &wc) || wc.status != IBV_WC_SUCCESS) die("marker receive");
    marker.post_recv(kBuf);
  };
  // One SEND on the data pair; returns the receive completion's status.
  auto data_send = [&](std::uint32_t len, bool solicited) {
    const int st = s.send(data.tx, len, solicited);
    ibv_wc wc{};
    if (!poll_one(rcq, &wc)) die("no receive completion");
    if (st != IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS) die("send failed");
    return static_cast<int>(wc.status);
  };

  // 1. No event for a plain SEND.
  if (ibv_req_notify_cq(rcq, 1) != 0) die("ibv_req_notify_cq");
  report(data_send(64, false) == IBV_WC_SUCCESS, "plain SEND received");
  data.post_recv(kBuf);
  fire_marker();
  ibv_cq* e = next_event(ch);
  report(e == mcq, std::string("armed solicited-only, plain SEND: no event (first record: ") +
                       (e == mcq   ? "marker"
                        : e == rcq ? "receive CQ"
                                   : "none") +
                       ")");

  // 2. One event for a solicited SEND, and only one.
  if (ibv_req_notify_cq(rcq, 1) != 0) die("ibv_req_notify_cq");
  report(data_send(64, true) == IBV_WC_SUCCESS, "solicited SEND received");
  data.post_recv(kBuf);
  e = next_event(ch);
  report(e == rcq, std::string("armed solicited-only, solicited SEND: one event (record: ") +
                       (e == mcq   ? "marker"
                        : e == rcq ? "receive CQ"
                                   : "none") +
                       ")");
  report(data_send(64, true) == IBV_WC_SUCCESS, "second solicited SEND received");
  data.post_recv(kBuf);
  fire_marker();
  e = next_event(ch);
  report(e == mcq, std::string("not re-armed, solicited SEND: no second event (next record: ") +
                       (e == mcq   ? "marker"
                        : e == rcq ? "receive CQ"
                                   : "none") +
                       ")");

  // 3. One event for a completion in error (the receive is too short).
  if (ibv_req_notify_cq(rcq, 1) != 0) die("ibv_req_notify_cq");
  // The posted receives hold kBuf bytes: a SEND of twice that completes
  // the head receive with LOC_LEN_ERR (and NAKs the sender).
  std::vector<std::uint8_t> big(2 * kBuf, 0x33);
  ibv_mr* big_mr = ibv_reg_mr(ps, big.data(), big.size(), IBV_ACCESS_LOCAL_WRITE);
  if (big_mr == nullptr) die("ibv_reg_mr big");
  {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(big.data()),
                static_cast<std::uint32_t>(big.size()), big_mr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(data.tx, &wr, &bad) != 0) die("ibv_post_send big");
    ibv_wc wc{};
    if (!poll_one(s.scq, &wc)) die("big SEND: no completion");
    ibv_wc rwc{};
    if (!poll_one(rcq, &rwc)) die("big SEND: no receive completion");
    report(rwc.status == IBV_WC_LOC_LEN_ERR,
           std::string("oversized SEND: receive completes with ") + ibv_wc_status_str(rwc.status));
  }
  e = next_event(ch);
  report(e == rcq, std::string("armed solicited-only, completion in error: one event (record: ") +
                       (e == mcq   ? "marker"
                        : e == rcq ? "receive CQ"
                                   : "none") +
                       ")");

  ibv_dereg_mr(big_mr);
  for (Pair* p : {&data, &marker}) {
    ibv_destroy_qp(p->tx);
    ibv_destroy_qp(p->rx);
    ibv_dereg_mr(p->rx_mr);
  }
  ibv_dereg_mr(s.mr);
  ibv_destroy_cq(rcq);
  ibv_destroy_cq(mcq);
  ibv_destroy_cq(rscq);
  ibv_destroy_cq(s.scq);
  ibv_destroy_comp_channel(ch);
  ibv_dealloc_pd(ps);
  ibv_dealloc_pd(pr);
  ibv_close_device(cs);
  ibv_close_device(cr);
  if (failures == 0) std::printf("solicited: all passed\n");
  return failures == 0 ? 0 : 1;
}
