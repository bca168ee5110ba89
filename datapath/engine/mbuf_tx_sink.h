// A transport TxSink (datapath/transport/sinks.h) over a DPDK mempool: one
// mbuf per frame, built in place in the mbuf's data area, collected into a
// TX burst of up to kBurst frames that flush() hands to the port.
//
//   tx_alloc(n)   stages one mbuf and returns its first n data bytes; empty
//                 when n exceeds the data room, when kBurst frames already
//                 wait for flush(), or when the pool is empty (each counted).
//                 A staged mbuf that is never committed (the transport
//                 abandoned the frame) is reused by the next tx_alloc.
//   tx_commit(n)  sets the staged mbuf's lengths to n and appends it to the
//                 burst.
//   flush(port)   one tx_burst of everything pending.
//
// Frames the PMD refuses are KEPT, in order, at the front of the burst and
// offered again by the next flush. Why: a refusal is transient backpressure
// (the TX ring is full), while a frame dropped here is, for RC, a loss that
// only the retransmission timer (milliseconds) repairs. Keeping them also
// preserves each QP's PSN order, and a full burst makes tx_alloc return
// empty, which stops the QPs until the port drains. At most kBurst mbufs are
// held this way; discard() frees them (port stopping, link gone).
//
// Per frame: one rte_pktmbuf_alloc from the pool's per-lcore cache; no other
// allocation, no virtual call, no lock. Owned by one lcore.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/engine/mbuf_tx_counters.h"

namespace uroce::engine {

class MbufTxSink {
 public:
  static constexpr std::uint16_t kBurst = 32;

  // `pool` must outlive the sink; its data room (minus headroom) bounds the
  // frame size.
  explicit MbufTxSink(rte_mempool* pool)
      : pool_(pool),
        room_(rte_pktmbuf_data_room_size(pool) > RTE_PKTMBUF_HEADROOM
                  ? rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM
                  : 0u) {}
  ~MbufTxSink() { discard(); }
  MbufTxSink(const MbufTxSink&) = delete;
  MbufTxSink& operator=(const MbufTxSink&) = delete;

  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (n > room_) {
      ++ctr_.oversize;
      return {};
    }
    if (count_ == kBurst) {
      ++ctr_.burst_full;
      return {};
    }
    if (staged_ == nullptr) {
      staged_ = rte_pktmbuf_alloc(pool_);
      if (staged_ == nullptr) {
        ++ctr_.no_mbuf;
        return {};
      }
    }
    return {rte_pktmbuf_mtod(staged_, std::uint8_t*), n};
  }

  // n is at most what the preceding tx_alloc returned (the TxSink contract).
  void tx_commit(std::size_t n) {
    if (staged_ == nullptr) {
      ++ctr_.bad_commit;
      return;
    }
    // count_ < kBurst holds: tx_alloc staged only below kBurst, and nothing
    // but tx_commit raises count_.
    staged_->data_len = static_cast<std::uint16_t>(n);
    staged_->pkt_len = static_cast<std::uint32_t>(n);
    pending_[count_++] = staged_;
    staged_ = nullptr;
    ++ctr_.committed;
  }

  // One tx_burst of the pending frames on `port` (anything with EthPort's
  // tx_burst(rte_mbuf**, uint16_t)). Returns the frames accepted; refused
  // frames stay pending, in order.
  template <class Port>
  [[gnu::always_inline]] std::uint16_t flush(Port& port) {
    if (count_ == 0) return 0;
    const std::uint16_t sent = port.tx_burst(pending_.data(), count_);
    ++ctr_.bursts;
    ctr_.sent += sent;
    if (sent < count_) {
      ctr_.refused += count_ - sent;
      for (std::uint16_t i = sent; i < count_; ++i) pending_[i - sent] = pending_[i];
    }
    count_ = static_cast<std::uint16_t>(count_ - sent);
    return sent;
  }

  // Frees every pending frame and the staged mbuf.
  void discard() {
    if (count_ != 0) {
      rte_pktmbuf_free_bulk(pending_.data(), count_);
      ctr_.discarded += count_;
      count_ = 0;
    }
    if (staged_ != nullptr) {
      rte_pktmbuf_free(staged_);
      staged_ = nullptr;
    }
  }

  std::uint16_t pending() const { return count_; }
  std::uint16_t room_left() const { return static_cast<std::uint16_t>(kBurst - count_); }
  bool full() const { return count_ == kBurst; }
  std::uint32_t data_room() const { return room_; }
  const MbufTxCounters& counters() const { return ctr_; }

 private:
  rte_mempool* pool_;
  std::uint32_t room_;
  rte_mbuf* staged_ = nullptr;
  std::uint16_t count_ = 0;
  std::array<rte_mbuf*, kBurst> pending_{};
  MbufTxCounters ctr_{};
};

}  // namespace uroce::engine
