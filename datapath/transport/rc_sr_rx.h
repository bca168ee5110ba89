// The responder's window of an RC connection in selective-repeat mode
// (docs/lossy.md "Responder"): which PSNs after the expected PSN (ePSN) are
// held, the RC opcode each was, and the receive completions of held
// messages waiting for their turn. Fixed arrays, no allocation; one per SR
// connection, from the engine's pool (rc_sr.h).
//
// Invariants: every held PSN lies in [base, base + kSrWindow), where base is
// the responder's ePSN after sync(); a held PSN's slot is psn & (kSrWindow -
// 1), so the slots of the window are distinct; ePSN itself is never held
// (the responder drains it at once). A receive slot (recv()) belongs to the
// RSN it was filled for; the responder completes RSNs in order.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "datapath/transport/seq24.h"
#include "datapath/wire/sr_sack_eth.h"

namespace uroce::transport {

// PSNs held beyond ePSN: the SACK bitmap's width, and what the requester's
// cap keeps its packets in flight within.
inline constexpr std::uint32_t kSrWindow = 256;
static_assert(kSrWindow == wire::SrSackEthHdr::kBitmapBits);
static_assert(std::has_single_bit(kSrWindow));
// Messages consuming a receive WQE held beyond the one at the RQ head.
inline constexpr std::uint32_t kSrRecvHeld = 64;
static_assert(std::has_single_bit(kSrRecvHeld));
inline constexpr std::uint32_t kRsnMask = 0xFFFFFF;
// The longest message an SR packet may belong to (as RC's, 2^31 bytes).
inline constexpr std::uint64_t kSrMaxMessage = 1ull << 31;

// A held message's receive completion, filled by its last packet.
struct SrRecvDone {
  static constexpr std::uint8_t kFilled = 0x01;
  static constexpr std::uint8_t kImm = 0x02;
  static constexpr std::uint8_t kInv = 0x04;
  static constexpr std::uint8_t kSolicited = 0x08;
  static constexpr std::uint8_t kWriteImm = 0x10;  // else a SEND
  // The RSN (24 bits) and the flags share a word: 64 of these sit in every
  // connection's RcSr, which stays within 4 KiB.
  std::uint32_t rsn : 24 = 0;
  std::uint32_t flags : 8 = 0;
  std::uint32_t byte_len = 0;
  // The immediate data as it was on the wire (kImm) or the key to
  // invalidate (kInv).
  std::uint32_t imm_or_inv = 0;
};
static_assert(sizeof(SrRecvDone) == 12);

class SrRx {
 public:
  // Empty, expecting `epsn`.
  void reset(Psn epsn) {
    bits_ = {};
    held_ = 0;
    base_ = epsn;
    for (SrRecvDone& r : recv_) r.flags = 0;
    trigger_ = epsn;
    dup_ = false;
    ce_pending_ = false;
    rsn_head = 0;
  }
  // The responder's ePSN moved to `epsn` (in order, or by a READ's range):
  // what was held before it is dropped, so the window starts there.
  void sync(Psn epsn) {
    const std::uint32_t d = Psn::forward(base_, epsn);
    if (held_ != 0) {
      if (d >= kSrWindow) {
        bits_ = {};
        held_ = 0;
      } else {
        for (std::uint32_t i = 0; i < d; ++i) release(base_ + i);
      }
    }
    base_ = epsn;
  }

  bool any() const { return held_ != 0; }
  std::uint32_t held_count() const { return held_; }
  Psn base() const { return base_; }
  bool held(Psn p) const {
    const std::uint32_t s = slot(p);
    return (bits_[s / 64] >> (s % 64)) & 1;
  }
  // p in [base, base + kSrWindow), not held.
  void hold(Psn p, std::uint8_t rc_opcode) {
    const std::uint32_t s = slot(p);
    bits_[s / 64] |= std::uint64_t{1} << (s % 64);
    op_[s] = rc_opcode;
    ++held_;
  }
  void release(Psn p) {
    const std::uint32_t s = slot(p);
    const std::uint64_t m = std::uint64_t{1} << (s % 64);
    if ((bits_[s / 64] & m) == 0) return;
    bits_[s / 64] &= ~m;
    --held_;
  }
  // The RC opcode a held PSN was.
  std::uint8_t opcode(Psn p) const { return op_[slot(p)]; }

  SrRecvDone& recv(std::uint32_t rsn) { return recv_[rsn & (kSrRecvHeld - 1)]; }
  // The RSN of the message the receive WR at the RQ head is for: SR
  // messages that consumed one, counted from 0 (rc_sr.h), 24 bits.
  std::uint32_t rsn_head = 0;

  // The packet that made the next acknowledgement due, and whether it was
  // a duplicate (SACKETH's trigger PSN and DUP flag).
  void set_trigger(Psn p, bool dup) {
    trigger_ = p;
    dup_ = dup;
  }
  // A duplicate is reported, not yet answered: the next acknowledgement
  // is a SACK with DUP even when nothing is held.
  bool dup() const { return dup_; }
  // The SACK with DUP left: a duplicate is reported once.
  void dup_sent() { dup_ = false; }
  // Request packet p of a spraying connection arrived marked CE: the next
  // acknowledgement is a SACK with ECE naming it (the newest such packet
  // since the last one), so the requester steers off its path.
  void set_ce(Psn p) {
    ce_ = p;
    ce_pending_ = true;
  }
  bool ce() const { return ce_pending_; }
  void ce_sent() { ce_pending_ = false; }
  // The SACKETH of an acknowledgement whose BTH PSN is `ack_psn`: bit i =
  // PSN ack_psn + 1 + i is held, or lies before `epsn` (accepted in order).
  wire::SrSackEthHdr sack(Psn ack_psn, Psn epsn) const {
    wire::SrSackEthHdr h = wire::SrSackEthHdr::make(dup_ ? wire::SrSackEthHdr::kFlagDup : 0,
                                                    trigger_.value(), kSrWindow);
    // The CE-marked PSN arrived within a window of ePSN, far inside 16
    // bits of the acknowledged PSN (checked all the same).
    if (ce_pending_) {
      const std::int32_t d = Psn::diff(ce_, ack_psn);
      if (d >= INT16_MIN && d <= INT16_MAX) h.set_ce(static_cast<std::int16_t>(d));
    }
    const Psn first = ack_psn + 1;
    for (std::uint32_t i = 0; i < kSrWindow; ++i) {
      const Psn p = first + i;
      if (p.before(epsn) || (p.in_window(base_, kSrWindow) && held(p))) h.set_bit(i);
    }
    return h;
  }

 private:
  static std::uint32_t slot(Psn p) { return p.value() & (kSrWindow - 1); }

  std::array<std::uint64_t, kSrWindow / 64> bits_{};
  std::uint32_t held_ = 0;
  Psn base_{};
  Psn trigger_{};
  Psn ce_{};
  bool dup_ = false;
  bool ce_pending_ = false;
  std::array<std::uint8_t, kSrWindow> op_{};
  std::array<SrRecvDone, kSrRecvHeld> recv_{};
};

}  // namespace uroce::transport
