// DPDK's EAL for the port tests that need it. A process starts EAL once,
// and gtest runs every suite of the binary in one process: the first test
// that needs it starts it (no hugepages, PCI or shared configuration, so
// the binary runs beside other DPDK processes), and a test environment
// cleans it up when all tests are done.
#pragma once

#include <csignal>
#include <string>

namespace uroce::port::test {

// "" once EAL runs (started now or before), else why it could not start.
std::string start_eal_once();

// Whether EAL's interrupt thread runs an alarm set now within 10 s: it
// still runs callbacks (no handler hangs on it, it did not die).
bool interrupt_thread_runs();

// SIGPIPE ignored while it lives, as uroced and the embedded engine's
// threads ignore or block it: the memif PMD's send to a peer that left
// raises it on EAL's interrupt thread.
class SigpipeIgnored {
 public:
  SigpipeIgnored() {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_);
  }
  ~SigpipeIgnored() { sigaction(SIGPIPE, &old_, nullptr); }
  SigpipeIgnored(const SigpipeIgnored&) = delete;
  SigpipeIgnored& operator=(const SigpipeIgnored&) = delete;

 private:
  struct sigaction old_ {};
};

}  // namespace uroce::port::test
