// ClientSession (client_session.h): reclaiming a client's objects when its
// connection ends, in the order QPs, SRQs, CQs, AHs, MRs, comp channels, PDs,
// and the arena (doorbell page and rings) last.
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
  const int rc = shard_->destroy_qp(h);
  if (rc != 0 && rc != ENOENT) {
    spdlog::error("client {}: engine refused to destroy QP {} ({}); its rings stay mapped", id_, h,
                  std::strerror(rc));
    arena_pinned_ = true;
  } else {
    release_extent(q.sq);
    release_extent(q.rq);
  }
  if (auto it = pds_.find(q.pd); it != pds_.end()) --it->second.refs;
  if (auto it = cqs_.find(q.send_cq); it != cqs_.end()) --it->second.refs;
  if (auto it = cqs_.find(q.recv_cq); it != cqs_.end()) --it->second.refs;
  if (auto it = srqs_.find(q.srq); it != srqs_.end()) --it->second.refs;
}

void ClientSession::destroy_srq_obj(std::uint32_t h, SrqObj& s) {
  const int rc = shard_->destroy_srq(h);
  if (rc != 0 && rc != ENOENT) {
    spdlog::error("client {}: engine refused to destroy SRQ {} ({}); its ring stays mapped", id_, h,
                  std::strerror(rc));
    arena_pinned_ = true;
  } else {
    release_extent(s.region);
  }
  if (auto it = pds_.find(s.pd); it != pds_.end()) --it->second.refs;
}

void ClientSession::destroy_cq_obj(std::uint32_t h, CqObj& c) {
  const int rc = shard_->destroy_cq(h);
  if (rc != 0 && rc != ENOENT) {
    spdlog::error("client {}: engine refused to destroy CQ {} ({}); its ring stays mapped", id_, h,
                  std::strerror(rc));
    arena_pinned_ = true;
  } else {
    release_extent(c.region);
  }
  if (auto it = channels_.find(c.channel); it != channels_.end()) --it->second.refs;
}

void ClientSession::destroy_mr_obj(MrObj& m) {
  const int rc = shard_->dereg_mr(m.key);
  if (rc != 0) {
    spdlog::error(
        "client {}: engine refused to deregister MR key {:#x} ({}); the memory "
        "stays mapped",
        id_, m.key, std::strerror(rc));
    m.mem.leak();
  }
  if (auto it = pds_.find(m.pd); it != pds_.end()) --it->second.refs;
}

// The session keeps the key the window was allocated with; binds change its
// key byte, which dealloc_mw does not compare (mr_table.h).
void ClientSession::destroy_mw_obj(MwObj& m) {
  const int rc = shard_->dealloc_mw(m.key);
  if (rc != 0 && rc != ENOSYS) {
    spdlog::error("client {}: engine refused to free MW key {:#x} ({})", id_, m.key,
                  std::strerror(rc));
  }
  if (auto it = pds_.find(m.pd); it != pds_.end()) --it->second.refs;
}

void ClientSession::reclaim() {
  if (reclaimed_) return;
  reclaimed_ = true;
  if (cm_file_ != 0) {
    env_.cm->close_file(cm_file_);
    cm_file_ = 0;
  }
  if (cm_event_fd_ >= 0) close(cm_event_fd_);
  cm_event_fd_ = -1;
  if (dev_ == nullptr) {
    std::lock_guard<std::mutex> lk(event_mu_);
    if (async_fd_ >= 0) close(async_fd_);
    async_fd_ = -1;
    spdlog::debug("client {} (pid {}) gone", id_, cred_.pid);
    return;
  }
  const std::size_t nqp = qps_.size(), nsrq = srqs_.size(), ncq = cqs_.size(), nah = ahs_.size(),
                    nmr = mrs_.size(), nch = channels_.size(), npd = pds_.size();
  for (auto& [h, q] : qps_) destroy_qp_obj(h, q);
  qps_.clear();
  for (auto& [h, s] : srqs_) destroy_srq_obj(h, s);
  srqs_.clear();
  for (auto& [h, c] : cqs_) destroy_cq_obj(h, c);
  cqs_.clear();
  for (auto& [h, a] : ahs_) {
    // Its QPs are gone: nothing can still name the AH.
    const int rc = shard_->destroy_ah(h, true, nullptr);
    if (rc != 0 && rc != ENOENT) {
      spdlog::error("client {}: engine refused to destroy AH {} ({})", id_, h, std::strerror(rc));
    }
  }
  ahs_.clear();
  // Windows first: an MR with windows bound cannot be deregistered.
  for (auto& [h, w] : mws_) destroy_mw_obj(w);
  mws_.clear();
  for (auto& [h, m] : mrs_) destroy_mr_obj(m);
  mrs_.clear();
  for (auto& [h, ch] : channels_) close(ch.fd);
  channels_.clear();
  for (std::size_t i = 0; i < pds_.size(); ++i) dev_->give_pd();
  pds_.clear();
  // The engine stops reading the doorbell page before it is unmapped.
  if (const int rc = shard_->close_client(id_); rc != 0) {
    spdlog::error(
        "client {}: engine refused to close the client ({}); its doorbell page "
        "stays mapped",
        id_, std::strerror(rc));
    arena_pinned_ = true;
  }
  bells_ = {};
  if (arena_pinned_) {
    // Deliberately never unmapped (see destroy_qp_obj): process-lifetime.
    (void)arena_.release();
  }
  arena_.reset();
  {
    std::lock_guard<std::mutex> lk(event_mu_);
    if (async_fd_ >= 0) close(async_fd_);
    async_fd_ = -1;
  }
  if (nqp + nsrq + ncq + nah + nmr + nch + npd != 0) {
    spdlog::info(
        "client {} (pid {}) gone: reclaimed {} QPs, {} SRQs, {} CQs, {} AHs, {} MRs, "
        "{} comp channels, {} PDs on {}",
        id_, cred_.pid, nqp, nsrq, ncq, nah, nmr, nch, npd, dev_->config().name);
  } else {
    spdlog::info("client {} (pid {}) gone", id_, cred_.pid);
  }
  dev_->leave_client(*shard_);
  shard_ = nullptr;
  {
    std::lock_guard<std::mutex> lk(event_mu_);
    dev_ = nullptr;
  }
  if (env_.quotas != nullptr) env_.quotas->release(cred_.uid, Usage(used_), &used_);
  refresh_summary();
}

}  // namespace uroce::daemon
