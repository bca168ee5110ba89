// Test sinks for pfc/: a frame sink that keeps every committed frame (and
// can be made to refuse buffers), and an event log.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "datapath/wire/pfc.h"
#include "pfc/events.h"

namespace uroce::pfc::testing {

struct FakeTx {
  std::vector<std::vector<std::uint8_t>> frames;
  bool full = false;
  std::array<std::uint8_t, 256> buf{};

  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (full || n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) { frames.emplace_back(buf.begin(), buf.begin() + n); }

  // The i-th frame decoded with the wire codec (fails the test if it does
  // not parse).
  wire::PfcFrame decoded(std::size_t i) const {
    wire::PfcFrame f;
    const wire::PfcParseError e = wire::parse_pfc(frames.at(i), f);
    if (e != wire::PfcParseError::kOk) f.pfc.set_opcode(0);
    return f;
  }
};

struct EventLog {
  std::vector<PfcEvent> events;
  void event(const PfcEvent& e) { events.push_back(e); }
};

}  // namespace uroce::pfc::testing
