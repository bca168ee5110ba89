#include "verbs-provider/object_registry.h"

namespace uroce::provider {

ObjectRegistry::ObjectRegistry() { head_.prev = head_.next = &head_; }

ObjectRegistry::~ObjectRegistry() { pthread_mutex_destroy(&mu_); }

void ObjectRegistry::add(EventTarget* t) {
  pthread_mutex_lock(&mu_);
  t->next = head_.next;
  t->prev = &head_;
  head_.next->prev = t;
  head_.next = t;
  pthread_mutex_unlock(&mu_);
}

void ObjectRegistry::remove(EventTarget* t) {
  pthread_mutex_lock(&mu_);
  if (t->next != nullptr) {
    t->prev->next = t->next;
    t->next->prev = t->prev;
    t->next = t->prev = nullptr;
  }
  pthread_mutex_unlock(&mu_);
}

bool ObjectRegistry::note_event(const void* element) {
  if (element == nullptr) return false;
  bool found = false;
  pthread_mutex_lock(&mu_);
  for (EventTarget* t = head_.next; t != &head_; t = t->next) {
    if (t->element == element) {
      t->reported.fetch_add(1, std::memory_order_acq_rel);
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&mu_);
  return found;
}

std::size_t ObjectRegistry::size() {
  std::size_t n = 0;
  pthread_mutex_lock(&mu_);
  for (EventTarget* t = head_.next; t != &head_; t = t->next) ++n;
  pthread_mutex_unlock(&mu_);
  return n;
}

const void* event_element(const ibv_async_event& ev) {
  switch (ev.event_type) {
    case IBV_EVENT_CQ_ERR: return ev.element.cq;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: return ev.element.qp;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: return ev.element.srq;
    default: return nullptr;
  }
}

void wait_events_acked(pthread_mutex_t* mu, pthread_cond_t* cond, const std::uint32_t* completed,
                       const std::atomic<std::uint32_t>& reported) {
  pthread_mutex_lock(mu);
  while (*completed != reported.load(std::memory_order_acquire)) pthread_cond_wait(cond, mu);
  pthread_mutex_unlock(mu);
}

}  // namespace uroce::provider
