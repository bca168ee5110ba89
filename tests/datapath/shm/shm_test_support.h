// Helpers shared by the shm tests: ring memory with guard bytes around it, so
// a test can prove nothing was written outside the ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace uroce::shm::testing {

class GuardedBuffer {
 public:
  static constexpr std::size_t kGuard = 256;
  static constexpr std::byte kPattern{0xA5};

  explicit GuardedBuffer(std::size_t n)
      : raw_(static_cast<std::byte*>(::operator new (n + 2 * kGuard, std::align_val_t{64}))),
        n_(n) {
    std::memset(raw_, static_cast<int>(kPattern), kGuard);
    std::memset(raw_ + kGuard, 0, n_);
    std::memset(raw_ + kGuard + n_, static_cast<int>(kPattern), kGuard);
  }
  ~GuardedBuffer() { ::operator delete (raw_, std::align_val_t{64}); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::byte* data() { return raw_ + kGuard; }
  std::size_t size() const { return n_; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (raw_[i] != kPattern || raw_[kGuard + n_ + i] != kPattern) return false;
    }
    return true;
  }
  bool contains(const void* p, std::size_t len) const {
    const auto* b = static_cast<const std::byte*>(p);
    return b >= raw_ + kGuard && b + len <= raw_ + kGuard + n_;
  }

 private:
  std::byte* raw_;
  std::size_t n_;
};

}  // namespace uroce::shm::testing
