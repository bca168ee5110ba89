// One virtual NIC's datapath (a device: uroce0, ...): its port, ARP agent and
// neighbour table, MR table, QPs (RC, UC, UD, DCI, DCT), SRQs, CQs and AHs,
// the DC target's context pool, the
// doorbell pages of its clients, and one engine iteration over them.
// Templated on the port adapter (EthPortIo in the daemon, SimPortIo in tests,
// the testbed's EnginePortIo) and the TX scheduling policy.
//
// Where the code is (split by concern, as eRPC splits its Rpc class): this
// header declares the class; the definitions are in datapath/engine/vnic/:
//   objects.h    construction, clients' doorbell pages, create/modify/destroy
//                of CQs, SRQs, QPs, MRs and AHs, status (the control path)
//   events.h     async events to the owners' pipes
//   rx.h         phase 1 (RX dispatch) and the frame sinks (loopback, PFC)
//   doorbells.h  phase 2 (doorbell pages, ring visits, WQE validation,
//                ordered error completions)
//   timers.h     phase 3 (RC timers on a TimerHeap, ARP retransmissions)
//   tx.h         phases 4 and 5 (pump through the scheduler, flush)
//   sched.h      TX classes and rate limits on the control path
//   policy_host.h the engine as the QP extensions (datapath/policy/: DCQCN,
//                the Homa-like scheduler) see it, the folds over them at
//                each hook point, the builder of the packets the engine
//                originates (CNPs, GRANTs, ...)
//   gsi.h        QP1 (the GSI): CM MADs in and out
//   dc.h         DC QPs (docs/dc.md): creation, the context pool, their
//                packets, timers and pump, status
// They are compiled only in the explicit-instantiation units, one per port
// adapter: vnic_eth.cpp, vnic_sim.cpp and testbed/engine_vnic.cpp. Everyone
// else includes this header alone. docs/engine.md describes the loop.
//
// Threading: everything runs on the engine lcore. The control plane calls
// the control operations through Engine::call (between two iterations), so
// nothing here takes a lock. Control operations may allocate; poll() never
// does. Every operation asserts that it runs on the Vnic's owner thread
// (base/owner_thread.h), which the Engine hands over with adopt_thread();
// config(), active_mtu() and doorbell_geometry() are fixed at construction
// and may be read anywhere.
//
// One iteration, poll(now), in this fixed order (`now` taken once by the
// engine and used by every phase):
//   1. rx        one RX burst, then the frames looped back since the last
//                iteration. ARP frames go to the ARP agent, MAC Control frames
//                to the PFC pause gate; RoCEv2 frames are parsed (ICRC
//                included), checked against our MAC and IPv4 address and
//                dispatched on their QP's type tag (no virtual call).
//   2. doorbells every open client's doorbell page (one load when idle): the
//                rings named there, plus the rings the engine itself left
//                work in, are visited; new WQEs are copied, validated and
//                posted (at most kDoorbellBurst per ring per iteration).
//   3. timers    the RC timers that are due (TimerHeap: O(1) when none is),
//                and the ARP agent's retransmissions.
//   3b. policies the QP extensions' own phase (datapath/policy/): the
//                Homa-like scheduler's grants, when data arrived or a
//                resend is due.
//   4. pump      one round of the TX scheduler (sched/) over the QPs with
//                output, within the room left in the TX burst.
//   5. flush     PFC-held frames whose pause ended, then one TX burst (on a
//                port whose TX burst is a system call, a burst of nothing but
//                ACKs may wait for a later iteration: ack_hold.h).
//   6. events    the comp-channel records the phases raised, one write per
//                channel (comp_event_batch.h): the application wakes after
//                this iteration's frames left, once.
// No phase visits an object that has nothing to do: the cost of an
// iteration does not grow with idle QPs.
//
// WQE rules (what the engine does with what it finds in a ring):
//   - SQ WQEs are taken only in RTS, SQD, SQE and ERR; in RESET, INIT and
//     RTR they wait in the ring (as rxe's requester leaves them), and the
//     modify that leaves those states makes the engine look again. RQ WQEs
//     are taken in every state but RESET.
//   - A transport queue that is full leaves the WQE in its ring (counted:
//     sq_full / rq_full), retried next iteration: the ring is the
//     application's back-pressure.
//   - A WQE that fails validation (shm::WqeError), names a missing AH, an AH
//     of another client or PD (IBV_WC_LOC_QP_OP_ERR, as rxe), or that the
//     transport refuses (EINVAL) completes in error IN ORDER: the engine
//     stops taking WQEs from that ring until the transport has retired every
//     earlier WR, then writes the error completion and moves the QP to ERR,
//     which flushes everything after it (rxe's requester does the same).
//   - A bad SRQ WQE has no QP to complete on: it is dropped, counted and
//     IBV_EVENT_SRQ_ERR is sent.
//
// Loopback: a frame a QP sends to our own MAC (a peer QP on this device) is
// copied to a LoopbackQueue and received in the next iteration's RX phase,
// as rxe loops such packets back. resolve() of our own IPv4 address gives
// our MAC.
//
// CQs: the transport's CqSink is a CqRingSink that writes ib_uverbs_wc into
// the shared ring and, when the provider armed the CQ, one comp-channel
// record. destroy_cq and destroy_srq refuse with EBUSY while a QP uses the
// object (as verbs does), so a QP never holds a pointer to a destroyed CQ or
// SRQ (asserted). destroy_qp removes the QP from the demux, the scheduler,
// the timers and the doorbell queue; nothing keeps a pointer into its rings
// afterwards.
//
// Async events go to the async pipe of the object's owner as
// ib_uverbs_async_event_desc {element = user_handle, event_type}; writes are
// non-blocking and a failed write is counted, never retried. The daemon must
// ignore SIGPIPE.
#pragma once

