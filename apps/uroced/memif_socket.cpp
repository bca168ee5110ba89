#include "apps/uroced/memif_socket.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace uroce::daemon {

std::optional<MemifSocket> memif_client_socket(const PortSpec& spec) {
  if (spec.kind != PortKind::kVdev || !spec.name.starts_with("net_memif")) return std::nullopt;
  // The PMD's defaults (DPDK 22.11, rte_eth_memif.c): role server, socket
  // /run/memif.sock in the abstract namespace.
  MemifSocket s{"/run/memif.sock", true};
  bool client = false;
  std::istringstream in(spec.args);
  for (std::string kv; std::getline(in, kv, ',');) {
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = kv.substr(0, eq);
    const std::string value = kv.substr(eq + 1);
    if (key == "role") client = value == "client" || value == "slave";
    if (key == "socket") s.path = value;
    if (key == "socket-abstract") s.abstract = value != "no";
  }
  if (!client) return std::nullopt;
  return s;
}

bool memif_socket_listening(const MemifSocket& s, const std::string& proc_net_unix) {
  std::ifstream in(proc_net_unix);
  if (!in) return false;
  const std::string name = s.abstract ? "@" + s.path : s.path;
  // __SO_ACCEPTCON (include/linux/net.h): set by listen(); a socket that is
  // only bound (the server between bind and listen) still refuses.
  constexpr unsigned long kAcceptCon = 0x10000;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    // Num RefCount Protocol Flags Type St Inode [Path]
    std::istringstream cells(line);
    std::string num, refs, proto, flags, type, st, inode, path;
    if (!(cells >> num >> refs >> proto >> flags >> type >> st >> inode >> path)) continue;
    if (path != name) continue;
    if ((std::strtoul(flags.c_str(), nullptr, 16) & kAcceptCon) != 0) return true;
  }
  return false;
}

}  // namespace uroce::daemon
