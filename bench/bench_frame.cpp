#include "bench/bench_frame.h"

#include <algorithm>

namespace uroce::bench {

namespace {

constexpr std::size_t kIpOff = wire::EthHdr::kSize;
constexpr std::size_t kUdpOff = kIpOff + wire::Ipv4Hdr::kSize;
constexpr std::size_t kPayloadOff = kUdpOff + wire::UdpHdr::kSize;

}  // namespace

FrameTemplate::FrameTemplate(const FrameSpec& spec) {
  const std::uint32_t payload = std::clamp(spec.payload, kMinPayload, kMaxPayload);
  bytes_.assign(kFrameHeaderBytes + payload, 0);

  wire::EthHdr eth;
  eth.set_dst(spec.dst_mac);
  eth.set_src(spec.src_mac);
  eth.set_ether_type(wire::kEtherTypeIpv4);
  eth.write(bytes_.data());

  wire::Ipv4Hdr ip;
  ip.set_version_ihl(4, 5);
  ip.set_total_length(
      static_cast<std::uint16_t>(wire::Ipv4Hdr::kSize + wire::UdpHdr::kSize + payload));
  ip.set_flags_frag(wire::kIpv4FlagDf);
  ip.set_ttl(64);
  ip.set_protocol(wire::kIpProtoUdp);
  ip.set_src(spec.src_ip);
  ip.set_dst(spec.dst_ip);
  ip.fill_checksum();
  ip.write(bytes_.data() + kIpOff);

  wire::UdpHdr udp;
  udp.set_src_port(spec.src_port);
  udp.set_dst_port(spec.dst_port);
  udp.set_length(static_cast<std::uint16_t>(wire::UdpHdr::kSize + payload));
  udp.set_checksum(0);
  udp.write(bytes_.data() + kUdpOff);

  BenchPayloadHdr hdr;
  hdr.set_magic(kBenchMagic);
  hdr.set_kind(BenchKind::kData);
  hdr.write(bytes_.data() + kPayloadOff);
  // A recognisable filler so a capture shows where a frame got cut.
  for (std::size_t i = kPayloadOff + BenchPayloadHdr::kSize; i < bytes_.size(); ++i)
    bytes_[i] = static_cast<std::uint8_t>(i);
}

void FrameTemplate::write(std::uint8_t* dst, std::uint64_t seq, BenchKind kind) const {
  std::memcpy(dst, bytes_.data(), bytes_.size());
  dst[kPayloadOff + 4] = static_cast<std::uint8_t>(kind);
  wire::store_be64(dst + kPayloadOff + 8, seq);
}

FrameClass classify(const std::uint8_t* frame, std::uint32_t len, std::uint16_t dst_port,
                    std::uint64_t* seq) {
  if (len < kFrameHeaderBytes + BenchPayloadHdr::kSize) return FrameClass::kForeign;
  if (wire::load_be16(frame + 12) != wire::kEtherTypeIpv4) return FrameClass::kForeign;
  if (frame[kIpOff] != 0x45 || frame[kIpOff + 9] != wire::kIpProtoUdp) return FrameClass::kForeign;
  if (wire::load_be16(frame + kUdpOff + 2) != dst_port) return FrameClass::kForeign;
  const BenchPayloadHdr hdr = BenchPayloadHdr::read(frame + kPayloadOff);
  if (hdr.magic() != kBenchMagic) return FrameClass::kForeign;
  if (hdr.kind() == static_cast<std::uint8_t>(BenchKind::kData)) {
    *seq = hdr.seq();
    return FrameClass::kData;
  }
  if (hdr.kind() == static_cast<std::uint8_t>(BenchKind::kStop)) {
    *seq = hdr.seq();
    return FrameClass::kStop;
  }
  return FrameClass::kForeign;
}

void swap_for_echo(std::uint8_t* frame) {
  std::uint8_t tmp[6];
  std::memcpy(tmp, frame, 6);
  std::memcpy(frame, frame + 6, 6);
  std::memcpy(frame + 6, tmp, 6);
  std::memcpy(tmp, frame + kIpOff + 12, 4);
  std::memcpy(frame + kIpOff + 12, frame + kIpOff + 16, 4);
  std::memcpy(frame + kIpOff + 16, tmp, 4);
  std::memcpy(tmp, frame + kUdpOff, 2);
  std::memcpy(frame + kUdpOff, frame + kUdpOff + 2, 2);
  std::memcpy(frame + kUdpOff + 2, tmp, 2);
}

}  // namespace uroce::bench