// <netinet/in.h> before anything that reaches <rdma/rdma_user_rxe.h>
// (shm/ring.h): that header includes <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK's headers include it), while the other order is fine.
#include <netinet/in.h>

#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "datapath/base/owner_thread.h"
#include "datapath/base/time.h"
#include "datapath/engine/ah_table.h"
#include "datapath/engine/cq_ring_sink.h"
#include "datapath/engine/gsi_queue.h"
#include "datapath/engine/loopback_queue.h"
#include "datapath/engine/mcast_table.h"
#include "datapath/engine/pfc_endpoint.h"
#include "datapath/engine/qp_demux.h"
#include "datapath/engine/stage_stamps.h"
#include "datapath/engine/timer_heap.h"
#include "datapath/engine/vnic_api.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/policy/policies.h"
#include "datapath/port/arp_agent.h"
#include "datapath/port/rss.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/wqe_copy.h"
#include "datapath/transport/dc_target.h"
#include "datapath/transport/dci_qp.h"
#include "datapath/transport/dct_qp.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/srq.h"
#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/parser.h"
#include "sched/pacer.h"
#include "sched/tx_policy.h"
#include "sched/tx_scheduler.h"

namespace uroce::engine {

// Sched must also be constructible from the number of flows (QP slots), or
// from that and VnicConfig::sched (sched::TxPolicy, the default).
template <class PortIo, sched::TxScheduler Sched = sched::TxPolicy>
class Vnic {
 public:
  // WQEs taken from one ring per iteration.
  static constexpr std::uint32_t kDoorbellBurst = 32;
  // Frames to our own MAC held between two RX phases (loopback_queue.h).
  static constexpr std::uint32_t kLoopbackSlots = 64;

  // `io` must outlive the Vnic. All tables are allocated here.
  Vnic(const VnicConfig& cfg, PortIo& io);
  ~Vnic();
  Vnic(const Vnic&) = delete;
  Vnic& operator=(const Vnic&) = delete;

  const VnicConfig& config() const { return cfg_; }
  // wire::path_mtu_for_eth_mtu(config().eth_mtu): UD's message limit,
  // QueryPort's value. 256 below wire::kMinRoceEthMtu, which VnicConfig
  // rules out, so that the value stays defined.
  wire::PathMtu active_mtu() const {
    return wire::path_mtu_for_eth_mtu(cfg_.eth_mtu).value_or(wire::PathMtu::k256);
  }

  // The calling thread becomes the owner (owner_thread.h): the Engine's
  // hand-over points only.
  void adopt_thread() noexcept { owner_.adopt(); }

