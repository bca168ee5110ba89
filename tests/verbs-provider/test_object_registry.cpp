#include "verbs-provider/object_registry.h"

#include <gtest/gtest.h>

#include <thread>

namespace uroce::provider {
namespace {

TEST(ObjectRegistry_NoteEvent, CountsOnlyLiveObjects) {
  ObjectRegistry reg;
  int qp_obj = 0, cq_obj = 0;
  EventTarget qp, cq;
  qp.element = &qp_obj;
  cq.element = &cq_obj;
  reg.add(&qp);
  reg.add(&cq);
  EXPECT_EQ(reg.size(), 2u);
  EXPECT_TRUE(reg.note_event(&qp_obj));
  EXPECT_TRUE(reg.note_event(&qp_obj));
  EXPECT_TRUE(reg.note_event(&cq_obj));
  EXPECT_EQ(qp.reported.load(), 2u);
  EXPECT_EQ(cq.reported.load(), 1u);
  int stranger = 0;
  EXPECT_FALSE(reg.note_event(&stranger));
  EXPECT_FALSE(reg.note_event(nullptr));
  reg.remove(&qp);
  reg.remove(&qp);  // twice is harmless
  EXPECT_FALSE(reg.note_event(&qp_obj));
  EXPECT_EQ(qp.reported.load(), 2u);
  EXPECT_EQ(reg.size(), 1u);
}

TEST(EventElement_Types, MapsEachEventToItsObject) {
  ibv_qp qp{};
  ibv_cq cq{};
  ibv_srq srq{};
  ibv_async_event ev{};
  ev.event_type = IBV_EVENT_QP_FATAL;
  ev.element.qp = &qp;
  EXPECT_EQ(event_element(ev), &qp);
  ev.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
  EXPECT_EQ(event_element(ev), &qp);
  ev.event_type = IBV_EVENT_CQ_ERR;
  ev.element.cq = &cq;
  EXPECT_EQ(event_element(ev), &cq);
  ev.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
  ev.element.srq = &srq;
  EXPECT_EQ(event_element(ev), &srq);
  ev.event_type = IBV_EVENT_DEVICE_FATAL;
  ev.element.port_num = 0;
  EXPECT_EQ(event_element(ev), nullptr);
  ev.event_type = IBV_EVENT_PORT_ACTIVE;
  ev.element.port_num = 1;
  EXPECT_EQ(event_element(ev), nullptr);
}

TEST(WaitEventsAcked, ReturnsOnceCompletedCatchesUp) {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  std::uint32_t completed = 0;
  std::atomic<std::uint32_t> reported{2};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    wait_events_acked(&mu, &cond, &completed, reported);
    done = true;
  });
  for (int i = 0; i < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(done.load());
    // What ibv_ack_async_event does.
    pthread_mutex_lock(&mu);
    ++completed;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&mu);
  }
  waiter.join();
  EXPECT_TRUE(done.load());
  // Nothing outstanding: returns at once.
  wait_events_acked(&mu, &cond, &completed, reported);
}

}  // namespace
}  // namespace uroce::provider
