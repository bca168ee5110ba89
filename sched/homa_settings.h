// A device's settings for the Homa-like scheduler (issue 15; docs/homa.md):
// one struct for the receiver's GrantScheduler (grant_scheduler.h) and the
// sender's GrantGate (datapath/transport/grant_gate.h, filled from it by
// datapath/policy/homa.h), so that the facts they share (the
// unscheduled bytes, the priorities) have one definition. uroced's config
// keys and the testbed's host keys fill it; first_bad_field() is the one
// validation both use.
#pragma once

#include <cstdint>
#include <string_view>

#include "sched/grant_scheduler.h"

namespace uroce::sched::homa {

struct HomaSettings {
  bool enabled = false;
  // Network priorities used (1..8: 0 .. priorities-1), and how many of the
  // top ones carry unscheduled bytes (the rest carry granted bytes; with
  // one priority everything shares it).
  std::uint8_t priorities = 8;
  std::uint8_t unsched_priorities = 4;
  // What a sender sends of a message before any grant, and what the
  // receiver keeps granted ahead of what arrived (about one
  // bandwidth-delay product each).
  std::uint32_t unsched_bytes = 60'000;
  std::uint32_t rtt_bytes = 60'000;
  std::uint32_t grant_increment = 4'096;
  std::uint32_t overcommit = 4;
  std::uint64_t max_incoming = 400'000;
  std::uint32_t fifo_permille = 50;
  std::uint64_t resend_ns = 1'000'000;
  std::uint64_t grant_timeout_ns = 4'000'000;
  std::uint32_t max_timeouts = 3;
  std::uint32_t max_messages = 4'096;
  // The receiver recomputes its unscheduled cutoffs after this many
  // messages seen (then halves the histogram's counts).
  std::uint32_t cutoffs_every = 1'024;

  GrantConfig grant_config() const {
    GrantConfig g;
    g.rtt_bytes = rtt_bytes;
    g.unsched_bytes = unsched_bytes;
    g.grant_increment = grant_increment;
    g.overcommit = overcommit;
    g.max_incoming = max_incoming;
    g.fifo_permille = fifo_permille;
    g.priorities = priorities;
    g.unsched_priorities = unsched_levels();
    g.resend_ns = resend_ns;
    g.max_messages = max_messages;
    return g;
  }
  // Unscheduled levels actually used: all priorities when there is one,
  // otherwise at most priorities - 1 (one is left for granted bytes).
  std::uint8_t unsched_levels() const {
    if (priorities <= 1) return 1;
    return unsched_priorities < priorities ? unsched_priorities
                                           : static_cast<std::uint8_t>(priorities - 1);
  }
  // The network priority of scheduled level `level` (0 = lowest).
  std::uint8_t scheduled_priority(std::uint8_t level) const {
    const std::uint8_t levels = priorities > unsched_levels()
                                    ? static_cast<std::uint8_t>(priorities - unsched_levels())
                                    : 1;
    return level < levels ? level : static_cast<std::uint8_t>(levels - 1);
  }
  // The highest priority (unscheduled level 0, and control packets).
  std::uint8_t top_priority() const { return static_cast<std::uint8_t>(priorities - 1); }

  // The first field out of range, or "" when the settings are usable.
  std::string_view first_bad_field() const {
    if (priorities < 1 || priorities > 8) return "homa_priorities";
    if (unsched_priorities < 1 || unsched_priorities > 8) return "homa_unsched_priorities";
    if (unsched_bytes < 1) return "homa_unsched_bytes";
    // A grant advances at least grant_increment unless it ends the message:
    // with less room per message (rtt_bytes) or in all (max_incoming) the
    // scheduler never grants, and every long message waits out the sender's
    // max_timeouts grant timeouts.
    if (rtt_bytes < 1 || rtt_bytes < grant_increment) return "homa_rtt_bytes";
    if (overcommit < 1 || overcommit > 64) return "homa_overcommit";
    if (max_incoming < 1 || max_incoming < grant_increment) return "homa_max_incoming";
    if (fifo_permille > 1000) return "homa_fifo_permille";
    if (max_messages < 1) return "homa_max_messages";
    if (resend_ns < 1) return "homa_resend_us";
    if (grant_timeout_ns <= resend_ns) return "homa_grant_timeout_us";
    if (max_timeouts < 1) return "homa_max_timeouts";
    if (cutoffs_every < 1) return "homa_cutoffs_every";
    return {};
  }
};

}  // namespace uroce::sched::homa
