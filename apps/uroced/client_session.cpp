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
#include "apps/uroced/session_checks.h"
#include "datapath/shm/rxe_layout.h"

namespace uroce::daemon {
namespace {

using ctl::Op;
using namespace session;

// Largest reply body but Status's JSON (CmCommandRep is 368 bytes).
constexpr std::size_t kMaxRepBytes = 384;

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
    case EPERM: return "EPERM";
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
  // Inherited from the listening socket (Server::listen); set again for a
  // socket that did not come from it.
  (void)ctl::pass_credentials(sock_);
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
    sender_ = r.sender;
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

void ClientSession::serve_status_only(int refusal) {
  InFds fds;
  const ctl::IoResult r = ctl::recv_msg(sock_, buf_, std::span<int>(fds.fd, 16));
  if (!r.ok()) return;
  fds.n = r.nfds;
  ++requests_;
  const std::span<const std::byte> msg(buf_.data(), r.bytes);
  ctl::MsgHeader h;
  const MsgCheck c = check_request(msg, fds.n, &h);
  if (c.ok() && static_cast<Op>(h.op) == Op::kStatus) {
    ctl::StatusReq req;
    std::memcpy(&req, msg.data() + sizeof(h), sizeof(req));
    on_status(h, req);
    return;
  }
  (void)send_reply(h, c.ok() ? refusal : c.status, nullptr, 0, {});
}

bool ClientSession::handle_message(std::span<const std::byte> msg, InFds& fds) {
  ctl::MsgHeader h;
  const MsgCheck c = check_request(msg, fds.n, &h);
  if (!c.ok()) {
    bad_input(h, c.status, to_string(c.fault));
    return send_reply(h, c.status, nullptr, 0, {}) && !c.close;
  }
  const auto op = static_cast<Op>(h.op);
  // A connection is either a device's (Hello first) or an rdma_cm file's
  // (CmOpen, then CmCommand only); Status and Capture go anywhere.
  const char* why = nullptr;
  if (op == Op::kStatus || op == Op::kCapture) {
  } else if (cm_file_ != 0) {
    if (op != Op::kCmCommand) why = "verbs request on an rdma_cm connection";
  } else if (dev_ == nullptr) {
    if (op != Op::kHello && op != Op::kCmOpen) why = "request before Hello";
  } else if (op == Op::kHello || op == Op::kCmOpen) {
    why = "second Hello on one connection";
  } else if (op == Op::kCmCommand) {
    why = "rdma_cm command on a device connection";
  }
  if (why != nullptr) {
    bad_input(h, EPROTO, why);
    return send_reply(h, EPROTO, nullptr, 0, {});
  }
  dispatch(h, msg.subspan(sizeof(ctl::MsgHeader)), fds);
  return true;
}

template <Op O, class Handler>
void ClientSession::serve(const ctl::MsgHeader& h, std::span<const std::byte> body, InFds& fds,
                          Handler handler) {
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
  // Before the reply goes out: a client that asks for the status as soon as
  // it has its answer must see the objects as the answer left them (the
  // soak caught a Status listing a CQ whose DestroyCq had been answered).
  refresh_summary();
  if (rc != 0) {
    (void)send_reply(h, rc, nullptr, 0, {});
  } else if constexpr (std::is_same_v<Rep, ctl::NoReply>) {
    (void)send_reply(h, 0, nullptr, 0, {});
  } else {
    (void)send_reply(h, 0, &rep, sizeof(rep), out);
  }
}

void ClientSession::dispatch(const ctl::MsgHeader& h, std::span<const std::byte> body, InFds& fds) {
  using S = ClientSession;
  switch (static_cast<Op>(h.op)) {
    case Op::kHello: return serve<Op::kHello>(h, body, fds, &S::on_hello);
    case Op::kQueryPort: return serve<Op::kQueryPort>(h, body, fds, &S::on_query_port);
    case Op::kAllocPd: return serve<Op::kAllocPd>(h, body, fds, &S::on_alloc_pd);
    case Op::kDeallocPd: return serve<Op::kDeallocPd>(h, body, fds, &S::on_dealloc_pd);
    case Op::kRegMr: return serve<Op::kRegMr>(h, body, fds, &S::on_reg_mr);
    case Op::kDeregMr: return serve<Op::kDeregMr>(h, body, fds, &S::on_dereg_mr);
    case Op::kReregMr: return serve<Op::kReregMr>(h, body, fds, &S::on_rereg_mr);
    case Op::kAllocMw: return serve<Op::kAllocMw>(h, body, fds, &S::on_alloc_mw);
    case Op::kDeallocMw: return serve<Op::kDeallocMw>(h, body, fds, &S::on_dealloc_mw);
    case Op::kAttachMcast: return serve<Op::kAttachMcast>(h, body, fds, &S::on_attach_mcast);
    case Op::kDetachMcast: return serve<Op::kDetachMcast>(h, body, fds, &S::on_detach_mcast);
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
    case Op::kSetQpSched: return serve<Op::kSetQpSched>(h, body, fds, &S::on_set_qp_sched);
    case Op::kCreateSrq: return serve<Op::kCreateSrq>(h, body, fds, &S::on_create_srq);
    case Op::kModifySrq: return serve<Op::kModifySrq>(h, body, fds, &S::on_modify_srq);
    case Op::kQuerySrq: return serve<Op::kQuerySrq>(h, body, fds, &S::on_query_srq);
    case Op::kDestroySrq: return serve<Op::kDestroySrq>(h, body, fds, &S::on_destroy_srq);
    case Op::kCreateAh: return serve<Op::kCreateAh>(h, body, fds, &S::on_create_ah);
    case Op::kDestroyAh: return serve<Op::kDestroyAh>(h, body, fds, &S::on_destroy_ah);
    case Op::kCmOpen: return serve<Op::kCmOpen>(h, body, fds, &S::on_cm_open);
    case Op::kCmCommand: return serve<Op::kCmCommand>(h, body, fds, &S::on_cm_command);
    case Op::kCapture: return serve<Op::kCapture>(h, body, fds, &S::on_capture);
    case Op::kStatus: {
      ctl::StatusReq req;
      std::memcpy(&req, body.data(), sizeof(req));
      return on_status(h, req);
    }
  }
}

// ---- rdma_cm (cm_service.h) -----------------------------------------------

int ClientSession::on_cm_open(const ctl::CmOpenReq&, ctl::CmOpenRep* rep, InFds&, OutFds* out) {
  if (env_.cm == nullptr) return EOPNOTSUPP;
  std::uint32_t file = 0;
  int fd = -1;
  if (int rc = env_.cm->open_file(&file, &fd); rc != 0) return rc;
  cm_file_ = file;
  cm_event_fd_ = fd;
  rep->file = file;
  out->add(fd);
  return 0;
}

int ClientSession::on_cm_command(const ctl::CmCommandReq& r, ctl::CmCommandRep* rep, InFds&,
                                 OutFds*) {
  return env_.cm->command(cm_file_, r, rep);
}

bool ClientSession::send_reply(const ctl::MsgHeader& req, int status, const void* rep,
                               std::size_t rep_bytes, const OutFds& fds) {
  std::byte out[sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus) + kMaxRepBytes];
  ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, req.op,
                   static_cast<std::uint32_t>(sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus) +
                                              rep_bytes),
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
  spdlog::warn("client {} (pid {}, uid {}): bad request op {} ({}) seq {}: {}; replied {}{}", id_,
               cred_.pid, cred_.uid, h.op, ctl::op_name(static_cast<Op>(h.op)), h.seq, why,
               errname(status), more);
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
  for (const auto& [k, v] : qps_) {
    s.qps.push_back({k, v.qpn, static_cast<std::uint32_t>(v.mcast.size())});
  }
  s.used = used_;
  s.requests = requests_;
  s.bad_requests = bad_requests_;
  std::lock_guard<std::mutex> lk(summary_mu_);
  summary_ = std::move(s);
}

