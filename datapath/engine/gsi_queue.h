// The GSI (QP1) MADs a Vnic received and the daemon's CM service has not
// taken yet. RoCEv2 CM runs over QP1 (IBTA 13.5.1: UD, Q_Key 0x80010000),
// which is no application's QP: the engine checks the datagram and parks
// the MAD here, with who sent it; the CM service drains the queue between
// two iterations (Engine::call) and answers through Vnic::gsi_send.
//
// A FIFO of fixed slots allocated at construction: a push copies 256 bytes
// and never allocates; a full queue refuses (the caller counts the drop,
// which the CM's retransmissions recover from). Engine lcore only.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

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
    if (count_ == slots_.size()) return false;
    GsiMad& s = slots_[(head_ + count_) % slots_.size()];
    s.peer_ip = ip;
    s.peer_mac = mac;
    s.src_qp = src_qp;
    std::copy(mad.begin(), mad.end(), s.mad.begin());
    ++count_;
    return true;
  }
  // Moves every queued MAD to the end of `out` (control path: may allocate).
  std::size_t drain(std::vector<GsiMad>* out) {
    const std::size_t n = count_;
    for (; count_ > 0; --count_) {
      out->push_back(slots_[head_]);
      head_ = (head_ + 1) % slots_.size();
    }
    return n;
  }
  std::size_t size() const { return count_; }

 private:
  std::vector<GsiMad> slots_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace uroce::engine
