#include "datapath/transport/mr_table.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <set>
#include <vector>

namespace uroce::transport {
namespace {

constexpr std::uint32_t kQpn = 0x11;

struct MrTableFixture : ::testing::Test {
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(4096);
  MrTable t{16};
  MrDesc desc(std::uint32_t acc, PdHandle pd = 1) {
    return MrDesc{pd, 0x10000, buf.size(), acc, buf.data()};
  }
  std::uint32_t bindable_mr(PdHandle pd = 1) {
    int err = 0;
    return t.reg(desc(access::kLocalWrite | access::kMwBind, pd), &err);
  }
  // A type-2 window bound over [0x10100, 0x10200) of `mr` for remote write.
  std::uint32_t bound_mw2(std::uint32_t mr, std::uint32_t qpn = kQpn, PdHandle pd = 1) {
    int err = 0;
    const std::uint32_t mw = t.alloc_mw(pd, MwType::kType2, &err);
    MwBind b{mw, mr, mw + 1, 0x10100, 0x100, access::kRemoteWrite | access::kRemoteRead};
    std::uint32_t key = 0;
    EXPECT_EQ(t.bind_mw(b, pd, qpn, &key), MrError::kOk);
    return key;
  }
};

TEST_F(MrTableFixture, Reg_KeysNameTheirSlotAndAreNotInOrder) {
  int err = -1;
  const auto k1 = t.reg(desc(access::kLocalWrite), &err);
  EXPECT_EQ(err, 0);
  const auto k2 = t.reg(desc(access::kLocalWrite), &err);
  // Capacity 16: four index bits name the slot, the other twenty are a tag.
  EXPECT_EQ((k1 >> 8) & 0xF, 1u);
  EXPECT_EQ((k2 >> 8) & 0xF, 2u);
  EXPECT_EQ(t.live(), 2u);
}

TEST_F(MrTableFixture, Reg_KeysHaveRandomBitsFromTheSeed) {
  MrTable a{1024, 7}, b{1024, 7}, c{1024, 8};
  std::set<std::uint32_t> bytes;
  std::vector<std::uint32_t> ka, kc;
  std::vector<std::uint8_t> mem(64);
  for (int i = 0; i < 64; ++i) {
    int err = 0;
    const MrDesc d{1, 0, mem.size(), 0, mem.data()};
    const std::uint32_t x = a.reg(d, &err);
    EXPECT_EQ(b.reg(d, &err), x);  // same seed, same keys
    ka.push_back(x);
    kc.push_back(c.reg(d, &err));
    bytes.insert(x & 0xFF);
  }
  EXPECT_NE(ka, kc);
  EXPECT_GT(bytes.size(), 32u);  // not handed out in order
}

TEST_F(MrTableFixture, Reg_RemoteWriteWithoutLocalWriteIsEinval) {
  int err = 0;
  EXPECT_EQ(t.reg(desc(access::kRemoteWrite), &err), 0u);
  EXPECT_EQ(err, EINVAL);
  EXPECT_EQ(t.reg(desc(access::kRemoteAtomic), &err), 0u);
  EXPECT_EQ(err, EINVAL);
}

TEST_F(MrTableFixture, Reg_FullTableIsEnomem) {
  int err = 0;
  for (int i = 0; i < 15; ++i) ASSERT_NE(t.reg(desc(0), &err), 0u);
  EXPECT_EQ(t.reg(desc(0), &err), 0u);
  EXPECT_EQ(err, ENOMEM);
}

TEST_F(MrTableFixture, Dereg_StaleKeyRejectedAfterReuse) {
  int err = 0;
  const auto k1 = t.reg(desc(access::kLocalWrite | access::kRemoteRead), &err);
  ASSERT_EQ(t.dereg(k1), 0);
  EXPECT_EQ(t.dereg(k1), EINVAL);
  const auto k2 = t.reg(desc(access::kLocalWrite | access::kRemoteRead), &err);
  EXPECT_EQ((k2 >> 8) & 0xF, (k1 >> 8) & 0xF);  // the same slot
  EXPECT_NE(k2, k1);                            // a new key
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k1, 1, 0x10000, 8, access::kRemoteRead, &p), MrError::kBadKey);
  EXPECT_EQ(t.resolve(k2, 1, 0x10000, 8, access::kRemoteRead, &p), MrError::kOk);
}

