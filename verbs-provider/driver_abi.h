// The rdma-core provider ABI that liburoce-rdmav34.so is loaded through.
//
// Debian's libibverbs-dev ships only the public <infiniband/verbs.h>; the
// structures a provider exchanges with libibverbs (rdma-core's private
// libibverbs/driver.h) are not installed. These are our own declarations of
// the few of them we use, written from the layout of rdma-core v44 (Debian 12)
// and checked below with static_assert. docs/provider-abi.md explains which
// rdma-core releases share this layout and how loading and matching work.
//
// Invariants:
// - Every struct here is a C struct shared with libibverbs: standard layout,
//   trivially default constructible (libibverbs and we both calloc them), and
//   member order, types and sizes exactly as in rdma-core v44 on LP64.
// - Names mirror rdma-core's C names one to one (instead of the project's
//   CamelCase) so that each can be compared with the original by name.
// - Nothing that libibverbs owns is written by us unless a comment says so.
#pragma once

#include <infiniband/verbs.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace uroce::verbs_abi {

static_assert(sizeof(void*) == 8 && sizeof(long) == 8,
              "the layouts below are those of an LP64 build");

// The private ABI generation (IBVERBS_PRIVATE_34): rdma-core appends it to the
// registration function's name and uses it as the version node of all the
// private symbols, so a libibverbs of another generation refuses to load us.
inline constexpr int kPrivateAbi = 34;

// A node of the intrusive doubly linked list libibverbs keeps its devices on
// (ccan's list_node: two pointers). We never follow it.
struct list_node {
  list_node* next;
  list_node* prev;
};

// verbs_match_ent::kind.
enum match_kind : std::uint8_t {
  kMatchSentinel = 0,  // terminates a match table
  kMatchPci = 1,       // vendor/device against a "pci:v...d..." modalias
  kMatchModalias = 2,  // fnmatch(3) pattern against device/modalias
  kMatchDriverId = 3,  // kernel driver id; only known when netlink works
};

// One entry of a provider's match table; a table ends with a zeroed entry.
struct verbs_match_ent {
  void* driver_data;
  union {
    const char* modalias;     // kMatchModalias: an fnmatch(3) pattern
    std::uint64_t driver_id;  // kMatchDriverId
  } u;
  std::uint16_t vendor;  // kMatchPci
  std::uint16_t device;  // kMatchPci
  std::uint8_t kind;     // a match_kind
};

// Bits of verbs_sysfs_dev::flags: which lazily read fields are valid.
enum sysfs_dev_flags : unsigned {
  kSysfsReadModalias = 1u << 0,
  kSysfsReadNodeGuid = 1u << 1,
};

// What libibverbs found for one uverbs device (from netlink or sysfs), handed
// to match_device and alloc_device. Owned by libibverbs, read-only for us.
struct verbs_sysfs_dev {
  list_node entry;
  void* provider_data;
  const verbs_match_ent* match;         // the table entry that matched, if any
  unsigned flags;                       // sysfs_dev_flags
  char sysfs_name[IBV_SYSFS_NAME_MAX];  // "uverbsN"
  dev_t sysfs_cdev;                     // major:minor of /dev/infiniband/uverbsN
  char ibdev_name[IBV_SYSFS_NAME_MAX];  // "uroce0"
  char ibdev_path[IBV_SYSFS_PATH_MAX];  // <sysfs>/class/infiniband/uroce0
  char modalias[512];                   // device/modalias, once read
  std::uint64_t node_guid;              // host order, once read
  std::uint32_t driver_id;              // 0 (unknown) in sysfs mode
  ibv_node_type node_type;
  int ibdev_idx;            // -1 in sysfs mode
  std::uint32_t num_ports;  // 0 in sysfs mode
  std::uint32_t abi_ver;    // uverbsN/abi_version
  timespec time_created;    // mtime of ibdev_path
};

struct verbs_device;

