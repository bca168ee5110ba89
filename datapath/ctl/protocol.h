// The control protocol between the verbs provider (liburoce-rdmav34.so, in
// the application) and uroced: one message struct per verb, carried over a
// Unix SOCK_SEQPACKET socket (one message per packet, so framing is the
// kernel's), file descriptors alongside with SCM_RIGHTS (socket.h).
//
// Every message starts with MsgHeader; a reply echoes op and seq and carries
// a status: 0 or a positive errno value, which the provider returns as the
// verb's errno (rdma-core convention). Only the data path (post, poll,
// completion arming) bypasses this socket, through the shared rings.
//
//   request  = MsgHeader | <Op>Req               [+ fds listed per op]
//   reply    = MsgHeader | ReplyStatus | <Op>Rep  [+ fds listed per op]
//              (an error reply is MsgHeader | ReplyStatus, nothing more)
//
// Rules both sides enforce (the daemon treats every byte from a client as
// hostile):
//   - magic and version must match; otherwise the daemon replies
//     EPROTONOSUPPORT and closes the connection.
//   - header.length equals the bytes received and sizeof(MsgHeader) +
//     sizeof(<Op>Req) exactly (EBADMSG otherwise; JSON bodies excepted);
//     an unknown op gets EOPNOTSUPP.
//   - a request carries exactly the fds its op lists (EBADMSG otherwise;
//     surplus fds are closed).
//   - handles are per connection: a handle another client created, or one
//     already destroyed, gets ENOENT, exactly as a handle never issued.
//   - sizes are bounded by the device's limits (EINVAL over them).
// The first request on a connection must be Hello; anything else before it
// gets EPROTO.
//
// Versioning: kVersion changes whenever a struct here changes; the layouts
// are plain C (fixed-width fields, natural alignment, explicit padding) so
// that a provider and a daemon built apart agree; static_asserts pin every
// size. Public verbs structs (ibv_qp_attr, ibv_ah_attr, ibv_device_attr,
// ibv_port_attr, ibv_srq_attr) are embedded as they are: their layout is
// libibverbs' public ABI and holds no pointers.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace uroce::ctl {

inline constexpr std::uint32_t kMagic = 0x45435255;  // "URCE" little-endian
inline constexpr std::uint16_t kVersion = 11;
// Largest message either side sends or accepts (a status reply's JSON body
// is the only variable-length one).
inline constexpr std::size_t kMaxMessageBytes = 64 * 1024;
// Largest number of fds one message carries.
inline constexpr int kMaxFds = 4;
// Length of device and path names, NUL included.
inline constexpr std::size_t kNameBytes = 64;

enum class Op : std::uint16_t {
  kHello = 1,
  kQueryPort = 2,
  kAllocPd = 3,
  kDeallocPd = 4,
  kRegMr = 5,
  kDeregMr = 6,
  kReregMr = 7,
  kCreateCompChannel = 8,
  kDestroyCompChannel = 9,
  kCreateCq = 10,
  kResizeCq = 11,
  kDestroyCq = 12,
  kCreateQp = 13,
  kModifyQp = 14,
  kQueryQp = 15,
  kDestroyQp = 16,
  kCreateSrq = 17,
  kModifySrq = 18,
  kQuerySrq = 19,
  kDestroySrq = 20,
  kCreateAh = 21,
  kDestroyAh = 22,
  kStatus = 23,
  kCmOpen = 24,
  kCmCommand = 25,
  kSetQpSched = 26,
  kAllocMw = 27,
  kDeallocMw = 28,
  kCapture = 29,
  kAttachMcast = 30,
  kDetachMcast = 31,
};
inline constexpr std::uint16_t kMaxOp = 31;

const char* op_name(Op op);

struct MsgHeader {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t op;      // an Op
  std::uint32_t length;  // bytes of the whole message, header included
  std::uint32_t seq;     // chosen by the requester, echoed in the reply
};
static_assert(sizeof(MsgHeader) == 16);

