// Vnic over the simulated link (tests, the in-process daemon of the session
// tests).
#include "datapath/engine/sim_port_io.h"
#include "datapath/engine/vnic/all.h"

namespace uroce::engine {
template class Vnic<SimPortIo>;
}  // namespace uroce::engine
