#include "datapath/port/xsk_pool.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>
#include <unistd.h>

#include <cstring>

namespace uroce::port {

namespace {

// What the PMD reads as the UMEM's page: getpagesize(), not EAL's page size.
std::uintptr_t umem_page() { return static_cast<std::uintptr_t>(getpagesize()); }

struct FitWalk {
  std::uintptr_t base = 0, end = 0;
  std::uintptr_t lo = UINTPTR_MAX, hi = 0;
  XskUmemFit* fit = nullptr;
};

void walk_object(rte_mempool* mp, void* arg, void* obj, unsigned /*index*/) {
  auto* w = static_cast<FitWalk*>(arg);
  const auto at = reinterpret_cast<std::uintptr_t>(obj);
  const std::uintptr_t first = at - mp->header_size;
  const std::uintptr_t last = at + mp->elt_size + mp->trailer_size;
  ++w->fit->objects;
  if (first < w->base || last > w->end) ++w->fit->outside;
  if (first < w->lo) w->lo = first;
  if (last > w->hi) w->hi = last;
}

void free_memzone(rte_mempool_memhdr* /*chunk*/, void* mz) {
  rte_memzone_free(static_cast<const rte_memzone*>(mz));
}

void set_error(std::string* error, const std::string& msg) {
  if (error != nullptr) *error = msg;
}

}  // namespace

XskUmemFit xsk_umem_fit(rte_mempool* pool) {
  XskUmemFit fit;
  fit.chunks = pool->nb_mem_chunks;
  const rte_mempool_memhdr* first = STAILQ_FIRST(&pool->mem_list);
  if (first == nullptr) return fit;
  // The PMD's arithmetic (net_af_xdp's xdp_umem_configure, zero-copy build):
  // base = the first chunk's page; length = populated_size objects of the
  // size rte_mempool_calc_obj_size gives, plus the chunk's offset in its page.
  const auto addr = reinterpret_cast<std::uintptr_t>(first->addr);
  const std::uintptr_t base = addr & ~(umem_page() - 1);
  const std::uint64_t frame = rte_mempool_calc_obj_size(pool->elt_size, pool->flags, nullptr);
  fit.umem_bytes = std::uint64_t{pool->populated_size} * frame + (addr - base);
  FitWalk w{.base = base, .end = base + fit.umem_bytes, .fit = &fit};
  rte_mempool_obj_iter(pool, walk_object, &w);
  if (fit.objects != 0) fit.span_bytes = w.hi - w.lo;
  return fit;
}

std::uint32_t xsk_data_room(std::uint32_t room, std::uint32_t page_size) {
  rte_mempool_objsz sz{};
  rte_mempool_calc_obj_size(sizeof(rte_mbuf), RTE_MEMPOOL_F_NO_SPREAD, &sz);
  const std::uint32_t page_fit = page_size - sz.header_size - sizeof(rte_mbuf);
  return room <= page_fit ? page_fit : room;
}

rte_mempool* create_xsk_pool(const std::string& name, std::uint32_t n, std::uint32_t cache,
                             std::uint32_t room, int socket, std::string* error) {
  const std::uint32_t data_room = xsk_data_room(room, static_cast<std::uint32_t>(umem_page()));
  if (data_room > UINT16_MAX) {
    set_error(error, "an mbuf data room of " + std::to_string(data_room) + " B is over 65535");
    return nullptr;
  }
  // rte_pktmbuf_pool_create's steps, with RTE_MEMPOOL_F_NO_SPREAD: the
  // channel-spread padding would make a page-sized object a page and a line.
  rte_mempool* mp =
      rte_mempool_create_empty(name.c_str(), n, sizeof(rte_mbuf) + data_room, cache,
                               sizeof(rte_pktmbuf_pool_private), socket, RTE_MEMPOOL_F_NO_SPREAD);
  if (mp == nullptr) {
    set_error(error, std::strerror(rte_errno));
    return nullptr;
  }
  if (const int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
      rc != 0) {
    rte_mempool_free(mp);
    set_error(error, std::strerror(-rc));
    return nullptr;
  }
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = static_cast<std::uint16_t>(data_room);
  priv.mbuf_priv_size = 0;
  rte_pktmbuf_pool_init(mp, &priv);
  // rte_mempool_populate_default aligns its memory to a cache line only,
  // and the first object then starts on the next page, past the UMEM's
  // reach by the end: the pool's memory is a page-aligned memzone of
  // whole objects instead. The pool frees it (the first chunk's callback;
  // populate_virt gives the others none).
  const std::uint64_t obj = rte_mempool_calc_obj_size(mp->elt_size, mp->flags, nullptr);
  const std::uint64_t len = RTE_ALIGN_CEIL(obj * n, umem_page());
  const std::string mz_name = "xsk_" + name;
  const rte_memzone* mz = rte_memzone_reserve_aligned(mz_name.c_str(), len, socket, 0,
                                                      static_cast<unsigned>(umem_page()));
  if (mz == nullptr) {
    rte_mempool_free(mp);
    set_error(error, std::strerror(rte_errno));
    return nullptr;
  }
  const int added =
      rte_mempool_populate_virt(mp, static_cast<char*>(mz->addr), mz->len, mz->hugepage_sz,
                                free_memzone, const_cast<rte_memzone*>(mz));
  if (added < 0 || mp->populated_size != n) {
    if (added <= 0) rte_memzone_free(mz);
    rte_mempool_free(mp);
    set_error(error, std::strerror(added < 0 ? -added : ENOMEM));
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  const XskUmemFit fit = xsk_umem_fit(mp);
  if (!fit.fits()) {
    rte_mempool_free(mp);
    set_error(error, std::to_string(fit.outside) + " of " + std::to_string(fit.objects) +
                         " mbufs would lie outside the UMEM net_af_xdp registers (" +
                         std::to_string(fit.umem_bytes) + " B; the objects span " +
                         std::to_string(fit.span_bytes) + " B in " + std::to_string(fit.chunks) +
                         " memory chunks)");
    return nullptr;
  }
  return mp;
}

}  // namespace uroce::port