TEST_F(MrTableFixture, Resolve_ChecksPdBeforeKey) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteWrite), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10010, 16, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(p, buf.data() + 0x10);
  EXPECT_EQ(t.resolve(k, 2, 0x10010, 16, access::kRemoteWrite, &p), MrError::kWrongPd);
  // Another PD learns nothing of the key byte: a wrong byte is kWrongPd too.
  EXPECT_EQ(t.resolve(k ^ 1, 2, 0x10010, 16, access::kRemoteWrite, &p), MrError::kWrongPd);
  EXPECT_EQ(t.resolve(k ^ 1, 1, 0x10010, 16, access::kRemoteWrite, &p), MrError::kBadKey);
  EXPECT_EQ(t.resolve(k, 1, 0x10010, 16, access::kRemoteRead, &p), MrError::kAccessDenied);
  EXPECT_EQ(t.resolve(0, 1, 0x10010, 16, access::kRemoteWrite, &p), MrError::kBadKey);
}

TEST_F(MrTableFixture, Resolve_BoundsAndWrap) {
  int err = 0;
  const std::uint32_t w = access::kLocalWrite | access::kRemoteWrite;
  const auto k = t.reg(desc(w), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4096, w, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10FFF, 1, w, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10FFF, 2, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, 0xFFFF, 1, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4097, w, &p), MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve(k, 1, 0x10001, UINT64_MAX, w, &p), MrError::kOutOfBounds);
}

TEST_F(MrTableFixture, Resolve_ZeroLengthChecksNothing) {
  std::uint8_t* p = reinterpret_cast<std::uint8_t*>(1);
  EXPECT_EQ(t.resolve(0xdead, 9, 0, 0, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(p, nullptr);
}

TEST_F(MrTableFixture, Resolve_AtomicNeedsAlignment) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteAtomic), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10008, 8, access::kRemoteAtomic, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10004, 8, access::kRemoteAtomic, &p), MrError::kMisaligned);
}

TEST_F(MrTableFixture, Invalidate_MrIsRefusedAndKeepsWorking) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite | access::kRemoteWrite), &err);
  EXPECT_EQ(t.invalidate(k, 1), MrError::kNotWindow);
  EXPECT_EQ(t.invalidate(k, 2), MrError::kWrongPd);
  EXPECT_EQ(t.invalidate(k ^ 0x80, 1), MrError::kBadKey);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kLocalWrite, &p), MrError::kOk);
  const MwCounters& c = t.mw_counters();
  EXPECT_EQ(c.invalidates, 0u);
  EXPECT_EQ(c.inv_refused[static_cast<int>(MrError::kNotWindow)], 1u);
  EXPECT_EQ(c.inv_refused[static_cast<int>(MrError::kWrongPd)], 1u);
  EXPECT_EQ(c.inv_refused[static_cast<int>(MrError::kBadKey)], 1u);
}

TEST_F(MrTableFixture, Rereg_ChangesAccessKeepsKey) {
  int err = 0;
  const auto k = t.reg(desc(access::kLocalWrite), &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kRemoteRead, &p), MrError::kAccessDenied);
  ASSERT_EQ(t.rereg(k, desc(access::kLocalWrite | access::kRemoteRead)), 0);
  EXPECT_EQ(t.resolve(k, 1, 0x10000, 4, access::kRemoteRead, &p), MrError::kOk);
  EXPECT_EQ(t.rereg(k, desc(access::kRemoteWrite)), EINVAL);
}

TEST_F(MrTableFixture, BindMw_Type2WindowGrantsOnlyItsRangeOnItsQp) {
  const std::uint32_t mr = bindable_mr();
  const std::uint32_t mw = bound_mw2(mr);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10100, 0x100, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(p, buf.data() + 0x100);
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x100FF, 2, access::kRemoteWrite, &p),
            MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x101FF, 2, access::kRemoteWrite, &p),
            MrError::kOutOfBounds);
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10100, 8, access::kRemoteAtomic, &p),
            MrError::kAccessDenied);
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn + 1, 0x10100, 8, access::kRemoteWrite, &p),
            MrError::kWrongQp);
  EXPECT_EQ(t.resolve_remote(mw, 2, kQpn, 0x10100, 8, access::kRemoteWrite, &p), MrError::kWrongPd);
  // A window key is no lkey.
  EXPECT_EQ(t.resolve(mw, 1, 0x10100, 8, access::kLocalWrite, &p), MrError::kBadKey);
  EXPECT_EQ(t.mw_counters().binds, 1u);
}

