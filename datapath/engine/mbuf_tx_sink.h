// A transport TxSink (datapath/transport/sinks.h) over a DPDK mempool: one
// mbuf per frame, built in the mbuf's data area (small frames: in a stage,
// below), collected into a TX burst of up to kBurst frames that flush()
// hands to the port.
//
//   tx_alloc(n)   stages one mbuf and returns n bytes to build the frame in
//                 (the mbuf's first n data bytes, or the stage's); empty
//                 when n exceeds the data room, when kBurst frames already
//                 wait for flush(), or when the pool is empty (each counted).
//                 A staged mbuf that is never committed (the transport
//                 abandoned the frame) is reused by the next tx_alloc.
//   tx_commit(n)  moves a frame built in the stage into the mbuf, sets the
//                 staged mbuf's lengths to n and appends it to the burst.
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
// Streaming (on for a port whose peer reads our frames in place, on its own
// core: port::EthPort::peer_reads_tx_in_place). Small frames (up to
// kStageBytes: every frame whose ICRC is taken over the whole finished
// frame) are built in the sink's own stage, a buffer that stays in this
// core's cache, and tx_commit moves them into their mbuf: the first frame of
// a burst with plain stores, the others with streaming stores (whole lines,
// made visible before the burst goes out). Why: such an mbuf comes back to
// the pool after the peer's core read its frame, so its lines sit in that
// core's cache. Written in place, each first store to a line waits for the
// line to come back, later stores queue behind it (x86 commits stores in
// order), and the ICRC's read of the headers just written waits for all of
// them: a 64 B ib_send_bw over memif zero-copy spent 46 % of the sender's
// time in that read. Streaming stores fetch no line, and a frame built and
// checksummed in the stage never reads the mbuf. They send the lines to
// memory, though, so the peer reads them from there: the first frame of a
// burst, the one a ping-pong waits for, keeps plain stores. Where this core
// reads its own frames again (a ring, or a PMD that copies them out on this
// core), streaming would only cost: it is off (docs/performance.md, "Where
// embedded mode's time goes").
//
// Per frame: one rte_pktmbuf_alloc from the pool's per-lcore cache; no other
// allocation, no virtual call, no lock. Owned by one lcore.
#pragma once

#include <emmintrin.h>
#include <rte_mbuf.h>

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/engine/mbuf_tx_counters.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"

namespace uroce::engine {

class MbufTxSink {
 public:
  static constexpr std::uint16_t kBurst = 32;
  // Every frame whose ICRC finish_roce takes over the whole frame (icrc.h),
  // rounded up to whole cache lines.
  static constexpr std::size_t kStageBytes = 448;
  static_assert(kStageBytes >= wire::EthHdr::kSize + wire::kIcrcOneCall &&
                kStageBytes % RTE_CACHE_LINE_SIZE == 0);

  // `pool` must outlive the sink; its data room (minus headroom) bounds the
  // frame size. `stream`: see "Streaming" above.
  explicit MbufTxSink(rte_mempool* pool, bool stream = false)
      : pool_(pool),
        stream_(stream),
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
    auto* data = rte_pktmbuf_mtod(staged_, std::uint8_t*);
    in_stage_ = stream_ && n <= kStageBytes && line_aligned(data) && whole_lines(n) <= room_;
    return {in_stage_ ? stage_.data() : data, n};
  }