  // One engine iteration for this device (order in the header comment).
  // Returns the work done: frames received, WQEs taken, timers fired and
  // frames pumped (0: the iteration found nothing to do).
  //
  // `may_cut` (an application thread drives the engine from its poll,
  // Engine::drive): when the RX phase wrote a completion of data from the
  // peer (transport::carries_peer_data), the iteration ends there (phase 6
  // still runs), so that the application sees that completion without
  // waiting for the doorbells, timers, pump and flush;
  // the ACK it owes is already left to the pump (AckTiming::kPump) and goes
  // out with the next iteration, usually the one the application's reply
  // drives. The iteration after a cut one always runs whole, so a stream's
  // receiver, whose every RX phase completes something, still pumps and
  // flushes every other iteration. An application that stops calling after
  // a cut leaves that iteration to the progress thread at the end of its nap
  // (Engine::run_progress, counter cut_runs); a control call runs it first
  // (Engine::finish_cuts).
  std::uint32_t poll(TimeNs now, bool may_cut = false);
  // Whether the last poll() ended after its RX phase (`may_cut`): its
  // pump and flush wait for the next poll, which runs whole.
  bool cut_pending() const { return cut_; }
  // Whether the port adapter kept this iteration's TX burst for a later
  // one (engine/ack_hold.h): the engine must then run again soon. A cut
  // iteration does not count: the progress thread's short naps it would
  // bring preempt the application (p99 4x worse in session 49's runs).
  bool tx_held() const {
    if constexpr (requires { io_.tx_held(); }) {
      return io_.tx_held();
    } else {
      return false;
    }
  }

  // ---- Control operations (engine thread, via Engine::call) ---------------
  // Each returns 0 or a positive errno value.

  // Doorbells (datapath/shm/doorbell.h). Every client that posts WQEs has a
  // doorbell page of doorbell_geometry() in memory it shares with the
  // daemon; the engine reads the pages of open clients every iteration.
  // The doorbells of a QP and an SRQ are fixed by their slots
  // (qp_doorbells, srq_doorbell).
  const shm::DoorbellGeometry& doorbell_geometry() const { return db_geo_; }
  // EEXIST (client open), EINVAL (memory too short or misaligned). `mem`
  // stays mapped until close_client returns.
  int open_client(std::uint32_t client, void* mem, std::size_t bytes);
  // ENOENT. The engine no longer reads the page once it returns.
  int close_client(std::uint32_t client);
  // ENOENT. The doorbells of a QP's SQ and RQ rings.
  int qp_doorbells(ObjId id, std::uint32_t* sq, std::uint32_t* rq) const;
  // ENOENT. The doorbell of an SRQ's ring.
  int srq_doorbell(ObjId id, std::uint32_t* db) const;

  // A QPN for the next create_qp: its demux slot is free; never 0 or 1;
  // one this shard owns (port::shard_of_qpn, VnicConfig::shard);
  // successive calls return different QPNs (a freed QPN comes back only
  // after the allocator went once around the 24-bit space). ENOSPC when
  // max_qps QPs exist.
  int alloc_qpn(std::uint32_t* qpn);

  // EINVAL (id 0, ring memory does not match its geometry or its elements
  // are shorter than an ib_uverbs_wc), EEXIST (id in use), ENOMEM
  // (max_cqs). The channel and async fds are switched to O_NONBLOCK.
  int create_cq(const CqCreate& c);
  // ENOENT, EBUSY (a QP still uses it).
  int destroy_cq(ObjId id);
  // Moves the completions not yet polled into `ring`, in order, and produces
  // there from now on; `notify` replaces the arming word (its armed state is
  // carried over). ENOENT, EINVAL (bad ring, or the new ring cannot hold the
  // unpolled completions; the CQ is left as it was).
  int resize_cq(ObjId id, const RingMem& ring, ctl::CqNotify* notify);

  // EINVAL (id 0, bad ring, max_sge over transport::kMaxSge, srq_limit over
  // the ring's capacity), EEXIST, ENOMEM (max_srqs). The SRQ holds as many
  // WRs as its ring (the granted max_wr).
  int create_srq(const SrqCreate& c);
  // transport::Srq::modify (EINVAL on a bad mask or value); ENOENT.
  int modify_srq(ObjId id, std::uint32_t mask, const transport::SrqAttr& a);
  // ENOENT.
  int query_srq(ObjId id, transport::SrqAttr* out);
  // ENOENT, EBUSY (a QP still uses it).
  int destroy_srq(ObjId id);

