// The DPDK ports of the daemon's devices, one EthPort each, in the order of
// the configuration (needs rte_eal_init first):
//   vdev with devargs   hot-plugged with them (PortConfig.vdev_args);
//   vdev without, PCI   created by EAL at init (make_eal_config lists them),
//                       opened by name;
//   "ring:NAME"         the two devices naming NAME get the two ends of one
//                       crossed net_ring pair (port::create_ring_pair).
// Each port is set to its device's MTU and MAC (promiscuous RX, so the
// software MAC is what counts).
//
// A memif client port cannot start before its server listens (the PMD
// connects once). With a `wait_until` in the future (embedded mode, where
// the peer is another program that may start later), such a port whose
// open fails is opened again once a server listens on its socket
// (memif_socket.h), looked for every 10 ms, and at least once a second in
// any case (a server in another network namespace is not seen), until
// then; one whose handshake does not complete (a server still setting its
// port up drops it) is opened again too. uroced passes none: its ports
// open once.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apps/uroced/config.h"
#include "datapath/port/eth_port.h"

namespace uroce::daemon {

// Opens every port. Returns 0, or a negative errno with `error` naming the
// device and saying what to check; ports opened so far stay in `out` (their
// destructors close them).
// Each port gets `queues` RX and TX queues (one per engine lcore).
int open_ports(const DaemonConfig& cfg, std::uint16_t queues,
               std::vector<std::unique_ptr<port::EthPort>>* out, std::string* error,
               std::chrono::steady_clock::time_point wait_until = {});

}  // namespace uroce::daemon
