// Soak test support (not a source mirror): one direction of an RC QP pair
// (requester X -> responder Y) generating a seeded random mix of work
// requests and checking everything that comes back:
//   - every send WR completes exactly once, in posting order, successfully,
//     with the right opcode and byte_len (unsignalled ones retire silently
//     and are checked when the next signalled one completes);
//   - every receive completes in order with the right opcode, byte_len and
//     immediate; received bytes match the sender's pattern, and the spare
//     room and gaps of the receive buffers still hold the sentinel;
//   - WRITE targets hold the pattern (guard bytes untouched) when the WRITE
//     completes; READ results match the remote source; atomics return the
//     value a model of the remote counters predicts, and the counters end at
//     the model's values.
// Every buffer a WR names is a piece of an exactly-sized registered region,
// taken from a FIFO arena at post time and given back at completion.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "datapath/base/rng.h"
#include "tests/datapath/transport/soak/soak_memory.h"
#include "tests/datapath/transport/soak/soak_world.h"

namespace uroce::transport::soak {

struct RcMix {
  std::uint32_t wrs = 200;  // WRs this flow posts in total
  std::uint32_t max_outstanding = 24;
  std::uint32_t max_len = 256 * 1024;
  double late_recv = 0.03;  // receive WR posted late (RNR NAKs)
};

class RcFlow {
 public:
  static constexpr std::uint64_t kArena = 1 << 20;
  static constexpr std::uint64_t kReadSrc = 512 * 1024;
  static constexpr std::uint32_t kCounters = 8;
  static constexpr std::uint32_t kGap = 16;

  RcFlow(std::uint32_t id, Host& hx, RcEnd& x, Host& hy, RcEnd& y, std::uint64_t seed,
         const RcMix& mix)
      : id_(id), x_(x), y_(y), rng_(seed), mix_(mix) {
    const std::uint64_t base = 0x100000000ull + std::uint64_t{id} * 0x1000000;
    const std::uint32_t lw = access::kLocalWrite;
    src_ = std::make_unique<Region>(hx.mrs, Host::kPd, base, kArena + 64 * kGap, lw);
    rdst_ = std::make_unique<Region>(hx.mrs, Host::kPd, base + 0x200000, kArena + 64 * kGap, lw);
    ares_ = std::make_unique<Region>(hx.mrs, Host::kPd, base + 0x400000, 4096, lw);
    wtgt_ = std::make_unique<Region>(hy.mrs, Host::kPd, base + 0x600000, kArena + 64,
                                     lw | access::kRemoteWrite);
    rbuf_ =
        std::make_unique<Region>(hy.mrs, Host::kPd, base + 0x800000, kArena + 64 * kGap + 128, lw);
    rsrc_ =
        std::make_unique<Region>(hy.mrs, Host::kPd, base + 0xa00000, kReadSrc, access::kRemoteRead);
    atom_ = std::make_unique<Region>(hy.mrs, Host::kPd, base + 0xc00000, kCounters * 8,
                                     lw | access::kRemoteAtomic);
    fill_pattern(rsrc_->span(0, kReadSrc), rsrc_tag(), 0);
    std::memset(atom_->mem.data(), 0, atom_->mem.size());
  }

  // Posts up to a few new WRs (with their receive WRs) when room allows;
  // also posts receive WRs whose late time has come. True if anything was
  // posted.
  bool post(TimeNs now) {
    bool moved = post_late_recvs(now);
    const std::uint32_t burst = 1 + static_cast<std::uint32_t>(rng_.below(4));
    for (std::uint32_t i = 0; i < burst && posted_ < mix_.wrs; ++i) {
      if (sq_.size() >= mix_.max_outstanding) break;
      if (!post_one(now)) break;
      moved = true;
    }
    return moved;
  }

  // Checks the completions the two QPs produced since the last call. False
  // (with `error()` set) at the first mismatch.
  bool drain() {
    for (const Cqe& c : x_.scq.wc) {
      if (!on_send_cqe(c)) return false;
    }
    x_.scq.wc.clear();
    for (const Cqe& c : y_.rcq.wc) {
      if (!on_recv_cqe(c)) return false;
    }
    y_.rcq.wc.clear();
    return true;
  }

