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
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <span>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/engine/eth_rx_counters.h"
#include "datapath/engine/mbuf_tx_sink.h"
#include "datapath/port/eth_port.h"
#include "datapath/wire/payload.h"

namespace uroce::engine {

class EthPortIo {
 public:
  static constexpr std::uint16_t kBurst = MbufTxSink::kBurst;
  // The most segments of a frame handed on: a 9000-byte MTU over 1 KiB
  // buffers (the smallest PortConfig::rx_buf) takes 9.
  static constexpr std::uint16_t kMaxSegments = 16;
  using Tx = MbufTxSink;

  // `port` must be open and outlive this object.
  explicit EthPortIo(port::EthPort& port)
      : port_(port), tx_(port.pool(), port.peer_reads_tx_in_place()) {}

  // Nothing to do: mbufs carry no time.
  void begin(TimeNs) {}

  // Receives one burst and calls fn(std::span<const std::uint8_t> head,
  // wire::FrameTail tail) per frame; returns the frames received.
  template <class Fn>
  std::uint16_t rx_burst(Fn&& fn) {
    rte_mbuf* m[kBurst];
    const std::uint16_t n = port_.rx_burst(m, kBurst);
    if (n == 0) return 0;
    ++rx_.bursts;
    rx_.frames += n;
    for (std::uint16_t i = 0; i < n; ++i) {
      if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(m[i + 1], void*));
      const std::span<const std::uint8_t> head(rte_pktmbuf_mtod(m[i], const std::uint8_t*),
                                               m[i]->data_len);
      if (m[i]->nb_segs != 1) [[unlikely]] {
        chained(m[i], head, fn);
        continue;
      }
      fn(head, wire::FrameTail{});
    }
    rte_pktmbuf_free_bulk(m, n);
    return n;
  }

  MbufTxSink& tx() { return tx_; }
  // Frames the sink takes before it needs a flush.
  std::uint16_t tx_room() const { return tx_.room_left(); }
  [[gnu::always_inline]] std::uint16_t flush() { return tx_.flush(port_); }

  const EthRxCounters& rx_counters() const { return rx_; }
  port::EthPort& port() { return port_; }

 private:
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
  MbufTxSink tx_;
  EthRxCounters rx_{};
};

}  // namespace uroce::engine
