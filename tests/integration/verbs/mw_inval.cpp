// mw_inval: invalidation and memory windows as IBTA and rxe define them
// (issue 28, docs/memory-windows.md), between uroce0 and uroce1 of one
// daemon, run through uroce-run (verbs_mw_inval, mw_inval.sh).
//
//   mw_inval victim DEV_A DEV_B GID TO_PEER FROM_PEER
//   mw_inval attacker DEV GID TO_PEER FROM_PEER
//
// The victim registers an MR on DEV_A and connects one RC QP to the
// attacker, a second process (its own context and PD on DEV); the two swap
// their QP numbers, GIDs and the MR's rkey through the FIFOs TO_PEER /
// FROM_PEER. The attacker sends SEND_WITH_INV naming that rkey: its send
// must complete IBV_WC_REM_INV_REQ_ERR (refused on the wire) and the
// victim's receive IBV_WC_REM_INV_REQ_ERR; then the victim's own WRITE into
// the MR and SEND out of it (between its DEV_A and DEV_B QPs) still succeed,
// byte for byte. Then, in the victim alone:
//   within one PD, SEND_WITH_INV naming an ordinary MR is refused the same
//   way and the MR keeps working;
//   a type-2 window bound by IBV_WR_BIND_MW serves a WRITE; SEND_WITH_INV
//   naming it completes IBV_WC_RECV with IBV_WC_WITH_INV, and a WRITE
//   through its key then fails IBV_WC_REM_ACCESS_ERR while the MR works;
//   rebound (ibv_inc_rkey), LOCAL_INV invalidates it (IBV_WC_LOCAL_INV);
//   a type-1 window bound by ibv_bind_mw serves a WRITE, unbinds with
//   length 0 (WRITE then IBV_WC_REM_ACCESS_ERR), LOCAL_INV of it fails
//   IBV_WC_LOC_QP_OP_ERR; the device reports max_mw and the MW capability
//   flags; ibv_alloc_mw of type 3 fails EINVAL.
// Prints one line per check and exits 0 only when every check passed.
#include <infiniband/verbs.h>

#include "probe.h"
#include "rc_connect.h"

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int g_gid = 1;

using probe::die;
using probe::failures;
using probe::report;

constexpr std::size_t kBuf = 4096;

struct Dev {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_gid gid{};
};

Dev open_dev(const char* name) {
  Dev d;
  d.ctx = probe::open_device(name);
  d.pd = ibv_alloc_pd(d.ctx);
  d.cq = ibv_create_cq(d.ctx, 256, nullptr, nullptr, 0);
  if (d.pd == nullptr || d.cq == nullptr) die("pd/cq");
  if (ibv_query_gid(d.ctx, 1, g_gid, &d.gid) != 0) die("ibv_query_gid");
  return d;
}

ibv_qp* make_qp(const Dev& d, ibv_qp_type type = IBV_QPT_RC) {
  ibv_qp_init_attr ia{};
  ia.send_cq = d.cq;
  ia.recv_cq = d.cq;
  ia.qp_type = type;
  ia.cap.max_send_wr = 32;
  ia.cap.max_recv_wr = 8;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(d.pd, &ia);
  if (qp == nullptr) die("ibv_create_qp");
  return qp;
}

void connect_qp(ibv_qp* qp, std::uint32_t dest_qpn, const ibv_gid& dgid) {
  const char* step = nullptr;
  if (uroce_it::rc_connect(qp,
                           {dest_qpn, dgid, g_gid, IBV_MTU_1024,
                            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ},
                           &step) != 0)
    die(step);
}

// The next completion on `cq` (status IBV_WC_GENERAL_ERR and wr_id ~0 when
// none came in 20 s).
ibv_wc next_wc(ibv_cq* cq) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  ibv_wc wc{};
  for (;;) {
    const int got = ibv_poll_cq(cq, 1, &wc);
    if (got < 0) die("ibv_poll_cq");
    if (got == 1) return wc;
    if (std::chrono::steady_clock::now() > until) {
      wc = {};
      wc.status = IBV_WC_GENERAL_ERR;
      wc.wr_id = ~std::uint64_t{0};
      return wc;
    }
  }
}

