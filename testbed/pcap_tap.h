// Per-link packet captures of a run: one pcap file per tapped link holding
// both directions, each frame stamped with its arrival time at the far end
// (virtual time, ns resolution). Control frames are written as they were on
// the wire (malformed injections included). Data packets, which the
// testbed carries as records, are written as the RoCEv2 frames they stand
// for: Ethernet (hop MACs), IPv4 (host addresses, DSCP 8 x priority, the
// ECN and TTL as they are on that hop), UDP 4791, BTH UD SEND_ONLY (dest
// QP = flow, PSN = sequence), DETH, zero payload, ICRC; frame length equal
// to the modelled one (an Ethernet trailer makes up the 4-byte payload
// alignment), so pcap lengths add up to the link counters.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/port/pcap_writer.h"
#include "testbed/scenario.h"
#include "testbed/switch/switch_model.h"
#include "testbed/switch/switch_packet.h"

namespace uroce::testbed {

// Writes the frame `p` stands for on the hop from node `from` to node `to`
// into `out`; returns its length (p.bytes) or 0 if `out` is too small or
// p.bytes cannot hold the headers.
std::size_t build_data_frame(const Topology& topo, std::uint32_t from, std::uint32_t to,
                             const SwitchPacket& p, std::span<std::uint8_t> out);

class PcapTap {
 public:
  // Opens dir/<a>-<b>.pcap for every link topo.pcap_link selects. Returns
  // "" or the problem.
  std::string open(const Topology& topo, const std::string& dir, std::uint32_t snaplen);
  void write_control(std::uint32_t link, TimeNs at, const ControlFrame& f);
  void write_data(std::uint32_t link, TimeNs at, std::uint32_t from, std::uint32_t to,
                  const SwitchPacket& p);
  // A frame as it is (a real-engine host's), e.g. with the hop's TTL.
  void write_frame(std::uint32_t link, TimeNs at, std::span<const std::uint8_t> frame);
  // Closes every file; "" or the first write problem.
  std::string close();
  std::uint64_t frames() const { return frames_; }

 private:
  const Topology* topo_ = nullptr;
  std::vector<std::unique_ptr<port::PcapWriter>> writers_;  // by link; null if not tapped
  std::vector<std::string> paths_;
  std::vector<std::uint8_t> buf_;
  std::uint64_t frames_ = 0;
  int first_error_ = 0;
  std::string error_path_;
};

}  // namespace uroce::testbed
