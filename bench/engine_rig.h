// The rig the in-process engine benchmarks share (uroce-engine-bench,
// uroce-dc-scale): two hosts, each an engine::Vnic with one client doorbell
// page and registered memory, on one lcore over a crossed net_ring pair (the
// daemon's EthPortIo) or the simulated link; objects made through the Vnic
// API directly, as uroced's sessions make them, with their rings carved from
// one anonymous arena; and WQEs written as the provider writes them.
#pragma once

#include <malloc.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/sim_port_io.h"
#include "datapath/engine/vnic.h"
#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"
#include "datapath/port/eth_port.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/wqe_write.h"
#include "inproc/bring_up.h"
#include "inproc/post.h"

namespace uroce::bench {

namespace qa = transport::qp_attr;

inline const wire::MacAddr kMacA{{0x02, 0, 0, 0x75, 0x73, 0x01}};
inline const wire::MacAddr kMacB{{0x02, 0, 0, 0x75, 0x73, 0x02}};
inline const wire::Ipv4Addr kIpA{0x0afc0001};
inline const wire::Ipv4Addr kIpB{0x0afc0002};
inline constexpr std::uint32_t kClient = 1;
inline constexpr transport::PdHandle kPd = 1;

inline std::uint64_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

inline std::uint64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::uint64_t size = 0, rss = 0;
  f >> size >> rss;
  return rss * 4096;
}

// One anonymous mapping the rings are carved from, 64-byte aligned; pages
// are touched only as rings are initialised.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }
  ~Arena() {
    if (base_ != nullptr) munmap(base_, bytes_);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  bool ok() const { return base_ != nullptr; }
  std::byte* take(std::size_t n) {
    n = (n + 63) & ~std::size_t{63};
    if (used_ + n > bytes_) return nullptr;
    std::byte* p = base_ + used_;
    used_ += n;
    return p;
  }
  std::size_t used() const { return used_; }

 private:
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t used_ = 0;
};

inline bool make_ring(Arena& a, std::size_t elem, std::uint32_t depth, std::size_t extra,
                      engine::RingMem* out) {
  shm::RingGeometry g;
  if (shm::make_geometry(elem, depth, &g) != shm::RingError::kOk) return false;
  std::byte* p = a.take(g.bytes() + extra);
  if (p == nullptr || shm::ring_init(p, g.bytes(), g) != shm::RingError::kOk) return false;
  *out = engine::RingMem{p, g.bytes(), g};
  return true;
}

// The Vnic configuration of a bench host: 9000-byte MTU, room for
// `max_qps` QPs and their CQs, one SRQ.
inline engine::VnicConfig host_config(const wire::MacAddr& mac, wire::Ipv4Addr ip,
                                      std::uint32_t max_qps) {
  engine::VnicConfig c;
  c.name = "scale";
  c.mac = mac;
  c.ip = ip;
  c.eth_mtu = 9000;
  c.max_qps = max_qps;
  c.max_cqs = max_qps + 8;  // --idle-type cq creates one per idle object
  c.max_srqs = 1;
  return c;
}

// One host: a Vnic, its client's doorbell page, registered memory.
template <class PortIo>
struct Host {
  using VnicT = engine::Vnic<PortIo>;
  PortIo& io;
  std::unique_ptr<VnicT> vnic;
  std::vector<std::uint8_t> mem;
  std::uint32_t key = 0;
  std::byte* page = nullptr;
  shm::DoorbellRinger bells;
  engine::ObjId next_id = 1;

  Host(PortIo& p, const wire::MacAddr& mac, wire::Ipv4Addr ip, std::uint32_t max_qps, Arena& arena)
      : Host(p, host_config(mac, ip, max_qps), arena) {}

  Host(PortIo& p, const engine::VnicConfig& c, Arena& arena, std::size_t mem_bytes = 1 << 20)
      : io(p), mem(mem_bytes) {
    vnic = std::make_unique<VnicT>(c, io);
    const shm::DoorbellGeometry& g = vnic->doorbell_geometry();
    page = arena.take(g.bytes());
    if (page == nullptr || bells.attach(page, g.bytes(), g) != shm::DoorbellError::kOk ||
        vnic->open_client(kClient, page, g.bytes()) != 0) {
      std::abort();
    }
    engine::MrCreate m;
    m.desc = {kPd, reinterpret_cast<std::uint64_t>(mem.data()), mem.size(),
              transport::access::kLocalWrite | transport::access::kRemoteAny, mem.data()};
    int err = 0;
    key = vnic->reg_mr(m, &err);
    if (err != 0) std::abort();
  }
};

