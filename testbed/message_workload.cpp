#include "testbed/message_workload.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

constexpr std::uint32_t kWcSuccess = static_cast<std::uint32_t>(transport::WcStatus::kSuccess);
// derive_seed purposes of this module (independent of the simulator's).
constexpr std::uint64_t kPurposeArrivals = 101;
constexpr std::uint64_t kPurposePsn = 102;
constexpr std::uint64_t kPurposePattern = 103;

WorkloadSpec arrival_spec(const MessageWorkloadConfig& c) {
  WorkloadSpec s;
  s.hosts = static_cast<std::uint32_t>(c.macs.size());
  s.link_bps = c.link_bps;
  s.load = c.load;
  s.seed = derive_seed(c.seed, kPurposeArrivals, 0);
  return s;
}

}  // namespace

class MessageWorkload::Agent : public EngineApp {
 public:
  Agent(MessageWorkload& w, std::uint32_t host) : w_(w), host_(host) {}
  bool service(TimeNs now) override { return w_.service_host(host_, now); }

 private:
  MessageWorkload& w_;
  std::uint32_t host_;
};

MessageWorkload::MessageWorkload(const MessageWorkloadConfig& cfg, const SizeDistribution& dist,
                                 std::vector<RcDriver*> drivers)
    : cfg_(cfg), drivers_(std::move(drivers)), gen_(arrival_spec(cfg), dist) {
  const std::uint32_t n = hosts();
  host_.resize(n);
  pairs_.resize(std::size_t{n} * n);
  send_.resize(pairs_.size() * cfg_.qps_per_pair);
  recv_.resize(send_.size());
  // Pairs whose paths are equal (every pair on one switch) share one
  // table of best times.
  pair_idle_.assign(pairs_.size(), 0);
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      const std::vector<PathLink>& p = cfg_.paths[s][d];
      std::size_t i = 0;
      while (i < idle_.size() && !same_path(idle_[i].path(), p)) ++i;
      if (i == idle_.size()) idle_.emplace_back(cfg_.op, wire::path_mtu_bytes(cfg_.path.mtu), p);
      pair_idle_[pair_of(s, d)] = static_cast<std::uint32_t>(i);
    }
  }
  for (std::uint32_t w = 0; w < n; ++w) agents_.push_back(std::make_unique<Agent>(*this, w));
  next_ = gen_.next();
  if (cfg_.incast.senders > 0) {
    cfg_.incast.hosts = n;
    cfg_.incast.seed = cfg_.seed;
    incast_.emplace(cfg_.incast);
  }
}

MessageWorkload::~MessageWorkload() = default;

EngineApp* MessageWorkload::app(std::uint32_t w) { return agents_[w].get(); }

bool MessageWorkload::same_path(const std::vector<PathLink>& a, const std::vector<PathLink>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].rate_bps != b[i].rate_bps || a[i].delay_ns != b[i].delay_ns ||
        a[i].overhead_bytes != b[i].overhead_bytes) {
      return false;
    }
  }
  return true;
}

void MessageWorkload::FreeBuf::operator()(std::uint8_t* p) const { std::free(p); }

int MessageWorkload::setup() {
  const std::uint32_t n = hosts();
  const std::uint64_t max_len = std::max<std::uint64_t>(
      {gen_.distribution().max_length(), incast_ ? cfg_.incast.bytes : 0, 1});
  pattern_.resize(max_len);
  SeededRng rng(derive_seed(cfg_.seed, kPurposePattern, 0));
  for (std::uint8_t& b : pattern_) b = static_cast<std::uint8_t>(rng.next_u64());
  const std::uint32_t per_cq = (n - 1) * cfg_.qps_per_pair * kQpDepth;
  for (std::uint32_t w = 0; w < n; ++w) {
    HostState& h = host_[w];
    RcDriver& drv = *drivers_[w];
    // calloc: the pages stay untouched (no memory) until a message lands.
    h.recv_buf.reset(static_cast<std::uint8_t*>(std::calloc(max_len, 1)));
    if (h.recv_buf == nullptr) return ENOMEM;
    if (int rc = drv.reg_mr(pattern_.data(), max_len, &h.pattern_key, &h.pattern_iova); rc != 0) {
      return rc;
    }
    if (int rc = drv.reg_mr(h.recv_buf.get(), max_len, &h.recv_key, &h.recv_iova); rc != 0) {
      return rc;
    }
    if (int rc = drv.create_cq(per_cq, &h.send_cq); rc != 0) return rc;
    if (int rc = drv.create_cq(per_cq, &h.recv_cq); rc != 0) return rc;
    h.wc.resize(64);
  }
  SeededRng psn(derive_seed(cfg_.seed, kPurposePsn, 0));
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      for (std::uint32_t k = 0; k < cfg_.qps_per_pair; ++k) {
        const std::size_t i = std::size_t{pair_of(s, d)} * cfg_.qps_per_pair + k;
        RcDriver& src = *drivers_[s];
        RcDriver& dst = *drivers_[d];
        if (int rc = src.create_qp(host_[s].send_cq, kQpDepth, &send_[i].qp); rc != 0) return rc;
        if (int rc = dst.create_qp(host_[d].recv_cq, kQpDepth, &recv_[i].qp); rc != 0) return rc;
        const std::uint64_t r = psn.next_u64();
        RcConnect fwd = cfg_.path;
        fwd.dmac = cfg_.macs[d];
        fwd.dip = cfg_.ips[d];
        fwd.dest_qpn = dst.qpn(recv_[i].qp);
        fwd.sq_psn = static_cast<std::uint32_t>(r) & 0xffffff;
        fwd.rq_psn = static_cast<std::uint32_t>(r >> 24) & 0xffffff;
        RcConnect back = cfg_.path;
        back.dmac = cfg_.macs[s];
        back.dip = cfg_.ips[s];
        back.dest_qpn = src.qpn(send_[i].qp);
        back.sq_psn = fwd.rq_psn;
        back.rq_psn = fwd.sq_psn;
        if (int rc = src.connect(send_[i].qp, fwd); rc != 0) return rc;
        if (int rc = dst.connect(recv_[i].qp, back); rc != 0) return rc;
        for (std::uint32_t j = 0; j < kQpDepth; ++j) {
          if (int rc =
                  dst.post_recv(recv_[i].qp, i, host_[d].recv_iova, max_len, host_[d].recv_key);
              rc != 0) {
            return rc;
          }
        }
      }
    }
  }
  return 0;
}

