#include "pfc/events.h"

#include <cstdio>

namespace uroce::pfc {

std::string_view pfc_event_name(PfcEventType t) {
  switch (t) {
    case PfcEventType::kStormDetected: return "pfc-storm-detected";
    case PfcEventType::kStormRestored: return "pfc-storm-restored";
    case PfcEventType::kLoopReplay: return "loop-replay-lower-ttl";
    case PfcEventType::kOwnPacket: return "loop-own-packet";
    case PfcEventType::kTtlOutlier: return "ttl-outlier";
  }
  return "unknown";
}

namespace {

// snprintf's result clamped to what was actually stored.
std::size_t clamp_written(int n, std::size_t cap) {
  if (n < 0 || cap == 0) return 0;
  const auto len = static_cast<std::size_t>(n);
  return len < cap ? len : cap - 1;
}

}  // namespace

std::size_t format_pfc_event(const PfcEvent& e, std::span<char> out) {
  if (out.empty()) return 0;
  const std::string_view name = pfc_event_name(e.type);
  const int nlen = static_cast<int>(name.size());
  const unsigned long long at = e.at;
  int n = 0;
  switch (e.type) {
    case PfcEventType::kStormDetected:
    case PfcEventType::kStormRestored:
      n = std::snprintf(out.data(), out.size(), "%.*s t=%lluns prio=%u since=%lluns", nlen,
                        name.data(), at, static_cast<unsigned>(e.prio),
                        static_cast<unsigned long long>(e.since));
      break;
    case PfcEventType::kLoopReplay:
    case PfcEventType::kOwnPacket:
    case PfcEventType::kTtlOutlier:
      n = std::snprintf(out.data(), out.size(),
                        "%.*s t=%lluns src=%u.%u.%u.%u qpn=0x%06x psn=%u ttl=%u ref_ttl=%u "
                        "suppressed=%llu",
                        nlen, name.data(), at, (e.src_ip >> 24) & 0xffu, (e.src_ip >> 16) & 0xffu,
                        (e.src_ip >> 8) & 0xffu, e.src_ip & 0xffu, e.qpn, e.psn,
                        static_cast<unsigned>(e.ttl), static_cast<unsigned>(e.ref_ttl),
                        static_cast<unsigned long long>(e.suppressed));
      break;
  }
  return clamp_written(n, out.size());
}

}  // namespace uroce::pfc
