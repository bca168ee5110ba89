// The one-line JSON result of uroce-raw-bench. Stable keys, so scripts (and
// later the stack's own benchmarks, which add their own lines) can merge runs:
//
//   {"bench":"uroce-raw","schema":1,"transport":"memif","role":"receiver",
//    "ok":true,"error":"","payload_bytes":64,"frame_bytes":106,"burst":32,
//    "warmup_s":0.5,"duration_s":3,
//    "stream":{...}   receiver and ring self-test
//    "tx":{...}       sender
//    "rtt":{...}      ping and ring self-test
//    "echo":{...}}    pong
//
// Byte and bit rates count L2 frame bytes: Ethernet header through the end
// of the UDP payload, no FCS, preamble or inter-frame gap.
#pragma once

#include <string>

#include "bench/raw_roles.h"

namespace uroce::bench {

struct ReportHeader {
  std::string transport;
  std::string role;
  bool ok = true;
  std::string error;
  std::uint32_t payload_bytes = 0;
  std::uint32_t frame_bytes = 0;
  std::uint16_t burst = 0;
  double warmup_s = 0;
  double duration_s = 0;
};

// Any of the section pointers may be null (section left out).
std::string report_json(const ReportHeader& h, const StreamStats* stream, const TxStats* tx,
                        const RttStats* rtt, const EchoStats* echo);

// `s` as a JSON string literal, quotes included.
std::string json_quote(const std::string& s);

}  // namespace uroce::bench
