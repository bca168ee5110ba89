// The boundary between a real-engine host's frames and the records the
// testbed's switches and links carry (testbed/switch/switch_packet.h).
//
// Frame -> record (the host's TX): the destination host from the IPv4
// destination address, the priority from the DSCP through the scenario's
// pfc::PriorityMap (the map the engine used to write the DSCP from the QP's
// service level), TTL and ECN from the IPv4 header, the length from the
// frame, the ECMP entropy from the IPv4/UDP 5-tuple (switch/ecmp.h). The record names the frame's bytes (kept in a FrameStore) by
// flow = kEngineFrameFlow and seq = the store slot.
//
// Record -> frame (the host's RX): the frame is the stored one with the TTL
// and ECN the network left in the record written back into the IPv4 header
// and the header checksum recomputed. The ICRC covers neither (RoCEv2 masks
// TTL, TOS and the IP checksum), so it stays valid; the payload is the
// engine's own, byte for byte.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "datapath/wire/addr.h"
#include "pfc/priority_map.h"
#include "testbed/switch/switch_packet.h"

namespace uroce::testbed {

// SwitchPacket::flow of a record that stands for an engine frame (constant-
// rate flows use their index, always smaller).
inline constexpr std::uint32_t kEngineFrameFlow = 0xffffffffu;

enum class FrameRecordError : std::uint8_t {
  kOk = 0,
  kNotIpv4,             // shorter than Ethernet + IPv4, or another EtherType (ARP)
  kBadIpHeader,         // not version 4 with a 20-byte header
  kUnknownDestination,  // the IPv4 destination is no host of the scenario
  kCount,
};
std::string_view frame_record_error_name(FrameRecordError e);

// Fills dst, prio, ttl, ecn, bytes and entropy of `out` from `frame` (the caller
// sets id, seq, sent_at, flow and src). `host_ips` are the hosts' addresses
// by host index.
FrameRecordError record_from_frame(std::span<const std::uint8_t> frame, const pfc::PriorityMap& map,
                                   const std::vector<wire::Ipv4Addr>& host_ips, SwitchPacket* out);

// Writes `ttl` and `ecn` into the IPv4 header of `frame` and recomputes its
// checksum. False (frame untouched) if it is not an IPv4 frame.
bool patch_frame(std::span<std::uint8_t> frame, std::uint8_t ttl, std::uint8_t ecn);

}  // namespace uroce::testbed
