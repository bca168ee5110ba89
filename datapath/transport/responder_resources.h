// The responder's READ/atomic resources (IBTA Vol1 9.5 and 9.7.5.1.x: "the
// responder resources" a QP's max_dest_rd_atomic sizes).
//
// One entry per READ or atomic request accepted, kept after it is answered
// so that a duplicate can be served without executing anything again:
//   READ    first..last PSN of its response stream and the stream's cursor;
//           a duplicate READ restarts the stream from the duplicate's PSN
//           with the duplicate's RETH (the requester may ask for the tail,
//           or with selective repeat for a range inside it).
//   atomic  its PSN and the original value the operation read; a duplicate
//           is answered from it (an atomic is never executed twice).
// Entries sit in a ring in PSN order; a new request takes the next slot,
// evicting the oldest entry once it has nothing left to send. While every
// slot still has responses to send the request finds no resource.
//
// Storage is allocated at construction; nothing allocates afterwards.
#pragma once

#include <cstdint>
#include <vector>

#include "datapath/transport/seq24.h"

namespace uroce::transport {

struct RdAtomicRes {
  enum class Kind : std::uint8_t { kRead, kAtomic };
  Kind kind = Kind::kRead;
  Psn first_psn{};
  Psn last_psn{};
  // Responses still to send (a READ stream not finished, an atomic ACK not
  // yet sent).
  bool pending = false;
  // READ stream cursor: next PSN, address and bytes left. The response
  // opcode depends only on cur_psn's place in first..last (a replay from
  // mid-range starts with MIDDLE or LAST).
  std::uint32_t rkey = 0;
  std::uint64_t va = 0;
  std::uint64_t resid = 0;
  Psn cur_psn{};
  // The stream stops after this PSN: last_psn, or for a selective-repeat
  // re-request of missing responses the end of the range it asked for.
  Psn end_psn{};
  // Streams with responses to send leave in this order (the order their
  // requests arrived; requeue puts a selective-repeat re-request last).
  std::uint32_t seq = 0;
  // Atomic: the value read before the operation.
  std::uint64_t orig = 0;

  bool contains(Psn p) const {
    return Psn::forward(first_psn, p) <= Psn::forward(first_psn, last_psn);
  }
};

class ResponderResources {
 public:
  // Room for `capacity` entries (0: none until reserve), limit = capacity.
  explicit ResponderResources(std::uint32_t capacity);
  // Grows the storage to at least `n` entries, keeping the entries in order
  // (control path: allocates; pointers from alloc/find/next_pending are not
  // valid across it).
  void reserve(std::uint32_t n);

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(slots_.size()); }
  std::uint32_t size() const { return count_; }
  // Active entries are limited to `n` (the QP's max_dest_rd_atomic, at most
  // capacity()); shrinking drops the oldest.
  void set_limit(std::uint32_t n);
  std::uint32_t limit() const { return limit_; }

  // A slot for a new request, or nullptr when the limit is 0 or every entry
  // still has responses to send. The entry is reset and marked pending.
  RdAtomicRes* alloc();
  // The newest entry whose PSN range holds p, or nullptr.
  RdAtomicRes* find(Psn p);
  // The entry with responses to send whose request came first (lowest
  // seq; without requeue, the oldest), or nullptr.
  RdAtomicRes* next_pending();
  // `r` has responses to send again (a selective-repeat re-request): after
  // every stream already waiting, which it does not cancel.
  void requeue(RdAtomicRes* r) {
    r->seq = next_seq_++;
    r->pending = true;
  }
  bool any_pending() const;
  // Marks every entry newer than `r` as having nothing to send (a duplicate
  // READ rewinds the stream to `r`; what followed will be asked for again).
  // True when an entry still had responses to send.
  bool cancel_after(const RdAtomicRes* r);
  void clear();

 private:
  RdAtomicRes& at(std::uint32_t i) { return slots_[(head_ + i) % slots_.size()]; }

  std::vector<RdAtomicRes> slots_;
  std::uint32_t head_ = 0;  // oldest entry
  std::uint32_t count_ = 0;
  std::uint32_t limit_ = 0;
  std::uint32_t next_seq_ = 0;
};

}  // namespace uroce::transport
