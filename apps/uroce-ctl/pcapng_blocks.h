// Reads a pcapng stream's block structure as it passes through `uroce-ctl
// capture` (which copies the bytes unchanged): counts the packets and keeps
// the drop count of the last interface statistics block, so that the tool
// can say what the capture held without a second pass over the file.
//
// pcapng (the IETF draft "PCAP Next Generation Dump File Format"): a
// sequence of blocks, each {type u32, total length u32, body, total length
// u32}, lengths multiples of 4, in the byte order the section header's
// magic (0x1A2B3C4D) gives. Only the section header (type 0x0A0D0D0A) and
// statistics blocks (type 5) are looked into; enhanced (6) and simple (3)
// packet blocks are counted and skipped, everything else skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace uroce::ctl_tool {

class PcapngBlocks {
 public:
  static constexpr std::uint32_t kSectionHeader = 0x0A0D0D0A;
  static constexpr std::uint32_t kInterfaceStats = 5;
  static constexpr std::uint32_t kEnhancedPacket = 6;
  static constexpr std::uint32_t kSimplePacket = 3;
  // A longer statistics block is refused (ours are under a hundred bytes).
  static constexpr std::uint32_t kMaxParsedBlock = 64 * 1024;

  // The next bytes of the stream, cut anywhere. After an error, ignored.
  void feed(std::span<const std::uint8_t> bytes);

  std::uint64_t packets() const { return packets_; }
  // isb_ifdrop of the last statistics block that had one.
  std::optional<std::uint64_t> dropped() const { return dropped_; }
  // "" or why the stream is not pcapng.
  const std::string& error() const { return error_; }
  // Every byte fed belongs to a whole block (the stream may end here).
  bool between_blocks() const { return pending_.empty() && skip_ == 0; }

 private:
  // What pending_ is being filled with.
  enum class Stage { kHead, kSectionMagic, kStatsBlock };
  std::uint32_t u32(const std::uint8_t* p) const;
  std::uint64_t u64(const std::uint8_t* p) const;
  // pending_ holds want_ bytes of the current stage: act on them.
  void step();
  // The block whose first pending_.size() bytes are in pending_ is `len`
  // bytes long: skip the rest of it.
  void skip_rest(std::uint32_t len);
  void read_stats();

  Stage stage_ = Stage::kHead;
  std::vector<std::uint8_t> pending_;  // a block's first bytes
  std::size_t want_ = 8;               // bytes pending_ must reach
  std::uint64_t skip_ = 0;             // bytes of a skipped block still to come
  bool swapped_ = false;               // the writer's byte order is not ours
  bool seen_section_ = false;
  std::uint64_t packets_ = 0;
  std::optional<std::uint64_t> dropped_;
  std::string error_;
};

}  // namespace uroce::ctl_tool
