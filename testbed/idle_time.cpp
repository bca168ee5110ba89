#include "testbed/idle_time.h"

#include <algorithm>

#include "datapath/wire/builder.h"
#include "datapath/wire/opcodes.h"
#include "testbed/link.h"

namespace uroce::testbed {

namespace {

std::uint32_t frame_bytes(std::uint8_t opcode, std::uint64_t payload) {
  return static_cast<std::uint32_t>(wire::kRoceFrameOverhead + wire::opcode_info(opcode).ext_len +
                                    payload + wire::pad_count(payload));
}

}  // namespace

std::vector<std::uint32_t> message_frames(MsgOp op, std::uint64_t length, std::uint32_t mtu) {
  const bool write = op == MsgOp::kWriteImm;
  std::vector<std::uint32_t> out;
  if (length <= mtu) {
    out.push_back(
        frame_bytes(write ? wire::op::kRcWriteOnlyImm : wire::op::kRcSendOnlyImm, length));
    return out;
  }
  const std::uint64_t n = (length + mtu - 1) / mtu;
  out.reserve(n);
  out.push_back(frame_bytes(write ? wire::op::kRcWriteFirst : wire::op::kRcSendFirst, mtu));
  for (std::uint64_t i = 1; i + 1 < n; ++i) {
    out.push_back(frame_bytes(write ? wire::op::kRcWriteMiddle : wire::op::kRcSendMiddle, mtu));
  }
  out.push_back(frame_bytes(write ? wire::op::kRcWriteLastImm : wire::op::kRcSendLastImm,
                            length - (n - 1) * mtu));
  return out;
}

TimeNs idle_completion_ns(const std::vector<std::uint32_t>& frames,
                          const std::vector<PathLink>& path) {
  std::vector<LinkDir> links;
  links.reserve(path.size());
  for (const PathLink& l : path) links.emplace_back(l.rate_bps, l.delay_ns, l.overhead_bytes);
  TimeNs last = 0;
  for (const std::uint32_t bytes : frames) {
    // The frame is at the sender from 0; at each later hop from the
    // instant its last bit arrived there.
    TimeNs at = 0;
    for (LinkDir& l : links) {
      const TimeNs start = std::max(at, l.free_at());
      at = l.start(bytes, false, start) + l.delay();
    }
    last = at;
  }
  return last;
}

TimeNs IdleTime::best_ns(std::uint64_t length) {
  const auto it = cache_.find(length);
  if (it != cache_.end()) return it->second;
  const TimeNs t = idle_completion_ns(message_frames(op_, length, mtu_), path_);
  cache_.emplace(length, t);
  return t;
}

}  // namespace uroce::testbed
