// The daemon's connection manager service: the kernel's ucma ABI
// (<rdma/rdma_user_cm.h>) served to applications whose
// open("/dev/infiniband/rdma_cm") the interposer turned into a control
// connection (ctl CmOpen / CmCommand), over the I/O-free IBTA CM state
// machine (datapath/cm/machine.h), whose MADs travel through each device's
// QP1 (Vnic::gsi_send / gsi_drain). docs/cm.md describes what is served.
//
// Objects: a "file" per CmOpen (an rdma_cm fd of one process) with its
// event queue and event pipe (one byte per queued event: the fd the
// application polls); "ids" (rdma_cm_id) with handles unique in the daemon.
// Events wait in their file's queue until GET_EVENT takes them, as the
// kernel's do; destroying an id drops its queued events and returns how
// many it reported. Closing a file (the process exited or closed the fd)
// destroys all its ids: their connections are released on the wire.
//
// Threading: command() and open_file()/close_file() run on client session
// threads; a thread of the service's own drains the devices' QP1 queues,
// resolves addresses, runs the CM timers and sends MADs. One mutex guards
// all of it (control path only; the engine sees Engine::call). The thread
// naps until its next timer or a MAD's arrival (next_nap): in embedded
// mode it is a thread of the application's process, and a periodic tick
// there preempts a spinning application (docs/tails.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apps/uroced/cm_handles.h"
#include "apps/uroced/device.h"
#include "datapath/base/counter_fields.h"
#include "datapath/cm/machine.h"
#include "datapath/ctl/protocol.h"

// <rdma/rdma_user_cm.h> after the engine headers (<netinet/in.h> first).
#include <rdma/rdma_user_cm.h>

namespace uroce::daemon {

// What the service counts besides the machine's Counters.
struct CmServiceCounters {
  std::uint64_t commands = 0;
  std::uint64_t bad_commands = 0;         // refused with an errno
  std::uint64_t events = 0;               // queued for applications
  std::uint64_t event_pipe_full = 0;      // wake-up byte not written (pipe full)
  std::uint64_t mads_no_arp = 0;          // MADs dropped: peer's MAC unresolved in time
  std::uint64_t mads_no_buffer = 0;       // MADs the engine could not send
  std::uint64_t mads_foreign_device = 0;  // MAD from a device index we do not have
};

inline constexpr counters::FieldList<CmServiceCounters, 7> kCmServiceCounterFields{{
    {"commands", &CmServiceCounters::commands, "rdma_cm commands served"},
    {"bad_commands", &CmServiceCounters::bad_commands, "refused with an errno"},
    {"events", &CmServiceCounters::events, "queued for applications"},
    {"event_pipe_full", &CmServiceCounters::event_pipe_full,
     "wake-up byte not written (pipe full)"},
    {"mads_no_arp", &CmServiceCounters::mads_no_arp, "MADs dropped: peer's MAC unresolved in time"},
    {"mads_no_buffer", &CmServiceCounters::mads_no_buffer, "MADs the engine could not send"},
    {"mads_foreign_device", &CmServiceCounters::mads_foreign_device,
     "MAD from a device index we do not have"},
}};
static_assert(counters::covers(kCmServiceCounterFields));
constexpr const auto& counter_fields(const CmServiceCounters&) { return kCmServiceCounterFields; }

// What `uroce-ctl status` shows of the service.
struct CmStatus {
  CmServiceCounters service{};
  cm::Counters machine{};
  std::size_t files = 0, ids = 0, listeners = 0, connections = 0;
};

class CmService {
 public:
  explicit CmService(std::vector<Device*> devices);
  ~CmService();
  CmService(const CmService&) = delete;
  CmService& operator=(const CmService&) = delete;

  void start();
  void stop();

  // A new file; *event_fd gets the read end of its event pipe (the caller
  // sends it to the application and closes its copy). 0 or errno.
  int open_file(std::uint32_t* file, int* event_fd);
  // Destroys every id of the file (a process that died or closed the fd).
  void close_file(std::uint32_t file);
  // One ucma command of `file`; 0 or the errno the write() returns.
  int command(std::uint32_t file, const ctl::CmCommandReq& req, ctl::CmCommandRep* rep);

