/* uroce direct verbs: what uroce devices offer beyond the standard verbs, in
 * the style of rdma-core's mlx5dv. Installed as <infiniband/uroce_dv.h>;
 * link with -luroce (the provider library itself, liburoce.so.1, which
 * libibverbs also loads as its uroce plugin: one copy in the process).
 *
 * Every call first checks that the object belongs to a uroce device and
 * returns EOPNOTSUPP otherwise (a program may call it on any device).
 * Errors are returned as positive errno values, as ibv_modify_qp does.
 */
#ifndef UROCE_DV_H
#define UROCE_DV_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Non-zero when `device` is a uroce device. */
bool uroce_dv_is_supported(struct ibv_device *device);

/* Which parts of uroce_dv_qp_sched a call changes. */
enum uroce_dv_qp_sched_mask {
  UROCE_DV_QP_SCHED_RATE = 1 << 0,  /* rate_kbps, max_burst_bytes, typical_pkt_bytes */
  UROCE_DV_QP_SCHED_CLASS = 1 << 1, /* tx_class */
};

/* tx_class value: the class the QP's address vector's DSCP maps to through
 * the device's PFC priority map (the default). */
#define UROCE_DV_TX_CLASS_FROM_DSCP 0xff
#define UROCE_DV_NUM_TX_CLASSES 8

struct uroce_dv_qp_sched {
  uint32_t mask;              /* enum uroce_dv_qp_sched_mask bits */
  uint32_t rate_kbps;         /* 0: no rate limit; else within the device's
                                 packet_pacing_caps (ibv_query_device_ex) */
  uint32_t max_burst_bytes;   /* 0: one typical packet */
  uint16_t typical_pkt_bytes; /* 0: a full frame of the port's MTU */
  uint8_t tx_class;           /* 0..7 (pins the QP to that TX class), or
                                 UROCE_DV_TX_CLASS_FROM_DSCP */
  uint8_t reserved;           /* 0 */
};

/* Sets a QP's TX class and/or rate limit (any QP type). With the device's
 * isolation "classes", the class decides the QP's TX priority or weight;
 * with isolation "off" the class is recorded only. The rate is enforced by
 * the device's pacer whatever the isolation mode. EINVAL for unknown mask
 * bits, a class out of range, a rate outside the pacing caps or a non-zero
 * reserved byte; EOPNOTSUPP for a QP of another device. */
int uroce_dv_modify_qp_sched(struct ibv_qp *qp, const struct uroce_dv_qp_sched *attr);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DV_H */
