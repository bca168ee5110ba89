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

/* ---- DC: dynamically connected QPs (docs/dc.md) -------------------------
 *
 * Shaped like mlx5dv's DC calls. A DCI (initiator) reaches any number of
 * DCTs (targets) with RC semantics; every WR names its target. Between
 * uroce devices only.
 */

/* Which parts of uroce_dv_qp_init_attr a call uses. Bit 0 is not used (no
 * uroce create flags exist), nor are create_flags and send_ops_flags read:
 * any bit but these two is EOPNOTSUPP. */
enum uroce_dv_qp_init_attr_mask {
  UROCE_DV_QP_INIT_ATTR_MASK_DC = 1 << 1,          /* dc_init_attr.dc_type */
  UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS = 1 << 2, /* dc_init_attr.dci_streams */
};

enum uroce_dv_dc_type {
  UROCE_DV_DCTYPE_DCT = 1, /* target: an SRQ and a receive CQ, no send queue */
  UROCE_DV_DCTYPE_DCI,     /* initiator: a send queue and a send CQ, no receive queue */
};

/* A DCI's streams: 2^log_num_concurent of them (WRs of one stream run in
 * order, streams independently), and with log_num_errored > 0 an error
 * fails only its stream instead of moving the DCI to ERR. Without
 * UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS a DCI has one stream and no
 * per-stream errors. Limits: uroce_dv_query_device (at most 4 and 4;
 * log_num_errored <= log_num_concurent). */
struct uroce_dv_dci_streams {
  uint8_t log_num_concurent;
  uint8_t log_num_errored;
};

struct uroce_dv_dc_init_attr {
  enum uroce_dv_dc_type dc_type;
  union {
    uint64_t dct_access_key;                 /* DCT: every request must carry it */
    struct uroce_dv_dci_streams dci_streams; /* DCI, with ..._MASK_DCI_STREAMS */
  };
};

struct uroce_dv_qp_init_attr {
  uint64_t comp_mask;    /* enum uroce_dv_qp_init_attr_mask bits */
  uint32_t create_flags; /* not read */
  struct uroce_dv_dc_init_attr dc_init_attr;
  uint64_t send_ops_flags; /* not read (the ibv_qp_ex send ops are qp_attr's) */
};

/* Creates a QP. With comp_mask 0 and a qp_type other than IBV_QPT_DRIVER it
 * is ibv_create_qp_ex(context, qp_attr). With UROCE_DV_QP_INIT_ATTR_MASK_DC,
 * qp_type must be IBV_QPT_DRIVER and qp_attr->comp_mask must have
 * IBV_QP_INIT_ATTR_PD:
 *   DCT: qp_attr->srq and recv_cq are required; send_cq and every send
 *        capacity in qp_attr->cap are ignored (as mlx5 does; cap comes back
 *        0 for them); IBV_QP_INIT_ATTR_SEND_OPS_FLAGS is EINVAL (no send
 *        queue). Its DCT number is the QP's qp_num.
 *   DCI: send_cq is required; recv_cq is ignored; srq must be NULL and
 *        cap.max_recv_wr 0. Post its WRs with the ibv_wr_* API (create it
 *        with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, any of RC's send ops), naming
 *        each target with uroce_dv_wr_set_dc_addr[_stream]; ibv_post_send
 *        on a DCI is EINVAL, as is ibv_post_recv on either DC type.
 * Returns NULL with errno: EOPNOTSUPP for a context of another device or an
 * unknown comp_mask bit (here or in qp_attr); EINVAL for a NULL argument,
 * an unknown dc_type, MASK_DC with another qp_type or IBV_QPT_DRIVER
 * without it, DCI_STREAMS without a DCI or over the limits, and each
 * requirement above; as ibv_create_qp_ex otherwise. */
struct ibv_qp *uroce_dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
                                  struct uroce_dv_qp_init_attr *dv_attr);

/* The DC send ops of a QP's ibv_qp_ex. Each applies to the WR built last
 * (between ibv_wr_start and ibv_wr_complete, after the builder such as
 * ibv_wr_send or ibv_wr_rdma_write, like ibv_wr_set_ud_addr) and names its
 * target: the AH (of the QP's context) leading to the DCT's device, the DCT
 * number (its qp_num) and its access key; _stream also picks the DCI stream
 * (below 2^log_num_concurent; the other uses stream 0). Every WR of a DCI
 * but LOCAL_INV needs one. A missing or bad target (an AH of another
 * context, a DCT number over 24 bits, a stream out of range, a QP that is
 * not a DCI) fails the batch: ibv_wr_complete returns EINVAL and posts
 * nothing. comp_mask is 0. */
struct uroce_dv_qp_ex {
  uint64_t comp_mask;
  void (*wr_set_dc_addr)(struct uroce_dv_qp_ex *dv_qp, struct ibv_ah *ah, uint32_t remote_dctn,
                         uint64_t remote_dc_key);
  void (*wr_set_dc_addr_stream)(struct uroce_dv_qp_ex *dv_qp, struct ibv_ah *ah,
                                uint32_t remote_dctn, uint64_t remote_dc_key, uint16_t stream_id);
};

/* The uroce_dv_qp_ex of a uroce QP's ibv_qp_ex; NULL with errno EOPNOTSUPP
 * for a QP of another device, EINVAL for NULL. */
struct uroce_dv_qp_ex *uroce_dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp);

static inline void uroce_dv_wr_set_dc_addr(struct uroce_dv_qp_ex *dv_qp, struct ibv_ah *ah,
                                           uint32_t remote_dctn, uint64_t remote_dc_key) {
  dv_qp->wr_set_dc_addr(dv_qp, ah, remote_dctn, remote_dc_key);
}

static inline void uroce_dv_wr_set_dc_addr_stream(struct uroce_dv_qp_ex *dv_qp, struct ibv_ah *ah,
                                                  uint32_t remote_dctn, uint64_t remote_dc_key,
                                                  uint16_t stream_id) {
  dv_qp->wr_set_dc_addr_stream(dv_qp, ah, remote_dctn, remote_dc_key, stream_id);
}

/* Which parts of uroce_dv_context a query asks for (in) and got (out). */
enum uroce_dv_context_comp_mask {
  UROCE_DV_CONTEXT_MASK_DCI_STREAMS = 1 << 0, /* dci_streams_caps */
  UROCE_DV_CONTEXT_MASK_ENGINE_SHARD = 1 << 1, /* engine_shard, engine_shards */
};

struct uroce_dv_dci_streams_caps {
  uint8_t max_log_num_concurent;
  uint8_t max_log_num_errored;
};

struct uroce_dv_context {
  uint64_t comp_mask; /* in: the fields wanted; out: those filled */
  struct uroce_dv_dci_streams_caps dci_streams_caps;
  /* The engine shard that serves this context, of how many: every object
   * of the context lives there, and with several engine lcores (uroced's
   * eal.lcores) or an embedded engine of several shards, contexts are
   * spread over the shards, the one serving the fewest first. A thread
   * that drives its own context in embedded mode runs its own shard. */
  uint32_t engine_shard;
  uint32_t engine_shards;
};

/* Fills the fields `attrs->comp_mask` asks for that uroce knows, and
 * leaves in comp_mask exactly those; unknown bits are dropped, not an
 * error. EOPNOTSUPP for a context of another device, EINVAL for NULL. */
int uroce_dv_query_device(struct ibv_context *context, struct uroce_dv_context *attrs);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DV_H */
