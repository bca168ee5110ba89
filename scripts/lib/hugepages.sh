# shellcheck shell=bash
# Reserving 2 MiB hugepages for a benchmark run, and giving them back.
#
# Why (docs/first-lap.md, "A lap of 4 KiB pages after a sleep"): a memif
# client in zero-copy mode puts the ring's packet buffers in its own mbufs,
# which with hugepages live in 2 MiB pages; in copy mode (no hugepages) the
# PMD's region is 4 KiB pages, a lap of the default rings touches 2,048 of
# them in each process, and on this VM the first touch of each after the
# process slept costs about as much as a message. Benchmarks must not
# depend on whether the machine happened to have hugepages set: they
# reserve what they use and say which mode each figure ran in.
#
# Sourced; needs root to change the count. Functions:
#   hugepages_free              the free 2 MiB hugepages (0 if unknown)
#   hugepages_reserve N         makes at least N free (raises nr_hugepages
#                               by the shortfall); the first call remembers
#                               the count it found. Returns 1 (and says why
#                               on stderr) when the kernel gave fewer.
#   hugepages_restore           puts back the count the first reserve found
#                               (pages still in use stay as surplus until
#                               freed, as the kernel does)

_HUGEPAGES_NR=/proc/sys/vm/nr_hugepages
_HUGEPAGES_SAVED=

hugepages_free() {
  awk '/^HugePages_Free:/ { print $2; found = 1 } END { if (!found) print 0 }' /proc/meminfo
}

hugepages_reserve() {
  local want=$1 free nr
  free=$(hugepages_free)
  [ "$free" -ge "$want" ] && return 0
  nr=$(cat "$_HUGEPAGES_NR")
  [ -n "$_HUGEPAGES_SAVED" ] || _HUGEPAGES_SAVED=$nr
  echo $((nr + want - free)) >"$_HUGEPAGES_NR" 2>/dev/null || true
  free=$(hugepages_free)
  if [ "$free" -lt "$want" ]; then
    echo "hugepages: asked for $want free 2 MiB pages, the kernel has $free" >&2
    return 1
  fi
  return 0
}

hugepages_restore() {
  [ -n "$_HUGEPAGES_SAVED" ] || return 0
  echo "$_HUGEPAGES_SAVED" >"$_HUGEPAGES_NR" 2>/dev/null || true
  _HUGEPAGES_SAVED=
}
