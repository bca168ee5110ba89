// How a receive queue that is empty when a packet needs a receive WR asks
// its owner for WRs the application has posted but the owner has not handed
// over yet.
//
// The engine moves receive WQEs from the shared RQ/SRQ rings into the
// transport's queues in its doorbell phase, which runs after its RX phase.
// A receive the application posted (its WQE written and the ring's producer
// index published) just before a SEND arrived is in the ring, not yet in the
// transport's queue: without a refill the QP would answer RNR (RC) or drop
// the packet (UC, UD) although verbs make a posted receive visible to the
// next packet once ibv_post_recv returns, as every RNIC and rxe do. So the
// transport, finding its queue empty, calls the refill once and looks
// again; only then is the queue really empty.
//
// The transport stays I/O-free: the refill is a plain function pointer the
// owner supplies (the engine reads the ring; tests push WRs), called only
// on the empty-queue path, so a QP whose queue holds a WR pays nothing. The
// owner must only add WRs to the queue the refill is for (post_recv on the
// same QP, Srq::post_recv on the same SRQ) and must not change the QP's
// state from inside it.
#pragma once

#include <cstdint>

namespace uroce::transport {

struct RecvRefill {
  // Adds whatever receive WRs are pending for the queue `tag` names; may
  // add none.
  void (*fn)(void* ctx, std::uint32_t tag) = nullptr;
  void* ctx = nullptr;
  std::uint32_t tag = 0;

  bool set() const { return fn != nullptr; }
  void operator()() const {
    if (fn != nullptr) fn(ctx, tag);
  }
};

}  // namespace uroce::transport
