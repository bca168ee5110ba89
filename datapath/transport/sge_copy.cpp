#include "datapath/transport/sge_copy.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace uroce::transport {

namespace {

// Walks the SGE list over [offset, offset + total) and calls fn(host, pos, n)
// for each piece; resolves every piece before calling fn on any of them, so
// an error leaves memory untouched.
template <typename Fn>
SgeCopyResult walk(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                   std::uint64_t offset, std::uint64_t total, std::uint32_t need, Fn&& fn) {
  SgeCopyResult r;
  if (total == 0) return r;
  // Pass 1: validate; pass 2: copy. Two passes keep the no-partial-write
  // guarantee without buffering.
  for (int pass = 0; pass < 2; ++pass) {
    std::uint64_t skip = offset;
    std::uint64_t left = total;
    std::uint64_t pos = 0;
    for (std::uint32_t i = 0; i < num_sge && left > 0; ++i) {
      const Sge& s = sge[i];
      if (skip >= s.length) {
        skip -= s.length;
        continue;
      }
      const std::uint64_t n = std::min<std::uint64_t>(s.length - skip, left);
      std::uint8_t* host = nullptr;
      const MrError e = mrs.resolve(s.lkey, pd, s.addr + skip, n, need, &host);
      if (e != MrError::kOk) {
        r.err = e;
        return r;
      }
      if (pass == 1) fn(host, pos, n);
      pos += n;
      left -= n;
      skip = 0;
    }
    if (left > 0) {
      r.too_long = true;
      return r;
    }
  }
  return r;
}

}  // namespace

SgeCopyResult gather(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                     std::uint64_t offset, std::span<std::uint8_t> dst) {
  return walk(mrs, pd, sge, num_sge, offset, dst.size(), 0,
              [&](std::uint8_t* host, std::uint64_t pos, std::uint64_t n) {
                std::memcpy(dst.data() + pos, host, n);
              });
}

SgeCopyResult gather(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                     std::uint64_t offset, wire::PayloadWriter& w) {
  // walk() hands the pieces over in order, so each lands at w.written().
  return walk(mrs, pd, sge, num_sge, offset, w.size(), 0,
              [&](std::uint8_t* host, std::uint64_t, std::uint64_t n) { w.put(host, n); });
}

SgeCopyResult scatter(const MrTable& mrs, PdHandle pd, const Sge* sge, std::uint32_t num_sge,
                      std::uint64_t offset, std::span<const std::uint8_t> src) {
  return walk(mrs, pd, sge, num_sge, offset, src.size(), access::kLocalWrite,
              [&](std::uint8_t* host, std::uint64_t pos, std::uint64_t n) {
                std::memcpy(host, src.data() + pos, n);
              });
}

SgeCopyResult scatter_chained(const MrTable& mrs, PdHandle pd, const Sge* sge,
                              std::uint32_t num_sge, std::uint64_t offset,
                              const wire::Payload& src) {
  assert(!src.contiguous());
  return walk(mrs, pd, sge, num_sge, offset, src.size(), access::kLocalWrite,
              [&](std::uint8_t* host, std::uint64_t pos, std::uint64_t n) {
                src.copy_out(pos, host, n);
              });
}

}  // namespace uroce::transport
