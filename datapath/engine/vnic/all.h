// Every Vnic definition (vnic.h). Included only by the explicit-instantiation
// units, one per port adapter (vnic_eth.cpp, vnic_sim.cpp,
// testbed/engine_vnic.cpp).
#pragma once

#include "datapath/engine/vnic/ah.h"
#include "datapath/engine/vnic/dc.h"
#include "datapath/engine/vnic/doorbells.h"
#include "datapath/engine/vnic/entries.h"
#include "datapath/engine/vnic/events.h"
#include "datapath/engine/vnic/gsi.h"
#include "datapath/engine/vnic/mcast.h"
#include "datapath/engine/vnic/objects.h"
#include "datapath/engine/vnic/policy_host.h"
#include "datapath/engine/vnic/rx.h"
#include "datapath/engine/vnic/sched.h"
#include "datapath/engine/vnic/stages.h"
#include "datapath/engine/vnic/timers.h"
#include "datapath/engine/vnic/tx.h"
