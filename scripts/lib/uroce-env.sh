# shellcheck shell=bash
# shellcheck disable=SC2034 # globals are read by the scripts that source this
# Environment helpers for scripts that run uroced and stock verbs programs:
# scripts/demo.sh, scripts/pyverbs.sh and tests/integration/verbs/*.sh.
# Source it; do not run it.
#
#   uroce_env_init TAG          temp dir, unique id, cleanup traps (call first)
#   uroce_find_tools BUILD_DIR  sets UROCED, UROCE_CTL, UROCE_RUN
#   uroce_daemon_start NAME [--netns NS] [--lcore N] [--poll MODE] -- UROCED-ARGS...
#   uroce_daemon_stop NAME      SIGTERM, expects exit 0 and a clean run dir
#   uroce_daemon_kill NAME      SIGKILL (leftovers go at cleanup)
#   uroce_daemon_log_tail NAME [LINES]
#   uroce_daemon_schedstat NAME  CPU and run-queue wait (ns) of its threads
#   uroce_netns_add NS, uroce_veth_dpdk ..., uroce_veth_ip ...
#   uroce_bg VAR [--netns NS] [--timeout SECS] [--pdeathsig SIG] OUT ERR -- CMD...
#   uroce_wait PID VAR, uroce_kill_group SIG PGID, uroce_stop_group PGID [SECS],
#   uroce_next_port VAR
#   uroce_at_exit CMD...        runs CMD in the EXIT trap, once every process is gone
#
# Everything created is recorded and removed by the EXIT trap, whatever
# path the script leaves by (error, signal, Meson's timeout): processes
# started here, daemons and their /dev/infiniband nodes, network
# namespaces, DPDK runtime dirs and the temp dir (kept with UROCE_KEEP=1).
#
# Names are unique per script run (TAG plus the PID), so two runs, or a run
# beside a daemon somebody else started, never collide.

UROCE_ID=
UROCE_TAG=
UROCE_TMP=
UROCED=${UROCED:-}
UROCE_CTL=${UROCE_CTL:-}
UROCE_RUN=${UROCE_RUN:-}
# Daemon bookkeeping, keyed by the daemon's NAME.
declare -gA UROCE_DAEMON_PID=() UROCE_DAEMON_RUN=() UROCE_DAEMON_LOG=()
declare -gA UROCE_DAEMON_PREFIX=() UROCE_DAEMON_NODES=()
UROCE_DAEMONS=()
# Process groups started by uroce_bg and not yet reaped (PID = PGID).
declare -gA _UROCE_LIVE=()
_UROCE_NETNS=()
_UROCE_PORT_NEXT=
_UROCE_AT_EXIT=()

uroce_err() { echo "$*" >&2; }

uroce_env_init() {
  UROCE_TAG=$1
  UROCE_ID=$$
  # World-traversable: robustness tests run clients as another user, and
  # those need the run dir (socket, sysfs tree) below it.
  UROCE_TMP=$(mktemp -d "/tmp/uroce_${UROCE_TAG}.XXXXXX")
  chmod 755 "$UROCE_TMP"
  # TCP ports for the programs' out-of-band exchange: a per-run block below
  # the kernel's ephemeral range (32768 and up by default), so that no
  # client socket of anybody holds one of them.
  _UROCE_PORT_NEXT=$((12000 + (UROCE_ID % 200) * 100))
  trap _uroce_on_exit EXIT
  # A signal exits through the same EXIT trap, in a hurry: Meson's test
  # runner sends SIGTERM on a timeout and SIGKILL 0.5 s later.
  trap '_UROCE_SIGNALED=1; exit 143' TERM
  trap '_UROCE_SIGNALED=1; exit 130' INT
  trap '_UROCE_SIGNALED=1; exit 129' HUP
}
_UROCE_SIGNALED=0

