#!/bin/sh
# SPDX-License-Identifier: MIT
# deadline-chain.sh - the lesson's chain (SPEC 10, issue 16): a client ->
# A -> B -> C -> a silent backend, three unmodified Python services
# (tests/programs/chain_service.py, ThreadingHTTPServer + urllib) on
# loopback, each doing WORK_MS of work before calling the next hop.  The
# client is curl under `resolute run --deadline 500ms` (a python3 urllib
# client under make asan, where curl cannot start).
#
#   scripts/deadline-chain.sh bare|library|fork|pool OUTDIR
#
# bare: the services run without the library; library: each is started
# with the policy (inbound_deadline + deadline_header); fork: like
# library, but B is a process-per-request server (ForkingHTTPServer); pool: like
# library, but B hands its requests to a worker pool and C answers
# DEADLINE_MS + 1 s after its request came (after the deadline) instead
# of calling the silent backend.  Waits SETTLE_S after the client returns
# (pool: until B's worker has C's answer, at most DEADLINE_MS + 1 s +
# WORK_MS + SETTLE_S), then stops everything.  Writes OUTDIR/events (every
# service's lines, epoch ms; A's "recv" line shows the deadline the
# client's library sent), OUTDIR/t0 (epoch ms),
# OUTDIR/client (curl's status, exit code and elapsed ms) and
# OUTDIR/resolute-*.log.  DEADLINE_MS (500) is the client's deadline.
# Bounded: about 5 s, at most DEADLINE_MS + 5 s after the services have
# started; every process is under a limit of LIFE_S (30 s), long enough
# for four Python start-ups under ASan on a busy machine (1.5 s each) and
# the run, so that no process ends on its own before the run does.
set -u
cd "$(dirname "$0")/.." || exit 2
mode=$1 out=$2
B=${RS_BUILD:-$PWD/build}
CLI=${RS_CLI:-$B/resolute}
. tests/programs/rsrun.sh
WORK_MS=${WORK_MS:-60}
SETTLE_S=${SETTLE_S:-2}
LIFE_S=30
DEADLINE_MS=${DEADLINE_MS:-500}
mkdir -p "$out" && rm -f "$out"/*
svc=tests/programs/chain_service.py
pol=$out/policy.yaml
cat >"$pol" <<'POL'
version: 1
inbound_deadline: X-Request-Deadline
inbound_deadline_max: 5m
defaults:
  deadline_header: X-Request-Deadline
POL
pids=""
# Stops the services in the reverse of their start order, the backend
# last: killed first, it would reset C's call, and C would log a give-up
# that only the teardown caused.
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT INT TERM

# start NAME ARGS...: one process listening on a port of the kernel's
# choice (so that no other test's can collide with it), whose first line
# must be "ready PORT"; sets port_NAME.
start() {
	name=$1
	shift
	fifo=$out/$name.ready
	mkfifo "$fifo"
	if [ "$mode" = bare ] || [ "$name" = backend ]; then
		timeout "$LIFE_S" "$@" >"$fifo" 2>>"$out/$name.err" &
	else
		# In a subshell that becomes the program: $! is then the
		# program, which cleanup's kill must reach (a backgrounded
		# function leaves a subshell there, and the service ran on).
		(RESOLUTE_LOG=info RESOLUTE_LOG_FILE=$out/resolute-$name.log \
		    rsrun_exec --policy "$pol" -- timeout "$LIFE_S" "$@") \
		    >"$fifo" 2>>"$out/$name.err" &
	fi
	pids="$! $pids"
	read -r word port <"$fifo" || word=
	rm -f "$fifo"
	if [ "$word" != ready ] || [ -z "$port" ]; then
		echo "deadline-chain: $name did not start"
		cat "$out/$name.err"
		exit 1
	fi
	eval "port_$name=\$port"
}
url() { eval "echo http://127.0.0.1:\$port_$1/"; }
# curl cannot start under make asan (tests/programs/sanitizer.sh); a urllib
# client stands in for it there.
client="curl -sS -o /dev/null -w %{http_code}"
. tests/programs/sanitizer.sh
usable curl --version >/dev/null || client="python3 tests/programs/deadline_wire.py get"
ev=$out/events
start backend python3 tests/programs/silent_backend.py 0 "$ev" "$LIFE_S"
if [ "$mode" = pool ]; then
	start C python3 $svc C 0 "$((DEADLINE_MS + 1000))" - "$ev"
	start B python3 $svc B 0 "$WORK_MS" "$(url C)" "$ev" pool
else
	model=thread
	[ "$mode" = fork ] && model=fork
	start C python3 $svc C 0 "$WORK_MS" "$(url backend)" "$ev"
	start B python3 $svc B 0 "$WORK_MS" "$(url C)" "$ev" $model
fi
start A python3 $svc A 0 "$WORK_MS" "$(url B)" "$ev"
t0=$(date +%s%3N)
echo "$t0" >"$out/t0"
# shellcheck disable=SC2086 # the client's words split on purpose
RESOLUTE_LOG=info RESOLUTE_LOG_FILE=$out/resolute-client.log \
    rsrun --policy "$pol" --deadline "${DEADLINE_MS}ms" -- timeout 10 \
    $client "$(url A)" >"$out/client.code" 2>"$out/client.err"
rc=$?
t1=$(date +%s%3N)
echo "code=$(cat "$out/client.code") exit=$rc elapsed_ms=$((t1 - t0))" \
    >"$out/client"
if [ "$mode" = pool ]; then
	# C answers DEADLINE_MS + 1 s after its request came, up to
	# DEADLINE_MS after the client's deadline when the chain was slow to
	# walk (under ASan), and B's worker sends that request up to one
	# hop's work after it: wait for B's worker to have that answer,
	# bounded.
	i=0 lim=$(( (DEADLINE_MS + 1000 + WORK_MS) / 50 + SETTLE_S * 20 ))
	while ! grep -q '^[0-9]* B ok' "$ev" && [ $i -lt $lim ]; do
		sleep 0.05
		i=$((i + 1))
	done
else
	sleep "$SETTLE_S"
fi
date +%s%3N >"$out/t_end"