TEST_F(MrTableFixture, BindMw_TakesTheNewKeyByte) {
  const std::uint32_t mr = bindable_mr();
  int err = 0;
  const std::uint32_t mw = t.alloc_mw(1, MwType::kType2, &err);
  MwBind b{mw, mr, (mw & ~0xFFu) | ((mw + 5) & 0xFFu), 0x10000, 16, access::kRemoteRead};
  std::uint32_t key = 0;
  ASSERT_EQ(t.bind_mw(b, 1, kQpn, &key), MrError::kOk);
  EXPECT_EQ(key, (mw & ~0xFFu) | ((mw + 5) & 0xFFu));
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10000, 8, access::kRemoteRead, &p), MrError::kBadKey);
}

TEST_F(MrTableFixture, BindMw_RefusesWhatRxeRefuses) {
  int err = 0;
  const std::uint32_t mr = bindable_mr();
  const std::uint32_t plain = t.reg(desc(access::kLocalWrite), &err);
  const std::uint32_t ro = t.reg(desc(access::kMwBind), &err);
  const std::uint32_t other_pd = bindable_mr(2);
  const std::uint32_t mw2 = t.alloc_mw(1, MwType::kType2, &err);
  const std::uint32_t mw1 = t.alloc_mw(1, MwType::kType1, &err);
  std::uint32_t key = 0;
  auto bind = [&](std::uint32_t mw, std::uint32_t m, std::uint64_t addr, std::uint64_t len,
                  std::uint32_t acc, PdHandle pd = 1) {
    return t.bind_mw(MwBind{mw, m, mw, addr, len, acc}, pd, kQpn, &key);
  };
  const std::uint32_t rw = access::kRemoteWrite;
  EXPECT_EQ(bind(mw2, plain, 0x10000, 8, rw), MrError::kAccessDenied);  // C10-73
  EXPECT_EQ(bind(mw2, ro, 0x10000, 8, rw), MrError::kAccessDenied);     // C10-74
  EXPECT_EQ(bind(mw2, mr, 0x10000, 4097, rw), MrError::kOutOfBounds);   // C10-75
  EXPECT_EQ(bind(mw2, mr, 0xFFFF, 8, rw), MrError::kOutOfBounds);       // C10-75
  EXPECT_EQ(bind(mw2, other_pd, 0x10000, 8, rw), MrError::kWrongPd);    // MR of another PD
  EXPECT_EQ(bind(mw2, mr, 0x10000, 8, rw, 2), MrError::kWrongPd);       // C10-72
  EXPECT_EQ(bind(mw2, mr, 0x10000, 0, rw), MrError::kOutOfBounds);      // o10-37.2.40
  EXPECT_EQ(bind(mw1, mr, 0x10000, 8, rw | access::kZeroBased), MrError::kAccessDenied);
  EXPECT_EQ(bind(mw2, mr, 0x10000, 8, 1u << 12), MrError::kAccessDenied);  // unknown flag
  ASSERT_EQ(bind(mw2, mr, 0x10000, 8, rw), MrError::kOk);
  EXPECT_EQ(bind(mw2, mr, 0x10000, 8, rw), MrError::kInvalidated);  // o10-37.2.30
  EXPECT_EQ(t.mw_counters().bind_refused[static_cast<int>(MrError::kAccessDenied)], 4u);
}