  // EINVAL (id 0, type, QPN 0/1 or over 24 bits, rings, a DCT without an
  // SRQ or a DCI with one, DCI streams out of range), EEXIST (id in use or
  // the QPN's demux slot taken), ENOMEM (max_qps), ENOENT (send/recv CQ or
  // SRQ id unknown). A DCT has no send CQ and no SQ ring, a DCI no receive
  // CQ and no RQ ring (QpCreate). The first DCT makes the device's DC
  // context pool (VnicConfig::dc_*). The transport queues get the rings'
  // capacities (the granted max_send_wr / max_recv_wr); SGE and inline
  // limits are clamped to transport::kMaxSge / kMaxInline. The async fd is
  // made non-blocking.
  int create_qp(const QpCreate& c);
  // The transport's modify (EINVAL on an illegal transition or value);
  // ENOENT. Moving to RESET also forgets an error completion the engine was
  // holding for a rejected WQE (RESET discards WRs without completion). A
  // DC QP's path MTU is lowered to wire::dc_path_mtu_for_eth_mtu of the
  // port MTU (its packets carry 24 more header bytes than RC's).
  int modify_qp(ObjId id, const QpModify& m);
  // ENOENT. RC, DCI, DCT: the transport's query(). UC/UD: the attributes
  // modify_qp applied, with the live state and PSNs (and UD's Q_Key).
  int query_qp(ObjId id, QpQuery* out);
  // TX scheduling (sched.h): a rate limit (paced through the timing wheel)
  // and/or a class, as QpSched says. ENOENT; EINVAL (a class out of range,
  // or a class with a policy that has none).
  int set_qp_sched(ObjId id, const QpSched& s);
  // New TX class settings (modes, weights, rate limits, class quantum:
  // uroced's SIGHUP) for a running device; its isolation mode stays. The
  // extensions adjust them as at start (effective_tx_policy). EOPNOTSUPP
  // for a scheduler without classes.
  int set_tx_classes(const sched::TrafficClassConfig& classes);
  // ENOENT. The QP leaves the demux (later packets count as rx_no_qp), the
  // scheduler, the timers and the doorbell queue; undelivered events and
  // queued WRs are discarded without completions; its rings are no longer
  // touched.
  int destroy_qp(ObjId id);
  // The sends UD QP `id`, in RTS, still has to put on the wire (in its ring
  // and its transport queue); 0 for any other QP or state (a UD QP sends in
  // RTS only). A UD sender may destroy its QP right after posting
  // unsignaled sends, and expects them sent, as rxe and RNICs send them:
  // the daemon waits on this before destroy_qp
  // (ClientSession::on_destroy_qp).
  std::uint32_t ud_sends_queued(ObjId id);

  // Registers `m.desc` (host = the daemon's mapping); returns the key
  // (lkey == rkey), or 0 with *err = ENOMEM (table full) or EINVAL.
  std::uint32_t reg_mr(const MrCreate& m, int* err);
  // Replaces the descriptor; the key stays. EINVAL for an unknown key.
  int rereg_mr(std::uint32_t key, const MrCreate& m) {
    assert(owner_.here());
    return mrs_.rereg(key, m.desc);
  }
  // EINVAL for an unknown key or a region with windows bound. Once it
  // returns no packet reaches the memory: the caller may unmap it.
  int dereg_mr(std::uint32_t key) {
    assert(owner_.here());
    return mrs_.dereg(key);
  }
  // Memory windows (mr_table.h): the key, or 0 with *err ENOMEM (max_mws).
  std::uint32_t alloc_mw(transport::PdHandle pd, transport::MwType type, int* err);
  // EINVAL for an unknown key; a bound window is unbound first.
  int dealloc_mw(std::uint32_t key) {
    assert(owner_.here());
    return mrs_.dealloc_mw(key);
  }
  // Type-1 bind by verb (ibv_bind_mw) goes through the QP's send queue as a
  // BIND_MW WR, as rxe's provider does; nothing binds from here.
  const transport::MwCounters& mw_counters() const {
    assert(owner_.here());
    return mrs_.mw_counters();
  }

  // EINVAL (id 0), EEXIST, ENOMEM (max_ahs).
  int create_ah(const AhCreate& a);
  // ENOENT; EBUSY: a QP of the AH's client that names AHs per WR still
  // holds WQEs in its ring that it cannot take yet, and they may name this
  // AH (vnic/ah.h): call again; *pending (when given) says how many. `force`
  // erases it all the same (the client is gone). A WQE naming it afterwards
  // completes in error.
  int destroy_ah(ObjId id, bool force = false, std::uint32_t* pending = nullptr);

  // Multicast (ibv_attach_mcast, vnic/mcast.h): UD QP `id` joins or leaves
  // group `gid` (mcast_table.h). ENOENT (no QP `id`), EINVAL (not a UD QP,
  // not a group's GID, or for detach not attached), EEXIST, ENOMEM (the
  // table's limits). destroy_qp detaches a QP from every group.
  int attach_mcast(ObjId id, const wire::Ipv6Addr& gid);
  int detach_mcast(ObjId id, const wire::Ipv6Addr& gid);
  std::size_t mcast_groups() const {
    assert(owner_.here());
    return mcast_.groups();
  }