# uroce_next_port VAR: a fresh port number into VAR (not in a $(...)
# subshell, which would lose the increment).
# Skips ports that have a socket in any state here, TIME_WAIT included: a
# server that binds without SO_REUSEADDR would fail on those.
uroce_next_port() {
  local __p=$_UROCE_PORT_NEXT
  while [ -n "$(ss -Htan "( sport = :$__p or dport = :$__p )" 2>/dev/null)" ]; do
    __p=$((__p + 1))
  done
  _UROCE_PORT_NEXT=$((__p + 1))
  printf -v "$1" '%s' "$__p"
}

# Tools of a build directory. Environment variables of the same name win,
# so a script can run against an installed copy.
uroce_find_tools() {
  local build=$1 name var path cand
  for name in uroced uroce-ctl uroce-run; do
    case $name in
      uroced) var=UROCED ;;
      uroce-ctl) var=UROCE_CTL ;;
      uroce-run) var=UROCE_RUN ;;
    esac
    path=${!var:-}
    if [ -z "$path" ]; then
      for cand in "$build/apps/$name/$name" "$build/apps/uroced/$name" \
        "$build/verbs-provider/$name" "$build/apps/$name"; do
        if [ -f "$cand" ] && [ -x "$cand" ]; then
          path=$cand
          break
        fi
      done
    fi
    if [ -z "$path" ]; then
      path=$(find "$build" -maxdepth 4 -name "$name" -type f -perm -u+x 2>/dev/null | sed -n 1p)
    fi
    if [ -z "$path" ]; then
      uroce_err "cannot find $name under $build (build it first: ninja -C $build)"
      return 1
    fi
    printf -v "$var" '%s' "$(realpath "$path")"
  done
}

# uroce_bg VAR [--netns NS] [--timeout SECS] [--pdeathsig SIG] OUT ERR -- CMD...
# Runs CMD in the background as its own process group (so the whole tree,
# whatever wrappers it goes through, can be signalled as one), with
# stdout/stderr to OUT/ERR, optionally inside a network namespace and under
# a hard time limit. The PID (= process group) goes to the variable VAR.
# Should this shell die without cleaning up (SIGKILL), the kernel sends SIG
# (default KILL) to the command: nothing outlives the script.
uroce_bg() {
  # Locals are __-prefixed: the caller's VAR must not be shadowed.
  local __var=$1
  shift
  local __ns="" __limit="" __sig=KILL __out __err
  while [ $# -gt 0 ]; do
    case $1 in
      --netns) __ns=$2; shift 2 ;;
      --timeout) __limit=$2; shift 2 ;;
      --pdeathsig) __sig=$2; shift 2 ;;
      *) break ;;
    esac
  done
  __out=$1 __err=$2
  shift 2
  [ "$1" = "--" ] && shift
  local -a __cmd=()
  # A new process group first: it then holds timeout, ip and the program.
  # Not a new session (setsid): the kernel's autogroup gives every session
  # a scheduling group of its own, and sched_yield does not hand a CPU to a
  # thread of another group, so a daemon and the program that share its
  # core would trade it only at the scheduler's slices (docs/tails.md,
  # "Yields across scheduling groups"). perl is Essential in Debian. The
  # parent-death signal survives exec (of ip, uroce-run, the program); the
  # one below timeout covers the program that timeout forks.
  __cmd+=(perl -e 'setpgrp(0, 0) or die "setpgrp: $!\n"; exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n"'
    setpriv --pdeathsig "$__sig")
  [ -n "$__limit" ] && __cmd+=(timeout -k 3 "$__limit" setpriv --pdeathsig KILL)
  [ -n "$__ns" ] && [ "$__ns" != "-" ] && __cmd+=(ip netns exec "$__ns")
  __cmd+=("$@")
  if [ "$__out" = "$__err" ]; then
    "${__cmd[@]}" </dev/null >"$__out" 2>&1 &
  else
    "${__cmd[@]}" </dev/null >"$__out" 2>"$__err" &
  fi
  local __pid=$!
  _UROCE_LIVE[$__pid]=1
  printf -v "$__var" '%s' "$__pid"
}

