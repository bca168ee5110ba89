// The hand-off rings between the engine lcores that share one port
// (docs/engine.md "Several lcores"). A device served by n lcores is n Vnic
// shards, shard i on the port's RX and TX queue i, each owning the QPs whose
// QPN maps to it (port::shard_of_qpn). RSS, steered by the senders' UDP
// source ports (port/rss.h), delivers most packets to the queue of the
// lcore that owns their QP; one that lands elsewhere (a peer that picks its
// own source ports, such as rxe or an RNIC; a NIC whose RSS key we could not
// program; a QP of our own on another shard) is moved, as the mbuf it
// arrived in, to its owner through the ring from(i) -> to(j).
//
// Invariants: ring(i, j) has exactly one producer (lcore i) and one
// consumer (lcore j), so each is a single-producer single-consumer
// rte_ring and the per-packet path takes no lock; nothing links a shard to
// itself. The rings are made and freed on the control path, while no lcore
// runs; a full ring refuses (the frame is dropped and counted by the
// sender, as the NIC drops a frame its RX queue has no room for).
#pragma once

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cassert>
#include <cstdint>
#include <string>
#include <vector>

namespace uroce::engine {

class ShardLinks {
 public:
  // Ring slots between each ordered pair of shards: twice the RX queue's
  // burst many times over, so that one slow iteration of the owner does not
  // drop what its neighbours hand it.
  static constexpr unsigned kDefaultDepth = 1024;

  ShardLinks() = default;
  ~ShardLinks() { close(); }
  ShardLinks(const ShardLinks&) = delete;
  ShardLinks& operator=(const ShardLinks&) = delete;

  // n x (n - 1) rings of `depth` mbufs (a power of two), named from `name`
  // (unique in the process). 0, or a negative errno with `error` set.
  int open(const std::string& name, std::uint16_t shards, unsigned depth = kDefaultDepth,
           std::string* error = nullptr) {
    assert(rings_.empty());
    if (shards == 0 || (depth & (depth - 1)) != 0) {
      if (error != nullptr) *error = name + ": shards must be at least 1 and depth a power of two";
      return -EINVAL;
    }
    shards_ = shards;
    rings_.assign(std::size_t{shards} * shards, nullptr);
    for (std::uint16_t i = 0; i < shards; ++i) {
      for (std::uint16_t j = 0; j < shards; ++j) {
        if (i == j) continue;
        const std::string n = name + "_" + std::to_string(i) + "_" + std::to_string(j);
        // RING_F_EXACT_SZ: `depth` usable slots, not depth - 1.
        rte_ring* r = rte_ring_create(n.c_str(), depth, SOCKET_ID_ANY,
                                      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
        if (r == nullptr) {
          const int err = rte_errno;
          if (error != nullptr) *error = "cannot create hand-off ring " + n;
          close();
          return -err;
        }
        rings_[index(i, j)] = r;
      }
    }
    return 0;
  }

  // Frees every ring and the mbufs still in them.
  void close() {
    for (rte_ring*& r : rings_) {
      if (r == nullptr) continue;
      void* m = nullptr;
      while (rte_ring_sc_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
      rte_ring_free(r);
      r = nullptr;
    }
    rings_.clear();
    shards_ = 0;
  }

  std::uint16_t shards() const { return shards_; }
  // The ring lcore `from` hands to lcore `to` through; from != to.
  rte_ring* ring(std::uint16_t from, std::uint16_t to) const {
    assert(from != to && from < shards_ && to < shards_);
    return rings_[index(from, to)];
  }

 private:
  std::size_t index(std::uint16_t i, std::uint16_t j) const { return std::size_t{i} * shards_ + j; }

  std::uint16_t shards_ = 0;
  std::vector<rte_ring*> rings_;
};

}  // namespace uroce::engine