  // Neighbour lookup for the control plane: true with *mac when `ip` is
  // resolved (reachable or stale); otherwise starts (or keeps going) ARP
  // resolution, whose request leaves with the next flush, and returns
  // false. Our own address resolves to our MAC.
  bool resolve(wire::Ipv4Addr ip, TimeNs now, wire::MacAddr* mac);
  // The same for an IPv6 address, through neighbour discovery (nd_agent.h).
  bool resolve6(const wire::Ipv6Addr& ip, TimeNs now, wire::MacAddr* mac);

  // QP1 (the GSI, gsi_queue.h): the CM MADs received since the last drain,
  // appended to `out`; and one MAD sent from QP1 to QP1 of (ip, mac), left
  // in the TX burst for the next flush (ENOBUFS: no TX buffer, counted).
  std::size_t gsi_drain(std::vector<GsiMad>* out) {
    assert(owner_.here());
    return gsi_.drain(out);
  }
  // Any thread: whether a MAD waits for gsi_drain, and the bell a MAD's
  // arrival rings (gsi_queue.h; nullptr: none).
  bool gsi_pending() const { return gsi_.pending(); }
  void set_gsi_bell(WakeWord* b) { gsi_.set_bell(b); }
  int gsi_send(wire::Ipv4Addr ip, wire::MacAddr mac,
               std::span<const std::uint8_t, wire::kMadBytes> mad);

  // Replaces the loss injection (impairment.h) and restarts its counts and
  // random streams; `c` must pass first_bad_field().
  void set_impairment(const ImpairConfig& c);
  // PFC and TTL (pfc_endpoint.h): a snapshot of its state and counters.
  PfcStatus pfc_status() const {
    assert(owner_.here());
    return pfc_.status(now_);
  }
  // Replaces the PFC/TTL configuration (link_bps included) and restarts its
  // state and counters; staged and held frames are discarded (losses the
  // transports recover from).
  void set_pfc(const PfcEndpointConfig& c);
  // The PFC/TTL events recorded since the last drain (appended).
  void drain_pfc_events(std::vector<pfc::PfcEvent>* out) {
    assert(owner_.here());
    pfc_.drain_events(out);
  }
  const PfcEndpoint& pfc() const {
    assert(owner_.here());
    return pfc_;
  }

  // Stage stamps (stage_stamps.h), kept when config().stage_stamps: the
  // clock they read (the engine's, set by Engine::add_vnic; without one,
  // the iteration's `now`; set before the Vnic is first polled), and what
  // they found.
  void set_stage_clock(TimeNs (*read)(const void*), const void* clock) {
    stage_read_ = read;
    stage_clock_ = clock;
  }
  StageReport stage_report() const;

