#include "apps/uroced/ports.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace uroce::daemon {

int open_ports(const DaemonConfig& cfg, std::vector<std::unique_ptr<port::EthPort>>* out,
               std::string* error) {
  // Ring name -> the pair's port ids and whether its first end is taken.
  struct Pair {
    std::uint16_t a = 0, b = 0;
  };
  std::map<std::string, Pair> rings;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    port::PortConfig pc;
    pc.mtu = static_cast<std::uint16_t>(d.mtu);
    pc.mac = d.mac;
    auto p = std::make_unique<port::EthPort>();
    std::string err;
    int rc = 0;
    switch (d.port_spec.kind) {
      case PortKind::kRing: {
        pc.device = "ring:" + d.port_spec.name;
        auto it = rings.find(d.port_spec.name);
        std::uint16_t id = 0;
        if (it == rings.end()) {
          Pair pr;
          rc = port::create_ring_pair(d.port_spec.name, &pr.a, &pr.b);
          if (rc != 0) {
            *error = d.name + ": cannot create the net_ring pair \"" + d.port_spec.name +
                     "\": " + std::strerror(-rc) + " (raise the memory in eal.args -m)";
            return rc;
          }
          rings.emplace(d.port_spec.name, pr);
          id = pr.a;
        } else {
          id = it->second.b;
        }
        rc = p->open_port_id(id, pc, &err);
        break;
      }
      case PortKind::kVdev:
        pc.device = d.port_spec.name;
        pc.vdev_args = d.port_spec.args;
        rc = p->open(pc, &err);
        break;
      case PortKind::kPci:
        pc.device = d.port_spec.name;
        rc = p->open(pc, &err);
        break;
    }
    if (rc != 0) {
      *error = d.name + ": " + err;
      if (rc == -ENOMEM) *error += " (uroced: raise \"-m\" in eal.args)";
      return rc;
    }
    out->push_back(std::move(p));
  }
  return 0;
}

}  // namespace uroce::daemon
