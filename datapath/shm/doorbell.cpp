#include "datapath/shm/doorbell.h"

namespace uroce::shm {

const char* to_string(DoorbellError e) {
  switch (e) {
    case DoorbellError::kOk: return "ok";
    case DoorbellError::kBadCount: return "doorbell count out of range";
    case DoorbellError::kTooSmall: return "memory shorter than the doorbell page";
    case DoorbellError::kMisaligned: return "doorbell page not 64-byte aligned";
  }
  return "unknown doorbell error";
}

std::size_t DoorbellGeometry::bytes() const {
  if (levels == 0) return 0;
  const std::uint32_t last = levels - 1;
  return (static_cast<std::size_t>(offset[last]) + words[last]) * sizeof(std::uint64_t);
}

DoorbellError make_doorbell_geometry(std::uint32_t count, DoorbellGeometry* out) {
  if (count == 0 || count > kMaxDoorbells) return DoorbellError::kBadCount;
  // Words per level from the leaves up, until one word covers the level.
  std::uint32_t up[kMaxDoorbellLevels] = {};
  std::uint32_t levels = 0;
  std::uint64_t n = count;
  do {
    n = (n + 63) / 64;
    up[levels++] = static_cast<std::uint32_t>(n);
  } while (n > 1);
  DoorbellGeometry g;
  g.count = count;
  g.levels = levels;
  constexpr std::uint32_t kWordsPerLine = kDoorbellAlign / sizeof(std::uint64_t);
  std::uint32_t at = 0;
  for (std::uint32_t l = 0; l < levels; ++l) {
    g.words[l] = up[levels - 1 - l];
    g.offset[l] = at;
    at += (g.words[l] + kWordsPerLine - 1) / kWordsPerLine * kWordsPerLine;
  }
  *out = g;
  return DoorbellError::kOk;
}

namespace detail {

DoorbellError DoorbellCore::attach(void* mem, std::size_t len, const DoorbellGeometry& g) {
  if (g.count == 0 || g.levels == 0 || g.levels > kMaxDoorbellLevels) {
    return DoorbellError::kBadCount;
  }
  if (reinterpret_cast<std::uintptr_t>(mem) % kDoorbellAlign != 0) {
    return DoorbellError::kMisaligned;
  }
  if (mem == nullptr || len < g.bytes()) return DoorbellError::kTooSmall;
  words_ = static_cast<std::uint64_t*>(mem);
  geo_ = g;
  return DoorbellError::kOk;
}

}  // namespace detail

}  // namespace uroce::shm
