#include "datapath/port/sim_link.h"

#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"

namespace uroce::port {

namespace {

// splitmix64 finaliser: turns (seed, direction) into well-separated
// generator seeds, so each direction draws from its own stream and traffic in
// one direction never shifts the random choices of the other.
std::uint64_t mix_seed(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::size_t kIpv4Start = wire::EthHdr::kSize;
constexpr std::size_t kIpv4End = kIpv4Start + wire::Ipv4Hdr::kSize;

// With probability p, marks an ECN-capable IPv4 frame CE (the draw is made
// only for such frames). True when it marked.
bool mark_ce(std::uint8_t* f, SeededRng& rng, double p) {
  if (wire::load_be16(f + 12) != wire::kEtherTypeIpv4) return false;
  wire::Ipv4Hdr ip = wire::Ipv4Hdr::read(f + kIpv4Start);
  if (ip.version() != 4 || ip.ecn() == wire::kEcnNotEct || ip.ecn() == wire::kEcnCe) return false;
  if (!rng.chance(p)) return false;
  ip.set_dscp_ecn(ip.dscp(), wire::kEcnCe);
  ip.fill_checksum();
  ip.write(f + kIpv4Start);
  return true;
}

SimDirectionConfig sanitised(SimDirectionConfig c) {
  if (c.queue_frames == 0) c.queue_frames = 1;
  return c;
}

}  // namespace

SimLink::SimLink(const SimLinkConfig& cfg)
    : pool_(cfg.pool_frames, cfg.slot_bytes),
      dir_{Direction{sanitised(cfg.dir[0]),
                     SeededRng(mix_seed(cfg.seed)),
                     {},
                     {},
                     0,
                     0,
                     0,
                     0,
                     0,
                     nullptr,
                     {}},
           Direction{sanitised(cfg.dir[1]),
                     SeededRng(mix_seed(cfg.seed ^ 0x5151515151515151ULL)),
                     {},
                     {},
                     0,
                     0,
                     0,
                     0,
                     0,
                     nullptr,
                     {}}} {
  for (Direction& d : dir_) {
    d.heap.reserve(cfg.pool_frames);
    d.txq.resize(d.cfg.queue_frames);
  }
}

TimeNs SimLink::serialisation_ns(const SimDirectionConfig& cfg, std::size_t bytes) {
  if (cfg.bandwidth_bps == 0) return 0;
  const unsigned __int128 bits = static_cast<unsigned __int128>(bytes + cfg.overhead_bytes) * 8;
  const unsigned __int128 num = bits * kNsPerSec + (cfg.bandwidth_bps - 1);
  return static_cast<TimeNs>(num / cfg.bandwidth_bps);
}

void SimLink::drain_txq(Direction& d, TimeNs now) {
  while (d.txq_count > 0 && d.txq[d.txq_head].departure <= now) {
    d.txq_bytes -= d.txq[d.txq_head].len;
    d.txq_head = (d.txq_head + 1) % d.txq.size();
    --d.txq_count;
  }
}

void SimLink::push_arrival(Direction& d, TimeNs arrival, std::uint32_t slot, std::uint32_t len) {
  d.heap.push_back(InFlight{arrival, d.next_seq++, slot, len});
  std::push_heap(d.heap.begin(), d.heap.end(), Later{});
}

SimSendResult SimLink::send(unsigned endpoint, std::span<const std::uint8_t> frame, TimeNs now) {
  if (endpoint >= kSimEndpoints) return SimSendResult::kBadEndpoint;
  Direction& d = dir_[endpoint];
  SimDirectionCounters& c = d.counters;
  const auto len = static_cast<std::uint32_t>(frame.size());
  ++c.sent_frames;
  c.sent_bytes += frame.size();

  if (frame.size() > pool_.slot_bytes()) {
    ++c.drop_oversize;
    return SimSendResult::kDroppedOversize;
  }
  drain_txq(d, now);
  if (d.txq_count == d.txq.size() ||
      (d.cfg.queue_bytes != 0 && d.txq_bytes + len > d.cfg.queue_bytes)) {
    ++c.drop_queue_full;
    return SimSendResult::kDroppedQueueFull;
  }
  const std::uint32_t slot = pool_.alloc();
  if (slot == FramePool::kInvalidSlot) {
    ++c.drop_pool_exhausted;
    return SimSendResult::kDroppedPoolExhausted;
  }

  // The frame now occupies the transmit queue and the wire.
  const TimeNs start = std::max(now, d.wire_free_at);
  const TimeNs departure = start + serialisation_ns(d.cfg, len);
  d.wire_free_at = departure;
  d.txq[(d.txq_head + d.txq_count) % d.txq.size()] = Queued{departure, len};
  ++d.txq_count;
  d.txq_bytes += len;
  TimeNs arrival = departure + d.cfg.propagation_ns;

  if (d.rng.chance(d.cfg.loss)) {
    pool_.free(slot);
    ++c.drop_loss;
    return SimSendResult::kDroppedLoss;
  }
  std::uint8_t* buf = pool_.data(slot);
  if (len > 0) std::copy(frame.begin(), frame.end(), buf);
  if (len > 0 && d.rng.chance(d.cfg.corrupt)) {
    const std::uint64_t bit = d.rng.below(static_cast<std::uint64_t>(len) * 8);
    buf[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    ++c.corrupted;
  }
  if (len >= kIpv4End && d.cfg.ce_mark > 0.0 && mark_ce(buf, d.rng, d.cfg.ce_mark)) {
    ++c.ce_marked;
  }
  if (d.rng.chance(d.cfg.reorder)) {
    arrival += d.cfg.reorder_hold_ns;
    ++c.reordered;
  }
  push_arrival(d, arrival, slot, len);

  if (d.rng.chance(d.cfg.duplicate)) {
    ++c.duplicated;
    const std::uint32_t dup = pool_.alloc();
    if (dup == FramePool::kInvalidSlot) {
      ++c.drop_pool_exhausted;
    } else {
      if (len > 0) std::copy(buf, buf + len, pool_.data(dup));
      push_arrival(d, arrival, dup, len);
    }
  }
  return SimSendResult::kQueued;
}

std::optional<SimDelivery> SimLink::peek(unsigned endpoint, TimeNs now) const {
  if (endpoint >= kSimEndpoints) return std::nullopt;
  const Direction& d = dir_[1 - endpoint];
  if (d.heap.empty() || d.heap.front().arrival > now) return std::nullopt;
  const InFlight& f = d.heap.front();
  return SimDelivery{{pool_.data(f.slot), f.len}, f.arrival, f.seq};
}

void SimLink::pop(unsigned endpoint, TimeNs now) {
  if (endpoint >= kSimEndpoints) return;
  Direction& d = dir_[1 - endpoint];
  if (d.heap.empty() || d.heap.front().arrival > now) return;
  const InFlight f = d.heap.front();
  std::pop_heap(d.heap.begin(), d.heap.end(), Later{});
  d.heap.pop_back();
  ++d.counters.delivered_frames;
  d.counters.delivered_bytes += f.len;
  if (d.pcap != nullptr && d.pcap->write(f.arrival, {pool_.data(f.slot), f.len}) != 0)
    ++pcap_errors_;
  pool_.free(f.slot);
}

std::optional<TimeNs> SimLink::next_arrival(unsigned endpoint) const {
  if (endpoint >= kSimEndpoints) return std::nullopt;
  const Direction& d = dir_[1 - endpoint];
  if (d.heap.empty()) return std::nullopt;
  return d.heap.front().arrival;
}

std::optional<TimeNs> SimLink::next_arrival() const {
  const std::optional<TimeNs> a = next_arrival(0);
  const std::optional<TimeNs> b = next_arrival(1);
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

std::size_t SimLink::in_flight_to(unsigned endpoint) const {
  if (endpoint >= kSimEndpoints) return 0;
  return dir_[1 - endpoint].heap.size();
}

void SimLink::attach_pcap(unsigned endpoint, PcapWriter* writer) {
  if (endpoint >= kSimEndpoints) return;
  dir_[1 - endpoint].pcap = writer;
}

}  // namespace uroce::port
