// ClientSession (client_session.h): the handlers of protection domains,
// memory registrations and completion channels.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "apps/uroced/client_session.h"
#include "apps/uroced/device_attr.h"
#include "apps/uroced/qp_attr_convert.h"
#include "apps/uroced/session_checks.h"
#include "datapath/shm/rxe_layout.h"

namespace uroce::daemon {

using namespace session;

int ClientSession::on_alloc_pd(const ctl::AllocPdReq&, ctl::AllocPdRep* rep, InFds&, OutFds*) {
  if (pds_.size() >= kMaxPd) return ENOMEM;
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
  return 0;
}

int ClientSession::on_reg_mr(const ctl::RegMrReq& r, ctl::RegMrRep* rep, InFds& in, OutFds*) {
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
  Charge charge(env_.quotas, cred_.uid,
                Usage{.mrs = 1, .reg_bytes = r.length, .map_bytes = r.map_len}, &used_);
  if (rc == 0) rc = charge.error();
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
  obj.map_len = r.map_len;
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
  // A new translation is charged in full until the old one is let go.
  Charge charge(env_.quotas, cred_.uid,
                translation ? Usage{.reg_bytes = r.length, .map_bytes = r.map_len} : Usage{},
                &used_);
  if (translation) {
    if (r.length == 0 || r.length > kMaxMrBytes || r.map_len == 0 || r.map_len % kPage != 0 ||
        r.map_len > kMaxMrBytes + kPage || r.map_offset > r.map_len ||
        r.length > r.map_len - r.map_offset) {
      return fail(EINVAL);
    }
    if (charge.error() != 0) return fail(charge.error());
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
    charge.commit();
    if (env_.quotas != nullptr) {
      env_.quotas->release(cred_.uid, Usage{.reg_bytes = mr.length, .map_bytes = mr.map_len},
                           &used_);
    }
    mr.map_len = r.map_len;
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
