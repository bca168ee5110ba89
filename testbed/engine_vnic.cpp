// The Vnic over the testbed's frame-store port (engine hosts): its explicit
// instantiation (datapath/engine/vnic.h).
#include "datapath/engine/vnic/all.h"
#include "testbed/engine_port.h"

namespace uroce::engine {
template class Vnic<testbed::EnginePortIo>;
}  // namespace uroce::engine
