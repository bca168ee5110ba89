// An EthPort as the engine's Vnic sees a port ("PortIo", vnic.h):
// RX bursts of mbufs handed over as byte spans, and TX through an
// MbufTxSink flushed with one tx_burst.
//
// A frame in one mbuf reaches the callback as one span. A chained mbuf (a
// port whose RX buffers are smaller than its largest frame, eth_port.h
// PortConfig::rx_buf) reaches it as its first segment and a tail of the
// later ones (wire/payload.h), nothing copied; one of more than
// kMaxSegments segments is counted (too_many_segments) and handed on as an
// empty span, which the Vnic counts as a frame it could not read
// (VnicCounters::rx_unreadable): every received frame reaches the callback
// once. Every received mbuf is freed (in bulk) before rx_burst returns, so
// the spans the callback sees are valid only during the call.
//
// On a device of several engine lcores (shard_links.h) each lcore has its
// own EthPortIo on its own queue of the port. During the callback, the
// frame being handed on may be passed to another lcore with hand_off(): the
// mbuf itself moves (a frame that is not the current mbuf's, a looped-back
// or PFC-staged copy, is copied into a new one). After the port's burst,
// rx_burst also takes what the other lcores handed this one (counted
// handed_in) and hands it on the same way.
#pragma once

#include <rte_mbuf.h>

#include <cassert>
#include <cstdint>
#include <span>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/engine/ack_hold.h"
#include "datapath/engine/eth_rx_counters.h"
#include "datapath/engine/mbuf_tx_sink.h"
#include "datapath/engine/shard_links.h"
#include "datapath/port/eth_port.h"
#include "datapath/wire/parser.h"
#include "datapath/wire/payload.h"

namespace uroce::engine {

class EthPortIo {
 public:
  static constexpr std::uint16_t kBurst = MbufTxSink::kBurst;
  // The most segments of a frame handed on: a 9000-byte MTU over 1 KiB
  // buffers (the smallest PortConfig::rx_buf) takes 9.
  static constexpr std::uint16_t kMaxSegments = 16;
  using Tx = MbufTxSink;

  // `port` must be open and outlive this object, as must `links` (the
  // hand-off rings of the port's lcores, or nullptr for a port of one);
  // `queue` is this lcore's queue and its shard index in `links`.
  explicit EthPortIo(port::EthPort& port, std::uint16_t queue = 0,
                     const ShardLinks* links = nullptr)
      : port_(port),
        txq_{port, queue},
        queue_(queue),
        links_(links != nullptr && links->shards() > 1 ? links : nullptr),
        tx_(port.pool(), port.peer_reads_tx_in_place()) {
    assert(links_ == nullptr || queue < links_->shards());
  }

  // The iteration's time and RX count, for the ACK hold (ack_hold.h);
  // mbufs carry no time.
  void begin(TimeNs now) {
    now_ = now;
    rx_before_ = rx_iteration_;
    rx_iteration_ = 0;
  }

  // Lets the end-of-iteration flush keep a burst of nothing but ACKs
  // (ack_hold.h): for a port whose TX burst is a system call.
  void set_ack_hold(const AckHoldConfig& c) {
    hold_ = AckHold(c);
    tx_.set_coalesce_acks(c.enabled);
  }

  // Receives one burst (and, on a port of several lcores, what the others
  // handed this one) and calls fn(std::span<const std::uint8_t> head,
  // wire::FrameTail tail) per frame; returns the frames received.
  template <class Fn>
  std::uint16_t rx_burst(Fn&& fn) {
    rte_mbuf* m[kBurst];
    std::uint16_t n = port_.rx_burst(m, kBurst, queue_);
    if (n != 0) {
      ++rx_.bursts;
      rx_.frames += n;
      if (links_ == nullptr) [[likely]] {
        deliver<false>(m, n, fn);
      } else {
        deliver<true>(m, n, fn);
      }
    }
    if (links_ != nullptr) [[unlikely]]
      n += take_handed(fn);
    rx_iteration_ += n;
    return n;
  }

  // Called from rx_burst's callback, for the frame it was given: moves the
  // frame to shard `to`'s lcore (the callback must not use it afterwards).
  // False when that lcore's ring is full or no mbuf could hold a copy (the
  // caller drops the frame and counts it). Only on a port of several lcores.
  bool hand_off(std::uint16_t to, std::span<const std::uint8_t> head, wire::FrameTail tail) {
    assert(links_ != nullptr && to != queue_);
    rte_mbuf* m = cur_;
    const bool own = m != nullptr && rte_pktmbuf_mtod(m, const std::uint8_t*) == head.data();
    if (!own) {
      m = copy_frame(head, tail);
      if (m == nullptr) {
        ++rx_.handoff_no_mbuf;
        return false;
      }
    }
    if (rte_ring_sp_enqueue(links_->ring(queue_, to), m) != 0) {
      ++rx_.handoff_full;
      if (!own) rte_pktmbuf_free(m);
      return false;
    }
    if (own) taken_ = true;
    ++rx_.handed_off;
    return true;
  }