struct ReplyStatus {
  std::int32_t status;  // 0 or a positive errno value
  std::uint32_t reserved;
};
static_assert(sizeof(ReplyStatus) == 8);

// ---- Refusal notice ---------------------------------------------------------
// A connection the daemon has no thread for (over [limits] connections) or
// no descriptor for (accepted through its reserve descriptor) is closed at
// once. Before closing it, the daemon sends one unsolicited message: a reply
// header with op kRefusedOp and seq 0 and a status saying why, EAGAIN (no
// thread) or EMFILE/ENFILE (out of descriptors), nothing more. The
// provider's first request (Hello) then fails with that errno, so that
// ibv_open_device reports it, instead of EIO. (Root's connection is read
// instead, and its one request answered: Status served, anything else
// refused with the same status in an ordinary reply.)
inline constexpr std::uint16_t kRefusedOp = 0;

// ---- Hello ----------------------------------------------------------------
// Binds the connection to one device (one ibv_context). fds: [0] the write
// end of the context's async-event pipe; the daemon writes 16-byte
// ib_uverbs_async_event_desc records to it {element = the object's
// user_handle, event_type = enum ibv_event_type}.
// Reply fds: [0] the connection's arena (datapath/shm/arena_map.h): one
// memfd, sealed against shrinking, in chunks of arena_chunk_bytes (at most
// arena_max_chunks of them), holding the doorbell page and every ring this
// connection will have. No later reply carries a descriptor for a ring: the
// CreateCq, ResizeCq, CreateQp and CreateSrq replies name an offset and a
// length in the arena, which never cross a chunk boundary; the provider
// maps each chunk when an offset first names it.
// The doorbell page is doorbell_bytes at doorbell_offset, holding
// doorbell_count doorbells (datapath/shm/doorbell.h; both sides compute the
// layout from the count). After publishing new WQEs in a ring the provider
// rings that ring's doorbell (CreateQpRep, CreateSrqRep); the engine visits
// only rings whose doorbell rang.
struct HelloReq {
  char ibdev[kNameBytes];  // "uroce0", NUL-terminated
};
// flags & kHelloEngineCpu: the daemon's engine thread runs on CPU
// engine_cpu alone (it is pinned there). A provider thread that finds its CQ
// empty while it runs on that CPU yields it: the engine, which shares the
// core and is the only one that can fill the CQ, runs at once instead of at
// the end of the application's time slice (docs/engine.md, "Sharing a
// core"). Without the flag (an unpinned engine, the embedded engine) the
// provider never yields.
inline constexpr std::uint32_t kHelloEngineCpu = 1u << 0;
// shard / shards: the engine shard the connection was placed on, of how
// many (docs/engine.md "Several lcores"; 0 of 1 on an engine of one
// lcore). Every object of the connection lives on that shard; an embedded
// engine's progress calls name it (ctl/embedded_abi.h), so the threads
// that drive their own contexts run their own shards' loops.
struct HelloRep {
  ibv_device_attr device;  // what ibv_query_device returns
  std::uint32_t device_index;
  std::uint32_t gid_table_len;
  std::uint64_t max_mr_bytes;  // limit on one registration
  std::uint32_t doorbell_count;
  std::uint32_t arena_max_chunks;
  std::uint64_t doorbell_bytes;
  std::uint64_t doorbell_offset;
  std::uint64_t arena_chunk_bytes;
  std::uint32_t flags;  // kHello*
  std::uint32_t engine_cpu;
  std::uint32_t shard;
  std::uint32_t shards;
};

// ---- QueryPort --------------------------------------------------------------
struct QueryPortReq {
  std::uint8_t port_num;  // 1
  std::uint8_t pad[7];
};
struct QueryPortRep {
  ibv_port_attr attr;
};