  bool finished() const {
    return posted_ == mix_.wrs && sq_.empty() && rq_.empty() && late_.empty();
  }
  std::optional<TimeNs> next_late() const {
    if (late_.empty()) return std::nullopt;
    return late_.front().due;
  }

  // End-of-run checks of the QP pair and the memory.
  bool check_end() {
    if (!finished()) return fail("flow not finished");
    for (std::uint32_t i = 0; i < kCounters; ++i) {
      std::uint64_t v = 0;
      std::memcpy(&v, atom_->at(8 * i), 8);
      if (v != model_[i]) return fail("atomic counter " + std::to_string(i));
    }
    const RcQp& qx = *x_.qp;
    const RcQp& qy = *y_.qp;
    const RcCounters& cx = qx.counters();
    const RcCounters& cy = qy.counters();
    if (qx.state() != QpState::kRts || qy.state() != QpState::kRts) {
      return fail("QP left RTS");
    }
    if (qx.send_queue_depth() != 0 || qy.recv_queue_depth() != 0 ||
        qx.rd_atomic_outstanding() != 0 || !qx.send_idle()) {
      return fail("queues not empty");
    }
    if (qx.has_output() || qy.has_output()) return fail("QP still has output");
    if (qx.next_psn() != qy.expected_psn()) return fail("requester PSN != ePSN");
    if (qx.unacked_psn() != qx.next_psn()) return fail("PSNs unacknowledged");
    // Every distinct request PSN is first sent once and executed once.
    if (cx.tx_requests - cx.tx_retransmits != cy.rx_requests) {
      return fail("requests sent " + std::to_string(cx.tx_requests) + " - retx " +
                  std::to_string(cx.tx_retransmits) + " != executed " +
                  std::to_string(cy.rx_requests));
    }
    if (cy.atomics_executed != atomics_) return fail("atomics executed != posted");
    if (qy.msn().value() != (messages_ & 0xffffff)) return fail("MSN != messages");
    if (cx.local_errors + cx.cq_overflow + cx.retry_exceeded + cx.rnr_retry_exceeded +
            cx.rx_error_naks + cx.tx_build_errors !=
        0) {
      return fail("requester error counters");
    }
    if (cy.tx_nak_invalid_request + cy.tx_nak_remote_access + cy.tx_nak_remote_op +
            cy.cq_overflow !=
        0) {
      return fail("responder error counters");
    }
    return true;
  }

  const std::string& error() const { return err_; }
  std::uint32_t id() const { return id_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  enum class Kind : std::uint8_t { kSend, kWrite, kRead, kAtomic };
  struct Piece {
    std::uint64_t off;
    std::uint32_t len;
  };
  struct SendExp {
    std::uint64_t wr_id = 0;
    WrOpcode op = WrOpcode::kSend;
    Kind kind = Kind::kSend;
    bool signaled = false;
    std::uint32_t len = 0;
    std::uint64_t tag = 0;
    bool src_alloc = false;
    bool wtgt_alloc = false;
    std::uint64_t wtgt_off = 0;
    bool rdst_alloc = false;
    std::uint64_t rdst_chunk = 0;
    std::uint64_t rdst_chunk_len = 0;
    std::vector<Piece> rdst;
    std::uint64_t rsrc_off = 0;
    bool ares_alloc = false;
    std::uint64_t ares_off = 0;
    std::uint64_t orig = 0;
  };
  struct RecvExp {
    std::uint64_t wr_id = 0;
    WcOpcode op = WcOpcode::kRecv;
    std::uint32_t byte_len = 0;
    bool imm = false;
    std::uint32_t imm_data = 0;
    std::uint64_t tag = 0;
    std::uint64_t chunk = 0;
    std::uint64_t chunk_len = 0;
    std::vector<Piece> pieces;
  };
  struct Late {
    TimeNs due;
    RecvWr wr;
  };

  std::uint64_t rsrc_tag() const { return 0xfeed0000ull + id_; }

  bool fail(const std::string& what) {
    std::ostringstream o;
    o << "flow " << id_ << " (qp 0x" << std::hex << x_.qp->qpn() << " -> 0x" << y_.qp->qpn()
      << std::dec << ", mtu " << wire::path_mtu_bytes(x_.qp->query().path_mtu) << "): " << what;
    err_ = o.str();
    return false;
  }

  std::uint32_t pick_len() {
    const std::uint64_t r = rng_.below(100);
    std::uint64_t n = 0;
    if (r < 5) {
      n = 0;
    } else if (r < 58) {
      n = 1 + rng_.below(256);
    } else if (r < 82) {
      n = 257 + rng_.below(16 * 1024 - 256);
    } else if (r < 96) {
      n = 16 * 1024 + rng_.below(48 * 1024);
    } else {
      n = 64 * 1024 + rng_.below(192 * 1024 + 1);
    }
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(n, mix_.max_len));
  }

