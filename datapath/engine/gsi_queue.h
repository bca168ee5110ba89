// The GSI (QP1) MADs a Vnic received and the daemon's CM service has not
// taken yet. RoCEv2 CM runs over QP1 (IBTA 13.5.1: UD, Q_Key 0x80010000),
// which is no application's QP: the engine checks the datagram and parks
// the MAD here, with who sent it; the CM service drains the queue between
// two iterations (Engine::call) and answers through Vnic::gsi_send.
//
// A FIFO of fixed slots allocated at construction: a push copies 256 bytes
// and never allocates; a full queue refuses (the caller counts the drop,
// which the CM's retransmissions recover from). Push and drain on the
// engine lcore only; pending() from any thread.
//
// The CM service's thread naps until its next timer and drains only a
// queue that holds something: a push wakes its WakeWord, which ends that
// thread's nap at once. Before, the thread woke every millisecond and drained
// every device through Engine::call; in embedded mode it is a thread of
// the application's process, on the application's CPU, so each wake-up
// and each call's hand-back preempted a spinning application (UCX opens
// an rdma_cm file, which kept the service at its 1 ms period for the whole
// run: docs/tails.md, "The CM service's tick").
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "datapath/engine/nano_sleeper.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/mad.h"

namespace uroce::engine {

struct GsiMad {
  wire::Ipv4Addr peer_ip{};
  wire::MacAddr peer_mac{};
  std::uint32_t src_qp = 0;
  std::array<std::uint8_t, wire::kMadBytes> mad{};
};

class GsiQueue {
 public:
  explicit GsiQueue(std::uint32_t slots) : slots_(slots == 0 ? 1 : slots) {}

  bool push(const wire::Ipv4Addr& ip, const wire::MacAddr& mac, std::uint32_t src_qp,
            std::span<const std::uint8_t, wire::kMadBytes> mad) {
    const std::size_t n = count_.load(std::memory_order_relaxed);
    if (n == slots_.size()) return false;
    GsiMad& s = slots_[(head_ + n) % slots_.size()];
    s.peer_ip = ip;
    s.peer_mac = mac;
    s.src_qp = src_qp;
    std::copy(mad.begin(), mad.end(), s.mad.begin());
    count_.store(n + 1, std::memory_order_release);
    if (WakeWord* b = bell_.load(std::memory_order_acquire); b != nullptr) b->wake();
    return true;
  }
  // Moves every queued MAD to the end of `out` (control path: may allocate).
  std::size_t drain(std::vector<GsiMad>* out) {
    const std::size_t n = count_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
      out->push_back(slots_[head_]);
      head_ = (head_ + 1) % slots_.size();
    }
    count_.store(0, std::memory_order_release);
    return n;
  }
  std::size_t size() const { return count_.load(std::memory_order_relaxed); }
  // Any thread: whether a MAD waits (a hint: one may arrive right after).
  bool pending() const { return count_.load(std::memory_order_acquire) != 0; }
  // The word each push wakes from now on (nullptr: none); any thread. It
  // must outlive the queue or be replaced first.
  void set_bell(WakeWord* b) { bell_.store(b, std::memory_order_release); }

 private:
  std::vector<GsiMad> slots_;
  std::size_t head_ = 0;
  std::atomic<std::size_t> count_{0};
  std::atomic<WakeWord*> bell_{nullptr};
};

}  // namespace uroce::engine
