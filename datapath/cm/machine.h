// The connection manager's state machine (IBTA Vol.1 chapter 12): I/O-free.
// MADs, user requests and `now` go in; MADs to send, events for the user
// and a deadline come out (Output). The caller (the daemon's CM service)
// moves MADs through QP1 and calls on_timer() at next_deadline().
//
// Active side:   connect -> REQ ... (MRA) ... REP -> kConnectResponse ->
//                accept -> RTU -> established
// Passive side:  REQ matching a listener -> kConnectRequest -> accept ->
//                REP ... RTU -> kEstablished   (reject -> REJ)
// Release:       disconnect -> DREQ ... DREP -> kDisconnected -> timewait;
//                DREQ received -> kDisconnected; disconnect -> DREP.
//
// Retries as IBTA sets them: a REQ is resent every remote CM response
// timeout (+ twice the packet lifetime) up to its Max CM Retries, then the
// connection is given up (REJ "timeout" to the peer, kUnreachable); a REP
// likewise with the REQ's local response timeout (kConnectError); a DREQ
// ends in timewait (kDisconnected) when unanswered. An MRA stretches the
// wait by its service timeout. Duplicates are answered from state: a second
// REQ gets an MRA (still deciding) or the REP again, a second REP the RTU
// again, a second DREQ the DREP again; a DREQ for an unknown connection is
// answered with a DREP (12.9.8.6). Everything else that does not fit is
// dropped and counted (Counters).
//
// SIDR (12.11, rdma_cm's UDP port space): sidr_request sends a SIDR_REQ,
// retried as a REQ; a SIDR_REQ matching a listener gives kSidrRequest,
// answered by accept (SIDR_REP with the QP and Q_Key) or reject (status
// "rejected"); the SIDR_REP gives kSidrReply. No connection state stays.
//
// A REQ or SIDR_REQ whose port has no listener yet waits up to
// kListenGraceNs for one (a server that re-listens between two connections
// of one client, as perftest's -R does); then it gets its REJ "invalid
// Service ID" (or SIDR_REP "unsupported"). The passive side may take up to
// its response timeout to answer a REQ, so this is within the protocol; the
// Linux CM rejects at once.
//
// destroy() is the user's rdma_destroy_id: the connection leaves the user
// at once (no more events) but lives on, orphaned, as long as the protocol
// needs it (a DREQ to finish, timewait).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "datapath/cm/listeners.h"
#include "datapath/cm/messages.h"
#include "datapath/cm/timing.h"
#include "datapath/cm/types.h"