  // Splits `len` bytes into 1..max pieces laid out in a chunk with kGap-byte
  // gaps between them (filled with the sentinel).
  std::vector<Piece> split(std::uint64_t chunk, std::uint32_t len, std::uint32_t pieces) {
    std::vector<Piece> v;
    std::uint64_t off = chunk;
    std::uint32_t left = len;
    for (std::uint32_t i = 0; i < pieces; ++i) {
      std::uint32_t n = left;
      if (i + 1 < pieces) n = static_cast<std::uint32_t>(rng_.below(left + 1));
      v.push_back({off, n});
      off += n + kGap;
      left -= n;
    }
    return v;
  }
  std::uint32_t pick_pieces(std::uint32_t len) {
    if (len == 0 || !rng_.chance(0.3)) return 1;
    return 2 + static_cast<std::uint32_t>(rng_.below(5));
  }

  bool post_one(TimeNs now) {
    const std::uint64_t r = rng_.below(100);
    WrOpcode op = WrOpcode::kSend;
    if (r < 22) {
      op = WrOpcode::kSend;
    } else if (r < 32) {
      op = WrOpcode::kSendImm;
    } else if (r < 54) {
      op = WrOpcode::kRdmaWrite;
    } else if (r < 64) {
      op = WrOpcode::kRdmaWriteImm;
    } else if (r < 84) {
      op = WrOpcode::kRdmaRead;
    } else if (r < 91) {
      op = WrOpcode::kCmpSwap;
    } else {
      op = WrOpcode::kFetchAdd;
    }
    SendExp e;
    e.op = op;
    e.tag = (std::uint64_t{id_} << 32) | posted_;
    e.wr_id = e.tag;
    e.signaled = posted_ + 1 == mix_.wrs || rng_.chance(0.7);
    SendWr w;
    w.wr_id = e.wr_id;
    w.opcode = op;
    w.flags = e.signaled ? send_flag::kSignaled : 0;
    if (rng_.chance(0.05)) w.flags |= send_flag::kFence;
    if (rng_.chance(0.1)) w.flags |= send_flag::kSolicited;

    if (op == WrOpcode::kCmpSwap || op == WrOpcode::kFetchAdd) {
      e.kind = Kind::kAtomic;
      e.len = 8;
      if (!ares_ar_.fits(8)) return false;
      const std::uint32_t ci = static_cast<std::uint32_t>(rng_.below(kCounters));
      e.ares_off = *ares_ar_.alloc(8);
      e.ares_alloc = true;
      std::memset(ares_->at(e.ares_off), kSentinel, 8);
      w.num_sge = 1;
      w.sge[0] = {ares_->va + e.ares_off, 8, ares_->key};
      w.remote_addr = atom_->va + 8 * ci;
      w.rkey = atom_->key;
      e.orig = model_[ci];
      if (op == WrOpcode::kFetchAdd) {
        w.compare_add = 1 + rng_.below(1000);
        model_[ci] += w.compare_add;
      } else {
        w.compare_add = rng_.chance(0.5) ? model_[ci] : model_[ci] ^ 1;
        w.swap = rng_.next_u64();
        if (w.compare_add == model_[ci]) model_[ci] = w.swap;
      }
      ++atomics_;
    } else if (op == WrOpcode::kRdmaRead) {
      e.kind = Kind::kRead;
      e.len = pick_len();
      const std::uint32_t np = pick_pieces(e.len);
      const std::uint64_t chunk_len = e.len + std::uint64_t{np} * kGap;
      if (!rdst_ar_.fits(chunk_len)) return false;
      e.rdst_chunk = *rdst_ar_.alloc(chunk_len);
      e.rdst_chunk_len = chunk_len;
      e.rdst_alloc = true;
      std::memset(rdst_->at(e.rdst_chunk), kSentinel, chunk_len);
      e.rdst = split(e.rdst_chunk, e.len, np);
      w.num_sge = np;
      for (std::uint32_t i = 0; i < np; ++i) {
        w.sge[i] = {rdst_->va + e.rdst[i].off, e.rdst[i].len, rdst_->key};
      }
      e.rsrc_off = rng_.below(kReadSrc - e.len + 1);
      w.remote_addr = rsrc_->va + e.rsrc_off;
      w.rkey = rsrc_->key;
    } else {
      const bool is_send = op == WrOpcode::kSend || op == WrOpcode::kSendImm;
      e.kind = is_send ? Kind::kSend : Kind::kWrite;
      e.len = pick_len();
      const bool inl = e.len <= kMaxInline && rng_.chance(0.4);
      const std::uint32_t np = inl ? 1 : pick_pieces(e.len);
      const std::uint64_t chunk_len = e.len + std::uint64_t{np} * kGap;
      // Room on the receive side first (nothing is taken unless all fits).
      RecvExp rx;
      std::uint32_t rnp = 0;
      std::uint64_t cap = 0;
      const bool consumes_recv = op != WrOpcode::kRdmaWrite;
      if (is_send) {
        cap = e.len + rng_.below(64);
        rnp = cap == 0 ? static_cast<std::uint32_t>(rng_.below(2))
                       : pick_pieces(static_cast<std::uint32_t>(cap));
        rx.chunk_len = cap + std::uint64_t{rnp} * kGap;
      }
      if (!inl && !src_ar_.fits(chunk_len)) return false;
      if (!is_send && !wtgt_ar_.fits(e.len + 64)) return false;
      if (is_send && !rbuf_ar_.fits(rx.chunk_len)) return false;
      if (!inl) {
        const std::uint64_t chunk = *src_ar_.alloc(chunk_len);
        e.src_alloc = true;
        std::memset(src_->at(chunk), kSentinel, chunk_len);
        const std::vector<Piece> ps = split(chunk, e.len, np);
        std::uint64_t msg_off = 0;
        w.num_sge = np;
        for (std::uint32_t i = 0; i < np; ++i) {
          fill_pattern(src_->span(ps[i].off, ps[i].len), e.tag, msg_off);
          msg_off += ps[i].len;
          w.sge[i] = {src_->va + ps[i].off, ps[i].len, src_->key};
        }
      } else {
        w.flags |= send_flag::kInline;
        w.inline_len = e.len;
        fill_pattern(std::span(w.inline_data.data(), e.len), e.tag, 0);
      }
      if (!is_send) {
        e.wtgt_off = *wtgt_ar_.alloc(e.len + 64);
        e.wtgt_alloc = true;
        std::memset(wtgt_->at(e.wtgt_off), kSentinel, e.len + 64);
        w.remote_addr = wtgt_->va + e.wtgt_off;
        w.rkey = wtgt_->key;
      }
      if (op == WrOpcode::kSendImm || op == WrOpcode::kRdmaWriteImm) {
        w.imm_or_inv = static_cast<std::uint32_t>(rng_.next_u64());
      }
      if (consumes_recv) {
        rx.wr_id = e.tag ^ 0x8000000000000000ull;
        rx.op = is_send ? WcOpcode::kRecv : WcOpcode::kRecvRdmaWithImm;
        rx.byte_len = e.len;
        rx.imm = op != WrOpcode::kSend;
        rx.imm_data = w.imm_or_inv;
        rx.tag = e.tag;
        RecvWr rw;
        rw.wr_id = rx.wr_id;
        if (is_send) {
          rx.chunk = *rbuf_ar_.alloc(rx.chunk_len);
          std::memset(rbuf_->at(rx.chunk), kSentinel, rx.chunk_len);
          rx.pieces =
              split(rx.chunk, static_cast<std::uint32_t>(cap), std::max<std::uint32_t>(rnp, 1));
          if (rnp == 0) rx.pieces.clear();
          rw.num_sge = static_cast<std::uint32_t>(rx.pieces.size());
          for (std::uint32_t i = 0; i < rw.num_sge; ++i) {
            rw.sge[i] = {rbuf_->va + rx.pieces[i].off, rx.pieces[i].len, rbuf_->key};
          }
        }
        rq_.push_back(std::move(rx));
        if (!late_.empty() || rng_.chance(mix_.late_recv)) {
          const TimeNs delay = (5 + rng_.below(300)) * kNsPerUs;
          late_.push_back({late_.empty() ? now + delay : late_.back().due, rw});
        } else if (y_.qp->post_recv(rw) != 0) {
          return fail("post_recv refused");
        }
      }
    }
    if (const int rc = x_.qp->post_send(w); rc != 0) {
      return fail("post_send refused: " + std::to_string(rc));
    }
    bytes_ += e.len;
    ++messages_;
    ++posted_;
    sq_.push_back(std::move(e));
    return true;
  }

