// The QPs, CQs and SRQs of one context that async events may name, and the
// event accounting destroy verbs wait on (what the kernel's uverbs does for
// rxe: a destroy returns only once the application has acknowledged every
// event it was handed for that object).
//
// The daemon writes ib_uverbs_async_event_desc records straight into the
// context's async pipe, with element = the object's user_handle (the
// ibv_qp*, ibv_cq* or ibv_srq* the application sees). ibv_get_async_event
// reads one and calls our async_event op, which counts it against the
// object when the element is a live object of this context (looked up
// here, never dereferenced first); ibv_ack_async_event then bumps the
// object's events_completed, and destroy waits for the two to agree.
//
// Limitation: a record already in the pipe when its object is destroyed
// still reaches the application with a dangling element (the kernel
// deletes such records; a pipe cannot). The daemon discards events of
// objects being destroyed, so this needs an event racing the destroy.
//
// Threading: add/remove/note_event take the registry's mutex; counters are
// atomics read by the destroy wait.
#pragma once

#include <infiniband/verbs.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace uroce::provider {

struct EventTarget {
  EventTarget* prev = nullptr;
  EventTarget* next = nullptr;
  const void* element = nullptr;           // what events name (ibv_qp* ...)
  std::atomic<std::uint32_t> reported{0};  // async events handed out
};

class ObjectRegistry {
 public:
  ObjectRegistry();
  ~ObjectRegistry();
  ObjectRegistry(const ObjectRegistry&) = delete;
  ObjectRegistry& operator=(const ObjectRegistry&) = delete;

  void add(EventTarget* t);
  void remove(EventTarget* t);
  // Counts one event against the live object `element`; false when no live
  // object of this context has that address.
  bool note_event(const void* element);
  std::size_t size();

 private:
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  EventTarget head_;  // sentinel of a circular list
};

// The element an async event names, or null for device and port events.
const void* event_element(const ibv_async_event& ev);

// Blocks until *completed (guarded by `mu`, bumped by libibverbs' ack
// functions which signal `cond`) equals every counter in `reported`.
void wait_events_acked(pthread_mutex_t* mu, pthread_cond_t* cond, const std::uint32_t* completed,
                       const std::atomic<std::uint32_t>& reported);

}  // namespace uroce::provider
