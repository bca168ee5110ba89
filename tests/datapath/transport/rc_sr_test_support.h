// Test support for selective repeat (docs/lossy.md; not a source mirror): a
// responder fixture whose QP has RcSr attached, and the SR packets a uroce
// peer in SR mode sends, cut into path-MTU packets with their SRETH.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "datapath/transport/rc_sr.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport::rctest {

// One message as the peer sends it: its packets in PSN order.
using Msg = std::vector<PktPtr>;

struct SrResponderFixture : RcFixture {
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(256 * 1024);
  RcSr sr;

  void SetUp() override {
    RcFixture::SetUp();
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 29 + 11);
  }
  // make_qp with SR attached.
  void make_sr_qp() {
    make_qp();
    qp->set_sr(&sr);
  }

  // One SR packet: `op` an SR opcode; payload src[src_off, src_off + len).
  PktPtr sr_pkt(std::uint8_t op, std::uint32_t psn, std::uint32_t rsn, std::uint32_t offset,
                std::size_t src_off, std::size_t len, bool ack_req = false) const {
    wire::PacketSpec s = peer_spec(op, psn);
    s.ack_req = ack_req;
    const wire::OpcodeInfo& i = wire::opcode_info(op);
    if (i.has(wire::ExtHdr::kSrEth)) s.sr_eth = wire::SrEthHdr::make(rsn, offset);
    if (i.has(wire::ExtHdr::kImmDt)) s.immdt = wire::ImmDtHdr::make(0xabcd0000u | rsn);
    s.payload = std::span<const std::uint8_t>(src.data() + src_off, len);
    return build(s);
  }
  // A SEND of `len` bytes from src[src_off] taking receive sequence number
  // `rsn`, from PSN `psn` on; `imm`: the last packet carries ImmDt.
  Msg sr_send(std::uint32_t psn, std::uint32_t rsn, std::size_t src_off, std::size_t len,
              bool imm = false) const {
    return cut(psn, len, [&](std::uint32_t p, std::uint8_t pos, std::uint32_t off, std::size_t n) {
      std::uint8_t op = wire::op::kSrSendMiddle;
      if (pos == 3) op = imm ? wire::op::kSrSendOnlyImm : wire::op::kSrSendOnly;
      if (pos == 0) op = wire::op::kSrSendFirst;
      if (pos == 2) op = imm ? wire::op::kSrSendLastImm : wire::op::kSrSendLast;
      return sr_pkt(op, p, rsn, off, src_off + off, n, pos >= 2);
    });
  }
  // A WRITE of `len` bytes from src[src_off] to the QP's remote region at
  // `dst_off`; every packet carries the message's RETH. `imm`: WRITE with
  // immediate, taking receive sequence number `rsn`.
  Msg sr_write(std::uint32_t psn, std::uint32_t rsn, std::size_t src_off, std::uint64_t dst_off,
               std::size_t len, bool imm = false, std::uint32_t key = 0) const {
    const std::uint32_t k = key != 0 ? key : rkey;
    return cut(psn, len, [&](std::uint32_t p, std::uint8_t pos, std::uint32_t off, std::size_t n) {
      std::uint8_t op = wire::op::kSrWriteMiddle;
      if (pos == 3) op = imm ? wire::op::kSrWriteOnlyImm : wire::op::kSrWriteOnly;
      if (pos == 0) op = wire::op::kSrWriteFirst;
      if (pos == 2) op = imm ? wire::op::kSrWriteLastImm : wire::op::kSrWriteLast;
      wire::PacketSpec s = peer_spec(op, p);
      s.ack_req = pos >= 2;
      s.reth = wire::RethHdr::make(kRemoteVa + dst_off, k, static_cast<std::uint32_t>(len));
      s.sr_eth = wire::SrEthHdr::make(rsn, off);
      if (imm && pos >= 2) s.immdt = wire::ImmDtHdr::make(0xabcd0000u | rsn);
      s.payload = std::span<const std::uint8_t>(src.data() + src_off + off, n);
      return build(s);
    });
  }
  // An SR READ request for `len` bytes of the remote region at `off`.
  PktPtr sr_read(std::uint32_t psn, std::uint64_t off, std::uint32_t len) const {
    wire::PacketSpec s = peer_spec(wire::op::kSrReadRequest, psn);
    s.ack_req = true;
    s.reth = wire::RethHdr::make(kRemoteVa + off, rkey, len);
    return build(s);
  }

  // Packets of a message of `len` bytes from `psn`: make(psn, position
  // (0 FIRST, 1 MIDDLE, 2 LAST, 3 ONLY), offset, bytes).
  template <class Make>
  Msg cut(std::uint32_t psn, std::size_t len, Make&& make) const {
    const std::size_t m = mtu();
    const std::size_t npkts = len == 0 ? 1 : (len + m - 1) / m;
    Msg out;
    for (std::size_t i = 0; i < npkts; ++i) {
      const std::uint8_t pos = npkts == 1 ? 3 : i == 0 ? 0 : i + 1 == npkts ? 2 : 1;
      const std::size_t n = i + 1 == npkts ? len - i * m : m;
      out.push_back(make(static_cast<std::uint32_t>((psn + i) & 0xffffff), pos,
                         static_cast<std::uint32_t>(i * m), n));
    }
    return out;
  }
};

}  // namespace uroce::transport::rctest
