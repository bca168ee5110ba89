#include "datapath/transport/mr_table.h"

#include <algorithm>
#include <cerrno>

namespace uroce::transport {

const char* mr_error_name(MrError e) {
  switch (e) {
    case MrError::kOk: return "ok";
    case MrError::kBadKey: return "bad_key";
    case MrError::kInvalidated: return "invalidated";
    case MrError::kWrongPd: return "wrong_pd";
    case MrError::kOutOfBounds: return "out_of_bounds";
    case MrError::kAccessDenied: return "access_denied";
    case MrError::kMisaligned: return "misaligned";
  }
  return "?";
}

namespace {

bool valid_desc(const MrDesc& d) {
  // Verbs: remote write and remote atomic need local write too.
  if ((d.access & (access::kRemoteWrite | access::kRemoteAtomic)) != 0 &&
      (d.access & access::kLocalWrite) == 0)
    return false;
  if (d.length > 0 && d.host == nullptr) return false;
  if (d.iova + d.length < d.iova) return false;  // wraps the address space
  return true;
}

}  // namespace

MrTable::MrTable(std::uint32_t capacity) : slots_(std::min(capacity, kMaxSlots)) {
  capacity = static_cast<std::uint32_t>(slots_.size());
  free_.reserve(capacity);
  // Slot 0 is never used so that key 0 is never valid; push in reverse so
  // slots are handed out in ascending order.
  for (std::uint32_t i = capacity; i > 1; --i) free_.push_back(i - 1);
}

std::uint32_t MrTable::reg(const MrDesc& d, int* err) {
  if (!valid_desc(d)) {
    if (err != nullptr) *err = EINVAL;
    return 0;
  }
  if (free_.empty()) {
    if (err != nullptr) *err = ENOMEM;
    return 0;
  }
  const std::uint32_t idx = free_.back();
  free_.pop_back();
  Slot& s = slots_[idx];
  s.desc = d;
  s.used = true;
  s.invalidated = false;
  ++s.variant;
  ++live_;
  if (err != nullptr) *err = 0;
  return (idx << 8) | s.variant;
}

const MrTable::Slot* MrTable::slot_for(std::uint32_t key) const {
  const std::uint32_t idx = key >> 8;
  if (idx == 0 || idx >= slots_.size()) return nullptr;
  const Slot& s = slots_[idx];
  if (!s.used || s.variant != static_cast<std::uint8_t>(key)) return nullptr;
  return &s;
}

int MrTable::dereg(std::uint32_t key) {
  Slot* s = slot_for(key);
  if (s == nullptr) return EINVAL;
  s->used = false;
  s->desc = MrDesc{};
  free_.push_back(key >> 8);
  --live_;
  return 0;
}

int MrTable::rereg(std::uint32_t key, const MrDesc& d) {
  Slot* s = slot_for(key);
  if (s == nullptr) return EINVAL;
  if (!valid_desc(d)) return EINVAL;
  s->desc = d;
  return 0;
}

int MrTable::invalidate(std::uint32_t key) {
  Slot* s = slot_for(key);
  if (s == nullptr) return EINVAL;
  s->invalidated = true;
  return 0;
}

const MrDesc* MrTable::find(std::uint32_t key) const {
  const Slot* s = slot_for(key);
  return s == nullptr ? nullptr : &s->desc;
}

MrError MrTable::resolve(std::uint32_t key, PdHandle pd, std::uint64_t va, std::uint64_t len,
                         std::uint32_t need, std::uint8_t** out) const {
  if (len == 0) {
    *out = nullptr;
    return MrError::kOk;
  }
  const Slot* s = slot_for(key);
  if (s == nullptr) return MrError::kBadKey;
  if (s->invalidated) return MrError::kInvalidated;
  const MrDesc& d = s->desc;
  if (d.pd != pd) return MrError::kWrongPd;
  if ((d.access & need) != need) return MrError::kAccessDenied;
  // IBTA 9.4.5: atomic operations need a naturally aligned 8-byte target.
  if ((need & access::kRemoteAtomic) != 0 && (va & 7) != 0) return MrError::kMisaligned;
  // Overflow-safe containment: va >= iova, len <= length, va - iova <= length - len.
  if (va < d.iova || len > d.length || va - d.iova > d.length - len) return MrError::kOutOfBounds;
  *out = d.host + (va - d.iova);
  return MrError::kOk;
}

}  // namespace uroce::transport
