#include "bench/raw_roles.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "datapath/port/prefault.h"

namespace uroce::bench {

std::atomic<bool> g_interrupted{false};

namespace {

bool interrupted() { return g_interrupted.load(std::memory_order_relaxed); }

std::uint64_t cycles(double seconds) {
  return static_cast<std::uint64_t>(seconds * static_cast<double>(rte_get_tsc_hz()));
}
double to_seconds(std::uint64_t c) {
  return static_cast<double>(c) / static_cast<double>(rte_get_tsc_hz());
}
std::uint64_t to_ns(std::uint64_t c) {
  return static_cast<std::uint64_t>(static_cast<double>(c) * 1e9 /
                                    static_cast<double>(rte_get_tsc_hz()));
}

// Takes `n` mbufs from the pool in one call and writes a frame into each,
// numbering them from *seq on. False (nothing taken) when the pool is dry.
bool fill_burst(rte_mempool* pool, const FrameTemplate& t, rte_mbuf** pkts, unsigned n,
                std::uint64_t* seq, BenchKind kind) {
  if (rte_pktmbuf_alloc_bulk(pool, pkts, n) != 0) return false;
  const auto len = static_cast<std::uint16_t>(t.frame_bytes());
  for (unsigned i = 0; i < n; ++i) {
    t.write(rte_pktmbuf_mtod(pkts[i], std::uint8_t*), (*seq)++, kind);
    pkts[i]->data_len = len;
    pkts[i]->pkt_len = len;
  }
  return true;
}

// Sends `copies` control frames, retrying for at most 50 ms while the PMD
// is busy; control frames are best effort (the peer has a deadline too).
void send_control(port::EthPort& port, const FrameTemplate& t, BenchKind kind, unsigned copies) {
  rte_mbuf* pkts[8];
  if (copies > 8) copies = 8;
  std::uint64_t seq = 0;
  if (!fill_burst(port.pool(), t, pkts, copies, &seq, kind)) return;
  const std::uint64_t give_up = rte_rdtsc() + cycles(0.05);
  unsigned sent = 0;
  while (sent < copies && rte_rdtsc() < give_up)
    sent += port.tx_burst(pkts + sent, static_cast<std::uint16_t>(copies - sent));
  if (sent < copies) rte_pktmbuf_free_bulk(pkts + sent, copies - sent);
}

// The sender's burst: frames the PMD has not taken yet stay at the front and
// go out first next time, so sequence numbers leave in order and no frame is
// built twice.
struct TxBurst {
  rte_mbuf* pkts[kMaxBurst];
  std::uint16_t pending = 0;
  std::uint64_t seq = 0;

  // Returns the number of frames the PMD accepted.
  std::uint16_t push(port::EthPort& port, const FrameTemplate& t, std::uint16_t burst,
                     std::uint64_t* alloc_failures) {
    if (pending < burst) {
      if (fill_burst(port.pool(), t, pkts + pending, burst - pending, &seq, BenchKind::kData))
        pending = burst;
      else ++*alloc_failures;
    }
    if (pending == 0) return 0;
    const std::uint16_t sent = port.tx_burst(pkts, pending);
    if (sent != 0 && sent < pending)
      std::memmove(pkts, pkts + sent, (pending - sent) * sizeof(pkts[0]));
    pending = static_cast<std::uint16_t>(pending - sent);
    return sent;
  }
  void release() {
    if (pending != 0) rte_pktmbuf_free_bulk(pkts, pending);
    pending = 0;
  }
};

// Receive-side accounting of one burst; frees every mbuf. Returns the number
// of stop frames seen.
struct RxCounter {
  bool counting = false;  // inside the measured window
  bool primed = false;    // next_seq is meaningful
  std::uint64_t next_seq = 0;
  std::uint64_t data_seen = 0;  // data frames since start, window or not

