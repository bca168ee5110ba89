// Drives the uroce provider through stock libibverbs against a running
// uroced (run under uroce-run), covering what the pingpong examples and
// perftest do not:
//
//   verbs_probe loopback DEV_A DEV_B
//       Two devices of one daemon joined by a ring, RC and UD QPs between
//       them in this one process: RDMA WRITE / READ / atomics land in (and
//       come from) the application's own buffers (the zero-copy MR path),
//       SEND with immediate through the ibv_wr_* API into an SRQ, completion
//       events through a completion channel, ibv_cq_ex polling, UD with an
//       AH and ibv_create_ah_from_wc, resize_cq, rereg_mr, query_qp.
//   verbs_probe death DEV
//       Prints "probe: waiting" once its objects exist, then expects the
//       daemon to be killed: IBV_EVENT_DEVICE_FATAL on the async fd, EIO
//       from posts and control verbs, -1 from poll_cq on the empty CQ, an
//       error from ibv_get_cq_event, and every destroy and the close still
//       succeeding. No step may hang (each wait has a timeout).
//
// Prints one "ok: ..." line per check; exits 1 at the first failure.
#include <endian.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

[[noreturn]] void fail(const char* what, int err = errno) {
  std::fprintf(stderr, "FAIL: %s (errno %d: %s)\n", what, err, std::strerror(err));
  std::fflush(stdout);
  std::exit(1);
}

void ok(const char* what) {
  std::printf("ok: %s\n", what);
  std::fflush(stdout);
}

void check(bool cond, const char* what) {
  if (!cond) fail(what, 0);
}

ibv_context* open_dev(const char* name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) fail("ibv_get_device_list");
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  if (ctx == nullptr) fail("ibv_open_device");
  return ctx;
}

// Polls a classic CQ for one completion, up to 5 s.
ibv_wc poll_one(ibv_cq* cq, const char* what) {
  ibv_wc wc{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) fail(what);
    if (n == 1) break;
    if (std::chrono::steady_clock::now() > deadline) fail(what, ETIMEDOUT);
  }
  if (wc.status != IBV_WC_SUCCESS) {
    std::fprintf(stderr, "FAIL: %s: status %s\n", what, ibv_wc_status_str(wc.status));
    std::exit(1);
  }
  return wc;
}

// Polls an extended CQ for one completion with start/next/end_poll.
void poll_one_ex(ibv_cq_ex* cq, std::uint64_t* wr_id, ibv_wc_opcode* op, const char* what) {
  ibv_poll_cq_attr attr{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int rc;
  while ((rc = ibv_start_poll(cq, &attr)) == ENOENT) {
    if (std::chrono::steady_clock::now() > deadline) fail(what, ETIMEDOUT);
  }
  if (rc != 0) fail(what, rc);
  if (cq->status != IBV_WC_SUCCESS) {
    std::fprintf(stderr, "FAIL: %s: status %s\n", what, ibv_wc_status_str(cq->status));
    std::exit(1);
  }
  *wr_id = cq->wr_id;
  *op = ibv_wc_read_opcode(cq);
  if (ibv_next_poll(cq) != ENOENT) fail("more than one completion", 0);
  ibv_end_poll(cq);
}

void to_init(ibv_qp* qp, bool ud) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.pkey_index = 0;
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (ud) {
    a.qkey = 0x11111111;
    mask |= IBV_QP_QKEY;
  } else {
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                        IBV_ACCESS_REMOTE_ATOMIC;
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  if (ibv_modify_qp(qp, &a, mask) != 0) fail("modify_qp INIT");
}

void rc_connect(ibv_qp* qp, std::uint32_t dest_qpn, const ibv_gid& dgid) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = 100;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = dgid;
  a.ah_attr.grh.sgid_index = 1;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0) {
    fail("modify_qp RTR");
  }
  ibv_qp_attr s{};
  s.qp_state = IBV_QPS_RTS;
  s.timeout = 14;
  s.retry_cnt = 7;
  s.rnr_retry = 7;
  s.sq_psn = 100;
  s.max_rd_atomic = 4;
  if (ibv_modify_qp(qp, &s,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
    fail("modify_qp RTS");
  }
}

void ud_ready(ibv_qp* qp) {
  to_init(qp, true);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0) fail("modify_qp UD RTR");
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) fail("modify_qp UD RTS");
}

