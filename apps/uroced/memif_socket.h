// The Unix socket a memif CLIENT port connects to, and whether a memif
// server listens there yet. A client's start fails at once when no server
// listens (the PMD connects once, in rte_eth_dev_start), so a program in
// embedded mode that opens its device before its peer's engine exists would
// fail for good; open_ports (ports.h) waits for the server with these
// instead (docs/embedded.md, "Links").
#pragma once

#include <optional>
#include <string>

#include "apps/uroced/config.h"

namespace uroce::daemon {

struct MemifSocket {
  std::string path;
  bool abstract = true;  // in the abstract namespace (not a file)
};

// The socket of a net_memif vdev whose role is client ("slave", the PMD's
// old word, too), with the PMD's defaults for what its devargs leave out
// (port::parse_memif_args); nullopt for any other port.
std::optional<MemifSocket> memif_client_socket(const PortSpec& spec);

// True when a socket of this network namespace listens at `s`: a listening
// entry (flag __SO_ACCEPTCON) with its name in `proc_net_unix` (abstract
// names are listed with a leading '@'). A socket file left by a killed
// server is not listed, so it does not count. A server in another network
// namespace is not listed either: the caller retries now and then anyway.
bool memif_socket_listening(const MemifSocket& s,
                            const std::string& proc_net_unix = "/proc/net/unix");

}  // namespace uroce::daemon