// The provider's entry in libibverbs' driver list.
struct verbs_device_ops {
  const char* name;
  std::uint32_t match_min_abi_version;  // inclusive range of uverbsN/abi_version
  std::uint32_t match_max_abi_version;
  const verbs_match_ent* match_table;
  const verbs_device_ops** static_providers;  // static builds only; null
  // Called after the table lookup (which sets sysfs_dev->match) when set;
  // its answer replaces the table's.
  bool (*match_device)(verbs_sysfs_dev* sysfs_dev);
  // Takes ownership of cmd_fd (closes it on failure).
  verbs_context* (*alloc_context)(ibv_device* device, int cmd_fd, void* private_data);
  verbs_context* (*import_context)(ibv_device* device, int cmd_fd);
  verbs_device* (*alloc_device)(verbs_sysfs_dev* sysfs_dev);
  void (*uninit_device)(verbs_device* device);
};

// The provider-allocated device. libibverbs fills everything after alloc_device
// returns; the provider only allocates (zeroed) and later frees it.
struct verbs_device {
  ibv_device device;  // first: libibverbs converts by address
  const verbs_device_ops* ops;
  // A C11 atomic_int in libibverbs (the reference count). Declared as int so
  // the struct stays trivial; same size and alignment, and we never touch it.
  int refcount;
  list_node entry;
  verbs_sysfs_dev* sysfs;
  std::uint64_t core_support;
};

// verbs_mr::mr_type.
enum class verbs_mr_type : std::uint32_t {
  kMr = 0,
  kNullMr = 1,
  kImportedMr = 2,
  kDmabufMr = 3,
};

// The wrapper libibverbs expects around every ibv_mr (dereg_mr and rereg_mr
// receive it).
struct verbs_mr {
  ::ibv_mr ibv_mr;
  verbs_mr_type mr_type;
  int access;
};

// The wrappers libibverbs expects around the objects a provider allocates for
// QPs, CQs and SRQs. libibverbs converts between the public struct and the
// wrapper by address (the public struct is first), and reads comp_mask of a
// verbs_qp in ibv_qp_to_qp_ex.
struct verbs_xrcd;  // XRC domains: never created by uroce

// verbs_qp::comp_mask bits.
enum verbs_qp_mask : std::uint32_t {
  kVerbsQpXrcd = 1u << 0,
  kVerbsQpEx = 1u << 1,  // qp_ex is valid: ibv_qp_to_qp_ex returns it
};

struct verbs_qp {
  union {
    ::ibv_qp qp;
    ::ibv_qp_ex qp_ex;
  };
  std::uint32_t comp_mask;  // verbs_qp_mask
  verbs_xrcd* xrcd;
};

struct verbs_cq {
  union {
    ::ibv_cq cq;
    ::ibv_cq_ex cq_ex;
  };
};

struct verbs_srq {
  ::ibv_srq srq;
  ibv_srq_type srq_type;
  verbs_xrcd* xrcd;
  ::ibv_cq* cq;
  std::uint32_t srq_num;
};

