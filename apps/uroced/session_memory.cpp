// ClientSession (client_session.h): the handlers of protection domains,
// memory registrations and completion channels.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "apps/uroced/client_process.h"
#include "apps/uroced/client_session.h"
#include "apps/uroced/device_attr.h"
#include "apps/uroced/qp_attr_convert.h"
#include "apps/uroced/session_checks.h"
#include "datapath/shm/rxe_layout.h"

namespace uroce::daemon {

using namespace session;

int ClientSession::on_alloc_pd(const ctl::AllocPdReq&, ctl::AllocPdRep* rep, InFds&, OutFds*) {
  if (!dev_->take_pd(kMaxPd)) return ENOMEM;
  const std::uint32_t h = env_.handles->next();
  pds_.emplace(h, PdObj{});
  rep->pd_handle = h;
  return 0;
}

int ClientSession::on_dealloc_pd(const ctl::DeallocPdReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = pds_.find(r.pd_handle);
  if (it == pds_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  pds_.erase(it);
  dev_->give_pd();
  return 0;
}

namespace {

// The accesses rxe pins pages for writing (ib_access_writable).
bool writes(std::uint32_t access) {
  return (access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
                    IBV_ACCESS_MW_BIND)) != 0;
}

// A registration's extent as the request states it: a memfd names the
// bytes of it to map (map_len, a page multiple) and where the registration
// starts in them; the client's own shared object names neither (the daemon
// finds them in the client's maps).
bool extent_ok(ctl::MrSource source, std::uint64_t length, std::uint64_t map_len,
               std::uint64_t map_offset) {
  if (length == 0 || length > kMaxMrBytes) return false;
  switch (source) {
    case ctl::MrSource::kMemfd:
      return map_len != 0 && map_len % kPage == 0 && map_len <= kMaxMrBytes + kPage &&
             map_offset <= map_len && length <= map_len - map_offset;
    case ctl::MrSource::kProcessMapping: return map_len == 0 && map_offset == 0;
  }
  return false;
}

}  // namespace

int ClientSession::map_mr(ctl::MrSource source, int fd, std::uint64_t addr, std::uint64_t length,
                          std::uint64_t map_len, std::uint64_t map_offset, std::uint32_t access,
                          MrMemory* out) {
  if (source == ctl::MrSource::kMemfd) {
    const int rc = MrMemory::from_memfd(fd, map_len, map_offset, out);
    if (rc != 0) spdlog::debug("client {}: reg_mr: {}", id_, std::strerror(rc));
    return rc;
  }
  // The memory of the process that sent this request, not of the one that
  // connected: a connection can outlive its process's image or be inherited
  // by a child (docs/security.md). It is reached through /proc/PID/map_files:
  // uroced must run in the client's PID namespace or an ancestor of it (a
  // host daemon serves clients in containers). The kernel reports pid 0 for
  // a sender in a namespace the daemon cannot see.
  if (sender_.pid <= 0) {
    if (!told_pid_unseen_) {
      told_pid_unseen_ = true;
      spdlog::warn(
          "client {} (uid {}): its process is not visible in uroced's PID namespace, so its "
          "memory cannot be registered (EPERM); run uroced in the clients' PID namespace or "
          "an ancestor of it",
          id_, cred_.uid);
    }
    return EPERM;
  }
  ClientProcess proc;
  int rc = proc.open(sender_.pid, cred_.uid);
  bool refused = rc != 0;
  if (rc == 0) rc = MrMemory::from_process(sender_.pid, addr, length, writes(access), out);
  // Checked after the objects are open: the pages mapped are those of the
  // process that asked, as it was when it asked.
  if (rc == 0 && (rc = proc.unchanged()) != 0) {
    out->reset();
    refused = true;
  }
  if (refused) {
    spdlog::debug("client {} (uid {}): reg_mr from pid {} refused: {}", id_, cred_.uid, sender_.pid,
                  rc == ESRCH ? "the process exited"
                              : "not a dumpable process of the client's user, or its ids changed");
  }
  if (rc != 0) spdlog::debug("client {}: reg_mr: {}", id_, std::strerror(rc));
  return rc;
}

int ClientSession::on_reg_mr(const ctl::RegMrReq& r, ctl::RegMrRep* rep, InFds& in, OutFds*) {
  const bool memfd = r.source == ctl::MrSource::kMemfd;
  const int fd = memfd ? in.take(0) : -1;
  const auto pd = pds_.find(r.pd_handle);
  int rc = 0;
  if (pd == pds_.end()) {
    rc = ENOENT;
  } else if (!valid_mr_access(r.access) ||
             !extent_ok(r.source, r.length, r.map_len, r.map_offset)) {
    rc = EINVAL;
  }
  // A memfd is charged before it is mapped; the client's own object only
  // once mapped (its mapped length is known then).
  MrMemory mem;
  if (rc == 0 && !memfd) rc = map_mr(r.source, -1, r.addr, r.length, 0, 0, r.access, &mem);
  Charge charge(env_.quotas, cred_.uid,
                Usage{.mrs = 1,
                      .reg_bytes = r.length,
                      .map_bytes = memfd ? r.map_len : mem.map_len()},
                &used_);
  if (rc == 0) rc = charge.error();
  if (rc != 0) {
    if (fd >= 0) close(fd);
    return rc;
  }
  if (memfd) {
    rc = map_mr(r.source, fd, r.addr, r.length, r.map_len, r.map_offset, r.access, &mem);
    if (rc != 0) return rc;
  }
  engine::MrCreate m;
  m.desc.pd = r.pd_handle;
  m.desc.iova = r.iova;
  m.desc.length = r.length;
  m.desc.access = r.access & kMrAccessMask;
  m.desc.host = mem.host();
  int err = 0;
  const std::uint32_t key = shard_->reg_mr(m, &err);
  if (key == 0) return err != 0 ? err : EINVAL;
  const std::uint32_t h = env_.handles->next();
  MrObj obj;
  obj.pd = r.pd_handle;
  obj.key = key;
  obj.access = m.desc.access;
  obj.addr = r.addr;
  obj.length = r.length;
  obj.iova = r.iova;
  obj.map_len = mem.map_len();
  obj.mem = std::move(mem);
  mrs_.emplace(h, std::move(obj));
  charge.commit();
  ++pd->second.refs;
  rep->mr_handle = h;
  rep->lkey = key;
  rep->rkey = key;
  return 0;
}

int ClientSession::on_rereg_mr(const ctl::ReregMrReq& r, ctl::ReregMrRep* rep, InFds& in, OutFds*) {
  const bool translation = (r.flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0;
  const bool memfd = r.source == ctl::MrSource::kMemfd;
  const int fd = translation && memfd ? in.take(0) : -1;
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
  MrMemory mem;
  if (translation) {
    if (!extent_ok(r.source, r.length, r.map_len, r.map_offset)) return fail(EINVAL);
    const int rc = map_mr(r.source, fd, r.addr, r.length, r.map_len, r.map_offset, m.desc.access,
                          &mem);  // takes fd
    if (rc != 0) return rc;
    m.desc.iova = r.iova;
    m.desc.length = r.length;
    m.desc.host = mem.host();
  } else {
    // Same memory, same place in it; a read-only mapping takes no write access.
    if (writes(m.desc.access) && !mr.mem.writable()) return EFAULT;
    m.desc.host = mr.mem.host();
  }
  // A new translation is charged in full until the old one is let go.
  Charge charge(env_.quotas, cred_.uid,
                translation ? Usage{.reg_bytes = r.length, .map_bytes = mem.map_len()} : Usage{},
                &used_);
  if (charge.error() != 0) return charge.error();
  const int rc = shard_->rereg_mr(mr.key, m);
  if (rc != 0) return rc;
  if (new_pd != mr.pd) {
    --pds_[mr.pd].refs;
    ++pds_[new_pd].refs;
    mr.pd = new_pd;
  }
  mr.access = m.desc.access;
  if (translation) {
    charge.commit();
    if (env_.quotas != nullptr) {
      env_.quotas->release(cred_.uid, Usage{.reg_bytes = mr.length, .map_bytes = mr.map_len},
                           &used_);
    }
    mr.map_len = mem.map_len();
    mr.addr = r.addr;
    mr.iova = r.iova;
    mr.length = r.length;
    mr.mem = std::move(mem);  // the old mapping goes only now: the engine let go
  }
  rep->lkey = mr.key;
  rep->rkey = mr.key;
  return 0;
}

int ClientSession::on_dereg_mr(const ctl::DeregMrReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = mrs_.find(r.mr_handle);
  if (it == mrs_.end()) return ENOENT;
  const int rc = shard_->dereg_mr(it->second.key);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  if (env_.quotas != nullptr) {
    env_.quotas->release(cred_.uid,
                         Usage{.mrs = 1,
                               .reg_bytes = it->second.length,
                               .map_bytes = it->second.map_len},
                         &used_);
  }
  mrs_.erase(it);  // unmaps: the engine no longer reaches the memory
  return 0;
}

int ClientSession::on_alloc_mw(const ctl::AllocMwReq& r, ctl::AllocMwRep* rep, InFds&, OutFds*) {
  const auto pd = pds_.find(r.pd_handle);
  if (pd == pds_.end()) return ENOENT;
  if (r.type != IBV_MW_TYPE_1 && r.type != IBV_MW_TYPE_2) return EINVAL;
  // A window counts as a registration against the client's quota.
  Charge charge(env_.quotas, cred_.uid, Usage{.mrs = 1}, &used_);
  if (charge.error() != 0) return charge.error();
  int err = 0;
  const std::uint32_t key = shard_->alloc_mw(r.pd_handle,
                                             r.type == IBV_MW_TYPE_1 ? transport::MwType::kType1
                                                                     : transport::MwType::kType2,
                                             &err);
  if (key == 0) return err != 0 ? err : ENOMEM;
  const std::uint32_t h = env_.handles->next();
  mws_.emplace(h, MwObj{r.pd_handle, key});
  charge.commit();
  ++pd->second.refs;
  rep->mw_handle = h;
  rep->rkey = key;
  return 0;
}

int ClientSession::on_dealloc_mw(const ctl::DeallocMwReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = mws_.find(r.mw_handle);
  if (it == mws_.end()) return ENOENT;
  const int rc = shard_->dealloc_mw(it->second.key);
  if (rc != 0) return rc;
  --pds_[it->second.pd].refs;
  if (env_.quotas != nullptr) env_.quotas->release(cred_.uid, Usage{.mrs = 1}, &used_);
  mws_.erase(it);
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

int ClientSession::on_destroy_channel(const ctl::DestroyCompChannelReq& r, ctl::NoReply*, InFds&,
                                      OutFds*) {
  const auto it = channels_.find(r.channel_handle);
  if (it == channels_.end()) return ENOENT;
  if (it->second.refs != 0) return EBUSY;
  close(it->second.fd);
  channels_.erase(it);
  return 0;
}

}  // namespace uroce::daemon
