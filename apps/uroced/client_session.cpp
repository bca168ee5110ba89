#include "apps/uroced/client_session.h"

#include "datapath/engine/event_fd.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "apps/uroced/device_attr.h"
#include "apps/uroced/message_check.h"
#include "apps/uroced/qp_attr_convert.h"
#include "datapath/shm/rxe_layout.h"

namespace uroce::daemon {
namespace {

using ctl::Op;

constexpr std::uint64_t kPage = kPageSize;
// Largest reply body but Status's JSON (HelloRep is 264 bytes).
constexpr std::size_t kMaxRepBytes = 320;
// MR access flags uroced accepts; optional flags (IBV_ACCESS_OPTIONAL_RANGE)
// are hints a device may ignore, as libibverbs defines them.
constexpr std::uint32_t kMrAccessMask = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                        IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
                                        IBV_ACCESS_ZERO_BASED;

TimeNs steady_now() {
  return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// The write end of a pipe (async events, comp channels): what the daemon
// writes records to. Anything else (a socket, a file, a read end) is EINVAL.
bool is_pipe_write_end(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  const int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_ACCMODE) == O_WRONLY;
}

// A NUL within `n` bytes.
bool terminated(const char* s, std::size_t n) { return std::memchr(s, 0, n) != nullptr; }

// MR access rule of the verbs spec: remote write or atomic access needs
// local write.
bool valid_mr_access(std::uint32_t access) {
  const std::uint32_t a = access & ~static_cast<std::uint32_t>(IBV_ACCESS_OPTIONAL_RANGE);
  if ((a & ~kMrAccessMask) != 0) return false;
  if ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0 &&
      (a & IBV_ACCESS_LOCAL_WRITE) == 0) {
    return false;
  }
  return true;
}

const char* errname(int e) {
  switch (e) {
    case EBADMSG: return "EBADMSG";
    case EPROTO: return "EPROTO";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case ENODEV: return "ENODEV";
    case EBUSY: return "EBUSY";
    case ENOMEM: return "ENOMEM";
    case ENOSPC: return "ENOSPC";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    default: return "errno";
  }
}

}  // namespace

// ---- fd helpers -------------------------------------------------------------

ClientSession::InFds::~InFds() {
  for (int i = 0; i < n; ++i) {
    if (fd[i] >= 0) close(fd[i]);
  }
}

int ClientSession::InFds::take(int i) {
  const int f = fd[i];
  fd[i] = -1;
  return f;
}

// ---- life cycle -------------------------------------------------------------

ClientSession::ClientSession(const SessionEnv& env, int sock, std::uint32_t id)
    : env_(env),
      sock_(sock),
      id_(id),
      buf_(ctl::kMaxMessageBytes),
      log_limit_(kBadInputLogBurst, kNsPerSec) {
  (void)ctl::peer_cred(sock_, &cred_);
  summary_.id = id_;
  summary_.cred = cred_;
}

ClientSession::~ClientSession() {
  reclaim();
  if (sock_ >= 0) close(sock_);
}

void ClientSession::shutdown() { ::shutdown(sock_, SHUT_RDWR); }

void ClientSession::run() {
  spdlog::debug("client {} connected (pid {}, uid {})", id_, cred_.pid, cred_.uid);
  for (;;) {
    InFds fds;
    const ctl::IoResult r = ctl::recv_msg(sock_, buf_, std::span<int>(fds.fd, 16));
    if (r.err == ctl::IoError::kClosed) break;
    if (r.err == ctl::IoError::kSys) {
      if (r.sys_errno != ECONNRESET) {
        spdlog::warn("client {}: receive failed: {}", id_, std::strerror(r.sys_errno));
      }
      break;
    }
    if (!r.ok()) {
      // Longer than any request, or more fds than any request carries: the
      // kernel cut it (its fds are closed); the header cannot be trusted.
      ++requests_;
      bad_input(ctl::MsgHeader{}, EBADMSG, ctl::to_string(r.err));
      if (!send_reply(ctl::MsgHeader{}, EBADMSG, nullptr, 0, {})) break;
      refresh_summary();
      continue;
    }
    fds.n = r.nfds;
    ++requests_;
    const bool go_on = handle_message(std::span<const std::byte>(buf_.data(), r.bytes), fds);
    refresh_summary();
    if (!go_on) break;
  }
  // The peer sees end of file now, even before the server reaps this
  // session (the fd itself stays open until then: shutdown() from another
  // thread must never hit a reused fd number).
  ::shutdown(sock_, SHUT_RDWR);
  reclaim();
}

bool ClientSession::handle_message(std::span<const std::byte> msg, InFds& fds) {
  ctl::MsgHeader h;
  const MsgCheck c = check_request(msg, fds.n, &h);
  if (!c.ok()) {
    bad_input(h, c.status, to_string(c.fault));
    return send_reply(h, c.status, nullptr, 0, {}) && !c.close;
  }
  const auto op = static_cast<Op>(h.op);
  if (dev_ == nullptr && op != Op::kHello && op != Op::kStatus) {
    bad_input(h, EPROTO, "request before Hello");
    return send_reply(h, EPROTO, nullptr, 0, {});
  }
  if (dev_ != nullptr && op == Op::kHello) {
    bad_input(h, EPROTO, "second Hello on one connection");
    return send_reply(h, EPROTO, nullptr, 0, {});
  }
  dispatch(h, msg.subspan(sizeof(ctl::MsgHeader)), fds);
  return true;
}

