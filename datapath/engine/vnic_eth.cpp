// Vnic over a DPDK ethdev (the daemon's ports).
#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/vnic/all.h"

namespace uroce::engine {
template class Vnic<EthPortIo>;
}  // namespace uroce::engine