# uroce_wait PID VAR: waits for a process started by uroce_bg and stores its
# exit status in VAR (124 or 137: its time limit ended it, i.e. it hung).
# Not in a $(...) subshell: only this shell can wait for its children.
uroce_wait() {
  local __rc=0
  # The braces also silence bash's "Killed" job notice for a killed child.
  { wait "$1" || __rc=$?; } 2>/dev/null
  unset "_UROCE_LIVE[$1]"
  printf -v "$2" '%s' "$__rc"
}

# Sends SIG to the process group PGID (as started by uroce_bg). Refuses
# anything that is not such a group: "kill -- -0" would hit our own group.
uroce_kill_group() {
  local sig=$1 pgid=${2:-}
  [[ $pgid =~ ^[0-9]+$ ]] && [ "$pgid" -gt 1 ] || return 0
  [ -n "${_UROCE_LIVE[$pgid]:-}" ] || return 0
  kill "-$sig" -- "-$pgid" 2>/dev/null || true
}

# uroce_stop_group PGID [SECS]: SIGTERM to a group of uroce_bg's, and
# SIGKILL after SECS (default 3) if its leader still runs. A hung program
# under uroce-run --embedded gets the chance to be cleaned up after: the
# launcher passes SIGTERM on and, once the program ended, removes its run
# directory, /dev/infiniband nodes and EAL runtime directory, which a
# SIGKILL to the whole group would leave behind.
uroce_stop_group() {
  local pgid=${1:-} secs=${2:-3}
  uroce_kill_group TERM "$pgid"
  local deadline=$((SECONDS + secs))
  while uroce_running "$pgid" && [ $SECONDS -lt "$deadline" ]; do
    sleep 0.1
  done
  uroce_running "$pgid" && uroce_kill_group KILL "$pgid"
  return 0
}

# True while process PID runs: not gone and not a zombie (a child of ours
# that exited stays a zombie until waited for, and kill -0 succeeds on it).
uroce_running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# True once FILE contains a line matching the ERE, false after SECS or once
# process PID is gone without writing it.
uroce_wait_for_line() {
  local file=$1 regex=$2 secs=$3 pid=${4:-}
  local deadline=$((SECONDS + secs))
  while [ $SECONDS -lt "$deadline" ]; do
    grep -qE -- "$regex" "$file" 2>/dev/null && return 0
    if [ -n "$pid" ] && ! uroce_running "$pid"; then
      grep -qE -- "$regex" "$file" 2>/dev/null && return 0
      return 1
    fi
    sleep 0.1
  done
  return 1
}

# _uroce_wait_ctl RUN COMMAND PATTERN SECS [PID]: true once
# `uroce-ctl --json COMMAND` of the uroced of run dir RUN matches PATTERN,
# false after SECS or once process PID is gone.
_uroce_wait_ctl() {
  local run=$1 cmd=$2 pattern=$3 secs=$4 pid=${5:-}
  local deadline=$((SECONDS + secs))
  while [ $SECONDS -lt "$deadline" ]; do
    grep -q "$pattern" <<<"$("$UROCE_CTL" --run-dir "$run" --json "$cmd" 2>/dev/null)" &&
      return 0
    if [ -n "$pid" ] && ! uroce_running "$pid"; then return 1; fi
    sleep 0.1
  done
  return 1
}

# True once the uroced of run dir RUN has an rdma_cm listener (uroce-ctl
# status: cm.listeners), false after SECS or once process PID is gone.
uroce_wait_cm_listen() { _uroce_wait_ctl "$1" status '"listeners":[1-9]' "$2" "${3:-}"; }

# True once a client of the uroced of run dir RUN has a QP attached to a
# multicast group (uroce-ctl clients: objects.qps[].mcast_groups), false
# after SECS or once process PID is gone. A multicast sender started before
# the receiver's QP joins would send to nobody.
uroce_wait_mcast_join() { _uroce_wait_ctl "$1" clients '"mcast_groups":[1-9]' "$2" "${3:-}"; }

