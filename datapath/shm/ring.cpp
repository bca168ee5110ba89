#include "datapath/shm/ring.h"

#include <algorithm>
#include <bit>

namespace uroce::shm {

const char* to_string(RingError e) {
  switch (e) {
    case RingError::kOk: return "ok";
    case RingError::kBadGeometry: return "bad ring geometry";
    case RingError::kElemTooSmall: return "ring element too small";
    case RingError::kTooSmall: return "ring memory too small";
    case RingError::kMisaligned: return "ring memory misaligned";
  }
  return "unknown ring error";
}

RingError make_geometry(std::size_t elem_bytes, std::uint32_t depth, RingGeometry* out) {
  if (depth == 0 || elem_bytes > (std::size_t{1} << kMaxLog2ElemSize) ||
      depth >= (1u << kMaxLog2Slots)) {
    return RingError::kBadGeometry;
  }
  const std::size_t elem = std::max(elem_bytes, std::size_t{1} << kMinLog2ElemSize);
  RingGeometry g;
  g.log2_elem_size = static_cast<std::uint32_t>(std::bit_width(std::bit_ceil(elem)) - 1);
  const std::uint32_t slots = std::bit_ceil(depth + 1);
  g.log2_slots = std::max<std::uint32_t>(std::bit_width(slots) - 1, kMinLog2Slots);
  *out = g;
  return RingError::kOk;
}

std::size_t sq_elem_bytes(std::uint32_t max_sge, std::uint32_t max_inline) {
  const std::size_t tail = std::max<std::size_t>(std::size_t{max_sge} * kRxeSgeBytes, max_inline);
  return kSendWqeFlexOffset + tail;
}

std::size_t rq_elem_bytes(std::uint32_t max_sge) {
  return kRecvWqeFlexOffset + std::size_t{max_sge} * kRxeSgeBytes;
}

namespace {

RingError check_memory(const void* mem, std::size_t len, const RingGeometry& g) {
  if (!g.valid()) return RingError::kBadGeometry;
  if (mem == nullptr) return RingError::kTooSmall;
  if (reinterpret_cast<std::uintptr_t>(mem) % kRingAlign != 0) return RingError::kMisaligned;
  if (len < g.bytes()) return RingError::kTooSmall;
  return RingError::kOk;
}

}  // namespace

RingError ring_init(void* mem, std::size_t len, const RingGeometry& g) {
  const RingError e = check_memory(mem, len, g);
  if (e != RingError::kOk) return e;
  // The header is written before the memory is shared with anyone, so plain
  // stores suffice; the hand-over (a socket message) orders them.
  std::memset(mem, 0, kQueueHeaderBytes);
  auto* hdr = static_cast<rxe_queue_buf*>(mem);
  hdr->log2_elem_size = g.log2_elem_size;
  hdr->index_mask = g.index_mask();
  return RingError::kOk;
}

RingError read_geometry(const void* mem, std::size_t len, RingGeometry* out) {
  if (len < kQueueHeaderBytes) return RingError::kTooSmall;
  const auto* hdr = static_cast<const rxe_queue_buf*>(mem);
  const std::uint32_t log2_elem = hdr->log2_elem_size;
  const std::uint32_t mask = hdr->index_mask;
  if (mask == UINT32_MAX || !std::has_single_bit(mask + 1)) return RingError::kBadGeometry;
  RingGeometry g;
  g.log2_elem_size = log2_elem;
  g.log2_slots = static_cast<std::uint32_t>(std::bit_width(mask + 1) - 1);
  const RingError e = check_memory(mem, len, g);
  if (e != RingError::kOk) return e;
  *out = g;
  return RingError::kOk;
}

namespace detail {

RingError RingCore::attach(void* mem, std::size_t len, const RingGeometry& g,
                           std::size_t fixed_bytes, bool producer) {
  const RingError e = check_memory(mem, len, g);
  if (e != RingError::kOk) return e;
  if (g.elem_size() < fixed_bytes) return RingError::kElemTooSmall;
  hdr_ = static_cast<rxe_queue_buf*>(mem);
  data_ = static_cast<std::byte*>(mem) + kQueueHeaderBytes;
  geo_ = g;
  mask_ = g.index_mask();
  std::uint32_t& own_word = producer ? hdr_->producer_index : hdr_->consumer_index;
  own_ = std::atomic_ref<std::uint32_t>(own_word).load(std::memory_order_relaxed) & mask_;
  return RingError::kOk;
}

}  // namespace detail

}  // namespace uroce::shm