ClientSummary ClientSession::summary() const {
  std::lock_guard<std::mutex> lk(summary_mu_);
  return summary_;
}

bool ClientSession::post_port_event(const Device* dev, ibv_event_type type) {
  std::lock_guard<std::mutex> lk(event_mu_);
  if (dev_ != dev || async_fd_ < 0) return false;
  // The element of a port event is the port number.
  return engine::write_async_event(async_fd_, 1, static_cast<std::uint32_t>(type)) ==
         engine::FdWrite::kOk;
}

// ---- handlers ---------------------------------------------------------------

int ClientSession::on_hello(const ctl::HelloReq& r, ctl::HelloRep* rep, InFds& in, OutFds* out) {
  if (!terminated(r.ibdev, sizeof(r.ibdev))) return EINVAL;
  Device* dev = nullptr;
  for (Device* d : env_.devices) {
    if (d->config().name == r.ibdev) dev = d;
  }
  if (dev == nullptr) return ENODEV;
  Charge charge(env_.quotas, cred_.uid, Usage{.connections = 1}, &used_);
  if (charge.error() != 0) return charge.error();
  const int fd = in.take(0);
  if (!is_pipe_write_end(fd)) {
    close(fd);
    return EINVAL;
  }
  (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const shm::DoorbellGeometry& g = dev->doorbell_geometry();
  // The client's arena: the doorbell page first (offset 0), its rings after.
  arena_ = std::make_unique<RingArena>();
  int rc = arena_->create("uroce-arena");
  if (rc == 0) rc = arena_->alloc(g.bytes(), &bells_);
  Device& placed = dev->place_client();
  if (rc == 0) rc = placed.open_client(id_, bells_.addr, bells_.bytes);
  if (rc != 0) {
    dev->leave_client(placed);
    bells_ = {};
    arena_.reset();
    close(fd);
    return rc;
  }
  {
    std::lock_guard<std::mutex> lk(event_mu_);
    dev_ = dev;
    async_fd_ = fd;
  }
  shard_ = &placed;
  rep->device = device_attr(*dev);
  rep->device_index = dev->index();
  rep->gid_table_len = kGidTableLen;
  rep->max_mr_bytes = kMaxMrBytes;
  rep->doorbell_count = g.count;
  rep->doorbell_bytes = bells_.bytes;
  rep->doorbell_offset = bells_.offset;
  rep->arena_chunk_bytes = arena_->map().chunk_bytes();
  rep->arena_max_chunks = arena_->map().max_chunks();
  rep->shard = placed.config().shard;
  rep->shards = placed.config().shards;
  if (const int cpu = placed.engine_cpu() >= 0 ? placed.engine_cpu() : env_.engine_cpu; cpu >= 0) {
    rep->flags |= ctl::kHelloEngineCpu;
    rep->engine_cpu = static_cast<std::uint32_t>(cpu);
  }
  out->add(arena_->fd());
  charge.commit();
  spdlog::info("client {} (pid {}) opened {}", id_, cred_.pid, dev->config().name);
  return 0;
}

int ClientSession::on_query_port(const ctl::QueryPortReq& r, ctl::QueryPortRep* rep, InFds&,
                                 OutFds*) {
  if (r.port_num != 1) return EINVAL;
  rep->attr = port_attr(*dev_);
  return 0;
}

void ClientSession::on_status(const ctl::MsgHeader& h, const ctl::StatusReq& r) {
  if ((r.flags & ~(ctl::kStatusQps | ctl::kStatusClients)) != 0) {
    bad_input(h, EINVAL, "unknown status flags");
    (void)send_reply(h, EINVAL, nullptr, 0, {});
    return;
  }
  const std::string body = env_.status ? env_.status(r.flags, cred_) : std::string("{}");
  const std::size_t head = sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus);
  if (head + body.size() > ctl::kMaxMessageBytes) {
    (void)send_reply(h, EMSGSIZE, nullptr, 0, {});
    return;
  }
  std::vector<std::byte> out(head + body.size());
  const ctl::MsgHeader rh{ctl::kMagic, ctl::kVersion, h.op, static_cast<std::uint32_t>(out.size()),
                          h.seq};
  const ctl::ReplyStatus st{0, 0};
  std::memcpy(out.data(), &rh, sizeof(rh));
  std::memcpy(out.data() + sizeof(rh), &st, sizeof(st));
  std::memcpy(out.data() + head, body.data(), body.size());
  (void)ctl::send_msg(sock_, out);
}

// Capturing shows every client's payload: root only. The device name is the
// client's bytes: it must end within its field.
int ClientSession::on_capture(const ctl::CaptureReq& r, ctl::CaptureRep* rep, InFds& in, OutFds*) {
  if (cred_.uid != 0) return EPERM;
  if (env_.capture == nullptr) return EOPNOTSUPP;
  const std::size_t len = strnlen(r.device, sizeof(r.device));
  if (len == sizeof(r.device)) return EINVAL;
  return env_.capture->start(std::string(r.device, len), r.count, r.snaplen, in.take(0), rep);
}

}  // namespace uroce::daemon