// ---- PD -------------------------------------------------------------------
struct AllocPdReq {
  std::uint64_t reserved;
};
struct AllocPdRep {
  std::uint32_t pd_handle;
  std::uint32_t pad;
};
struct DeallocPdReq {
  std::uint32_t pd_handle;
  std::uint32_t pad;
};

// ---- MR -------------------------------------------------------------------
// How the registered bytes reach the daemon (docs/shm.md, "Memory
// registration"):
//   kMemfd: the provider re-maps the registered pages onto a memfd and
//     passes it: fds: [0] that memfd, sealed against shrinking. The daemon
//     maps map_len bytes of it; the registered bytes start at map_offset in
//     that mapping.
//   kProcessMapping: the pages map objects the client shares (a MAP_SHARED
//     file or memfd, anonymous shared memory, a SysV segment, the memfds
//     the provider moved private pages onto and closed), each contiguously,
//     at most kMaxMrObjects of them side by side (version 5; one before). No
//     fd; map_len and map_offset are 0. The daemon finds the objects in the
//     client's /proc/PID/maps, checks them there, and maps the same objects
//     through /proc/PID/map_files. What the provider sends since version 5:
//     a registration then costs neither side a descriptor.
// Deregistration unmaps it in the daemon (access is revoked).
enum class MrSource : std::uint32_t { kMemfd = 0, kProcessMapping = 1 };
// Most objects under one kProcessMapping registration.
inline constexpr unsigned kMaxMrObjects = 16;
struct RegMrReq {
  std::uint32_t pd_handle;
  std::uint32_t access;  // ibv_access_flags
  std::uint64_t addr;    // the application's address of the first byte
  std::uint64_t length;
  std::uint64_t iova;        // the address peers name (== addr for ibv_reg_mr)
  std::uint64_t map_len;     // bytes of the memfd to map (page multiple)
  std::uint64_t map_offset;  // where addr lies in that mapping
  MrSource source;
  std::uint32_t pad;
};
struct RegMrRep {
  std::uint32_t mr_handle;
  std::uint32_t lkey;
  std::uint32_t rkey;
  std::uint32_t pad;
};
struct DeregMrReq {
  std::uint32_t mr_handle;
  std::uint32_t pad;
};
// IBV_REREG_MR_CHANGE_* in flags. With CHANGE_TRANSLATION, the new memory
// as RegMr says it (source; fds: [0] the new memfd for kMemfd); otherwise
// no fd. Keys stay the same.
struct ReregMrReq {
  std::uint32_t mr_handle;
  std::uint32_t flags;
  std::uint32_t pd_handle;
  std::uint32_t access;
  std::uint64_t addr;
  std::uint64_t length;
  std::uint64_t iova;
  std::uint64_t map_len;
  std::uint64_t map_offset;
  MrSource source;
  std::uint32_t pad;
};
struct ReregMrRep {
  std::uint32_t lkey;
  std::uint32_t rkey;
};

// ---- Memory windows (docs/memory-windows.md) -----------------------------
// ibv_alloc_mw: a window of `type` (IBV_MW_TYPE_1 or _2) in the PD; EINVAL
// for another type, ENOENT for an unknown PD, ENOMEM past max_mw. The key is
// the window's rkey; binds happen on a QP's send queue (BIND_MW WRs), not
// here.
struct AllocMwReq {
  std::uint32_t pd_handle;
  std::uint32_t type;
};
struct AllocMwRep {
  std::uint32_t mw_handle;
  std::uint32_t rkey;
};
struct DeallocMwReq {
  std::uint32_t mw_handle;
  std::uint32_t pad;
};

// ---- Multicast (docs/multicast.md) ------------------------------------------
// ibv_attach_mcast / ibv_detach_mcast: UD QP `qp_handle` joins or leaves the
// group whose GID is `gid` (an IPv6 multicast address, or an IPv4 one
// IPv4-mapped); `lid` is ignored, as on any RoCE device. Attach: 0 when the
// QP is attached already; ENOENT (unknown QP), EINVAL (not a UD QP, not a
// group's GID), ENOMEM (rxe's limits), EOPNOTSUPP (a device of several
// engine lcores). Detach: EINVAL when the QP is not attached to the group.
struct McastReq {
  std::uint32_t qp_handle;
  std::uint16_t lid;
  std::uint16_t pad;
  std::uint8_t gid[16];
};

