#include "datapath/transport/mr_table.h"

#include <algorithm>
#include <bit>
#include <cassert>
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
    case MrError::kWrongQp: return "wrong_qp";
    case MrError::kNotWindow: return "not_window";
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

constexpr std::uint32_t kIndexBits = 24;

}  // namespace

MrTable::MrTable(std::uint32_t capacity, std::uint64_t seed)
    : slots_(std::min(capacity, kMaxSlots)), rng_(seed) {
  capacity = static_cast<std::uint32_t>(slots_.size());
  slot_bits_ = capacity <= 1 ? 1 : static_cast<std::uint32_t>(std::bit_width(capacity - 1));
  free_.reserve(capacity);
  // Slot 0 is never used so that no key has slot 0; push in reverse so
  // slots are handed out in ascending order.
  for (std::uint32_t i = capacity; i > 1; --i) free_.push_back(i - 1);
}

std::uint32_t MrTable::fresh_key(std::uint32_t idx, std::uint32_t old_key) {
  const std::uint32_t tag_bits = kIndexBits - slot_bits_;
  for (;;) {
    const std::uint64_t r = rng_.next_u64();
    const std::uint32_t tag =
        tag_bits == 0 ? 0 : static_cast<std::uint32_t>(r >> 8) & ((1u << tag_bits) - 1);
    const std::uint32_t key = (((tag << slot_bits_) | idx) << 8) | static_cast<std::uint8_t>(r);
    if (key != old_key) return key;
  }
}

// by_index, lookup and check_range sit on every packet's key check; kept
// inline so that resolve costs what one function did before windows.
[[gnu::always_inline]] inline const MrTable::Slot* MrTable::by_index(std::uint32_t key) const {
  const std::uint32_t idx = (key >> 8) & ((1u << slot_bits_) - 1);
  if (idx == 0 || idx >= slots_.size()) return nullptr;
  const Slot& s = slots_[idx];
  return s.kind == Kind::kFree ? nullptr : &s;
}

[[gnu::always_inline]] inline MrError MrTable::lookup(std::uint32_t key, PdHandle pd,
                                                      const Slot** out) const {
  const Slot* s = by_index(key);
  if (s == nullptr) return MrError::kBadKey;
  if (s->desc.pd != pd) return MrError::kWrongPd;
  if (s->key != key) return MrError::kBadKey;
  *out = s;
  return MrError::kOk;
}

std::uint32_t MrTable::take_slot(Kind kind, PdHandle pd, int* err) {
  if (free_.empty()) {
    if (err != nullptr) *err = ENOMEM;
    return 0;
  }
  const std::uint32_t idx = free_.back();
  free_.pop_back();
  Slot& s = slots_[idx];
  s.kind = kind;
  s.desc = MrDesc{};
  s.desc.pd = pd;
  s.bound = false;
  s.qpn = 0;
  s.mr_key = 0;
  s.mws = 0;
  s.key = fresh_key(idx, s.key);
  if (err != nullptr) *err = 0;
  return s.key;
}

std::uint32_t MrTable::reg(const MrDesc& d, int* err) {
  if (!valid_desc(d)) {
    if (err != nullptr) *err = EINVAL;
    return 0;
  }
  const std::uint32_t key = take_slot(Kind::kMr, d.pd, err);
  if (key == 0) return 0;
  slots_[(key >> 8) & ((1u << slot_bits_) - 1)].desc = d;
  ++live_;
  return key;
}

int MrTable::dereg(std::uint32_t key) {
  const Slot* c = by_index(key);
  if (c == nullptr || c->key != key || c->kind != Kind::kMr || c->mws != 0) return EINVAL;
  Slot& s = const_cast<Slot&>(*c);
  s.kind = Kind::kFree;
  s.desc = MrDesc{};
  free_.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
  --live_;
  return 0;
}

int MrTable::rereg(std::uint32_t key, const MrDesc& d) {
  const Slot* c = by_index(key);
  if (c == nullptr || c->key != key || c->kind != Kind::kMr || c->mws != 0) return EINVAL;
  if (!valid_desc(d)) return EINVAL;
  const_cast<Slot*>(c)->desc = d;
  return 0;
}

std::uint32_t MrTable::alloc_mw(PdHandle pd, MwType type, int* err) {
  const std::uint32_t key = take_slot(type == MwType::kType1 ? Kind::kMw1 : Kind::kMw2, pd, err);
  if (key != 0) ++mws_live_;
  return key;
}

void MrTable::unbind(Slot& mw) {
  if (mw.bound && mw.desc.length != 0) {
    const Slot* mr = by_index(mw.mr_key);
    assert(mr != nullptr && mr->key == mw.mr_key && mr->mws > 0);
    --const_cast<Slot*>(mr)->mws;
  }
  const PdHandle pd = mw.desc.pd;
  mw.desc = MrDesc{};
  mw.desc.pd = pd;
  mw.bound = false;
  mw.qpn = 0;
  mw.mr_key = 0;
}

int MrTable::dealloc_mw(std::uint32_t key) {
  const Slot* c = by_index(key);
  if (c == nullptr || (c->key >> 8) != (key >> 8) ||
      (c->kind != Kind::kMw1 && c->kind != Kind::kMw2)) {
    return EINVAL;
  }
  Slot& s = const_cast<Slot&>(*c);
  unbind(s);
  s.kind = Kind::kFree;
  free_.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
  --mws_live_;
  return 0;
}

