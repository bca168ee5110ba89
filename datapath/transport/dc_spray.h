// Multipath spraying for DC connections (docs/lossy-dc.md, "Spraying"): a
// DC connection in selective repeat sprays as an RC one does
// (rc_sr_spray.h), over the paths of its own UDP source port: a DCI
// stream's requests over the DCI's port's paths, a target context's
// answers over its DCT's. Each connection starts with every path usable:
// a new connection is a new destination (another 5-tuple for each path),
// so what the last one learnt of its paths says nothing of these.
//
// The ports come from the engine's `path_port` (port::path_src_port: every
// path keeps the receiver's RX queue of the base port). Computing them is a
// Toeplitz hash per path; connections are short (often one message), so the
// ports of the last base port are kept per IP version and a connection that
// opens from the same port copies them.
//
// Engine thread only; no allocation.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "datapath/transport/rc_sr_spray.h"

namespace uroce::transport {

// Path `path` of the connection whose own UDP source port is `base`, as the
// peer's RSS sees a tuple of that IP version.
using PathPortFn = std::uint16_t (*)(std::uint16_t base, std::uint32_t path, bool ipv6);

struct DcSprayConfig {
  // The device's spray_paths (1: its own port only) and spray_ecn.
  std::uint32_t paths = 1;
  bool ecn = false;
  PathPortFn path_port = nullptr;
};

class DcSpray {
 public:
  DcSpray() = default;
  explicit DcSpray(const DcSprayConfig& c) : c_(c) {
    if (c_.paths > SrSpray::kMaxPaths) c_.paths = SrSpray::kMaxPaths;
  }
  bool on() const { return c_.paths >= 2 && c_.path_port != nullptr; }
  const DcSprayConfig& config() const { return c_; }

  // A connection from `base` (tuples of IP version `ipv6`) starts: `s` gets
  // its paths, none avoided, or one path when spraying is off.
  void begin(SrSpray& s, std::uint16_t base, bool ipv6) {
    if (!on()) {
      s.reset();
      return;
    }
    Ports& p = cache_[ipv6 ? 1 : 0];
    if (!p.valid || p.base != base) {
      for (std::uint32_t i = 0; i < c_.paths; ++i) p.port[i] = c_.path_port(base, i, ipv6);
      p.base = base;
      p.valid = true;
      ++computed_;
    }
    s.configure(std::span<const std::uint16_t>(p.port.data(), c_.paths));
    s.set_ecn(c_.ecn);
  }
  // How many times begin() computed a port set (the rest copied one).
  std::uint64_t computed() const { return computed_; }

 private:
  struct Ports {
    bool valid = false;
    std::uint16_t base = 0;
    std::array<std::uint16_t, SrSpray::kMaxPaths> port{};
  };

  DcSprayConfig c_{};
  std::array<Ports, 2> cache_{};
  std::uint64_t computed_ = 0;
};

}  // namespace uroce::transport
