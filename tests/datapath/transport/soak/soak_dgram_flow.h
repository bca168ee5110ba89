// Soak test support (not a source mirror): UD and UC traffic in the soak.
// Neither transport retransmits, so the checks are: every send WR completes
// once, in order, successfully; whatever arrives is intact (pattern, length,
// immediate, source QP); nothing arrives more often than link duplication
// explains; and on a clean link everything arrives exactly once, in order.
// Receive WRs are posted up front, one buffer slot each, and complete in
// posting order, so the k-th receive completion names slot k.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "datapath/base/rng.h"
#include "tests/datapath/transport/soak/soak_memory.h"
#include "tests/datapath/transport/soak/soak_world.h"

namespace uroce::transport::soak {

struct DgramMix {
  std::uint32_t msgs = 300;
  std::uint32_t max_outstanding = 32;
};

// What arrived, per message, and the checks common to UD and UC.
class Arrivals {
 public:
  explicit Arrivals(std::uint32_t n) : count_(n, 0) {}
  void add(std::uint32_t seq) {
    ++count_[seq];
    if (seq < last_ && total_ != 0) ++out_of_order_;
    last_ = seq;
    ++total_;
  }
  std::uint64_t total() const { return total_; }
  std::uint64_t out_of_order() const { return out_of_order_; }
  // Extra arrivals of messages that arrived more than once.
  std::uint64_t repeats() const {
    std::uint64_t n = 0;
    for (std::uint32_t c : count_) n += c > 1 ? c - 1 : 0;
    return n;
  }
  std::uint64_t missing() const {
    std::uint64_t n = 0;
    for (std::uint32_t c : count_) n += c == 0 ? 1 : 0;
    return n;
  }

 private:
  std::vector<std::uint32_t> count_;
  std::uint32_t last_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t out_of_order_ = 0;
};

class UdFlow {
 public:
  static constexpr std::uint32_t kMsgMax = 1024;  // the QPs' port MTU
  static constexpr std::uint32_t kSlots = 64;
  static constexpr std::uint32_t kSlot = kUdGrhSize + kMsgMax;
  static constexpr std::uint32_t kQkey = 0x11111111;

  UdFlow(std::uint32_t id, Host& hx, UdEnd& x, Host& hy, UdEnd& y, std::uint32_t recvs,
         std::uint64_t seed, const DgramMix& mix)
      : id_(id), hy_(hy), x_(x), y_(y), rng_(seed), mix_(mix), got_(mix.msgs) {
    const std::uint64_t base = 0x900000000ull + std::uint64_t{id} * 0x1000000;
    src_ = std::make_unique<Region>(hx.mrs, Host::kPd, base, kSlots * kMsgMax, access::kLocalWrite);
    rbuf_ = std::make_unique<Region>(hy.mrs, Host::kPd, base + 0x800000,
                                     std::uint64_t{recvs} * kSlot, access::kLocalWrite);
    for (std::uint32_t k = 0; k < recvs; ++k) {
      RecvWr r;
      r.wr_id = k;
      r.num_sge = 1;
      r.sge[0] = {rbuf_->va + std::uint64_t{k} * kSlot, kSlot, rbuf_->key};
      if (y.qp->post_recv(r) != 0) err_ = "UD post_recv";
    }
  }

  bool post() {
    bool moved = false;
    for (int i = 0; i < 2 && posted_ < mix_.msgs; ++i) {
      if (posted_ - completed_ >= mix_.max_outstanding) break;
      const std::uint32_t seq = posted_;
      const std::uint32_t len = 8 + static_cast<std::uint32_t>(rng_.below(kMsgMax - 7));
      lens_.push_back(len);
      std::uint8_t* p = src_->at(std::uint64_t{seq % kSlots} * kMsgMax);
      std::memcpy(p, &seq, 4);
      std::memcpy(p + 4, &len, 4);
      fill_pattern({p + 8, len - 8}, tag(seq), 8);
      SendWr w;
      w.wr_id = seq;
      w.opcode = rng_.chance(0.3) ? WrOpcode::kSendImm : WrOpcode::kSend;
      w.imm_or_inv = seq;
      w.flags = send_flag::kSignaled;
      w.num_sge = 1;
      w.sge[0] = {src_->va + std::uint64_t{seq % kSlots} * kMsgMax, len, src_->key};
      w.ud = {hy_.mac, hy_.ip, y_.qp->qpn(), kQkey, 0, 64};
      if (x_.qp->post_send(w) != 0) return fail("UD post_send");
      ++posted_;
      moved = true;
    }
    return moved;
  }