namespace uroce::cm {

enum class State : std::uint8_t {
  kReqSent,      // active: REQ out, waiting for REP
  kMraRcvd,      // active: the peer MRAed our REQ
  kRepRcvd,      // active: REP in, waiting for the user's accept (RTU)
  kReqRcvd,      // passive: REQ in, waiting for the user's accept/reject
  kRepSent,      // passive: REP out, waiting for RTU
  kEstablished,  //
  kDreqSent,     // DREQ out, waiting for DREP
  kDreqRcvd,     // DREQ in, waiting for the user's disconnect (DREP)
  kTimewait,     // released; the ID answers late DREQs until the timer
  kClosed,       // rejected, timed out or out of timewait: only destroy()
  kSidrReqSent,  // active UD: SIDR_REQ out, waiting for SIDR_REP
  kSidrReqRcvd,  // passive UD: SIDR_REQ in, waiting for the user's answer
  kSidrRepSent,  // passive UD: answered; a duplicate SIDR_REQ gets it again
};
const char* state_name(State s);

// How long a request for a port nobody listens on waits for a listener,
// and how many may wait at once (more are rejected at once).
inline constexpr TimeNs kListenGraceNs = 200 * kNsPerMs;
inline constexpr std::size_t kMaxParked = 64;

// Packet lifetime assumed on a RoCE path: the Linux CM's RoCE value (code
// 16, 268 ms), added twice to every response timeout.
inline constexpr std::uint8_t kPacketLifetime = 16;
// The local ACK timeout of the QPs a connection joins (IBTA 12.7.34: it
// covers a round trip, twice the packet lifetime, plus the responder's ACK
// delay), sent in the REQ as the Primary Local ACK Timeout: the packet
// lifetime plus one, as the Linux CM derives it on RoCE (6.1, lifetime 18,
// sends 19). A slow responder then has 537 ms to acknowledge before the
// requester resends, not 67 ms (14), which a TCG-slowed rxe overran.
inline constexpr std::uint8_t kLocalAckTimeout = kPacketLifetime + 1;

struct ConnectArgs {
  Path path;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  QpParams local{};
  PrivateData private_data{};  // at most kReqConsumerBytes
  std::uint8_t response_timeout = kDefaultResponseTimeout;
  std::uint8_t max_retries = kDefaultMaxRetries;
};

struct Conn {
  State state{};
  bool active = false;
  bool orphan = false;  // destroyed by the user, kept for the protocol
  ConnId id = 0;
  std::uint32_t remote_id = 0;
  Path path{};
  std::uint16_t local_port = 0;
  std::uint16_t remote_port = 0;
  ListenId listener = 0;
  std::uint64_t service_id = 0;  // SIDR: echoed in the SIDR_REP
  std::uint64_t tid = 0;         // the REQ's: REP, RTU, MRA and REJ reuse it
  std::uint64_t dreq_tid = 0;    // the DREQ's: DREP reuses it
  QpParams local{};
  QpParams remote{};
  std::uint8_t local_response_timeout = kDefaultResponseTimeout;
  std::uint8_t remote_response_timeout = kDefaultResponseTimeout;
  std::uint8_t max_retries = kDefaultMaxRetries;
  // Retransmission: the MAD to resend, when, how often still.
  Mad last{};
  TimeNs deadline = 0;  // 0: no timer
  TimeNs interval = 0;
  std::uint8_t retries_left = 0;
};

// The ACK timeout for a connection's QP at RTS: the active side its own
// (kLocalAckTimeout), the passive side the REQ's Primary Local ACK Timeout,
// as the Linux CM does; kLocalAckTimeout when a REQ carried 0.
inline std::uint8_t qp_ack_timeout(const Conn& c) {
  if (c.active || c.remote.local_ack_timeout == 0) return kLocalAckTimeout;
  return c.remote.local_ack_timeout;
}

// The responder resources and initiator depth a connection's QP takes, as
// the Linux CM keeps them (cm.c): the values this side last sent while they
// are the newest (an active side before the REP, a passive side once it
// accepted), otherwise the peer's, crossed (the REP's initiator depth is
// how many READs and atomics this side must answer, and the REQ's
// likewise before the passive side accepts).
inline bool own_params_newest(const Conn& c) {
  if (c.active) return c.state == State::kReqSent || c.state == State::kMraRcvd;
  return c.state != State::kReqRcvd;
}
inline std::uint8_t qp_responder_resources(const Conn& c) {
  return own_params_newest(c) ? c.local.responder_resources : c.remote.initiator_depth;
}
inline std::uint8_t qp_initiator_depth(const Conn& c) {
  return own_params_newest(c) ? c.local.initiator_depth : c.remote.responder_resources;
}

class Machine {
 public:
  // `first_id`: where Communication IDs start (a seeded value, so that
  // a restarted daemon does not reuse its predecessor's IDs at once).
  explicit Machine(std::uint32_t first_id) : next_id_(first_id == 0 ? 1 : first_id) {}

  // `ip` 0 listens on every address; `proto` kIpProtoTcp (REQ) or
  // kIpProtoUdp (SIDR_REQ). 0 or EADDRINUSE.
  int listen(std::uint32_t ip, std::uint16_t port, ListenId id,
             std::uint8_t proto = wire::kIpProtoTcp) {
    return listeners_.add(proto, ip, port, id);
  }
  // 0 or ENOENT.
  int unlisten(std::uint32_t ip, std::uint16_t port, std::uint8_t proto = wire::kIpProtoTcp) {
    return listeners_.remove(proto, ip, port);
  }

