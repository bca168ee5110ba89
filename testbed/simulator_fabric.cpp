// The fabric's moving parts: route tables installed in the switch models,
// links going down and up ([[link_change]]), and the routes computed again
// after a change when [routing] reconverge_us is set (scenario.h).
#include "testbed/simulator.h"

#include <cassert>

namespace uroce::testbed {

void Simulator::apply_routes() {
  for (std::uint32_t s = 0; s < topo_.num_switches; ++s) {
    for (std::uint16_t d = 0; d < topo_.num_hosts; ++d) {
      const std::vector<std::uint16_t>& g = topo_.routes[s][d];
      if (g.empty()) {
        switches_[s].clear_route(d);
      } else {
        // resolve() and fill_routes() keep groups within the model's size
        // and ports within the switch.
        const bool ok = switches_[s].set_route_group(d, g);
        assert(ok);
        (void)ok;
      }
    }
  }
}

void Simulator::link_change(std::uint32_t i) {
  const ResolvedLinkChange& c = topo_.link_changes[i];
  dirs_[2 * c.link].set_down(!c.up);
  dirs_[2 * c.link + 1].set_down(!c.up);
  link_applied_[i] = now_;
  if (sc_.reconverge_ns != kNever && now_ + sc_.reconverge_ns <= sc_.duration_ns) {
    q_.push(now_ + sc_.reconverge_ns, EventKind::kReconverge, i);
  }
  // Nothing to kick: a down link's senders go on sending into it (their
  // frames are lost on arrival), as a switch does until its routes change.
}

void Simulator::reconverge(std::uint32_t i) {
  // A link's two directions go down and up together (link_change).
  std::vector<bool> down(topo_.links.size());
  for (std::size_t l = 0; l < down.size(); ++l) down[l] = dirs_[2 * l].down();
  fill_routes(sc_, topo_, down);
  apply_routes();
  reconverged_[i] = now_;
}

}  // namespace uroce::testbed
