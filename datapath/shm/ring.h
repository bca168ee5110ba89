// Single-producer/single-consumer rings in rxe's layout (rxe_layout.h) over
// memory that two processes map: the application's verbs provider and the
// daemon. The three uses:
//
//   SQ        provider produces rxe_send_wqe, daemon consumes
//   RQ, SRQ   provider produces rxe_recv_wqe, daemon consumes
//   CQ        daemon produces ib_uverbs_wc, provider consumes
//
// Index rule (rxe's): a ring has 2^n slots; both indices always lie in
// [0, index_mask] and advance as (i + 1) & index_mask. The ring is empty when
// producer == consumer and full when ((producer + 1 - consumer) & index_mask)
// == 0, i.e. consumer == (producer + 1) & index_mask, so it holds at most
// 2^n - 1 elements. Ready = (producer - consumer) & index_mask, free =
// (consumer - producer - 1) & index_mask.
//
// Memory ordering (std::atomic_ref on the two index words; nothing else in
// the ring is atomic):
//   producer: writes the element, then store-release of producer_index
//             (publish); it load-acquires consumer_index before reusing a
//             slot (free_slots), which orders the consumer's reads of that
//             slot before our overwrite.
//   consumer: load-acquires producer_index before reading elements
//             (ready), and store-releases consumer_index once it is done
//             with them (release).
//
// Trust: each side keeps private copies of the geometry and of the index it
// owns, set at attach, and never reads either back from shared memory; the
// peer's index is loaded and masked before any use. So whatever the peer (a
// buggy or hostile application) writes into the header, every slot address
// is data + ((i & index_mask) << log2_elem_size), inside the mapping. A
// corrupt peer index can only make the ring look fuller or emptier than it
// is, which hurts the peer's own queue; slot contents stay untrusted and the
// daemon copies and validates them (wqe_copy.h).
//
// Post and poll take no lock, allocate nothing and make no system call. One
// thread per side (the provider serialises its callers with its own lock).
#pragma once

// <rdma/rdma_user_rxe.h> pulls in <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK includes it); glibc's header first makes the kernel's
// skip its duplicate definitions.
#include <netinet/in.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/shm/rxe_layout.h"

namespace uroce::shm {

enum class RingError : std::uint8_t {
  kOk = 0,
  kBadGeometry,   // element size or slot count out of range
  kElemTooSmall,  // elements cannot hold the fixed part of this ring's type
  kTooSmall,      // the memory is shorter than the geometry needs
  kMisaligned,    // the memory does not start on a kRingAlign boundary
};

const char* to_string(RingError e);

// Bounds on geometry. 64 KiB elements and 2^20 slots are far above what rxe
// allows (max_qp_wr 16K, max_cqe 32K) yet keep a ring under 2^36 bytes.
inline constexpr std::uint32_t kMinLog2ElemSize = 4;
inline constexpr std::uint32_t kMaxLog2ElemSize = 16;
inline constexpr std::uint32_t kMinLog2Slots = 1;
inline constexpr std::uint32_t kMaxLog2Slots = 20;
// Keeps the index words on their own cache lines and every slot 8-aligned.
inline constexpr std::size_t kRingAlign = 64;

struct RingGeometry {
  std::uint32_t log2_elem_size = 0;
  std::uint32_t log2_slots = 0;

  std::uint32_t elem_size() const { return 1u << log2_elem_size; }
  std::uint32_t slots() const { return 1u << log2_slots; }
  std::uint32_t index_mask() const { return slots() - 1; }
  // One slot always stays empty to tell full from empty.
  std::uint32_t capacity() const { return slots() - 1; }
  std::size_t bytes() const {
    return kQueueHeaderBytes + (static_cast<std::size_t>(slots()) << log2_elem_size);
  }
  bool valid() const {
    return log2_elem_size >= kMinLog2ElemSize && log2_elem_size <= kMaxLog2ElemSize &&
           log2_slots >= kMinLog2Slots && log2_slots <= kMaxLog2Slots;
  }
  bool operator==(const RingGeometry&) const = default;
};

// The smallest geometry whose elements hold `elem_bytes` and which can hold
// `depth` elements at once (so 2^n >= depth + 1), as rxe rounds both up to
// powers of two. kBadGeometry when either bound is exceeded or depth is 0.
RingError make_geometry(std::size_t elem_bytes, std::uint32_t depth, RingGeometry* out);

// Element sizes for each use, computed like rdma_rxe: a send WQE's tail holds
// max_sge SGEs or max_inline bytes, whichever is larger.
std::size_t sq_elem_bytes(std::uint32_t max_sge, std::uint32_t max_inline);
std::size_t rq_elem_bytes(std::uint32_t max_sge);
inline constexpr std::size_t cq_elem_bytes() { return kCqeBytes; }

// Writes a fresh header into `mem` (the creating side, i.e. the daemon, before
// the memory is shared): geometry fields, both indices 0. Slot contents are
// left as they are (a new memfd reads as zeros).
RingError ring_init(void* mem, std::size_t len, const RingGeometry& g);

// Reads the geometry a header announces and checks it is valid and fits in
// `len` bytes. For the provider, which learns the geometry from the header;
// the daemon never calls it on memory an application can write.
RingError read_geometry(const void* mem, std::size_t len, RingGeometry* out);

// What each ring carries: the fixed part's type and its size in the C ABI.
struct SqElement {
  using Fixed = rxe_send_wqe;
  static constexpr std::size_t kFixedBytes = kSendWqeFlexOffset;
};
struct RqElement {
  using Fixed = rxe_recv_wqe;
  static constexpr std::size_t kFixedBytes = kRecvWqeFlexOffset;
};
struct CqElement {
  using Fixed = ib_uverbs_wc;
  static constexpr std::size_t kFixedBytes = kCqeBytes;
};

namespace detail {

// Geometry, private index and the index-word accessors both sides share.
class RingCore {
 public:
  bool attached() const { return hdr_ != nullptr; }
  const RingGeometry& geometry() const { return geo_; }
  std::uint32_t elem_size() const { return geo_.elem_size(); }
  // The private copy of the index this side owns.
  std::uint32_t own_index() const { return own_; }

