// The frames uroce-raw-bench moves: Ethernet II / IPv4 / UDP / BenchPayloadHdr
// / filler, built once into a template and copied per packet, plus the
// receive-side classification and the in-place echo swap of the ping-pong.
//
// Everything here works on byte buffers (no DPDK types) so it can be unit
// tested; the per-packet functions allocate nothing and never throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/bench_payload.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/udp.h"

namespace uroce::bench {

// Bytes in front of the UDP payload: Ethernet + IPv4 (no options) + UDP.
inline constexpr std::size_t kFrameHeaderBytes =
    wire::EthHdr::kSize + wire::Ipv4Hdr::kSize + wire::UdpHdr::kSize;
// The UDP payload must hold the bench header; the IPv4 total length is 16-bit.
inline constexpr std::uint32_t kMinPayload = BenchPayloadHdr::kSize;
inline constexpr std::uint32_t kMaxPayload = 65535 - wire::Ipv4Hdr::kSize - wire::UdpHdr::kSize;

struct FrameSpec {
  wire::MacAddr src_mac;
  wire::MacAddr dst_mac;
  wire::Ipv4Addr src_ip;
  wire::Ipv4Addr dst_ip;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint32_t payload = kMinPayload;  // UDP payload bytes
};

// One complete frame built at setup time; per packet only the sequence
// number and kind change. Invariant: payload in [kMinPayload, kMaxPayload].
class FrameTemplate {
 public:
  // `spec.payload` is clamped into [kMinPayload, kMaxPayload].
  explicit FrameTemplate(const FrameSpec& spec);

  std::uint32_t frame_bytes() const { return static_cast<std::uint32_t>(bytes_.size()); }
  const std::uint8_t* data() const { return bytes_.data(); }

  // Copies the whole frame to `dst` (frame_bytes() of room) and stamps it.
  void write(std::uint8_t* dst, std::uint64_t seq, BenchKind kind) const;

 private:
  std::vector<std::uint8_t> bytes_;
};

enum class FrameClass : std::uint8_t {
  kData,     // a benchmark data frame for our UDP port
  kStop,     // a benchmark stop frame for our UDP port
  kForeign,  // anything else (truncated, not IPv4/UDP, other port, bad magic)
};

// Classifies a received frame of `len` bytes addressed to UDP `dst_port`;
// for kData and kStop stores the sequence number in *seq.
FrameClass classify(const std::uint8_t* frame, std::uint32_t len, std::uint16_t dst_port,
                    std::uint64_t* seq);

// Turns a received frame into its reply in place: swaps the MACs, the IPv4
// addresses and the UDP ports. The IPv4 checksum stays valid (the sum is
// order-independent) and the UDP checksum is 0. The frame holds at least
// kFrameHeaderBytes.
void swap_for_echo(std::uint8_t* frame);

}  // namespace uroce::bench
