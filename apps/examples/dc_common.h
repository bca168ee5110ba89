// What the DC examples share: opening a device and its IPv4 GID, a DCT
// (INIT, then RTR: a DCT has no RTS) and a DCI (INIT, RTR, RTS, no
// destination) through <infiniband/uroce_dv.h>, an AH to a peer's GID,
// and the failure line every example prints ("PROG: WHAT FAILED (why)").
// Header only, installed beside the examples.
#pragma once

#include <infiniband/uroce_dv.h>
#include <infiniband/verbs.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace uroce::examples {

// The program name the failure lines start with.
inline const char* g_prog = "dc";

inline bool fail(const char* what, int err = 0) {
  if (err != 0) {
    std::printf("%s: %s FAILED (%s)\n", g_prog, what, std::strerror(err));
  } else {
    std::printf("%s: %s FAILED\n", g_prog, what);
  }
  return false;
}

inline double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// An opened device, its port's active MTU and the GID the QPs use.
struct DcDevice {
  ibv_context* ctx = nullptr;
  ibv_mtu mtu = IBV_MTU_1024;
  int gid_index = 0;
  ibv_gid gid{};
};

// Opens `name`; gid_index -1 takes the first IPv4-mapped GID.
inline bool dc_open_device(const char* name, int gid_index, DcDevice* d) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  for (int i = 0; list != nullptr && i < n && d->ctx == nullptr; ++i) {
    if (std::strcmp(ibv_get_device_name(list[i]), name) == 0) d->ctx = ibv_open_device(list[i]);
  }
  if (list != nullptr) ibv_free_device_list(list);
  if (d->ctx == nullptr) return fail("opening the device", errno);
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(d->ctx, 1, &pa); rc != 0) return fail("ibv_query_port", rc);
  d->mtu = pa.active_mtu;
  d->gid_index = gid_index;
  for (int i = 0; d->gid_index < 0 && i < pa.gid_tbl_len; ++i) {
    ibv_gid g;
    if (ibv_query_gid(d->ctx, 1, i, &g) != 0) continue;
    static const std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(g.raw, kMapped, 12) == 0) d->gid_index = i;
  }
  if (d->gid_index < 0) return fail("finding an IPv4 GID");
  if (int rc = ibv_query_gid(d->ctx, 1, d->gid_index, &d->gid); rc != 0) {
    return fail("ibv_query_gid", rc);
  }
  return true;
}

// A DCT on `srq` completing into `cq`, in RTR (its number is qp_num), or
// null after a failure line.
inline ibv_qp* dc_make_dct(const DcDevice& d, ibv_pd* pd, ibv_cq* cq, ibv_srq* srq,
                           std::uint64_t key) {
  ibv_qp_init_attr_ex t{};
  t.qp_type = IBV_QPT_DRIVER;
  t.recv_cq = cq;
  t.srq = srq;
  t.comp_mask = IBV_QP_INIT_ATTR_PD;
  t.pd = pd;
  uroce_dv_qp_init_attr dt{};
  dt.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC;
  dt.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCT;
  dt.dc_init_attr.dct_access_key = key;
  ibv_qp* q = uroce_dv_create_qp(d.ctx, &t, &dt);
  if (q == nullptr) {
    fail("uroce_dv_create_qp (DCT)", errno);
    return nullptr;
  }
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int rc =
      ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) {
    fail("DCT to INIT", rc);
    return nullptr;
  }
  a.qp_state = IBV_QPS_RTR;
  a.min_rnr_timer = 12;
  a.path_mtu = d.mtu;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = 1;
  a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(d.gid_index);
  a.ah_attr.grh.hop_limit = 64;
  rc = ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU);
  if (rc != 0) {
    fail("DCT to RTR", rc);
    return nullptr;
  }
  return q;
}

// A DCI (SEND, WRITE and READ; `depth` WRs, one SGE) completing into `cq`,
// in RTS, or null after a failure line.
inline ibv_qp* dc_make_dci(const DcDevice& d, ibv_pd* pd, ibv_cq* cq, std::uint32_t depth) {
  ibv_qp_init_attr_ex i{};
  i.qp_type = IBV_QPT_DRIVER;
  i.send_cq = cq;
  i.cap.max_send_wr = depth;
  i.cap.max_send_sge = 1;
  i.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  i.pd = pd;
  i.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ;
  uroce_dv_qp_init_attr di{};
  di.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC;
  di.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCI;
  ibv_qp* q = uroce_dv_create_qp(d.ctx, &i, &di);
  if (q == nullptr) {
    fail("uroce_dv_create_qp (DCI)", errno);
    return nullptr;
  }
  ibv_qp_attr b{};
  b.qp_state = IBV_QPS_INIT;
  b.port_num = 1;
  if (int rc = ibv_modify_qp(q, &b, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT); rc != 0) {
    fail("DCI to INIT", rc);
    return nullptr;
  }
  b.qp_state = IBV_QPS_RTR;
  b.path_mtu = d.mtu;
  if (int rc = ibv_modify_qp(q, &b, IBV_QP_STATE | IBV_QP_PATH_MTU); rc != 0) {
    fail("DCI to RTR", rc);
    return nullptr;
  }
  b.qp_state = IBV_QPS_RTS;
  b.timeout = 14;
  b.retry_cnt = 7;
  b.rnr_retry = 7;
  b.sq_psn = 0;
  b.max_rd_atomic = 1;
  if (int rc = ibv_modify_qp(q, &b,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    fail("DCI to RTS", rc);
    return nullptr;
  }
  return q;
}

// An AH to the peer's GID `dgid` (16 bytes) from our GID, or null after a
// failure line.
inline ibv_ah* dc_make_ah(const DcDevice& d, ibv_pd* pd, const std::uint8_t* dgid) {
  ibv_ah_attr a{};
  a.is_global = 1;
  a.port_num = 1;
  std::memcpy(a.grh.dgid.raw, dgid, 16);
  a.grh.sgid_index = static_cast<std::uint8_t>(d.gid_index);
  a.grh.hop_limit = 64;
  ibv_ah* ah = ibv_create_ah(pd, &a);
  if (ah == nullptr) fail("ibv_create_ah", errno);
  return ah;
}

}  // namespace uroce::examples