  bool post_late_recvs(TimeNs now) {
    bool moved = false;
    while (!late_.empty() && late_.front().due <= now) {
      if (y_.qp->post_recv(late_.front().wr) != 0) return fail("late post_recv");
      late_.pop_front();
      moved = true;
    }
    return moved;
  }

  static WcOpcode expected_wc(WrOpcode op) {
    switch (op) {
      case WrOpcode::kSend:
      case WrOpcode::kSendImm: return WcOpcode::kSend;
      case WrOpcode::kRdmaWrite:
      case WrOpcode::kRdmaWriteImm: return WcOpcode::kRdmaWrite;
      case WrOpcode::kRdmaRead: return WcOpcode::kRdmaRead;
      case WrOpcode::kCmpSwap: return WcOpcode::kCompSwap;
      default: return WcOpcode::kFetchAdd;
    }
  }

  // The WR at the front has completed (explicitly or implicitly): check
  // what it did and give its buffers back.
  bool retire_front() {
    SendExp& e = sq_.front();
    const std::string wr =
        " wr " + std::to_string(e.wr_id & 0xffffffff) + " len " + std::to_string(e.len);
    if (e.kind == Kind::kWrite) {
      if (const auto i = check_pattern(wtgt_->span(e.wtgt_off, e.len), e.tag, 0); i >= 0) {
        return fail("WRITE data differs at " + std::to_string(i) + wr);
      }
      if (check_fill(wtgt_->span(e.wtgt_off + e.len, 64), kSentinel) >= 0) {
        return fail("WRITE wrote past its end" + wr);
      }
    } else if (e.kind == Kind::kRead) {
      std::uint64_t msg_off = 0;
      std::uint64_t end = e.rdst_chunk;
      for (const Piece& p : e.rdst) {
        if (const auto i =
                check_pattern(rdst_->span(p.off, p.len), rsrc_tag(), e.rsrc_off + msg_off);
            i >= 0) {
          return fail("READ data differs at " + std::to_string(msg_off + i) + wr);
        }
        msg_off += p.len;
        if (check_fill(rdst_->span(p.off + p.len, kGap), kSentinel) >= 0) {
          return fail("READ wrote into a gap" + wr);
        }
        end = p.off + p.len + kGap;
      }
      if (end != e.rdst_chunk + e.rdst_chunk_len) return fail("READ layout");
    } else if (e.kind == Kind::kAtomic) {
      std::uint64_t got = 0;
      std::memcpy(&got, ares_->at(e.ares_off), 8);
      if (got != e.orig) {
        return fail("atomic returned " + std::to_string(got) + " expected " +
                    std::to_string(e.orig) + wr);
      }
    }
    if (e.src_alloc) src_ar_.release();
    if (e.wtgt_alloc) wtgt_ar_.release();
    if (e.rdst_alloc) rdst_ar_.release();
    if (e.ares_alloc) ares_ar_.release();
    sq_.pop_front();
    return true;
  }