  bool drain() {
    for (const Cqe& c : x_.scq.wc) {
      if (c.wr_id != completed_ || static_cast<WcStatus>(c.status) != WcStatus::kSuccess ||
          static_cast<WcOpcode>(c.opcode) != WcOpcode::kSend) {
        return fail("UD send CQE " + std::to_string(c.wr_id) + " status " +
                    std::to_string(c.status));
      }
      ++completed_;
    }
    x_.scq.wc.clear();
    for (const Cqe& c : y_.rcq.wc) {
      if (c.wr_id != received_ || static_cast<WcStatus>(c.status) != WcStatus::kSuccess) {
        return fail("UD receive CQE " + std::to_string(c.wr_id) + " status " +
                    std::to_string(c.status));
      }
      const std::uint8_t* p = rbuf_->at(c.wr_id * kSlot + kUdGrhSize);
      std::uint32_t seq = 0;
      std::uint32_t len = 0;
      std::memcpy(&seq, p, 4);
      std::memcpy(&len, p + 4, 4);
      if (seq >= posted_ || len != lens_[seq] || c.byte_len != kUdGrhSize + len) {
        return fail("UD datagram header/length");
      }
      if (check_pattern({p + 8, len - 8}, tag(seq), 8) >= 0) return fail("UD payload");
      if ((c.wc_flags & wc_flag::kGrh) == 0 || c.src_qp != x_.qp->qpn()) {
        return fail("UD GRH flag / src_qp");
      }
      if ((c.wc_flags & wc_flag::kWithImm) != 0 && c.ex.imm_data != seq) {
        return fail("UD immediate");
      }
      got_.add(seq);
      ++received_;
    }
    y_.rcq.wc.clear();
    return true;
  }

  bool finished() const { return posted_ == mix_.msgs && completed_ == posted_; }
  const Arrivals& arrivals() const { return got_; }
  const std::string& error() const { return err_; }

 private:
  std::uint64_t tag(std::uint32_t seq) const {
    return 0x0d000000000ull + (std::uint64_t{id_} << 24) + seq;
  }
  bool fail(const std::string& what) {
    err_ = "UD flow " + std::to_string(id_) + ": " + what;
    return false;
  }

  std::uint32_t id_;
  Host& hy_;
  UdEnd& x_;
  UdEnd& y_;
  SeededRng rng_;
  DgramMix mix_;
  std::unique_ptr<Region> src_, rbuf_;
  std::vector<std::uint32_t> lens_;
  std::uint32_t posted_ = 0;
  std::uint32_t completed_ = 0;
  std::uint32_t received_ = 0;
  Arrivals got_;
  std::string err_;
};

class UcFlow {
 public:
  static constexpr std::uint32_t kMsgMax = 16 * 1024;
  static constexpr std::uint32_t kSlots = 64;
  static constexpr std::uint64_t kWriteArea = 4 << 20;
  static constexpr std::uint32_t kImmWrite = 1u << 31;

  UcFlow(std::uint32_t id, Host& hx, UcEnd& x, Host& hy, UcEnd& y, std::uint32_t recvs,
         std::uint64_t seed, const DgramMix& mix)
      : id_(id), x_(x), y_(y), rng_(seed), mix_(mix), got_(mix.msgs) {
    const std::uint64_t base = 0xa00000000ull + std::uint64_t{id} * 0x2000000;
    src_ = std::make_unique<Region>(hx.mrs, Host::kPd, base, kSlots * kMsgMax, access::kLocalWrite);
    rbuf_ = std::make_unique<Region>(hy.mrs, Host::kPd, base + 0x800000,
                                     std::uint64_t{recvs} * kMsgMax, access::kLocalWrite);
    wtgt_ = std::make_unique<Region>(hy.mrs, Host::kPd, base + 0x1000000, kWriteArea,
                                     access::kLocalWrite | access::kRemoteWrite);
    for (std::uint32_t k = 0; k < recvs; ++k) {
      RecvWr r;
      r.wr_id = k;
      r.num_sge = 1;
      r.sge[0] = {rbuf_->va + std::uint64_t{k} * kMsgMax, kMsgMax, rbuf_->key};
      if (y.qp->post_recv(r) != 0) err_ = "UC post_recv";
    }
  }

