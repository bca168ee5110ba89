// mcast: UD multicast end to end (docs/multicast.md) between uroce0 (the
// sender) and uroce1 (the receivers) of one uroced, through uroce-run.
// uroce1 has three UD QPs, A, B and C, each with a receive CQ of its own;
// A and B join group ::ffff:239.1.2.3, C does not.
//
// Nothing waits for "no completion within N ms": the engine of uroce1
// handles frames in order, so after the group's messages a unicast marker
// SEND to a QP shows, by being that QP's next completion, that the QP got
// no group message before it.
//   1. query_device reports rxe's multicast limits;
//   2. attach: A and B join (twice for A: still 0); an RC QP and a unicast
//      GID are EINVAL;
//   3. 8 SENDs to the group (DestQP 0xFFFFFF): A and B each receive all 8,
//      in order, with their own qp_num and the sender's src_qp; C's next
//      completion is its marker;
//   4. a SEND to the group with another Q_Key: A's next completion is its
//      marker;
//   5. B leaves (a second detach is EINVAL); a SEND to the group reaches A,
//      and B's next completion is its marker;
//   6. destroying A while attached is EBUSY; after its detach it succeeds.
// Prints one line per check; exits 0 only when all passed.
//
//   mcast DEV_SEND DEV_RECV
#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "probe.h"
#include "rc_connect.h"

namespace {

using probe::die;
using probe::failures;
using probe::report;

constexpr int kGid = 1;  // the IPv4-mapped GID of an IPv4 device
constexpr std::uint32_t kQkey = 0x11223344;
constexpr std::size_t kMsg = 64;
constexpr std::size_t kGrh = 40;
constexpr int kSlots = 16;
constexpr int kWaitMs = 20000;  // generous: only a broken run waits this long

// A UD QP in RTS with its own CQ and registered buffer of kSlots slots.
struct Ud {
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  char* buf = nullptr;
  int next_slot = 0;
};

Ud make_ud(ibv_context* ctx, ibv_pd* pd) {
  Ud u;
  u.cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
  if (u.cq == nullptr) die("ibv_create_cq");
  ibv_qp_init_attr ia{};
  ia.send_cq = u.cq;
  ia.recv_cq = u.cq;
  ia.qp_type = IBV_QPT_UD;
  ia.cap.max_send_wr = 16;
  ia.cap.max_recv_wr = kSlots;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  u.qp = ibv_create_qp(pd, &ia);
  if (u.qp == nullptr) die("ibv_create_qp UD");
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = kQkey;
  if (ibv_modify_qp(u.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) != 0)
    die("INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  if (ibv_modify_qp(u.qp, &a, IBV_QP_STATE) != 0) die("RTR");
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (ibv_modify_qp(u.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) die("RTS");
  u.buf = static_cast<char*>(std::calloc(kSlots, kGrh + kMsg));
  u.mr = ibv_reg_mr(pd, u.buf, kSlots * (kGrh + kMsg), IBV_ACCESS_LOCAL_WRITE);
  if (u.mr == nullptr) die("ibv_reg_mr");
  return u;
}

void post_recvs(Ud& u) {
  for (int i = 0; i < kSlots; ++i) {
    ibv_sge s{reinterpret_cast<std::uintptr_t>(u.buf + i * (kGrh + kMsg)),
              static_cast<std::uint32_t>(kGrh + kMsg), u.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = static_cast<std::uint64_t>(i);
    wr.sg_list = &s;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(u.qp, &wr, &bad) != 0) die("ibv_post_recv");
  }
}

// The next completion of `u`'s CQ; false after kWaitMs without one.
bool next_wc(Ud& u, ibv_wc* wc) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (std::chrono::steady_clock::now() < end) {
    const int n = ibv_poll_cq(u.cq, 1, wc);
    if (n < 0) die("ibv_poll_cq");
    if (n == 1) return true;
  }
  return false;
}

// The payload of a receive completion (after the 40-byte GRH area).
std::string payload_of(const Ud& u, const ibv_wc& wc) {
  const char* p = u.buf + wc.wr_id * (kGrh + kMsg) + kGrh;
  return std::string(p, strnlen(p, kMsg));
}

// One SEND of `text` from `s` through `ah` to (qpn, qkey); waits for its
// send completion.
void send(Ud& s, ibv_ah* ah, std::uint32_t qpn, std::uint32_t qkey, const std::string& text) {
  char* p = s.buf;
  std::memset(p, 0, kMsg);
  std::memcpy(p, text.data(), text.size());
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p), static_cast<std::uint32_t>(kMsg), s.mr->lkey};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = qpn;
  wr.wr.ud.remote_qkey = qkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(s.qp, &wr, &bad) != 0) die("ibv_post_send");
  ibv_wc wc{};
  if (!next_wc(s, &wc) || wc.status != IBV_WC_SUCCESS) die("send completion");
}

// True when `u`'s next completion is a successful receive of `text` from
// `src_qp`, on `u`'s own QP.
bool receives(Ud& u, const std::string& text, std::uint32_t src_qp) {
  ibv_wc wc{};
  if (!next_wc(u, &wc)) return false;
  const bool ok = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
                  wc.qp_num == u.qp->qp_num && wc.src_qp == src_qp &&
                  (wc.wc_flags & IBV_WC_GRH) != 0 && payload_of(u, wc) == text;
  if (!ok) {
    std::printf("  got status %d opcode %d qp_num %u src_qp %u payload '%s'\n", wc.status,
                wc.opcode, wc.qp_num, wc.src_qp, payload_of(u, wc).c_str());
  }
  return ok;
}

