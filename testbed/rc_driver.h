// An in-process, verbs-like driver of one real-engine host's Vnic: what the
// provider and uroced's control plane do for an application, without a
// daemon, sockets or shared-memory files. It registers memory, creates CQs
// and RC QPs with their rings (plain aligned heap memory: engine and driver
// share the process), connects QPs (RESET -> INIT -> RTR -> RTS with the
// peer's QPN, address and PSNs given directly, as after an out-of-band
// exchange), writes send and receive WQEs into the rings with the
// provider's writer (shm/wqe_write.h) and reads completions (ib_uverbs_wc)
// from the CQ rings. The bring-up sequences, posts and polls are the
// in-process driver's (inproc/), which the benchmarks and the engine's
// tests use too; what is the testbed's own is the rings' memory and the
// indices objects are named by. Nothing runs in the engine until its next poll():
// a post is a ring write, as in the provider.
//
// DC (docs/dc.md; rc_driver_dc.cpp): SRQs, AHs, a DCI (SQ ring only) and
// a DCT (on an SRQ, no rings of its own), their modify sequences, and DCI
// WQEs that name their target in the WQE's DC block.
//
// Objects are referred to by the small indices the create calls return.
// Everything returns 0 or a positive errno value. Single-threaded (the
// simulation's thread); the Vnic must outlive the driver.
#pragma once

// <netinet/in.h> first: see datapath/engine/vnic.h.
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "datapath/engine/vnic.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/opcodes.h"
#include "testbed/engine_port.h"

namespace uroce::testbed {

using EngineVnic = engine::Vnic<EnginePortIo>;

// The far end of an RC connection and the attributes of the path to it.
struct RcConnect {
  wire::MacAddr dmac{};
  wire::Ipv4Addr dip{};
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
  wire::PathMtu mtu = wire::PathMtu::k1024;
  std::uint32_t dest_qpn = 0;
  std::uint32_t sq_psn = 0;   // first PSN this QP sends
  std::uint32_t rq_psn = 0;   // first PSN it expects (the peer's sq_psn)
  std::uint8_t timeout = 14;  // 4.096 us x 2^timeout
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
  std::uint8_t min_rnr_timer = 1;
};

// One send WR with a single SGE (or none when length is 0).
struct RcSend {
  std::uint64_t wr_id = 0;
  // IB_UVERBS_WR_SEND, _RDMA_WRITE or their _WITH_IMM forms.
  std::uint32_t opcode = 0;
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
  std::uint64_t remote_addr = 0;  // RDMA WRITE
  std::uint32_t rkey = 0;
  // The _WITH_IMM forms: the four bytes the receiver's completion carries
  // in imm_data, as given (no byte order applied).
  std::uint32_t imm = 0;
  bool signaled = true;
};

// What a DCI needs to reach RTS (it has no destination of its own).
struct DciConnect {
  wire::PathMtu mtu = wire::PathMtu::k1024;  // the engine lowers it to the DC path MTU
  std::uint32_t sq_psn = 0;
  std::uint8_t timeout = 14;
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
};

// A DCI WR's target (the WQE's DC block): an AH made by create_ah, the
// DCT's number and key, and the DCI stream that carries it.
struct DcTarget {
  std::uint32_t ah = 0;
  std::uint32_t dctn = 0;
  std::uint64_t key = 0;
  std::uint16_t stream = 0;
};

class RcDriver {
 public:
  static constexpr transport::PdHandle kPd = 1;
  static constexpr std::uint32_t kClient = 1;
  static constexpr std::uint64_t kIovaBase = 0x10000000;

  // Opens the driver's client (kClient) and its doorbell page on `v`.
  explicit RcDriver(EngineVnic& v);
  ~RcDriver();
  RcDriver(const RcDriver&) = delete;
  RcDriver& operator=(const RcDriver&) = delete;

  // Registers [mem, mem + len) with local write and every remote access.
  // *key is both lkey and rkey; *iova is the address WRs name it by: a
  // per-driver counter (from kIovaBase, 4 KiB aligned), not the heap
  // address, so the RETH of an RDMA WRITE is the same in every run.
  int reg_mr(std::uint8_t* mem, std::size_t len, std::uint32_t* key, std::uint64_t* iova);
  // A CQ that holds at least `depth` completions.
  int create_cq(std::uint32_t depth, std::uint32_t* cq);
  // An RC QP whose SQ and RQ hold at least `depth` WRs each, both
  // completing on `cq`.
  int create_qp(std::uint32_t cq, std::uint32_t depth, std::uint32_t* qp);
  std::uint32_t qpn(std::uint32_t qp) const;
  int connect(std::uint32_t qp, const RcConnect& c);
  // EAGAIN when the SQ ring is full; EINVAL for a WQE the writer refuses.
  int post_send(std::uint32_t qp, const RcSend& wr);
  int post_recv(std::uint32_t qp, std::uint64_t wr_id, std::uint64_t addr, std::uint32_t length,
                std::uint32_t lkey);
  // Free slots of the SQ ring.
  std::uint32_t sq_room(std::uint32_t qp) const;
  // Pops up to out.size() completions; returns how many.
  std::uint32_t poll_cq(std::uint32_t cq, std::span<ib_uverbs_wc> out);
  // The transport's counters and state of `qp` (control path: allocates).
  int status(std::uint32_t qp, engine::QpStatus* out) const;
  // The engine it drives (its DC target pool, for reports).
  const EngineVnic& vnic() const { return v_; }