// ---- Completion channels --------------------------------------------------
// fds: [0] the write end of the channel's pipe. For each event the daemon
// writes one 8-byte ib_uverbs_comp_event_desc {cq_handle = the CQ's
// user_handle}, which ibv_get_cq_event reads.
struct CreateCompChannelReq {
  std::uint64_t reserved;
};
struct CreateCompChannelRep {
  std::uint32_t channel_handle;
  std::uint32_t pad;
};
struct DestroyCompChannelReq {
  std::uint32_t channel_handle;
  std::uint32_t pad;
};

// ---- CQ -------------------------------------------------------------------
// The CQ lives in region_bytes of the arena at region_offset (no fds):
//   [0, ring_bytes)                         the rxe-layout ring of ib_uverbs_wc
//   [ring_bytes, ring_bytes + 64)           CqNotify
// region_bytes = ring_bytes + kCqNotifyBytes, rounded up to a page.
inline constexpr std::uint64_t kNoChannel = 0;

struct CreateCqReq {
  std::uint32_t cqe;             // entries asked for (>= 1)
  std::uint32_t channel_handle;  // kNoChannel or a CreateCompChannel handle
  std::uint64_t user_handle;     // echoed in completion events (the ibv_cq*)
  std::uint32_t comp_vector;
  std::uint32_t pad;
};
struct CreateCqRep {
  std::uint32_t cq_handle;
  std::uint32_t cqe;             // entries it holds (ring capacity)
  std::uint32_t log2_elem_size;  // ring geometry (shm::RingGeometry)
  std::uint32_t log2_slots;
  std::uint64_t ring_bytes;
  std::uint64_t region_bytes;
  std::uint64_t region_offset;  // in the arena
};
// A new, larger or smaller, region at a new offset (no fds); the daemon
// moves the completions not yet polled into it and gives the old region
// back to the arena. The provider must not poll the old ring between
// sending this and attaching the new one.
struct ResizeCqReq {
  std::uint32_t cq_handle;
  std::uint32_t cqe;
};
using ResizeCqRep = CreateCqRep;
struct DestroyCqReq {
  std::uint32_t cq_handle;
  std::uint32_t pad;
};

// The arming word the provider sets (ibv_req_notify_cq) and the daemon
// clears when it sends the event: 0 disarmed, 1 next completion, 2 next
// solicited completion. Provider: store-release; daemon: load-acquire, then
// exchange to 0 before writing the event record (at most one event per arm).
struct CqNotify {
  std::uint32_t armed;
  std::uint32_t pad[15];
};
inline constexpr std::size_t kCqNotifyBytes = 64;
static_assert(sizeof(CqNotify) == kCqNotifyBytes);
inline constexpr std::uint32_t kCqDisarmed = 0;
inline constexpr std::uint32_t kCqArmedNext = 1;
inline constexpr std::uint32_t kCqArmedSolicited = 2;

