// The resolver ARP (arp_agent.h) and neighbour discovery (nd_agent.h) share:
// the life of a neighbour entry from a miss to reachable, stale or failed.
// The agents keep what differs (the frames, and the addresses that resolve
// at once); these templates keep the timing and the counting, over a
// BasicNeighborTable of either address family.
//
// `cfg` has retransmit_time, retries and failed_hold_time; `ctr` has the
// counters learned, refreshed, tx_requests, tx_retransmits, tx_probes,
// resolve_resolved, resolve_pending, resolve_failed and entries_failed;
// `request(ip, unicast)` builds one request for `ip` (broadcast or
// multicast when `unicast` is null, else to that MAC: a re-probe).
#pragma once

#include <algorithm>

#include "datapath/base/time.h"
#include "datapath/port/neighbor_table.h"
#include "datapath/wire/addr.h"

namespace uroce::port {

enum class ResolveStatus : std::uint8_t { kResolved, kPending, kFailed };

struct Resolution {
  ResolveStatus status = ResolveStatus::kPending;
  wire::MacAddr mac{};  // valid when status == kResolved
};

// Confirms ip -> mac and counts it (learned, or refreshed when the entry was
// already reachable or stale); false when it could not be stored.
template <class Addr, class Counters>
bool neighbor_learn(BasicNeighborTable<Addr>& t, const Addr& ip, const wire::MacAddr& mac,
                    TimeNs now, bool create, Counters& ctr) {
  const BasicNeighborEntry<Addr>* before = t.peek(ip);
  // An answer to an outstanding (or failed) request is a new resolution.
  const bool known = before != nullptr && (before->state == NeighborState::kReachable ||
                                           before->state == NeighborState::kStale);
  if (t.confirm(ip, mac, now, create) == nullptr) return false;
  ++(known ? ctr.refreshed : ctr.learned);
  return true;
}

// resolve() past the agent's own checks: a miss creates an incomplete entry
// and requests; a stale hit re-probes at most once per retransmit_time.
template <class Addr, class Cfg, class Counters, class Request>
Resolution neighbor_resolve(BasicNeighborTable<Addr>& t, const Addr& ip, TimeNs now, const Cfg& cfg,
                            Counters& ctr, TimeNs& next_scan, Request&& request) {
  BasicNeighborEntry<Addr>* n = t.lookup(ip, now);
  if (n == nullptr) {
    n = t.create_incomplete(ip, now);
    if (n == nullptr) {
      ++ctr.resolve_failed;
      return {ResolveStatus::kFailed, {}};
    }
    n->retries = 0;
    n->timer = now + cfg.retransmit_time;
    next_scan = std::min(next_scan, n->timer);
    request(ip, nullptr);
    ++ctr.tx_requests;
    ++ctr.resolve_pending;
    return {ResolveStatus::kPending, {}};
  }
  switch (n->state) {
    case NeighborState::kIncomplete: ++ctr.resolve_pending; return {ResolveStatus::kPending, {}};
    case NeighborState::kFailed:
      // lookup() removes failed entries whose hold-down is over, so this one
      // is still held down.
      ++ctr.resolve_failed;
      return {ResolveStatus::kFailed, {}};
    case NeighborState::kStale:
      if (now >= n->timer) {
        n->timer = now + cfg.retransmit_time;
        request(ip, &n->mac);
        ++ctr.tx_probes;
      }
      break;
    case NeighborState::kReachable: break;
  }
  ++ctr.resolve_resolved;
  return {ResolveStatus::kResolved, n->mac};
}

// One incomplete entry at `now`: retransmit when due, or fail it once its
// retries are spent (held down for failed_hold_time).
template <class Addr, class Cfg, class Counters, class Request>
void neighbor_retransmit(BasicNeighborEntry<Addr>& n, TimeNs now, const Cfg& cfg, Counters& ctr,
                         Request&& request) {
  if (now < n.timer) return;
  if (n.retries >= cfg.retries) {
    n.state = NeighborState::kFailed;
    n.timer = now + cfg.failed_hold_time;
    ++ctr.entries_failed;
    return;
  }
  ++n.retries;
  n.timer = now + cfg.retransmit_time;
  request(n.ip, nullptr);
  ++ctr.tx_requests;
  ++ctr.tx_retransmits;
}

// The periodic scan: ages the table and retransmits (through `step`, which
// calls neighbor_retransmit and emits) at most every `interval`, or earlier
// when an entry's timer is due. Cheap when nothing is due.
template <class Addr, class Step>
void neighbor_scan(BasicNeighborTable<Addr>& t, TimeNs now, TimeNs interval, TimeNs& next_scan,
                   Step&& step) {
  if (now < next_scan) return;
  next_scan = now + interval;
  t.age(now);
  t.for_each([&](BasicNeighborEntry<Addr>& n) {
    if (n.state != NeighborState::kIncomplete) return;
    step(n);
    if (n.state == NeighborState::kIncomplete && n.timer < next_scan) next_scan = n.timer;
  });
}

}  // namespace uroce::port