const std::vector<std::uint32_t>& MessageWorkload::arrive(TimeNs now) {
  arrived_src_.clear();
  if (incast_ && incast_->next_time() < next_.time_ns) {
    arrive_burst(now);
    return arrived_src_;
  }
  const Arrival a = next_;
  next_ = gen_.next();
  enqueue(a.src, a.dst, a.length, now, MessageRecord::kNoBurst);
  arrived_src_.push_back(a.src);
  return arrived_src_;
}

void MessageWorkload::arrive_burst(TimeNs now) {
  const IncastBurst& b = incast_->next();
  BurstRecord r;
  r.arrival_ns = now;
  r.dst = b.dst;
  r.measured = measured_at(now);
  r.best_ns = ~TimeNs{0};
  for (const std::uint32_t s : b.srcs) {
    r.best_ns = std::min(r.best_ns,
                         idle_[pair_idle_[pair_of(s, b.dst)]].best_ns(cfg_.incast.burst_bytes()));
  }
  const auto id = static_cast<std::uint32_t>(bursts_.size());
  bursts_.push_back(r);
  for (const std::uint32_t s : b.srcs) {
    enqueue(s, b.dst, cfg_.incast.bytes, now, id);
    arrived_src_.push_back(s);
  }
}

void MessageWorkload::enqueue(std::uint32_t src, std::uint32_t dst, std::uint64_t length,
                              TimeNs now, std::uint32_t burst) {
  MessageRecord m;
  m.arrival_ns = now;
  m.length = length;
  m.src = static_cast<std::uint16_t>(src);
  m.dst = static_cast<std::uint16_t>(dst);
  m.burst = burst;
  m.measured = measured_at(now);
  m.best_ns = idle_[pair_idle_[pair_of(src, dst)]].best_ns(length);
  if (m.measured) ++st_.measured;
  ++st_.arrived;
  const std::uint32_t p = pair_of(src, dst);
  bool free_qp = false;
  for (std::uint32_t k = 0; k < cfg_.qps_per_pair; ++k) {
    free_qp = free_qp || send_[std::size_t{p} * cfg_.qps_per_pair + k].msg == kIdle;
  }
  if (!free_qp || !pairs_[p].waiting.empty()) ++st_.waited_for_qp;
  pairs_[p].waiting.push_back(msgs_.size());
  msgs_.push_back(m);
  st_.max_pair_queue = std::max<std::uint64_t>(st_.max_pair_queue, pairs_[p].waiting.size());
  if (!pairs_[p].listed) {
    pairs_[p].listed = true;
    host_[src].to_post.push_back(p);
  }
}

