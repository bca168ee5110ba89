#include "datapath/port/xsk_sockets.h"

#include <dirent.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>

#include <cstdlib>

#ifndef SOL_XDP
#define SOL_XDP 283  // include/linux/socket.h
#endif

namespace uroce::port {

XskSockets xsk_sockets() {
  XskSockets out;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return out;
  const int self = dirfd(d);
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == self) continue;
    xdp_options o{};
    socklen_t len = sizeof(o);
    // Only an AF_XDP socket answers SOL_XDP options; any other fd fails
    // (ENOTSOCK, ENOPROTOOPT) and is not ours to look at.
    if (getsockopt(static_cast<int>(fd), SOL_XDP, XDP_OPTIONS, &o, &len) != 0) continue;
    out.all.insert(static_cast<int>(fd));
    if ((o.flags & XDP_OPTIONS_ZEROCOPY) != 0) out.zero_copy.insert(static_cast<int>(fd));
  }
  closedir(d);
  return out;
}

std::vector<int> xsk_new_sockets(const XskSockets& before, const XskSockets& after) {
  std::vector<int> out;
  for (const int fd : after.all) {
    if (before.all.count(fd) == 0) out.push_back(fd);
  }
  return out;
}

std::string_view xsk_mode(const XskSockets& before, const XskSockets& after) {
  const std::vector<int> added = xsk_new_sockets(before, after);
  if (added.empty()) return "none";
  std::size_t zc = 0;
  for (const int fd : added) zc += after.zero_copy.count(fd);
  if (zc == added.size()) return "zero-copy";
  return zc == 0 ? "copy" : "mixed";
}

XdpStats xsk_statistics(const std::vector<int>& fds) {
  XdpStats sum;
  for (const int fd : fds) {
    xdp_statistics s{};
    socklen_t len = sizeof(s);
    if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &s, &len) != 0) continue;
    sum.rx_dropped += s.rx_dropped;
    sum.rx_invalid_descs += s.rx_invalid_descs;
    sum.tx_invalid_descs += s.tx_invalid_descs;
    sum.rx_ring_full += s.rx_ring_full;
    sum.rx_fill_ring_empty_descs += s.rx_fill_ring_empty_descs;
    sum.tx_ring_empty_descs += s.tx_ring_empty_descs;
  }
  return sum;
}

}  // namespace uroce::port
