// Registration with libibverbs: the device ops (match table, device and
// context allocation) and the context ops table every uroce context gets.
//
// libibverbs dlopens liburoce-rdmav34.so (from /etc/libibverbs.d/uroce.driver
// or RDMAV_DRIVERS), our constructor registers kDeviceOps, and each device
// whose class/infiniband/<dev>/device/modalias matches "uroce:*" and whose
// uverbsN/abi_version is 1 becomes a uroce device (docs/provider-abi.md).
#include <cstdlib>

#include "verbs-provider/ops.h"

namespace uroce::provider {

namespace {

using namespace uroce::verbs_abi;

// A modalias match cannot claim a kernel device that happens to be named
// uroce*; uroced writes "uroce:vnic" into the device's modalias.
constexpr char kModaliasPattern[] = "uroce:*";

// uverbsN/abi_version of a uroce device: our own number (no kernel driver).
constexpr std::uint32_t kUverbsAbi = 1;

verbs_device* alloc_device(verbs_sysfs_dev* /*sysfs_dev*/) noexcept {
  // Zeroed, as libibverbs requires; it fills the ibv_device part itself.
  return static_cast<verbs_device*>(std::calloc(1, sizeof(verbs_device)));
}

void uninit_device(verbs_device* dev) noexcept { std::free(dev); }

constexpr verbs_match_ent kMatchTable[] = {
    {.driver_data = nullptr, .u = {.modalias = kModaliasPattern}, .kind = kMatchModalias},
    {},
};

constexpr verbs_device_ops kDeviceOps = {
    .name = "uroce",
    .match_min_abi_version = kUverbsAbi,
    .match_max_abi_version = kUverbsAbi,
    .match_table = kMatchTable,
    .alloc_context = alloc_context,
    .alloc_device = alloc_device,
    .uninit_device = uninit_device,
};

__attribute__((constructor)) void register_uroce_driver() { verbs_register_driver_34(&kDeviceOps); }

}  // namespace

const verbs_device_ops* device_ops() noexcept { return &kDeviceOps; }

}  // namespace uroce::provider
