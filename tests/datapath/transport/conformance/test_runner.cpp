#include "tests/datapath/transport/conformance/runner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace uroce::transport::conformance {
namespace {

std::string load(const std::string& name) {
  std::ifstream in(std::string(UROCE_CONFORMANCE_DIR) + "/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A script with one line changed: the first line starting with `line_start`
// gets `from` replaced by `to`. *line_no receives that line's number.
std::string perturb(const std::string& text, const std::string& line_start, const std::string& from,
                    const std::string& to, int* line_no) {
  std::istringstream in(text);
  std::ostringstream out;
  std::string l;
  int no = 0;
  *line_no = 0;
  while (std::getline(in, l)) {
    ++no;
    if (*line_no == 0 && l.rfind(line_start, 0) == 0) {
      const std::size_t p = l.find(from);
      if (p != std::string::npos) {
        l.replace(p, from.size(), to);
        *line_no = no;
      }
    }
    out << l << "\n";
  }
  return out.str();
}

struct Perturbation {
  const char* file;
  const char* line_start;
  const char* from;
  const char* to;
  const char* message_part;  // in the failure message
  int line_delta;            // failing line relative to the changed one
};

// Every kind of expectation must be able to fail: each real script, with
// one value changed, must fail at the changed line (or where the change
// shows) with a message naming the difference.
TEST(RunScript, PerturbedScriptsFail) {
  const Perturbation cases[] = {
      // Exact timing of a retransmission: one nanosecond late or early.
      {"rc_req_retransmit_timeout.conf", "at 4.194304ms send", "4.194304ms", "4.194305ms",
       "sent at 4194304ns, expected at 4194305ns", 0},
      {"rc_req_retransmit_timeout.conf", "at 4.194303ms quiet", "4.194303ms", "4.194304ms",
       "unexpected packet rc_send_only psn=0x64", 0},
      // RNR wait: the retry is not sent before the encoded time.
      {"rc_req_rnr_nak_retry.conf", "at 643us send", "643us", "644us",
       "sent at 643us, expected at 644us", 0},
      {"rc_req_rnr_nak_retry.conf", "at 642.999us quiet", "642.999us", "643us",
       "unexpected packet rc_send_only psn=0xfffffe", 0},
      {"rc_req_rnr_nak_retry.conf", "at 643us send", "psn=0xfffffe", "psn=0xffffff",
       "packet field psn: expected 0xffffff", 0},
      // Go-back-N restarts at the NAKed PSN, not earlier.
      {"rc_req_nak_seq_go_back_n.conf", "send rc_send_middle psn=102 len=1024 seed=2048", "psn=102",
       "psn=101", "packet field psn", 0},
      // Payload bytes are checked.
      {"rc_req_nak_seq_go_back_n.conf", "send rc_send_middle psn=102 len=1024 seed=2048",
       "seed=2048", "seed=2047", "payload byte 0", 0},
      // Opcode.
      {"rc_req_psn_wrap.conf", "send rc_write_middle psn=0xffffff", "rc_write_middle",
       "rc_write_last", "packet field opcode", 0},
      // Completion status and byte_len.
      {"rc_req_retry_exc_err.conf", "at 12.582912ms wc sq wr=1", "retry_exc_err",
       "rnr_retry_exc_err", "completion field status", 0},
      {"rc_req_ack_coalescing.conf", "wc sq wr=1 status=success", "byte_len=3000", "byte_len=3001",
       "completion field byte_len", 0},
      // Completion order.
      {"rc_req_ack_coalescing.conf", "wc sq wr=2", "wr=2", "wr=3", "completion field wr", 0},
      // AETH contents.
      {"rc_resp_out_of_order_nak.conf", "send rc_ack nak=seq psn=500", "nak=seq", "nak=inv",
       "packet field aeth", 0},
      {"rc_resp_rnr_nak.conf", "send rc_ack nak=rnr timer=14", "timer=14", "timer=13",
       "packet field aeth", 0},
      {"rc_resp_send_in_order.conf", "send rc_ack ack psn=501 msn=1", "msn=1", "msn=2",
       "packet field msn", 0},
      // Replay cache value and memory.
      {"rc_resp_duplicate_atomic.conf", "send rc_atomic_ack psn=500 ack msn=1 orig=100", "orig=100",
       "orig=105", "packet field orig", 0},
      {"rc_resp_duplicate_atomic.conf", "expect_mem tgt off=8 u64=105", "u64=105", "u64=110",
       "memory tgt+8", 0},
      // A new PSN instead of the duplicate is acknowledged as new.
      {"rc_resp_duplicate_send.conf", "at 70ms recv rc_send_only psn=500", "psn=500", "psn=501",
       "packet field psn: expected 0x1f4", 1},
      // QP state and counters.
      {"rc_resp_middle_without_first.conf", "state err", "err", "rts",
       "QP state: expected rts, got err", 0},
      {"rc_req_rnr_retry_forever.conf", "counter rx_rnr_naks=5", "rx_rnr_naks=5", "rx_rnr_naks=4",
       "counter rx_rnr_naks: expected 4, got 5", 0},
      // UD: the right Q_Key is delivered, so the quiet line catches it.
      {"ud_qkey_mismatch.conf", "at 1us recv ud_send_only psn=0", "qkey=0x22222222",
       "qkey=0x11111111", "unexpected completion", 1},
      {"ud_grh_in_receive_buffer.conf", "wc rq wr=3", "flags=grh,with_imm", "flags=with_imm",
       "completion field flags", 0},
      // UC: a gap-free message completes, which the quiet line catches.
      {"uc_lost_middle_packet.conf", "at 2us recv uc_send_last", "psn=502", "psn=501",
       "unexpected completion", 1},
      {"rc_resp_duplicate_read.conf", "at 80ms recv rc_read_request psn=501", "dmalen=1024",
       "dmalen=1000", "packet field len", 1},
      // The Homa-like scheduler's lines: MLEN fields, DSCP, the grant
      // timeout's exact time, a grant offset one byte on, its counters.
      {"rc_homa_mlen_before_first_packet.conf", "send homa_mlen psn=100", "length=5000",
       "length=5001", "packet field length: expected 5001", 0},
      {"rc_homa_mlen_before_first_packet.conf", "send homa_mlen psn=100", "unsched=2048",
       "unsched=1024", "packet field unsched: expected 1024", 0},
      {"rc_homa_grant_releases_packets.conf", "send rc_write_middle psn=102", "dscp=16", "dscp=24",
       "packet field dscp: expected 24", 0},
      {"rc_homa_grant_releases_packets.conf", "at 30us recv homa_grant", "offset=4096",
       "offset=4097", "unexpected packet rc_rdma_write_middle psn=0x68", 2},
      {"rc_homa_grant_timeout_fallback.conf", "at 4.1ms send homa_mlen", "4.1ms", "4.100001ms",
       "sent at 4100us, expected at 4100001ns", 0},
      {"rc_homa_grant_timeout_fallback.conf", "at 4.099999ms quiet", "4.099999ms", "4.1ms",
       "unexpected packet homa_mlen psn=0x64", 0},
      // Selective repeat: the PSNs a SACK holds, its DUP flag, the loss
      // signal's exact deadline, a probe's counter.
      {"sr_resp_reorder_sack.conf", "send sr_sack ack psn=499 msn=0", "sack=502", "sack=503",
       "packet field sack: expected 0x1f7 (held: 0x1f6)", 0},
      {"sr_resp_reorder_sack.conf", "send sr_sack ack psn=499 trigger=503 sack=502,503 dup", "dup",
       "nodup", "packet field dup: expected clear", 0},
      {"sr_req_sack_resends_the_hole.conf", "at 24.999us quiet", "24.999us", "25us",
       "unexpected packet sr_rdma_write_middle psn=0x65", 0},
      {"sr_req_tail_loss_probe.conf", "counter sr_tx_probes=2", "sr_tx_probes=2", "sr_tx_probes=1",
       "counter sr_tx_probes: expected 1, got 2", 0},
      {"rc_homa_stale_grants.conf", "counter homa_grants=0", "homa_grant_stale=4",
       "homa_grant_stale=3", "counter homa_grant_stale: expected 3, got 4", 0},
      // The priority floor: a capped packet, the full priority after the
      // QP was idle, the count of capped packets.
      {"rc_homa_priority_floor.conf", "send rc_send_only psn=105", "dscp=8", "dscp=56",
       "packet field dscp: expected 56", 0},
      {"rc_homa_priority_floor.conf", "send rc_send_first psn=106", "dscp=56", "dscp=8",
       "packet field dscp: expected 8", 0},
      {"rc_homa_priority_floor.conf", "counter homa_prio_capped=1", "homa_prio_capped=1",
       "homa_prio_capped=0", "counter homa_prio_capped: expected 0, got 1", 0},
      // DC (docs/dc.md): the DCETH's SYN, conn and first PSN, the DCAETH's
      // status and value, a stream's state, the DCT's async event, and a
      // recv whose conn moves it onto the current connection.
      {"dc_dci_rnr_retry.conf", "at 643us send dc_send_only", "nosyn", "syn",
       "packet field syn: expected set", 0},
      {"dc_dci_switch_target.conf", "send dc_write_only psn=1", "conn=5", "conn=6",
       "packet field conn: expected 0x6", 0},
      {"dc_dci_switch_target.conf", "send dc_write_only psn=1", "first_psn=1", "first_psn=0",
       "packet field first_psn: expected 0x0", 0},
      {"dc_dct_busy_when_full.conf", "send dc_ack psn=0x50 lane=1 status=busy", "status=busy",
       "status=unknown", "packet field status: expected unknown", 0},
      {"dc_dct_stale_request_after_disconnect_ignored.conf",
       "send dc_ack psn=0 lane=0 status=unknown conn=5", "value=9", "value=5",
       "packet field value: expected 0x5", 0},
      {"dc_dci_key_violation_streams.conf", "state rts stream=0", "next_psn=2", "next_psn=0",
       "stream 0 next_psn: expected 0x0, got 0x2", 0},
      {"dc_dct_key_violation.conf", "event qp_access_err", "qp_access_err", "qp_req_err",
       "event: expected qp_req_err, got qp_access_err", 0},
      {"dc_dci_other_connection_answer_ignored.conf", "at 1us recv dc_ack", "conn=2", "conn=1",
       "unexpected completion wc sq wr=1 status=success", 3},
  };
  for (const Perturbation& c : cases) {
    const std::string text = load(c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    ASSERT_TRUE(run_script(text).ok) << c.file << ": " << run_script(text).describe();
    int line = 0;
    const std::string bad = perturb(text, c.line_start, c.from, c.to, &line);
    ASSERT_NE(line, 0) << c.file << ": no line starts with '" << c.line_start << "'";
    const RunResult r = run_script(bad);
    EXPECT_FALSE(r.ok) << c.file << " line " << line;
    EXPECT_EQ(r.line, line + c.line_delta) << c.file << ": " << r.describe();
    EXPECT_NE(r.message.find(c.message_part), std::string::npos) << c.file << ": " << r.describe();
  }
}

// Deleting an expectation leaves its packet or completion unclaimed.
TEST(RunScript, UnclaimedOutputFailsAtTheEnd) {
  const RunResult r = run_script(
      "qp rc sq_psn=5\n"
      "mr buf len=64 access=lw\n"
      "at 0 post_send wr=1 op=send mr=buf len=8 signaled\n");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.line, 0);
  EXPECT_NE(r.message.find("unexpected packet rc_send_only psn=0x5"), std::string::npos)
      << r.describe();
  EXPECT_EQ(r.describe().rfind("end of script: ", 0), 0u);
}

TEST(RunScript, ByAcceptsEarlierEmission) {
  const char* base =
      "qp rc sq_psn=5 timeout=10\n"
      "mr buf len=64 access=lw\n"
      "at 0 post_send wr=1 op=send mr=buf len=8 signaled\n"
      "send rc_send_only psn=5\n"
      "%s send rc_send_only psn=5\n";
  char text[512];
  std::snprintf(text, sizeof text, base, "by 5ms");
  EXPECT_TRUE(run_script(text).ok) << run_script(text).describe();
  std::snprintf(text, sizeof text, base, "by 4ms");
  const RunResult r = run_script(text);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.line, 5);
  EXPECT_NE(r.message.find("sent nothing"), std::string::npos) << r.describe();
}

// Without `homa` the QP is plain RC: an extension packet reaches the
// transport, which drops it as an engine with the scheduler off lets it.
// A QP brought back from RESET takes the qp line's attributes again.
TEST(RunScript, HomaOffAndReconnect) {
  const std::string reconnect =
      std::string("qp rc sq_psn=5\nmodify state=reset\nmodify state=init\n") +
      "modify state=rtr\nmodify state=rts sq_psn=9\nstate rts next_psn=9\n";
  const std::string ok[] = {
      "qp rc\nrecv homa_grant psn=0 offset=5000\ncounter drop_not_rc=1\n",
      reconnect,
      "qp rc homa\nrecv homa_grant psn=0 offset=5000\ncounter drop_not_rc=0 homa_grant_stale=1\n",
  };
  for (const std::string& t : ok) {
    EXPECT_TRUE(run_script(t).ok) << t << " -> " << run_script(t).describe();
  }
}

// DC packets (docs/dc.md) reach no RC, UC or UD QP's receive path: each
// drops them as not its transport.
TEST(RunScript, DcPacketsDroppedByEveryQpType) {
  const std::string ok[] = {
      "qp rc\nrecv dc_send_only psn=0 len=4\nrecv dc_acknowledge psn=0 ack\n"
      "counter drop_not_rc=2 rx_requests=0 rx_acks=0\n",
      "qp uc\nrecv dc_send_only psn=0 len=4\ncounter rx_drop_opcode=1 rx_completed=0\n",
      "qp ud qkey=0x11111111\nrecv dc_send_only psn=0 len=4\nrecv dc_disconnect psn=0\n"
      "counter rx_drop_opcode=2 rx_delivered=0\n",
  };
  for (const std::string& t : ok) {
    EXPECT_TRUE(run_script(t).ok) << t << " -> " << run_script(t).describe();
  }
}

struct BadScript {
  const char* text;
  int line;
  const char* message_part;
};

TEST(RunScript, BadValuesNameTheLine) {
  const BadScript cases[] = {
      {"qp rc\nat 1us recv rc_send_bogus psn=1\n", 2, "unknown opcode 'rc_send_bogus'"},
      {"qp rc\nat 1us recv rc_send_only psn=zz\n", 2, "bad number psn=zz"},
      {"qp rc\nat 2us quiet\nat 1us quiet\n", 3, "time goes backwards"},
      {"at 1us quiet\n", 1, "declare its qp first"},
      {"qp xx\n", 1, "unknown QP type 'xx'"},
      {"qp ud timeout=3\n", 1, "does not apply to a ud QP"},
      {"qp rc mtu=1000\n", 1, "mtu= takes"},
      {"qp rc\nrecv rc_send_only psn=1 dmalen=5\n", 2, "needs RETH"},
      {"qp rc\nrecv rc_ack psn=1 len=5\n", 2, "carries no payload"},
      {"qp rc\nrecv rc_ack psn=1 nak=rnr\n", 2, "nak=rnr needs timer="},
      {"qp rc\nrecv rc_ack psn=1 nak=maybe\n", 2, "bad nak=maybe"},
      {"qp rc\npost_send wr=1 op=send mr=nothere len=4\n", 2, "no memory region named"},
      {"qp rc\nmr a len=64\nmr a len=64\n", 3, "defined twice"},
      {"qp rc\nwc sq wr=1\n", 2, "there is none"},
      {"qp rc\nstate rts epsn=7\n", 2, "epsn: expected 0x7, got 0x0"},
      {"qp rc\ncounter no_such=1\n", 2, "unknown counter 'no_such'"},
      {"qp rc\npost_send wr=1 op=read len=0 expect=einval\n", 2,
       "post_send returned ok, expected einval"},
      {"qp rc\nmodify state=init\n", 2, "modify returned einval, expected ok"},
      {"qp rc\nmodify state=sqd sq_psn=5\n", 2, "sq_psn= and rq_psn= go with"},
      {"qp uc homa\n", 1, "homa applies to an rc QP only"},
      {"qp rc unsched=10\n", 1, "unsched= goes with the word homa"},
      {"qp rc homa unsched=0\n", 1, "unsched= takes 1"},
      {"qp rc homa grant_timeout=0\n", 1, "bad grant_timeout=0"},
      {"qp rc homa dscp_map=1,2\n", 1, "dscp_map= takes 8 DSCPs"},
      {"qp rc homa\nrecv homa_grant psn=1 offset=9 len=4\n", 2, "carries its own header"},
      {"qp rc homa\nsend homa_mlen psn=1 offset=4\n", 2, "offset= belongs to homa_grant"},
      {"qp rc homa\nrecv homa_cutoffs psn=0 cutoffs=100,50,any\n", 2, "cutoffs the engine"},
      {"qp rc homa\nrecv homa_mlen psn=0 length=5\n", 2, "does not play the receiver"},
      {"qp rc\ncounter homa_gated=0\n", 2, "unknown counter 'homa_gated'"},
  };
  for (const BadScript& c : cases) {
    const RunResult r = run_script(c.text);
    EXPECT_FALSE(r.ok) << c.text;
    EXPECT_EQ(r.line, c.line) << c.text << " -> " << r.describe();
    EXPECT_NE(r.message.find(c.message_part), std::string::npos)
        << c.text << " -> " << r.describe();
  }
}

}  // namespace
}  // namespace uroce::transport::conformance
