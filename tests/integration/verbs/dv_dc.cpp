// uroce direct verbs for DC QPs (uroce_dv.h, docs/dc.md) as a program sees
// them through libibverbs, uroce-run and a real uroced: the exported calls
// recognise the device, uroce_dv_query_device reports the shared stream
// limits, the provider's create rules answer with their exact errno, and a
// well-formed DCT and DCI create request goes through the ctl v6 exchange
// to the engine, which makes them; the connection then still serves (an
// RC QP is created on it, through uroce_dv_create_qp with comp_mask 0, and
// has a uroce_dv_qp_ex). Traffic over DC QPs is uroce_dc_pingpong's
// (apps/examples, run by dv_dc.sh).
//
//   dv_dc DEVICE      prints "<check>: ok" or "<check>: FAILED ..." per
//                     check and "dv_dc: all passed"; exit 0 iff all.
#include <infiniband/uroce_dv.h>
#include <infiniband/verbs.h>

#include "probe.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

using probe::check;
using probe::failures;

// errno of a create that fails, 0 for one that succeeds (the QP is
// destroyed again).
int create_errno(ibv_context* ctx, ibv_qp_init_attr_ex a, uroce_dv_qp_init_attr d) {
  errno = 0;
  ibv_qp* qp = uroce_dv_create_qp(ctx, &a, &d);
  if (qp == nullptr) return errno;
  return ibv_destroy_qp(qp) == 0 ? 0 : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dv_dc DEVICE\n");
    return 2;
  }
  const probe::DeviceList devices;
  ibv_device* dev = devices.find(argv[1]);
  if (dev == nullptr) {
    std::printf("dv_dc: no device %s\n", argv[1]);
    return 1;
  }
  ibv_context* ctx = ibv_open_device(dev);
  ibv_pd* pd = ctx != nullptr ? ibv_alloc_pd(ctx) : nullptr;
  ibv_cq* cq = pd != nullptr ? ibv_create_cq(ctx, 16, nullptr, nullptr, 0) : nullptr;
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = 8;
  sa.attr.max_sge = 1;
  ibv_srq* srq = cq != nullptr ? ibv_create_srq(pd, &sa) : nullptr;
  if (srq == nullptr) {
    std::printf("dv_dc: could not create a PD, CQ and SRQ (errno %d)\n", errno);
    return 1;
  }

  uroce_dv_context c{};
  c.comp_mask = UROCE_DV_CONTEXT_MASK_DCI_STREAMS;
  check("uroce_dv_query_device", uroce_dv_query_device(ctx, &c), 0);
  check("comp_mask keeps DCI_STREAMS", static_cast<long>(c.comp_mask),
        UROCE_DV_CONTEXT_MASK_DCI_STREAMS);
  check("max_log_num_concurent 4", c.dci_streams_caps.max_log_num_concurent, 4);
  check("max_log_num_errored 4", c.dci_streams_caps.max_log_num_errored, 4);

  ibv_qp_init_attr_ex dct{};
  dct.qp_type = IBV_QPT_DRIVER;
  dct.recv_cq = cq;
  dct.srq = srq;
  dct.comp_mask = IBV_QP_INIT_ATTR_PD;
  dct.pd = pd;
  uroce_dv_qp_init_attr dv_dct{};
  dv_dct.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC;
  dv_dct.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCT;
  dv_dct.dc_init_attr.dct_access_key = 0xC0FFEE;
  ibv_qp_init_attr_ex dci{};
  dci.qp_type = IBV_QPT_DRIVER;
  dci.send_cq = cq;
  dci.cap.max_send_wr = 8;
  dci.cap.max_send_sge = 1;
  dci.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  dci.pd = pd;
  dci.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
  uroce_dv_qp_init_attr dv_dci{};
  dv_dci.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC | UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
  dv_dci.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCI;
  dv_dci.dc_init_attr.dci_streams = {2, 1};

  uroce_dv_qp_init_attr bad = dv_dct;
  bad.comp_mask |= 1u << 3;
  check("unknown comp_mask bit is EOPNOTSUPP", create_errno(ctx, dct, bad), EOPNOTSUPP);
  ibv_qp_init_attr_ex no_srq = dct;
  no_srq.srq = nullptr;
  check("DCT without SRQ is EINVAL", create_errno(ctx, no_srq, dv_dct), EINVAL);
  bad = dv_dci;
  bad.dc_init_attr.dci_streams = {5, 0};
  check("32 DCI streams is EINVAL", create_errno(ctx, dci, bad), EINVAL);
  ibv_qp_init_attr_ex dci_rq = dci;
  dci_rq.cap.max_recv_wr = 1;
  check("DCI with a receive queue is EINVAL", create_errno(ctx, dci_rq, dv_dci), EINVAL);

  const int dct_rc = create_errno(ctx, dct, dv_dct);
  const int dci_rc = create_errno(ctx, dci, dv_dci);
  std::printf("dv_dc: DCT create %s, DCI create %s\n", std::strerror(dct_rc),
              std::strerror(dci_rc));
  check("DCT created through uroced", dct_rc, 0);
  check("DCI created through uroced", dci_rc, 0);

  ibv_qp_init_attr_ex rc{};
  rc.qp_type = IBV_QPT_RC;
  rc.send_cq = rc.recv_cq = cq;
  rc.cap = {4, 4, 1, 1, 0};
  rc.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  rc.pd = pd;
  rc.send_ops_flags = IBV_QP_EX_WITH_SEND;
  check("MASK_DC on an RC QP is EINVAL", create_errno(ctx, rc, dv_dct), EINVAL);
  uroce_dv_qp_init_attr plain{};
  ibv_qp* qp = uroce_dv_create_qp(ctx, &rc, &plain);
  check("RC QP through uroce_dv_create_qp on the same connection afterwards", qp != nullptr, 1);
  if (qp != nullptr) {
    uroce_dv_qp_ex* dvx = uroce_dv_qp_ex_from_ibv_qp_ex(ibv_qp_to_qp_ex(qp));
    check("uroce_dv_qp_ex_from_ibv_qp_ex has the DC setters",
          dvx != nullptr && dvx->comp_mask == 0 && dvx->wr_set_dc_addr != nullptr &&
              dvx->wr_set_dc_addr_stream != nullptr,
          1);
    check("ibv_destroy_qp", ibv_destroy_qp(qp), 0);
  }

  ibv_destroy_srq(srq);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  if (failures != 0) return 1;
  std::printf("dv_dc: all passed\n");
  return 0;
}
