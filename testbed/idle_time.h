// The best completion time of one RC message on an idle network: the
// denominator of a slowdown (completion time / best time for that length;
// docs/homa-testbed.md).
//
// On an idle path nothing waits for anything but the wires: the sender's
// engine hands every frame of the message to its port at the instant the
// message is posted (an engine poll takes no virtual time), frames leave
// back to back, each switch forwards a frame once its last bit has arrived
// and the egress wire is free (store and forward), and the receiver's
// completion is seen when the last bit of the last frame arrives. So the
// best time is a pure function of the frames' sizes and the path's links,
// computed here with the testbed's own link arithmetic (LinkDir: whole-ns
// ends, the rounding owed to a back-to-back successor), one LinkDir per
// hop. tests/testbed/test_idle_time.cpp checks it against idle simulations
// of the real engines, to the ns.
//
// The frames are what the engine builds for the operation over IPv4:
// Ethernet, IPv4, UDP, BTH, the opcode's extension headers (RETH on the
// first packet of a WRITE, ImmDt on the last), the payload padded to 4
// bytes and the ICRC; no FCS, no minimum-frame padding (as the testbed
// carries them).
//
// Not thread-safe; one per path.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "datapath/base/time.h"

namespace uroce::testbed {

// The message operations of the workload: each gives the receiver a
// completion for the whole message.
enum class MsgOp : std::uint8_t { kSendImm = 0, kWriteImm };

// One link direction on a path, in the order frames cross them.
struct PathLink {
  std::uint64_t rate_bps = 0;
  TimeNs delay_ns = 0;
  std::uint32_t overhead_bytes = 0;
};

// The frame sizes of one message of `length` bytes (0 allowed) at path MTU
// `mtu` bytes, in sending order.
std::vector<std::uint32_t> message_frames(MsgOp op, std::uint64_t length, std::uint32_t mtu);

// When the last bit of the last frame reaches the far end of `path`, for
// frames that are all ready at the sender at time 0.
TimeNs idle_completion_ns(const std::vector<std::uint32_t>& frames,
                          const std::vector<PathLink>& path);

// idle_completion_ns(message_frames(...), path), remembered per length.
class IdleTime {
 public:
  IdleTime(MsgOp op, std::uint32_t mtu, std::vector<PathLink> path)
      : op_(op), mtu_(mtu), path_(std::move(path)) {}

  TimeNs best_ns(std::uint64_t length);
  const std::vector<PathLink>& path() const { return path_; }

 private:
  MsgOp op_;
  std::uint32_t mtu_;
  std::vector<PathLink> path_;
  std::map<std::uint64_t, TimeNs> cache_;
};

}  // namespace uroce::testbed