  bool on_send_cqe(const Cqe& c) {
    if (static_cast<WcStatus>(c.status) != WcStatus::kSuccess) {
      const RcCounters& k = x_.qp->counters();
      return fail("send CQE for wr " + std::to_string(c.wr_id & 0xffffffff) + " status " +
                  std::to_string(c.status) + " (retry_exceeded " +
                  std::to_string(k.retry_exceeded) + ", rnr_retry_exceeded " +
                  std::to_string(k.rnr_retry_exceeded) + ", error NAKs " +
                  std::to_string(k.rx_error_naks) + ", local errors " +
                  std::to_string(k.local_errors) + ")");
    }
    while (!sq_.empty() && !sq_.front().signaled) {
      if (sq_.front().wr_id == c.wr_id) return fail("CQE for an unsignalled WR");
      if (!retire_front()) return false;
    }
    if (sq_.empty()) return fail("send CQE with nothing outstanding");
    const SendExp& e = sq_.front();
    if (c.wr_id != e.wr_id) {
      return fail("send CQE out of order: got wr " + std::to_string(c.wr_id & 0xffffffff) +
                  " expected " + std::to_string(e.wr_id & 0xffffffff));
    }
    if (static_cast<WcStatus>(c.status) != WcStatus::kSuccess) {
      return fail("send CQE status " + std::to_string(c.status));
    }
    if (static_cast<WcOpcode>(c.opcode) != expected_wc(e.op)) {
      return fail("send CQE opcode " + std::to_string(c.opcode));
    }
    if (c.byte_len != e.len) return fail("send CQE byte_len");
    if (c.qp_num != x_.qp->qpn()) return fail("send CQE qp_num");
    return retire_front();
  }