# uroce_cm_resolve RUN IP SECS: makes rdma_cm's address resolution toward
# IP (through the uroced of run dir RUN) done before the programs under
# test need it: they give rdma_resolve_addr 2 s (rping, perftest -R), and
# on a loaded machine the first ARP exchange can take longer. Connects
# rping to a port nobody listens on until it is rejected
# (RDMA_CM_EVENT_REJECTED: the address was resolved and the REQ reached
# the peer); the neighbour entry stays while the test's connections use
# it. False after SECS.
uroce_cm_resolve() {
  local run=$1 ip=$2 secs=$3 port out
  local deadline=$((SECONDS + secs))
  uroce_next_port port
  out=$UROCE_TMP/cm-resolve-$ip.out
  while [ $SECONDS -lt "$deadline" ]; do
    timeout 20 "$UROCE_RUN" --run-dir "$run" rping -c -a "$ip" -p "$port" -C 1 >"$out" 2>&1
    grep -q 'RDMA_CM_EVENT_REJECTED' "$out" && return 0
    sleep 0.2  # rping may fail at once (the daemon still starting): no spin
  done
  return 1
}

# True once something listens on TCP PORT in namespace NS ("-" = this one).
uroce_wait_listen() {
  local ns=$1 port=$2 secs=$3 pid=${4:-}
  local deadline=$((SECONDS + secs))
  local -a ss_cmd=(ss -Hltn "sport = :$port")
  [ "$ns" != "-" ] && ss_cmd=(ip netns exec "$ns" "${ss_cmd[@]}")
  while [ $SECONDS -lt "$deadline" ]; do
    [ -n "$("${ss_cmd[@]}" 2>/dev/null)" ] && return 0
    if [ -n "$pid" ] && ! uroce_running "$pid"; then
      return 1
    fi
    sleep 0.05
  done
  return 1
}

# ---- daemons ---------------------------------------------------------------

# uroce_daemon_start NAME [--netns NS] [--lcore N] [--poll busy|backoff]
#                    [--ready-timeout SECS] [--eal-args TOML-ARRAY]
#                    [--daemon-key 'KEY = VALUE']... [--toml TEXT] [--]
#                    EXTRA-UROCED-ARGS...
# Writes a config with a run dir and EAL file prefix of its own (and
# eal.args, when given, e.g. '["--no-pci", "--in-memory"]'; each
# --daemon-key line in [daemon], e.g. 'metrics_listen = "unix:/x"'; TEXT
# after the rest, e.g. [[device]] tables that a SIGHUP may re-read), starts
# uroced and waits for its "uroced: ready" line. Devices come from the extra
# arguments (--device SPEC...) or from TEXT. Sets UROCE_DAEMON_RUN[NAME] etc.
uroce_daemon_start() {
  local name=$1
  shift
  local ns="-" lcore=1 poll=backoff ready=30 eal_args='' daemon_keys='' toml=''
  while [ $# -gt 0 ]; do
    case $1 in
      --netns) ns=$2; shift 2 ;;
      --eal-args) eal_args="args = $2"; shift 2 ;;
      --daemon-key) daemon_keys+="$2"$'\n'; shift 2 ;;
      --toml) toml=$2; shift 2 ;;
      --lcore) lcore=$2; shift 2 ;;
      --poll) poll=$2; shift 2 ;;
      --ready-timeout) ready=$2; shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  local dir=$UROCE_TMP/daemon-$name
  local run=$dir/run
  local prefix=uroce_${UROCE_TAG}_${name}_$UROCE_ID
  mkdir -p "$dir"
  chmod 755 "$dir"
  cat >"$dir/uroced.toml" <<EOF
