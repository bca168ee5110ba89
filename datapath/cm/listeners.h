// Who listens where: (IP protocol, IPv4 address or 0 for any, port) ->
// listener id, for the IP-addressed Service IDs (wire/cm_ip_private.h; the
// protocol is TCP for RC, UDP for SIDR). A REQ goes to the listener on its
// exact destination address, else to the wildcard one on the port, as a
// socket's bind() works.
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <tuple>

#include "datapath/cm/types.h"

namespace uroce::cm {

class Listeners {
 public:
  // 0, or EADDRINUSE when (ip, port) is taken (an exact address may sit
  // beside a wildcard on the same port, as with sockets).
  int add(std::uint8_t proto, std::uint32_t ip, std::uint16_t port, ListenId id) {
    return table_.emplace(Key{proto, ip, port}, id).second ? 0 : EADDRINUSE;
  }
  // 0 or ENOENT.
  int remove(std::uint8_t proto, std::uint32_t ip, std::uint16_t port) {
    return table_.erase(Key{proto, ip, port}) == 1 ? 0 : ENOENT;
  }
  // The listener for a REQ to (ip, port): exact address first.
  bool find(std::uint8_t proto, std::uint32_t ip, std::uint16_t port, ListenId* id) const {
    auto it = table_.find(Key{proto, ip, port});
    if (it == table_.end()) it = table_.find(Key{proto, 0, port});
    if (it == table_.end()) return false;
    *id = it->second;
    return true;
  }
  std::size_t size() const { return table_.size(); }

 private:
  using Key = std::tuple<std::uint8_t, std::uint32_t, std::uint16_t>;
  std::map<Key, ListenId> table_;
};

}  // namespace uroce::cm
