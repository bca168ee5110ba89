#include "apps/uroced/cm_service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "apps/uroced/sysfs_tree.h"

namespace uroce::daemon {
namespace {

// How long a MAD waits for its peer's MAC (ARP), and address resolution
// for RESOLVE_IP when the application gives no timeout.
constexpr TimeNs kArpWait = 3 * kNsPerSec;
TimeNs mono_now() {
  return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

}  // namespace

CmService::CmService(std::vector<Device*> devices)
    : devices_(std::move(devices)),
      // Communication IDs and PSNs start from the clock so that a restarted
      // daemon does not reuse the IDs its predecessor's peers remember.
      machine_(static_cast<std::uint32_t>(mono_now() >> 10)),
      psn_state_(static_cast<std::uint32_t>(mono_now()) | 1) {}

CmService::~CmService() {
  stop();
  for (auto& [t, f] : files_) {
    if (f.event_wr >= 0) close(f.event_wr);
  }
}

void CmService::start() {
  stop_.store(false);
  for (Device* d : devices_) d->set_gsi_bell(&bell_);
  thread_ = std::thread([this] { run(); });
}

void CmService::stop() {
  stop_.store(true);
  bell_.wake();
  if (thread_.joinable()) thread_.join();
  for (Device* d : devices_) d->set_gsi_bell(nullptr);
}

void CmService::run() {
  TimeNs nap = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    bell_.nap(nap);
    if (stop_.load(std::memory_order_relaxed)) break;
    const TimeNs now = mono_now();
    tick(now);
    nap = next_nap(now);
  }
}

TimeNs CmService::next_nap(TimeNs now) const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!resolving_.empty() || !waiting_arp_.empty()) return kResolveNapMs * kNsPerMs;
  TimeNs nap = kIdleNapMs * kNsPerMs;
  if (const TimeNs due = machine_.next_deadline(); due != 0) {
    nap = std::min(nap, due > now ? due - now : 0);
  }
  return nap;
}

CmStatus CmService::status() const {
  std::lock_guard<std::mutex> lk(mu_);
  CmStatus s;
  s.service = ctr_;
  s.machine = machine_.counters();
  s.files = files_.size();
  s.ids = ids_.size();
  s.connections = machine_.conn_count();
  for (const auto& [h, id] : ids_) s.listeners += id.listening ? 1 : 0;
  return s;
}

int CmService::open_file(std::uint32_t* file, int* event_fd) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return errno;
  // The service never blocks on a slow reader: a full pipe loses a wake-up
  // byte (counted), never an event.
  (void)fcntl(p[1], F_SETFL, O_NONBLOCK);
  std::lock_guard<std::mutex> lk(mu_);
  const std::uint32_t t = file_tokens_.take([&](std::uint32_t n) { return files_.contains(n); });
  File& f = files_[t];
  f.token = t;
  f.event_wr = p[1];
  *file = t;
  *event_fd = p[0];
  return 0;
}

void CmService::close_file(std::uint32_t file) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = files_.find(file);
  if (it == files_.end()) return;
  const TimeNs now = mono_now();
  std::vector<std::uint32_t> mine;
  for (const auto& [h, id] : ids_) {
    if (id.file == file) mine.push_back(h);
  }
  for (std::uint32_t h : mine) {
    auto i = ids_.find(h);
    if (i != ids_.end()) destroy_id(i->second, now);
  }
  if (it->second.event_wr >= 0) close(it->second.event_wr);
  files_.erase(it);
  if (!mine.empty()) spdlog::info("cm: reclaimed {} rdma_cm id(s) of a closed file", mine.size());
  flush_mads(now);
  bell_.wake();
}

int CmService::command(std::uint32_t file, const ctl::CmCommandReq& req, ctl::CmCommandRep* rep) {
  std::lock_guard<std::mutex> lk(mu_);
  ++ctr_.commands;
  auto it = files_.find(file);
  if (it == files_.end()) {
    ++ctr_.bad_commands;
    return EBADF;
  }
  const TimeNs now = mono_now();
  const int rc = dispatch(it->second, req, rep, now);
  if (rc != 0) ++ctr_.bad_commands;
  on_cm_events(now);
  flush_mads(now);
  // The command may have started a resolution or a timer: the thread
  // works out its nap again.
  bell_.wake();
  return rc;
}

CmService::Id* CmService::find_id(std::uint32_t handle) {
  auto it = ids_.find(handle);
  if (it == ids_.end() || it->second.file != cur_file_) return nullptr;
  return &it->second;
}

