// A memif peer that connects and leaves at once must not panic this
// process.
//
// DPDK's memif PMD (22.11; upstream's is the same) accepts a connection on
// EAL's interrupt thread (memif_listener_handler): it registers an
// interrupt callback for the new socket and then sends the peer its hello.
// When that send fails (the peer has already closed: EPIPE), it closes the
// socket and frees the channel but leaves the callback registered. EAL's
// interrupt thread rebuilds its epoll set from the registered descriptors
// after every registration, and panics when it cannot add one
// ("Error adding fd N epoll_ctl, Bad file descriptor"); had the number
// been reused meanwhile, it would watch somebody else's descriptor. Seen:
// uroced serving a memif port died so, beside busy loops, while embedded
// clients opened the device over memif and exited
// (tests/integration/verbs/memif_departures.sh).
//
// The guard routes the PMD's own calls of rte_intr_callback_register,
// rte_intr_callback_unregister and rte_intr_callback_unregister_pending
// (its GOT, got_patch.h) through functions that keep a table of the
// callbacks the PMD registered and has not unregistered, by descriptor.
// The PMD's close (memif_fd_guard.h) calls release_before_close, which
// unregisters those of the descriptor it closes: EAL forgets a descriptor
// before it is closed, as it must.
//
// The PMD also frees a handle whose callback it never unregistered: a
// server port's listener, when the last port on its socket closes
// (memif_socket_remove_device frees the socket and its handle, and neither
// unregisters the listener's callback nor closes its descriptor). EAL
// keeps its own copy of the handle, in EAL's heap like the PMD's, and
// runs the callback on the freed socket when a peer connects, or reads
// the copy after rte_eal_cleanup unmapped that heap (seen: EAL's interrupt
// thread of an exiting embedded program died in rte_intr_fd_get as it
// rebuilt its epoll set during the cleanup). The guard routes the PMD's
// rte_intr_instance_free too: a handle freed with callbacks registered
// through it loses them first, and its descriptor is closed (the handle
// was the PMD's only record of it). It relies on the fd guard
// (memif_fd_guard.h), which makes the table forget a descriptor the PMD
// closes: install that one first.
//
// Control path only; process-wide.
#pragma once

#include <rte_interrupts.h>

#include <cstdint>
#include <string>

namespace uroce::port {

// Points the loaded memif PMD's calls of the four functions at the guard.
// Idempotent (the first call's result is kept). 0, or a negative errno
// with `error` saying why (-ENOENT: no memif PMD loaded in this process).
// Install it before a memif port is probed: registrations made before are
// not in the table.
int install_memif_intr_guard(std::string* error);

// Callbacks the PMD left registered on a descriptor it closed, that the
// guard unregistered, since the process started.
std::uint64_t memif_intr_callbacks_released();

// Unregisters every callback the PMD registered and has not unregistered,
// and closes their descriptors; returns how many callbacks EAL removed.
// For when no memif port is left (EthPort::close of the last one): the
// PMD then keeps nothing that could run them, but may have left a peer it
// had accepted and that had not yet said which port it wanted (its
// channel points at the socket the PMD freed with that socket's last
// port). Call it with EAL's interrupt thread held (intr_thread_hold.h) or
// on it, never under EAL's interrupt lock.
int release_orphaned_memif_callbacks();

// Descriptors the guard closed for the PMD (a handle freed with callbacks
// still registered through it, a callback left when the last port closed),
// since the process started.
std::uint64_t memif_intr_handles_closed();

// Registrations not kept in the table because it was full (they are made
// all the same, and are left as the PMD leaves them), since the start.
std::uint64_t memif_intr_registrations_untracked();

namespace detail {

// What the PMD's calls reach once the guard is installed: each calls
// EAL's function and updates the table by its result.
int guarded_register(const rte_intr_handle* handle, rte_intr_callback_fn cb, void* arg) noexcept;
int guarded_unregister(const rte_intr_handle* handle, rte_intr_callback_fn cb, void* arg) noexcept;
int guarded_unregister_pending(const rte_intr_handle* handle, rte_intr_callback_fn cb, void* arg,
                               rte_intr_unregister_callback_fn ucb) noexcept;

// Unregisters the callbacks in the table for `fd` and returns how many.
// A callback whose source is running (this is its own callback closing
// its descriptor) is marked for removal once it returns instead. Must not
// be called with EAL's interrupt lock held: it never is for a descriptor
// in the table, since the table forgets a callback before the PMD's
// unregister call reaches EAL, and EAL calls the PMD back under that lock
// (memif_intr_unregister_handler, which closes) only after that.
int release_before_close(int fd) noexcept;

// What the PMD's rte_intr_instance_free reaches: unregisters the callbacks
// in the table registered through `handle` on its descriptor (none for a
// handle whose descriptor the PMD closed first), closes the descriptor if
// there were any, and frees the handle. Never calls EAL's registration
// functions for a handle freed under EAL's interrupt lock (the PMD's
// unregister handler), since the table forgot those callbacks before the
// PMD asked EAL to remove them.
void guarded_instance_free(rte_intr_handle* handle) noexcept;

}  // namespace detail

}  // namespace uroce::port