MrError MrTable::bind_mw(const MwBind& b, PdHandle pd, std::uint32_t qpn, std::uint32_t* new_key) {
  auto refuse = [&](MrError e) {
    ++mwc_.bind_refused[static_cast<std::size_t>(e)];
    return e;
  };
  const Slot* c = nullptr;
  MrError e = lookup(b.mw_key, pd, &c);
  if (e != MrError::kOk) return refuse(e);
  if (c->kind != Kind::kMw1 && c->kind != Kind::kMw2) return refuse(MrError::kBadKey);
  Slot& mw = const_cast<Slot&>(*c);
  const bool type2 = mw.kind == Kind::kMw2;
  if ((b.access & ~access::kMwBindable) != 0) return refuse(MrError::kAccessDenied);
  // o10-36.2.2: no zero-based type-1 window.
  if (!type2 && (b.access & access::kZeroBased) != 0) return refuse(MrError::kAccessDenied);
  // o10-37.2.30: a type-2 window is bound only from the free state;
  // o10-37.2.40: with an MR and a length (invalidation unbinds it).
  if (type2 && mw.bound) return refuse(MrError::kInvalidated);
  if (type2 && b.length == 0) return refuse(MrError::kOutOfBounds);
  const Slot* mr = nullptr;
  if (b.length != 0) {
    // The MR must be of the window's PD (the QP's, checked above).
    e = lookup(b.mr_key, pd, &mr);
    if (e != MrError::kOk) return refuse(e);
    if (mr->kind != Kind::kMr) return refuse(MrError::kBadKey);
    const MrDesc& d = mr->desc;
    // C10-73: the MR allows binding; no window on a zero-based MR.
    if ((d.access & access::kMwBind) == 0 || (d.access & access::kZeroBased) != 0) {
      return refuse(MrError::kAccessDenied);
    }
    // C10-74: a writable window needs a locally writable MR.
    if ((b.access & (access::kRemoteWrite | access::kRemoteAtomic)) != 0 &&
        (d.access & access::kLocalWrite) == 0) {
      return refuse(MrError::kAccessDenied);
    }
    // C10-75: the window lies inside the MR.
    if (b.addr < d.iova || b.length > d.length || b.addr - d.iova > d.length - b.length) {
      return refuse(MrError::kOutOfBounds);
    }
  }
  unbind(mw);
  mw.key = (mw.key & ~0xFFu) | (b.new_key & 0xFFu);
  mw.bound = true;
  if (b.length != 0) {
    const MrDesc& d = mr->desc;
    mw.desc.iova = (b.access & access::kZeroBased) != 0 ? 0 : b.addr;
    mw.desc.length = b.length;
    mw.desc.access = b.access;
    mw.desc.host = d.host + (b.addr - d.iova);
    mw.mr_key = mr->key;
    ++const_cast<Slot*>(mr)->mws;
  }
  if (type2) mw.qpn = qpn;
  ++mwc_.binds;
  *new_key = mw.key;
  return MrError::kOk;
}

MrError MrTable::invalidate(std::uint32_t key, PdHandle pd) {
  auto refuse = [&](MrError e) {
    ++mwc_.inv_refused[static_cast<std::size_t>(e)];
    return e;
  };
  const Slot* c = nullptr;
  const MrError e = lookup(key, pd, &c);
  if (e != MrError::kOk) return refuse(e);
  // o10-37.2.26: type-1 windows and (non fast-registration) MRs are not
  // invalidated.
  if (c->kind != Kind::kMw2) return refuse(MrError::kNotWindow);
  // A free window stays free (rxe_check_invalidate_mw refuses only freed
  // and type-1 windows).
  unbind(const_cast<Slot&>(*c));
  ++mwc_.invalidates;
  return MrError::kOk;
}

const MrDesc* MrTable::find(std::uint32_t key) const {
  const Slot* s = by_index(key);
  return s == nullptr || s->key != key || s->kind != Kind::kMr ? nullptr : &s->desc;
}

[[gnu::always_inline]] inline MrError MrTable::check_range(const MrDesc& d, std::uint64_t va,
                                                           std::uint64_t len, std::uint32_t need,
                                                           std::uint8_t** out) const {
  if ((d.access & need) != need) return MrError::kAccessDenied;
  // IBTA 9.4.5: atomic operations need a naturally aligned 8-byte target.
  if ((need & access::kRemoteAtomic) != 0 && (va & 7) != 0) return MrError::kMisaligned;
  // Overflow-safe containment: va >= iova, len <= length, va - iova <= length - len.
  if (va < d.iova || len > d.length || va - d.iova > d.length - len) return MrError::kOutOfBounds;
  *out = d.host + (va - d.iova);
  return MrError::kOk;
}

MrError MrTable::resolve(std::uint32_t key, PdHandle pd, std::uint64_t va, std::uint64_t len,
                         std::uint32_t need, std::uint8_t** out) const {
  if (len == 0) {
    *out = nullptr;
    return MrError::kOk;
  }
  const Slot* s = nullptr;
  const MrError e = lookup(key, pd, &s);
  if (e != MrError::kOk) return e;
  // A window's key is an rkey only.
  if (s->kind != Kind::kMr) return MrError::kBadKey;
  return check_range(s->desc, va, len, need, out);
}

MrError MrTable::resolve_remote(std::uint32_t key, PdHandle pd, std::uint32_t qpn, std::uint64_t va,
                                std::uint64_t len, std::uint32_t need, std::uint8_t** out) const {
  if (len == 0) {
    *out = nullptr;
    return MrError::kOk;
  }
  const Slot* s = nullptr;
  const MrError e = lookup(key, pd, &s);
  if (e != MrError::kOk) return e;
  if (s->kind == Kind::kMr) return check_range(s->desc, va, len, need, out);
  if (!s->bound || s->desc.length == 0) return MrError::kInvalidated;
  if (s->kind == Kind::kMw2 && s->qpn != qpn) return MrError::kWrongQp;
  return check_range(s->desc, va, len, need, out);
}

}  // namespace uroce::transport
