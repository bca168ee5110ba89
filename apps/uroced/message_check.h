// The checks every request passes before its body is looked at
// (protocol.h, "Rules both sides enforce"), in this order:
//   1. at least a MsgHeader                       else EBADMSG
//   2. magic and version                          else EPROTONOSUPPORT, and
//                                                 the connection is closed
//   3. header.length == bytes received            else EBADMSG
//   4. a known op                                 else EOPNOTSUPP
//   5. bytes == ctl::request_bytes(op)            else EBADMSG
//   6. exactly the fds the op carries             else EBADMSG
// The connection state (Hello first: EPROTO) and the body's fields are the
// session's business. Pure functions: no I/O, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/ctl/protocol.h"

namespace uroce::daemon {

enum class MsgFault : std::uint8_t {
  kOk = 0,
  kShort,  // fewer bytes than a MsgHeader
  kBadMagic,
  kBadVersion,
  kLengthMismatch,  // header.length is not the size received
  kUnknownOp,
  kBadSize,     // not the exact size of the op's request
  kBadFdCount,  // not the fds the op carries
};

const char* to_string(MsgFault f);

struct MsgCheck {
  MsgFault fault = MsgFault::kOk;
  int status = 0;      // the errno value to reply with
  bool close = false;  // close the connection after replying
  bool ok() const { return fault == MsgFault::kOk; }
};

// The fds a request of `op` with body `body` (the bytes after the header,
// already known to have the op's exact size) must carry: request_fd_count,
// except ReregMr, which carries one only with IBV_REREG_MR_CHANGE_TRANSLATION.
int expected_fds(ctl::Op op, std::span<const std::byte> body);

// Checks `msg` (the whole message as received) and `nfds` (fds that came
// with it); fills *hdr with the header bytes whenever there are enough of
// them (also on failure: the reply echoes op and seq).
MsgCheck check_request(std::span<const std::byte> msg, int nfds, ctl::MsgHeader* hdr);

}  // namespace uroce::daemon