 protected:
  // Checks `mem`/`len` against `g` and that elements hold `fixed_bytes`;
  // takes the owned index from the header once (masked) so that re-attaching
  // a ring in use continues where it was.
  RingError attach(void* mem, std::size_t len, const RingGeometry& g, std::size_t fixed_bytes,
                   bool producer);

  std::uint32_t load_peer(std::uint32_t& word) const {
    return std::atomic_ref<std::uint32_t>(word).load(std::memory_order_acquire) & mask_;
  }
  static void store_own(std::uint32_t& word, std::uint32_t v) {
    std::atomic_ref<std::uint32_t>(word).store(v, std::memory_order_release);
  }
  std::byte* slot_at(std::uint32_t i) const {
    return data_ + (static_cast<std::size_t>(i & mask_) << geo_.log2_elem_size);
  }

  rxe_queue_buf* hdr_ = nullptr;
  std::byte* data_ = nullptr;
  RingGeometry geo_{};
  std::uint32_t mask_ = 0;
  std::uint32_t own_ = 0;
};

}  // namespace detail

template <class E>
class RingProducer : public detail::RingCore {
 public:
  RingError attach(void* mem, std::size_t len, const RingGeometry& g) {
    return RingCore::attach(mem, len, g, E::kFixedBytes, true);
  }

  // Slots that may be written now. Load-acquires the consumer index.
  std::uint32_t free_slots() const { return (load_peer(hdr_->consumer_index) - own_ - 1) & mask_; }
  bool full() const { return free_slots() == 0; }

  // The slot `k` places past the producer index; write it only for
  // k < free_slots(). Any k gives an address inside the ring.
  std::byte* slot_bytes(std::uint32_t k = 0) const { return slot_at(own_ + k); }
  // The fixed part of that slot; its flexible tail is at
  // slot_bytes(k) + E::kFixedBytes, up to elem_size().
  typename E::Fixed* slot(std::uint32_t k = 0) const {
    return reinterpret_cast<typename E::Fixed*>(slot_bytes(k));
  }

  // Makes the next `n` slots visible to the consumer (store-release of the
  // producer index). `n` must not exceed the last free_slots() result.
  void publish(std::uint32_t n = 1) {
    own_ = (own_ + n) & mask_;
    store_own(hdr_->producer_index, own_);
  }

  // Copies `len` bytes into the next slot and publishes it; false when the
  // ring is full or the bytes do not fit in an element.
  bool try_push(const void* src, std::size_t len) {
    if (len > elem_size() || full()) return false;
    std::memcpy(slot_bytes(), src, len);
    publish();
    return true;
  }
  // The fixed part only, E::kFixedBytes bytes (the C ABI size, not sizeof).
  bool try_push(const typename E::Fixed& v) { return try_push(&v, E::kFixedBytes); }
};

template <class E>
class RingConsumer : public detail::RingCore {
 public:
  RingError attach(void* mem, std::size_t len, const RingGeometry& g) {
    return RingCore::attach(mem, len, g, E::kFixedBytes, false);
  }

  // Elements ready to read. Load-acquires the producer index.
  std::uint32_t ready() const { return (load_peer(hdr_->producer_index) - own_) & mask_; }
  bool empty() const { return ready() == 0; }

  // The element `k` places past the consumer index, all elem_size() bytes;
  // meaningful for k < ready(). Any k stays inside the ring.
  std::span<const std::byte> element(std::uint32_t k = 0) const {
    return {slot_at(own_ + k), elem_size()};
  }
  // The same element, writable: the consumer may rewrite elements it has not
  // released yet (compacting a CQ when a QP is reset) because the producer
  // never touches a slot between the consumer and the producer index.
  std::span<std::byte> element_mut(std::uint32_t k = 0) { return {slot_at(own_ + k), elem_size()}; }
  const typename E::Fixed* slot(std::uint32_t k = 0) const {
    return reinterpret_cast<const typename E::Fixed*>(slot_at(own_ + k));
  }

  // Hands the next `n` slots back to the producer (store-release of the
  // consumer index) once nothing reads them any more.
  void release(std::uint32_t n = 1) {
    own_ = (own_ + n) & mask_;
    store_own(hdr_->consumer_index, own_);
  }

  // Copies the fixed part of the next element (E::kFixedBytes bytes) into
  // `out` and releases the slot; false when empty.
  bool try_pop(typename E::Fixed* out) {
    if (empty()) return false;
    std::memcpy(out, slot_at(own_), E::kFixedBytes);
    release();
    return true;
  }
};

using SqProducer = RingProducer<SqElement>;  // provider
using SqConsumer = RingConsumer<SqElement>;  // daemon
using RqProducer = RingProducer<RqElement>;  // provider (RQ and SRQ)
using RqConsumer = RingConsumer<RqElement>;  // daemon (RQ and SRQ)
using CqProducer = RingProducer<CqElement>;  // daemon
using CqConsumer = RingConsumer<CqElement>;  // provider

}  // namespace uroce::shm
