// `uroce-ctl capture DEVICE [-w FILE] [-c N] [--snaplen N]`: the client
// side of the Capture request (datapath/ctl/protocol.h, docs/capture.md).
//
// It makes a connected AF_UNIX stream socket pair, sends one end with the
// request, and copies what the daemon writes into the other, a pcapng
// stream, unchanged to FILE (mode 0600: it holds payload) or to standard
// output, counting its packet blocks on the way (pcapng_blocks.h). The
// daemon ends the stream after N frames; Ctrl-C (SIGINT) or SIGTERM shuts
// the socket down for writing, which the daemon takes as "stop": it writes
// what it already took, its statistics block, and closes; a second signal
// ends the tool at once. At the end it prints
//   uroce-ctl: N frames captured, D dropped by uroced
// on standard error. Exit 0 then, 1 when the daemon refuses or cannot be
// reached or the stream breaks, 2 on a usage error (an unwritable output,
// standard output a terminal).
#pragma once

#include <cstdint>
#include <string>

namespace uroce::ctl_tool {

struct Options;

// Runs the capture `o` asks for; the process's exit status.
int run_capture(const Options& o);

// What uroce-ctl says when the daemon answers a Capture request for
// `device` with the errno `err`.
std::string capture_refusal(int err, const std::string& device);

}  // namespace uroce::ctl_tool
