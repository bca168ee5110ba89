#include "apps/uroced/message_check.h"

#include <cerrno>
#include <cstring>

namespace uroce::daemon {

const char* to_string(MsgFault f) {
  switch (f) {
    case MsgFault::kOk: return "ok";
    case MsgFault::kShort: return "shorter than a message header";
    case MsgFault::kBadMagic: return "wrong magic";
    case MsgFault::kBadVersion: return "unsupported protocol version";
    case MsgFault::kLengthMismatch: return "header length differs from the bytes received";
    case MsgFault::kUnknownOp: return "unknown op";
    case MsgFault::kBadSize: return "wrong size for its op";
    case MsgFault::kBadFdCount: return "wrong number of file descriptors for its op";
  }
  return "?";
}

int expected_fds(ctl::Op op, std::span<const std::byte> body) {
  if (op == ctl::Op::kRegMr) {
    ctl::RegMrReq r;
    if (body.size() < sizeof(r)) return 1;
    std::memcpy(&r, body.data(), sizeof(r));
    return r.source == ctl::MrSource::kMemfd ? 1 : 0;
  }
  if (op == ctl::Op::kReregMr) {
    ctl::ReregMrReq r;
    if (body.size() < sizeof(r)) return 0;
    std::memcpy(&r, body.data(), sizeof(r));
    return (r.flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0 && r.source == ctl::MrSource::kMemfd
               ? 1
               : 0;
  }
  return ctl::request_fd_count(op);
}

MsgCheck check_request(std::span<const std::byte> msg, int nfds, ctl::MsgHeader* hdr) {
  *hdr = ctl::MsgHeader{};
  if (msg.size() < sizeof(ctl::MsgHeader)) {
    return {MsgFault::kShort, EBADMSG, false};
  }
  std::memcpy(hdr, msg.data(), sizeof(*hdr));
  if (hdr->magic != ctl::kMagic) return {MsgFault::kBadMagic, EPROTONOSUPPORT, true};
  if (hdr->version != ctl::kVersion) return {MsgFault::kBadVersion, EPROTONOSUPPORT, true};
  if (hdr->length != msg.size()) return {MsgFault::kLengthMismatch, EBADMSG, false};
  const auto op = static_cast<ctl::Op>(hdr->op);
  const std::size_t want = ctl::request_bytes(op);
  if (want == 0) return {MsgFault::kUnknownOp, EOPNOTSUPP, false};
  if (msg.size() != want) return {MsgFault::kBadSize, EBADMSG, false};
  if (nfds != expected_fds(op, msg.subspan(sizeof(ctl::MsgHeader)))) {
    return {MsgFault::kBadFdCount, EBADMSG, false};
  }
  return {};
}

}  // namespace uroce::daemon