// Completions of `cq` until the one with `wr_id` (others are dropped: the
// flushes of a QP that went to ERR).
ibv_wc wc_of(ibv_cq* cq, std::uint64_t wr_id) {
  for (;;) {
    const ibv_wc wc = next_wc(cq);
    if (wc.wr_id == wr_id || wc.wr_id == ~std::uint64_t{0}) return wc;
  }
}

std::string st(const ibv_wc& wc) { return ibv_wc_status_str(wc.status); }

void post_recv(ibv_qp* qp, ibv_mr* mr, void* addr, std::uint32_t len, std::uint64_t id) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(addr), len, mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(qp, &wr, &bad) != 0) die("ibv_post_recv");
}

void post(ibv_qp* qp, ibv_send_wr& wr) {
  ibv_send_wr* bad = nullptr;
  wr.send_flags |= IBV_SEND_SIGNALED;
  if (ibv_post_send(qp, &wr, &bad) != 0) die("ibv_post_send");
}

ibv_wc send_inv(ibv_qp* qp, ibv_cq* cq, ibv_mr* mr, void* addr, std::uint32_t key,
                std::uint64_t id) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(addr), 8, mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_INV;
  wr.invalidate_rkey = key;
  post(qp, wr);
  return wc_of(cq, id);
}

ibv_wc write(ibv_qp* qp, ibv_cq* cq, ibv_mr* src, void* addr, std::uint32_t len,
             std::uint64_t raddr, std::uint32_t rkey, std::uint64_t id) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(addr), len, src->lkey};
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  post(qp, wr);
  return wc_of(cq, id);
}

void fill(std::uint8_t* p, std::size_t n, unsigned salt) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(i * 17u + salt);
}
bool same(const std::uint8_t* p, std::size_t n, unsigned salt) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::uint8_t>(i * 17u + salt)) return false;
  }
  return true;
}

std::string gid_hex(const ibv_gid& g) {
  std::string s;
  char b[3];
  for (const std::uint8_t x : g.raw) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}
ibv_gid parse_gid(const char* s) {
  ibv_gid g{};
  for (int i = 0; i < 16; ++i) {
    unsigned x = 0;
    if (std::sscanf(s + 2 * i, "%2x", &x) != 1) die("gid");
    g.raw[i] = static_cast<std::uint8_t>(x);
  }
  return g;
}

// One line to the peer / from the peer over the FIFOs.
void tell(const char* path, const std::string& line) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) die(path);
  std::fprintf(f, "%s\n", line.c_str());
  std::fclose(f);
}
std::string hear(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) die(path);
  char buf[256] = {};
  if (std::fgets(buf, sizeof buf, f) == nullptr) die("short read from the peer");
  std::fclose(f);
  return buf;
}

// The victim's local pair: a QP on DEV_A (where the MR lives) and one on
// DEV_B, connected, fresh for each step (a refused invalidation moves both
// ends to ERR).
struct Pair {
  ibv_qp* a = nullptr;
  ibv_qp* b = nullptr;
  void renew(const Dev& da, const Dev& db) {
    if (a != nullptr) ibv_destroy_qp(a);
    if (b != nullptr) ibv_destroy_qp(b);
    a = make_qp(da);
    b = make_qp(db);
    connect_qp(a, b->qp_num, db.gid);
    connect_qp(b, a->qp_num, da.gid);
  }
};

// The victim's MR still takes a WRITE from DEV_B and gives a SEND to DEV_B.
void mr_still_works(const std::string& when, Pair& p, const Dev& da, const Dev& db, ibv_mr* mr,
                    std::uint8_t* buf, ibv_mr* bmr, std::uint8_t* bbuf, unsigned salt) {
  p.renew(da, db);
  fill(bbuf, 1024, salt);
  const ibv_wc w = write(p.b, db.cq, bmr, bbuf, 1024, reinterpret_cast<std::uintptr_t>(buf),
                         mr->rkey, 100 + salt);
  report(w.status == IBV_WC_SUCCESS && same(buf, 1024, salt),
         when + ": WRITE into the MR succeeds (" + st(w) + ")");
  fill(buf + 2048, 512, salt + 1);
  post_recv(p.b, bmr, bbuf + 2048, 512, 200 + salt);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf + 2048), 512, mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 300 + salt;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  post(p.a, wr);
  const ibv_wc s = wc_of(da.cq, 300 + salt);
  const ibv_wc r = wc_of(db.cq, 200 + salt);
  report(s.status == IBV_WC_SUCCESS && r.status == IBV_WC_SUCCESS &&
             same(bbuf + 2048, 512, salt + 1),
         when + ": SEND out of the MR succeeds (" + st(s) + ", receive " + st(r) + ")");
}