  unsigned take(rte_mbuf** pkts, std::uint16_t n, std::uint16_t dst_port, StreamStats* s) {
    unsigned stops = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
      std::uint64_t seq = 0;
      const FrameClass c = classify(rte_pktmbuf_mtod(pkts[i], const std::uint8_t*),
                                    pkts[i]->data_len, dst_port, &seq);
      if (c == FrameClass::kData) {
        ++data_seen;
        if (!counting) continue;
        ++s->packets;
        s->bytes += pkts[i]->pkt_len;
        if (primed && seq > next_seq) s->lost += seq - next_seq;
        if (!primed || seq >= next_seq) next_seq = seq + 1;
        primed = true;
      } else if (c == FrameClass::kStop) {
        ++stops;
      } else {
        ++s->foreign;
      }
    }
    if (n != 0) rte_pktmbuf_free_bulk(pkts, n);
    return stops;
  }
};

// Echoes the data frames of one burst in place and frees everything else.
// Returns true when a stop frame was among them.
bool echo_burst(port::EthPort& port, rte_mbuf** pkts, std::uint16_t n, EchoStats* s) {
  rte_mbuf* reply[kMaxBurst];
  std::uint16_t nreply = 0;
  bool stop = false;
  for (std::uint16_t i = 0; i < n; ++i) {
    std::uint8_t* f = rte_pktmbuf_mtod(pkts[i], std::uint8_t*);
    std::uint64_t seq = 0;
    const FrameClass c = classify(f, pkts[i]->data_len, kRxPort, &seq);
    if (c == FrameClass::kData) {
      swap_for_echo(f);
      reply[nreply++] = pkts[i];
      continue;
    }
    if (c == FrameClass::kStop) stop = true;
    else ++s->foreign;
    rte_pktmbuf_free(pkts[i]);
  }
  if (nreply != 0) {
    const std::uint16_t sent = port.tx_burst(reply, nreply);
    s->echoed += sent;
    if (sent < nreply) {
      s->dropped += nreply - sent;
      rte_pktmbuf_free_bulk(reply + sent, nreply - sent);
    }
  }
  return stop;
}

// The side that ends a run stops touching its port for a while before it
// closes it, so the peer can close first: a memif peer that closes while
// this side is inside rx/tx_burst can make the PMD read unmapped memory.
void quiesce(const RunParams& p) {
  std::this_thread::sleep_for(std::chrono::duration<double>(p.quiesce_s));
}

bool link_down(std::uint16_t port_id) {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_DOWN;
}

// One ping: send frame `seq`, poll for its echo while calling `service`
// (the ring self-test's echo side; a no-op between processes). Stores the
// round trip in cycles; false if the PMD refused it or no echo came in time.
template <class Service>
bool one_ping(port::EthPort& port, const FrameTemplate& data, std::uint16_t burst,
              std::uint64_t timeout, std::uint64_t seq, std::uint64_t* rtt, Service&& service) {
  rte_mbuf* m = nullptr;
  std::uint64_t next = seq;
  if (!fill_burst(port.pool(), data, &m, 1, &next, BenchKind::kData)) return false;
  const std::uint64_t t0 = rte_rdtsc();
  while (port.tx_burst(&m, 1) == 0) {
    service();
    if (rte_rdtsc() - t0 > timeout || interrupted()) {
      rte_pktmbuf_free(m);
      return false;
    }
  }
  rte_mbuf* rx[kMaxBurst];
  for (;;) {
    service();
    const std::uint16_t n = port.rx_burst(rx, burst);
    const std::uint64_t t1 = rte_rdtsc();
    bool got = false;
    for (std::uint16_t i = 0; i < n; ++i) {
      std::uint64_t s = 0;
      if (classify(rte_pktmbuf_mtod(rx[i], const std::uint8_t*), rx[i]->data_len, kTxPort, &s) ==
              FrameClass::kData &&
          s == seq)
        got = true;
    }
    if (n != 0) rte_pktmbuf_free_bulk(rx, n);
    if (got) {
      *rtt = t1 - t0;
      return true;
    }
    if (t1 - t0 > timeout || interrupted()) return false;
  }
}

template <class Service>
int ping_loop(port::EthPort& port, const FrameTemplate& data, const RunParams& p, RttStats* out,
              Service&& service) {
  const std::uint64_t timeout = cycles(p.reply_timeout_s);
  std::uint64_t seq = 0;
  std::uint64_t rtt = 0;
  // Find the peer: ping until the first echo comes back.
  const std::uint64_t give_up = rte_rdtsc() + cycles(p.wait_s);
  bool up = false;
  while (!up && !interrupted() && rte_rdtsc() < give_up)
    up = one_ping(port, data, p.burst, timeout, seq++, &rtt, service);
  if (!up) return -ETIMEDOUT;
  // As a uroce port's link probe does (port/prefault.h): a memif region
  // mapped at connect faults page by page on the first lap otherwise.
  (void)port::prefault_memif_regions();

  const std::uint64_t warm_end = rte_rdtsc() + cycles(p.warmup_s);
  const std::uint64_t end = warm_end + cycles(p.duration_s);
  bool measuring = false;
  std::uint64_t t_start = 0;
  std::uint64_t now = rte_rdtsc();
  while (!interrupted()) {
    now = rte_rdtsc();
    if (!measuring && now >= warm_end) {
      measuring = true;
      out->hist.clear();
      out->timeouts = 0;
      t_start = now;
    }
    if (measuring && now >= end) break;
    if (one_ping(port, data, p.burst, timeout, seq++, &rtt, service)) {
      if (measuring) out->hist.record(to_ns(rtt));
    } else if (measuring) {
      ++out->timeouts;
    }
    if (measuring && p.count != 0 && out->hist.count() + out->timeouts >= p.count) {
      now = rte_rdtsc();
      break;
    }
  }
  out->seconds = measuring ? to_seconds(now - t_start) : 0.0;
  return 0;
}

}  // namespace

