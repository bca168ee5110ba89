#include "apps/uroce-ctl/pcapng_blocks.h"

#include <algorithm>
#include <cstring>

namespace uroce::ctl_tool {

namespace {

constexpr std::uint32_t kByteOrderMagic = 0x1A2B3C4D;
// isb_ifdrop: packets dropped by the interface (an 8-byte value).
constexpr std::uint16_t kIsbIfDrop = 5;
// An interface statistics block's options start after its type, length,
// interface id and two timestamp words.
constexpr std::size_t kIsbOptions = 20;

}  // namespace

std::uint32_t PcapngBlocks::u32(const std::uint8_t* p) const {
  std::uint32_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return swapped_ ? __builtin_bswap32(v) : v;
}

std::uint64_t PcapngBlocks::u64(const std::uint8_t* p) const {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return swapped_ ? __builtin_bswap64(v) : v;
}

void PcapngBlocks::feed(std::span<const std::uint8_t> bytes) {
  while (!bytes.empty() && error_.empty()) {
    if (skip_ != 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, bytes.size()));
      skip_ -= n;
      bytes = bytes.subspan(n);
      continue;
    }
    const std::size_t n = std::min(want_ - pending_.size(), bytes.size());
    pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<long>(n));
    bytes = bytes.subspan(n);
    if (pending_.size() == want_) step();
  }
}

void PcapngBlocks::skip_rest(std::uint32_t len) {
  skip_ = len - pending_.size();
  pending_.clear();
  want_ = 8;
  stage_ = Stage::kHead;
}

void PcapngBlocks::step() {
  // A block's type reads the same in either byte order for the section
  // header, whose magic then tells the order of everything after it.
  std::uint32_t raw_type = 0;
  std::memcpy(&raw_type, pending_.data(), sizeof(raw_type));
  switch (stage_) {
    case Stage::kHead: {
      if (raw_type == kSectionHeader) {
        stage_ = Stage::kSectionMagic;
        want_ = 12;
        return;
      }
      if (!seen_section_) {
        error_ = "not a pcapng stream (it does not start with a section header)";
        return;
      }
      break;
    }
    case Stage::kSectionMagic: {
      std::uint32_t magic = 0;
      std::memcpy(&magic, pending_.data() + 8, sizeof(magic));
      if (magic != kByteOrderMagic && __builtin_bswap32(magic) != kByteOrderMagic) {
        error_ = "not a pcapng stream (bad byte-order magic)";
        return;
      }
      swapped_ = magic != kByteOrderMagic;
      seen_section_ = true;
      break;
    }
    case Stage::kStatsBlock:
      read_stats();
      pending_.clear();
      want_ = 8;
      stage_ = Stage::kHead;
      return;
  }
  const std::uint32_t type = u32(pending_.data());
  const std::uint32_t len = u32(pending_.data() + 4);
  if (len < 12 || len % 4 != 0 || len < pending_.size()) {
    error_ = "bad pcapng block length " + std::to_string(len);
    return;
  }
  if (type == kEnhancedPacket || type == kSimplePacket) ++packets_;
  if (type == kInterfaceStats) {
    if (len > kMaxParsedBlock) {
      error_ = "pcapng statistics block of " + std::to_string(len) + " bytes";
      return;
    }
    stage_ = Stage::kStatsBlock;
    want_ = len;
    return;
  }
  skip_rest(len);
}

void PcapngBlocks::read_stats() {
  const std::size_t end = pending_.size() - 4;  // the trailing length
  std::size_t at = kIsbOptions;
  while (at + 4 <= end) {
    std::uint16_t code = 0, olen = 0;
    std::memcpy(&code, pending_.data() + at, 2);
    std::memcpy(&olen, pending_.data() + at + 2, 2);
    if (swapped_) {
      code = __builtin_bswap16(code);
      olen = __builtin_bswap16(olen);
    }
    if (code == 0 || at + 4 + olen > end) break;
    if (code == kIsbIfDrop && olen == 8) dropped_ = u64(pending_.data() + at + 4);
    at += 4 + ((olen + 3u) & ~3u);
  }
}

}  // namespace uroce::ctl_tool