bool MessageWorkload::post_waiting(std::uint32_t w, TimeNs now) {
  HostState& h = host_[w];
  if (h.to_post.empty()) return false;
  bool posted = false;
  std::size_t keep = 0;
  for (const std::uint32_t p : h.to_post) {
    Pair& pr = pairs_[p];
    const std::uint32_t d = p % hosts();
    const std::size_t base = std::size_t{p} * cfg_.qps_per_pair;
    for (std::uint32_t k = 0; k < cfg_.qps_per_pair && !pr.waiting.empty(); ++k) {
      SendSlot& s = send_[base + k];
      if (s.msg != kIdle) continue;
      const std::uint64_t id = pr.waiting.front();
      MessageRecord& m = msgs_[id];
      RcSend wr;
      wr.wr_id = base + k;
      wr.opcode = cfg_.op == MsgOp::kWriteImm ? IB_UVERBS_WR_RDMA_WRITE_WITH_IMM
                                              : IB_UVERBS_WR_SEND_WITH_IMM;
      wr.addr = h.pattern_iova;
      wr.length = static_cast<std::uint32_t>(m.length);
      wr.lkey = h.pattern_key;
      wr.remote_addr = host_[d].recv_iova;
      wr.rkey = host_[d].recv_key;
      wr.imm = static_cast<std::uint32_t>(id);
      // The SQ holds kQpDepth WRs and a QP carries one message: never
      // full. A refusal would leave the message waiting.
      if (drivers_[w]->post_send(s.qp, wr) != 0) break;
      pr.waiting.pop_front();
      m.post_ns = now;
      s.msg = id;
      recv_[base + k].msg = id;
      ++st_.posted;
      posted = true;
    }
    if (pr.waiting.empty()) {
      pr.listed = false;
    } else {
      h.to_post[keep++] = p;
    }
  }
  h.to_post.resize(keep);
  return posted;
}

void MessageWorkload::on_send_done(std::uint32_t w, const ib_uverbs_wc& wc) {
  SendSlot& s = send_[wc.wr_id];
  if (wc.status != kWcSuccess) {
    // The QP is in the error state: its slot stays busy and the pair
    // loses it (RC gives up only after its retries; counted).
    if (st_.send_errors == 0) st_.first_send_error = wc.status;
    ++st_.send_errors;
    return;
  }
  ++st_.send_completed;
  s.msg = kIdle;
  const std::uint32_t p = static_cast<std::uint32_t>(wc.wr_id / cfg_.qps_per_pair);
  if (!pairs_[p].waiting.empty() && !pairs_[p].listed) {
    pairs_[p].listed = true;
    host_[w].to_post.push_back(p);
  }
}

bool MessageWorkload::on_recv_done(std::uint32_t w, const ib_uverbs_wc& wc, TimeNs now) {
  RecvSlot& r = recv_[wc.wr_id];
  ++st_.received;
  if (wc.status != kWcSuccess) {
    // A flushed or failed receive: the QP is in error, nothing to repost.
    if (st_.recv_errors == 0) st_.first_recv_error = wc.status;
    ++st_.recv_errors;
    return false;
  }
  const std::uint64_t id = r.msg;
  r.msg = kIdle;
  if (id == kIdle) {
    ++st_.imm_mismatch;
  } else {
    MessageRecord& m = msgs_[id];
    std::uint32_t imm = 0;
    std::memcpy(&imm, &wc.ex.imm_data, sizeof imm);
    const bool len_ok = wc.byte_len == m.length;
    const bool imm_ok = imm == static_cast<std::uint32_t>(id);
    const bool bytes_ok =
        len_ok && std::memcmp(host_[w].recv_buf.get(), pattern_.data(), m.length) == 0;
    if (!len_ok) ++st_.length_mismatch;
    if (!imm_ok) ++st_.imm_mismatch;
    if (len_ok && !bytes_ok) ++st_.payload_mismatch;
    m.ok = len_ok && imm_ok && bytes_ok;
    m.done_ns = now;
    if (m.measured) ++st_.measured_done;
    if (m.burst != MessageRecord::kNoBurst) {
      BurstRecord& b = bursts_[m.burst];
      if (++b.received == cfg_.incast.senders) b.done_ns = now;
    }
  }
  const std::size_t i = wc.wr_id;
  const std::uint64_t max_len = pattern_.size();
  if (drivers_[w]->post_recv(r.qp, i, host_[w].recv_iova, static_cast<std::uint32_t>(max_len),
                             host_[w].recv_key) != 0) {
    ++st_.repost_failed;
    return false;
  }
  return true;
}

bool MessageWorkload::service_host(std::uint32_t w, TimeNs now) {
  HostState& h = host_[w];
  RcDriver& drv = *drivers_[w];
  bool posted = false;
  for (;;) {
    const std::uint32_t k = drv.poll_cq(h.recv_cq, h.wc);
    for (std::uint32_t i = 0; i < k; ++i) posted = on_recv_done(w, h.wc[i], now) || posted;
    if (k < h.wc.size()) break;
  }
  for (;;) {
    const std::uint32_t k = drv.poll_cq(h.send_cq, h.wc);
    for (std::uint32_t i = 0; i < k; ++i) on_send_done(w, h.wc[i]);
    if (k < h.wc.size()) break;
  }
  return post_waiting(w, now) || posted;
}

}  // namespace uroce::testbed