constexpr std::size_t kBuf = 3 * 4096;
// ints, not enumerators: ibv_reg_mr is a macro that ANDs the flags with
// another enum type (clang's C++20 enum-enum deprecation).
constexpr int kMrAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                          IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr int kLocalWrite = IBV_ACCESS_LOCAL_WRITE;

int loopback(const char* dev_a, const char* dev_b) {
  ibv_context* ca = open_dev(dev_a);
  ibv_context* cb = open_dev(dev_b);
  ibv_gid gid_a{}, gid_b{};
  if (ibv_query_gid(ca, 1, 1, &gid_a) != 0 || ibv_query_gid(cb, 1, 1, &gid_b) != 0) {
    fail("ibv_query_gid 1");
  }
  ibv_pd* pa = ibv_alloc_pd(ca);
  ibv_pd* pb = ibv_alloc_pd(cb);
  if (pa == nullptr || pb == nullptr) fail("ibv_alloc_pd");

  // Heap buffers (malloc, not page aligned): the MR remap must keep them.
  auto* buf_a = static_cast<char*>(std::malloc(kBuf));
  auto* buf_b = static_cast<char*>(std::malloc(kBuf));
  std::memset(buf_a, 'a', kBuf);
  std::memset(buf_b, 'b', kBuf);
  ibv_mr* ma = ibv_reg_mr(pa, buf_a, kBuf, kMrAccess);
  ibv_mr* mb = ibv_reg_mr(pb, buf_b, kBuf, kMrAccess);
  if (ma == nullptr || mb == nullptr) fail("ibv_reg_mr");
  check(buf_a[0] == 'a' && buf_b[kBuf - 1] == 'b', "registration kept the contents");
  ok("reg_mr on malloc'ed buffers");

  // A: an extended CQ; B: a classic CQ on a completion channel.
  ibv_cq_init_attr_ex cqa_attr{};
  cqa_attr.cqe = 64;
  cqa_attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM;
  ibv_cq_ex* cqa = ibv_create_cq_ex(ca, &cqa_attr);
  if (cqa == nullptr) fail("ibv_create_cq_ex");
  ibv_comp_channel* chb = ibv_create_comp_channel(cb);
  if (chb == nullptr) fail("ibv_create_comp_channel (needs the uroce-run interposer)");
  ibv_cq* cqb = ibv_create_cq(cb, 64, nullptr, chb, 0);
  if (cqb == nullptr) fail("ibv_create_cq with channel");
  ok("cq_ex and a cq on a completion channel");

  ibv_srq_init_attr sa{};
  sa.attr.max_wr = 32;
  sa.attr.max_sge = 1;
  ibv_srq* srq_b = ibv_create_srq(pb, &sa);
  if (srq_b == nullptr) fail("ibv_create_srq");

  ibv_qp_init_attr_ex qa_attr{};
  qa_attr.qp_type = IBV_QPT_RC;
  qa_attr.send_cq = ibv_cq_ex_to_cq(cqa);
  qa_attr.recv_cq = ibv_cq_ex_to_cq(cqa);
  qa_attr.cap = {64, 64, 2, 2, 64};
  qa_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  qa_attr.pd = pa;
  qa_attr.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
                           IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
                           IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
  ibv_qp* qa = ibv_create_qp_ex(ca, &qa_attr);
  if (qa == nullptr) fail("ibv_create_qp_ex RC");
  ibv_qp_ex* xa = ibv_qp_to_qp_ex(qa);
  check(xa != nullptr, "ibv_qp_to_qp_ex");
  ibv_qp_init_attr qb_attr{};
  qb_attr.qp_type = IBV_QPT_RC;
  qb_attr.send_cq = cqb;
  qb_attr.recv_cq = cqb;
  qb_attr.srq = srq_b;
  qb_attr.cap = {64, 0, 2, 0, 64};
  ibv_qp* qb = ibv_create_qp(pb, &qb_attr);
  if (qb == nullptr) fail("ibv_create_qp RC with SRQ");
  to_init(qa, false);
  to_init(qb, false);
  rc_connect(qa, qb->qp_num, gid_b);
  rc_connect(qb, qa->qp_num, gid_a);
  ibv_qp_attr qattr{};
  ibv_qp_init_attr qinit{};
  if (ibv_query_qp(qa, &qattr, IBV_QP_STATE | IBV_QP_DEST_QPN, &qinit) != 0) fail("ibv_query_qp");
  check(qattr.qp_state == IBV_QPS_RTS && qattr.dest_qp_num == qb->qp_num, "query_qp values");
  ok("RC QPs connected (RTS), query_qp");

  // RDMA WRITE (old API) A -> B: lands in B's malloc'ed buffer.
  std::memset(buf_a, 'W', 1000);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf_a), 1000, ma->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(buf_b + 10);
  wr.wr.rdma.rkey = mb->rkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(qa, &wr, &bad) != 0) fail("post_send WRITE");
  std::uint64_t wr_id;
  ibv_wc_opcode op;
  poll_one_ex(cqa, &wr_id, &op, "WRITE completion");
  check(wr_id == 1 && op == IBV_WC_RDMA_WRITE, "WRITE completion fields");
  check(buf_b[9] == 'b' && buf_b[10] == 'W' && buf_b[1009] == 'W' && buf_b[1010] == 'b',
        "WRITE landed in the application's buffer");
  ok("RDMA WRITE into a registered malloc buffer (zero copy)");

  // RDMA READ (ibv_wr_* API): B's bytes into A's buffer.
  std::memset(buf_b + 4096, 'R', 500);
  ibv_wr_start(xa);
  xa->wr_id = 2;
  xa->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_read(xa, mb->rkey, reinterpret_cast<std::uintptr_t>(buf_b + 4096));
  ibv_wr_set_sge(xa, ma->lkey, reinterpret_cast<std::uintptr_t>(buf_a + 2000), 500);
  if (ibv_wr_complete(xa) != 0) fail("wr_complete READ");
  poll_one_ex(cqa, &wr_id, &op, "READ completion");
  check(op == IBV_WC_RDMA_READ && buf_a[2000] == 'R' && buf_a[2499] == 'R' && buf_a[2500] == 'a',
        "READ result");
  ok("RDMA READ through ibv_wr_*");

  // Atomics on an 8-byte word of B.
  auto* word = reinterpret_cast<std::uint64_t*>(buf_b + 8192);
  *word = 40;
  auto* result = reinterpret_cast<std::uint64_t*>(buf_a + 8192);
  ibv_wr_start(xa);
  xa->wr_id = 3;
  ibv_wr_atomic_fetch_add(xa, mb->rkey, reinterpret_cast<std::uintptr_t>(word), 2);
  ibv_wr_set_sge(xa, ma->lkey, reinterpret_cast<std::uintptr_t>(result), 8);
  if (ibv_wr_complete(xa) != 0) fail("wr_complete FETCH_ADD");
  poll_one_ex(cqa, &wr_id, &op, "FETCH_ADD completion");
  check(*result == 40 && *word == 42, "fetch_add values");
  ibv_wr_start(xa);
  xa->wr_id = 4;
  ibv_wr_atomic_cmp_swp(xa, mb->rkey, reinterpret_cast<std::uintptr_t>(word), 42, 7);
  ibv_wr_set_sge(xa, ma->lkey, reinterpret_cast<std::uintptr_t>(result), 8);
  if (ibv_wr_complete(xa) != 0) fail("wr_complete CMP_SWP");
  poll_one_ex(cqa, &wr_id, &op, "CMP_SWP completion");
  check(*result == 42 && *word == 7, "cmp_swp values");
  ok("atomics fetch_add and cmp_swp");

  // SEND with immediate into B's SRQ, completion delivered as an event.
  ibv_sge rsge{reinterpret_cast<std::uintptr_t>(buf_b + 6000), 256, mb->lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 77;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  if (ibv_post_srq_recv(srq_b, &rwr, &rbad) != 0) fail("post_srq_recv");
  if (ibv_req_notify_cq(cqb, 0) != 0) fail("req_notify_cq");
  ibv_wr_start(xa);
  xa->wr_id = 5;
  xa->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send_imm(xa, htobe32(0xC0FFEE));
  char msg[] = "hello through the SRQ";
  ibv_wr_set_inline_data(xa, msg, sizeof(msg));
  if (ibv_wr_complete(xa) != 0) fail("wr_complete SEND_WITH_IMM inline");
  poll_one_ex(cqa, &wr_id, &op, "SEND completion");
  pollfd pf{chb->fd, POLLIN, 0};
  if (poll(&pf, 1, 5000) != 1) fail("completion event", ETIMEDOUT);
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  if (ibv_get_cq_event(chb, &ev_cq, &ev_ctx) != 0) fail("ibv_get_cq_event");
  check(ev_cq == cqb, "event names the CQ");
  ibv_ack_cq_events(ev_cq, 1);
  ibv_wc rwc = poll_one(cqb, "RECV completion");
  check(rwc.wr_id == 77 && rwc.opcode == IBV_WC_RECV && (rwc.wc_flags & IBV_WC_WITH_IMM) != 0 &&
            be32toh(rwc.imm_data) == 0xC0FFEE && rwc.byte_len == sizeof(msg) &&
            std::strcmp(buf_b + 6000, msg) == 0 && rwc.qp_num == qb->qp_num,
        "RECV completion fields and payload");
  ok("SEND_WITH_IMM (inline, ibv_wr_*) into an SRQ, completion channel event");

  ibv_srq_attr srq_attr{};
  if (ibv_query_srq(srq_b, &srq_attr) != 0) fail("ibv_query_srq");
  ok("query_srq");

  // UD: A -> B with an AH, B answers with an AH made from the completion.
  ibv_cq* ucq_a = ibv_create_cq(ca, 16, nullptr, nullptr, 0);
  ibv_cq* ucq_b = ibv_create_cq(cb, 16, nullptr, nullptr, 0);
  if (ucq_a == nullptr || ucq_b == nullptr) fail("ibv_create_cq UD");
  ibv_qp_init_attr ua{};
  ua.qp_type = IBV_QPT_UD;
  ua.send_cq = ua.recv_cq = ucq_a;
  ua.cap = {8, 8, 1, 1, 0};
  ibv_qp* uqa = ibv_create_qp(pa, &ua);
  ua.send_cq = ua.recv_cq = ucq_b;
  ibv_qp* uqb = ibv_create_qp(pb, &ua);
  if (uqa == nullptr || uqb == nullptr) fail("ibv_create_qp UD");
  ud_ready(uqa);
  ud_ready(uqb);
  constexpr std::size_t kGrh = 40;
  ibv_sge usge_b{reinterpret_cast<std::uintptr_t>(buf_b + 7000), 200, mb->lkey};
  ibv_recv_wr urwr{};
  urwr.wr_id = 9;
  urwr.sg_list = &usge_b;
  urwr.num_sge = 1;
  if (ibv_post_recv(uqb, &urwr, &rbad) != 0) fail("post_recv UD");
  ibv_ah_attr ah_attr{};
  ah_attr.is_global = 1;
  ah_attr.grh.dgid = gid_b;
  ah_attr.grh.sgid_index = 1;
  ah_attr.grh.hop_limit = 64;
  ah_attr.port_num = 1;
  ibv_ah* ah = ibv_create_ah(pa, &ah_attr);
  if (ah == nullptr) fail("ibv_create_ah");
  std::memcpy(buf_a + 7000, "ud-ping", 8);
  ibv_sge usge_a{reinterpret_cast<std::uintptr_t>(buf_a + 7000), 8, ma->lkey};
  ibv_send_wr uwr{};
  uwr.wr_id = 10;
  uwr.opcode = IBV_WR_SEND;
  uwr.send_flags = IBV_SEND_SIGNALED;
  uwr.sg_list = &usge_a;
  uwr.num_sge = 1;
  uwr.wr.ud.ah = ah;
  uwr.wr.ud.remote_qpn = uqb->qp_num;
  uwr.wr.ud.remote_qkey = 0x11111111;
  if (ibv_post_send(uqa, &uwr, &bad) != 0) fail("post_send UD");
  poll_one(ucq_a, "UD send completion");
  ibv_wc uwc = poll_one(ucq_b, "UD recv completion");
  check(uwc.byte_len == 8 + kGrh && uwc.src_qp == uqa->qp_num &&
            std::strcmp(buf_b + 7000 + kGrh, "ud-ping") == 0,
        "UD payload after the GRH, src_qp");
  ibv_ah* back = ibv_create_ah_from_wc(pb, &uwc, reinterpret_cast<ibv_grh*>(buf_b + 7000), 1);
  if (back == nullptr) fail("ibv_create_ah_from_wc");
  ibv_destroy_ah(back);
  ok("UD send with an AH, ibv_create_ah_from_wc");

  // Control verbs on live objects.
  if (ibv_resize_cq(cqb, 200) != 0 || cqb->cqe < 200) fail("ibv_resize_cq");
  if (ibv_rereg_mr(ma, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) != 0) {
    fail("ibv_rereg_mr access");
  }
  ok("resize_cq, rereg_mr");

  if (ibv_destroy_ah(ah) || ibv_destroy_qp(uqa) || ibv_destroy_qp(uqb) || ibv_destroy_qp(qa) ||
      ibv_destroy_qp(qb) || ibv_destroy_srq(srq_b) || ibv_destroy_cq(ucq_a) ||
      ibv_destroy_cq(ucq_b) || ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)) || ibv_destroy_cq(cqb) ||
      ibv_destroy_comp_channel(chb) || ibv_dereg_mr(ma) || ibv_dereg_mr(mb) || ibv_dealloc_pd(pa) ||
      ibv_dealloc_pd(pb)) {
    fail("destroy");
  }
  if (ibv_close_device(ca) != 0 || ibv_close_device(cb) != 0) fail("ibv_close_device");
  std::free(buf_a);
  std::free(buf_b);
  ok("everything destroyed and closed");
  std::printf("PASS\n");
  return 0;
}