  // n is at most what the preceding tx_alloc returned (the TxSink contract).
  void tx_commit(std::size_t n) {
    if (staged_ == nullptr) {
      ++ctr_.bad_commit;
      return;
    }
    // count_ < kBurst holds: tx_alloc staged only below kBurst, and nothing
    // but tx_commit raises count_.
    if (in_stage_) {
      auto* data = rte_pktmbuf_mtod(staged_, std::uint8_t*);
      if (count_ == 0) {
        std::memcpy(data, stage_.data(), n);
      } else {
        stream_out(data, n);
        streamed_ = true;
        ++ctr_.streamed;
      }
      in_stage_ = false;
    }
    if (coalesce_acks_ && replaced_pending_ack(n)) [[unlikely]] {
      ++ctr_.committed;
      return;
    }
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
    // Streaming stores are weakly ordered: the frames are visible before
    // the PMD publishes their descriptors.
    if (streamed_) {
      _mm_sfence();
      streamed_ = false;
    }
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

  // The span the last tx_alloc returned is the stage, not the mbuf (until
  // its frame is committed).
  bool staging() const { return in_stage_; }
  std::uint16_t pending() const { return count_; }
  // Pending frame i (i < pending()), as it will leave.
  std::span<const std::uint8_t> pending_frame(std::uint16_t i) const {
    assert(i < count_);
    return {rte_pktmbuf_mtod(pending_[i], const std::uint8_t*), pending_[i]->data_len};
  }
  // An end-of-iteration flush put off (ack_hold.h), counted here with the
  // sink's other TX figures.
  void count_ack_hold() { ++ctr_.ack_holds; }
  // A committed ACK replaces a pending ACK of the same QP when nothing but
  // ACKs follows that one in the burst (ack_hold.h): the newer acknowledges
  // everything the older does (IBTA 9.7.5.1.1), and no response of that QP
  // committed in between is overtaken.
  void set_coalesce_acks(bool on) { coalesce_acks_ = on; }
  std::uint16_t room_left() const { return static_cast<std::uint16_t>(kBurst - count_); }
  bool full() const { return count_ == kBurst; }
  std::uint32_t data_room() const { return room_; }
  const MbufTxCounters& counters() const { return ctr_; }

 private:
  static std::size_t whole_lines(std::size_t n) {
    return (n + RTE_CACHE_LINE_SIZE - 1) & ~std::size_t{RTE_CACHE_LINE_SIZE - 1};
  }
  static bool line_aligned(const void* p) {
    return (reinterpret_cast<std::uintptr_t>(p) & (RTE_CACHE_LINE_SIZE - 1)) == 0;
  }
  // The stage's first n bytes, as whole lines, into `dst` (line-aligned,
  // whole_lines(n) bytes of room): the bytes past n are the stage's stale
  // ones, beyond the frame.
  void stream_out(std::uint8_t* dst, std::size_t n) {
    const auto* src = reinterpret_cast<const __m128i*>(stage_.data());
    auto* out = reinterpret_cast<__m128i*>(dst);
    for (std::size_t i = 0, e = whole_lines(n) / sizeof(__m128i); i < e; ++i) {
      _mm_stream_si128(out + i, _mm_load_si128(src + i));
    }
  }

  // tx_commit's ACK coalescing: true when the frame just built (n bytes, in
  // the staged mbuf) was copied over a pending ACK of its QP instead; the
  // staged mbuf stays for the next tx_alloc.
  bool replaced_pending_ack(std::size_t n) {
    const std::span<const std::uint8_t> f(rte_pktmbuf_mtod(staged_, const std::uint8_t*), n);
    if (!wire::peek_plain_ack(f)) return false;
    for (std::uint16_t i = count_; i-- > 0;) {
      const std::span<const std::uint8_t> g = pending_frame(i);
      if (!wire::peek_plain_ack(g)) return false;
      if (g.size() == n && wire::same_destination_qp(f, g)) {
        std::memcpy(rte_pktmbuf_mtod(pending_[i], std::uint8_t*), f.data(), n);
        ++ctr_.acks_coalesced;
        return true;
      }
    }
    return false;
  }

  rte_mempool* pool_;
  bool stream_;
  bool coalesce_acks_ = false;
  std::uint32_t room_;
  rte_mbuf* staged_ = nullptr;
  bool in_stage_ = false;  // the last tx_alloc returned stage_
  bool streamed_ = false;  // a pending frame was streamed since the last flush
  alignas(RTE_CACHE_LINE_SIZE) std::array<std::uint8_t, kStageBytes> stage_{};
  std::uint16_t count_ = 0;
  std::array<rte_mbuf*, kBurst> pending_{};
  MbufTxCounters ctr_{};
};

}  // namespace uroce::engine