# Written by scripts/lib/uroce-env.sh for one test run.
[daemon]
run_dir = "$run"
poll = "$poll"
log_level = "${UROCE_LOG_LEVEL:-info}"
$daemon_keys
[eal]
lcore = $lcore
file_prefix = "$prefix"
$eal_args
$toml
EOF
  UROCE_DAEMON_RUN[$name]=$run
  UROCE_DAEMON_LOG[$name]=$dir/uroced.log
  UROCE_DAEMON_PREFIX[$name]=$prefix
  UROCE_DAEMON_NODES[$name]=""
  UROCE_DAEMONS+=("$name")
  local pid
  # SIGTERM if this script dies: the daemon then removes its nodes itself.
  uroce_bg pid --netns "$ns" --pdeathsig TERM "$dir/uroced.log" "$dir/uroced.log" -- \
    "$UROCED" --config "$dir/uroced.toml" "$@"
  UROCE_DAEMON_PID[$name]=$pid
  if ! uroce_wait_for_line "$dir/uroced.log" '^uroced: ready' "$ready" "$pid"; then
    if uroce_running "$pid"; then
      uroce_err "FAIL: daemon $name did not print 'uroced: ready' within ${ready}s"
    else
      local rc
      uroce_wait "$pid" rc
      UROCE_DAEMON_PID[$name]=""
      uroce_err "FAIL: daemon $name exited with status $rc before 'uroced: ready'"
    fi
    uroce_err "  command: $UROCED --config $dir/uroced.toml $*"
    uroce_err "  config:"
    sed 's/^/    /' "$dir/uroced.toml" >&2
    uroce_daemon_log_tail "$name" 30 >&2
    return 1
  fi
  # The /dev/infiniband/uverbsN nodes it claimed, from its sysfs tree: the
  # cleanup removes them if the daemon cannot (SIGKILL).
  local n nodes=""
  for n in "$run"/sysfs/class/infiniband_verbs/uverbs*; do
    [ -e "$n" ] && nodes+="${n##*/uverbs} "
  done
  UROCE_DAEMON_NODES[$name]=$nodes
  return 0
}

uroce_daemon_log_tail() {
  local name=$1 lines=${2:-20}
  echo "--- uroced $name log (last $lines lines): ${UROCE_DAEMON_LOG[$name]}"
  tail -n "$lines" "${UROCE_DAEMON_LOG[$name]}" 2>/dev/null | sed 's/^/    /'
}

# uroce_daemon_threads NAME: the threads of daemon NAME, alike ones counted
# on one line: name, state, the kernel function it sleeps in and the number
# of the system call it is in; for a test that finds the daemon stuck.
uroce_daemon_threads() {
  local pid=${UROCE_DAEMON_PID[$1]:-} t
  [ -n "$pid" ] || return 0
  echo "--- uroced $1: $(ls "/proc/$pid/fd" 2>/dev/null | wc -l) descriptors; threads (count name state wchan syscall)"
  for t in /proc/"$pid"/task/*; do
    printf '%s %s %s %s\n' "$(tr ' ' _ <"$t/comm" 2>/dev/null)" \
      "$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1)" "$(cat "$t/wchan" 2>/dev/null)" \
      "$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
  done | sort | uniq -c | sed 's/^ */    /'
}

uroce_daemon_alive() {
  local pid=${UROCE_DAEMON_PID[$1]:-}
  [ -n "$pid" ] && uroce_running "$pid"
}

# SIGTERM; fails unless the daemon exits 0 within SECS (default 10) and has
# removed its socket, sysfs tree and /dev nodes.
uroce_daemon_stop() {
  local name=$1 secs=${2:-10}
  local pid=${UROCE_DAEMON_PID[$name]:-}
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + secs))
  while uroce_running "$pid" && [ $SECONDS -lt "$deadline" ]; do
    sleep 0.1
  done
  if uroce_running "$pid"; then
    uroce_err "FAIL: daemon $name still running ${secs}s after SIGTERM; killing it"
    uroce_kill_group KILL "$pid"
    uroce_wait "$pid" UROCE_IGNORED_RC
    UROCE_DAEMON_PID[$name]=""
    uroce_daemon_log_tail "$name" 20 >&2
    return 1
  fi
  local rc
  uroce_wait "$pid" rc
  UROCE_DAEMON_PID[$name]=""
  local bad=0
  if [ "$rc" -ne 0 ]; then
    uroce_err "FAIL: daemon $name exited $rc after SIGTERM (expected 0)"
    bad=1
  fi
  local run=${UROCE_DAEMON_RUN[$name]}
  if [ -e "$run/uroced.sock" ] || [ -e "$run/sysfs" ]; then
    uroce_err "FAIL: daemon $name left $run/uroced.sock or $run/sysfs behind"
    bad=1
  fi
  local n left=''
  for n in ${UROCE_DAEMON_NODES[$name]}; do
    if [ -e "/dev/infiniband/uverbs$n" ]; then
      uroce_err "FAIL: daemon $name left /dev/infiniband/uverbs$n behind"
      left+="$n "
      bad=1
    fi
  done
  # The nodes it removed itself are no longer ours: another daemon (another
  # test's) may take those numbers now, and the cleanup must not remove its
  # nodes.
  UROCE_DAEMON_NODES[$name]=$left
  [ "$bad" -eq 0 ] || uroce_daemon_log_tail "$name" 20 >&2
  return "$bad"
}

