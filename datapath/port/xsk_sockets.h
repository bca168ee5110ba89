// The AF_XDP sockets of this process and whether each runs zero-copy: how
// an af_xdp port (DPDK's net_af_xdp) says which mode the kernel gave it.
// The PMD does not expose its sockets, so EthPort lists the process's
// sockets that answer XDP_OPTIONS before it sets the port up and after it
// starts it; the new ones are the port's (ports open one at a time, on one
// thread). Control path only (it reads /proc/self/fd).
#pragma once

#include <set>
#include <string_view>

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

}  // namespace uroce::port