  // The `now` of the last poll() (for control calls that need a time).
  TimeNs last_now() const {
    assert(owner_.here());
    return now_;
  }
  const VnicCounters& counters() const {
    assert(owner_.here());
    return ctr_;
  }
  const port::ArpCounters& arp_counters() const {
    assert(owner_.here());
    return arp_.counters();
  }
  const port::NdCounters& nd_counters() const {
    assert(owner_.here());
    return nd_.counters();
  }
  // Appends one QpStatus per QP (control path only: allocates).
  void qp_status(std::vector<QpStatus>* out) const;
  // The DC target's context pool (its table's counters, contexts open and
  // capacity, bytes), or null before the device's first DCT.
  const transport::DcTargetPool* dc_pool() const {
    assert(owner_.here());
    return dc_pool_.get();
  }
  // Selective repeat on DC (docs/lossy-dc.md): every DCI's and DCT's
  // counters summed, destroyed ones included (control path: visits the
  // live QPs).
  transport::RcSrCounters dc_sr_counters() const;
  std::uint32_t qp_count() const {
    assert(owner_.here());
    return static_cast<std::uint32_t>(qp_ids_.size());
  }
  std::uint32_t cq_count() const {
    assert(owner_.here());
    return static_cast<std::uint32_t>(cqs_.size());
  }
  std::uint32_t srq_count() const {
    assert(owner_.here());
    return static_cast<std::uint32_t>(srqs_.size());
  }
  std::uint32_t ah_count() const {
    assert(owner_.here());
    return ahs_.size();
  }
  std::uint32_t mr_count() const {
    assert(owner_.here());
    return mrs_.live();
  }
  // For tests: the RC timer deadline the engine holds for `qpn` (0: none).
  TimeNs deadline(std::uint32_t qpn) const;
  // For a caller that runs poll() on a virtual clock (the testbed) instead
  // of spinning: the earliest instant at which poll() has work that no new
  // input brings. last_now() while looped-back frames wait for the next RX
  // phase; else the earliest RC timer deadline (possibly stale-early: a poll
  // then only finds nothing due) or the PFC endpoint's next deadline, or the
  // maximum TimeNs. Inputs the caller knows about itself are not included: a
  // frame arriving, a WQE written to a ring (with its doorbell), TX room
  // opening, and a poll() that returned work (a phase may have stopped at
  // its burst). ARP retransmissions are not included either: the ARP agent
  // exposes no deadline, and a QP's address vector already carries its MAC.
  TimeNs next_deadline() const;
  // PfcEndpoint::next_deadline at last_now().
  TimeNs pfc_next_deadline() const {
    assert(owner_.here());
    return pfc_.next_deadline(now_);
  }
  const Sched& scheduler() const {
    assert(owner_.here());
    return sched_;
  }
  const sched::Pacer& pacer() const {
    assert(owner_.here());
    return pacer_;
  }
  const sched::PortLimit& port_limit() const {
    assert(owner_.here());
    return limit_;
  }
  // The QP extensions (datapath/policy/policies.h), and extension P,
  // enabled or not.
  using Policies = typename policy::PoliciesOf<PortIo>::type;
  template <class P>
  const P& policy() const {
    assert(owner_.here());
    return std::get<P>(policies_);
  }
  // Each extension's counters, in the order of Policies (a copy).
  policy::CountersOf<Policies> policy_counters() const {
    assert(owner_.here());
    return std::apply(
        [](const auto&... p) { return policy::CountersOf<Policies>{p.counters()...}; }, policies_);
  }
  PortIo& io() { return io_; }

 private:
  using PortTx = typename PortIo::Tx;
  struct CqObj;
  struct SrqObj;
  struct PendingError;
  struct QpEntry;
  struct ClientPage;
  struct QpTx;
  struct ArpTx;
  struct HeldTx;
  struct PfcTx;
  struct Timers;
  struct QpEventSink;
  struct SrqEventSink;
  struct SendCq;
  struct RecvCq;
  struct PolicyHost;
  struct NoCq;

  // objects.h
  static port::ArpConfig arp_config(const VnicConfig& c);
  static port::NdConfig nd_config(const VnicConfig& c);
  static std::uint32_t frame_slot_bytes(const VnicConfig& c);
  static void merge_attrs(transport::QpAttrValues* d, std::uint32_t mask,
                          const transport::QpAttrValues& a);
  template <class Ring>
  static bool attach_ring(Ring* r, const RingMem& m);
  template <class E, class F>
  static auto visit(E& e, F&& f);
  template <class Q, class F>
  decltype(auto) with_io(QpEntry& e, QpTx& tx, F&& f);
  static transport::QpState qp_state(const QpEntry& e);
  void steer_src_port(QpEntry& e);
  QpEntry* find_qp(ObjId id);
  const QpEntry* find_qp(ObjId id) const;
  CqObj* find_cq(ObjId id);
  SrqObj* find_srq(ObjId id);
  const SrqObj* find_srq(ObjId id) const;

  // events.h
  void post_async(int fd, std::uint64_t element, transport::AsyncEventType t);
  void deliver_qp_event(QpEntry& e, const transport::AsyncEvent& ev);
  void drain_qp_events(QpEntry& e);

  // rx.h
  std::uint32_t rx_phase(TimeNs now);
  void on_frame(std::span<const std::uint8_t> f, wire::FrameTail tail, TimeNs now, bool from_port);
  void qp_packet(QpEntry& e, TimeNs now);
  bool hand_off_foreign(std::span<const std::uint8_t> f, wire::FrameTail tail);
  void hand_off_to(std::uint16_t owner, std::span<const std::uint8_t> f, wire::FrameTail tail);
  void commit_frame(std::span<const std::uint8_t> f);
  void emit_arp(std::span<const std::uint8_t> f);
  bool pfc_paused(const QpEntry& e, TimeNs now);

  // gsi.h
  void gsi_rx();
  // A RoCEv2 frame to a group MAC (vnic/mcast.h): a UD packet to a group
  // with attached QPs goes to each of them; anything else is counted.
  void mcast_rx(TimeNs now, std::size_t frame_bytes);