template <Op O, class Handler>
void ClientSession::serve(const ctl::MsgHeader& h, std::span<const std::byte> body,
                          InFds& fds, Handler handler) {
  using Req = typename ctl::OpTypes<O>::Req;
  using Rep = typename ctl::OpTypes<O>::Rep;
  static_assert(sizeof(Rep) <= kMaxRepBytes);
  Req req;
  std::memcpy(&req, body.data(), sizeof(req));
  Rep rep{};
  OutFds out;
  const int rc = (this->*handler)(req, &rep, fds, &out);
  if (rc == ENOENT || rc == EINVAL || rc == ENODEV) {
    bad_input(h, rc, "refused");
  } else if (rc != 0) {
    spdlog::debug("client {}: {} failed: {}", id_, ctl::op_name(O), std::strerror(rc));
  }
  if (rc != 0) {
    (void)send_reply(h, rc, nullptr, 0, {});
  } else if constexpr (std::is_same_v<Rep, ctl::NoReply>) {
    (void)send_reply(h, 0, nullptr, 0, {});
  } else {
    (void)send_reply(h, 0, &rep, sizeof(rep), out);
  }
}

void ClientSession::dispatch(const ctl::MsgHeader& h, std::span<const std::byte> body,
                             InFds& fds) {
  using S = ClientSession;
  switch (static_cast<Op>(h.op)) {
    case Op::kHello: return serve<Op::kHello>(h, body, fds, &S::on_hello);
    case Op::kQueryPort: return serve<Op::kQueryPort>(h, body, fds, &S::on_query_port);
    case Op::kAllocPd: return serve<Op::kAllocPd>(h, body, fds, &S::on_alloc_pd);
    case Op::kDeallocPd: return serve<Op::kDeallocPd>(h, body, fds, &S::on_dealloc_pd);
    case Op::kRegMr: return serve<Op::kRegMr>(h, body, fds, &S::on_reg_mr);
    case Op::kDeregMr: return serve<Op::kDeregMr>(h, body, fds, &S::on_dereg_mr);
    case Op::kReregMr: return serve<Op::kReregMr>(h, body, fds, &S::on_rereg_mr);
    case Op::kCreateCompChannel:
      return serve<Op::kCreateCompChannel>(h, body, fds, &S::on_create_channel);
    case Op::kDestroyCompChannel:
      return serve<Op::kDestroyCompChannel>(h, body, fds, &S::on_destroy_channel);
    case Op::kCreateCq: return serve<Op::kCreateCq>(h, body, fds, &S::on_create_cq);
    case Op::kResizeCq: return serve<Op::kResizeCq>(h, body, fds, &S::on_resize_cq);
    case Op::kDestroyCq: return serve<Op::kDestroyCq>(h, body, fds, &S::on_destroy_cq);
    case Op::kCreateQp: return serve<Op::kCreateQp>(h, body, fds, &S::on_create_qp);
    case Op::kModifyQp: return serve<Op::kModifyQp>(h, body, fds, &S::on_modify_qp);
    case Op::kQueryQp: return serve<Op::kQueryQp>(h, body, fds, &S::on_query_qp);
    case Op::kDestroyQp: return serve<Op::kDestroyQp>(h, body, fds, &S::on_destroy_qp);
    case Op::kCreateSrq: return serve<Op::kCreateSrq>(h, body, fds, &S::on_create_srq);
    case Op::kModifySrq: return serve<Op::kModifySrq>(h, body, fds, &S::on_modify_srq);
    case Op::kQuerySrq: return serve<Op::kQuerySrq>(h, body, fds, &S::on_query_srq);
    case Op::kDestroySrq: return serve<Op::kDestroySrq>(h, body, fds, &S::on_destroy_srq);
    case Op::kCreateAh: return serve<Op::kCreateAh>(h, body, fds, &S::on_create_ah);
    case Op::kDestroyAh: return serve<Op::kDestroyAh>(h, body, fds, &S::on_destroy_ah);
    case Op::kStatus: {
      ctl::StatusReq req;
      std::memcpy(&req, body.data(), sizeof(req));
      return on_status(h, req);
    }
  }
}

bool ClientSession::send_reply(const ctl::MsgHeader& req, int status, const void* rep,
                               std::size_t rep_bytes, const OutFds& fds) {
  std::byte out[sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus) + kMaxRepBytes];
  ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, req.op,
                   static_cast<std::uint32_t>(sizeof(ctl::MsgHeader) +
                                              sizeof(ctl::ReplyStatus) + rep_bytes),
                   req.seq};
  const ctl::ReplyStatus st{status, 0};
  std::memcpy(out, &h, sizeof(h));
  std::memcpy(out + sizeof(h), &st, sizeof(st));
  if (rep_bytes != 0) std::memcpy(out + sizeof(h) + sizeof(st), rep, rep_bytes);
  const ctl::IoResult r = ctl::send_msg(sock_, std::span<const std::byte>(out, h.length),
                                        std::span<const int>(fds.fd, fds.n));
  if (!r.ok()) {
    spdlog::debug("client {}: reply not sent: {}", id_, std::strerror(r.sys_errno));
    return false;
  }
  return true;
}

void ClientSession::bad_input(const ctl::MsgHeader& h, int status, const std::string& why) {
  ++bad_requests_;
  std::uint64_t suppressed = 0;
  if (!log_limit_.allow(steady_now(), &suppressed)) return;
  const std::string more =
      suppressed != 0 ? fmt::format(" ({} similar lines suppressed)", suppressed) : "";
  spdlog::warn("client {} (pid {}, uid {}): bad request op {} ({}) seq {}: {}; replied {}{}",
               id_, cred_.pid, cred_.uid, h.op, ctl::op_name(static_cast<Op>(h.op)), h.seq,
               why, errname(status), more);
}