int ring_stream(port::EthPort& a, port::EthPort& b, const FrameTemplate& data, const RunParams& p,
                StreamStats* out) {
  TxBurst tx;
  RxCounter rxc;
  rte_mbuf* rx[kMaxBurst];
  std::uint64_t alloc_failures = 0;
  const std::uint64_t warm_end = rte_rdtsc() + cycles(p.warmup_s);
  const std::uint64_t end = warm_end + cycles(p.duration_s);
  std::uint64_t t_start = 0;
  std::uint64_t now = 0;
  while (!interrupted()) {
    now = rte_rdtsc();
    if (!rxc.counting && now >= warm_end) {
      rxc.counting = true;
      t_start = now;
    }
    if (rxc.counting && now >= end) break;
    tx.push(a, data, p.burst, &alloc_failures);
    const std::uint16_t n = b.rx_burst(rx, p.burst);
    rxc.take(rx, n, kRxPort, out);
  }
  out->seconds = rxc.counting ? to_seconds(now - t_start) : 0.0;
  tx.release();
  // Drain what is still in flight so every mbuf is back in its pool.
  for (std::uint16_t n; (n = b.rx_burst(rx, kMaxBurst)) != 0;) rte_pktmbuf_free_bulk(rx, n);
  return rxc.data_seen == 0 ? -EIO : 0;
}

int ring_pingpong(port::EthPort& a, port::EthPort& b, const FrameTemplate& data, const RunParams& p,
                  RttStats* out) {
  EchoStats echo;
  rte_mbuf* rx[kMaxBurst];
  auto service = [&] {
    const std::uint16_t n = b.rx_burst(rx, p.burst);
    if (n != 0) echo_burst(b, rx, n, &echo);
  };
  const int rc = ping_loop(a, data, p, out, service);
  for (std::uint16_t n; (n = b.rx_burst(rx, kMaxBurst)) != 0;) rte_pktmbuf_free_bulk(rx, n);
  for (std::uint16_t n; (n = a.rx_burst(rx, kMaxBurst)) != 0;) rte_pktmbuf_free_bulk(rx, n);
  return rc == -ETIMEDOUT ? -EIO : rc;
}

int stream_send(port::EthPort& port, const FrameTemplate& data, const RunParams& p, TxStats* out) {
  TxBurst tx;
  rte_mbuf* rx[kMaxBurst];
  StreamStats ignored;
  RxCounter rxc;
  const std::uint64_t start = rte_rdtsc();
  const std::uint64_t hard_end = start + cycles(p.wait_s + p.warmup_s + p.duration_s + p.grace_s);
  std::uint64_t first_tx = 0;
  std::uint64_t now = start;
  bool was_up = false;
  for (std::uint64_t iter = 1; !interrupted(); ++iter) {
    const std::uint16_t sent = tx.push(port, data, p.burst, &out->alloc_failures);
    if (sent != 0 && out->packets == 0) first_tx = rte_rdtsc();
    out->packets += sent;
    // Control checks every 64 bursts keep them off the per-burst cost.
    if ((iter & 63) != 0) continue;
    now = rte_rdtsc();
    if (now >= hard_end) break;
    const std::uint16_t n = port.rx_burst(rx, kMaxBurst);
    if (rxc.take(rx, n, kTxPort, &ignored) != 0) {
      out->stopped_by_peer = true;
      break;
    }
    // A memif peer that closed its port shows as link down.
    if ((iter & 1023) == 0) {
      const bool down = link_down(port.port_id());
      if (!down) was_up = true;
      if (down && was_up && out->packets != 0) {
        out->stopped_by_peer = true;
        break;
      }
    }
  }
  now = rte_rdtsc();
  tx.release();
  out->seconds = out->packets != 0 ? to_seconds(now - first_tx) : 0.0;
  if (out->stopped_by_peer) quiesce(p);
  return out->packets == 0 ? -ETIMEDOUT : 0;
}