int CmService::device_of_ip(std::uint32_t ip) const {
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i]->config().ip.v == ip) return static_cast<int>(i);
  }
  return -1;
}

int CmService::route(std::uint32_t dst) const {
  const int own = device_of_ip(dst);
  // One of our own addresses: reach it from another device of the daemon
  // on the same /24 when there is one (two devices of one daemon stand for
  // two hosts); else from the device itself (loopback).
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const std::uint32_t ip = devices_[i]->config().ip.v;
    if (static_cast<int>(i) != own && (ip >> 8) == (dst >> 8)) return static_cast<int>(i);
  }
  if (own >= 0) return own;
  return devices_.empty() ? -1 : 0;
}

std::uint32_t CmService::take_handle() {
  return handles_.take([&](std::uint32_t n) { return ids_.contains(n) || mcs_.contains(n); });
}

std::uint64_t CmService::guid_be(int dev) const {
  return node_guid_be(devices_[static_cast<std::size_t>(dev)]->config().mac);
}

int CmService::bind_addr(Id& id, std::uint32_t ip, std::uint16_t port) {
  if (id.bound) return EINVAL;
  // A loopback address binds like the wildcard, to no device (Linux's CM
  // treats 127/8 as "any": cma_any_addr). libfabric's verbs provider binds
  // "localhost" to probe for a source address when it is given none.
  if ((ip >> 24) == 127) ip = 0;
  int dev = -1;
  if (ip != 0) {
    dev = device_of_ip(ip);
    if (dev < 0) return EADDRNOTAVAIL;
  }
  if (port == 0) {
    do {
      port = next_port_++;
      if (next_port_ < 40000) next_port_ = 40000;
    } while (bound_.count({ip, port}) != 0 || bound_.count({0, port}) != 0);
  } else if (bound_.count({ip, port}) != 0) {
    return EADDRINUSE;
  }
  bound_.insert({ip, port});
  id.bound = true;
  id.dev = dev;
  id.src_ip = ip;
  id.src_port = port;
  return 0;
}

int CmService::start_resolve(Id& id, std::uint32_t src, std::uint32_t dst, std::uint16_t dst_port,
                             TimeNs now) {
  if (dst == 0) return EINVAL;
  if (!id.bound) {
    if (int rc = bind_addr(id, src, 0); rc != 0) return rc;
  } else if (src != 0 && src != id.src_ip) {
    return EINVAL;
  }
  if (id.dev < 0) {
    id.dev = route(dst);
    if (id.dev < 0) return ENODEV;
    id.src_ip = devices_[static_cast<std::size_t>(id.dev)]->config().ip.v;
  }
  id.dst_ip = dst;
  id.dst_port = dst_port;
  id.local_psn = next_psn();
  // A multicast group (mckey resolves one before it joins) needs no ARP:
  // its MAC is mapped from the address (docs/multicast.md).
  if (wire::Ipv4Addr{dst}.is_multicast()) {
    id.addr_resolved = true;
    queue_event(id.handle, id.handle, kEvAddrResolved, 0);
    return 0;
  }
  resolving_.push_back(PendingResolve{id.handle, now + kArpWait});
  return 0;
}

std::uint32_t CmService::next_psn() {
  // xorshift32: starting PSNs that differ from connection to connection.
  psn_state_ ^= psn_state_ << 13;
  psn_state_ ^= psn_state_ >> 17;
  psn_state_ ^= psn_state_ << 5;
  return psn_state_ & wire::kPsnMask;
}

void CmService::queue_event(std::uint32_t id, std::uint32_t counted, std::uint32_t event,
                            int status, const rdma_ucm_event_resp* param) {
  auto it = ids_.find(id);
  if (it == ids_.end()) return;
  QueuedEvent q;
  if (param != nullptr) q.resp = *param;
  q.id = id;
  q.counted = counted;
  q.resp.id = id;
  auto c = ids_.find(counted);
  q.resp.uid = c != ids_.end() ? c->second.uid : 0;
  q.resp.event = event;
  q.resp.status = static_cast<std::uint32_t>(status);
  push_event(it->second.file, q);
}

void CmService::push_event(std::uint32_t file, const QueuedEvent& q) {
  auto f = files_.find(file);
  if (f == files_.end()) return;
  f->second.events.push_back(q);
  ++ctr_.events;
  const char b = 1;
  if (write(f->second.event_wr, &b, 1) != 1) ++ctr_.event_pipe_full;
}

