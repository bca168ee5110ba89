#include "testbed/pcap_tap.h"

#include <cstring>

#include "datapath/wire/builder.h"
#include "datapath/wire/deth.h"

namespace uroce::testbed {

namespace {

constexpr std::uint32_t kQkey = 0x11111111;
constexpr std::size_t kHeaders = wire::kRoceFrameOverhead + wire::DethHdr::kSize;

}  // namespace

std::size_t build_data_frame(const Topology& topo, std::uint32_t from, std::uint32_t to,
                             const SwitchPacket& p, std::span<std::uint8_t> out) {
  if (p.bytes < kHeaders || out.size() < p.bytes) return 0;
  // Largest 4-byte-aligned payload that fits; the rest is Ethernet trailer.
  const std::size_t payload = (p.bytes - kHeaders) & ~std::size_t{3};
  if (payload > wire::kMaxPathMtuBytes) return 0;
  wire::PacketSpec s;
  s.eth_src = topo.macs[from];
  s.eth_dst = topo.macs[to];
  s.ip_src = topo.ips[p.src];
  s.ip_dst = topo.ips[p.dst];
  s.dscp = static_cast<std::uint8_t>(8 * p.prio);
  s.ecn = p.ecn;
  s.ttl = p.ttl;
  s.ip_id = static_cast<std::uint16_t>(p.seq);
  s.udp_src = static_cast<std::uint16_t>(0xc000 | (p.flow & 0x3fff));
  s.opcode = wire::op::kUdSendOnly;
  s.dest_qp = (p.flow + 1) & 0xffffff;
  s.psn = static_cast<std::uint32_t>(p.seq & 0xffffff);
  s.deth = wire::DethHdr::make(kQkey, (p.flow + 1) & 0xffffff);
  // The payload is zeros: point the spec at the output itself, zeroed.
  const std::size_t off = wire::roce_payload_offset(s);
  std::memset(out.data() + off, 0, payload);
  s.payload = std::span<const std::uint8_t>(out.data() + off, payload);
  const int n = wire::build_roce(s, out);
  if (n <= 0) return 0;
  std::memset(out.data() + n, 0, p.bytes - static_cast<std::size_t>(n));
  return p.bytes;
}

std::string PcapTap::open(const Topology& topo, const std::string& dir, std::uint32_t snaplen) {
  topo_ = &topo;
  writers_.clear();
  writers_.resize(topo.links.size());
  paths_.assign(topo.links.size(), {});
  buf_.assign(16384, 0);
  for (std::uint32_t l = 0; l < topo.links.size(); ++l) {
    if (!topo.pcap_link[l]) continue;
    auto w = std::make_unique<port::PcapWriter>();
    paths_[l] = dir + "/" + topo.link_name(l) + ".pcap";
    const int rc = w->open(paths_[l], snaplen);
    if (rc != 0) return paths_[l] + ": " + std::strerror(rc);
    writers_[l] = std::move(w);
  }
  return {};
}

void PcapTap::write_control(std::uint32_t link, TimeNs at, const ControlFrame& f) {
  port::PcapWriter* w = writers_[link].get();
  if (w == nullptr) return;
  const int rc = w->write(at, std::span<const std::uint8_t>(f.bytes.data(), f.len));
  if (rc != 0 && first_error_ == 0) {
    first_error_ = rc;
    error_path_ = paths_[link];
  }
  ++frames_;
}

void PcapTap::write_data(std::uint32_t link, TimeNs at, std::uint32_t from, std::uint32_t to,
                         const SwitchPacket& p) {
  port::PcapWriter* w = writers_[link].get();
  if (w == nullptr) return;
  const std::size_t n = build_data_frame(*topo_, from, to, p, buf_);
  const int rc = w->write(at, std::span<const std::uint8_t>(buf_.data(), n));
  if (rc != 0 && first_error_ == 0) {
    first_error_ = rc;
    error_path_ = paths_[link];
  }
  ++frames_;
}

void PcapTap::write_frame(std::uint32_t link, TimeNs at, std::span<const std::uint8_t> frame) {
  port::PcapWriter* w = writers_[link].get();
  if (w == nullptr) return;
  const int rc = w->write(at, frame);
  if (rc != 0 && first_error_ == 0) {
    first_error_ = rc;
    error_path_ = paths_[link];
  }
  ++frames_;
}

std::string PcapTap::close() {
  for (std::uint32_t l = 0; l < writers_.size(); ++l) {
    if (writers_[l] == nullptr) continue;
    const int rc = writers_[l]->close();
    if (rc != 0 && first_error_ == 0) {
      first_error_ = rc;
      error_path_ = paths_[l];
    }
  }
  writers_.clear();
  if (first_error_ != 0) return error_path_ + ": " + std::strerror(first_error_);
  return {};
}

}  // namespace uroce::testbed
