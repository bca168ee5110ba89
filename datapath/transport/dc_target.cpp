#include "datapath/transport/dc_target.h"

#include <bit>
#include <cassert>
#include <cstring>

namespace uroce::transport {

namespace {

// a is after b in 24-bit serial order (as seq24.h's PSNs).
bool psn_newer(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t f = (a - b) & 0xFFFFFF;
  return f != 0 && f < 0x800000;
}

std::uint64_t mix64(std::uint64_t x) {
  // splitmix64's finalizer: every input bit reaches every output bit.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::uint64_t dc_identity_hash(const DcIdentity& id) {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::memcpy(&a, id.src.data(), 8);
  std::memcpy(&b, id.src.data() + 8, 8);
  const std::uint64_t c = (static_cast<std::uint64_t>(id.dci_qpn & 0xFFFFFF) << 16) | id.lane;
  return mix64(mix64(mix64(a) ^ b) ^ c);
}

DcTargetTable::DcTargetTable(const DcTargetLimits& limits)
    : stale_ns_(limits.stale_ns), ctx_(limits.contexts) {
  assert(limits.contexts > 0 && limits.contexts < kNone / 4);
  assert(limits.records_log2 <= 30);
  free_.reserve(limits.contexts);
  for (std::uint32_t i = limits.contexts; i > 0; --i) free_.push_back(i - 1);
  const std::size_t cap = std::bit_ceil(static_cast<std::size_t>(limits.contexts) * 2);
  index_.assign(cap, kNone);
  index_mask_ = cap - 1;
  rec_.resize(std::size_t{1} << limits.records_log2);
  rec_mask_ = rec_.size() - 1;
}

std::size_t DcTargetTable::memory_bytes() const {
  return ctx_.capacity() * sizeof(Context) + free_.capacity() * sizeof(std::uint32_t) +
         index_.capacity() * sizeof(std::uint32_t) + rec_.capacity() * sizeof(Record);
}

std::uint32_t DcTargetTable::find(const DcIdentity& id, std::uint64_t h) const {
  for (std::uint64_t i = h & index_mask_;; i = (i + 1) & index_mask_) {
    const std::uint32_t c = index_[i];
    if (c == kNone) return kNone;
    if (ctx_[c].hash == h && ctx_[c].id == id) return c;
  }
}

void DcTargetTable::index_insert(std::uint32_t ctx, std::uint64_t h) {
  std::uint64_t i = h & index_mask_;
  while (index_[i] != kNone) i = (i + 1) & index_mask_;
  index_[i] = ctx;
}

void DcTargetTable::index_erase(std::uint32_t ctx) {
  std::uint64_t i = ctx_[ctx].hash & index_mask_;
  while (index_[i] != ctx) {
    assert(index_[i] != kNone);
    i = (i + 1) & index_mask_;
  }
  // Backward-shift deletion: later entries of the probe run move up so
  // every lookup still meets its entry before an empty slot.
  std::uint64_t hole = i;
  for (std::uint64_t j = (i + 1) & index_mask_; index_[j] != kNone; j = (j + 1) & index_mask_) {
    const std::uint64_t home = ctx_[index_[j]].hash & index_mask_;
    // The entry at j may fill the hole when its home is not in (hole, j].
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!stays) {
      index_[hole] = index_[j];
      hole = j;
    }
  }
  index_[hole] = kNone;
}

void DcTargetTable::list_push(List& l, Links Context::*links, std::uint32_t c) {
  Links& x = ctx_[c].*links;
  x.prev = l.tail;
  x.next = kNone;
  if (l.tail != kNone) {
    (ctx_[l.tail].*links).next = c;
  } else {
    l.head = c;
  }
  l.tail = c;
}

void DcTargetTable::list_remove(List& l, Links Context::*links, std::uint32_t c) {
  Links& x = ctx_[c].*links;
  if (x.prev != kNone) {
    (ctx_[x.prev].*links).next = x.next;
  } else {
    l.head = x.next;
  }
  if (x.next != kNone) {
    (ctx_[x.next].*links).prev = x.prev;
  } else {
    l.tail = x.prev;
  }
  x.prev = x.next = kNone;
}

void DcTargetTable::q_push(std::uint32_t c) {
  assert(!ctx_[c].on_q);
  list_push(q_, &Context::q, c);
  ctx_[c].on_q = true;
}

void DcTargetTable::q_remove(std::uint32_t c) {
  if (!ctx_[c].on_q) return;
  list_remove(q_, &Context::q, c);
  ctx_[c].on_q = false;
}

void DcTargetTable::touch(std::uint32_t ctx, TimeNs now) {
  Context& x = ctx_[ctx];
  x.last = now;
  all_remove(ctx);
  all_push(ctx);
  // Until settle() says otherwise the context owes a response.
  q_remove(ctx);
  x.quiescent = false;
}

void DcTargetTable::retire(std::uint32_t ctx) {
  Context& x = ctx_[ctx];
  assert(x.used);
  Record& r = record_of(x.hash);
  const std::uint32_t tag = tag_of(x.hash);
  if (r.has_record && r.tag != tag) ++ctr_.record_overwrites;
  r.tag = tag;
  r.conn = x.conn;
  r.epsn = x.epsn;
  r.has_record = true;
  if (!r.has_floor || dc_conn_newer(x.conn, r.floor)) r.floor = x.conn;
  r.has_floor = true;
  index_erase(ctx);
  all_remove(ctx);
  q_remove(ctx);
  x.used = false;
  --used_;
}

void DcTargetTable::retire_to_free(std::uint32_t ctx) {
  retire(ctx);
  free_.push_back(ctx);
}

std::uint32_t DcTargetTable::take_slot(DcLookup& out) {
  if (!free_.empty()) {
    const std::uint32_t c = free_.back();
    free_.pop_back();
    return c;
  }
  const std::uint32_t c = q_.head;
  if (c == kNone) return kNone;
  out.evicted = true;
  out.old = ctx_[c].id;
  out.old_conn = ctx_[c].conn;
  out.old_epsn = ctx_[c].epsn;
  retire(c);
  ++ctr_.retired_pressure;
  return c;
}

void DcTargetTable::open(std::uint32_t ctx, const DcIdentity& id, std::uint64_t h,
                         std::uint32_t conn, TimeNs now) {
  Context& x = ctx_[ctx];
  x.id = id;
  x.hash = h;
  x.conn = conn;
  x.epsn = 0;
  x.used = true;
  x.peer_acked = kNone;
  x.quiescent = false;
  x.last = now;
  index_insert(ctx, h);
  all_push(ctx);
  ++used_;
  ++ctr_.opened;
}

DcLookup DcTargetTable::on_request(const DcIdentity& id, std::uint32_t conn, bool syn,
                                   std::uint32_t acked, TimeNs now) {
  DcLookup out;
  const std::uint64_t h = dc_identity_hash(id);
  const std::uint32_t c = find(id, h);
  if (c != kNone) {
    Context& x = ctx_[c];
    out.ctx = c;
    if (x.conn == conn) {
      // Packets may come out of order: the newest acknowledgement counts
      // (24-bit serial order, as PSNs).
      if (x.peer_acked == kNone || psn_newer(acked, x.peer_acked)) x.peer_acked = acked & 0xFFFFFF;
      touch(c, now);
      out.verdict = DcVerdict::kRun;
      return out;
    }
    if (dc_conn_newer(conn, x.conn) && syn) {
      // The initiator starts a connection only once the last one's WRs
      // completed: the old one is over. Its record and floor still go in,
      // so its late packets are answered, never run.
      retire(c);
      open(c, id, h, conn, now);
      ctx_[c].peer_acked = acked & 0xFFFFFF;
      ++ctr_.restarted;
      out.verdict = DcVerdict::kOpened;
      return out;
    }
    if (dc_conn_newer(x.conn, conn)) {
      ++ctr_.stale_conn;
      out.verdict = DcVerdict::kStale;
      return out;
    }
    // A newer connection without SYN: the initiator saw a response of a
    // connection this table no longer has.
  }
  Record& r = record_of(h);
  if (r.has_record && r.tag == tag_of(h) && r.conn == conn) {
    ++ctr_.gone;
    out.verdict = DcVerdict::kGone;
    out.value = r.epsn;
    return out;
  }
  if (c == kNone && syn && (!r.has_floor || dc_conn_newer(conn, r.floor))) {
    const std::uint32_t slot = take_slot(out);
    if (slot == kNone) {
      ++ctr_.busy;
      out.verdict = DcVerdict::kBusy;
      return out;
    }
    open(slot, id, h, conn, now);
    ctx_[slot].peer_acked = acked & 0xFFFFFF;
    out.ctx = slot;
    out.verdict = DcVerdict::kOpened;
    return out;
  }
  ++ctr_.unknown;
  out.verdict = DcVerdict::kUnknown;
  out.value = r.has_floor ? r.floor : 0;
  return out;
}

void DcTargetTable::settle(std::uint32_t ctx, bool quiescent, std::uint32_t epsn) {
  Context& x = ctx_[ctx];
  assert(x.used);
  x.epsn = epsn;
  x.quiescent = quiescent;
  const bool evictable = quiescent && x.peer_acked == (epsn & 0xFFFFFF);
  if (evictable && !x.on_q) {
    q_push(ctx);
  } else if (!evictable) {
    q_remove(ctx);
  }
}

DcLookup DcTargetTable::on_disconnect(const DcIdentity& id, std::uint32_t conn, std::uint32_t psn) {
  DcLookup out;
  out.ctx = kNone;
  const std::uint64_t h = dc_identity_hash(id);
  const std::uint32_t c = find(id, h);
  if (c != kNone && ctx_[c].conn == conn) {
    Context& x = ctx_[c];
    out.ctx = c;
    if (!x.quiescent || x.epsn != psn) {
      out.verdict = DcVerdict::kIgnore;
      return out;
    }
    out.value = x.epsn;
    retire_to_free(c);
    ++ctr_.retired_disconnect;
    out.verdict = DcVerdict::kGone;
    return out;
  }
  const Record& r = record_of(h);
  if (r.has_record && r.tag == tag_of(h) && r.conn == conn) {
    out.verdict = DcVerdict::kGone;
    out.value = r.epsn;
    return out;
  }
  out.verdict = DcVerdict::kUnknown;
  out.value = r.has_floor ? r.floor : 0;
  return out;
}

std::uint32_t DcTargetTable::retire_stale(TimeNs now) {
  const std::uint32_t c = all_.head;
  if (c == kNone || now < ctx_[c].last + stale_ns_) return kNone;
  retire_to_free(c);
  ++ctr_.retired_stale;
  return c;
}

void DcTargetTable::retire_failed(std::uint32_t ctx, std::uint32_t epsn) {
  assert(ctx_[ctx].used);
  ctx_[ctx].epsn = epsn;
  retire_to_free(ctx);
  ++ctr_.retired_error;
}

void DcTargetTable::release(std::uint32_t ctx) {
  if (!ctx_[ctx].used) return;
  retire_to_free(ctx);
}

void DcTargetTable::clear() {
  for (std::uint32_t c = all_.head; c != kNone;) {
    const std::uint32_t next = ctx_[c].all.next;
    retire_to_free(c);
    c = next;
  }
}

}  // namespace uroce::transport