// ---- QP -------------------------------------------------------------------
// The reply carries no fds: the SQ ring is sq_bytes of the arena at
// sq_offset, the RQ ring rq_bytes at rq_offset (both 0 when the QP uses an
// SRQ). Each holds one rxe-layout ring (page-rounded).
//
// DC QPs (docs/dc.md; version 6) are qp_type IBV_QPT_DRIVER with dc_type
// kDcDct or kDcDci (the values of uroce_dv.h's UROCE_DV_DCTYPE_*); every
// other qp_type has dc_type kDcNone and dct_key, dci_log_streams and
// dci_log_errored 0. The handles a DC type does not use are 0:
//   DCT  srq_handle and recv_cq_handle; send_cq_handle 0; cap's send fields
//        0 (no send queue: sq_bytes 0); dct_key is the DCT's access key.
//   DCI  send_cq_handle; recv_cq_handle and srq_handle 0; cap's receive
//        fields 0 (no receive queue: rq_bytes 0); dci_log_streams and
//        dci_log_errored within transport::dci_streams_valid.
// Anything else is EINVAL. A DC QP's number (a DCT's DCT number) is qpn.
inline constexpr std::uint32_t kDcNone = 0;
inline constexpr std::uint32_t kDcDct = 1;
inline constexpr std::uint32_t kDcDci = 2;
struct CreateQpReq {
  std::uint32_t pd_handle;
  std::uint32_t qp_type;  // IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_DRIVER
  std::uint32_t send_cq_handle;
  std::uint32_t recv_cq_handle;
  std::uint32_t srq_handle;   // 0: none
  std::uint32_t sq_sig_all;   // 0 or 1
  ibv_qp_cap cap;             // asked for
  std::uint32_t dc_type;      // kDcNone, kDcDct, kDcDci
  std::uint64_t user_handle;  // echoed in async events (the ibv_qp*)
  std::uint64_t dct_key;
  std::uint8_t dci_log_streams;
  std::uint8_t dci_log_errored;
  std::uint8_t pad[6];
};
struct CreateQpRep {
  std::uint32_t qp_handle;
  std::uint32_t qpn;
  ibv_qp_cap cap;  // granted (>= asked)
  std::uint32_t pad;
  std::uint32_t sq_log2_elem_size;
  std::uint32_t sq_log2_slots;
  std::uint32_t rq_log2_elem_size;  // 0 with an SRQ
  std::uint32_t rq_log2_slots;
  std::uint64_t sq_bytes;
  std::uint64_t rq_bytes;     // 0 with an SRQ
  std::uint32_t sq_doorbell;  // rung after publishing SQ WQEs
  std::uint32_t rq_doorbell;  // rung after publishing RQ WQEs
  std::uint64_t sq_offset;    // in the arena
  std::uint64_t rq_offset;
};
struct ModifyQpReq {
  std::uint32_t qp_handle;
  std::uint32_t attr_mask;  // ibv_qp_attr_mask
  ibv_qp_attr attr;
};
struct QueryQpReq {
  std::uint32_t qp_handle;
  std::uint32_t attr_mask;
};
struct QueryQpRep {
  ibv_qp_attr attr;
  ibv_qp_cap cap;  // as granted at creation
  std::uint32_t sq_sig_all;
  std::uint32_t pad;
};
// The daemon stops the QP, completes nothing more and drops it; events not
// yet delivered are discarded.
struct DestroyQpReq {
  std::uint32_t qp_handle;
  std::uint32_t pad;
};
// A QP's TX scheduling (ibv_modify_qp_rate_limit, IBV_QP_RATE_LIMIT,
// uroce_dv_modify_qp_sched): only the parts named in `flags` change.
//   kSchedRate   rate_kbps (0: no limit), max_burst_bytes (0: one typical
//                packet) and typical_pkt_bytes (0: a full frame of the MTU)
//   kSchedClass  tx_class in [0, 8), or kSchedClassFromDscp: the class the
//                QP's address vector's DSCP maps to (the default)
// EINVAL for other flags, a class out of range, or a rate outside
// [kMinRateKbps, kMaxRateKbps] (what ibv_query_device_ex reports as the
// packet-pacing capabilities; the maximum is the port's advertised 4X QDR
// rate, apps/uroced/device_attr.cpp).
inline constexpr std::uint32_t kSchedRate = 1;
inline constexpr std::uint32_t kSchedClass = 2;
inline constexpr std::uint8_t kSchedClassFromDscp = 0xff;
inline constexpr std::uint32_t kMinRateKbps = 1;
inline constexpr std::uint32_t kMaxRateKbps = 40'000'000;
struct SetQpSchedReq {
  std::uint32_t qp_handle;
  std::uint32_t flags;
  std::uint32_t rate_kbps;
  std::uint32_t max_burst_bytes;
  std::uint16_t typical_pkt_bytes;
  std::uint8_t tx_class;
  std::uint8_t pad;
  std::uint32_t pad2;
};

