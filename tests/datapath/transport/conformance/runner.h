// Runs one conformance script (README.md in this folder) against one QP
// under test: builds the QP and its memory regions, injects the peer's
// packets with the wire builder, drives the QP on a virtual clock (timers
// fire at their deadlines, the QP is pumped after every event) and checks
// each expectation in order. The first mismatch stops the run and is
// reported with its script line, what was expected and what happened.
//
// Every packet the QP emits and every completion it posts must be claimed
// by a `send` / `wc` line: anything left over at a `quiet` line or at the
// end of the script is a failure.
#pragma once

#include <string>
#include <string_view>

namespace uroce::transport::conformance {

struct RunResult {
  bool ok = true;
  int line = 0;  // script line of the failure (0: end of script)
  std::string message;
  // "ok", or "line N: message" / "end of script: message".
  std::string describe() const;
};

RunResult run_script(std::string_view text);

}  // namespace uroce::transport::conformance
