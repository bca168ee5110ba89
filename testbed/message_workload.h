// The slowdown experiment's traffic on real-engine hosts (issue 15;
// docs/homa-testbed.md): messages whose lengths follow a workload's size
// distribution arrive as a Poisson process at an offered load
// (workload.h: Homa's definition, message data bytes only) between uniform
// random ordered pairs of engine hosts, and each is sent as one RC
// SEND-with-immediate or RDMA-WRITE-with-immediate, so the receiver gets one
// completion for the whole message.
//
// QPs: every ordered pair (s, d) has its own pool of `qps_per_pair` RC QP
// pairs (a QP on s connected to one on d), each carrying one message at a
// time. An arriving message takes a free QP of its pair; if all are busy it
// waits in a FIFO at the sender for that pair, and takes the next QP whose
// send completion (the message's ACK) comes back. A long message thus holds
// one QP, not every later message of its pair (one QP per pair would
// serialize them: head-of-line blocking Homa does not have), and the FIFO
// keeps a pair's messages in arrival order when the pool is used up. Time
// spent in that FIFO counts, as in Homa: a message's completion time is the
// instant its receiver's completion is seen minus its Poisson arrival time.
//
// Checks on every receive completion: status, byte_len == the message's
// length, imm_data == the message's number (so a completion cannot be
// credited to the wrong message), and the received bytes against the
// pattern the sender sent. Every message carries the first `length` bytes
// of one seeded pattern, and every receive on a host lands in one buffer
// at offset 0, so messages that overlap in time write the same bytes
// wherever they overlap: the check sees corrupt or misplaced bytes, but
// not a byte that no packet wrote and an earlier message already left
// right (RC's PSN order already rules that out). That keeps memory at one
// pattern plus one buffer per host of the longest length, instead of one
// per message in flight.
//
// Measurement: arrivals before warmup_ns run but are not measured; those in
// [warmup_ns, warmup_ns + measure_ns) are. Arrivals go on after that, so the
// measured messages finish under the same load; finished() says when the
// window has closed and every measured message has been received (the
// simulation then stops).
//
// Incast bursts (incast.senders > 0; incast.h) join the same FIFOs: each of
// a burst's messages is one message of its sender's pair, measured by the
// same window rule (a burst arriving in the window), and left out of the
// Poisson messages' slowdowns; a burst is done when its last message is
// received.
//
// Deterministic: arrivals from PoissonArrivals(seed), bursts from
// IncastArrivals(seed), QPNs in creation order, PSNs from the seed, pattern
// from the seed. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/engine_host.h"
#include "testbed/idle_time.h"
#include "testbed/incast.h"
#include "testbed/rc_driver.h"
#include "testbed/workload.h"

namespace uroce::testbed {

struct MessageWorkloadConfig {
  // Per workload host (index w): its driver's peer address and its path to
  // every other host (paths[s][d], empty for s == d) for the best times.
  std::vector<wire::MacAddr> macs;
  std::vector<wire::Ipv4Addr> ips;
  std::vector<std::vector<std::vector<PathLink>>> paths;
  std::uint64_t link_bps = 0;  // every host's link (the load's unit)
  double load = 0.5;
  std::uint64_t seed = 1;
  TimeNs warmup_ns = 0;
  TimeNs measure_ns = 0;
  std::uint32_t qps_per_pair = 4;
  // The bursts' senders, bytes and period (senders 0: no bursts); the
  // workload sets their hosts and seed.
  IncastSpec incast{};
  MsgOp op = MsgOp::kSendImm;
  RcConnect path;  // dscp, ttl, mtu, timeout, retries (addresses per pair)
};

// One message, by arrival order.
struct MessageRecord {
  TimeNs arrival_ns = 0;
  TimeNs post_ns = kNeverPosted;
  TimeNs done_ns = kNotDone;  // its receive completion
  TimeNs best_ns = 0;         // alone on the idle path (idle_time.h)
  std::uint64_t length = 0;
  std::uint16_t src = 0;  // workload host indices
  std::uint16_t dst = 0;
  std::uint32_t burst = kNoBurst;  // its incast burst, by arrival order
  bool measured = false;
  bool ok = false;  // received, with the right length, number and bytes

  static constexpr TimeNs kNeverPosted = ~TimeNs{0};
  static constexpr TimeNs kNotDone = ~TimeNs{0};
  static constexpr std::uint32_t kNoBurst = ~std::uint32_t{0};
};

// One incast burst, by arrival order.
struct BurstRecord {
  TimeNs arrival_ns = 0;
  TimeNs done_ns = MessageRecord::kNotDone;  // its last message received
  // One message of senders x bytes alone on the shortest of its senders'
  // idle paths: what the receiver's link alone needs.
  TimeNs best_ns = 0;
  std::uint32_t dst = 0;
  std::uint32_t received = 0;  // of its senders' messages
  bool measured = false;
};

struct MessageWorkloadStats {
  std::uint64_t arrived = 0;
  std::uint64_t posted = 0;
  std::uint64_t waited_for_qp = 0;  // found every QP of its pair busy
  std::uint64_t max_pair_queue = 0;
  std::uint64_t received = 0;  // receive completions, of any status
  std::uint64_t send_completed = 0;
  std::uint64_t send_errors = 0;
  std::uint32_t first_send_error = 0;  // its ib_wc_status
  std::uint64_t recv_errors = 0;
  std::uint32_t first_recv_error = 0;
  std::uint64_t length_mismatch = 0;
  std::uint64_t imm_mismatch = 0;
  std::uint64_t payload_mismatch = 0;
  std::uint64_t measured = 0;
  std::uint64_t measured_done = 0;
  std::uint64_t repost_failed = 0;  // a receive could not be re-posted
};

class MessageWorkload {
 public:
  // `drivers[w]` is workload host w's driver. Precondition: at least two
  // hosts, PoissonArrivals::check() passed for (hosts, link_bps, load,
  // seed), `dist` has points. Nothing is created before setup().
  MessageWorkload(const MessageWorkloadConfig& cfg, const SizeDistribution& dist,
                  std::vector<RcDriver*> drivers);
  ~MessageWorkload();
  MessageWorkload(const MessageWorkload&) = delete;
  MessageWorkload& operator=(const MessageWorkload&) = delete;