  // doorbells.h
  std::uint32_t doorbell_phase();
  std::uint32_t on_doorbell(std::uint32_t client, std::uint32_t db);
  std::uint32_t visit_srq_ring(SrqObj& s, std::uint32_t target);
  // Which rings of a target a queued visit looks at.
  static constexpr std::uint8_t kVisitSq = 1;
  static constexpr std::uint8_t kVisitRq = 2;
  void queue_doorbell(std::uint32_t target, std::uint8_t rings = kVisitSq | kVisitRq);
  std::uint32_t visit_qp_rings(QpEntry& e, std::uint8_t rings);
  std::uint32_t sq_doorbell(QpEntry& e, bool* more);
  std::uint32_t rq_doorbell(QpEntry& e, bool* more);
  std::uint32_t srq_ring(SrqObj& s);
  // The RX path's refills (transport/recv_refill.h): `tag` is a QP slot or
  // an SRQ slot.
  static void refill_rq_hook(void* vnic, std::uint32_t slot);
  static void refill_srq_hook(void* vnic, std::uint32_t slot);
  void rx_refill_rq(std::uint32_t slot);
  void rx_refill_srq(std::uint32_t slot);
  transport::WcStatus resolve_ah(const QpEntry& e, std::uint32_t ah_num, transport::UdDest* d);
  // destroy_ah's first step (vnic/ah.h): takes what every per-WR-addressed
  // QP of `client` past RTR holds in its send ring. The WQEs left there
  // (a transport queue was full).
  std::uint32_t take_posted_sends(std::uint32_t client);
  bool settle_error(QpEntry& e, PendingError* pe, bool send);
  static void release_held(shm::RqConsumer& ring, std::uint32_t* held, std::uint32_t depth);

  // timers.h
  std::uint32_t timer_phase(TimeNs now);

  // sched.h
  static sched::TxPolicyConfig effective_tx_policy(const VnicConfig& c);
  static Sched make_sched(const VnicConfig& c, std::uint32_t flows);
  void class_from_av(QpEntry& e);
  void update_tx_plain();

  // policy_host.h: the QP extensions (datapath/policy/qp_extension.h).
  static Policies make_policies(const VnicConfig& c);
  template <std::uint32_t Bit, class F>
  void each_policy(F&& f);
  template <std::uint32_t Bit, class F>
  void each_policy(F&& f) const;
  // The folds of the packet path's hook points (called when hooks_ has
  // their bit).
  bool policy_rx(QpEntry& e, TimeNs now);
  void policy_delivered(QpEntry& e, TimeNs now);
  void policy_post(QpEntry& e);
  void policy_timer(QpEntry& e, TimeNs now);
  std::uint32_t policy_poll(TimeNs now);
  void policy_pace(QpEntry& e, std::uint64_t bytes, TimeNs now);
  TimeNs policy_wake(const QpEntry& e) const;
  void policy_served(QpEntry& e);
  void policy_round_end();

  // dc.h
  int make_dc_qp(const QpCreate& c, const transport::RcQpConfig& rc, QpEntry& e);
  void dc_rx(TimeNs now, std::size_t frame_bytes);
  static void dc_status(const transport::DciQp& d, QpStatus* s);
  static void dc_status(const transport::DctQp& d, QpStatus* s);
  wire::PathMtu dc_mtu_clamp(wire::PathMtu m) const;
  transport::DcSprayConfig dc_spray_config() const;

  // stages.h: the stage stamps' hooks (called only when stages_ is set).
  TimeNs stage_now() const { return stage_read_ != nullptr ? stage_read_(stage_clock_) : now_; }
  bool stage_trackable(QpEntry& e) const;
  void stage_post(QpEntry& e, bool trackable);
  void stage_cqe(QpEntry& e, const transport::Cqe& c, bool send);

  // tx.h
  std::uint32_t pump_phase(TimeNs now);
  sched::ServeResult serve(QpEntry& e, std::uint32_t budget, TimeNs now);
  std::uint32_t pump_paced(TimeNs now);
  sched::ServeResult serve_paced(QpEntry& e, std::uint32_t budget, TimeNs now);
  void flush_phase();