// ---- SRQ ------------------------------------------------------------------
// The SRQ's ring is rq_bytes of the arena at rq_offset (no fds).
struct CreateSrqReq {
  std::uint32_t pd_handle;
  std::uint32_t pad;
  ibv_srq_attr attr;          // max_wr, max_sge, srq_limit
  std::uint64_t user_handle;  // echoed in SRQ_LIMIT_REACHED (the ibv_srq*)
};
struct CreateSrqRep {
  std::uint32_t srq_handle;
  std::uint32_t srq_num;
  ibv_srq_attr attr;  // granted
  std::uint32_t log2_elem_size;
  std::uint32_t log2_slots;
  std::uint64_t rq_bytes;
  std::uint32_t doorbell;  // rung after publishing WQEs
  std::uint32_t pad;
  std::uint64_t rq_offset;  // in the arena
};
struct ModifySrqReq {
  std::uint32_t srq_handle;
  std::uint32_t attr_mask;  // ibv_srq_attr_mask
  ibv_srq_attr attr;
};
struct QuerySrqReq {
  std::uint32_t srq_handle;
  std::uint32_t pad;
};
struct QuerySrqRep {
  ibv_srq_attr attr;
};
struct DestroySrqReq {
  std::uint32_t srq_handle;
  std::uint32_t pad;
};

// ---- AH -------------------------------------------------------------------
// The daemon resolves the GID to IPv4 and MAC (ARP) before replying; the
// handle is what UD send WQEs carry as wr.ud.ah_num (never 0). The AH
// answers only for QPs of the same client and PD.
struct CreateAhReq {
  std::uint32_t pd_handle;
  std::uint32_t pad;
  ibv_ah_attr attr;
};
struct CreateAhRep {
  std::uint32_t ah_handle;
  std::uint32_t pad;
};
struct DestroyAhReq {
  std::uint32_t ah_handle;
  std::uint32_t pad;
};

// ---- Status (uroce-ctl) -----------------------------------------------------
// Needs no Hello. The reply body is UTF-8 JSON, not NUL-terminated, its
// length given by header.length (apps/uroced/status_json.h lists the
// fields).
struct StatusReq {
  std::uint32_t flags;  // kStatus* bits
  std::uint32_t pad;
};
inline constexpr std::uint32_t kStatusQps = 1u << 0;      // per-QP counters
inline constexpr std::uint32_t kStatusClients = 1u << 1;  // clients and objects

// ---- Capture (uroce-ctl capture, docs/capture.md) ---------------------------
// Needs no Hello; root only (EPERM otherwise). fds: [0] one end of a
// connected AF_UNIX SOCK_STREAM socket pair (ENOTSOCK otherwise), to which
// the daemon writes the device's frames, both directions, as a pcapng
// stream (datapath/port/capture_writer.h) from a thread of its own, after
// this reply. The capture ends, with an interface statistics block and the
// close of that socket, after `count` frames, when the reader shuts its
// end down for writing (a polite stop: the frames already taken are still
// written) or closes it (the rest is lost), or when the daemon stops.
// Errors: ENODEV no such device, EBUSY a capture of it already runs,
// EINVAL a snaplen below kMinSnaplen, ENOMEM no memory for its buffers.
inline constexpr std::uint32_t kMinSnaplen = 64;
struct CaptureReq {
  char device[kNameBytes];  // NUL-terminated
  std::uint64_t count;      // frames, then the capture ends; 0: no limit
  std::uint32_t snaplen;    // bytes kept of each frame; 0: whole frames
  std::uint32_t pad;
};
struct CaptureRep {
  std::uint32_t port_id;  // the DPDK port (its pcapng interface is its order)
  std::uint32_t queues;   // RX and TX queues tapped
  std::uint32_t snaplen;  // bytes kept of each frame (at most the port's largest frame)
  std::uint32_t pad;
};

