#include "datapath/port/pcap_writer.h"

#include <algorithm>
#include <cerrno>

#include "datapath/wire/byteorder.h"

namespace uroce::port {

namespace {

// pcap files are written in the writer's byte order; we always write little
// endian explicitly so files are identical on any host.
constexpr std::uint32_t kMagicNanos = 0xa1b23c4d;
constexpr std::uint32_t kLinktypeEthernet = 1;

void put_le16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

}  // namespace

PcapWriter::~PcapWriter() { close(); }

int PcapWriter::open(const std::string& path, std::uint32_t snaplen) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  if (f_ == nullptr) return errno;
  snaplen_ = snaplen;
  frames_ = 0;
  std::uint8_t hdr[24];
  wire::store_le32(hdr, kMagicNanos);
  put_le16(hdr + 4, 2);  // version 2.4
  put_le16(hdr + 6, 4);
  wire::store_le32(hdr + 8, 0);   // thiszone
  wire::store_le32(hdr + 12, 0);  // sigfigs
  wire::store_le32(hdr + 16, snaplen);
  wire::store_le32(hdr + 20, kLinktypeEthernet);
  if (std::fwrite(hdr, sizeof(hdr), 1, f_) != 1) {
    const int err = errno != 0 ? errno : EIO;
    close();
    return err;
  }
  return 0;
}

int PcapWriter::write(TimeNs ts, std::span<const std::uint8_t> frame) {
  if (f_ == nullptr) return EBADF;
  const auto caplen = static_cast<std::uint32_t>(std::min<std::size_t>(frame.size(), snaplen_));
  std::uint8_t rec[16];
  wire::store_le32(rec, static_cast<std::uint32_t>(ts / kNsPerSec));
  wire::store_le32(rec + 4, static_cast<std::uint32_t>(ts % kNsPerSec));
  wire::store_le32(rec + 8, caplen);
  wire::store_le32(rec + 12, static_cast<std::uint32_t>(frame.size()));
  if (std::fwrite(rec, sizeof(rec), 1, f_) != 1) return errno != 0 ? errno : EIO;
  if (caplen > 0 && std::fwrite(frame.data(), caplen, 1, f_) != 1) return errno != 0 ? errno : EIO;
  ++frames_;
  return 0;
}

int PcapWriter::close() {
  if (f_ == nullptr) return 0;
  const int rc = std::fclose(f_);
  f_ = nullptr;
  return rc == 0 ? 0 : errno;
}

}  // namespace uroce::port
