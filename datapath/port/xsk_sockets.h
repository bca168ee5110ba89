// The AF_XDP sockets of this process and whether each runs zero-copy: how
// an af_xdp port (DPDK's net_af_xdp) says which mode the kernel gave it.
// The PMD does not expose its sockets, so EthPort lists the process's
// sockets that answer XDP_OPTIONS before it sets the port up and after it
// starts it; the new ones are the port's (ports open one at a time, on one
// thread). Control path only (it reads /proc/self/fd).
#pragma once

#include <set>
#include <string_view>
#include <vector>

#include "datapath/port/port_stats.h"

namespace uroce::port {

// The fds of this process's AF_XDP sockets, and of those the zero-copy ones.
struct XskSockets {
  std::set<int> all;
  std::set<int> zero_copy;
};
XskSockets xsk_sockets();

// "zero-copy", "copy" or "mixed" for the sockets of `after` not in
// `before`; "none" when there is no new one.
std::string_view xsk_mode(const XskSockets& before, const XskSockets& after);

// The fds of `after` not in `before`: a port's own sockets.
std::vector<int> xsk_new_sockets(const XskSockets& before, const XskSockets& after);

// XDP_STATISTICS of the sockets `fds`, summed. A socket that does not
// answer (closed, not AF_XDP) adds nothing; the fields an older kernel
// does not report stay 0.
XdpStats xsk_statistics(const std::vector<int>& fds);

}  // namespace uroce::port