// Every operation a provider can implement, in rdma-core v44 order
// (alphabetical). verbs_set_ops copies the non-null members; libibverbs
// supplies an ENOSYS/EOPNOTSUPP default for every null one.
struct verbs_context_ops {
  int (*advise_mr)(ibv_pd*, ibv_advise_mr_advice, std::uint32_t flags, ibv_sge*,
                   std::uint32_t num_sges);
  ibv_dm* (*alloc_dm)(ibv_context*, ibv_alloc_dm_attr*);
  ibv_mw* (*alloc_mw)(ibv_pd*, ibv_mw_type);
  ibv_mr* (*alloc_null_mr)(ibv_pd*);
  ibv_pd* (*alloc_parent_domain)(ibv_context*, ibv_parent_domain_init_attr*);
  ibv_pd* (*alloc_pd)(ibv_context*);
  ibv_td* (*alloc_td)(ibv_context*, ibv_td_init_attr*);
  void (*async_event)(ibv_context*, ibv_async_event*);
  int (*attach_counters_point_flow)(ibv_counters*, ibv_counter_attach_attr*, ibv_flow*);
  int (*attach_mcast)(ibv_qp*, const ibv_gid*, std::uint16_t lid);
  int (*bind_mw)(ibv_qp*, ibv_mw*, ibv_mw_bind*);
  int (*close_xrcd)(ibv_xrcd*);
  void (*cq_event)(ibv_cq*);
  ibv_ah* (*create_ah)(ibv_pd*, ibv_ah_attr*);
  ibv_counters* (*create_counters)(ibv_context*, ibv_counters_init_attr*);
  ibv_cq* (*create_cq)(ibv_context*, int cqe, ibv_comp_channel*, int comp_vector);
  ibv_cq_ex* (*create_cq_ex)(ibv_context*, ibv_cq_init_attr_ex*);
  ibv_flow* (*create_flow)(ibv_qp*, ibv_flow_attr*);
  ibv_flow_action* (*create_flow_action_esp)(ibv_context*, ibv_flow_action_esp_attr*);
  ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*);
  ibv_qp* (*create_qp_ex)(ibv_context*, ibv_qp_init_attr_ex*);
  ibv_rwq_ind_table* (*create_rwq_ind_table)(ibv_context*, ibv_rwq_ind_table_init_attr*);
  ibv_srq* (*create_srq)(ibv_pd*, ibv_srq_init_attr*);
  ibv_srq* (*create_srq_ex)(ibv_context*, ibv_srq_init_attr_ex*);
  ibv_wq* (*create_wq)(ibv_context*, ibv_wq_init_attr*);
  int (*dealloc_mw)(ibv_mw*);
  int (*dealloc_pd)(ibv_pd*);
  int (*dealloc_td)(ibv_td*);
  int (*dereg_mr)(verbs_mr*);
  int (*destroy_ah)(ibv_ah*);
  int (*destroy_counters)(ibv_counters*);
  int (*destroy_cq)(ibv_cq*);
  int (*destroy_flow)(ibv_flow*);
  int (*destroy_flow_action)(ibv_flow_action*);
  int (*destroy_qp)(ibv_qp*);
  int (*destroy_rwq_ind_table)(ibv_rwq_ind_table*);
  int (*destroy_srq)(ibv_srq*);
  int (*destroy_wq)(ibv_wq*);
  int (*detach_mcast)(ibv_qp*, const ibv_gid*, std::uint16_t lid);
  void (*free_context)(ibv_context*);
  int (*free_dm)(ibv_dm*);
  int (*get_srq_num)(ibv_srq*, std::uint32_t* srq_num);
  ibv_dm* (*import_dm)(ibv_context*, std::uint32_t dm_handle);
  ibv_mr* (*import_mr)(ibv_pd*, std::uint32_t mr_handle);
  ibv_pd* (*import_pd)(ibv_context*, std::uint32_t pd_handle);
  int (*modify_cq)(ibv_cq*, ibv_modify_cq_attr*);
  int (*modify_flow_action_esp)(ibv_flow_action*, ibv_flow_action_esp_attr*);
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int attr_mask);
  int (*modify_qp_rate_limit)(ibv_qp*, ibv_qp_rate_limit_attr*);
  int (*modify_srq)(ibv_srq*, ibv_srq_attr*, int attr_mask);
  int (*modify_wq)(ibv_wq*, ibv_wq_attr*);
  ibv_qp* (*open_qp)(ibv_context*, ibv_qp_open_attr*);
  ibv_xrcd* (*open_xrcd)(ibv_context*, ibv_xrcd_init_attr*);
  int (*poll_cq)(ibv_cq*, int num_entries, ibv_wc*);
  int (*post_recv)(ibv_qp*, ibv_recv_wr*, ibv_recv_wr** bad_wr);
  int (*post_send)(ibv_qp*, ibv_send_wr*, ibv_send_wr** bad_wr);
  int (*post_srq_ops)(ibv_srq*, ibv_ops_wr*, ibv_ops_wr** bad_op);
  int (*post_srq_recv)(ibv_srq*, ibv_recv_wr*, ibv_recv_wr** bad_wr);
  // attr_size is how much of *attr the caller owns: sizeof(ibv_device_attr)
  // for plain ibv_query_device, more for ibv_query_device_ex.
  int (*query_device_ex)(ibv_context*, const ibv_query_device_ex_input*, ibv_device_attr_ex*,
                         std::size_t attr_size);
  int (*query_ece)(ibv_qp*, ibv_ece*);
  // Always given a whole ibv_port_attr (libibverbs copies out what the
  // caller's older struct can hold).
  int (*query_port)(ibv_context*, std::uint8_t port_num, ibv_port_attr*);
  int (*query_qp)(ibv_qp*, ibv_qp_attr*, int attr_mask, ibv_qp_init_attr*);
  // Added in rdma-core 36 without a new private ABI generation: see
  // docs/provider-abi.md for why this bounds our range from below.
  int (*query_qp_data_in_order)(ibv_qp*, ibv_wr_opcode, std::uint32_t flags);
  int (*query_rt_values)(ibv_context*, ibv_values_ex*);
  int (*query_srq)(ibv_srq*, ibv_srq_attr*);
  int (*read_counters)(ibv_counters*, std::uint64_t* values, std::uint32_t ncounters,
                       std::uint32_t flags);
  ibv_mr* (*reg_dm_mr)(ibv_pd*, ibv_dm*, std::uint64_t dm_offset, std::size_t length,
                       unsigned access);
  ibv_mr* (*reg_dmabuf_mr)(ibv_pd*, std::uint64_t offset, std::size_t length, std::uint64_t iova,
                           int fd, int access);
  ibv_mr* (*reg_mr)(ibv_pd*, void* addr, std::size_t length, std::uint64_t hca_va, int access);
  int (*req_notify_cq)(ibv_cq*, int solicited_only);
  int (*rereg_mr)(verbs_mr*, int flags, ibv_pd*, void* addr, std::size_t length, int access);
  int (*resize_cq)(ibv_cq*, int cqe);
  int (*set_ece)(ibv_qp*, ibv_ece*);
  void (*unimport_dm)(ibv_dm*);
  void (*unimport_mr)(ibv_mr*);
  void (*unimport_pd)(ibv_pd*);
};