int death(const char* dev) {
  ibv_context* ctx = open_dev(dev);
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  if (pd == nullptr || ch == nullptr) fail("alloc_pd/create_comp_channel");
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, ch, 0);
  if (cq == nullptr || ibv_req_notify_cq(cq, 0) != 0) fail("create_cq/req_notify");
  ibv_qp_init_attr qa{};
  qa.qp_type = IBV_QPT_RC;
  qa.send_cq = qa.recv_cq = cq;
  qa.cap = {4, 4, 1, 1, 0};
  ibv_qp* qp = ibv_create_qp(pd, &qa);
  if (qp == nullptr) fail("create_qp");
  to_init(qp, false);
  static char buf[4096];
  ibv_mr* mr = ibv_reg_mr(pd, buf, sizeof(buf), kLocalWrite);
  if (mr == nullptr) fail("reg_mr");
  std::printf("probe: waiting\n");
  std::fflush(stdout);

  pollfd pf{ctx->async_fd, POLLIN, 0};
  if (poll(&pf, 1, 30000) != 1) fail("no async event within 30 s", ETIMEDOUT);
  ibv_async_event ev{};
  if (ibv_get_async_event(ctx, &ev) != 0) fail("ibv_get_async_event");
  check(ev.event_type == IBV_EVENT_DEVICE_FATAL, "event is DEVICE_FATAL");
  ibv_ack_async_event(&ev);
  ok("IBV_EVENT_DEVICE_FATAL");

  ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf), 64, mr->lkey};
  ibv_recv_wr rwr{};
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  check(ibv_post_recv(qp, &rwr, &rbad) == EIO && rbad == &rwr, "post_recv EIO");
  ibv_wc wc;
  errno = 0;
  check(ibv_poll_cq(cq, 1, &wc) == -EIO && errno == EIO, "poll_cq -EIO, errno EIO on the empty CQ");
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  check(poll(&(pf = pollfd{ch->fd, POLLIN, 0}), 1, 5000) == 1, "channel readable (EOF)");
  errno = 0;
  check(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EIO,
        "ibv_get_cq_event fails with EIO");
  errno = 0;
  check(ibv_reg_mr(pd, buf, 64, kLocalWrite) == nullptr && errno == EIO, "reg_mr EIO");
  ibv_port_attr port{};
  check(ibv_query_port(ctx, 1, &port) == EIO, "query_port EIO");
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  check(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == EIO, "modify_qp EIO");
  ok("verbs fail with EIO, poll_cq -EIO, get_cq_event EIO");

  check(ibv_destroy_qp(qp) == 0 && ibv_dereg_mr(mr) == 0 && ibv_destroy_cq(cq) == 0 &&
            ibv_destroy_comp_channel(ch) == 0 && ibv_dealloc_pd(pd) == 0,
        "destroys succeed after death");
  check(ibv_close_device(ctx) == 0, "close_device");
  ok("destroy and close after death");
  std::printf("PASS\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "loopback") == 0) return loopback(argv[2], argv[3]);
  if (argc == 3 && std::strcmp(argv[1], "death") == 0) return death(argv[2]);
  std::fprintf(stderr, "usage: verbs_probe loopback DEV_A DEV_B | death DEV\n");
  return 2;
}