TEST_F(MrTableFixture, BindMw_Type1BindsUnbindsAndRebinds) {
  int err = 0;
  const std::uint32_t mr = bindable_mr();
  std::uint32_t mw = t.alloc_mw(1, MwType::kType1, &err);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10000, 8, access::kRemoteRead, &p),
            MrError::kInvalidated);
  ASSERT_EQ(t.bind_mw(MwBind{mw, mr, mw + 1, 0x10000, 64, access::kRemoteRead}, 1, kQpn, &mw),
            MrError::kOk);
  // Type 1 is not tied to a QP.
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn + 7, 0x10000, 8, access::kRemoteRead, &p), MrError::kOk);
  EXPECT_EQ(t.dereg(mr), EINVAL);                       // a window is bound to it
  EXPECT_EQ(t.invalidate(mw, 1), MrError::kNotWindow);  // o10-37.2.26
  ASSERT_EQ(t.bind_mw(MwBind{mw, 0, mw + 1, 0, 0, 0}, 1, kQpn, &mw), MrError::kOk);  // unbind
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10000, 8, access::kRemoteRead, &p),
            MrError::kInvalidated);
  EXPECT_EQ(t.dereg(mr), 0);
}

TEST_F(MrTableFixture, BindMw_ZeroBasedWindowTakesOffsets) {
  int err = 0;
  const std::uint32_t mr = bindable_mr();
  const std::uint32_t mw = t.alloc_mw(1, MwType::kType2, &err);
  std::uint32_t key = 0;
  const std::uint32_t acc = access::kRemoteRead | access::kZeroBased;
  ASSERT_EQ(t.bind_mw(MwBind{mw, mr, mw, 0x10200, 0x80, acc}, 1, kQpn, &key), MrError::kOk);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve_remote(key, 1, kQpn, 0x10, 8, access::kRemoteRead, &p), MrError::kOk);
  EXPECT_EQ(p, buf.data() + 0x210);
  EXPECT_EQ(t.resolve_remote(key, 1, kQpn, 0x7C, 8, access::kRemoteRead, &p),
            MrError::kOutOfBounds);
}

TEST_F(MrTableFixture, Invalidate_Type2WindowOfThePdOnly) {
  const std::uint32_t mr = bindable_mr();
  const std::uint32_t mw = bound_mw2(mr);
  EXPECT_EQ(t.invalidate(mw, 2), MrError::kWrongPd);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10100, 8, access::kRemoteWrite, &p), MrError::kOk);
  EXPECT_EQ(t.invalidate(mw, 1), MrError::kOk);
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10100, 8, access::kRemoteWrite, &p),
            MrError::kInvalidated);
  EXPECT_EQ(t.invalidate(mw, 1), MrError::kOk);  // a free window stays free (rxe)
  // The MR is untouched and, with no window bound, can go.
  EXPECT_EQ(t.resolve(mr, 1, 0x10100, 8, access::kLocalWrite, &p), MrError::kOk);
  EXPECT_EQ(t.dereg(mr), 0);
  EXPECT_EQ(t.mw_counters().invalidates, 2u);
}

TEST_F(MrTableFixture, DeallocMw_UnbindsAndFreesTheKey) {
  const std::uint32_t mr = bindable_mr();
  const std::uint32_t mw = bound_mw2(mr);
  EXPECT_EQ(t.mws_live(), 1u);
  // The owner frees it by the key it was allocated with (another key byte).
  EXPECT_EQ(t.dealloc_mw(mw ^ 0x5A), 0);
  EXPECT_EQ(t.mws_live(), 0u);
  std::uint8_t* p = nullptr;
  EXPECT_EQ(t.resolve_remote(mw, 1, kQpn, 0x10100, 8, access::kRemoteWrite, &p), MrError::kBadKey);
  EXPECT_EQ(t.dealloc_mw(mw), EINVAL);
  EXPECT_EQ(t.dealloc_mw(mr), EINVAL);  // an MR is no window
  EXPECT_EQ(t.dereg(mr), 0);
}

TEST(MrErrorName, NamesEveryError) {
  EXPECT_STREQ(mr_error_name(MrError::kOutOfBounds), "out_of_bounds");
  EXPECT_STREQ(mr_error_name(MrError::kMisaligned), "misaligned");
  EXPECT_STREQ(mr_error_name(MrError::kWrongQp), "wrong_qp");
  EXPECT_STREQ(mr_error_name(MrError::kNotWindow), "not_window");
}

}  // namespace
}  // namespace uroce::transport