void ClientSession::refresh_summary() {
  ClientSummary s;
  s.id = id_;
  s.cred = cred_;
  if (dev_ != nullptr) s.device = dev_->config().name;
  for (const auto& [k, v] : pds_) s.pds.push_back(k);
  for (const auto& [k, v] : mrs_) s.mrs.push_back(k);
  for (const auto& [k, v] : channels_) s.channels.push_back(k);
  for (const auto& [k, v] : cqs_) s.cqs.push_back(k);
  for (const auto& [k, v] : srqs_) s.srqs.push_back(k);
  for (const auto& [k, v] : ahs_) s.ahs.push_back(k);
  for (const auto& [k, v] : qps_) s.qps.emplace_back(k, v.qpn);
  s.requests = requests_;
  s.bad_requests = bad_requests_;
  std::lock_guard<std::mutex> lk(summary_mu_);
  summary_ = std::move(s);
}

ClientSummary ClientSession::summary() const {
  std::lock_guard<std::mutex> lk(summary_mu_);
  return summary_;
}

// ---- reclaim ------------------------------------------------------------------

void ClientSession::keep_mapped(shm::SharedRegion&& r) {
  // Deliberately never unmapped, not even when the session ends: the engine
  // refused to let go, so it may still touch this memory. Process-lifetime
  // storage (never destroyed, so no exit-time unmap either).
  static std::mutex mu;
  static auto* kept = new std::vector<shm::SharedRegion>();
  if (!r.valid()) return;
  std::lock_guard<std::mutex> lk(mu);
  kept->push_back(std::move(r));
}

void ClientSession::destroy_qp_obj(std::uint32_t h, QpObj& q) {
  const int rc = dev_->destroy_qp(h);
  if (rc != 0 && rc != ENOENT) {
    spdlog::error("client {}: engine refused to destroy QP {} ({}); its rings stay mapped",
                  id_, h, std::strerror(rc));
    keep_mapped(std::move(q.sq));
    keep_mapped(std::move(q.rq));
  }
  if (auto it = pds_.find(q.pd); it != pds_.end()) --it->second.refs;
  if (auto it = cqs_.find(q.send_cq); it != cqs_.end()) --it->second.refs;
  if (auto it = cqs_.find(q.recv_cq); it != cqs_.end()) --it->second.refs;
  if (auto it = srqs_.find(q.srq); it != srqs_.end()) --it->second.refs;
}

void ClientSession::destroy_srq_obj(std::uint32_t h, SrqObj& s) {
  const int rc = dev_->destroy_srq(h);
  if (rc != 0 && rc != ENOENT) {
    spdlog::error("client {}: engine refused to destroy SRQ {} ({}); its ring stays mapped",
                  id_, h, std::strerror(rc));
    keep_mapped(std::move(s.region));
  }
  if (auto it = pds_.find(s.pd); it != pds_.end()) --it->second.refs;
}

void ClientSession::destroy_cq_obj(std::uint32_t h, CqObj& c) {
  const int rc = dev_->destroy_cq(h);
  if (rc != 0 && rc != ENOENT) {
    spdlog::error("client {}: engine refused to destroy CQ {} ({}); its ring stays mapped",
                  id_, h, std::strerror(rc));
    keep_mapped(std::move(c.region));
  }
  if (auto it = channels_.find(c.channel); it != channels_.end()) --it->second.refs;
}

void ClientSession::destroy_mr_obj(MrObj& m) {
  const int rc = dev_->dereg_mr(m.key);
  if (rc != 0) {
    spdlog::error("client {}: engine refused to deregister MR key {:#x} ({}); the memory "
                  "stays mapped",
                  id_, m.key, std::strerror(rc));
    keep_mapped(std::move(m.map));
  }
  if (auto it = pds_.find(m.pd); it != pds_.end()) --it->second.refs;
}

void ClientSession::reclaim() {
  if (reclaimed_) return;
  reclaimed_ = true;
  if (dev_ == nullptr) {
    std::lock_guard<std::mutex> lk(event_mu_);
    if (async_fd_ >= 0) close(async_fd_);
    async_fd_ = -1;
    spdlog::debug("client {} (pid {}) gone", id_, cred_.pid);
    return;
  }
  const std::size_t nqp = qps_.size(), nsrq = srqs_.size(), ncq = cqs_.size(),
                    nah = ahs_.size(), nmr = mrs_.size(), nch = channels_.size(),
                    npd = pds_.size();
  for (auto& [h, q] : qps_) destroy_qp_obj(h, q);
  qps_.clear();
  for (auto& [h, s] : srqs_) destroy_srq_obj(h, s);
  srqs_.clear();
  for (auto& [h, c] : cqs_) destroy_cq_obj(h, c);
  cqs_.clear();
  for (auto& [h, a] : ahs_) {
    const int rc = dev_->destroy_ah(h);
    if (rc != 0 && rc != ENOENT) {
      spdlog::error("client {}: engine refused to destroy AH {} ({})", id_, h,
                    std::strerror(rc));
    }
  }
  ahs_.clear();
  for (auto& [h, m] : mrs_) destroy_mr_obj(m);
  mrs_.clear();
  for (auto& [h, ch] : channels_) close(ch.fd);
  channels_.clear();
  pds_.clear();
  // The engine stops reading the doorbell page before it is unmapped.
  if (const int rc = dev_->close_client(id_); rc != 0) {
    spdlog::error("client {}: engine refused to close the client ({}); its doorbell page "
                  "stays mapped",
                  id_, std::strerror(rc));
    keep_mapped(std::move(bells_));
  }
  bells_.reset();
  {
    std::lock_guard<std::mutex> lk(event_mu_);
    if (async_fd_ >= 0) close(async_fd_);
    async_fd_ = -1;
  }
  if (nqp + nsrq + ncq + nah + nmr + nch + npd != 0) {
    spdlog::info("client {} (pid {}) gone: reclaimed {} QPs, {} SRQs, {} CQs, {} AHs, {} MRs, "
                 "{} comp channels, {} PDs on {}",
                 id_, cred_.pid, nqp, nsrq, ncq, nah, nmr, nch, npd, dev_->config().name);
  } else {
    spdlog::info("client {} (pid {}) gone", id_, cred_.pid);
  }
  {
    std::lock_guard<std::mutex> lk(event_mu_);
    dev_ = nullptr;
  }
  refresh_summary();
}