  // Sends a REQ. EINVAL: private data over kReqConsumerBytes.
  int connect(const ConnectArgs& a, TimeNs now, Output* out, ConnId* id);
  // SIDR_REQ for a UD QP. EINVAL: private data over kSidrReqConsumerBytes.
  int sidr_request(const ConnectArgs& a, TimeNs now, Output* out, ConnId* id);
  // Passive (kReqRcvd): sends the REP with `local` (private data at most
  // kRepPrivateBytes). Active (kRepRcvd): sends the RTU; `local` unused.
  // kSidrReqRcvd: sends a SIDR_REP with local.qpn and local.qkey.
  // ENOENT, EINVAL (state, private data too long).
  int accept(ConnId id, const QpParams& local, const PrivateData& pd, TimeNs now, Output* out);
  // kReqRcvd or kRepRcvd: REJ "consumer" with `pd`; kSidrReqRcvd: SIDR_REP
  // "rejected". ENOENT, EINVAL.
  int reject(ConnId id, const PrivateData& pd, TimeNs now, Output* out);
  // kEstablished: DREQ; kDreqRcvd: DREP (then timewait). ENOENT, EINVAL.
  int disconnect(ConnId id, const PrivateData& pd, TimeNs now, Output* out);
  // The user is done with the ID (see the header comment). ENOENT.
  int destroy(ConnId id, TimeNs now, Output* out);

  void on_mad(const Path& from, const Mad& m, TimeNs now, Output* out);
  // Serves the parked requests whose listener has appeared (the caller
  // runs it after a listen()); on_timer also rejects the expired ones.
  void retry_parked(TimeNs now, Output* out);
  void on_timer(TimeNs now, Output* out);
  // The earliest timer, or 0 when none runs.
  TimeNs next_deadline() const;

  const Conn* find(ConnId id) const;
  std::size_t conn_count() const { return conns_.size(); }
  const Counters& counters() const { return ctr_; }

 private:
  Conn* lookup(ConnId id);
  ConnId alloc_id();
  std::uint64_t new_tid();
  // A new active-side connection (connect, sidr_request) in `state`, from
  // the caller's arguments, with a fresh transaction id.
  Conn& open_active(const ConnectArgs& a, State state);
  // A new passive-side connection (a REQ or SIDR_REQ for listener `lid`)
  // from `from`, its comm or request id `remote_id`, in `state`.
  Conn& open_passive(const Path& from, std::uint16_t local_port, std::uint16_t remote_port,
                     ListenId lid, std::uint32_t remote_id, std::uint64_t tid, State state);
  void send(Conn& c, const Mad& m, Output* out);
  void send_to(const Path& p, const Mad& m, Output* out);
  // Sends `m` and keeps it for retransmission every `interval`.
  void send_timed(Conn& c, const Mad& m, TimeNs interval, TimeNs now, Output* out);
  void stop_timer(Conn& c) { c.deadline = 0; }
  void event(const Conn& c, EventType t, int status, Output* out, const PrivateData* pd = nullptr);
  void enter_timewait(Conn& c, TimeNs now);
  // Closes a connection: freed when orphaned, else kClosed.
  void close(Conn& c);
  void erase(ConnId id);
  void timeout(Conn& c, TimeNs now, Output* out);
  // disconnect() without the user check (destroy() uses it on orphans).
  int release(Conn& c, const PrivateData& pd, TimeNs now, Output* out);

  // `park`: a request without a listener waits (kListenGraceNs) instead
  // of being rejected at once.
  void on_req(const Path& from, const Mad& m, Output* out, bool park, TimeNs now);
  void on_rep(const Mad& m, Output* out);
  void on_rtu(const Mad& m, Output* out);
  void on_mra(const Mad& m, TimeNs now);
  void on_rej(const Mad& m, Output* out);
  void on_dreq(const Path& from, const Mad& m, TimeNs now, Output* out);
  void on_drep(const Mad& m, TimeNs now, Output* out);
  void on_sidr_req(const Path& from, const Mad& m, Output* out, bool park, TimeNs now);
  // True when the request was parked (or was already).
  bool park(const Path& from, const Mad& m, std::uint32_t remote_id, TimeNs now);
  void on_sidr_rep(const Mad& m, Output* out);
  void sidr_reply(Conn& c, std::uint8_t status, const QpParams& local, const PrivateData& pd,
                  Output* out);

  struct Parked {
    Path from;
    Mad mad;
    std::uint32_t remote_id = 0;
    TimeNs deadline = 0;
  };
  std::vector<Parked> parked_;
  Listeners listeners_;
  std::unordered_map<ConnId, Conn> conns_;
  // (peer IPv4, peer's Communication ID) -> ours: recognises a duplicate REQ.
  std::map<std::pair<std::uint32_t, std::uint32_t>, ConnId> by_remote_;
  std::uint32_t next_id_;
  std::uint64_t tid_seq_ = 0;
  Counters ctr_{};
};

}  // namespace uroce::cm
