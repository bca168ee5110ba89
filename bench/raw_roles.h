// The measurement loops of uroce-raw-bench, one function per role. Each runs
// on the calling lcore only, polls its port(s) without sleeping, and returns
// by itself in bounded time: when its measurement is done, when the peer
// says stop, when the peer never shows up within `wait_s`, or at a hard
// deadline (wait + warm-up + duration + grace), whichever comes first.
//
// Per packet: no heap allocation (mbufs come from the port's pool in bulk),
// no exception, no lock; every frame that is not counted is counted as
// something else (foreign, lost, dropped).
#pragma once

#include <atomic>
#include <cstdint>

#include "bench/bench_frame.h"
#include "bench/rtt_histogram.h"
#include "datapath/port/eth_port.h"

namespace uroce::bench {

// UDP ports: data flows to kRxPort (receiver / pong side); stop frames of the
// stream and echoes flow back to kTxPort (sender / ping side).
inline constexpr std::uint16_t kTxPort = 7000;
inline constexpr std::uint16_t kRxPort = 7001;
inline constexpr std::uint16_t kMaxBurst = 64;

struct RunParams {
  std::uint16_t burst = 32;  // 1..kMaxBurst
  double warmup_s = 0.5;     // after the first frame, not measured
  double duration_s = 3.0;   // measured
  // ping: stop after this many measured round trips (0: duration_s only);
  // with warmup_s 0, the first `count` from the first echo, as a perftest
  // latency run of `count` iterations measures from its first message.
  std::uint64_t count = 0;
  double wait_s = 10.0;           // longest wait for the peer's first frame
  double grace_s = 5.0;           // slack in the hard deadline
  double reply_timeout_s = 0.02;  // ping: a reply later than this is lost
  double idle_s = 1.0;            // pong: silence this long after traffic ends it
  // pong: hold each echo this long (spinning) before sending it, as a
  // stack's own processing would: a control for what a longer round trip
  // alone meets on the same machine (docs/tails.md).
  std::uint64_t echo_hold_ns = 0;
  double linger_s = 1.0;   // receiver: longest wait for the sender to stop
  double quiesce_s = 0.2;  // sender/ping: idle time before closing
};

// Receiver side of a stream (and the ring self-test's receiving half).
struct StreamStats {
  std::uint64_t packets = 0;  // data frames received in the measured window
  std::uint64_t bytes = 0;    // their L2 bytes (Ethernet header .. payload)
  std::uint64_t lost = 0;     // sequence gaps inside the window
  std::uint64_t foreign = 0;  // frames that were not ours (whole run)
  double seconds = 0;         // length of the measured window
};

// Sender side of a stream.
struct TxStats {
  std::uint64_t packets = 0;         // frames the PMD accepted
  std::uint64_t alloc_failures = 0;  // bursts skipped for lack of mbufs
  double seconds = 0;                // from the first accepted frame to the end
  bool stopped_by_peer = false;      // false: ended by the hard deadline
};

struct RttStats {
  RttHistogram hist;           // measured window only
  std::uint64_t timeouts = 0;  // pings without a reply within reply_timeout_s
  double seconds = 0;
};

struct EchoStats {
  std::uint64_t echoed = 0;
  std::uint64_t dropped = 0;  // replies the PMD refused (freed)
  std::uint64_t foreign = 0;
  bool stopped_by_peer = false;
};

// Set from a signal handler: every loop ends soon after it becomes true.
extern std::atomic<bool> g_interrupted;

// One lcore, a crossed ring pair: each iteration sends one burst on `a` and
// receives one burst on `b`. Returns 0, or -EIO if nothing ever arrived.
int ring_stream(port::EthPort& a, port::EthPort& b, const FrameTemplate& data, const RunParams& p,
                StreamStats* out);
// One lcore, a crossed ring pair: ping on `a`, echo on `b`, back on `a`.
int ring_pingpong(port::EthPort& a, port::EthPort& b, const FrameTemplate& data, const RunParams& p,
                  RttStats* out);

// Streams `data` frames as fast as the port takes them until a stop frame
// comes back or the hard deadline passes. Returns 0 or -ETIMEDOUT (no peer).
int stream_send(port::EthPort& port, const FrameTemplate& data, const RunParams& p, TxStats* out);
// Counts data frames for warm-up + duration from the first one, then sends
// `stop` frames to the sender and keeps the port open (at most linger_s)
// until the sender has gone quiet. Returns 0 or -ETIMEDOUT (no frame).
int stream_receive(port::EthPort& port, const FrameTemplate& stop, const RunParams& p,
                   StreamStats* out);

// One ping outstanding at a time; stops the pong with kStop frames at the
// end. Returns 0 or -ETIMEDOUT (no echo ever came back).
int ping(port::EthPort& port, const FrameTemplate& data, const RunParams& p, RttStats* out);
// Echoes every data frame for kRxPort back with addresses swapped until a
// stop frame, an idle gap longer than idle_s, or the hard deadline.
// Returns 0 or -ETIMEDOUT (no frame within wait_s).
int pong(port::EthPort& port, const RunParams& p, EchoStats* out);

}  // namespace uroce::bench