  // QPs a host needs: one per pair it sends on and one per pair it
  // receives on, qps_per_pair each.
  static std::uint32_t qps_per_host(std::uint32_t hosts, std::uint32_t qps_per_pair) {
    return 2 * (hosts - 1) * qps_per_pair;
  }

  // Registers the buffers, creates and connects every QP, posts the
  // receives. 0 or the first errno.
  int setup();
  // Host w's agent (reaps its completions, posts its waiting messages),
  // for EngineHost::add_app.
  EngineApp* app(std::uint32_t w);

  // The arrival time of the next message (or burst).
  TimeNs next_arrival() const {
    return incast_ && incast_->next_time() < next_.time_ns ? incast_->next_time() : next_.time_ns;
  }
  // Takes the message (or the burst's messages) arriving now (now ==
  // next_arrival()) into their pairs' FIFOs; returns their source hosts,
  // whose engines should run now (valid until the next call).
  const std::vector<std::uint32_t>& arrive(TimeNs now);
  // The measurement window has closed and every measured message was
  // received.
  bool finished(TimeNs now) const {
    return now >= cfg_.warmup_ns + cfg_.measure_ns && st_.measured_done == st_.measured;
  }

  const MessageWorkloadConfig& config() const { return cfg_; }
  const SizeDistribution& distribution() const { return gen_.distribution(); }
  const std::vector<MessageRecord>& records() const { return msgs_; }
  const std::vector<BurstRecord>& bursts() const { return bursts_; }
  const MessageWorkloadStats& stats() const { return st_; }
  std::uint32_t hosts() const { return static_cast<std::uint32_t>(drivers_.size()); }

 private:
  class Agent;
  struct SendSlot {
    std::uint32_t qp = 0;       // driver index on the source
    std::uint64_t msg = kIdle;  // the message it carries
  };
  struct RecvSlot {
    std::uint32_t qp = 0;  // driver index on the destination
    std::uint64_t msg = kIdle;
  };
  struct Pair {
    std::deque<std::uint64_t> waiting;  // messages, in arrival order
    bool listed = false;                // in its source's to_post list
  };
  struct FreeBuf {
    void operator()(std::uint8_t* p) const;
  };
  struct HostState {
    std::uint32_t send_cq = 0;
    std::uint32_t recv_cq = 0;
    std::uint32_t pattern_key = 0;
    std::uint64_t pattern_iova = 0;
    std::uint32_t recv_key = 0;
    std::uint64_t recv_iova = 0;
    std::unique_ptr<std::uint8_t, FreeBuf> recv_buf;  // max length, zeroed
    std::vector<std::uint32_t> to_post;               // pairs with waiting messages
    std::vector<ib_uverbs_wc> wc;
  };
  static constexpr std::uint64_t kIdle = ~std::uint64_t{0};
  // SQ and RQ depth of every QP: a QP carries one message at a time, and
  // its receiver keeps a spare receive posted.
  static constexpr std::uint32_t kQpDepth = 2;

  std::uint32_t pair_of(std::uint32_t s, std::uint32_t d) const { return s * hosts() + d; }
  static bool same_path(const std::vector<PathLink>& a, const std::vector<PathLink>& b);
  // An arrival at `now` is measured (inside the window).
  bool measured_at(TimeNs now) const {
    return now >= cfg_.warmup_ns && now < cfg_.warmup_ns + cfg_.measure_ns;
  }
  void enqueue(std::uint32_t src, std::uint32_t dst, std::uint64_t length, TimeNs now,
               std::uint32_t burst);
  void arrive_burst(TimeNs now);
  bool service_host(std::uint32_t w, TimeNs now);
  bool post_waiting(std::uint32_t w, TimeNs now);
  void on_send_done(std::uint32_t w, const ib_uverbs_wc& wc);
  bool on_recv_done(std::uint32_t w, const ib_uverbs_wc& wc, TimeNs now);

  MessageWorkloadConfig cfg_;
  std::vector<RcDriver*> drivers_;
  PoissonArrivals gen_;
  Arrival next_;
  std::optional<IncastArrivals> incast_;
  std::vector<BurstRecord> bursts_;
  std::vector<std::uint32_t> arrived_src_;
  std::vector<std::uint8_t> pattern_;
  std::vector<HostState> host_;
  std::vector<Pair> pairs_;
  std::vector<SendSlot> send_;            // pair x qps_per_pair + k
  std::vector<RecvSlot> recv_;            // the same index: the QP's peer
  std::vector<IdleTime> idle_;            // per distinct path
  std::vector<std::uint32_t> pair_idle_;  // pair -> its path's entry in idle_
  std::vector<std::unique_ptr<Agent>> agents_;
  std::vector<MessageRecord> msgs_;
  MessageWorkloadStats st_;
};

}  // namespace uroce::testbed
