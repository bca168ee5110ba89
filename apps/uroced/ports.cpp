#include "apps/uroced/ports.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rte_ethdev.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "apps/uroced/memif_socket.h"

namespace uroce::daemon {

namespace {

using Clock = std::chrono::steady_clock;

long long ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

// How long a memif client's handshake may take once its start connected.
// A server still setting its port up (its socket listens from the vdev's
// creation, its rings exist only once the port is configured) drops the
// connection, and the client does not connect again by itself: a client
// whose link is not up by then is opened again. The handshake itself takes
// a few exchanges between the two processes' EAL interrupt threads
// (milliseconds, even on a loaded machine).
constexpr std::chrono::milliseconds kMemifHandshake{500};

// Whether the port's link comes up before `until`.
bool link_up_by(std::uint16_t port_id, Clock::time_point until) {
  for (;;) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) {
      return true;
    }
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A vdev port; a memif client whose server does not listen yet is opened
// when it does, until `until` (ports.h). Each failed attempt costs a line of
// the PMD on stderr, hence no attempt before a listener shows up, but for
// one a second (a server in another network namespace does not show) and a
// last one at the end. A client that starts but whose handshake does not
// complete (kMemifHandshake) is opened again too; at the end it stays as it
// is (the caller's link wait says so).
int open_vdev(const DeviceConfig& d, const port::PortConfig& pc, Clock::time_point until,
              std::unique_ptr<port::EthPort>* p, std::string* err) {
  const std::optional<MemifSocket> sock = memif_client_socket(d.port_spec);
  const Clock::time_point start = Clock::now();
  if (!sock || start >= until) return (*p)->open(pc, err);
  const std::string where = (sock->abstract ? "@" : "") + sock->path;
  Clock::time_point tried = start;
  bool attempted = false;
  bool said = false;
  int rc = 0;
  for (;;) {
    const Clock::time_point now = Clock::now();
    const bool last = now >= until;
    if (last || memif_socket_listening(*sock) || now - tried >= std::chrono::seconds(1)) {
      // A failed open closes what it made; a fresh EthPort starts from
      // nothing. One that opened but did not complete its handshake may
      // still be handling the server's messages: its close runs between two
      // (EthPort::close holds EAL's interrupt thread for a memif port).
      if (attempted) *p = std::make_unique<port::EthPort>();
      attempted = true;
      tried = now;
      rc = (*p)->open(pc, err);
      if (rc == 0 &&
          (last || link_up_by((*p)->port_id(), std::min(now + kMemifHandshake, until)))) {
        if (said) {
          spdlog::info("{}: memif server at {} found after {} ms", d.name, where,
                       ms_between(start, Clock::now()));
        }
        return 0;
      }
      if (rc == 0) {
        spdlog::info("{}: the memif server at {} did not complete the handshake in {} ms; again",
                     d.name, where, kMemifHandshake.count());
        said = true;
        continue;
      }
      if (last) break;
    }
    if (!said) {
      spdlog::info("{}: no memif server listens at {} yet; waiting for one up to {} ms", d.name,
                   where, ms_between(start, until));
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *err += "; no memif server listened at " + where + " within " +
          std::to_string(ms_between(start, until)) + " ms";
  return rc;
}

}  // namespace

int open_ports(const DaemonConfig& cfg, std::uint16_t queues,
               std::vector<std::unique_ptr<port::EthPort>>* out, std::string* error,
               std::chrono::steady_clock::time_point wait_until) {
  // Ring name -> the pair's port ids and whether its first end is taken.
  struct Pair {
    std::uint16_t a = 0, b = 0;
  };
  std::map<std::string, Pair> rings;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    port::PortConfig pc;
    pc.mtu = static_cast<std::uint16_t>(d.mtu);
    pc.rx_buf = d.rx_buf;
    pc.mac = d.mac;
    pc.queues = queues;
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
          rc = port::create_ring_pair(d.port_spec.name, &pr.a, &pr.b, 4096, queues);
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
        rc = open_vdev(d, pc, wait_until, &p, &err);
        break;
      case PortKind::kPci:
        pc.device = d.port_spec.name;
        rc = p->open(pc, &err);
        break;
      case PortKind::kAfXdp:
        // One net_af_xdp vdev per device: its name carries the device's
        // index, as EAL's vdev names are one per process.
        pc.device = "net_af_xdp" + std::to_string(i);
        pc.vdev_args = d.port_spec.args;
        rc = p->open(pc, &err);
        break;
    }
    if (rc != 0) {
      *error = d.name + ": " + err;
      if (rc == -ENOMEM) *error += " (uroced: raise \"-m\" in eal.args)";
      return rc;
    }
    if (queues > 1) {
      // How its frames reach the engine lcores (docs/nic.md "Queues and RSS").
      const port::PortInfo& pi = p->info();
      spdlog::info("{}: {} queues on {}, RSS {} (key {} B, RETA {} entries, hashing {})", d.name,
                   pi.queues, pi.driver, pi.rss, pi.rss_key_size, pi.reta_size,
                   pi.rss_types.empty() ? "nothing"
                                        : fmt::format("{}", fmt::join(pi.rss_types, ",")));
    }
    out->push_back(std::move(p));
  }
  return 0;
}

}  // namespace uroce::daemon
