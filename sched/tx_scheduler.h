// The TX scheduling interface the engine's pump phase goes through: given
// the set of flows (QPs) that have output, a policy decides the order in
// which they are served and how many frames each may emit per turn.
//
// Shape (a concept, so the engine calls the policy with no virtual call):
//   activate(f)   flow f has output; idempotent (a flow is queued at most
//                 once). Called from the packet path (RX dispatch, doorbells,
//                 timers) whenever a flow may have become ready.
//   remove(f)     flow f is gone (its QP was destroyed); the policy forgets
//                 it. Control path: may cost O(active flows).
//   active(f)     whether f is queued.
//   size()        flows queued.
//   round(serve)  one scheduling round of the engine iteration: the policy
//                 calls serve(f, budget) -> ServeResult for the flows it
//                 picks, in its order; `budget` is the most frames f may emit
//                 in this turn. The result says what f did: `sent` frames of
//                 `bytes` in all (policies that share by bytes read it),
//                 whether it has `more` output (then it stays queued, else it
//                 is dropped from the set until the next activate), and
//                 `stop` when the port took nothing (the round ends at once
//                 and f keeps its place). Returns the frames sent in the
//                 round.
//
// Flow ids are dense indices in [0, capacity) chosen by the engine (its QP
// slot index), so a policy keeps per-flow state in flat arrays sized at
// construction: nothing allocates after that.
//
// Threading: one engine lcore owns a scheduler; not thread-safe.
#pragma once

#include <concepts>
#include <cstdint>

namespace uroce::sched {

using FlowId = std::uint32_t;

struct ServeResult {
  std::uint32_t sent = 0;   // frames the flow emitted in this turn
  bool more = false;        // the flow still has output: keep it queued
  bool stop = false;        // the port has no room: end the round now
  std::uint64_t bytes = 0;  // what those frames carried on the wire
};

// The callback type a round() must accept (used only to state the concept).
struct ServeProbe {
  ServeResult operator()(FlowId, std::uint32_t) const { return {}; }
};

// A policy that shares by bytes says so (static constexpr bool
// kSharesBytes = true); the engine fills ServeResult::bytes only for those,
// so a policy that counts frames pays nothing for it.
template <class S>
inline constexpr bool kSharesBytes = requires {
  requires S::kSharesBytes;
};

template <class S>
concept TxScheduler = requires(S& s, const S& cs, FlowId f, ServeProbe probe) {
  { s.activate(f) } -> std::same_as<void>;
  { s.remove(f) } -> std::same_as<void>;
  { cs.active(f) } -> std::same_as<bool>;
  { cs.size() } -> std::same_as<std::uint32_t>;
  { s.round(probe) } -> std::same_as<std::uint32_t>;
};

}  // namespace uroce::sched