void CmService::fill_conn_param(const cm::Event& e, rdma_ucm_conn_param* p) const {
  const std::size_t n = std::min<std::size_t>(e.private_data.len, sizeof(p->private_data));
  std::memcpy(p->private_data, e.private_data.b.data(), n);
  p->private_data_len = static_cast<std::uint8_t>(n);
  p->qp_num = e.remote.qpn;
  p->qkey = e.remote.qkey;
  p->srq = e.remote.srq;
  // From our side's view, as the Linux CM reports them: the peer's
  // initiator depth bounds our responder resources, and the other way.
  p->responder_resources = e.remote.initiator_depth;
  p->initiator_depth = e.remote.responder_resources;
  p->flow_control = e.remote.flow_control;
  p->retry_count = e.remote.retry_count;
  p->rnr_retry_count = e.remote.rnr_retry_count;
  p->valid = 1;
}

void CmService::fill_ud_param(const cm::Event& e, std::uint32_t peer_ip,
                              rdma_ucm_ud_param* p) const {
  const std::size_t n = std::min<std::size_t>(e.private_data.len, sizeof(p->private_data));
  std::memcpy(p->private_data, e.private_data.b.data(), n);
  p->private_data_len = static_cast<std::uint8_t>(n);
  p->qp_num = e.remote.qpn;
  p->qkey = e.remote.qkey;
  const auto dgid = cm::ipv4_gid(peer_ip);
  std::memcpy(p->ah_attr.grh.dgid, dgid.data(), 16);
  p->ah_attr.grh.sgid_index = 1;  // ::ffff:IPv4, the RoCEv2 GID
  p->ah_attr.grh.hop_limit = 64;
  p->ah_attr.is_global = 1;
  p->ah_attr.port_num = 1;
}

void CmService::on_cm_events(TimeNs now) {
  (void)now;
  for (const cm::Event& e : out_.events) {
    if (e.type == cm::EventType::kConnectRequest || e.type == cm::EventType::kSidrRequest) {
      auto l = ids_.find(static_cast<std::uint32_t>(e.listener));
      if (l == ids_.end()) continue;
      const cm::Conn* c = machine_.find(e.conn);
      if (c == nullptr) continue;
      const std::uint32_t handle = take_handle();
      Id& n = ids_[handle];
      n.handle = handle;
      n.file = l->second.file;
      n.ps = l->second.ps;
      n.qp_type = l->second.qp_type;
      n.dev = static_cast<int>(c->path.device);
      n.src_ip = c->path.local_ip;
      n.src_port = e.local_port;
      n.dst_ip = c->path.remote_ip;
      n.dst_port = e.remote_port;
      n.addr_resolved = n.route_resolved = true;
      n.connected = true;
      n.conn = e.conn;
      n.local_psn = next_psn();
      conn_ids_[e.conn] = n.handle;
      rdma_ucm_event_resp r{};
      if (e.type == cm::EventType::kSidrRequest) {
        fill_ud_param(e, n.dst_ip, &r.param.ud);
      } else {
        fill_conn_param(e, &r.param.conn);
      }
      queue_event(n.handle, l->first, kEvConnectRequest, 0, &r);
      continue;
    }
    auto ci = conn_ids_.find(e.conn);
    if (ci == conn_ids_.end()) continue;
    rdma_ucm_event_resp r{};
    fill_conn_param(e, &r.param.conn);
    switch (e.type) {
      case cm::EventType::kConnectResponse:
        queue_event(ci->second, ci->second, kEvConnectResponse, 0, &r);
        break;
      case cm::EventType::kEstablished:
        queue_event(ci->second, ci->second, kEvEstablished, 0, &r);
        break;
      case cm::EventType::kRejected:
        queue_event(ci->second, ci->second, kEvRejected, e.status, &r);
        break;
      case cm::EventType::kUnreachable:
        queue_event(ci->second, ci->second, kEvUnreachable, -e.status);
        break;
      case cm::EventType::kConnectError:
        queue_event(ci->second, ci->second, kEvConnectError, -e.status);
        break;
      case cm::EventType::kDisconnected:
        queue_event(ci->second, ci->second, kEvDisconnected, 0, &r);
        break;
      case cm::EventType::kSidrReply: {
        // As the Linux CM reports it: ESTABLISHED with the peer's QP, Q_Key
        // and an AH, or UNREACHABLE with the SIDR_REP status.
        rdma_ucm_event_resp u{};
        auto idp = ids_.find(ci->second);
        fill_ud_param(e, idp == ids_.end() ? 0 : idp->second.dst_ip, &u.param.ud);
        queue_event(ci->second, ci->second, e.status == 0 ? kEvEstablished : kEvUnreachable,
                    e.status, &u);
        break;
      }
      case cm::EventType::kConnectRequest:
      case cm::EventType::kSidrRequest: break;
    }
  }
  out_.events.clear();
}