struct Cq {
  engine::ObjId id = 0;
  shm::CqConsumer cons;
};

struct Qp {
  engine::ObjId id = 0;
  std::uint32_t qpn = 0;
  shm::SqProducer sq;
  shm::RqProducer rq;
  std::uint32_t sq_db = 0;
  std::uint32_t rq_db = 0;
};

template <class PortIo>
int create_cq(Host<PortIo>& h, Arena& a, std::uint32_t depth, Cq* out) {
  engine::RingMem r;
  if (!make_ring(a, shm::cq_elem_bytes(), depth, ctl::kCqNotifyBytes, &r)) return ENOMEM;
  if (out->cons.attach(r.mem, r.bytes, r.geo) != shm::RingError::kOk) return EINVAL;
  engine::CqCreate c;
  c.id = out->id = h.next_id++;
  c.ring = r;
  c.notify = reinterpret_cast<ctl::CqNotify*>(static_cast<std::byte*>(r.mem) + r.bytes);
  return h.vnic->create_cq(c);
}

// An RC, UC or UD QP with its own SQ and RQ rings (one SGE each); with
// `srq` it takes its receives from that SRQ and has no RQ ring.
template <class PortIo>
int create_qp(Host<PortIo>& h, Arena& a, const Cq& cq, std::uint32_t depth, Qp* out,
              transport::QpType type = transport::QpType::kRc, engine::ObjId srq = 0) {
  engine::RingMem sq, rq;
  if (!make_ring(a, shm::sq_elem_bytes(1, 0), depth, 0, &sq) ||
      (srq == 0 && !make_ring(a, shm::rq_elem_bytes(1), depth, 0, &rq))) {
    return ENOMEM;
  }
  if (out->sq.attach(sq.mem, sq.bytes, sq.geo) != shm::RingError::kOk ||
      (srq == 0 && out->rq.attach(rq.mem, rq.bytes, rq.geo) != shm::RingError::kOk)) {
    return EINVAL;
  }
  if (int rc = h.vnic->alloc_qpn(&out->qpn); rc != 0) return rc;
  engine::QpCreate c;
  c.id = out->id = h.next_id++;
  c.client = kClient;
  c.type = type;
  c.qpn = out->qpn;
  c.pd = kPd;
  c.send_cq = c.recv_cq = cq.id;
  c.srq = srq;
  c.max_send_wr = depth;
  c.max_recv_wr = srq == 0 ? depth : 0;
  c.max_send_sge = 1;
  c.max_recv_sge = srq == 0 ? 1 : 0;
  c.sq = sq;
  c.rq = rq;
  if (int rc = h.vnic->create_qp(c); rc != 0) return rc;
  return h.vnic->qp_doorbells(c.id, &out->sq_db, &out->rq_db);
}

// Takes a QP through INIT and RTR to RTS (inproc/bring_up.h), connected to
// `peer_qpn` at mac/ip (RC and UC; a UD QP only gets its Q_Key).
template <class PortIo>
int connect(Host<PortIo>& h, engine::ObjId id, std::uint32_t peer_qpn, const wire::MacAddr& mac,
            wire::Ipv4Addr ip, transport::QpType type = transport::QpType::kRc) {
  if (type == transport::QpType::kUd) {
    return inproc::bring_up(*h.vnic, id, inproc::ud_bring_up({.qkey = 0x11111111}));
  }
  inproc::ConnectAttrs c;
  c.type = type;
  c.access = type == transport::QpType::kRc ? transport::access::kRemoteAny
                                            : transport::access::kRemoteWrite;
  c.av.dmac = mac;
  c.av.dip = ip;
  c.mtu = wire::PathMtu::k4096;
  c.dest_qpn = peer_qpn;
  c.max_dest_rd_atomic = 1;
  c.min_rnr_timer = 1;
  c.timeout = 16;  // 268 ms: no spurious retransmission
  c.retry_cnt = 7;
  c.rnr_retry = 7;
  c.max_rd_atomic = 1;
  return inproc::bring_up(*h.vnic, id, inproc::connected_bring_up(c));
}

