#include "datapath/wire/opcodes.h"

namespace uroce::wire {

std::string_view ext_hdr_name(ExtHdr h) {
  switch (h) {
    case ExtHdr::kDeth: return "DETH";
    case ExtHdr::kDcEth: return "DCETH";
    case ExtHdr::kDcAeth: return "DCAETH";
    case ExtHdr::kFeth: return "FETH";
    case ExtHdr::kReth: return "RETH";
    case ExtHdr::kAtomicEth: return "AtomicETH";
    case ExtHdr::kAeth: return "AETH";
    case ExtHdr::kAtomicAckEth: return "AtomicAckETH";
    case ExtHdr::kImmDt: return "ImmDt";
    case ExtHdr::kIeth: return "IETH";
    case ExtHdr::kCnp: return "CNP";
    case ExtHdr::kSrEth: return "SRETH";
    case ExtHdr::kSackEth: return "SACKETH";
  }
  return "UNKNOWN";
}

std::string_view opcode_name(std::uint8_t opcode) {
  const OpcodeInfo& i = opcode_info(opcode);
  return i.valid ? i.name : std::string_view("UNKNOWN");
}

std::string_view transport_name(Transport t) {
  switch (t) {
    case Transport::kRc: return "RC";
    case Transport::kUc: return "UC";
    case Transport::kRd: return "RD";
    case Transport::kUd: return "UD";
    case Transport::kCnp: return "CNP";
    case Transport::kExt: return "UROCE";
    case Transport::kDc: return "DC";
    case Transport::kSr: return "SR";
  }
  return "UNKNOWN";
}

std::optional<PathMtu> path_mtu_from_bytes(std::uint32_t bytes) {
  for (std::uint8_t c = 1; c <= 5; ++c) {
    if (path_mtu_bytes(static_cast<PathMtu>(c)) == bytes) {
      return static_cast<PathMtu>(c);
    }
  }
  return std::nullopt;
}

}  // namespace uroce::wire
