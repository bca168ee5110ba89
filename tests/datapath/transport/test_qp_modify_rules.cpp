#include "datapath/transport/qp_modify_rules.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace uroce::transport {
namespace {

using namespace qp_attr;

constexpr std::uint32_t kRcInit = kState | kPkeyIndex | kPort | kAccessFlags;
constexpr std::uint32_t kUdInit = kState | kPkeyIndex | kPort | kQkey;
constexpr std::uint32_t kRcRtr =
    kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
constexpr std::uint32_t kRcRts =
    kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic;

TEST(CheckModify_Rc, PingpongSequenceIsLegal) {
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kReset, QpState::kInit, kRcInit), 0);
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kInit, QpState::kRtr, kRcRtr), 0);
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kRtr, QpState::kRts, kRcRts), 0);
}

TEST(CheckModify_Rc, EachMissingRequiredAttributeIsEinval) {
  for (std::uint32_t bit = kAv; bit <= kDestQpn; bit <<= 1) {
    if ((kRcRtr & bit) == 0) continue;
    EXPECT_EQ(check_modify(QpType::kRc, QpState::kInit, QpState::kRtr, kRcRtr & ~bit), EINVAL)
        << "missing bit " << bit;
  }
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kRtr, QpState::kRts, kRcRts & ~kRetryCnt), EINVAL);
}

TEST(CheckModify_Rc, DisallowedAttributeIsEinval) {
  // Q_Key is a UD attribute.
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kReset, QpState::kInit, kRcInit | kQkey), EINVAL);
  // SQ PSN cannot be set on the way to RTR.
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kInit, QpState::kRtr, kRcRtr | kSqPsn), EINVAL);
}

TEST(CheckModify_Rc, OptionalAttributesAccepted) {
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kInit, QpState::kRtr,
                         kRcRtr | kPkeyIndex | kAccessFlags),
            0);
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kRtr, QpState::kRts,
                         kRcRts | kMinRnrTimer | kCurState),
            0);
}

TEST(CheckModify_Rc, SkippingAStateIsEinval) {
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kReset, QpState::kRtr, kRcRtr), EINVAL);
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kInit, QpState::kRts, kRcRts), EINVAL);
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kErr, QpState::kRts, kState), EINVAL);
}

TEST(CheckModify_Rc, NoSqeToRts) {
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kSqe, QpState::kRts, kState), EINVAL);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kSqe, QpState::kRts, kState), 0);
}

TEST(CheckModify_AnyState, ResetAndErrAlwaysReachable) {
  for (int s = 0; s < kNumQpStates; ++s) {
    const auto cur = static_cast<QpState>(s);
    for (auto t : {QpType::kRc, QpType::kUc, QpType::kUd, QpType::kDci, QpType::kDct}) {
      EXPECT_EQ(check_modify(t, cur, QpState::kErr, kState), 0);
      EXPECT_EQ(check_modify(t, cur, QpState::kReset, kState), 0);
      EXPECT_EQ(check_modify(t, cur, QpState::kErr, kState | kQkey), EINVAL);
    }
  }
}

TEST(CheckModify_Ud, SequenceNeedsQkeyAndSqPsnOnly) {
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kReset, QpState::kInit, kUdInit), 0);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kReset, QpState::kInit, kUdInit & ~kQkey), EINVAL);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kInit, QpState::kRtr, kState), 0);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kInit, QpState::kRtr, kState | kAv), EINVAL);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kRtr, QpState::kRts, kState), EINVAL);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kRtr, QpState::kRts, kState | kSqPsn), 0);
}

TEST(CheckModify_NoStateBit, ModifiesWithinCurrentState) {
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kRts, QpState::kReset, kMinRnrTimer), 0);
  EXPECT_EQ(check_modify(QpType::kRc, QpState::kRts, QpState::kReset, kTimeout), EINVAL);
  EXPECT_EQ(check_modify(QpType::kUd, QpState::kRts, QpState::kReset, kQkey), 0);
}

constexpr std::uint32_t kDctInit = kState | kPkeyIndex | kPort | kAccessFlags;
constexpr std::uint32_t kDctRtr = kState | kMinRnrTimer | kAv | kPathMtu;
constexpr std::uint32_t kDciInit = kState | kPkeyIndex | kPort;
constexpr std::uint32_t kDciRtr = kState | kPathMtu;
constexpr std::uint32_t kDciRts =
    kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic;

