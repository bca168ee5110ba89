#include "bench/raw_report.h"

#include <fmt/format.h>

namespace uroce::bench {

namespace {

double per_second(double v, double seconds) { return seconds > 0 ? v / seconds : 0.0; }

}  // namespace

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string report_json(const ReportHeader& h, const StreamStats* stream, const TxStats* tx,
                        const RttStats* rtt, const EchoStats* echo) {
  std::string j = fmt::format(
      "{{\"bench\":\"uroce-raw\",\"schema\":1,\"transport\":{},\"role\":{},"
      "\"ok\":{},\"error\":{},\"payload_bytes\":{},\"frame_bytes\":{},"
      "\"burst\":{},\"warmup_s\":{},\"duration_s\":{}",
      json_quote(h.transport), json_quote(h.role), h.ok ? "true" : "false", json_quote(h.error),
      h.payload_bytes, h.frame_bytes, h.burst, h.warmup_s, h.duration_s);
  if (stream != nullptr) {
    const double pps = per_second(static_cast<double>(stream->packets), stream->seconds);
    const double bps = per_second(static_cast<double>(stream->bytes) * 8, stream->seconds);
    const double payload_bps =
        per_second(static_cast<double>(stream->packets) * h.payload_bytes * 8, stream->seconds);
    j += fmt::format(
        ",\"stream\":{{\"packets\":{},\"bytes\":{},\"seconds\":{:.6f},"
        "\"mpps\":{:.4f},\"gbps\":{:.4f},\"payload_gbps\":{:.4f},\"lost\":{},"
        "\"foreign\":{}}}",
        stream->packets, stream->bytes, stream->seconds, pps / 1e6, bps / 1e9, payload_bps / 1e9,
        stream->lost, stream->foreign);
  }
  if (tx != nullptr) {
    const double pps = per_second(static_cast<double>(tx->packets), tx->seconds);
    j += fmt::format(
        ",\"tx\":{{\"packets\":{},\"seconds\":{:.6f},\"mpps\":{:.4f},"
        "\"gbps\":{:.4f},\"alloc_failures\":{},\"stopped_by_peer\":{}}}",
        tx->packets, tx->seconds, pps / 1e6, pps * h.frame_bytes * 8 / 1e9, tx->alloc_failures,
        tx->stopped_by_peer ? "true" : "false");
  }
  if (rtt != nullptr) {
    const RttHistogram& r = rtt->hist;
    j += fmt::format(
        ",\"rtt\":{{\"samples\":{},\"timeouts\":{},\"seconds\":{:.6f},"
        "\"median_us\":{:.3f},\"p99_us\":{:.3f},\"p999_us\":{:.3f},\"min_us\":{:.3f},"
        "\"max_us\":{:.3f},\"mean_us\":{:.3f}}}",
        r.count(), rtt->timeouts, rtt->seconds, r.quantile_ns(0.5) / 1e3, r.quantile_ns(0.99) / 1e3,
        r.quantile_ns(0.999) / 1e3, static_cast<double>(r.min_ns()) / 1e3,
        static_cast<double>(r.max_ns()) / 1e3, r.mean_ns() / 1e3);
  }
  if (echo != nullptr) {
    j += fmt::format(
        ",\"echo\":{{\"echoed\":{},\"dropped\":{},\"foreign\":{},"
        "\"stopped_by_peer\":{}}}",
        echo->echoed, echo->dropped, echo->foreign, echo->stopped_by_peer ? "true" : "false");
  }
  j += '}';
  return j;
}

}  // namespace uroce::bench