  bool post() {
    bool moved = false;
    for (int i = 0; i < 2 && posted_ < mix_.msgs; ++i) {
      if (posted_ - completed_ >= mix_.max_outstanding) break;
      const std::uint32_t seq = posted_;
      Msg m;
      m.len =
          static_cast<std::uint32_t>(rng_.chance(0.3) ? rng_.below(257) : rng_.below(kMsgMax + 1));
      const std::uint64_t r = rng_.below(3);
      m.op =
          r == 0 ? WrOpcode::kSendImm : (r == 1 ? WrOpcode::kRdmaWriteImm : WrOpcode::kRdmaWrite);
      if (m.op != WrOpcode::kSendImm) {
        if (wtgt_next_ + m.len > kWriteArea) m.op = WrOpcode::kSendImm;
      }
      std::uint8_t* p = src_->at(std::uint64_t{seq % kSlots} * kMsgMax);
      fill_pattern({p, m.len}, tag(seq), 0);
      SendWr w;
      w.wr_id = seq;
      w.opcode = m.op;
      w.flags = send_flag::kSignaled;
      w.num_sge = 1;
      w.sge[0] = {src_->va + std::uint64_t{seq % kSlots} * kMsgMax, m.len, src_->key};
      w.imm_or_inv = m.op == WrOpcode::kRdmaWriteImm ? (seq | kImmWrite) : seq;
      if (m.op != WrOpcode::kSendImm) {
        m.wtgt = wtgt_next_;
        wtgt_next_ += m.len;
        w.remote_addr = wtgt_->va + m.wtgt;
        w.rkey = wtgt_->key;
      }
      msgs_.push_back(m);
      if (x_.qp->post_send(w) != 0) return fail("UC post_send");
      ++posted_;
      moved = true;
    }
    return moved;
  }

  bool drain() {
    for (const Cqe& c : x_.scq.wc) {
      if (c.wr_id != completed_ || static_cast<WcStatus>(c.status) != WcStatus::kSuccess) {
        return fail("UC send CQE " + std::to_string(c.wr_id) + " status " +
                    std::to_string(c.status));
      }
      ++completed_;
    }
    x_.scq.wc.clear();
    for (const Cqe& c : y_.rcq.wc) {
      if (c.wr_id != received_ || static_cast<WcStatus>(c.status) != WcStatus::kSuccess ||
          (c.wc_flags & wc_flag::kWithImm) == 0) {
        return fail("UC receive CQE " + std::to_string(c.wr_id) + " status " +
                    std::to_string(c.status));
      }
      const std::uint32_t seq = c.ex.imm_data & ~kImmWrite;
      if (seq >= posted_) return fail("UC immediate names no message");
      const Msg& m = msgs_[seq];
      const bool write = (c.ex.imm_data & kImmWrite) != 0;
      if (write != (m.op == WrOpcode::kRdmaWriteImm) || c.byte_len != m.len) {
        return fail("UC receive opcode/length for " + std::to_string(seq));
      }
      const std::span<const std::uint8_t> data =
          write ? wtgt_->span(m.wtgt, m.len) : rbuf_->span(c.wr_id * kMsgMax, m.len);
      if (check_pattern(data, tag(seq), 0) >= 0) {
        return fail("UC payload of " + std::to_string(seq));
      }
      got_.add(seq);
      ++received_;
    }
    y_.rcq.wc.clear();
    return true;
  }

  // Plain WRITEs complete nothing at the receiver: every byte of their
  // target is either still the sentinel or the pattern (all of it when
  // `exact`: a clean link loses nothing).
  bool check_writes(bool exact) {
    for (std::uint32_t seq = 0; seq < posted_; ++seq) {
      const Msg& m = msgs_[seq];
      if (m.op != WrOpcode::kRdmaWrite) continue;
      const std::span<const std::uint8_t> d = wtgt_->span(m.wtgt, m.len);
      for (std::size_t i = 0; i < d.size(); ++i) {
        const bool pat = d[i] == pattern_byte(tag(seq), i);
        if (!pat && (exact || d[i] != kSentinel)) {
          return fail("UC WRITE " + std::to_string(seq) + " byte " + std::to_string(i));
        }
      }
    }
    return true;
  }

  std::uint32_t receives_expected() const {
    std::uint32_t n = 0;
    for (const Msg& m : msgs_) n += m.op != WrOpcode::kRdmaWrite ? 1 : 0;
    return n;
  }
  bool finished() const { return posted_ == mix_.msgs && completed_ == posted_; }
  const Arrivals& arrivals() const { return got_; }
  const std::string& error() const { return err_; }

 private:
  struct Msg {
    WrOpcode op = WrOpcode::kSendImm;
    std::uint32_t len = 0;
    std::uint64_t wtgt = 0;
  };
  std::uint64_t tag(std::uint32_t seq) const {
    return 0x0c000000000ull + (std::uint64_t{id_} << 24) + seq;
  }
  bool fail(const std::string& what) {
    err_ = "UC flow " + std::to_string(id_) + ": " + what;
    return false;
  }

  std::uint32_t id_;
  UcEnd& x_;
  UcEnd& y_;
  SeededRng rng_;
  DgramMix mix_;
  std::unique_ptr<Region> src_, rbuf_, wtgt_;
  std::vector<Msg> msgs_;
  std::uint64_t wtgt_next_ = 0;
  std::uint32_t posted_ = 0;
  std::uint32_t completed_ = 0;
  std::uint32_t received_ = 0;
  Arrivals got_;
  std::string err_;
};

}  // namespace uroce::transport::soak
