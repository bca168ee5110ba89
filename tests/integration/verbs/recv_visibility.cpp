// recv_visibility: a posted receive is visible to the next packet once
// ibv_post_recv returns (issue 28, item 2). Run through uroce-run with two
// devices of one engine (uroce0 and uroce1 on one ring port) in this one
// process, ITERATIONS times each:
//   RC  B posts one receive, then A at once posts one SEND to B (rnr_retry
//       0, so a single RNR NAK fails A's SEND with RNR_RETRY_EXC_ERR and
//       moves the QP to ERR); both completions are waited for and must be
//       successes, B's carrying the iteration's number in its payload.
//   UD  the same with a datagram: a receive that the engine had not yet
//       taken when the datagram arrived would drop it. B's completion must
//       carry the iteration's number.
// The property holds whatever the scheduling: the test never sleeps and
// waits only for completions. The one deadline is how a lost datagram
// shows (UD has no retry or NAK): no receive completion kLostAfterS seconds
// after A's send completed, while the engine delivers in microseconds.
// Prints one line per transport ("rc: 1000 of 1000 ...") and exits 0 only
// when every iteration of both passed.
//
//   recv_visibility DEV_A DEV_B GID_INDEX ITERATIONS
#include <infiniband/verbs.h>

#include "probe.h"
#include "rc_connect.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t kMsg = 64;
constexpr std::uint32_t kGrh = 40;
constexpr std::uint32_t kQkey = 0x11111111;
constexpr int kLostAfterS = 20;

using probe::die;

int g_gid_index = 1;

struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  ibv_gid gid{};
};

Side open_side(const char* name) {
  Side s;
  s.ctx = probe::open_device(name);
  s.pd = ibv_alloc_pd(s.ctx);
  s.cq = ibv_create_cq(s.ctx, 16, nullptr, nullptr, 0);
  if (s.pd == nullptr || s.cq == nullptr) die("pd/cq", errno);
  s.mr = ibv_reg_mr(s.pd, s.buf.data(), s.buf.size(), IBV_ACCESS_LOCAL_WRITE);
  if (s.mr == nullptr) die("ibv_reg_mr", errno);
  if (ibv_query_gid(s.ctx, 1, g_gid_index, &s.gid) != 0) die("ibv_query_gid", errno);
  return s;
}

ibv_qp* make_qp(Side& s, ibv_qp_type type) {
  ibv_qp_init_attr ia{};
  ia.send_cq = s.cq;
  ia.recv_cq = s.cq;
  ia.qp_type = type;
  ia.cap.max_send_wr = 4;
  ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(s.pd, &ia);
  if (qp == nullptr) die("ibv_create_qp", errno);
  return qp;
}

void connect_rc(ibv_qp* qp, const ibv_qp* peer, const ibv_gid& peer_gid) {
  // min_rnr_timer 1 and rnr_retry 0: the first RNR NAK fails the SEND.
  const char* step = nullptr;
  const int rc =
      uroce_it::rc_connect(qp, {peer->qp_num, peer_gid, g_gid_index, IBV_MTU_1024, 0, 1, 1, 0},
                           &step);
  if (rc != 0) die(step, rc);
}

void ud_up(ibv_qp* qp) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = kQkey;
  int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  if (rc != 0) die("UD INIT", rc);
  a = {};
  a.qp_state = IBV_QPS_RTR;
  rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
  if (rc != 0) die("UD RTR", rc);
  a.qp_state = IBV_QPS_RTS;
  rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  if (rc != 0) die("UD RTS", rc);
}

void post_recv(Side& b, ibv_qp* qp, std::uint64_t id, std::uint32_t len) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(b.buf.data()), len, b.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  const int rc = ibv_post_recv(qp, &wr, &bad);
  if (rc != 0) die("ibv_post_recv", rc);
}

void post_send(Side& a, ibv_qp* qp, std::uint64_t id, ibv_ah* ah, std::uint32_t remote_qpn) {
  std::memcpy(a.buf.data(), &id, sizeof(id));
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(a.buf.data()), kMsg, a.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (ah != nullptr) {
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = remote_qpn;
    wr.wr.ud.remote_qkey = kQkey;
  }
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp, &wr, &bad);
  if (rc != 0) die("ibv_post_send", rc);
}

