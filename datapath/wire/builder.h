// Builds complete RoCEv2 frames (Ethernet / IPv4 or IPv6 / UDP 4791 / BTH /
// extension headers / payload / pad / ICRC) into a caller buffer. Computes
// every length, the pad count and zero pad bytes, the IPv4 header checksum
// and the ICRC.
// No allocation; the payload is copied once, and the ICRC computed over it
// in the same pass (crc32_copy.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "datapath/wire/addr.h"
#include "datapath/wire/aeth.h"
#include "datapath/wire/atomic_ack_eth.h"
#include "datapath/wire/atomic_eth.h"
#include "datapath/wire/bth.h"
#include "datapath/wire/crc32_copy.h"
#include "datapath/wire/dc_aeth.h"
#include "datapath/wire/dc_eth.h"
#include "datapath/wire/deth.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/feth.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/ieth.h"
#include "datapath/wire/immdt.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/ipv6.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/reth.h"
#include "datapath/wire/sr_eth.h"
#include "datapath/wire/sr_sack_eth.h"
#include "datapath/wire/udp.h"

namespace uroce::wire {

// Bytes a RoCEv2 frame over IPv4 adds around the extension headers and
// payload; over IPv6 it adds kIpv6ExtraBytes more.
inline constexpr std::size_t kRoceFrameOverhead =
    EthHdr::kSize + Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize + kIcrcSize;
inline constexpr std::size_t kIpv6ExtraBytes = Ipv6Hdr::kSize - Ipv4Hdr::kSize;
// Largest frame the builder can produce: the Ethernet header, then an IPv6
// packet with a 4096-byte payload and the largest headers a payload opcode
// carries, DC's (DCETH + RETH + ImmDt) included: RC, UC and UD frames are
// up to 24 bytes shorter.
inline constexpr std::size_t kMaxRoceFrame =
    EthHdr::kSize + kDcPathMtuOverhead + kIpv6ExtraBytes + kMaxPathMtuBytes;
static_assert(kDcPathMtuOverhead >= kPathMtuOverhead);
static_assert(kDcPathMtuOverhead >= kSrPathMtuOverhead);

// The IPv6 addresses and flow label of a RoCEv2 path over IPv6 (Linux rxe
// sends flow label 0).
struct Ipv6Route {
  Ipv6Addr src{};
  Ipv6Addr dst{};
  std::uint32_t flow_label = 0;  // 20 bits
};

struct PacketSpec {
  // Ethernet
  MacAddr eth_src;
  MacAddr eth_dst;
  // IPv4: defaults as Linux rxe sends them (TTL 64, DF, TOS from the QP).
  Ipv4Addr ip_src;
  Ipv4Addr ip_dst;
  std::uint8_t dscp = 0;  // 6 bits
  std::uint8_t ecn = 0;   // 2 bits (ECT(0) = 2 when ECN-capable)
  std::uint8_t ttl = 64;
  std::uint16_t ip_id = 0;
  bool df = true;
  // IPv6 instead (RFC 8200) when set: addresses and flow label from *ip6,
  // the traffic class is dscp << 2 | ecn and the hop limit ttl; ip_src,
  // ip_dst, ip_id and df are unused. A pointer, not a copy, so that an IPv4
  // spec pays one null pointer; *ip6 must stay valid during build_roce.
  const Ipv6Route* ip6 = nullptr;
  // UDP: checksum 0 unless asked for (RoCEv2 senders normally leave it 0).
  std::uint16_t udp_src = 0xc000;
  std::uint16_t udp_dst = kRoceV2Port;
  bool udp_checksum = false;
  // BTH (pad count is derived from the payload length).
  std::uint8_t opcode = op::kRcSendOnly;
  bool se = false;
  bool mig_req = false;
  std::uint8_t tver = 0;
  std::uint16_t pkey = kDefaultPKey;
  bool fecn = false;
  bool becn = false;
  std::uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  std::uint32_t psn = 0;  // 24 bits
  // Extension headers: exactly those the opcode carries must be set (the
  // CNP body is reserved and always written as zeros).
  std::optional<DethHdr> deth;
  std::optional<DcEthHdr> dc_eth;
  std::optional<DcAethHdr> dc_aeth;
  std::optional<FethHdr> feth;
  std::optional<RethHdr> reth;
  std::optional<AtomicEthHdr> atomic_eth;
  std::optional<AethHdr> aeth;
  std::optional<AtomicAckEthHdr> atomic_ack_eth;
  std::optional<ImmDtHdr> immdt;
  std::optional<IethHdr> ieth;
  std::optional<SrEthHdr> sr_eth;
  std::optional<SrSackEthHdr> sack_eth;
  // Payload limit: one packet carries at most the path MTU.
  PathMtu pmtu = PathMtu::k4096;
  std::span<const std::uint8_t> payload;
};

enum class BuildError : int {
  kBufferTooSmall = -1,
  kUnknownOpcode = -2,
  kMissingExtHeader = -3,     // the opcode needs a header the spec lacks
  kUnexpectedExtHeader = -4,  // the spec sets a header the opcode lacks
  kPayloadNotAllowed = -5,    // payload for READ request, ACK, atomics, CNP
  kPayloadTooLarge = -6,      // more than the path MTU
  kFieldOutOfRange = -7,      // QPN/PSN > 24 bits, TVer > 15, DSCP > 63,
                              // ECN > 3, invalid path MTU code, flow
                              // label > 20 bits
};
std::string_view build_error_name(BuildError e);

// The shape the spec's packet has: its opcode's, or for a DC opcode with
// the SR flag in its DC header (dc_eth.h R, dc_aeth.h S) the opcode's SR
// form (opcodes.h, dc_sr_opcode_info), as the parser reads it.
inline const OpcodeInfo& spec_opcode_info(const PacketSpec& spec) {
  if (spec.opcode >= op::kDcBase) [[unlikely]] {
    return dc_form_info(spec.opcode,
                        spec.dc_eth ? spec.dc_eth->sr() : (spec.dc_aeth && spec.dc_aeth->sack()));
  }
  return opcode_info(spec.opcode);
}

// Frame length the spec produces (ignoring validation); the second form
// for a frame of that opcode and IP version with payload_len payload bytes
// (not a DC opcode's SR form: that needs the spec).
inline std::size_t roce_frame_size(std::uint8_t opcode, bool ipv6, std::size_t payload_len) {
  return kRoceFrameOverhead + (ipv6 ? kIpv6ExtraBytes : 0) + opcode_info(opcode).ext_len +
         payload_len + pad_count(payload_len);
}
inline std::size_t roce_frame_size(const PacketSpec& spec) {
  const std::size_t n = spec.payload.size();
  return kRoceFrameOverhead + (spec.ip6 != nullptr ? kIpv6ExtraBytes : 0) +
         spec_opcode_info(spec).ext_len + n + pad_count(n);
}

// Where the payload starts in the frame the spec produces. A sender may
// gather the payload straight to out + roce_payload_offset(spec) and pass
// that same span as spec.payload: build_roce then does not copy it.
inline std::size_t roce_payload_offset(const PacketSpec& spec) {
  return EthHdr::kSize + Ipv4Hdr::kSize + (spec.ip6 != nullptr ? kIpv6ExtraBytes : 0) +
         UdpHdr::kSize + BthHdr::kSize + spec_opcode_info(spec).ext_len;
}

// Writes the frame at the start of `out`. Returns its length (> 0), or a
// negative BuildError value; on error `out` may be partly written. Checks
// the spec (check_roce_spec), then writes it (write_roce).
int build_roce(const PacketSpec& spec, std::span<std::uint8_t> out);

// 0 when build_roce would build the spec into `out_size` bytes, else the
// negative BuildError it would return.
int check_roce_spec(const PacketSpec& spec, std::size_t out_size);

// The data path's builder: build_roce without the checks, for senders whose
// specs are valid by construction (the QP's attributes were checked when
// they were set, the opcode and headers come from the transport, the
// payload is cut to the path MTU, the buffer sized by roce_frame_size).
// Checked by assert in builds with debug info (-Ddebug=true, meson's
// default); in others each field is still masked
// to its width, so a wrong value cannot spill into its neighbours.
int write_roce(const PacketSpec& spec, std::span<std::uint8_t> out);

// A frame whose payload is shorter than this has its ICRC taken over the
// whole frame at the end (finish_roce), in one ISA-L call (icrc.h's
// kIcrcOneCall covers every such frame), instead of a running value carried
// through headers and payload pieces: a small frame's CRC costs a call's
// fixed price per piece more than its bytes, and below kCrc32CopyFuseMin the
// payload's copy is not fused with the CRC anyway.
inline constexpr std::size_t kIcrcWholeFrameBelow = kCrc32CopyFuseMin;
// The IP packet of such a frame (payload and pad at most
// kIcrcWholeFrameBelow bytes together) fits kIcrcOneCall, DC's headers too.
static_assert(kDcPathMtuOverhead + kIpv6ExtraBytes + kIcrcWholeFrameBelow <= kIcrcOneCall);

// write_roce in three steps, for a sender that copies the payload itself
// while the ICRC runs over it: write_roce_headers writes everything before
// the payload (spec.payload only gives its length and is not read) and
// returns the ICRC's running value over it; a PayloadWriter then fills the
// payload area at roce_payload_offset(spec) (crc32_copy: each byte is
// copied and checksummed in one pass); finish_roce writes the pad, the
// ICRC (and the UDP checksum when asked for) and returns the frame length.
// Below kIcrcWholeFrameBelow payload bytes the value passed along is not a
// CRC (write_roce_headers returns 0, the writer only copies) and
// finish_roce checksums the finished frame: whatever the size, a sender
// only passes the value on.
std::uint32_t write_roce_headers(const PacketSpec& spec, std::span<std::uint8_t> out);
int finish_roce(const PacketSpec& spec, std::uint32_t crc, std::span<std::uint8_t> out);

// The payload area of a frame being written, filled in order. `area` is
// the spec's whole payload area (its size is spec.payload's), so the writer
// and finish_roce agree on whether the frame is checksummed whole.
class PayloadWriter {
 public:
  PayloadWriter(std::span<std::uint8_t> area, std::uint32_t crc)
      : area_(area), crc_(crc), whole_frame_(area.size() < kIcrcWholeFrameBelow) {}
  std::size_t size() const { return area_.size(); }
  std::size_t written() const { return pos_; }
  // The ICRC's running value over the headers and what was put so far (for
  // a frame checksummed whole, the constructor's value).
  std::uint32_t crc() const { return crc_; }
  // Appends n bytes (at most size() - written()). An empty piece may come
  // with a null `src` (an SGE of length 0), which memcpy must not be given.
  void put(const std::uint8_t* src, std::size_t n) {
    if (n == 0) return;
    if (whole_frame_) {
      std::memcpy(area_.data() + pos_, src, n);
    } else {
      crc_ = crc32_copy(crc_, area_.data() + pos_, src, n);
    }
    pos_ += n;
  }

 private:
  std::span<std::uint8_t> area_;
  std::uint32_t crc_;
  bool whole_frame_;
  std::size_t pos_ = 0;
};

}  // namespace uroce::wire