  bool on_recv_cqe(const Cqe& c) {
    if (rq_.empty()) return fail("receive CQE with nothing posted");
    const RecvExp& r = rq_.front();
    const std::string wr = " recv for wr " + std::to_string(r.tag & 0xffffffff);
    if (c.wr_id != r.wr_id) return fail("receive CQE out of order" + wr);
    if (static_cast<WcStatus>(c.status) != WcStatus::kSuccess) {
      return fail("receive CQE status " + std::to_string(c.status) + wr);
    }
    if (static_cast<WcOpcode>(c.opcode) != r.op) return fail("receive opcode" + wr);
    if (c.byte_len != r.byte_len) {
      return fail("receive byte_len " + std::to_string(c.byte_len) + " expected " +
                  std::to_string(r.byte_len) + wr);
    }
    const bool has_imm = (c.wc_flags & wc_flag::kWithImm) != 0;
    if (has_imm != r.imm || (r.imm && c.ex.imm_data != r.imm_data)) {
      return fail("receive immediate" + wr);
    }
    if (c.qp_num != y_.qp->qpn()) return fail("receive qp_num" + wr);
    if (r.op == WcOpcode::kRecv) {
      std::uint64_t msg_off = 0;
      for (const Piece& p : r.pieces) {
        const std::uint64_t n = std::min<std::uint64_t>(p.len, r.byte_len - msg_off);
        if (const auto i = check_pattern(rbuf_->span(p.off, n), r.tag, msg_off); i >= 0) {
          return fail("SEND data differs at " + std::to_string(msg_off + i) + wr);
        }
        if (check_fill(rbuf_->span(p.off + n, p.len - n + kGap), kSentinel) >= 0) {
          return fail("SEND wrote past the message or into a gap" + wr);
        }
        msg_off += n;
      }
      rbuf_ar_.release();
    }
    rq_.pop_front();
    return true;
  }

  std::uint32_t id_;
  RcEnd& x_;
  RcEnd& y_;
  SeededRng rng_;
  RcMix mix_;
  std::unique_ptr<Region> src_, rdst_, ares_, wtgt_, rbuf_, rsrc_, atom_;
  FifoArena src_ar_{kArena};
  FifoArena rdst_ar_{kArena};
  FifoArena ares_ar_{4096};
  FifoArena wtgt_ar_{kArena};
  FifoArena rbuf_ar_{kArena};
  std::uint64_t model_[kCounters] = {};
  std::deque<SendExp> sq_;
  std::deque<RecvExp> rq_;
  std::deque<Late> late_;
  std::uint32_t posted_ = 0;
  std::uint64_t atomics_ = 0;
  std::uint64_t messages_ = 0;
  std::uint64_t bytes_ = 0;
  std::string err_;
};

}  // namespace uroce::transport::soak