// One completion from `cq`; false when none came within `limit_s` seconds
// (0: wait for ever).
bool wait_one(ibv_cq* cq, ibv_wc* wc, int limit_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (std::uint64_t spins = 0;; ++spins) {
    const int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) die("ibv_poll_cq", EIO);
    if (n == 1) return true;
    if (limit_s != 0 && (spins & 1023) == 0 && std::chrono::steady_clock::now() > end) {
      return false;
    }
  }
}

// N iterations of "B posts one receive, A at once sends to it" on one pair;
// the first failure ends the run. Returns the iterations that passed.
long run(const char* label, Side& a, Side& b, ibv_qp* qa, ibv_qp* qb, ibv_ah* ah, long n) {
  const std::uint32_t rlen = ah != nullptr ? kGrh + kMsg : kMsg;
  const std::uint32_t off = ah != nullptr ? kGrh : 0;
  for (long i = 0; i < n; ++i) {
    const auto id = static_cast<std::uint64_t>(i) + 1;
    post_recv(b, qb, id, rlen);
    post_send(a, qa, id, ah, qb->qp_num);
    ibv_wc s{};
    wait_one(a.cq, &s, 0);
    if (s.status != IBV_WC_SUCCESS || s.wr_id != id) {
      std::printf("%s: iteration %ld: send completion %s (wr_id %llu)\n", label, i,
                  ibv_wc_status_str(s.status), static_cast<unsigned long long>(s.wr_id));
      return i;
    }
    ibv_wc r{};
    if (!wait_one(b.cq, &r, kLostAfterS)) {
      std::printf("%s: iteration %ld: no receive completion %d s after the send: lost\n", label, i,
                  kLostAfterS);
      return i;
    }
    std::uint64_t got = 0;
    std::memcpy(&got, b.buf.data() + off, sizeof(got));
    if (r.status != IBV_WC_SUCCESS || r.wr_id != id || r.byte_len != rlen || got != id) {
      std::printf("%s: iteration %ld: receive completion %s wr_id %llu byte_len %u payload %llu\n",
                  label, i, ibv_wc_status_str(r.status), static_cast<unsigned long long>(r.wr_id),
                  r.byte_len, static_cast<unsigned long long>(got));
      return i;
    }
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: recv_visibility DEV_A DEV_B GID_INDEX ITERATIONS\n");
    return 2;
  }
  g_gid_index = std::atoi(argv[3]);
  const long n = std::atol(argv[4]);
  Side a = open_side(argv[1]);
  Side b = open_side(argv[2]);
  int failed = 0;

  ibv_qp* ra = make_qp(a, IBV_QPT_RC);
  ibv_qp* rb = make_qp(b, IBV_QPT_RC);
  connect_rc(ra, rb, b.gid);
  connect_rc(rb, ra, a.gid);
  const long rc_ok = run("rc", a, b, ra, rb, nullptr, n);
  std::printf("rc: %ld of %ld received, rnr_retry 0: %s\n", rc_ok, n, rc_ok == n ? "ok" : "FAILED");
  if (rc_ok != n) ++failed;

  ibv_qp* ua = make_qp(a, IBV_QPT_UD);
  ibv_qp* ub = make_qp(b, IBV_QPT_UD);
  ud_up(ua);
  ud_up(ub);
  ibv_ah_attr ah_attr{};
  ah_attr.is_global = 1;
  ah_attr.grh.dgid = b.gid;
  ah_attr.grh.sgid_index = static_cast<std::uint8_t>(g_gid_index);
  ah_attr.grh.hop_limit = 64;
  ah_attr.port_num = 1;
  ibv_ah* ah = ibv_create_ah(a.pd, &ah_attr);
  if (ah == nullptr) die("ibv_create_ah", errno);
  const long ud_ok = run("ud", a, b, ua, ub, ah, n);
  std::printf("ud: %ld of %ld received: %s\n", ud_ok, n, ud_ok == n ? "ok" : "FAILED");
  if (ud_ok != n) ++failed;

  ibv_destroy_ah(ah);
  for (ibv_qp* q : {ra, rb, ua, ub}) ibv_destroy_qp(q);
  for (Side* s : {&a, &b}) {
    ibv_dereg_mr(s->mr);
    ibv_destroy_cq(s->cq);
    ibv_dealloc_pd(s->pd);
    ibv_close_device(s->ctx);
  }
  std::printf("recv_visibility: %s\n", failed == 0 ? "all passed" : "FAILED");
  return failed == 0 ? 0 : 1;
}
