#include "datapath/port/capture_tap.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace uroce::port {

namespace {

// Copies gathered before one ring enqueue.
constexpr unsigned kChunk = 32;
// Per-lcore cache of the copies' pool: the lcore's gets come from it, the
// capture thread (no lcore cache) returns copies straight to the pool.
constexpr unsigned kPoolCache = 64;

// Pool and ring names are global in a DPDK process.
std::atomic<std::uint32_t> g_tap_seq{0};

std::string errstr(int err) { return std::strerror(err < 0 ? -err : err); }

// Single-writer counter: a plain load and store, never a locked operation.
void bump(std::atomic<std::uint64_t>& c, std::uint64_t n) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace

std::uint32_t capture_ring_size(std::uint32_t snaplen, std::uint32_t max_frame) {
  const std::uint32_t kept = snaplen == 0 ? max_frame : std::min(snaplen, max_frame);
  // An element of the pool: the mbuf header, the metadata, headroom, data.
  const std::uint64_t elem = sizeof(rte_mbuf) + sizeof(FrameMeta) + RTE_PKTMBUF_HEADROOM + kept;
  std::uint64_t n = kCaptureBudgetBytes / elem;
  std::uint32_t ring = kMinCaptureRing;
  while (ring < kMaxCaptureRing && std::uint64_t{ring} * 2 <= n) ring *= 2;
  return ring;
}

CaptureTap::~CaptureTap() {
  if (attached_) {
    // Not quiesced: the callbacks may still run. Leak rather than free.
    detach();
    return;
  }
  release();
}

int CaptureTap::open(const CaptureTapConfig& cfg, std::string* error) {
  cfg_ = cfg;
  snaplen_ = cfg.snaplen == 0 ? cfg.max_frame : std::min(cfg.snaplen, cfg.max_frame);
  rte_mbuf_dynflag flag{};
  std::strncpy(flag.name, kSeenFlagName, sizeof(flag.name) - 1);
  const int bit = rte_mbuf_dynflag_register(&flag);
  if (bit < 0) {
    *error =
        "cannot register the mbuf flag " + std::string(kSeenFlagName) + ": " + errstr(rte_errno);
    return -rte_errno;
  }
  seen_flag_ = std::uint64_t{1} << bit;
  const std::uint32_t id = g_tap_seq.fetch_add(1);
  const std::string ring_name = "ucap_ring_" + std::to_string(id);
  ring_ = rte_ring_create(ring_name.c_str(), cfg.ring_size, rte_socket_id(), RING_F_SC_DEQ);
  if (ring_ == nullptr) {
    *error = "cannot create the capture ring of " + std::to_string(cfg.ring_size) +
             " entries: " + errstr(rte_errno);
    return -rte_errno;
  }
  const std::string pool_name = "ucap_pool_" + std::to_string(id);
  // A mempool's per-lcore cache may hold at most two thirds of it.
  const unsigned cache = std::min(kPoolCache, (cfg.ring_size - 1) / 2);
  pool_ = rte_pktmbuf_pool_create(pool_name.c_str(), cfg.ring_size - 1, cache,
                                  static_cast<std::uint16_t>(sizeof(FrameMeta)),
                                  static_cast<std::uint16_t>(snaplen_ + RTE_PKTMBUF_HEADROOM),
                                  static_cast<int>(rte_socket_id()));
  if (pool_ == nullptr) {
    const int err = rte_errno;
    *error = "cannot create the capture pool of " + std::to_string(cfg.ring_size - 1) + " x " +
             std::to_string(snaplen_) + " B: " + errstr(err) +
             " (a smaller --snaplen needs less; or raise -m in eal.args)";
    rte_ring_free(ring_);
    ring_ = nullptr;
    return -err;
  }
  queues_ = std::make_unique<QueueTap[]>(cfg.queues);
  for (std::uint16_t q = 0; q < cfg.queues; ++q) {
    queues_[q].tap = this;
    queues_[q].queue = q;
  }
  return 0;
}

int CaptureTap::attach(std::string* error) {
  for (std::uint16_t q = 0; q < cfg_.queues; ++q) {
    QueueTap& t = queues_[q];
    t.rx_cb = rte_eth_add_rx_callback(cfg_.port_id, q, &CaptureTap::on_rx, &t);
    if (t.rx_cb != nullptr)
      t.tx_cb = rte_eth_add_tx_callback(cfg_.port_id, q, &CaptureTap::on_tx, &t);
    if (t.rx_cb == nullptr || t.tx_cb == nullptr) {
      const int err = rte_errno != 0 ? rte_errno : ENOTSUP;
      *error = "cannot install the capture callbacks on queue " + std::to_string(q) + " of port " +
               std::to_string(cfg_.port_id) + ": " + errstr(err);
      // What was installed comes off again; release() frees it once the
      // caller has quiesced the port's lcores, as for a normal detach.
      attached_ = true;
      detach();
      return -err;
    }
  }
  attached_ = true;
  return 0;
}

void CaptureTap::detach() {
  if (!attached_) return;
  for (std::uint16_t q = 0; q < cfg_.queues; ++q) {
    QueueTap& t = queues_[q];
    if (t.rx_cb != nullptr) (void)rte_eth_remove_rx_callback(cfg_.port_id, q, t.rx_cb);
    if (t.tx_cb != nullptr) (void)rte_eth_remove_tx_callback(cfg_.port_id, q, t.tx_cb);
  }
  attached_ = false;
  detached_ = true;
}

void CaptureTap::release() {
  if (attached_) return;  // detach first
  if (detached_) {
    for (std::uint16_t q = 0; q < cfg_.queues; ++q) {
      QueueTap& t = queues_[q];
      // rte_eth_add_*_callback allocated them with rte_zmalloc.
      rte_free(const_cast<rte_eth_rxtx_callback*>(t.rx_cb));
      rte_free(const_cast<rte_eth_rxtx_callback*>(t.tx_cb));
      t.rx_cb = nullptr;
      t.tx_cb = nullptr;
    }
    detached_ = false;
  }
  if (ring_ != nullptr) {
    rte_mbuf* m[kChunk];
    unsigned n = 0;
    while ((n = take(m, kChunk)) != 0) rte_pktmbuf_free_bulk(m, n);
    rte_ring_free(ring_);
    ring_ = nullptr;
  }
  if (pool_ != nullptr) {
    rte_mempool_free(pool_);
    pool_ = nullptr;
  }
}

unsigned CaptureTap::take(rte_mbuf** out, unsigned n) {
  return rte_ring_sc_dequeue_burst(ring_, reinterpret_cast<void**>(out), n, nullptr);
}

const FrameMeta& CaptureTap::meta(const rte_mbuf* m) {
  return *static_cast<const FrameMeta*>(rte_mbuf_to_priv(const_cast<rte_mbuf*>(m)));
}

CaptureCounters CaptureTap::counters() const {
  CaptureCounters c{};
  for (std::uint16_t q = 0; q < cfg_.queues && queues_ != nullptr; ++q) {
    const QueueTap& t = queues_[q];
    c.rx_frames += t.rx_frames.load(std::memory_order_relaxed);
    c.tx_frames += t.tx_frames.load(std::memory_order_relaxed);
    c.ring_full += t.ring_full.load(std::memory_order_relaxed);
    c.no_mbuf += t.no_mbuf.load(std::memory_order_relaxed);
  }
  return c;
}

std::uint16_t CaptureTap::on_rx(std::uint16_t, std::uint16_t, rte_mbuf** pkts, std::uint16_t n,
                                std::uint16_t, void* arg) {
  auto& q = *static_cast<QueueTap*>(arg);
  if (n != 0) q.tap->copy_burst<false>(q, pkts, n);
  return n;
}

std::uint16_t CaptureTap::on_tx(std::uint16_t, std::uint16_t, rte_mbuf** pkts, std::uint16_t n,
                                void* arg) {
  auto& q = *static_cast<QueueTap*>(arg);
  if (n != 0) q.tap->copy_burst<true>(q, pkts, n);
  return n;
}

template <bool kTx>
void CaptureTap::copy_burst(QueueTap& q, rte_mbuf** pkts, std::uint16_t n) {
  const std::uint64_t tsc = rte_rdtsc();
  rte_mbuf* copies[kChunk];
  unsigned k = 0;
  std::uint64_t taken = 0;
  for (std::uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    if constexpr (kTx) {
      if ((m->ol_flags & seen_flag_) != 0) continue;  // offered before, copied then
      m->ol_flags |= seen_flag_;
    }
    rte_mbuf* c = rte_pktmbuf_copy(m, pool_, 0, snaplen_);
    if (c == nullptr) {
      bump(q.no_mbuf, 1);
      continue;
    }
    auto* meta = static_cast<FrameMeta*>(rte_mbuf_to_priv(c));
    *meta = FrameMeta{.tsc = tsc,
                      .orig_len = rte_pktmbuf_pkt_len(m),
                      .queue = q.queue,
                      .direction = kTx ? std::uint8_t{2} : std::uint8_t{1}};
    copies[k++] = c;
    ++taken;
    if (k == kChunk) {
      enqueue(q, copies, k);
      k = 0;
    }
  }
  if (k != 0) enqueue(q, copies, k);
  bump(kTx ? q.tx_frames : q.rx_frames, taken);
}

void CaptureTap::enqueue(QueueTap& q, rte_mbuf** copies, unsigned k) {
  const unsigned in =
      rte_ring_mp_enqueue_burst(ring_, reinterpret_cast<void**>(copies), k, nullptr);
  if (in < k) {
    rte_pktmbuf_free_bulk(copies + in, k - in);
    bump(q.ring_full, k - in);
  }
}

}  // namespace uroce::port