  VnicConfig cfg_;
  PortIo& io_;
  base::OwnerThread owner_;
  port::ArpAgent arp_;
  port::NdAgent nd_;
  transport::MrTable mrs_;
  AhTable ahs_;
  // DC (dc.h): the connection numbers of every DCI stream of the device,
  // and the DC target's context pool (made with the first DCT, kept until
  // the device goes: its records and floors outlive DCTs, docs/dc.md).
  // Declared before the QP slots, so that DCIs and DCTs, which keep
  // references to them, are destroyed first.
  transport::DcConnClock dc_clock_;
  std::unique_ptr<transport::DcTargetPool> dc_pool_;
  // The selective-repeat counters of the DCIs and DCTs destroyed so far.
  transport::RcSrCounters dc_sr_gone_{};
  QpDemux<QpEntry> demux_;
  std::vector<QpEntry> qps_;         // slots, fixed at construction
  std::vector<std::uint32_t> free_;  // free QP slots (stack)
  std::vector<std::uint32_t> live_;  // used QP slots (control path: status)
  Sched sched_;
  sched::Pacer pacer_;      // QPs with a rate limit, and the wheel they wait in
  sched::PortLimit limit_;  // the pump's bound on the port's backlog (tx.h)
  // No classes, no paced QP and no port limit: the pump takes the plain
  // path (tx.h).
  // Kept by update_tx_plain() on the control path.
  bool tx_plain_ = true;
  // The QP extensions (policy_host.h) and the policy::hook bits of the
  // enabled ones: the packet path's one test per hook point.
  Policies policies_;
  std::uint32_t hooks_ = 0;
  // tx_plain_ and no extension holds QPs back in the pump (hook::kAcksNow):
  // an RC QP's ACKs wait for its turn in this iteration's pump (rx.h).
  bool acks_at_pump_ = true;
  // The last poll() ended after its RX phase (poll()'s `may_cut`).
  bool cut_ = false;
  std::unordered_map<ObjId, std::uint32_t> qp_ids_;
  std::unordered_map<ObjId, std::unique_ptr<CqObj>> cqs_;
  std::unordered_map<ObjId, std::unique_ptr<SrqObj>> srqs_;
  std::vector<SrqObj*> srq_slots_;       // by slot, fixed at construction
  std::vector<std::uint32_t> srq_free_;  // free SRQ slots (stack)
  // Doorbells: the geometry of every client page, the open pages, and the
  // rings to visit (targets: a QP slot, or qps_.size() + an SRQ slot), each
  // queued at most once with the rings to look at (db_queued_: kVisitSq /
  // kVisitRq bits, 0 when not queued), in two lists swapped per iteration.
  shm::DoorbellGeometry db_geo_{};
  std::uint32_t qp_bells_ = 0;  // 2 * qps_.size(): the first SRQ doorbell
  std::vector<std::unique_ptr<ClientPage>> clients_;
  std::vector<std::uint8_t> db_queued_;
  std::vector<std::uint32_t> db_next_;
  std::vector<std::uint32_t> db_now_;
  // RC timers by QP slot, and the due ones of one timer phase.
  TimerHeap timers_;
  std::vector<std::uint32_t> due_;
  LoopbackQueue loop_;
  // QP1's received MADs, and the PSN of the next MAD QP1 sends.
  static constexpr std::uint32_t kGsiSlots = 64;
  GsiQueue gsi_{kGsiSlots};
  std::uint32_t gsi_psn_ = 0;
  McastTable mcast_;
  PfcEndpoint pfc_;      // PFC generation/honouring and TTL, from cfg_.pfc
  Impairment impair_{};  // loss injection, from cfg_.impair
  TimeNs now_ = 0;
  // Stage stamps (stages.h): null when the device keeps none; the clock;
  // the stamp of this iteration's RX burst (taken as the RX phase asks the
  // port for it), during the RX phase (0 outside it).
  std::unique_ptr<StageRecorder> stages_;
  TimeNs (*stage_read_)(const void*) = nullptr;
  const void* stage_clock_ = nullptr;
  TimeNs rx_stamp_ = 0;
  std::uint32_t next_qpn_ = 0x11;
  // The shard that owns a QPN, by its low port::kSteerBits bits
  // (port::shard_of_qpn without a division per packet); read only when
  // cfg_.shards > 1.
  std::array<std::uint8_t, 1u << port::kSteerBits> shard_of_low_{};
  // Scratch of the packet path (members: a SendWr is ~1 KiB).
  wire::ParsedPacket pkt_{};
  transport::SendWr swr_{};
  transport::RecvWr rwr_{};
  VnicCounters ctr_{};
  // Comp-channel records of this iteration, written at its end.
  CompEventBatch comp_batch_{&ctr_.comp};
};

}  // namespace uroce::engine
