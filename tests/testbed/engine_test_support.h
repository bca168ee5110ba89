// Test support (not a source mirror): two real-engine hosts joined by an
// ideal wire (frames move from one's outbox to the other's RX at the same
// instant), optionally dropping everything one way.
#pragma once

#include <gtest/gtest.h>

#include "testbed/engine_host.h"

namespace uroce::testbed::testing {

inline EngineHostConfig engine_cfg(const char* name, std::uint8_t n) {
  EngineHostConfig c;
  c.name = name;
  c.mac = wire::MacAddr{{2, 0, 0, 0, 0, n}};
  c.ip = wire::Ipv4Addr{0x0a000000u + n};
  c.max_qps = 8;
  return c;
}

struct EnginePair {
  FrameStore store;
  EngineHost a{engine_cfg("a", 1), store};
  EngineHost b{engine_cfg("b", 2), store};
  bool drop_a_to_b = false;
  std::uint64_t moved = 0;

  std::size_t move(EngineHost& from, EngineHost& to, bool drop) {
    std::vector<std::uint32_t>& out = from.port().outbox();
    const std::size_t n = out.size();
    for (const std::uint32_t s : out) {
      if (drop) {
        store.release(s);
      } else {
        to.port().deliver(s);
      }
    }
    out.clear();
    moved += n;
    return n;
  }
  // Serves both hosts at `now` until nothing moves any more.
  void settle(TimeNs now) {
    for (int i = 0; i < 10000; ++i) {
      const bool ma = a.service(now, 64);
      const bool mb = b.service(now, 64);
      const std::size_t n = move(a, b, drop_a_to_b) + move(b, a, false);
      if (!ma && !mb && n == 0 && a.port().rx_pending() == 0 && b.port().rx_pending() == 0) {
        return;
      }
    }
    ADD_FAILURE() << "did not settle";
  }
};

inline RcConnect path_to(const EngineHostConfig& c, std::uint32_t qpn, std::uint32_t sq_psn,
                         std::uint32_t rq_psn) {
  RcConnect p;
  p.dmac = c.mac;
  p.dip = c.ip;
  p.dscp = 24;
  p.dest_qpn = qpn;
  p.sq_psn = sq_psn;
  p.rq_psn = rq_psn;
  p.timeout = 8;  // 1.05 ms
  return p;
}

}  // namespace uroce::testbed::testing