  MbufTxSink& tx() { return tx_; }
  // Frames the sink takes before it needs a flush.
  std::uint16_t tx_room() const { return tx_.room_left(); }
  [[gnu::always_inline]] std::uint16_t flush() {
    const std::uint16_t sent = tx_.flush(txq_);
    // Frames the PMD refused stay pending, and their wait goes on.
    if (tx_.pending() == 0) hold_.flushed();
    return sent;
  }
  // Whether the last end-of-iteration flush kept its burst.
  bool tx_held() const { return hold_.holding(); }
  // The flush that ends an iteration: as flush(), unless the ACK hold keeps
  // the burst for a later iteration.
  [[gnu::always_inline]] std::uint16_t flush_end() {
    if (hold_.enabled() && hold_.keep(tx_.pending(), only_acks_pending(), rx_iteration_, rx_before_,
                                      now_)) [[unlikely]] {
      tx_.count_ack_hold();
      return 0;
    }
    return flush();
  }

  const EthRxCounters& rx_counters() const { return rx_; }
  port::EthPort& port() { return port_; }

 private:
  // This lcore's TX queue, as MbufTxSink::flush sees a port.
  struct TxQueue {
    port::EthPort& port;
    std::uint16_t queue;
    std::uint16_t tx_burst(rte_mbuf** pkts, std::uint16_t n) {
      return port.tx_burst(pkts, n, queue);
    }
  };

  bool only_acks_pending() const {
    // keep() refuses a burst of max_frames or more before this matters; the
    // walk is over fewer frames than that.
    if (tx_.pending() >= hold_.config().max_frames) return false;
    for (std::uint16_t i = 0; i < tx_.pending(); ++i) {
      if (!wire::peek_plain_ack(tx_.pending_frame(i))) return false;
    }
    return true;
  }

  // Hands each of m[0, n) on and frees them, but those handed off.
  template <bool kShards, class Fn>
  [[gnu::always_inline]] void deliver(rte_mbuf** m, std::uint16_t n, Fn& fn) {
    for (std::uint16_t i = 0; i < n; ++i) {
      if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(m[i + 1], void*));
      const std::span<const std::uint8_t> head(rte_pktmbuf_mtod(m[i], const std::uint8_t*),
                                               m[i]->data_len);
      if constexpr (kShards) cur_ = m[i];
      if (m[i]->nb_segs != 1) [[unlikely]] {
        chained(m[i], head, fn);
      } else {
        fn(head, wire::FrameTail{});
      }
      if constexpr (kShards) {
        // rte_pktmbuf_free_bulk skips null entries.
        if (taken_) m[i] = nullptr;
        taken_ = false;
        cur_ = nullptr;
      }
    }
    rte_pktmbuf_free_bulk(m, n);
  }

  // What the other lcores handed this one: one burst from each ring.
  template <class Fn>
  [[gnu::noinline]] std::uint16_t take_handed(Fn& fn) {
    std::uint16_t total = 0;
    for (std::uint16_t from = 0; from < links_->shards(); ++from) {
      if (from == queue_) continue;
      rte_mbuf* m[kBurst];
      const unsigned n = rte_ring_sc_dequeue_burst(links_->ring(from, queue_),
                                                   reinterpret_cast<void**>(m), kBurst, nullptr);
      if (n == 0) continue;
      rx_.handed_in += n;
      deliver<true>(m, static_cast<std::uint16_t>(n), fn);
      total = static_cast<std::uint16_t>(total + n);
    }
    return total;
  }

  // A new mbuf from the TX pool holding the frame, or nullptr.
  rte_mbuf* copy_frame(std::span<const std::uint8_t> head, wire::FrameTail tail) {
    const std::size_t len = head.size() + wire::tail_bytes(tail);
    rte_mbuf* m = rte_pktmbuf_alloc(port_.pool());
    if (m == nullptr) return nullptr;
    if (len > rte_pktmbuf_tailroom(m)) {
      rte_pktmbuf_free(m);
      return nullptr;
    }
    wire::copy_range(head, tail, 0, len, rte_pktmbuf_mtod(m, std::uint8_t*));
    m->data_len = static_cast<std::uint16_t>(len);
    m->pkt_len = static_cast<std::uint32_t>(len);
    return m;
  }

  template <class Fn>
  [[gnu::noinline]] void chained(const rte_mbuf* m, std::span<const std::uint8_t> head, Fn& fn) {
    if (m->nb_segs > kMaxSegments) {
      ++rx_.too_many_segments;
      fn(std::span<const std::uint8_t>{}, wire::FrameTail{});
      return;
    }
    std::span<const std::uint8_t> tail[kMaxSegments - 1];
    std::size_t n = 0;
    for (const rte_mbuf* s = m->next; s != nullptr && n < kMaxSegments - 1; s = s->next) {
      tail[n++] =
          std::span<const std::uint8_t>(rte_pktmbuf_mtod(s, const std::uint8_t*), s->data_len);
    }
    ++rx_.chained;
    fn(head, wire::FrameTail(tail, n));
  }

  port::EthPort& port_;
  TxQueue txq_;
  std::uint16_t queue_ = 0;
  const ShardLinks* links_ = nullptr;
  rte_mbuf* cur_ = nullptr;  // the frame being handed on (several lcores only)
  bool taken_ = false;       // ... and hand_off moved it
  MbufTxSink tx_;
  EthRxCounters rx_{};
  AckHold hold_{};
  TimeNs now_ = 0;
  std::uint32_t rx_iteration_ = 0;  // frames received since begin()
  std::uint32_t rx_before_ = 0;     // ... in the iteration before
};

}  // namespace uroce::engine
