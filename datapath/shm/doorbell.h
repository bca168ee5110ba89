// Doorbells: how the verbs provider tells the engine which of a client's
// rings have new work, so that the engine visits only those rings and an idle
// QP costs it nothing per iteration.
//
// Each client (one provider connection) has a doorbell page: memory shared by
// the daemon (which creates it) and that client's provider, holding a
// hierarchical bitmap of `count` doorbells. A doorbell is one bit; the daemon
// assigns the bits (a QP's SQ and RQ rings, an SRQ's ring) and tells the
// provider which bit belongs to which ring.
//
// Layout: 64-bit words in `levels` levels, stored top level first, each level
// starting on a 64-byte boundary:
//
//   level 0        1 word                       bit j: word j of level 1 may be set
//   level k        ceil(count / 64^(L-k)) words  bit j of word w: word 64w+j of level k+1
//   level L-1      ceil(count / 64) words        bit j of word w: doorbell 64w+j
//
// With count <= 64 there is one level (the top word is the leaf word).
//
// Provider (ring(i)), after publishing the ring's producer index with a
// store-release: fetch_or(leaf bit, release); if the bit was clear, the same
// for the bit naming that word one level up, and so on to the top; it stops at
// the first level where the bit was already set. At most `levels` atomic
// operations, usually one for a busy ring.
//
// Engine (collect(fn)): a relaxed load of the top word (an idle client costs
// that one load); when non-zero, exchange(top, 0, acquire) and, for each set
// bit, exchange(child word, 0, acquire) down to the leaves, calling fn(i) for
// each set doorbell below `count`.
//
// Why no wake-up is lost: a set bit means "visit the ring at least once more
// after now". The provider sets the leaf bit after publishing, and the engine
// clears a leaf bit (exchange, acquire) before it reads the ring's producer
// index; the acquire reads the value of the provider's release RMW (or a later
// one in that word's modification order), so the index the engine then reads
// is at least the one published before the bit was set. A provider that finds
// the leaf bit already set may stop: the bits above it are set, or the engine
// has cleared them and is about to clear this word (it clears top-down and
// never stops between a parent and its children), so the engine will still
// see the leaf bit. The same holds level by level.
//
// Trust: the page is writable by the client, so the engine treats every bit
// as a hint. Both sides compute the geometry from `count` alone (the daemon
// knows it, the provider learns it from the daemon) and never read it from
// the page; collect() only visits words inside the geometry and only reports
// doorbells below `count`. A client that sets bits makes the engine look at
// rings, which is harmless: the engine checks that the ring belongs to that
// client and validates every WQE it takes.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace uroce::shm {

enum class DoorbellError : std::uint8_t {
  kOk = 0,
  kBadCount,    // count 0 or above kMaxDoorbells
  kTooSmall,    // the memory is shorter than the geometry needs
  kMisaligned,  // the memory does not start on a 64-byte boundary
};

const char* to_string(DoorbellError e);

// 64^5 = 2^30 doorbells: far above any device's QP limit (2^24 QPNs, two
// rings each).
inline constexpr std::uint32_t kMaxDoorbellLevels = 5;
inline constexpr std::uint32_t kMaxDoorbells = 1u << 30;
inline constexpr std::size_t kDoorbellAlign = 64;

struct DoorbellGeometry {
  std::uint32_t count = 0;
  std::uint32_t levels = 0;
  // Words per level and each level's first word, top level first.
  std::uint32_t words[kMaxDoorbellLevels] = {};
  std::uint32_t offset[kMaxDoorbellLevels] = {};
  std::size_t bytes() const;
};

// The geometry of a page of `count` doorbells (layout above).
DoorbellError make_doorbell_geometry(std::uint32_t count, DoorbellGeometry* out);

namespace detail {

class DoorbellCore {
 protected:
  DoorbellError attach(void* mem, std::size_t len, const DoorbellGeometry& g);
  std::atomic_ref<std::uint64_t> word(std::uint32_t level, std::uint32_t i) const {
    return std::atomic_ref<std::uint64_t>(words_[geo_.offset[level] + i]);
  }

  std::uint64_t* words_ = nullptr;
  DoorbellGeometry geo_{};

 public:
  bool attached() const { return words_ != nullptr; }
  const DoorbellGeometry& geometry() const { return geo_; }
};

}  // namespace detail

// The provider's side. Any number of threads may ring doorbells of one page
// at once (every write is an atomic RMW).
class DoorbellRinger : public detail::DoorbellCore {
 public:
  DoorbellError attach(void* mem, std::size_t len, const DoorbellGeometry& g) {
    return DoorbellCore::attach(mem, len, g);
  }
  // Doorbell `i` (below count; others are ignored): call after the ring's
  // producer index was published.
  void ring(std::uint32_t i) {
    if (i >= geo_.count) return;
    std::uint32_t idx = i;
    for (std::uint32_t l = geo_.levels; l-- > 0;) {
      const std::uint64_t bit = std::uint64_t{1} << (idx & 63u);
      const std::uint64_t old = word(l, idx >> 6).fetch_or(bit, std::memory_order_release);
      if ((old & bit) != 0) return;
      idx >>= 6;
    }
  }
};

// The engine's side: one thread (the engine lcore).
class DoorbellCollector : public detail::DoorbellCore {
 public:
  DoorbellError attach(void* mem, std::size_t len, const DoorbellGeometry& g) {
    return DoorbellCore::attach(mem, len, g);
  }
  // Clears every set doorbell and calls fn(std::uint32_t i) for each one
  // below count, in increasing order; returns how many it reported.
  template <class Fn>
  std::uint32_t collect(Fn&& fn) {
    auto top = word(0, 0);
    if (top.load(std::memory_order_relaxed) == 0) return 0;
    return descend(0, 0, top.exchange(0, std::memory_order_acquire), fn);
  }

 private:
  template <class Fn>
  std::uint32_t descend(std::uint32_t level, std::uint32_t w, std::uint64_t bits, Fn& fn) {
    std::uint32_t n = 0;
    const bool leaf = level + 1 == geo_.levels;
    while (bits != 0) {
      const std::uint32_t j = static_cast<std::uint32_t>(std::countr_zero(bits));
      bits &= bits - 1;
      const std::uint64_t child = (static_cast<std::uint64_t>(w) << 6) | j;
      if (leaf) {
        if (child < geo_.count) {
          fn(static_cast<std::uint32_t>(child));
          ++n;
        }
      } else if (child < geo_.words[level + 1]) {
        const auto cw = static_cast<std::uint32_t>(child);
        const std::uint64_t b = word(level + 1, cw).exchange(0, std::memory_order_acquire);
        if (b != 0) n += descend(level + 1, cw, b, fn);
      }
    }
    return n;
  }
};

}  // namespace uroce::shm
