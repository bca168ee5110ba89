#include "datapath/port/rss_types.h"

#include <rte_ethdev.h>

#include <array>
#include <string>
#include <utility>

namespace uroce::port {

namespace {

// Every RSS type bit of DPDK 22.11's rte_ethdev.h but the level bits
// (RTE_ETH_RSS_LEVEL_*), which select the encapsulation level rather than
// a type and which no PMD here reports.
constexpr std::array<std::pair<std::uint64_t, const char*>, 46> kNames{{
    {RTE_ETH_RSS_IPV4, "ipv4"},
    {RTE_ETH_RSS_FRAG_IPV4, "ipv4-frag"},
    {RTE_ETH_RSS_NONFRAG_IPV4_TCP, "ipv4-tcp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_UDP, "ipv4-udp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_SCTP, "ipv4-sctp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_OTHER, "ipv4-other"},
    {RTE_ETH_RSS_IPV6, "ipv6"},
    {RTE_ETH_RSS_FRAG_IPV6, "ipv6-frag"},
    {RTE_ETH_RSS_NONFRAG_IPV6_TCP, "ipv6-tcp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_UDP, "ipv6-udp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_SCTP, "ipv6-sctp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_OTHER, "ipv6-other"},
    {RTE_ETH_RSS_L2_PAYLOAD, "l2-payload"},
    {RTE_ETH_RSS_IPV6_EX, "ipv6-ex"},
    {RTE_ETH_RSS_IPV6_TCP_EX, "ipv6-tcp-ex"},
    {RTE_ETH_RSS_IPV6_UDP_EX, "ipv6-udp-ex"},
    {RTE_ETH_RSS_PORT, "port"},
    {RTE_ETH_RSS_VXLAN, "vxlan"},
    {RTE_ETH_RSS_GENEVE, "geneve"},
    {RTE_ETH_RSS_NVGRE, "nvgre"},
    {RTE_ETH_RSS_GTPU, "gtpu"},
    {RTE_ETH_RSS_ETH, "eth"},
    {RTE_ETH_RSS_S_VLAN, "s-vlan"},
    {RTE_ETH_RSS_C_VLAN, "c-vlan"},
    {RTE_ETH_RSS_ESP, "esp"},
    {RTE_ETH_RSS_AH, "ah"},
    {RTE_ETH_RSS_L2TPV3, "l2tpv3"},
    {RTE_ETH_RSS_PFCP, "pfcp"},
    {RTE_ETH_RSS_PPPOE, "pppoe"},
    {RTE_ETH_RSS_ECPRI, "ecpri"},
    {RTE_ETH_RSS_MPLS, "mpls"},
    {RTE_ETH_RSS_IPV4_CHKSUM, "ipv4-chksum"},
    {RTE_ETH_RSS_L4_CHKSUM, "l4-chksum"},
    {RTE_ETH_RSS_L2TPV2, "l2tpv2"},
    {RTE_ETH_RSS_L3_PRE96, "l3-pre96"},
    {RTE_ETH_RSS_L3_PRE64, "l3-pre64"},
    {RTE_ETH_RSS_L3_PRE56, "l3-pre56"},
    {RTE_ETH_RSS_L3_PRE48, "l3-pre48"},
    {RTE_ETH_RSS_L3_PRE40, "l3-pre40"},
    {RTE_ETH_RSS_L3_PRE32, "l3-pre32"},
    {RTE_ETH_RSS_L2_DST_ONLY, "l2-dst-only"},
    {RTE_ETH_RSS_L2_SRC_ONLY, "l2-src-only"},
    {RTE_ETH_RSS_L4_DST_ONLY, "l4-dst-only"},
    {RTE_ETH_RSS_L4_SRC_ONLY, "l4-src-only"},
    {RTE_ETH_RSS_L3_DST_ONLY, "l3-dst-only"},
    {RTE_ETH_RSS_L3_SRC_ONLY, "l3-src-only"},
}};

}  // namespace

std::vector<std::string> rss_type_names(std::uint64_t types) {
  std::vector<std::string> out;
  for (unsigned b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((types & bit) == 0) continue;
    const char* name = nullptr;
    for (const auto& [mask, n] : kNames) {
      if (mask == bit) name = n;
    }
    out.emplace_back(name != nullptr ? name : "bit " + std::to_string(b));
  }
  return out;
}

}  // namespace uroce::port