bool ClientSession::post_port_event(const Device* dev, ibv_event_type type) {
  std::lock_guard<std::mutex> lk(event_mu_);
  if (dev_ != dev || async_fd_ < 0) return false;
  // The element of a port event is the port number.
  return engine::write_async_event(async_fd_, 1, static_cast<std::uint32_t>(type)) ==
         engine::FdWrite::kOk;
}

// ---- handlers ---------------------------------------------------------------

int ClientSession::on_hello(const ctl::HelloReq& r, ctl::HelloRep* rep, InFds& in,
                            OutFds* out) {
  if (!terminated(r.ibdev, sizeof(r.ibdev))) return EINVAL;
  Device* dev = nullptr;
  for (Device* d : env_.devices) {
    if (d->config().name == r.ibdev) dev = d;
  }
  if (dev == nullptr) return ENODEV;
  const int fd = in.take(0);
  if (!is_pipe_write_end(fd)) {
    close(fd);
    return EINVAL;
  }
  (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const shm::DoorbellGeometry& g = dev->doorbell_geometry();
  const shm::ShmStatus ms = shm::SharedRegion::create("uroce-doorbells", g.bytes(), &bells_);
  int rc = ms.ok() ? 0 : (ms.sys_errno != 0 ? ms.sys_errno : ENOMEM);
  if (rc == 0) rc = dev->open_client(id_, bells_.data(), bells_.size());
  if (rc != 0) {
    bells_.reset();
    close(fd);
    return rc;
  }
  {
    std::lock_guard<std::mutex> lk(event_mu_);
    dev_ = dev;
    async_fd_ = fd;
  }
  rep->device = device_attr(*dev);
  rep->device_index = dev->index();
  rep->gid_table_len = kGidTableLen;
  rep->max_mr_bytes = kMaxMrBytes;
  rep->doorbell_count = g.count;
  rep->doorbell_bytes = bells_.size();
  out->add(bells_.fd());
  spdlog::info("client {} (pid {}) opened {}", id_, cred_.pid, dev->config().name);
  return 0;
}

int ClientSession::on_query_port(const ctl::QueryPortReq& r, ctl::QueryPortRep* rep, InFds&,
                                 OutFds*) {
  if (r.port_num != 1) return EINVAL;
  rep->attr = port_attr(*dev_);
  return 0;
}

int ClientSession::on_alloc_pd(const ctl::AllocPdReq&, ctl::AllocPdRep* rep, InFds&,
                               OutFds*) {
  if (pds_.size() >= kMaxPd) return ENOMEM;
  const std::uint32_t h = env_.handles->next();
  pds_.emplace(h, PdObj{});
  rep->pd_handle = h;
  return 0;
}

int ClientSession::on_dealloc_pd(const ctl::DeallocPdReq& r, ctl::NoReply*, InFds&,
                                 OutFds*) {
  const auto it = pds_.find(r.pd_handle);
  if (it == pds_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  pds_.erase(it);
  return 0;
}

int ClientSession::on_reg_mr(const ctl::RegMrReq& r, ctl::RegMrRep* rep, InFds& in,
                             OutFds*) {
  const int fd = in.take(0);
  shm::SharedRegion map;
  const auto pd = pds_.find(r.pd_handle);
  int rc = 0;
  if (pd == pds_.end()) {
    rc = ENOENT;
  } else if (!valid_mr_access(r.access) || r.length == 0 || r.length > kMaxMrBytes ||
             r.map_len == 0 || r.map_len % kPage != 0 || r.map_len > kMaxMrBytes + kPage ||
             r.map_offset > r.map_len || r.length > r.map_len - r.map_offset) {
    rc = EINVAL;
  }
  if (rc != 0) {
    close(fd);
    return rc;
  }
  // map_fd checks the fd is a memfd at least map_len long and sealed against
  // shrinking, so the mapping stays valid whatever the client does later.
  const shm::ShmStatus st = shm::SharedRegion::map_fd(fd, r.map_len, &map);
  if (!st.ok()) {
    spdlog::debug("client {}: reg_mr: {}", id_, shm::to_string(st.err));
    return st.err == shm::ShmError::kMap && st.sys_errno == ENOMEM ? ENOMEM : EINVAL;
  }
  engine::MrCreate m;
  m.desc.pd = r.pd_handle;
  m.desc.iova = r.iova;
  m.desc.length = r.length;
  m.desc.access = r.access & kMrAccessMask;
  m.desc.host = static_cast<std::uint8_t*>(map.data()) + r.map_offset;
  int err = 0;
  const std::uint32_t key = dev_->reg_mr(m, &err);
  if (key == 0) return err != 0 ? err : EINVAL;
  const std::uint32_t h = env_.handles->next();
  MrObj obj;
  obj.pd = r.pd_handle;
  obj.key = key;
  obj.access = m.desc.access;
  obj.addr = r.addr;
  obj.length = r.length;
  obj.iova = r.iova;
  obj.map_offset = r.map_offset;
  obj.map = std::move(map);
  mrs_.emplace(h, std::move(obj));
  ++pd->second.refs;
  rep->mr_handle = h;
  rep->lkey = key;
  rep->rkey = key;
  return 0;
}

int ClientSession::on_rereg_mr(const ctl::ReregMrReq& r, ctl::ReregMrRep* rep, InFds& in,
                               OutFds*) {
  const bool translation = (r.flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0;
  const int fd = translation ? in.take(0) : -1;
  auto fail = [&](int rc) {
    if (fd >= 0) close(fd);
    return rc;
  };
  const auto it = mrs_.find(r.mr_handle);
  if (it == mrs_.end()) return fail(ENOENT);
  MrObj& mr = it->second;
  if (r.flags == 0 || (r.flags & ~static_cast<std::uint32_t>(IBV_REREG_MR_FLAGS_SUPPORTED)) != 0) {
    return fail(EINVAL);
  }
  engine::MrCreate m;
  m.desc.pd = mr.pd;
  m.desc.iova = mr.iova;
  m.desc.length = mr.length;
  m.desc.access = mr.access;
  std::uint8_t* old_base = static_cast<std::uint8_t*>(mr.map.data());
  m.desc.host = nullptr;
  std::uint32_t new_pd = mr.pd;
  if ((r.flags & IBV_REREG_MR_CHANGE_PD) != 0) {
    if (pds_.find(r.pd_handle) == pds_.end()) return fail(ENOENT);
    new_pd = r.pd_handle;
    m.desc.pd = new_pd;
  }
  if ((r.flags & IBV_REREG_MR_CHANGE_ACCESS) != 0) {
    if (!valid_mr_access(r.access)) return fail(EINVAL);
    m.desc.access = r.access & kMrAccessMask;
  }
  shm::SharedRegion map;
  if (translation) {
    if (r.length == 0 || r.length > kMaxMrBytes || r.map_len == 0 || r.map_len % kPage != 0 ||
        r.map_len > kMaxMrBytes + kPage || r.map_offset > r.map_len ||
        r.length > r.map_len - r.map_offset) {
      return fail(EINVAL);
    }
    const shm::ShmStatus st = shm::SharedRegion::map_fd(fd, r.map_len, &map);
    if (!st.ok()) return EINVAL;  // map_fd closed fd
    m.desc.iova = r.iova;
    m.desc.length = r.length;
    m.desc.host = static_cast<std::uint8_t*>(map.data()) + r.map_offset;
  } else {
    // Same memory, same place in it.
    m.desc.host = old_base + mr.map_offset;
  }
  const int rc = dev_->rereg_mr(mr.key, m);
  if (rc != 0) return rc;
  if (new_pd != mr.pd) {
    --pds_[mr.pd].refs;
    ++pds_[new_pd].refs;
    mr.pd = new_pd;
  }
  mr.access = m.desc.access;
  if (translation) {
    mr.addr = r.addr;
    mr.iova = r.iova;
    mr.length = r.length;
    mr.map_offset = r.map_offset;
    mr.map = std::move(map);  // the old mapping goes only now: the engine let go
  }
  rep->lkey = mr.key;
  rep->rkey = mr.key;
  return 0;
}

int ClientSession::on_dereg_mr(const ctl::DeregMrReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = mrs_.find(r.mr_handle);
  if (it == mrs_.end()) return ENOENT;
  const int rc = dev_->dereg_mr(it->second.key);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  mrs_.erase(it);  // unmaps: the engine no longer reaches the memory
  return 0;
}

int ClientSession::on_create_channel(const ctl::CreateCompChannelReq&,
                                     ctl::CreateCompChannelRep* rep, InFds& in, OutFds*) {
  const int fd = in.take(0);
  if (!is_pipe_write_end(fd)) {
    close(fd);
    return EINVAL;
  }
  (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const std::uint32_t h = env_.handles->next();
  channels_.emplace(h, ChannelObj{fd, 0});
  rep->channel_handle = h;
  return 0;
}

int ClientSession::on_destroy_channel(const ctl::DestroyCompChannelReq& r, ctl::NoReply*,
                                      InFds&, OutFds*) {
  const auto it = channels_.find(r.channel_handle);
  if (it == channels_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  close(it->second.fd);
  channels_.erase(it);
  return 0;
}

int ClientSession::make_cq_region(std::uint32_t cqe, shm::SharedRegion* region,
                                  engine::RingMem* ring, ctl::CqNotify** notify) {
  shm::RingGeometry geo;
  if (shm::make_geometry(shm::cq_elem_bytes(), cqe, &geo) != shm::RingError::kOk) {
    return EINVAL;
  }
  const std::size_t ring_bytes = geo.bytes();
  const std::size_t region_bytes = round_up(ring_bytes + ctl::kCqNotifyBytes, kPage);
  const shm::ShmStatus st = shm::SharedRegion::create("uroce-cq", region_bytes, region);
  if (!st.ok()) return st.sys_errno == EMFILE || st.sys_errno == ENFILE ? EMFILE : ENOMEM;
  if (shm::ring_init(region->data(), ring_bytes, geo) != shm::RingError::kOk) return EINVAL;
  ring->mem = region->data();
  ring->bytes = ring_bytes;
  ring->geo = geo;
  *notify = reinterpret_cast<ctl::CqNotify*>(static_cast<std::byte*>(region->data()) +
                                             ring_bytes);
  return 0;
}

namespace {

void fill_cq_rep(std::uint32_t handle, const engine::RingMem& ring,
                 const shm::SharedRegion& region, ctl::CreateCqRep* rep) {
  rep->cq_handle = handle;
  rep->cqe = ring.geo.capacity();
  rep->log2_elem_size = ring.geo.log2_elem_size;
  rep->log2_slots = ring.geo.log2_slots;
  rep->ring_bytes = ring.bytes;
  rep->region_bytes = region.size();
}

}  // namespace

int ClientSession::on_create_cq(const ctl::CreateCqReq& r, ctl::CreateCqRep* rep, InFds&,
                                OutFds* out) {
  if (r.cqe == 0 || r.cqe > kMaxCqe || r.comp_vector != 0) return EINVAL;
  int channel_fd = -1;
  if (r.channel_handle != ctl::kNoChannel) {
    const auto ch = channels_.find(r.channel_handle);
    if (ch == channels_.end()) return ENOENT;
    channel_fd = ch->second.fd;
  }
  if (cqs_.size() >= dev_->config().max_cqs) return ENOMEM;
  CqObj cq;
  engine::RingMem ring;
  ctl::CqNotify* notify = nullptr;
  if (int rc = make_cq_region(r.cqe, &cq.region, &ring, &notify); rc != 0) return rc;
  const std::uint32_t h = env_.handles->next();
  engine::CqCreate c;
  c.id = h;
  c.ring = ring;
  c.notify = notify;
  c.channel_fd = channel_fd;
  c.user_handle = r.user_handle;
  c.async_fd = async_fd_;
  if (int rc = dev_->create_cq(c); rc != 0) return rc;
  cq.channel = r.channel_handle;
  cq.user_handle = r.user_handle;
  cq.cqe = ring.geo.capacity();
  fill_cq_rep(h, ring, cq.region, rep);
  auto [it, ok] = cqs_.emplace(h, std::move(cq));
  (void)ok;
  if (r.channel_handle != ctl::kNoChannel) ++channels_[r.channel_handle].refs;
  out->add(it->second.region.fd());
  return 0;
}

int ClientSession::on_resize_cq(const ctl::ResizeCqReq& r, ctl::ResizeCqRep* rep, InFds&,
                                OutFds* out) {
  const auto it = cqs_.find(r.cq_handle);
  if (it == cqs_.end()) return ENOENT;
  if (r.cqe == 0 || r.cqe > kMaxCqe) return EINVAL;
  shm::SharedRegion region;
  engine::RingMem ring;
  ctl::CqNotify* notify = nullptr;
  if (int rc = make_cq_region(r.cqe, &region, &ring, &notify); rc != 0) return rc;
  if (int rc = dev_->resize_cq(r.cq_handle, ring, notify); rc != 0) return rc;
  // The engine produces into the new ring now; the old one can go.
  it->second.region = std::move(region);
  it->second.cqe = ring.geo.capacity();
  fill_cq_rep(r.cq_handle, ring, it->second.region, rep);
  out->add(it->second.region.fd());
  return 0;
}

int ClientSession::on_destroy_cq(const ctl::DestroyCqReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = cqs_.find(r.cq_handle);
  if (it == cqs_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  const int rc = dev_->destroy_cq(r.cq_handle);
  if (rc != 0) return rc;
  if (it->second.channel != ctl::kNoChannel) --channels_[it->second.channel].refs;
  cqs_.erase(it);
  return 0;
}

namespace {

// A ring of `depth` elements of `elem_bytes` in a fresh region.
int make_ring(const char* name, std::size_t elem_bytes, std::uint32_t depth,
              shm::SharedRegion* region, engine::RingMem* ring) {
  shm::RingGeometry geo;
  if (shm::make_geometry(elem_bytes, std::max<std::uint32_t>(depth, 1), &geo) !=
      shm::RingError::kOk) {
    return EINVAL;
  }
  const shm::ShmStatus st = shm::SharedRegion::create(name, geo.bytes(), region);
  if (!st.ok()) return ENOMEM;
  if (shm::ring_init(region->data(), geo.bytes(), geo) != shm::RingError::kOk) return EINVAL;
  ring->mem = region->data();
  ring->bytes = geo.bytes();
  ring->geo = geo;
  return 0;
}

}  // namespace

int ClientSession::on_create_qp(const ctl::CreateQpReq& r, ctl::CreateQpRep* rep, InFds&,
                                OutFds* out) {
  const auto pd = pds_.find(r.pd_handle);
  const auto scq = cqs_.find(r.send_cq_handle);
  const auto rcq = cqs_.find(r.recv_cq_handle);
  if (pd == pds_.end() || scq == cqs_.end() || rcq == cqs_.end()) return ENOENT;
  auto srq = srqs_.end();
  if (r.srq_handle != 0) {
    srq = srqs_.find(r.srq_handle);
    if (srq == srqs_.end()) return ENOENT;
  }
  if (r.qp_type != IBV_QPT_RC && r.qp_type != IBV_QPT_UC && r.qp_type != IBV_QPT_UD) {
    return EINVAL;
  }
  const ibv_qp_cap& cap = r.cap;
  if (r.sq_sig_all > 1 || cap.max_send_wr > kMaxQpWr || cap.max_send_sge > kMaxSge ||
      cap.max_inline_data > kMaxInline ||
      (r.srq_handle == 0 && (cap.max_recv_wr > kMaxQpWr || cap.max_recv_sge > kMaxSge))) {
    return EINVAL;
  }
  if (qps_.size() >= dev_->config().max_qps) return ENOMEM;
  QpObj q;
  engine::RingMem sq, rq;
  if (int rc = make_ring("uroce-sq", shm::sq_elem_bytes(cap.max_send_sge, cap.max_inline_data),
                         cap.max_send_wr, &q.sq, &sq);
      rc != 0) {
    return rc;
  }
  if (r.srq_handle == 0) {
    if (int rc = make_ring("uroce-rq", shm::rq_elem_bytes(cap.max_recv_sge), cap.max_recv_wr,
                           &q.rq, &rq);
        rc != 0) {
      return rc;
    }
  }
  // Granted: what the rings hold (power-of-two rounding may exceed the ask),
  // within the transport's limits.
  ibv_qp_cap g{};
  const std::uint32_t sq_tail = sq.geo.elem_size() - shm::kSendWqeFlexOffset;
  g.max_send_wr = sq.geo.capacity();
  g.max_send_sge = std::min<std::uint32_t>(kMaxSge, sq_tail / shm::kRxeSgeBytes);
  g.max_inline_data = std::min<std::uint32_t>(kMaxInline, sq_tail);
  if (r.srq_handle == 0) {
    g.max_recv_wr = rq.geo.capacity();
    g.max_recv_sge = std::min<std::uint32_t>(
        kMaxSge, (rq.geo.elem_size() - shm::kRecvWqeFlexOffset) / shm::kRxeSgeBytes);
  }
  std::uint32_t qpn = 0;
  if (int rc = dev_->alloc_qpn(&qpn); rc != 0) return rc;
  const std::uint32_t h = env_.handles->next();
  engine::QpCreate c;
  c.id = h;
  c.client = id_;
  c.type = static_cast<transport::QpType>(r.qp_type);
  c.qpn = qpn;
  c.pd = r.pd_handle;
  c.send_cq = r.send_cq_handle;
  c.recv_cq = r.recv_cq_handle;
  c.srq = r.srq_handle;
  c.max_send_wr = g.max_send_wr;
  c.max_recv_wr = g.max_recv_wr;
  c.max_send_sge = g.max_send_sge;
  c.max_recv_sge = g.max_recv_sge;
  c.max_inline = g.max_inline_data;
  c.sq_sig_all = r.sq_sig_all != 0;
  c.sq = sq;
  c.rq = rq;
  c.user_handle = r.user_handle;
  c.async_fd = async_fd_;
  if (int rc = dev_->create_qp(c); rc != 0) return rc;
  if (int rc = dev_->qp_doorbells(h, &rep->sq_doorbell, &rep->rq_doorbell); rc != 0) {
    dev_->destroy_qp(h);
    return rc;
  }
  q.pd = r.pd_handle;
  q.send_cq = r.send_cq_handle;
  q.recv_cq = r.recv_cq_handle;
  q.srq = r.srq_handle;
  q.qpn = qpn;
  q.type = r.qp_type;
  q.cap = g;
  q.sq_sig_all = r.sq_sig_all != 0;
  ++pd->second.refs;
  ++scq->second.refs;
  ++rcq->second.refs;
  if (srq != srqs_.end()) ++srq->second.refs;
  rep->qp_handle = h;
  rep->qpn = qpn;
  rep->cap = g;
  rep->sq_log2_elem_size = sq.geo.log2_elem_size;
  rep->sq_log2_slots = sq.geo.log2_slots;
  rep->sq_bytes = sq.bytes;
  if (r.srq_handle == 0) {
    rep->rq_log2_elem_size = rq.geo.log2_elem_size;
    rep->rq_log2_slots = rq.geo.log2_slots;
    rep->rq_bytes = rq.bytes;
  }
  auto [it, ok] = qps_.emplace(h, std::move(q));
  (void)ok;
  out->add(it->second.sq.fd());
  if (r.srq_handle == 0) out->add(it->second.rq.fd());
  return 0;
}

int ClientSession::resolve_mac(wire::Ipv4Addr ip, wire::MacAddr* mac) {
  // Blocking is fine: this is the client's own thread; the engine keeps
  // running and sends the ARP requests.
  const TimeNs start = steady_now();
  for (;;) {
    if (dev_->resolve(ip, mac)) return 0;
    if (steady_now() - start >= env_.resolve.timeout) return EHOSTUNREACH;
    std::this_thread::sleep_for(std::chrono::nanoseconds(env_.resolve.interval));
  }
}

int ClientSession::on_modify_qp(const ctl::ModifyQpReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  engine::QpModify m;
  m.mask = r.attr_mask;
  if (int rc = values_from_ibv(r.attr_mask, r.attr, dev_->active_mtu(), kMaxRdAtom, &m.values);
      rc != 0) {
    return rc;
  }
  if ((r.attr_mask & transport::qp_attr::kAv) != 0) {
    if (int rc = av_from_ibv(r.attr.ah_attr, dev_->config().pfc, &m.values.av.dip,
                             &m.values.av.dscp, &m.values.av.ttl);
        rc != 0) {
      return rc;
    }
    if (int rc = resolve_mac(m.values.av.dip, &m.values.av.dmac); rc != 0) return rc;
  }
  return dev_->modify_qp(r.qp_handle, m);
}

int ClientSession::on_query_qp(const ctl::QueryQpReq& r, ctl::QueryQpRep* rep, InFds&,
                               OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  engine::QpQuery q;
  if (int rc = dev_->query_qp(r.qp_handle, &q); rc != 0) return rc;
  ibv_from_query(q, &rep->attr);
  rep->attr.cap = it->second.cap;
  rep->cap = it->second.cap;
  rep->sq_sig_all = it->second.sq_sig_all ? 1 : 0;
  return 0;
}

int ClientSession::on_destroy_qp(const ctl::DestroyQpReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  const int rc = dev_->destroy_qp(r.qp_handle);
  if (rc != 0) return rc;
  QpObj& q = it->second;
  --pds_[q.pd].refs;
  --cqs_[q.send_cq].refs;
  --cqs_[q.recv_cq].refs;
  if (q.srq != 0) --srqs_[q.srq].refs;
  qps_.erase(it);
  return 0;
}

int ClientSession::on_create_srq(const ctl::CreateSrqReq& r, ctl::CreateSrqRep* rep, InFds&,
                                 OutFds* out) {
  const auto pd = pds_.find(r.pd_handle);
  if (pd == pds_.end()) return ENOENT;
  const ibv_srq_attr& a = r.attr;
  if (a.max_wr == 0 || a.max_wr > kMaxSrqWr || a.max_sge == 0 || a.max_sge > kMaxSge ||
      a.srq_limit > a.max_wr) {
    return EINVAL;
  }
  if (srqs_.size() >= dev_->config().max_srqs) return ENOMEM;
  SrqObj s;
  engine::RingMem ring;
  if (int rc = make_ring("uroce-srq", shm::rq_elem_bytes(a.max_sge), a.max_wr, &s.region, &ring);
      rc != 0) {
    return rc;
  }
  transport::SrqAttr granted{
      ring.geo.capacity(),
      std::min<std::uint32_t>(
          kMaxSge, (ring.geo.elem_size() - shm::kRecvWqeFlexOffset) / shm::kRxeSgeBytes),
      a.srq_limit};
  const std::uint32_t h = env_.handles->next();
  engine::SrqCreate c;
  c.id = h;
  c.srq_num = h;
  c.pd = r.pd_handle;
  c.max_wr = granted.max_wr;
  c.max_sge = granted.max_sge;
  c.srq_limit = granted.srq_limit;
  c.ring = ring;
  c.user_handle = r.user_handle;
  c.client = id_;
  c.async_fd = async_fd_;
  if (int rc = dev_->create_srq(c); rc != 0) return rc;
  if (int rc = dev_->srq_doorbell(h, &rep->doorbell); rc != 0) {
    dev_->destroy_srq(h);
    return rc;
  }
  s.pd = r.pd_handle;
  s.attr = granted;
  ++pd->second.refs;
  rep->srq_handle = h;
  rep->srq_num = h;
  rep->attr = ibv_from_srq_attr(granted);
  rep->log2_elem_size = ring.geo.log2_elem_size;
  rep->log2_slots = ring.geo.log2_slots;
  rep->rq_bytes = ring.bytes;
  auto [it, ok] = srqs_.emplace(h, std::move(s));
  (void)ok;
  out->add(it->second.region.fd());
  return 0;
}

int ClientSession::on_modify_srq(const ctl::ModifySrqReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = srqs_.find(r.srq_handle);
  if (it == srqs_.end()) return ENOENT;
  // The ring is fixed at creation (its fd went to the client): resizing
  // (IBV_SRQ_MAX_WR) is not supported.
  if (r.attr_mask == 0 || (r.attr_mask & ~static_cast<std::uint32_t>(IBV_SRQ_LIMIT)) != 0) {
    return EINVAL;
  }
  if (r.attr.srq_limit > it->second.attr.max_wr) return EINVAL;
  transport::SrqAttr a = it->second.attr;
  a.srq_limit = r.attr.srq_limit;
  const int rc = dev_->modify_srq(r.srq_handle, r.attr_mask, a);
  if (rc == 0) it->second.attr.srq_limit = a.srq_limit;
  return rc;
}

int ClientSession::on_query_srq(const ctl::QuerySrqReq& r, ctl::QuerySrqRep* rep, InFds&,
                                OutFds*) {
  const auto it = srqs_.find(r.srq_handle);
  if (it == srqs_.end()) return ENOENT;
  transport::SrqAttr a;
  if (int rc = dev_->query_srq(r.srq_handle, &a); rc != 0) return rc;
  rep->attr = ibv_from_srq_attr(a);
  return 0;
}

int ClientSession::on_destroy_srq(const ctl::DestroySrqReq& r, ctl::NoReply*, InFds&,
                                  OutFds*) {
  const auto it = srqs_.find(r.srq_handle);
  if (it == srqs_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  const int rc = dev_->destroy_srq(r.srq_handle);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  srqs_.erase(it);
  return 0;
}

int ClientSession::on_create_ah(const ctl::CreateAhReq& r, ctl::CreateAhRep* rep, InFds&,
                                OutFds*) {
  const auto pd = pds_.find(r.pd_handle);
  if (pd == pds_.end()) return ENOENT;
  engine::AhCreate a;
  if (int rc = av_from_ibv(r.attr, dev_->config().pfc, &a.dip, &a.dscp, &a.ttl); rc != 0) {
    return rc;
  }
  if (ahs_.size() >= dev_->config().max_ahs) return ENOMEM;
  if (int rc = resolve_mac(a.dip, &a.dmac); rc != 0) return rc;
  const std::uint32_t h = env_.handles->next();
  a.id = h;
  a.client = id_;
  a.pd = r.pd_handle;
  if (int rc = dev_->create_ah(a); rc != 0) return rc;
  ahs_.emplace(h, AhObj{r.pd_handle});
  ++pd->second.refs;
  rep->ah_handle = h;
  return 0;
}

int ClientSession::on_destroy_ah(const ctl::DestroyAhReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = ahs_.find(r.ah_handle);
  if (it == ahs_.end()) return ENOENT;
  const int rc = dev_->destroy_ah(r.ah_handle);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  ahs_.erase(it);
  return 0;
}

void ClientSession::on_status(const ctl::MsgHeader& h, const ctl::StatusReq& r) {
  if ((r.flags & ~(ctl::kStatusQps | ctl::kStatusClients)) != 0) {
    bad_input(h, EINVAL, "unknown status flags");
    (void)send_reply(h, EINVAL, nullptr, 0, {});
    return;
  }
  const std::string body = env_.status ? env_.status(r.flags) : std::string("{}");
  const std::size_t head = sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus);
  if (head + body.size() > ctl::kMaxMessageBytes) {
    (void)send_reply(h, EMSGSIZE, nullptr, 0, {});
    return;
  }
  std::vector<std::byte> out(head + body.size());
  const ctl::MsgHeader rh{ctl::kMagic, ctl::kVersion, h.op,
                          static_cast<std::uint32_t>(out.size()), h.seq};
  const ctl::ReplyStatus st{0, 0};
  std::memcpy(out.data(), &rh, sizeof(rh));
  std::memcpy(out.data() + sizeof(rh), &st, sizeof(st));
  std::memcpy(out.data() + head, body.data(), body.size());
  (void)ctl::send_msg(sock_, out);
}

}  // namespace uroce::daemon
