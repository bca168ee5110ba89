// The address handles of one Vnic: AH id (the handle CreateAh returned,
// which UD send WQEs carry as wr.ud.ah_num) -> where to send and who owns it.
//
// A UD WQE's ah_num is untrusted (the application writes it into shared
// memory): find() takes any 32-bit value and returns nullptr unless a live
// AH has exactly that id; the engine then also checks that the AH's client
// and PD are the QP's (vnic.h), as rxe checks the PD.
//
// Storage: open addressing with linear probing in a power-of-two array at
// most half full, sized at construction; backward-shift deletion, so there
// are no tombstones and a lookup ends at the first empty slot. find() is
// one multiply and, typically, one or two slot compares; insert/erase are
// control-path operations. Nothing allocates after construction.
//
// Engine lcore only; not thread-safe.
#pragma once

// <netinet/in.h> before anything that reaches <rdma/rdma_user_rxe.h>
// (shm/ring.h): that header includes <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK's headers include it), while the other order is fine.
#include <netinet/in.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "datapath/engine/vnic_api.h"
#include "datapath/transport/mr_table.h"
#include "datapath/wire/addr.h"

namespace uroce::engine {

struct AhEntry {
  ObjId id = 0;  // 0: empty slot
  std::uint32_t client = 0;
  transport::PdHandle pd = 0;
  wire::MacAddr dmac{};
  wire::Ipv4Addr dip{};
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
  // RoCEv2 over IPv6 (transport::UdDest has the same three).
  bool ipv6 = false;
  bool global_src = false;
  wire::Ipv6Addr dip6{};
};

class AhTable {
 public:
  // Holds up to `capacity` AHs (at least 1).
  explicit AhTable(std::uint32_t capacity)
      : cap_(capacity == 0 ? 1 : capacity),
        slots_(std::bit_ceil(static_cast<std::uint64_t>(cap_) * 2)) {
    mask_ = static_cast<std::uint32_t>(slots_.size() - 1);
  }

  // 0, EINVAL (id 0), EEXIST (id live), ENOMEM (capacity reached).
  int insert(const AhEntry& e) {
    if (e.id == 0) return EINVAL;
    if (size_ == cap_) return find(e.id) != nullptr ? EEXIST : ENOMEM;
    std::uint32_t i = home(e.id);
    while (slots_[i].id != 0) {
      if (slots_[i].id == e.id) return EEXIST;
      i = (i + 1) & mask_;
    }
    slots_[i] = e;
    ++size_;
    return 0;
  }

  // 0 or ENOENT.
  int erase(ObjId id) {
    if (id == 0) return ENOENT;
    std::uint32_t i = home(id);
    while (slots_[i].id != id) {
      if (slots_[i].id == 0) return ENOENT;
      i = (i + 1) & mask_;
    }
    // Backward shift: pull later members of the probe run into the hole as
    // long as that does not move one before its home slot.
    std::uint32_t hole = i;
    std::uint32_t j = (i + 1) & mask_;
    while (slots_[j].id != 0) {
      const std::uint32_t h = home(slots_[j].id);
      // j may fill the hole when its home is not cyclically in (hole, j].
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
      j = (j + 1) & mask_;
    }
    slots_[hole] = AhEntry{};
    --size_;
    return 0;
  }

  const AhEntry* find(ObjId id) const {
    if (id == 0) return nullptr;
    std::uint32_t i = home(id);
    while (slots_[i].id != 0) {
      if (slots_[i].id == id) return &slots_[i];
      i = (i + 1) & mask_;
    }
    return nullptr;
  }

  std::uint32_t size() const { return size_; }
  std::uint32_t capacity() const { return cap_; }

 private:
  std::uint32_t home(ObjId id) const {
    return static_cast<std::uint32_t>((id * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }

  std::uint32_t cap_;
  std::vector<AhEntry> slots_;
  std::uint32_t mask_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace uroce::engine