ibv_ah* make_ah(ibv_pd* pd, const ibv_gid& dgid) {
  ibv_ah_attr a{};
  a.is_global = 1;
  a.port_num = 1;
  a.grh.dgid = dgid;
  a.grh.sgid_index = kGid;
  a.grh.hop_limit = 64;
  ibv_ah* ah = ibv_create_ah(pd, &a);
  if (ah == nullptr) die("ibv_create_ah");
  return ah;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mcast DEV_SEND DEV_RECV\n");
    return 2;
  }
  ibv_context* sctx = probe::open_device(argv[1]);
  ibv_context* rctx = probe::open_device(argv[2]);

  ibv_device_attr da{};
  if (ibv_query_device(rctx, &da) != 0) die("ibv_query_device");
  report(da.max_mcast_grp == 8192 && da.max_mcast_qp_attach == 56 &&
             da.max_total_mcast_qp_attach == 8192 * 56,
         "query_device: max_mcast_grp 8192, max_mcast_qp_attach 56, total 458752 (rxe's)");

  ibv_pd* spd = ibv_alloc_pd(sctx);
  ibv_pd* rpd = ibv_alloc_pd(rctx);
  if (spd == nullptr || rpd == nullptr) die("ibv_alloc_pd");
  Ud s = make_ud(sctx, spd);
  Ud a = make_ud(rctx, rpd);
  Ud b = make_ud(rctx, rpd);
  Ud c = make_ud(rctx, rpd);
  post_recvs(a);
  post_recvs(b);
  post_recvs(c);

  ibv_gid group{};
  group.raw[10] = 0xff;
  group.raw[11] = 0xff;
  group.raw[12] = 239;
  group.raw[13] = 1;
  group.raw[14] = 2;
  group.raw[15] = 3;
  ibv_gid rgid{};
  if (ibv_query_gid(rctx, 1, kGid, &rgid) != 0) die("ibv_query_gid");

  report(ibv_attach_mcast(a.qp, &group, 0) == 0 && ibv_attach_mcast(b.qp, &group, 0) == 0,
         "attach A and B to ::ffff:239.1.2.3");
  report(ibv_attach_mcast(a.qp, &group, 0) == 0, "attach A again: 0, no change");
  ibv_qp_init_attr ria{};
  ria.send_cq = a.cq;
  ria.recv_cq = a.cq;
  ria.qp_type = IBV_QPT_RC;
  ria.cap.max_send_wr = 1;
  ria.cap.max_recv_wr = 1;
  ria.cap.max_send_sge = 1;
  ria.cap.max_recv_sge = 1;
  ibv_qp* rc = ibv_create_qp(rpd, &ria);
  if (rc == nullptr) die("ibv_create_qp RC");
  report(ibv_attach_mcast(rc, &group, 0) == EINVAL, "attach an RC QP: EINVAL");
  report(ibv_attach_mcast(c.qp, &rgid, 0) == EINVAL, "attach to a unicast GID: EINVAL");

  ibv_ah* to_group = make_ah(spd, group);
  ibv_ah* to_host = make_ah(spd, rgid);
  const std::uint32_t src = s.qp->qp_num;
  constexpr int kN = 8;
  for (int i = 0; i < kN; ++i) send(s, to_group, 0xffffff, kQkey, "group " + std::to_string(i));
  send(s, to_host, c.qp->qp_num, kQkey, "marker c");
  bool all_a = true, all_b = true;
  for (int i = 0; i < kN; ++i) {
    all_a = receives(a, "group " + std::to_string(i), src) && all_a;
    all_b = receives(b, "group " + std::to_string(i), src) && all_b;
  }
  report(all_a && all_b, "8 SENDs to the group: A and B each receive all 8, in order");
  report(receives(c, "marker c", src), "C (not attached): its next completion is its marker");

  send(s, to_group, 0xffffff, kQkey + 1, "wrong qkey");
  send(s, to_host, a.qp->qp_num, kQkey, "marker a");
  report(receives(a, "marker a", src), "a group SEND with another Q_Key is dropped");

  report(ibv_detach_mcast(b.qp, &group, 0) == 0, "detach B");
  report(ibv_detach_mcast(b.qp, &group, 0) == EINVAL, "detach B again: EINVAL");
  send(s, to_group, 0xffffff, kQkey, "after leave");
  send(s, to_host, b.qp->qp_num, kQkey, "marker b");
  report(receives(a, "after leave", src), "after B left: A still receives the group");
  report(receives(b, "marker b", src), "after B left: B's next completion is its marker");

  report(ibv_destroy_qp(a.qp) == EBUSY, "destroy A while attached: EBUSY");
  report(ibv_detach_mcast(a.qp, &group, 0) == 0 && ibv_destroy_qp(a.qp) == 0,
         "detach A, then destroy A: 0");

  if (failures != 0) {
    std::printf("mcast: %d checks failed\n", failures);
    return 1;
  }
  std::printf("mcast: all passed\n");
  return 0;
}