void CmService::flush_mads(TimeNs now) {
  for (const cm::OutMad& m : out_.mads) waiting_arp_.push_back(PendingMad{m, now + kArpWait});
  out_.mads.clear();
  std::vector<PendingMad> still;
  for (PendingMad& p : waiting_arp_) {
    if (p.mad.path.device >= devices_.size()) {
      ++ctr_.mads_foreign_device;
      continue;
    }
    Device* d = devices_[p.mad.path.device];
    wire::MacAddr mac{};
    if (!d->resolve(wire::Ipv4Addr{p.mad.path.remote_ip}, &mac)) {
      if (now >= p.deadline) {
        ++ctr_.mads_no_arp;
      } else {
        still.push_back(p);
      }
      continue;
    }
    if (d->gsi_send(wire::Ipv4Addr{p.mad.path.remote_ip}, mac, p.mad.mad.b) != 0) {
      ++ctr_.mads_no_buffer;
    }
  }
  waiting_arp_ = std::move(still);
}

void CmService::tick(TimeNs now) {
  std::lock_guard<std::mutex> lk(mu_);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (!devices_[i]->gsi_pending()) continue;
    rx_.clear();
    devices_[i]->gsi_drain(&rx_);
    for (const engine::GsiMad& g : rx_) {
      cm::Mad m;
      m.b = g.mad;
      const cm::Path from{static_cast<std::uint32_t>(i), devices_[i]->config().ip.v, g.peer_ip.v};
      machine_.on_mad(from, m, now, &out_);
    }
  }
  const TimeNs due = machine_.next_deadline();
  if (due != 0 && due <= now) machine_.on_timer(now, &out_);
  // Address resolution: ARP through the id's device.
  std::vector<PendingResolve> still;
  for (const PendingResolve& p : resolving_) {
    auto it = ids_.find(p.id);
    if (it == ids_.end()) continue;
    Id& id = it->second;
    wire::MacAddr mac{};
    if (devices_[static_cast<std::size_t>(id.dev)]->resolve(wire::Ipv4Addr{id.dst_ip}, &mac)) {
      id.addr_resolved = true;
      queue_event(id.handle, id.handle, kEvAddrResolved, 0);
    } else if (now >= p.deadline) {
      queue_event(id.handle, id.handle, kEvAddrError, -EHOSTUNREACH);
    } else {
      still.push_back(p);
    }
  }
  resolving_ = std::move(still);
  on_cm_events(now);
  flush_mads(now);
}

void CmService::destroy_id(Id& id, TimeNs now) {
  if (id.connected) {
    (void)machine_.destroy(id.conn, now, &out_);
    conn_ids_.erase(id.conn);
  }
  if (id.listening) (void)machine_.unlisten(id.src_ip, id.src_port, proto_of(id));
  if (id.bound && !id.connected) bound_.erase({id.src_ip, id.src_port});
  for (auto m = mcs_.begin(); m != mcs_.end();) {
    if (m->second.id == id.handle) {
      drop_mc(m->second);
      m = mcs_.erase(m);
    } else {
      ++m;
    }
  }
  auto f = files_.find(id.file);
  if (f != files_.end()) {
    auto& q = f->second.events;
    // Connect requests on a listener that goes away die with it, unseen.
    std::vector<std::uint32_t> orphans;
    for (const QueuedEvent& e : q) {
      if (e.counted == id.handle && e.id != id.handle) orphans.push_back(e.id);
    }
    q.erase(std::remove_if(q.begin(), q.end(),
                           [&](const QueuedEvent& e) {
                             return e.id == id.handle || e.counted == id.handle;
                           }),
            q.end());
    for (std::uint32_t o : orphans) {
      auto oi = ids_.find(o);
      if (oi != ids_.end()) destroy_id(oi->second, now);
    }
  }
  ids_.erase(id.handle);
}

}  // namespace uroce::daemon