  // ---- DC (rc_driver_dc.cpp) ----
  // An SRQ whose ring holds at least `depth` receives.
  int create_srq(std::uint32_t depth, std::uint32_t* srq);
  int post_srq_recv(std::uint32_t srq, std::uint64_t wr_id, std::uint64_t addr,
                    std::uint32_t length, std::uint32_t lkey);
  // An address handle toward (dmac, dip) with this DSCP and TTL; *ah is the
  // number a DCI WQE names it by.
  int create_ah(const wire::MacAddr& dmac, wire::Ipv4Addr dip, std::uint8_t dscp, std::uint8_t ttl,
                std::uint32_t* ah);
  // A DCI with 2^log_streams streams (per-stream errors when log_streams >
  // 0), completing on `cq`, its SQ ring at least `depth` WRs; in RTS.
  int create_dci(std::uint32_t cq, std::uint32_t depth, std::uint8_t log_streams,
                 const DciConnect& c, std::uint32_t* qp);
  // A DCT with access key `key` on `srq`, completing on `cq`; in RTR. Its
  // DCT number is qpn(*qp).
  int create_dct(std::uint32_t cq, std::uint32_t srq, std::uint64_t key, wire::PathMtu mtu,
                 std::uint8_t dscp, std::uint8_t min_rnr_timer, std::uint32_t* qp);
  // One WR on a DCI for `t` (EAGAIN when its SQ ring is full).
  int post_dc_send(std::uint32_t qp, const RcSend& wr, const DcTarget& t);

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  using Mem = std::unique_ptr<std::byte, AlignedFree>;
  struct Cq {
    engine::ObjId id = 0;
    Mem mem;
    shm::RingGeometry geo{};
    shm::CqConsumer cons;
  };
  struct Qp {
    engine::ObjId id = 0;
    std::uint32_t qpn = 0;
    Mem sq_mem;
    Mem rq_mem;
    shm::RingGeometry sq_geo{};
    shm::RingGeometry rq_geo{};
    shm::SqProducer sq;
    shm::RqProducer rq;
    std::uint32_t sq_db = 0;
    std::uint32_t rq_db = 0;
  };
  struct Srq {
    engine::ObjId id = 0;
    Mem mem;
    shm::RingGeometry geo{};
    shm::RqProducer rq;
    std::uint32_t db = 0;
  };
  static constexpr std::uint32_t kMaxSge = 1;
  static constexpr std::uint32_t kMaxInline = 0;

  static int ring(std::size_t elem, std::uint32_t depth, std::size_t extra, Mem* mem,
                  shm::RingGeometry* geo);
  // Creates `c` (its id, client, PD and QPN filled in here) as qps_'s next.
  int add_qp(std::unique_ptr<Qp> q, engine::QpCreate& c, std::uint32_t* qp);
  // Writes one send WQE (and its DC block when `t` is given) and rings.
  int write_send(Qp& q, const RcSend& wr, const DcTarget* t);
  // Writes one single-SGE receive WQE into `rq` (a QP's or an SRQ's) and
  // rings doorbell `db`: 0, EAGAIN (full) or EINVAL.
  int write_recv(shm::RqProducer& rq, std::uint32_t db, std::uint64_t wr_id, std::uint64_t addr,
                 std::uint32_t length, std::uint32_t lkey);

  EngineVnic& v_;
  Mem page_;  // the client's doorbell page
  shm::DoorbellRinger bells_;
  std::vector<std::unique_ptr<Cq>> cqs_;
  std::vector<std::unique_ptr<Qp>> qps_;
  std::vector<std::unique_ptr<Srq>> srqs_;
  std::vector<engine::ObjId> ahs_;
  std::vector<std::uint32_t> mr_keys_;
  engine::ObjId next_id_ = 1;
  std::uint64_t next_iova_ = kIovaBase;
};

}  // namespace uroce::testbed
