// uroce direct verbs (verbs-provider/uroce_dv.h) as a program sees them: it
// links -luroce and runs under uroce-run, so libibverbs' plugin
// (liburoce-rdmav34.so, a symlink) and the linked liburoce.so.1 must be one
// copy, or uroce_dv_is_supported cannot recognise the device. Then the
// checks of uroce_dv_modify_qp_sched and of the standard rate-limit verbs on
// an RC QP: accepted values, and the exact error for each bad one.
//
//   dv_sched DEVICE      prints "<check>: ok" or "<check>: FAILED ..." per
//                        check and "dv_sched: all passed"; exit 0 iff all.
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

int modify(ibv_qp* qp, std::uint32_t mask, std::uint32_t rate, std::uint8_t cls,
           std::uint8_t reserved = 0) {
  uroce_dv_qp_sched a{};
  a.mask = mask;
  a.rate_kbps = rate;
  a.tx_class = cls;
  a.reserved = reserved;
  return uroce_dv_modify_qp_sched(qp, &a);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dv_sched DEVICE\n");
    return 2;
  }
  const probe::DeviceList devices;
  ibv_device* dev = devices.find(argv[1]);
  if (dev == nullptr) {
    std::printf("dv_sched: no device %s\n", argv[1]);
    return 1;
  }
  check("uroce_dv_is_supported(device)", uroce_dv_is_supported(dev) ? 1 : 0, 1);
  ibv_context* ctx = ibv_open_device(dev);
  ibv_pd* pd = ctx != nullptr ? ibv_alloc_pd(ctx) : nullptr;
  ibv_cq* cq = pd != nullptr ? ibv_create_cq(ctx, 16, nullptr, nullptr, 0) : nullptr;
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 8;
  init.cap.max_recv_wr = 8;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  ibv_qp* qp = cq != nullptr ? ibv_create_qp(pd, &init) : nullptr;
  if (qp == nullptr) {
    std::printf("dv_sched: could not create an RC QP (errno %d)\n", errno);
    return 1;
  }

  ibv_device_attr_ex ex{};
  check("ibv_query_device_ex", ibv_query_device_ex(ctx, nullptr, &ex), 0);
  check("packet_pacing_caps.qp_rate_limit_min 1 kbps",
        static_cast<int>(ex.packet_pacing_caps.qp_rate_limit_min), 1);
  check("packet_pacing_caps.qp_rate_limit_max 40 Gb/s",
        static_cast<int>(ex.packet_pacing_caps.qp_rate_limit_max), 40'000'000);
  check("packet_pacing_caps.supported_qpts has RC",
        (ex.packet_pacing_caps.supported_qpts >> IBV_QPT_RC) & 1, 1);

  check("class 3", modify(qp, UROCE_DV_QP_SCHED_CLASS, 0, 3), 0);
  check("class from DSCP", modify(qp, UROCE_DV_QP_SCHED_CLASS, 0, UROCE_DV_TX_CLASS_FROM_DSCP), 0);
  check("class 8 is EINVAL", modify(qp, UROCE_DV_QP_SCHED_CLASS, 0, 8), EINVAL);
  check("unknown mask bit is EINVAL", modify(qp, 1u << 2, 0, 0), EINVAL);
  check("reserved byte is EINVAL", modify(qp, UROCE_DV_QP_SCHED_CLASS, 0, 1, 1), EINVAL);
  check("rate 1 Mb/s and class 5",
        modify(qp, UROCE_DV_QP_SCHED_RATE | UROCE_DV_QP_SCHED_CLASS, 1000, 5), 0);
  check("rate above 40 Gb/s is EINVAL", modify(qp, UROCE_DV_QP_SCHED_RATE, 40'000'001, 0), EINVAL);
  check("rate 0 clears", modify(qp, UROCE_DV_QP_SCHED_RATE, 0, 0), 0);

  ibv_qp_rate_limit_attr rl{};
  rl.rate_limit = 250'000;
  rl.max_burst_sz = 65536;
  rl.typical_pkt_sz = 4096;
  check("ibv_modify_qp_rate_limit 250 Mb/s", ibv_modify_qp_rate_limit(qp, &rl), 0);
  rl.comp_mask = 1;
  check("ibv_modify_qp_rate_limit comp_mask is EINVAL", ibv_modify_qp_rate_limit(qp, &rl), EINVAL);
  ibv_qp_attr attr{};
  attr.rate_limit = 100'000;
  check("ibv_modify_qp IBV_QP_RATE_LIMIT alone", ibv_modify_qp(qp, &attr, IBV_QP_RATE_LIMIT), 0);
  attr.rate_limit = 50'000'000;
  check("ibv_modify_qp IBV_QP_RATE_LIMIT above 40 Gb/s is EINVAL",
        ibv_modify_qp(qp, &attr, IBV_QP_RATE_LIMIT), EINVAL);

  ibv_destroy_qp(qp);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  if (failures != 0) return 1;
  std::printf("dv_sched: all passed\n");
  return 0;
}
