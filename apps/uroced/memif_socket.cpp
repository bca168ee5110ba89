#include "apps/uroced/memif_socket.h"

#include "datapath/port/memif_args.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace uroce::daemon {

std::optional<MemifSocket> memif_client_socket(const PortSpec& spec) {
  if (spec.kind != PortKind::kVdev) return std::nullopt;
  const std::optional<port::MemifArgs> m = port::parse_memif_args(spec.name, spec.args);
  if (!m || !m->client) return std::nullopt;
  return MemifSocket{m->socket, m->socket_abstract};
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