// One WR as the provider writes it: WQE, publish, doorbell. A signaled
// WRITE (or SEND) of `size` bytes at `local_off` in the sender's memory to
// `remote`; on a DCI `dc` names the target (null otherwise).
template <class PortIo>
bool post_wr(Host<PortIo>& a, Qp& q, std::uint64_t wr_id, bool send, std::uint32_t size,
             std::size_t local_off, std::uint64_t remote, std::uint32_t rkey,
             const shm::WqeDcAddr* dc = nullptr) {
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
  f.send_flags = IBV_SEND_SIGNALED;
  f.remote_addr = remote;
  f.rkey = rkey;
  const shm::WqeSge sge{reinterpret_cast<std::uint64_t>(a.mem.data() + local_off), size, a.key};
  return inproc::post_send(q.sq, &a.bells, q.sq_db, f, std::span<const shm::WqeSge>(&sge, 1), 1,
                           dc) == 0;
}

// A signaled WRITE (or SEND) of `size` bytes from the start of A's memory
// to the start of B's.
template <class PortIo>
bool post_send(Host<PortIo>& a, Qp& q, std::uint64_t wr_id, bool send, std::uint32_t size,
               std::uint64_t remote, std::uint32_t rkey) {
  return post_wr(a, q, wr_id, send, size, 0, remote, rkey);
}

// Fills B's receive ring of `q` (SEND workload), one `size`-byte SGE each.
template <class PortIo>
void post_recvs(Host<PortIo>& b, Qp& q, std::uint32_t size) {
  std::uint32_t n = 0;
  const shm::WqeSge sge{reinterpret_cast<std::uint64_t>(b.mem.data()), size, b.key};
  while (inproc::write_recv(q.rq, n, 0, std::span<const shm::WqeSge>(&sge, 1), 1) == 0) ++n;
  inproc::publish_recvs(q.rq, &b.bells, q.rq_db, n);
}

// Where the two hosts meet, and the EAL that carries it.
struct LinkOptions {
  std::string link = "ring";   // ring (net_ring pair, EAL) or sim (simulated link)
  std::string lcore = "0";     // EAL -l
  std::uint32_t memory = 512;  // EAL -m, MB
};

// A crossed net_ring pair named `name` with `queues` queues each, opened
// as the two bench hosts' ports (9000-byte MTU, `mbufs` each, data room
// for the largest RoCE frame). 0, or 1 with the reason printed (`who`
// names the program).
inline int open_ring_ports(const std::string& name, std::uint16_t queues, std::uint32_t mbufs,
                           port::EthPort& a, port::EthPort& b, const char* who) {
  std::uint16_t ida = 0, idb = 0;
  if (port::create_ring_pair(name, &ida, &idb, 4096, queues) != 0) {
    std::fprintf(stderr, "%s: cannot create the net_ring pair\n", who);
    return 1;
  }
  port::PortConfig pc;
  pc.mtu = 9000;
  pc.mbufs = mbufs;
  pc.data_room = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
  pc.queues = queues;
  std::string err;
  pc.device = name + "_a";
  if (a.open_port_id(ida, pc, &err) != 0) {
    std::fprintf(stderr, "%s: %s\n", who, err.c_str());
    return 1;
  }
  pc.device = name + "_b";
  if (b.open_port_id(idb, pc, &err) != 0) {
    std::fprintf(stderr, "%s: %s\n", who, err.c_str());
    return 1;
  }
  return 0;
}

// Starts the EAL, builds the link and calls fn(io_a, io_b) with the two
// hosts' PortIo (engine::EthPortIo or engine::SimPortIo); returns fn's
// result, or 1 when the EAL or the link cannot be set up (`who` names the
// program in the message).
template <class Fn>
int with_link(const LinkOptions& o, const char* who, Fn&& fn) {
  port::EalConfig eal;
  eal.lcores = o.lcore;
  eal.memory_mb = o.memory;
  eal.log_level = "error";
  std::string err;
  if (port::eal_init(eal, &err) != 0) {
    std::fprintf(stderr, "%s: EAL: %s\n", who, err.c_str());
    return 1;
  }
  int rc = 1;
  if (o.link == "ring") {
    port::EthPort pa, pb;
    if (open_ring_ports("uqs", 1, 8191, pa, pb, who) != 0) return 1;
    engine::EthPortIo ia(pa), ib(pb);
    rc = fn(ia, ib);
  } else {
    port::SimDirectionConfig d;
    d.queue_frames = 8192;
    port::SimLinkConfig cfg = port::SimLinkConfig::symmetric(d, 1);
    cfg.pool_frames = 8192;
    cfg.slot_bytes = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
    port::SimLink link(cfg);
    port::SimPort pa(link, 0), pb(link, 1);
    engine::SimPortIo ia(pa), ib(pb);
    rc = fn(ia, ib);
  }
  port::eal_cleanup();
  return rc;
}

}  // namespace uroce::bench