int stream_receive(port::EthPort& port, const FrameTemplate& stop, const RunParams& p,
                   StreamStats* out) {
  RxCounter rxc;
  rte_mbuf* rx[kMaxBurst];
  const std::uint64_t give_up = rte_rdtsc() + cycles(p.wait_s);
  while (rxc.data_seen == 0) {
    if (interrupted() || rte_rdtsc() >= give_up) return -ETIMEDOUT;
    const std::uint16_t n = port.rx_burst(rx, p.burst);
    rxc.take(rx, n, kRxPort, out);
  }
  const std::uint64_t warm_end = rte_rdtsc() + cycles(p.warmup_s);
  const std::uint64_t end = warm_end + cycles(p.duration_s);
  std::uint64_t t_start = 0;
  std::uint64_t now = 0;
  while (!interrupted()) {
    now = rte_rdtsc();
    if (!rxc.counting && now >= warm_end) {
      rxc.counting = true;
      t_start = now;
    }
    if (rxc.counting && now >= end) break;
    const std::uint16_t n = port.rx_burst(rx, p.burst);
    rxc.take(rx, n, kRxPort, out);
  }
  out->seconds = rxc.counting ? to_seconds(now - t_start) : 0.0;
  // Keep the port open until the sender has stopped: closing a memif port
  // while the peer is still sending races with the peer's data path. The
  // stop is repeated while data keeps coming (a stop frame can be lost); the
  // sender is gone when the link drops (memif) or the data stops (others).
  rxc.counting = false;
  StreamStats after;
  const std::uint64_t linger_end = rte_rdtsc() + cycles(p.linger_s);
  const std::uint64_t quiet = cycles(0.05);
  std::uint64_t last_data = rte_rdtsc();
  std::uint64_t last_stop = 0;
  bool was_up = false;
  while (!interrupted()) {
    now = rte_rdtsc();
    if (now >= linger_end) break;
    const std::uint64_t before = rxc.data_seen;
    const std::uint16_t n = port.rx_burst(rx, p.burst);
    rxc.take(rx, n, kRxPort, &after);
    if (rxc.data_seen != before) last_data = now;
    if (last_stop == 0 || (last_data > last_stop && now - last_stop > quiet / 2)) {
      send_control(port, stop, BenchKind::kStop, 4);
      last_stop = now;
    }
    if (now - last_data > quiet) break;
    const bool down = link_down(port.port_id());
    if (!down) was_up = true;
    if (down && was_up) break;
  }
  return 0;
}

int ping(port::EthPort& port, const FrameTemplate& data, const RunParams& p, RttStats* out) {
  const int rc = ping_loop(port, data, p, out, [] {});
  send_control(port, data, BenchKind::kStop, 4);
  quiesce(p);
  return rc;
}

int pong(port::EthPort& port, const RunParams& p, EchoStats* out) {
  rte_mbuf* rx[kMaxBurst];
  const std::uint64_t start = rte_rdtsc();
  const std::uint64_t wait = cycles(p.wait_s);
  const std::uint64_t idle = cycles(p.idle_s);
  const std::uint64_t hard_end = start + cycles(p.wait_s + p.warmup_s + p.duration_s + p.grace_s);
  const std::uint64_t hold = cycles(static_cast<double>(p.echo_hold_ns) * 1e-9);
  std::uint64_t last_rx = 0;
  while (!interrupted()) {
    const std::uint16_t n = port.rx_burst(rx, p.burst);
    const std::uint64_t now = rte_rdtsc();
    if (n != 0) {
      if (last_rx == 0) (void)port::prefault_memif_regions();  // as in ping_loop
      last_rx = now;
      if (hold != 0) {
        while (rte_rdtsc() - now < hold) {
        }
      }
      if (echo_burst(port, rx, n, out)) {
        out->stopped_by_peer = true;
        break;
      }
      continue;
    }
    if (last_rx == 0 && now - start > wait) return -ETIMEDOUT;
    if (last_rx != 0 && now - last_rx > idle) break;
    if (now >= hard_end) break;
  }
  return 0;
}

}  // namespace uroce::bench
