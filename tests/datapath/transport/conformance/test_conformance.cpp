// Runs every *.conf script in this folder (UROCE_CONFORMANCE_DIR) as one
// parameterised test; a failing script reports its line, what it expected
// and what the QP did.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/datapath/transport/conformance/runner.h"

namespace uroce::transport::conformance {
namespace {

std::vector<std::string> script_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(UROCE_CONFORMANCE_DIR)) {
    if (e.is_regular_file() && e.path().extension() == ".conf") {
      out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& name) {
  std::ifstream in(std::string(UROCE_CONFORMANCE_DIR) + "/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Script : public ::testing::TestWithParam<std::string> {};

TEST_P(Script, Passes) {
  const std::string text = read_file(GetParam());
  ASSERT_FALSE(text.empty()) << GetParam();
  const RunResult r = run_script(text);
  EXPECT_TRUE(r.ok) << GetParam() << ": " << r.describe();
}

INSTANTIATE_TEST_SUITE_P(Conformance, Script, ::testing::ValuesIn(script_files()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(0, i.param.size() - 5);
                           std::replace_if(
                               n.begin(), n.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return n;
                         });

// The cases the issue names are present (a missing file would otherwise
// just shrink the parameter list).
TEST(Script_Files, AllNamedCasesPresent) {
  const std::vector<std::string> have = script_files();
  const char* required[] = {
      "rc_req_ack_coalescing.conf",
      "rc_req_retransmit_timeout.conf",
      "rc_req_retry_exc_err.conf",
      "rc_req_nak_seq_go_back_n.conf",
      "rc_req_rnr_nak_retry.conf",
      "rc_req_rnr_retry_exc_err.conf",
      "rc_req_rnr_retry_forever.conf",
      "rc_req_rem_access_err.conf",
      "rc_req_read_lost_middle_response.conf",
      "rc_req_psn_wrap.conf",
      "rc_resp_send_in_order.conf",
      "rc_resp_duplicate_send.conf",
      "rc_resp_duplicate_read.conf",
      "rc_resp_duplicate_atomic.conf",
      "rc_resp_out_of_order_nak.conf",
      "rc_resp_rnr_nak.conf",
      "rc_resp_write_bad_rkey.conf",
      "rc_resp_write_out_of_bounds.conf",
      "rc_resp_read_missing_access.conf",
      "rc_resp_middle_without_first.conf",
      "ud_qkey_mismatch.conf",
      "ud_grh_in_receive_buffer.conf",
      "uc_lost_middle_packet.conf",
      // Issue 15, must-show 3: the grant exchange (docs/homa.md).
      "rc_homa_mlen_before_first_packet.conf",
      "rc_homa_grant_releases_packets.conf",
      "rc_homa_stale_grants.conf",
      "rc_homa_within_unsched.conf",
      "rc_homa_nak_go_back_n.conf",
      "rc_homa_timeout_retransmit.conf",
      "rc_homa_grant_timeout_fallback.conf",
      "rc_homa_resend_restarts_timeouts.conf",
      "rc_homa_write_then_send.conf",
      "rc_homa_read_never_gated.conf",
      "rc_homa_reset_forgets.conf",
      // Issue 16, must-show 3: the DC transport (docs/dc.md).
      "dc_dct_key_violation.conf",
      "dc_dci_key_violation_no_streams.conf",
      "dc_dci_key_violation_streams.conf",
      "dc_dci_rnr_retry.conf",
      "dc_dci_rnr_retry_exceeded.conf",
      "dc_dci_retry_exceeded.conf",
      "dc_dci_stream_error_recovery.conf",
      "dc_dci_switch_target.conf",
      "dc_dct_syn_opens_context.conf",
      "dc_dct_stale_request_after_disconnect_ignored.conf",
      "dc_dct_busy_when_full.conf",
      "dc_dci_busy_restores_retry.conf",
      "dc_dci_other_connection_answer_ignored.conf",
      "dc_dci_gone_mid_wr_resends_the_whole_wr.conf",
  };
  for (const char* r : required) {
    EXPECT_NE(std::find(have.begin(), have.end(), r), have.end()) << r;
  }
}

}  // namespace
}  // namespace uroce::transport::conformance
