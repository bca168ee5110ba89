#include <gtest/gtest.h>

#include <thread>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;

TEST(AsyncEvent_Accounting, CountsEventsOfLiveObjectsOnly) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(4);
  ASSERT_NE(cq, nullptr);
  ibv_async_event ev{};
  ev.event_type = IBV_EVENT_CQ_ERR;
  ev.element.cq = cq;
  async_event(fc.ctx(), &ev);
  ibv_cq other{};
  ev.element.cq = &other;
  async_event(fc.ctx(), &ev);  // not ours: ignored, not dereferenced
  ev.event_type = IBV_EVENT_DEVICE_FATAL;
  ev.element.port_num = 0;
  async_event(fc.ctx(), &ev);
  // One CQ_ERR handed out: destroy waits for its ack.
  std::thread acker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pthread_mutex_lock(&cq->mutex);
    ++cq->async_events_completed;
    pthread_cond_signal(&cq->cond);
    pthread_mutex_unlock(&cq->mutex);
  });
  EXPECT_EQ(destroy_cq(cq), 0);
  acker.join();
}

}  // namespace
}  // namespace uroce::provider
