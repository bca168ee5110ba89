// The multicast groups of one Vnic: a group's GID -> the UD QPs attached to
// it (ibv_attach_mcast). A UD packet to a group (BTH DestQP 0xFFFFFF, a
// multicast destination address) is handed to each of them (vnic/mcast.h).
//
// A group is named by its GID as rxe names it: an IPv6 multicast address
// (ff00::/8) as it is, an IPv4 one (224.0.0.0/4) IPv4-mapped
// (::ffff:a.b.c.d). The limits are rxe's (its RXE_MAX_MCAST_GRP,
// RXE_MAX_MCAST_QP_ATTACH and their product), which ibv_query_device
// reports: 8,192 groups, 56 QPs in a group.
//
// attach/detach/forget allocate (control path); members() is the packet
// path's lookup: one hash of the 16 bytes, no allocation. Its cost does not
// grow with the number of groups. Engine lcore only; not thread-safe.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <unordered_map>
#include <vector>

#include "datapath/port/gid_table.h"
#include "datapath/wire/addr.h"

namespace uroce::engine {

inline constexpr std::uint32_t kMaxMcastGroups = 8192;
inline constexpr std::uint32_t kMaxMcastQpAttach = 56;
inline constexpr std::uint32_t kMaxTotalMcastQpAttach = kMaxMcastGroups * kMaxMcastQpAttach;

// True for a GID that names a multicast group (see above).
inline bool is_mcast_gid(const wire::Ipv6Addr& gid) {
  if (gid.is_multicast()) return true;
  const auto v4 = port::Gid::from_ipv6(gid).ipv4();
  return v4 && v4->is_multicast();
}

class McastTable {
 public:
  // 0; EINVAL (not a group's GID); EEXIST (the QP is attached already);
  // ENOMEM (a new group past kMaxMcastGroups, or the group holds
  // kMaxMcastQpAttach QPs).
  int attach(const wire::Ipv6Addr& gid, std::uint32_t qpn) {
    if (!is_mcast_gid(gid)) return EINVAL;
    auto it = groups_.find(gid);
    if (it == groups_.end()) {
      if (groups_.size() >= kMaxMcastGroups) return ENOMEM;
      groups_.emplace(gid, std::vector<std::uint32_t>{qpn});
      return 0;
    }
    std::vector<std::uint32_t>& qps = it->second;
    if (std::find(qps.begin(), qps.end(), qpn) != qps.end()) return EEXIST;
    if (qps.size() >= kMaxMcastQpAttach) return ENOMEM;
    qps.push_back(qpn);
    return 0;
  }

  // 0; EINVAL (the QP is not attached to that group). The group goes with
  // its last QP.
  int detach(const wire::Ipv6Addr& gid, std::uint32_t qpn) {
    auto it = groups_.find(gid);
    if (it == groups_.end()) return EINVAL;
    std::vector<std::uint32_t>& qps = it->second;
    const auto q = std::find(qps.begin(), qps.end(), qpn);
    if (q == qps.end()) return EINVAL;
    qps.erase(q);
    if (qps.empty()) groups_.erase(it);
    return 0;
  }

  // Detaches QP `qpn` from every group (the QP is going away).
  void forget(std::uint32_t qpn) {
    for (auto it = groups_.begin(); it != groups_.end();) {
      std::vector<std::uint32_t>& qps = it->second;
      const auto q = std::find(qps.begin(), qps.end(), qpn);
      if (q != qps.end()) qps.erase(q);
      it = qps.empty() ? groups_.erase(it) : std::next(it);
    }
  }

  // The QPs attached to group `gid`; empty when there is no such group.
  std::span<const std::uint32_t> members(const wire::Ipv6Addr& gid) const {
    const auto it = groups_.find(gid);
    if (it == groups_.end()) return {};
    return it->second;
  }

  bool empty() const { return groups_.empty(); }
  std::size_t groups() const { return groups_.size(); }
  // QPs attached, summed over the groups (control path).
  std::size_t attached() const {
    std::size_t n = 0;
    for (const auto& [gid, qps] : groups_) n += qps.size();
    return n;
  }

 private:
  struct GidHash {
    std::size_t operator()(const wire::Ipv6Addr& g) const {
      std::uint64_t hi = 0, lo = 0;
      std::memcpy(&hi, g.b.data(), 8);
      std::memcpy(&lo, g.b.data() + 8, 8);
      return static_cast<std::size_t>((hi * 0x9e3779b97f4a7c15ull) ^ lo) * 0xff51afd7ed558ccdull;
    }
  };
  std::unordered_map<wire::Ipv6Addr, std::vector<std::uint32_t>, GidHash> groups_;
};

}  // namespace uroce::engine