  // One iteration of the service thread (tests drive it by hand): QP1 in
  // (from the devices that hold a MAD), address resolution, timers, MADs
  // out.
  void tick(TimeNs now);
  // How long the service thread naps after a tick at `now`: 1 ms while an
  // address or a MAD's next hop is being resolved (ARP is polled), until
  // the CM machine's next timer, and at most kIdleNapMs. A MAD's arrival
  // (the devices' GSI queues wake bell_) and every command end the nap at once.
  TimeNs next_nap(TimeNs now) const;
  static constexpr int kResolveNapMs = 1;
  static constexpr int kIdleNapMs = 50;

  CmStatus status() const;

 private:
  struct Id {
    std::uint32_t handle = 0;
    std::uint32_t file = 0;
    std::uint64_t uid = 0;
    std::uint16_t ps = 0;
    std::uint8_t qp_type = 0;
    int dev = -1;  // index into devices_, -1 while unbound to a device
    std::uint32_t src_ip = 0;
    std::uint16_t src_port = 0;
    std::uint32_t dst_ip = 0;
    std::uint16_t dst_port = 0;
    bool bound = false;
    bool addr_resolved = false;
    bool route_resolved = false;
    bool listening = false;
    bool connected = false;  // a CM connection exists (conn)
    cm::ConnId conn = 0;
    std::uint32_t local_psn = 0;
    cm::QpParams local{};
    std::uint32_t events_reported = 0;
  };
  struct QueuedEvent {
    std::uint32_t id = 0;       // the id the event is about
    std::uint32_t counted = 0;  // the id whose events_reported it raises
    std::uint32_t mc = 0;       // and the multicast join's, for its events
    rdma_ucm_event_resp resp{};
  };
  // A multicast join of an id (ucma_mcast.cpp): its own handle, as the
  // kernel's ucma gives one, and the application's context (uid).
  struct Mc {
    std::uint32_t handle = 0;
    std::uint32_t id = 0;
    std::uint64_t uid = 0;
    std::uint32_t group_ip = 0;
    std::uint32_t events_reported = 0;
  };
  struct File {
    std::uint32_t token = 0;
    int event_wr = -1;
    std::deque<QueuedEvent> events;
  };
  struct PendingResolve {
    std::uint32_t id = 0;
    TimeNs deadline = 0;
  };
  struct PendingMad {
    cm::OutMad mad;
    TimeNs deadline = 0;
  };

  // ucma_commands.cpp: one handler per command, mu_ held.
  int dispatch(File& f, const ctl::CmCommandReq& req, ctl::CmCommandRep* rep, TimeNs now);
  int on_create_id(File& f, const std::uint8_t* b, ctl::CmCommandRep* rep);
  int on_destroy_id(const std::uint8_t* b, ctl::CmCommandRep* rep, TimeNs now);
  template <class Cmd>
  int on_bind_cmd(const std::uint8_t* b);
  int on_resolve_ip(const std::uint8_t* b, TimeNs now);
  int on_resolve_addr(const std::uint8_t* b, TimeNs now);
  int on_resolve_route(const std::uint8_t* b);
  int on_query_route(const std::uint8_t* b, ctl::CmCommandRep* rep);
  int on_connect(const std::uint8_t* b, TimeNs now);
  int on_listen(const std::uint8_t* b, TimeNs now);
  int on_accept(const std::uint8_t* b, TimeNs now);
  int on_reject(const std::uint8_t* b, TimeNs now);
  int on_disconnect(const std::uint8_t* b, TimeNs now);
  int on_init_qp_attr(const std::uint8_t* b, ctl::CmCommandRep* rep);
  int on_get_event(File& f, const std::uint8_t* b, ctl::CmCommandRep* rep);
  int on_set_option(const std::uint8_t* b);
  int on_migrate_id(File& f, std::uint32_t from_file, const std::uint8_t* b,
                    ctl::CmCommandRep* rep);