uroce_daemon_kill() {
  local name=$1
  local pid=${UROCE_DAEMON_PID[$name]:-}
  [ -n "$pid" ] || return 0
  kill -KILL "$pid" 2>/dev/null || true
  uroce_wait "$pid" UROCE_IGNORED_RC
  UROCE_DAEMON_PID[$name]=""
}

# uroce_daemon_schedstat NAME: "CPU_NS WAIT_NS" summed over all threads of
# daemon NAME (/proc/PID/task/*/schedstat: time on a CPU, and time runnable
# but waiting for one); "0 0" when it does not run.
uroce_daemon_schedstat() {
  local pid=${UROCE_DAEMON_PID[$1]:-}
  [ -n "$pid" ] || { echo "0 0"; return; }
  cat /proc/"$pid"/task/*/schedstat 2>/dev/null |
    awk '{ c += $1; w += $2 } END { printf "%.0f %.0f\n", c, w }'
}

# What a killed daemon could not remove itself.
_uroce_daemon_leftovers() {
  local name=$1 n node
  for n in ${UROCE_DAEMON_NODES[$name]}; do
    node=/dev/infiniband/uverbs$n
    # Only our kind of node (c 1:7); never anything else of that name.
    if [ -c "$node" ] && [ "$(stat -c '%t:%T' "$node")" = "1:7" ]; then
      rm -f "$node"
    fi
  done
  rm -rf "/var/run/dpdk/${UROCE_DAEMON_PREFIX[$name]}"
}

# uroce_at_exit CMD...: for what only the script knows it created (e.g. the
# leftovers of a program that ran its own engine and was killed): the EXIT
# trap runs CMD (word-split) after the processes are stopped, before the
# temp dir goes.
uroce_at_exit() {
  _UROCE_AT_EXIT+=("$*")
}

# ---- network namespaces ----------------------------------------------------

uroce_netns_add() {
  ip netns add "$1"
  _UROCE_NETNS+=("$1")
  ip -n "$1" link set lo up
}

_uroce_sysctl() {
  ip netns exec "$1" sysctl -qw "$2" >/dev/null 2>&1 || true
}

# A veth pair for DPDK's net_af_packet, IFA in NSA and IFB in NSB
# (docs/port.md, docs/benchmarks.md): jumbo MTU, no IPv6, no kernel address, and arp_ignore=8 on
# those two interfaces only, so the kernel never answers ARP for the
# userspace stack. (Not on "all": that would silence the kernel on the
# other veth pair, which carries the programs' TCP exchange.)
uroce_veth_dpdk() {
  local nsa=$1 ifa=$2 nsb=$3 ifb=$4 mtu=${5:-9000}
  ip link add "$ifa" type veth peer name "$ifb"
  ip link set "$ifa" netns "$nsa"
  ip link set "$ifb" netns "$nsb"
  local pair ns ifc
  for pair in "$nsa:$ifa" "$nsb:$ifb"; do
    ns=${pair%%:*} ifc=${pair#*:}
    _uroce_sysctl "$ns" "net.ipv6.conf.$ifc.disable_ipv6=1"
    _uroce_sysctl "$ns" "net.ipv4.conf.$ifc.arp_ignore=8"
    ip -n "$ns" link set "$ifc" mtu "$mtu" up
  done
}

# A veth pair with kernel IPv4 addresses (CIDR) for the TCP exchange of the
# verbs programs (pingpong, perftest) between the namespaces.
uroce_veth_ip() {
  local nsa=$1 ifa=$2 ipa=$3 nsb=$4 ifb=$5 ipb=$6
  ip link add "$ifa" type veth peer name "$ifb"
  ip link set "$ifa" netns "$nsa"
  ip link set "$ifb" netns "$nsb"
  ip -n "$nsa" addr add "$ipa" dev "$ifa"
  ip -n "$nsb" addr add "$ipb" dev "$ifb"
  ip -n "$nsa" link set "$ifa" up
  ip -n "$nsb" link set "$ifb" up
}

# ---- cleanup ---------------------------------------------------------------

_uroce_on_exit() {
  local rc=$?
  trap - EXIT TERM INT HUP
  set +e
  local pgid name ns
  declare -A daemon_pids=()
  for name in "${UROCE_DAEMONS[@]}"; do
    pgid=${UROCE_DAEMON_PID[$name]:-}
    [ -n "$pgid" ] && daemon_pids[$pgid]=$name
  done
  # Programs first (they hold daemon connections), then daemons. Each gets
  # SIGTERM and a few seconds: a daemon removes its nodes itself, and
  # uroce-embedded passes the signal on to its program and then removes
  # what the program's engine made (docs/embedded.md). After a signal
  # there is no time for that: SIGKILL, and the leftovers go below.
  local deadline
  if [ "$_UROCE_SIGNALED" -eq 0 ]; then
    for pgid in "${!_UROCE_LIVE[@]}"; do
      [ -n "${daemon_pids[$pgid]:-}" ] || uroce_kill_group TERM "$pgid"
    done
    deadline=$((SECONDS + 3))
    for pgid in "${!_UROCE_LIVE[@]}"; do
      [ -n "${daemon_pids[$pgid]:-}" ] && continue
      while uroce_running "$pgid" && [ $SECONDS -lt "$deadline" ]; do
        sleep 0.1
      done
    done
  fi
  for pgid in "${!_UROCE_LIVE[@]}"; do
    [ -n "${daemon_pids[$pgid]:-}" ] || uroce_kill_group KILL "$pgid"
  done
  if [ "$_UROCE_SIGNALED" -eq 0 ]; then
    for pgid in "${!daemon_pids[@]}"; do
      kill -TERM "$pgid" 2>/dev/null
    done
    deadline=$((SECONDS + 5))
    for pgid in "${!daemon_pids[@]}"; do
      while uroce_running "$pgid" && [ $SECONDS -lt "$deadline" ]; do
        sleep 0.1
      done
    done
  fi
  for pgid in "${!daemon_pids[@]}"; do
    uroce_kill_group KILL "$pgid"
  done
  # Reap, so no zombie outlives us and every node is released before the
  # leftover check below (not after a signal: SIGKILLed processes go away
  # on their own, and their nodes are removed below all the same).
  if [ "$_UROCE_SIGNALED" -eq 0 ]; then
    for pgid in "${!_UROCE_LIVE[@]}"; do
      { wait "$pgid"; } 2>/dev/null
    done
  fi
  for name in "${UROCE_DAEMONS[@]}"; do
    _uroce_daemon_leftovers "$name"
  done
  local hook
  for hook in "${_UROCE_AT_EXIT[@]}"; do
    $hook
  done
  for ns in "${_UROCE_NETNS[@]}"; do
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null)
    # shellcheck disable=SC2086 # one PID per word
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  if [ -n "$UROCE_TMP" ] && [ -d "$UROCE_TMP" ]; then
    if [ "${UROCE_KEEP:-0}" = 1 ]; then
      echo "kept $UROCE_TMP (UROCE_KEEP=1)"
    else
      rm -rf "$UROCE_TMP"
    fi
  fi
  exit "$rc"
}
