// Test support for the transports' refill (datapath/transport/recv_refill.h;
// not a source mirror): the owner's side, which holds receive WRs back
// until the QP or SRQ asks for them, then posts them all, and counts the
// asks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "datapath/transport/recv_refill.h"
#include "datapath/transport/wr.h"

namespace uroce::transport::test {

// Q: a QP type or Srq (anything with post_recv(const RecvWr&)).
template <class Q>
struct HeldRecvs {
  Q* q = nullptr;
  std::vector<RecvWr> wrs;  // posted at the next ask
  int asks = 0;
  std::uint32_t last_tag = 0;

  RecvRefill refill(std::uint32_t tag) { return RecvRefill{&ask, this, tag}; }

  static void ask(void* ctx, std::uint32_t tag) {
    auto* h = static_cast<HeldRecvs*>(ctx);
    ++h->asks;
    h->last_tag = tag;
    ASSERT_NE(h->q, nullptr);
    for (const RecvWr& w : h->wrs) EXPECT_EQ(h->q->post_recv(w), 0);
    h->wrs.clear();
  }
};

}  // namespace uroce::transport::test
