// Holding EAL's interrupt thread between two of its callbacks.
//
// DPDK's memif PMD (22.11; upstream's is the same) runs each port's
// control channel on EAL's interrupt thread: a peer's message or
// departure is handled there (memif_intr_handler, then memif_disconnect),
// and the handler reads the port's private data throughout. A port
// stopped or closed from another thread meanwhile has its data released
// under the handler: seen as a SIGSEGV on EAL's interrupt thread of an
// embedded program that exited while its memif peer exited too (the
// handler wrote the port's flags through a private-data pointer that the
// release had cleared; docs/follow-ups.md, session 49), and as a handler
// that went on using a device whose open was retried (issue 28). DPDK has
// no lock that orders the two: EAL's unregistration only defers the
// freeing of a callback that is running, not the port's release.
//
// An IntrThreadHold sets a 1 us alarm whose callback parks EAL's interrupt
// thread until the hold ends. Once it is parked, no other interrupt
// callback runs (EAL runs them one at a time on that thread), so what the
// holder does meanwhile falls between two handler calls: a handler that
// was running when the hold was asked for has returned. A callback
// unregistered while the thread is parked is removed at once, since its
// source is not active; the interrupt thread then skips its descriptor
// and rebuilds its wait list when it resumes.
//
// On the interrupt thread itself a hold is held at once (nothing else runs
// there). Elsewhere the wait for the park is bounded: an interrupt thread
// stuck in a callback (or an EAL without one) leaves the hold not held
// after `patience`, counted, and the holder goes on as it would without.
//
// The holder must not wait, while it holds, for anything that needs EAL's
// interrupt thread (an alarm's run, rte_intr_callback_unregister_sync,
// a memif handshake). Control path only; holds may be taken by several
// threads, one after another (each waits for the park in turn).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace uroce::port {

class IntrThreadHold {
 public:
  // Parks EAL's interrupt thread, waiting up to `patience` for it.
  explicit IntrThreadHold(std::chrono::milliseconds patience = std::chrono::seconds(5));
  // Lets the interrupt thread go on, and returns once the park alarm has
  // returned or has been cancelled before it ran.
  ~IntrThreadHold();
  IntrThreadHold(const IntrThreadHold&) = delete;
  IntrThreadHold& operator=(const IntrThreadHold&) = delete;

  // Whether no interrupt callback runs until the destructor.
  bool held() const { return held_; }

 private:
  // What the park alarm's callback and the holder share; the alarm's
  // argument, so the object must not move (it cannot).
  struct Park {
    std::atomic<bool> parked{false};
    std::atomic<bool> released{false};
    std::atomic<bool> returning{false};  // the parked callback is returning
  };
  // The park alarm's callback, on EAL's interrupt thread.
  static void park(void* arg);
  // Ends the park, or cancels the alarm that has not parked yet.
  void release();
  Park park_;
  bool armed_ = false;  // the park alarm was set
  bool held_ = false;
};

// Holds that were not held (the interrupt thread did not park in time, or
// the alarm could not be set), since the process started.
std::uint64_t intr_thread_holds_missed();

}  // namespace uroce::port
