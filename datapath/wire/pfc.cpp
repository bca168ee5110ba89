#include "datapath/wire/pfc.h"

namespace uroce::wire {

std::string_view pfc_parse_error_name(PfcParseError e) {
  switch (e) {
    case PfcParseError::kOk: return "Ok";
    case PfcParseError::kTruncated: return "Truncated";
    case PfcParseError::kNotMacControl: return "NotMacControl";
    case PfcParseError::kNotPfcOpcode: return "NotPfcOpcode";
    case PfcParseError::kBadDstMac: return "BadDstMac";
  }
  return "Unknown";
}

PfcParseError parse_pfc(std::span<const std::uint8_t> frame, PfcFrame& out) {
  if (frame.size() < EthHdr::kSize) return PfcParseError::kTruncated;
  out.eth = EthHdr::read(frame.data());
  if (out.eth.ether_type() != kEtherTypeMacControl) {
    return PfcParseError::kNotMacControl;
  }
  if (frame.size() < EthHdr::kSize + PfcHdr::kSize) {
    return PfcParseError::kTruncated;
  }
  out.pfc = PfcHdr::read(frame.data() + EthHdr::kSize);
  if (out.pfc.opcode() != kMacControlOpcodePfc) {
    return PfcParseError::kNotPfcOpcode;
  }
  if (out.eth.dst() != kPfcDstMac) return PfcParseError::kBadDstMac;
  return PfcParseError::kOk;
}

std::size_t build_pfc(std::span<std::uint8_t> buf, const MacAddr& src, std::uint8_t class_mask,
                      const std::uint16_t (&quanta)[kPfcPriorities]) {
  if (buf.size() < kPfcFrameSize) return 0;
  EthHdr eth;
  eth.set_dst(kPfcDstMac);
  eth.set_src(src);
  eth.set_ether_type(kEtherTypeMacControl);
  PfcHdr pfc;
  pfc.set_opcode(kMacControlOpcodePfc);
  pfc.set_class_enable(class_mask);
  for (std::size_t p = 0; p < kPfcPriorities; ++p) {
    pfc.set_pause_time(p, ((class_mask >> p) & 1) != 0 ? quanta[p] : 0);
  }
  std::uint8_t* out = buf.data();
  eth.write(out);
  pfc.write(out + EthHdr::kSize);
  std::memset(out + EthHdr::kSize + PfcHdr::kSize, 0,
              kPfcFrameSize - EthHdr::kSize - PfcHdr::kSize);
  return kPfcFrameSize;
}

std::size_t build_pfc_pause(std::span<std::uint8_t> buf, const MacAddr& src,
                            std::uint8_t class_mask, std::uint16_t quanta) {
  const std::uint16_t q[kPfcPriorities] = {quanta, quanta, quanta, quanta,
                                           quanta, quanta, quanta, quanta};
  return build_pfc(buf, src, class_mask, q);
}

std::size_t build_pfc_resume(std::span<std::uint8_t> buf, const MacAddr& src,
                             std::uint8_t class_mask) {
  const std::uint16_t q[kPfcPriorities] = {};
  return build_pfc(buf, src, class_mask, q);
}

}  // namespace uroce::wire
