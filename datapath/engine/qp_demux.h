// QPN -> QP object, for the engine's RX dispatch: a fixed-size,
// direct-mapped table indexed by the low bits of the QPN.
//
// Invariant: at most one QP per slot; slot = qpn & (capacity - 1), and the
// slot remembers the full QPN, so a lookup is one index and one compare.
// This puts one rule on whoever allocates QPNs (the daemon's control path):
// two live QPs must differ in their low log2(capacity) bits; insert()
// refuses a clash with EEXIST. In exchange, RX dispatch never probes or
// hashes. Storage is allocated at construction only.
//
// T is whatever the engine keeps per QP (the QP itself, or an entry holding
// it and its CQs). Owned by one lcore; not thread-safe.
#pragma once

#include <cerrno>
#include <cstdint>
#include <vector>

#include "datapath/wire/bth.h"

namespace uroce::engine {

template <class T>
class QpDemux {
 public:
  // `capacity` is rounded up to a power of two (at least 1, at most 2^24:
  // a QPN has 24 bits).
  explicit QpDemux(std::uint32_t capacity) : slots_(round_up(capacity)) {
    mask_ = static_cast<std::uint32_t>(slots_.size() - 1);
  }

  // 0, EINVAL (QPN wider than 24 bits or null object), or EEXIST (the slot
  // holds another QPN, or this QPN is already there).
  int insert(std::uint32_t qpn, T* obj) {
    if (qpn > wire::kQpnMask || obj == nullptr) return EINVAL;
    Slot& s = slots_[qpn & mask_];
    if (s.obj != nullptr) return EEXIST;
    s = {qpn, obj};
    ++size_;
    return 0;
  }
  // Points an existing QPN at another object (the engine moving entries).
  // 0 or ENOENT.
  int update(std::uint32_t qpn, T* obj) {
    Slot* s = slot_of(qpn);
    if (s == nullptr || obj == nullptr) return ENOENT;
    s->obj = obj;
    return 0;
  }
  // 0 or ENOENT.
  int erase(std::uint32_t qpn) {
    Slot* s = slot_of(qpn);
    if (s == nullptr) return ENOENT;
    *s = {};
    --size_;
    return 0;
  }
  // The object for `qpn`, or nullptr.
  T* find(std::uint32_t qpn) const {
    const Slot& s = slots_[qpn & mask_];
    return s.obj != nullptr && s.qpn == qpn ? s.obj : nullptr;
  }
  // True when `qpn` could be inserted now.
  bool slot_free(std::uint32_t qpn) const {
    return qpn <= wire::kQpnMask && slots_[qpn & mask_].obj == nullptr;
  }

  std::uint32_t capacity() const { return mask_ + 1; }
  std::uint32_t size() const { return size_; }

 private:
  struct Slot {
    std::uint32_t qpn = 0;
    T* obj = nullptr;
  };
  static std::size_t round_up(std::uint32_t n) {
    std::size_t c = 1;
    const std::size_t limit = std::size_t{1} << 24;
    while (c < n && c < limit) c <<= 1;
    return c;
  }
  Slot* slot_of(std::uint32_t qpn) {
    Slot& s = slots_[qpn & mask_];
    return s.obj != nullptr && s.qpn == qpn ? &s : nullptr;
  }

  std::vector<Slot> slots_;
  std::uint32_t mask_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace uroce::engine
