// One descriptor held back for the moment the process has none left: the
// accept thread gives it up for one accept at the descriptor limit, so a
// queued connection can still be taken off the listen queue (and refused,
// or root's status answered) instead of waking poll for ever.
//
// Any thread of the process may take the slot the reserve gives up before
// take() runs (a worker opening a file for a moment is enough): take() then
// fails and held() is false. The owner calls take() again before it lets
// any other use of a descriptor through (server.cpp: before each accept
// into a session), so the reserve comes back at the first free slot instead
// of being lost for the daemon's life (which left a daemon at its limit
// unable to drain its queue: CI's verbs_accept_flood timeout).
//
// Not thread-safe: one owner thread.
#pragma once

namespace uroce::daemon {

class ReserveFd {
 public:
  ReserveFd() = default;
  ~ReserveFd() { give(); }
  ReserveFd(const ReserveFd&) = delete;
  ReserveFd& operator=(const ReserveFd&) = delete;

  // Holds the reserve (opens /dev/null) unless held already; true when held.
  bool take();
  // Frees its slot (closes it) if held.
  void give();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace uroce::daemon
