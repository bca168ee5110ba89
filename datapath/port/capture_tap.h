// A capture of one ethdev port: copies of its frames, both directions,
// taken on the engine lcores and queued for one capture thread
// (capture_writer.h turns them into pcapng; apps/uroced/capture_service.h
// runs it for `uroce-ctl capture`).
//
// Zero cost while no capture runs: the copies are taken by ethdev RX and
// TX callbacks (rte_eth_add_rx_callback, rte_eth_add_tx_callback) on every
// queue of the port. rte_eth_rx_burst and rte_eth_tx_burst load the
// queue's callback pointer on every burst whether or not one is installed
// (RTE_ETHDEV_RXTX_CALLBACKS, on in Debian's DPDK); with none installed
// nothing more runs, and the engine's own code (engine/eth_port_io.h) has
// no capture branch at all.
//
// While attached, per burst: one TSC reading (the clock the engine's
// TscClock reads), per frame one rte_pktmbuf_copy of at most `snaplen`
// bytes into the tap's pool (a mempool get from the lcore's cache: no
// malloc, no lock), the frame's FrameMeta in the copy's private area, and
// one multi-producer enqueue of the burst's copies into the tap's ring. A
// copy the ring has no room for is freed and counted (ring_full), a frame
// the pool has no mbuf for is counted (no_mbuf): the engine never waits
// for the capture.
//
// TX: the callback runs before the PMD takes the frames, and the engine
// offers refused frames again (engine/mbuf_tx_sink.h). Each frame is
// copied once, at its first offering: the callback marks the frame's mbuf
// with a dynamic mbuf flag (kSeenFlagName), which rte_pktmbuf_alloc clears
// when the mbuf is reused. The capture then holds every frame the port
// sent once, as the wire carries it (a frame refused, then discarded at
// port stop, is the exception). Hence one tap per port at a time: a second
// one would skip the first one's marks.
//
// Lifetime (DPDK's rule: a removed callback may still be running on its
// lcore, and its memory is the application's to free):
//   open() -> attach() -> ... -> detach() -> every lcore that runs a queue
//   of the port passes a point outside its bursts (Engine::call returns) ->
//   release().
// Only release() frees the callbacks, the ring and the pool. A tap
// destroyed while attached detaches and leaks them on purpose rather than
// free memory an lcore may still be using.
//
// Threading: open/attach/detach/release on one control thread; take() on
// one capture thread (the ring's single consumer); counters() anywhere.
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "datapath/port/capture_counters.h"

namespace uroce::port {

// What the capture thread needs of each copy, in its mbuf's private area.
struct FrameMeta {
  std::uint64_t tsc = 0;       // TSC at the burst
  std::uint32_t orig_len = 0;  // the frame's length before snaplen cut it
  std::uint16_t queue = 0;     // the port queue it passed
  std::uint8_t direction = 0;  // rte_pcapng_direction: 1 received, 2 sent
  std::uint8_t pad = 0;
};

struct CaptureTapConfig {
  std::uint16_t port_id = 0;
  std::uint16_t queues = 1;        // the port's RX and TX queues
  std::uint32_t snaplen = 0;       // bytes kept of each frame; 0: whole frames
  std::uint32_t max_frame = 0;     // the port's largest frame (sizes the copies)
  std::uint32_t ring_size = 4096;  // power of two: copies waiting for the capture thread
};

// The ring (and pool) size for a capture of frames up to `max_frame` bytes
// cut to `snaplen` (0: whole frames): as many copies as fit in
// kCaptureBudgetBytes, a power of two in [kMinCaptureRing, kMaxCaptureRing].
// Deeper with a small snaplen: a burst the capture thread cannot keep up
// with (a 64 KiB ib_write_bw sends 2 GB/s through a ring pair here) is
// dropped only once that many copies wait.
inline constexpr std::uint64_t kCaptureBudgetBytes = 40ull << 20;
inline constexpr std::uint32_t kMinCaptureRing = 1024;
inline constexpr std::uint32_t kMaxCaptureRing = 65536;
std::uint32_t capture_ring_size(std::uint32_t snaplen, std::uint32_t max_frame);

class CaptureTap {
 public:
  static constexpr const char* kSeenFlagName = "uroce_capture_tx_seen";

  CaptureTap() = default;
  ~CaptureTap();
  CaptureTap(const CaptureTap&) = delete;
  CaptureTap& operator=(const CaptureTap&) = delete;

  // Creates the ring and the pool (ring_size - 1 copies of
  // min(snaplen, max_frame) bytes). 0 or a negative errno, with `error`
  // saying what failed.
  int open(const CaptureTapConfig& cfg, std::string* error);
  // Installs the callbacks on every queue. 0 or a negative errno (then
  // nothing is installed).
  int attach(std::string* error);
  // Removes the callbacks; they may still run until every lcore of the port
  // passed a quiescent point. Idempotent.
  void detach();
  // After detach() and that quiescent point: frees the callbacks, every copy
  // still queued, the ring and the pool. Idempotent.
  void release();

  // The capture thread: up to n copies, oldest first (FrameMeta in each).
  // The caller frees them.
  unsigned take(rte_mbuf** out, unsigned n);
  static const FrameMeta& meta(const rte_mbuf* m);

  std::uint16_t port_id() const { return cfg_.port_id; }
  // The bytes kept of each frame (the configured snaplen, or max_frame).
  std::uint32_t snaplen() const { return snaplen_; }
  // Summed over the queues; exact once detached and quiesced.
  CaptureCounters counters() const;
  bool attached() const { return attached_; }

 private:
  // One queue's callbacks and counters, on its own cache line: written by
  // the queue's lcore only (plain loads and stores, no locked operation).
  struct alignas(RTE_CACHE_LINE_SIZE) QueueTap {
    CaptureTap* tap = nullptr;
    std::uint16_t queue = 0;
    const rte_eth_rxtx_callback* rx_cb = nullptr;
    const rte_eth_rxtx_callback* tx_cb = nullptr;
    std::atomic<std::uint64_t> rx_frames{0}, tx_frames{0}, ring_full{0}, no_mbuf{0};
  };

  static std::uint16_t on_rx(std::uint16_t port, std::uint16_t queue, rte_mbuf** pkts,
                             std::uint16_t n, std::uint16_t max, void* arg);
  static std::uint16_t on_tx(std::uint16_t port, std::uint16_t queue, rte_mbuf** pkts,
                             std::uint16_t n, void* arg);
  template <bool kTx>
  void copy_burst(QueueTap& q, rte_mbuf** pkts, std::uint16_t n);
  void enqueue(QueueTap& q, rte_mbuf** copies, unsigned k);

  CaptureTapConfig cfg_{};
  std::uint32_t snaplen_ = 0;
  std::uint64_t seen_flag_ = 0;
  rte_ring* ring_ = nullptr;
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<QueueTap[]> queues_;
  bool attached_ = false;
  bool detached_ = false;  // callbacks removed, not yet freed
};

}  // namespace uroce::port