// ---- Connection manager (docs/cm.md) --------------------------------------
// A connection that opens /dev/infiniband/rdma_cm for an application (the
// interposer, verbs-provider/ucma_preload.cpp) sends CmOpen instead of
// Hello; it may then send CmCommand only. The daemon's CM service keeps one
// "file" per such connection, reclaimed when it closes.
// CmOpen reply fds: [0] the read end of the file's event pipe: one byte per
// event queued for the file (its readiness is the rdma_cm fd's readiness).
struct CmOpenReq {
  std::uint64_t reserved;
};
struct CmOpenRep {
  std::uint32_t file;  // names this file in MIGRATE_ID (CmCommandReq.migrate_file)
  std::uint32_t pad;
};
// One ucma command (<rdma/rdma_user_cm.h>) as the application wrote it:
// the rdma_ucm_cmd_hdr fields and `in` bytes of body. For MIGRATE_ID the
// interposer puts the target file's CmOpenRep.file in migrate_file (the
// body's fd means nothing to the daemon).
inline constexpr std::size_t kUcmaMaxBody = 320;
inline constexpr std::size_t kUcmaMaxResponse = 352;
struct CmCommandReq {
  std::uint32_t cmd;
  std::uint16_t in;
  std::uint16_t out;
  std::uint32_t migrate_file;
  std::uint32_t pad;
  std::uint8_t body[kUcmaMaxBody];
};
// What the kernel would have copied to the command's `response` pointer:
// resp_len bytes to response_addr (the interposer copies them; 0: none).
// The reply status is the write()'s errno.
struct CmCommandRep {
  std::uint64_t response_addr;
  std::uint32_t resp_len;
  std::uint32_t pad;
  std::uint8_t resp[kUcmaMaxResponse];
};

// ---- Op -> request/reply types ----------------------------------------------
struct NoReply {};
template <Op>
struct OpTypes;
#define UROCE_CTL_OP(OP, REQ, REP) \
  template <>                      \
  struct OpTypes<Op::OP> {         \
    using Req = REQ;               \
    using Rep = REP;               \
  };
UROCE_CTL_OP(kHello, HelloReq, HelloRep)
UROCE_CTL_OP(kQueryPort, QueryPortReq, QueryPortRep)
UROCE_CTL_OP(kAllocPd, AllocPdReq, AllocPdRep)
UROCE_CTL_OP(kDeallocPd, DeallocPdReq, NoReply)
UROCE_CTL_OP(kRegMr, RegMrReq, RegMrRep)
UROCE_CTL_OP(kDeregMr, DeregMrReq, NoReply)
UROCE_CTL_OP(kReregMr, ReregMrReq, ReregMrRep)
UROCE_CTL_OP(kCreateCompChannel, CreateCompChannelReq, CreateCompChannelRep)
UROCE_CTL_OP(kDestroyCompChannel, DestroyCompChannelReq, NoReply)
UROCE_CTL_OP(kCreateCq, CreateCqReq, CreateCqRep)
UROCE_CTL_OP(kResizeCq, ResizeCqReq, ResizeCqRep)
UROCE_CTL_OP(kDestroyCq, DestroyCqReq, NoReply)
UROCE_CTL_OP(kCreateQp, CreateQpReq, CreateQpRep)
UROCE_CTL_OP(kModifyQp, ModifyQpReq, NoReply)
UROCE_CTL_OP(kQueryQp, QueryQpReq, QueryQpRep)
UROCE_CTL_OP(kDestroyQp, DestroyQpReq, NoReply)
UROCE_CTL_OP(kCreateSrq, CreateSrqReq, CreateSrqRep)
UROCE_CTL_OP(kModifySrq, ModifySrqReq, NoReply)
UROCE_CTL_OP(kQuerySrq, QuerySrqReq, QuerySrqRep)
UROCE_CTL_OP(kDestroySrq, DestroySrqReq, NoReply)
UROCE_CTL_OP(kCreateAh, CreateAhReq, CreateAhRep)
UROCE_CTL_OP(kDestroyAh, DestroyAhReq, NoReply)
UROCE_CTL_OP(kStatus, StatusReq, NoReply)
UROCE_CTL_OP(kCmOpen, CmOpenReq, CmOpenRep)
UROCE_CTL_OP(kCmCommand, CmCommandReq, CmCommandRep)
UROCE_CTL_OP(kSetQpSched, SetQpSchedReq, NoReply)
UROCE_CTL_OP(kAllocMw, AllocMwReq, AllocMwRep)
UROCE_CTL_OP(kDeallocMw, DeallocMwReq, NoReply)
UROCE_CTL_OP(kCapture, CaptureReq, CaptureRep)
UROCE_CTL_OP(kAttachMcast, McastReq, NoReply)
UROCE_CTL_OP(kDetachMcast, McastReq, NoReply)
#undef UROCE_CTL_OP