  // ucma_mcast.cpp: JOIN_IP_MCAST, JOIN_MCAST, LEAVE_MCAST (mu_ held).
  int on_join_ip_mcast(const std::uint8_t* b, ctl::CmCommandRep* rep);
  int on_join_mcast(const std::uint8_t* b, ctl::CmCommandRep* rep);
  int on_leave_mcast(const std::uint8_t* b, ctl::CmCommandRep* rep);
  int join(Id& id, const void* addr, std::uint64_t uid, std::uint64_t response,
           ctl::CmCommandRep* rep);
  // Forgets join `mc` and the events of it still queued.
  void drop_mc(const Mc& mc);

  // cm_service.cpp
  // An id of the file whose command is being served (cur_file_): the ids
  // of other files (other processes) are ENOENT, as never issued.
  Id* find_id(std::uint32_t handle);
  int device_of_ip(std::uint32_t ip) const;
  // The device a destination is reached from (docs/cm.md, "Routing").
  int route(std::uint32_t dst) const;
  int bind_addr(Id& id, std::uint32_t ip, std::uint16_t port);
  int start_resolve(Id& id, std::uint32_t src, std::uint32_t dst, std::uint16_t dst_port,
                    TimeNs now);
  std::uint32_t next_psn();
  void queue_event(std::uint32_t id, std::uint32_t counted, std::uint32_t event, int status,
                   const rdma_ucm_event_resp* param = nullptr);
  // Queues `q` for `file` and writes its wake-up byte.
  void push_event(std::uint32_t file, const QueuedEvent& q);
  void on_cm_events(TimeNs now);
  void flush_mads(TimeNs now);
  void destroy_id(Id& id, TimeNs now);
  void fill_conn_param(const cm::Event& e, rdma_ucm_conn_param* p) const;
  // An event's UD parameters: the peer's QP, Q_Key and an AH to it.
  void fill_ud_param(const cm::Event& e, std::uint32_t peer_ip, rdma_ucm_ud_param* p) const;
  static std::uint8_t proto_of(const Id& id) {
    return id.ps == RDMA_PS_UDP ? wire::kIpProtoUdp : wire::kIpProtoTcp;
  }
  std::uint64_t guid_be(int dev) const;
  // A handle for a new id or join: in neither ids_ nor mcs_. Under mu_.
  std::uint32_t take_handle();
  void run();

  std::vector<Device*> devices_;
  mutable std::mutex mu_;
  cm::Machine machine_;
  cm::Output out_;
  std::map<std::uint32_t, File> files_;
  std::map<std::uint32_t, Id> ids_;
  std::map<std::uint32_t, Mc> mcs_;
  std::unordered_map<cm::ConnId, std::uint32_t> conn_ids_;
  std::set<std::pair<std::uint32_t, std::uint16_t>> bound_;
  std::vector<PendingResolve> resolving_;
  std::vector<PendingMad> waiting_arp_;
  std::vector<engine::GsiMad> rx_;
  std::uint32_t cur_file_ = 0;
  // Ids' and joins' handles, and file tokens: never one in use (cm_handles.h).
  CmHandles handles_;
  CmHandles file_tokens_;
  std::uint16_t next_port_ = 40000;
  std::uint32_t psn_state_;
  CmServiceCounters ctr_{};
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // Woken by the devices' GSI queues (gsi_queue.h), command(), close_file()
  // and stop().
  engine::WakeWord bell_;
};

// RDMA_PS_UDP's Q_Key (librdmacm's RDMA_UDP_QKEY, the kernel's too).
inline constexpr std::uint32_t kUdpQkey = 0x01234567;

// rdma_cm event numbers (enum rdma_cm_event_type of librdmacm's
// <rdma/rdma_cma.h>, which the ABI carries in rdma_ucm_event_resp.event).
enum UcmaEvent : std::uint32_t {
  kEvAddrResolved = 0,
  kEvAddrError = 1,
  kEvRouteResolved = 2,
  kEvRouteError = 3,
  kEvConnectRequest = 4,
  kEvConnectResponse = 5,
  kEvConnectError = 6,
  kEvUnreachable = 7,
  kEvRejected = 8,
  kEvEstablished = 9,
  kEvDisconnected = 10,
  kEvMulticastJoin = 12,
};

}  // namespace uroce::daemon
