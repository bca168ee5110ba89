// What a net_memif vdev's devargs say, with the PMD's defaults (DPDK 22.11,
// rte_eth_memif.c) for what they leave out: role server, socket
// /run/memif.sock in the abstract namespace, no zero-copy. One reading of
// them for the port layer (EthPort::peer_reads_tx_in_place) and uroced's
// wait for a memif server (apps/uroced/memif_socket.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace uroce::port {

struct MemifArgs {
  bool client = false;     // role=client (or "slave", the PMD's old word)
  bool zero_copy = false;  // zero-copy=yes (the PMD honours it for a client only)
  std::string socket = "/run/memif.sock";
  bool socket_abstract = true;  // socket-abstract=no: a file
};

// The file name of the memif PMD as Debian's DPDK installs it in its plugin
// directory (librte_net_memif.so.23.0): the object whose GOT the memif
// guards patch (memif_unmap_guard.h, memif_fd_guard.h, memif_intr_guard.h).
inline constexpr const char* kMemifPmdObject = "librte_net_memif.so";

// The args of `device` ("net_memif0"), "key=value" pairs separated by
// ','; nullopt for a device that is not net_memif. Pairs without '=' and
// keys this does not read are skipped.
std::optional<MemifArgs> parse_memif_args(std::string_view device, std::string_view args);

}  // namespace uroce::port
