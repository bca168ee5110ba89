// The async_event op: ibv_get_async_event has read one record from the
// context's async pipe (written by uroced, or DEVICE_FATAL by the death
// watcher) and filled *ev; we count it against its object so that the
// object's destroy can wait for the application's ack (object_registry.h).
#include "verbs-provider/context.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

void async_event(ibv_context* ctx, ibv_async_event* ev) noexcept {
  ContextState* st = state_of(ctx);
  const void* element = event_element(*ev);
  if (element != nullptr) st->objects.note_event(element);
}

}  // namespace uroce::provider