// Every attribute bit but kState, one at a time.
template <class F>
void each_attr_bit(F f) {
  for (std::uint32_t bit = kCurState; bit <= kRateLimit; bit <<= 1) f(bit);
}

TEST(CheckModify_Dct, SequenceToRtrIsLegal) {
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kReset, QpState::kInit, kDctInit), 0);
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kInit, QpState::kRtr, kDctRtr), 0);
}

TEST(CheckModify_Dct, EachMissingRequiredAttributeIsEinval) {
  each_attr_bit([](std::uint32_t bit) {
    if ((kDctInit & bit) != 0) {
      EXPECT_EQ(check_modify(QpType::kDct, QpState::kReset, QpState::kInit, kDctInit & ~bit),
                EINVAL)
          << bit;
    }
    if ((kDctRtr & bit) != 0) {
      EXPECT_EQ(check_modify(QpType::kDct, QpState::kInit, QpState::kRtr, kDctRtr & ~bit), EINVAL)
          << bit;
    }
  });
}

TEST(CheckModify_Dct, AnyOtherAttributeIsEinval) {
  each_attr_bit([](std::uint32_t bit) {
    if ((kDctInit & bit) == 0) {
      EXPECT_EQ(check_modify(QpType::kDct, QpState::kReset, QpState::kInit, kDctInit | bit), EINVAL)
          << bit;
    }
    if ((kDctRtr & bit) == 0) {
      EXPECT_EQ(check_modify(QpType::kDct, QpState::kInit, QpState::kRtr, kDctRtr | bit), EINVAL)
          << bit;
    }
  });
}

TEST(CheckModify_Dct, NoRtsAndNoSameStateModify) {
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kRtr, QpState::kRts, kDciRts), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kRtr, QpState::kRts, kState), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kInit, QpState::kInit, kAccessFlags), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kRtr, QpState::kRtr, kMinRnrTimer), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDct, QpState::kReset, QpState::kRtr, kDctRtr), EINVAL);
}

TEST(CheckModify_Dci, SequenceToRtsIsLegal) {
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kReset, QpState::kInit, kDciInit), 0);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kInit, QpState::kRtr, kDciRtr), 0);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kInit, QpState::kRtr, kDciRtr | kAv), 0);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kRtr, QpState::kRts, kDciRts), 0);
}

TEST(CheckModify_Dci, EachMissingRequiredAttributeIsEinval) {
  each_attr_bit([](std::uint32_t bit) {
    if ((kDciInit & bit) != 0) {
      EXPECT_EQ(check_modify(QpType::kDci, QpState::kReset, QpState::kInit, kDciInit & ~bit),
                EINVAL)
          << bit;
    }
    if ((kDciRtr & bit) != 0) {
      EXPECT_EQ(check_modify(QpType::kDci, QpState::kInit, QpState::kRtr, kDciRtr & ~bit), EINVAL)
          << bit;
    }
    if ((kDciRts & bit) != 0) {
      EXPECT_EQ(check_modify(QpType::kDci, QpState::kRtr, QpState::kRts, kDciRts & ~bit), EINVAL)
          << bit;
    }
  });
}

TEST(CheckModify_Dci, AnyOtherAttributeIsEinval) {
  each_attr_bit([](std::uint32_t bit) {
    if ((kDciInit & bit) == 0) {
      EXPECT_EQ(check_modify(QpType::kDci, QpState::kReset, QpState::kInit, kDciInit | bit), EINVAL)
          << bit;
    }
    if (((kDciRtr | kAv) & bit) == 0) {
      EXPECT_EQ(check_modify(QpType::kDci, QpState::kInit, QpState::kRtr, kDciRtr | bit), EINVAL)
          << bit;
    }
    if ((kDciRts & bit) == 0) {
      EXPECT_EQ(check_modify(QpType::kDci, QpState::kRtr, QpState::kRts, kDciRts | bit), EINVAL)
          << bit;
    }
  });
  // A DCI has no destination QP and no receive side.
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kInit, QpState::kRtr, kDciRtr | kDestQpn), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kReset, QpState::kInit, kDciInit | kAccessFlags),
            EINVAL);
}

TEST(CheckModify_Dci, NoOtherTransition) {
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kRts, QpState::kRts, kTimeout), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kRts, QpState::kSqd, kState), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kSqe, QpState::kRts, kState), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kErr, QpState::kRts, kState), EINVAL);
  EXPECT_EQ(check_modify(QpType::kDci, QpState::kInit, QpState::kRts, kDciRts), EINVAL);
}

}  // namespace
}  // namespace uroce::transport