// fds each request carries.
int request_fd_count(Op op);

// The exact byte size a request of `op` must have, header included; 0 for an
// unknown op.
std::size_t request_bytes(Op op);

template <class T>
inline constexpr bool kWireStruct = std::is_trivially_copyable_v<T>&& std::is_standard_layout_v<T>;

static_assert(sizeof(HelloReq) == 64);
static_assert(sizeof(HelloRep) == 296);
static_assert(sizeof(QueryPortReq) == 8);
static_assert(sizeof(QueryPortRep) == sizeof(ibv_port_attr));
static_assert(sizeof(AllocPdReq) == 8 && sizeof(AllocPdRep) == 8 && sizeof(DeallocPdReq) == 8);
static_assert(sizeof(RegMrReq) == 56 && sizeof(RegMrRep) == 16 && sizeof(DeregMrReq) == 8);
static_assert(sizeof(ReregMrReq) == 64 && sizeof(ReregMrRep) == 8);
static_assert(sizeof(AllocMwReq) == 8 && sizeof(AllocMwRep) == 8 && sizeof(DeallocMwReq) == 8);
static_assert(sizeof(CreateCqReq) == 24 && sizeof(CreateCqRep) == 40);
static_assert(sizeof(CreateQpReq) == 72 && sizeof(CreateQpRep) == 88);
static_assert(offsetof(CreateQpReq, dc_type) == 44 && offsetof(CreateQpReq, dct_key) == 56 &&
              kWireStruct<CreateQpReq>);
static_assert(sizeof(ModifyQpReq) == 8 + sizeof(ibv_qp_attr));
static_assert(sizeof(CreateSrqReq) == 32 && sizeof(CreateSrqRep) == 56);
static_assert(sizeof(CreateAhReq) == 8 + sizeof(ibv_ah_attr));
static_assert(sizeof(CmOpenReq) == 8 && sizeof(CmOpenRep) == 8);
static_assert(sizeof(SetQpSchedReq) == 24 && kWireStruct<SetQpSchedReq>);
static_assert(sizeof(CmCommandReq) == 336 && sizeof(CmCommandRep) == 368);
static_assert(sizeof(McastReq) == 24 && kWireStruct<McastReq>);
static_assert(sizeof(CaptureReq) == 80 && sizeof(CaptureRep) == 16 && kWireStruct<CaptureReq>);
static_assert(kWireStruct<HelloRep> && kWireStruct<ModifyQpReq> && kWireStruct<CreateQpRep> &&
              kWireStruct<CreateAhReq>);

}  // namespace uroce::ctl
