// A daemon-mode application thread that polls an empty CQ: only the daemon
// can fill it, so while another thread wants this CPU, hand the CPU over
// rather than spin out the time slice (base/yield_policy.h: every empty
// poll while contended, one probing yield per 50 us of idleness
// otherwise). Two programs that spin on their CQs on one core (a host with
// fewer cores than programs, or the bench's one-daemon layout) then take
// turns at each empty poll instead of at the end of a slice. On the
// engine's own CPU the context yields on every empty poll instead
// (context.h); embedded mode never comes here (its polls drive the engine).
//
// Per thread: whether the CPU is shared is the calling thread's question.
// Cost alone on a CPU: a clock read per empty poll past the first 16 in a
// row, and a yield and a getrusage (about 0.5 us each here) per 50 us of
// idleness.
#pragma once

namespace uroce::provider {

// A poll that found completions: the next idle run spins first again.
void poll_found() noexcept;
// A poll that found none: yields the CPU if the policy says so.
void poll_empty() noexcept;

}  // namespace uroce::provider