// The private functions of libibverbs we call (symbol version
// IBVERBS_PRIVATE_34). Only these four; no ibv_cmd_* (they talk to a kernel).
extern "C" {
// Adds `ops` to the driver list; called from our load-time constructor.
// `ops` must stay valid for the life of the process.
void verbs_register_driver_34(const verbs_device_ops* ops);
// callocs alloc_size bytes, initialises the verbs_context found at byte offset
// `context_offset` (passed as a pointer value) inside them, installs
// libibverbs' default ops and takes cmd_fd. Returns the start of the block,
// or null with errno set and cmd_fd closed.
void* _verbs_init_and_alloc_context(ibv_device* device, int cmd_fd, std::size_t alloc_size,
                                    verbs_context* context_offset, std::uint32_t driver_id);
// Undoes the above except the free: closes cmd_fd and async_fd.
void verbs_uninit_context(verbs_context* context);
void verbs_set_ops(verbs_context* context, const verbs_context_ops* ops);
}

// driver_id for _verbs_init_and_alloc_context: RDMA_DRIVER_UNKNOWN. It only
// selects driver-specific ioctl attributes, which we never send.
inline constexpr std::uint32_t kNoDriverId = 0;

// Allocates a zeroed DriverContext whose member at byte `vctx_offset` is the
// verbs_context, initialised by libibverbs. DriverContext must be a C-like
// type: libibverbs callocs it and frees it with free() (via our free_context).
template <class DriverContext>
DriverContext* alloc_driver_context(ibv_device* device, int cmd_fd, std::size_t vctx_offset) {
  static_assert(std::is_standard_layout_v<DriverContext> &&
                std::is_trivially_default_constructible_v<DriverContext> &&
                std::is_trivially_destructible_v<DriverContext>);
  void* block = _verbs_init_and_alloc_context(device, cmd_fd, sizeof(DriverContext),
                                              reinterpret_cast<verbs_context*>(
                                                  static_cast<std::uintptr_t>(vctx_offset)),
                                              kNoDriverId);
  return static_cast<DriverContext*>(block);
}

