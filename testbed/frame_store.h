// The bytes of the frames real-engine hosts send, kept while the frame
// travels through the network as a SwitchPacket record (which carries
// only the fields a switch reads). A record of an engine frame names its
// slot here (frame_record.h); the slot is released when the frame reaches a
// host, is misdelivered, or a switch refuses it on arrival.
//
// Slots are reused (a free list, newest first), and a slot's buffer keeps
// its capacity, so once the network's peak of frames in flight has been
// reached, storing a frame allocates nothing. A frame a switch's PFC
// watchdog flushes from an egress queue is never released (the switch
// model does not report which packets it flushed): it stays in live() until
// the run ends, which the summary shows.
//
// Single-threaded: one simulation owns it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace uroce::testbed {

class FrameStore {
 public:
  // Copies `frame` into a free slot; returns the slot.
  std::uint32_t put(std::span<const std::uint8_t> frame);
  // The bytes of a live slot (writable: the receiving host patches TTL and
  // ECN into them). Precondition: `slot` was returned by put() and not
  // released since.
  std::span<std::uint8_t> get(std::uint32_t slot);
  void release(std::uint32_t slot);

  std::uint32_t live() const { return live_; }
  std::uint32_t peak() const { return peak_; }
  std::uint64_t stored() const { return stored_; }  // put() calls

 private:
  std::vector<std::vector<std::uint8_t>> slots_;
  std::vector<std::uint32_t> free_;
  std::uint32_t live_ = 0;
  std::uint32_t peak_ = 0;
  std::uint64_t stored_ = 0;
};

}  // namespace uroce::testbed
