// The transport's CqSink (transport/sinks.h) over a CQ in shared memory: the
// engine produces struct ib_uverbs_wc into the rxe-layout ring the provider
// polls (shm::CqProducer), and delivers completion events.
//
// push(c): writes the 48-byte completion and publishes it (store-release of
// the producer index); false, counted, when the ring is full: the transport
// then parks the completion and raises CQ_ERR / QP_FATAL (async_event.h).
// After a successful push, if the CQ has a comp channel and the provider
// armed it (ctl::CqNotify.armed != 0, load-acquire), the engine clears the
// word with an exchange and, only if that exchange saw it armed, hands one
// 8-byte record {user_handle} for the channel's pipe to the device's
// CompEventBatch (comp_event_batch.h: written at the end of the iteration,
// one write per channel): at most one event per arming, even if the
// provider re-arms concurrently. Solicited-only arming (kCqArmedSolicited)
// fires only on a completion that fires_solicited_arm (cqe.h): a receive
// whose packet had the BTH SE bit, or a completion in error; any other
// non-zero arming word fires on every completion. A completion that does not
// fire leaves the arming in place. The solicited marker the transport puts
// in the completion's reserved byte is cleared before the ring gets it.
//
// resize(ring, notify): moves the completions not yet polled (from the
// consumer index the provider last published up to our producer index) to
// the start of the new ring, in order, publishes them there, carries the
// armed state over to the new arming word, and produces into the new ring
// from then on. Nothing keeps a pointer into the old ring afterwards.
//
// Trust: the ring geometry is the engine's own copy (RingProducer); the
// provider can only make the ring look fuller or emptier than it is, or
// write the arming word at will (any non-zero value arms).
//
// Engine lcore only; not thread-safe.
#pragma once

// <netinet/in.h> before anything that reaches <rdma/rdma_user_rxe.h>
// (shm/ring.h): that header includes <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK's headers include it), while the other order is fine.
#include <netinet/in.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "datapath/base/counter_fields.h"
#include "datapath/ctl/protocol.h"
#include "datapath/engine/comp_event_batch.h"
#include "datapath/engine/cq_sink_counters.h"
#include "datapath/engine/vnic_api.h"
#include "datapath/shm/ring.h"
#include "datapath/transport/cqe.h"

namespace uroce::engine {

class CqRingSink {
 public:
  // `totals`, when given, is incremented along with the sink's own counters
  // (the Vnic's device-wide figures); `events` takes the comp-channel
  // records (needed only by a sink with a channel). Both must outlive the
  // sink.
  explicit CqRingSink(CqSinkCounters* totals = nullptr, CompEventBatch* events = nullptr)
      : totals_(totals), events_(events) {}

  // Attaches the ring (created and ring_init'ed by the control plane) and
  // the completion-event target. 0 or EINVAL (memory does not match the
  // geometry, elements shorter than an ib_uverbs_wc, a channel but no
  // batch to hand its records to).
  int attach(const RingMem& ring, ctl::CqNotify* notify, int channel_fd,
             std::uint64_t user_handle) {
    shm::CqProducer p;
    if (ring.mem == nullptr || p.attach(ring.mem, ring.bytes, ring.geo) != shm::RingError::kOk) {
      return EINVAL;
    }
    if (channel_fd >= 0 && events_ == nullptr) return EINVAL;
    ring_ = p;
    notify_ = notify;
    channel_fd_ = channel_fd;
    user_handle_ = user_handle;
    return 0;
  }

  bool push(const transport::Cqe& c) {
    bool ok;
    if (c.reserved != 0) [[unlikely]] {
      transport::Cqe plain = c;
      plain.reserved = 0;
      ok = ring_.try_push(plain);
    } else {
      ok = ring_.try_push(c);
    }
    if (!ok) {
      count(&CqSinkCounters::overflow);
      return false;
    }
    count(&CqSinkCounters::cqes);
    if (transport::carries_peer_data(c)) count(&CqSinkCounters::cqes_peer_data);
    if (channel_fd_ >= 0 && notify_ != nullptr) maybe_notify(transport::fires_solicited_arm(c));
    return true;
  }

  // See the header comment. 0, or EINVAL: a bad ring, or one that cannot
  // hold the unpolled completions (nothing changed; rxe answers the same).
  int resize(const RingMem& ring, ctl::CqNotify* notify) {
    shm::CqProducer next;
    if (ring.mem == nullptr || next.attach(ring.mem, ring.bytes, ring.geo) != shm::RingError::kOk) {
      return EINVAL;
    }
    const std::uint32_t n = unpolled();
    if (next.free_slots() < n) return EINVAL;
    const std::uint32_t slots = ring_.geometry().slots();
    for (std::uint32_t i = 0; i < n; ++i) {
      // slot_bytes(k) is k places past the producer index, modulo the ring:
      // slots - n + i is the i-th unpolled completion.
      std::memcpy(next.slot_bytes(i), ring_.slot_bytes(slots - n + i), shm::kCqeBytes);
    }
    if (n != 0) next.publish(n);
    if (notify != notify_) {
      std::uint32_t armed = ctl::kCqDisarmed;
      if (notify_ != nullptr) {
        armed = std::atomic_ref<std::uint32_t>(notify_->armed)
                    .exchange(ctl::kCqDisarmed, std::memory_order_acq_rel);
      }
      if (notify != nullptr) {
        std::atomic_ref<std::uint32_t>(notify->armed).store(armed, std::memory_order_release);
      }
    }
    ring_ = next;
    notify_ = notify;
    return 0;
  }

  // Completions written and not yet consumed by the provider.
  std::uint32_t unpolled() const {
    return ring_.attached() ? ring_.geometry().capacity() - ring_.free_slots() : 0;
  }
  std::uint32_t capacity() const { return ring_.attached() ? ring_.geometry().capacity() : 0; }
  bool attached() const { return ring_.attached(); }
  int channel_fd() const { return channel_fd_; }
  std::uint64_t user_handle() const { return user_handle_; }
  const CqSinkCounters& counters() const { return ctr_; }

 private:
  // `solicited`: the completion fires a solicited-only arming.
  void maybe_notify(bool solicited) {
    std::atomic_ref<std::uint32_t> armed(notify_->armed);
    // Dekker pairing with the provider's req_notify_cq (store armed; full
    // fence; the application then polls the producer index): the CQE was
    // published with a store-release, and without a full fence here x86 may
    // perform this load before that store is visible. Then the provider could
    // arm and poll an empty ring while we read "disarmed": both sides would
    // wait for each other. With a fence on each side at least one sees the
    // other's store.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint32_t want = armed.load(std::memory_order_acquire);
    if (want == ctl::kCqDisarmed) return;
    if (want == ctl::kCqArmedSolicited && !solicited) {
      count(&CqSinkCounters::unsolicited);
      return;
    }
    if (armed.exchange(ctl::kCqDisarmed, std::memory_order_acq_rel) == ctl::kCqDisarmed) {
      return;
    }
    events_->add(channel_fd_, user_handle_);
    count(&CqSinkCounters::comp_events);
  }
  void count(std::uint64_t CqSinkCounters::*field) {
    ++(ctr_.*field);
    if (totals_ != nullptr) ++(totals_->*field);
  }

  shm::CqProducer ring_{};
  ctl::CqNotify* notify_ = nullptr;
  int channel_fd_ = -1;
  std::uint64_t user_handle_ = 0;
  CqSinkCounters ctr_{};
  CqSinkCounters* totals_;
  CompEventBatch* events_;
};

}  // namespace uroce::engine
