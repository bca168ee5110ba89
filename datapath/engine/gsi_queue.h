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
// queue that holds something: a push rings its GsiBell, which wakes that
// thread at once. Before, the thread woke every millisecond and drained
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

// The CM service's wake-up: a futex word that a push increments, and
// whether the service's thread naps on it (then, and only then, the push
// makes the system call that wakes it). The order (word, then napping;
// napping, then word) means a push during the thread's way into its nap
// either changes the word it naps on or sees it napping.
struct GsiBell {
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> napping{false};

  void ring() {
    word.fetch_add(1, std::memory_order_seq_cst);
    if (napping.load(std::memory_order_seq_cst)) NanoSleeper{}.wake(word);
  }
  // Naps up to `ns`, or less if ring() is called from now on.
  void nap(TimeNs ns) {
    const std::uint32_t seen = word.load(std::memory_order_seq_cst);
    napping.store(true, std::memory_order_seq_cst);
    if (word.load(std::memory_order_seq_cst) == seen) NanoSleeper{}.nap(ns, word, seen);
    napping.store(false, std::memory_order_seq_cst);
  }
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
    if (GsiBell* b = bell_.load(std::memory_order_acquire); b != nullptr) b->ring();
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
  // The bell each push rings from now on (nullptr: none); any thread. The
  // bell must outlive the queue or be replaced first.
  void set_bell(GsiBell* b) { bell_.store(b, std::memory_order_release); }

 private:
  std::vector<GsiMad> slots_;
  std::size_t head_ = 0;
  std::atomic<std::size_t> count_{0};
  std::atomic<GsiBell*> bell_{nullptr};
};

}  // namespace uroce::engine