// ---- Layout checks -------------------------------------------------------
// The public header fixes ibv_device, ibv_context and verbs_context; these
// pin the rdma-core v44 values our structs are built around.
static_assert(sizeof(ibv_device) == 664);
static_assert(sizeof(ibv_context) == 328);
static_assert(sizeof(verbs_context) == 648);
// libibverbs finds a verbs_context from an ibv_context by subtracting this
// offset: the ibv_context must be the last member.
static_assert(offsetof(verbs_context, context) + sizeof(ibv_context) == sizeof(verbs_context));
static_assert(offsetof(verbs_context, context) == 320);

template <class T>
inline constexpr bool kCShared = std::is_standard_layout_v<T>&&
    std::is_trivially_default_constructible_v<T>&& std::is_trivially_copyable_v<T>;
static_assert(kCShared<verbs_match_ent> && kCShared<verbs_sysfs_dev> &&
              kCShared<verbs_device_ops> && kCShared<verbs_device> && kCShared<verbs_mr> &&
              kCShared<verbs_context_ops>);

static_assert(sizeof(list_node) == 16);

static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, device) == 18);
static_assert(offsetof(verbs_match_ent, kind) == 20);
static_assert(sizeof(verbs_match_ent) == 24);

static_assert(offsetof(verbs_sysfs_dev, flags) == 32);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);
static_assert(sizeof(verbs_sysfs_dev) == 992);

static_assert(offsetof(verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(sizeof(verbs_device_ops) == 72);

static_assert(sizeof(std::atomic<int>) == sizeof(int) && alignof(std::atomic<int>) == alignof(int));
static_assert(offsetof(verbs_device, ops) == sizeof(ibv_device));
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, entry) == 680);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(sizeof(verbs_device) == 712);

static_assert(offsetof(verbs_mr, mr_type) == sizeof(ibv_mr));
static_assert(sizeof(verbs_mr) == 56);

static_assert(kCShared<verbs_qp> && kCShared<verbs_cq> && kCShared<verbs_srq>);
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
static_assert(offsetof(verbs_qp, comp_mask) == sizeof(ibv_qp_ex));
static_assert(offsetof(verbs_qp, xrcd) == 360);
static_assert(sizeof(verbs_qp) == 368);
static_assert(sizeof(verbs_cq) == sizeof(ibv_cq_ex) && sizeof(verbs_cq) == 288);
static_assert(offsetof(verbs_srq, srq_type) == sizeof(ibv_srq));
static_assert(offsetof(verbs_srq, srq_num) == 152);
static_assert(sizeof(verbs_srq) == 160);

// 76 members, one pointer each; the index of each member we implement or
// that marks a boundary is pinned so a mis-sorted edit cannot go unnoticed.
inline constexpr std::size_t kOpsCount = 76;
static_assert(sizeof(verbs_context_ops) == kOpsCount * sizeof(void*));
static_assert(offsetof(verbs_context_ops, alloc_pd) == 5 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, dealloc_pd) == 26 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, free_context) == 39 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, poll_cq) == 53 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, query_device_ex) == 58 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, query_port) == 60 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, query_qp_data_in_order) == 62 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, reg_mr) == 68 * sizeof(void*));
static_assert(offsetof(verbs_context_ops, unimport_pd) == 75 * sizeof(void*));

}  // namespace uroce::verbs_abi