int victim(const char* dev_a, const char* dev_b, const char* to_peer, const char* from_peer) {
  Dev da = open_dev(dev_a);
  Dev db = open_dev(dev_b);
  std::vector<std::uint8_t> mem(kBuf), bmem(kBuf);
  std::uint8_t* buf = mem.data();
  std::uint8_t* bbuf = bmem.data();
  const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                  IBV_ACCESS_MW_BIND;
  ibv_mr* mr = ibv_reg_mr(da.pd, buf, kBuf, acc);
  ibv_mr* bmr = ibv_reg_mr(db.pd, bbuf, kBuf, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr || bmr == nullptr) die("ibv_reg_mr");

  ibv_device_attr da_attr{};
  if (ibv_query_device(da.ctx, &da_attr) != 0) die("ibv_query_device");
  const unsigned mw_caps =
      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS;
  report(da_attr.max_mw > 0 && (da_attr.device_cap_flags & mw_caps) == mw_caps,
         "device reports max_mw " + std::to_string(da_attr.max_mw) + " and the MW capabilities");
  errno = 0;
  ibv_mw* bad_type = ibv_alloc_mw(da.pd, static_cast<ibv_mw_type>(3));
  report(bad_type == nullptr && errno == EINVAL, "ibv_alloc_mw of type 3 fails EINVAL");

  // (a) Another process, another PD, names the MR's rkey in SEND_WITH_INV.
  ibv_qp* vq = make_qp(da);
  tell(to_peer,
       std::to_string(vq->qp_num) + " " + gid_hex(da.gid) + " " + std::to_string(mr->rkey));
  unsigned aq = 0;
  char agid[64] = {};
  if (std::sscanf(hear(from_peer).c_str(), "%u %63s", &aq, agid) != 2) die("peer line");
  connect_qp(vq, aq, parse_gid(agid));
  // The receive the attacker's SEND_WITH_INV consumes, posted before it sends.
  post_recv(vq, mr, buf + 3072, 64, 1);
  tell(to_peer, "connected");
  const std::string verdict = hear(from_peer);
  const ibv_wc rv = wc_of(da.cq, 1);
  report(rv.status == IBV_WC_REM_INV_REQ_ERR,
         "cross-tenant SEND_WITH_INV: the victim's receive completes " + st(rv));
  std::printf("attacker says: %s", verdict.c_str());
  ibv_destroy_qp(vq);
  Pair p;
  mr_still_works("after the cross-tenant SEND_WITH_INV", p, da, db, mr, buf, bmr, bbuf, 1);

  // (b) Within one PD: the victim's own QP names its ordinary MR.
  p.renew(da, db);
  ibv_mr* amr = ibv_reg_mr(da.pd, buf + 3584, 512, IBV_ACCESS_LOCAL_WRITE);
  if (amr == nullptr) die("ibv_reg_mr");
  post_recv(p.b, bmr, bbuf + 3072, 64, 2);
  // The receiver is DEV_B's QP; name DEV_B's MR there (same PD as its QP).
  const ibv_wc sb = send_inv(p.a, da.cq, mr, buf, bmr->rkey, 3);
  const ibv_wc rb = wc_of(db.cq, 2);
  report(sb.status == IBV_WC_REM_INV_REQ_ERR && rb.status == IBV_WC_REM_INV_REQ_ERR,
         "same-PD SEND_WITH_INV of an ordinary MR: sender " + st(sb) + ", receiver " + st(rb));
  p.renew(da, db);
  post_recv(p.a, mr, buf + 3072, 64, 4);
  const ibv_wc sb2 = send_inv(p.b, db.cq, bmr, bbuf, mr->rkey, 5);
  const ibv_wc rb2 = wc_of(da.cq, 4);
  report(sb2.status == IBV_WC_REM_INV_REQ_ERR && rb2.status == IBV_WC_REM_INV_REQ_ERR,
         "same-PD SEND_WITH_INV of the victim's MR: sender " + st(sb2) + ", receiver " + st(rb2));
  mr_still_works("after the same-PD SEND_WITH_INV", p, da, db, mr, buf, bmr, bbuf, 2);

  // (c) A type-2 window, bound by WR on DEV_A's QP, invalidated remotely.
  p.renew(da, db);
  ibv_mw* mw2 = ibv_alloc_mw(da.pd, IBV_MW_TYPE_2);
  if (mw2 == nullptr) die("ibv_alloc_mw type 2");
  ibv_send_wr bw{};
  bw.wr_id = 10;
  bw.opcode = IBV_WR_BIND_MW;
  bw.bind_mw.mw = mw2;
  bw.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
  bw.bind_mw.bind_info.mr = mr;
  bw.bind_mw.bind_info.addr = reinterpret_cast<std::uintptr_t>(buf + 1024);
  bw.bind_mw.bind_info.length = 1024;
  bw.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
  post(p.a, bw);
  const ibv_wc bc = wc_of(da.cq, 10);
  report(bc.status == IBV_WC_SUCCESS && bc.opcode == IBV_WC_BIND_MW,
         "type-2 IBV_WR_BIND_MW completes " + st(bc));
  const std::uint32_t win = bw.bind_mw.rkey;
  // As with rxe, a BIND_MW WR names the window by its current key: the
  // application keeps a type-2 window's rkey up to date itself.
  mw2->rkey = win;
  fill(bbuf, 256, 7);
  const ibv_wc w1 =
      write(p.b, db.cq, bmr, bbuf, 256, reinterpret_cast<std::uintptr_t>(buf + 1024), win, 11);
  report(w1.status == IBV_WC_SUCCESS && same(buf + 1024, 256, 7),
         "WRITE through the type-2 window succeeds (" + st(w1) + ")");
  const ibv_wc w0 =
      write(p.b, db.cq, bmr, bbuf, 8, reinterpret_cast<std::uintptr_t>(buf + 2048), win, 12);
  report(w0.status == IBV_WC_REM_ACCESS_ERR, "WRITE past the window's end fails " + st(w0));
  p.renew(da, db);
  // The window is tied to the QP that bound it (type 2B): bind again on the
  // new QP, then invalidate it from DEV_B.
  ibv_send_wr bw2 = bw;
  bw2.wr_id = 13;
  bw2.bind_mw.rkey = ibv_inc_rkey(win);
  bw2.next = nullptr;
  post(p.a, bw2);
  const ibv_wc bc2 = wc_of(da.cq, 13);
  report(bc2.status == IBV_WC_MW_BIND_ERR, "binding a bound type-2 window again fails " + st(bc2));
  ibv_dealloc_mw(mw2);
  p.renew(da, db);
  mw2 = ibv_alloc_mw(da.pd, IBV_MW_TYPE_2);
  if (mw2 == nullptr) die("ibv_alloc_mw type 2");
  bw.bind_mw.mw = mw2;
  bw.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
  bw.wr_id = 14;
  post(p.a, bw);
  const ibv_wc bc3 = wc_of(da.cq, 14);
  const std::uint32_t win2 = bw.bind_mw.rkey;
  mw2->rkey = win2;
  post_recv(p.a, mr, buf + 3072, 64, 15);
  const ibv_wc si = send_inv(p.b, db.cq, bmr, bbuf, win2, 16);
  const ibv_wc ri = wc_of(da.cq, 15);
  report(bc3.status == IBV_WC_SUCCESS && si.status == IBV_WC_SUCCESS &&
             ri.status == IBV_WC_SUCCESS && (ri.wc_flags & IBV_WC_WITH_INV) != 0 &&
             ri.invalidated_rkey == win2,
         "SEND_WITH_INV of the type-2 window: sender " + st(si) + ", receiver " + st(ri) +
             " with IBV_WC_WITH_INV");
  const ibv_wc w2 =
      write(p.b, db.cq, bmr, bbuf, 64, reinterpret_cast<std::uintptr_t>(buf + 1024), win2, 17);
  report(w2.status == IBV_WC_REM_ACCESS_ERR,
         "WRITE through the invalidated window fails " + st(w2));
  mr_still_works("after the window's invalidation", p, da, db, mr, buf, bmr, bbuf, 3);

  // Rebound with the next key, then LOCAL_INV on the QP that bound it.
  bw.wr_id = 18;
  bw.bind_mw.rkey = ibv_inc_rkey(win2);
  post(p.a, bw);
  const ibv_wc bc4 = wc_of(da.cq, 18);
  const std::uint32_t win3 = bw.bind_mw.rkey;
  mw2->rkey = win3;
  ibv_send_wr li{};
  li.wr_id = 19;
  li.opcode = IBV_WR_LOCAL_INV;
  li.invalidate_rkey = win3;
  post(p.a, li);
  const ibv_wc lc = wc_of(da.cq, 19);
  report(bc4.status == IBV_WC_SUCCESS && lc.status == IBV_WC_SUCCESS &&
             lc.opcode == IBV_WC_LOCAL_INV,
         "rebound window: LOCAL_INV completes " + st(lc));
  const ibv_wc w3 =
      write(p.b, db.cq, bmr, bbuf, 64, reinterpret_cast<std::uintptr_t>(buf + 1024), win3, 20);
  report(w3.status == IBV_WC_REM_ACCESS_ERR,
         "WRITE through the locally invalidated window fails " + st(w3));
  report(ibv_dealloc_mw(mw2) == 0, "ibv_dealloc_mw of the type-2 window");

  // Type 1: bound and unbound by ibv_bind_mw.
  p.renew(da, db);
  ibv_mw* mw1 = ibv_alloc_mw(da.pd, IBV_MW_TYPE_1);
  if (mw1 == nullptr) die("ibv_alloc_mw type 1");
  ibv_mw_bind b1{};
  b1.wr_id = 21;
  b1.send_flags = IBV_SEND_SIGNALED;
  b1.bind_info.mr = mr;
  b1.bind_info.addr = reinterpret_cast<std::uintptr_t>(buf);
  b1.bind_info.length = 512;
  b1.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
  const int brc = ibv_bind_mw(p.a, mw1, &b1);
  const ibv_wc b1c = wc_of(da.cq, 21);
  fill(bbuf, 128, 9);
  const ibv_wc w4 =
      write(p.b, db.cq, bmr, bbuf, 128, reinterpret_cast<std::uintptr_t>(buf), mw1->rkey, 22);
  report(brc == 0 && b1c.status == IBV_WC_SUCCESS && w4.status == IBV_WC_SUCCESS &&
             same(buf, 128, 9),
         "type-1 ibv_bind_mw, then a WRITE through it succeeds (" + st(w4) + ")");
  ibv_mw_bind unb{};
  unb.wr_id = 23;
  unb.send_flags = IBV_SEND_SIGNALED;
  unb.bind_info.mr = mr;
  const int urc = ibv_bind_mw(p.a, mw1, &unb);
  const ibv_wc uc = wc_of(da.cq, 23);
  const ibv_wc w5 =
      write(p.b, db.cq, bmr, bbuf, 64, reinterpret_cast<std::uintptr_t>(buf), mw1->rkey, 24);
  report(urc == 0 && uc.status == IBV_WC_SUCCESS && w5.status == IBV_WC_REM_ACCESS_ERR,
         "type-1 unbind (length 0), then a WRITE fails " + st(w5));
  p.renew(da, db);
  ibv_send_wr li1{};
  li1.wr_id = 25;
  li1.opcode = IBV_WR_LOCAL_INV;
  li1.invalidate_rkey = mw1->rkey;
  post(p.a, li1);
  const ibv_wc l1 = wc_of(da.cq, 25);
  report(l1.status == IBV_WC_LOC_QP_OP_ERR, "LOCAL_INV of a type-1 window fails " + st(l1));
  report(ibv_dealloc_mw(mw1) == 0, "ibv_dealloc_mw of the type-1 window");

  // UC binds windows too (a local operation, as rxe's UC): a type-1 window
  // bound through a UC QP takes a UC WRITE from DEV_B. UC has no ACK: the
  // bytes arriving are the proof.
  {
    ibv_qp* ua = make_qp(da, IBV_QPT_UC);
    ibv_qp* ub = make_qp(db, IBV_QPT_UC);
    const char* step = nullptr;
    const unsigned acc = IBV_ACCESS_REMOTE_WRITE;
    if (uroce_it::uc_connect(ua, {ub->qp_num, db.gid, g_gid, IBV_MTU_1024, acc}, &step) != 0 ||
        uroce_it::uc_connect(ub, {ua->qp_num, da.gid, g_gid, IBV_MTU_1024, acc}, &step) != 0) {
      die(step);
    }
    ibv_mw* mwu = ibv_alloc_mw(da.pd, IBV_MW_TYPE_1);
    if (mwu == nullptr) die("ibv_alloc_mw type 1 (UC)");
    ibv_mw_bind bu{};
    bu.wr_id = 26;
    bu.send_flags = IBV_SEND_SIGNALED;
    bu.bind_info.mr = mr;
    bu.bind_info.addr = reinterpret_cast<std::uintptr_t>(buf + 2048);
    bu.bind_info.length = 256;
    bu.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    const int rc = ibv_bind_mw(ua, mwu, &bu);
    const ibv_wc bc = wc_of(da.cq, 26);
    fill(bbuf, 256, 11);
    const ibv_wc w = write(ub, db.cq, bmr, bbuf, 256, reinterpret_cast<std::uintptr_t>(buf + 2048),
                           mwu->rkey, 27);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!same(buf + 2048, 256, 11) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    report(rc == 0 && bc.status == IBV_WC_SUCCESS && bc.opcode == IBV_WC_BIND_MW &&
               w.status == IBV_WC_SUCCESS && same(buf + 2048, 256, 11),
           "UC: type-1 ibv_bind_mw completes " + st(bc) + ", a UC WRITE through it lands");
    ibv_destroy_qp(ua);
    ibv_destroy_qp(ub);
    report(ibv_dealloc_mw(mwu) == 0, "ibv_dealloc_mw of the UC-bound window");
  }
  mr_still_works("at the end", p, da, db, mr, buf, bmr, bbuf, 4);

  if (p.a != nullptr) ibv_destroy_qp(p.a);
  if (p.b != nullptr) ibv_destroy_qp(p.b);
  ibv_dereg_mr(amr);
  report(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr of the MR with no window bound");
  ibv_dereg_mr(bmr);
  std::printf("mw_inval: %s\n", failures == 0 ? "all passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}

int attacker(const char* dev, const char* to_peer, const char* from_peer) {
  Dev d = open_dev(dev);
  std::vector<std::uint8_t> mem(kBuf, 0x5a);
  ibv_mr* mr = ibv_reg_mr(d.pd, mem.data(), kBuf, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) die("ibv_reg_mr");
  unsigned vq = 0;
  char vgid[64] = {};
  std::uint32_t rkey = 0;
  if (std::sscanf(hear(from_peer).c_str(), "%u %63s %" SCNu32, &vq, vgid, &rkey) != 3) {
    die("peer line");
  }
  ibv_qp* qp = make_qp(d);
  connect_qp(qp, vq, parse_gid(vgid));
  tell(to_peer, std::to_string(qp->qp_num) + " " + gid_hex(d.gid));
  hear(from_peer);  // the victim's QP is connected too
  const ibv_wc wc = send_inv(qp, d.cq, mr, mem.data(), rkey, 1);
  const bool ok = wc.status == IBV_WC_REM_INV_REQ_ERR;
  report(ok, "cross-tenant SEND_WITH_INV of the victim's rkey: the attacker's send completes " +
                 st(wc));
  tell(to_peer, std::string("attacker's SEND_WITH_INV completed ") + st(wc));
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "victim") == 0) {
    g_gid = std::atoi(argv[4]);
    return victim(argv[2], argv[3], argv[5], argv[6]);
  }
  if (argc == 6 && std::strcmp(argv[1], "attacker") == 0) {
    g_gid = std::atoi(argv[3]);
    return attacker(argv[2], argv[4], argv[5]);
  }
  std::fprintf(stderr,
               "usage: mw_inval victim DEV_A DEV_B GID TO_PEER FROM_PEER\n"
               "       mw_inval attacker DEV GID TO_PEER FROM_PEER\n");
  return 2;
}
