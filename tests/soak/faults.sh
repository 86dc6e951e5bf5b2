# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2154 # dir, dnsd_pid, P_*: set by run.sh
# faults.sh - sourced by tests/soak/run.sh: the rotating fault schedule.
#
# fault_on NAME starts a fault, fault_off NAME undoes it; faults_clear
# undoes every one, whatever state the soak is in (the exit trap calls it).
#
#   restart  every server killed, back after 1.5-3 s (ports refuse)
#   dead     127.0.0.11, the first address of every name, drops SYNs for
#            SOAK_DEAD_S (17 s: longer than the clients' own 15-s
#            deadline): its twin 127.0.0.12 still answers (failover)
#   drop     SYNs to every server port dropped (nftables) for SOAK_DROP_S
#            (10 s): longer than the kernel's SYN retransmissions at 1, 3
#            and 7 s hide
#   frozen   every server stopped (SIGSTOP), continued 2-4 s later
#   rst      the soak's echo and HTTP servers reset a third of their
#            exchanges at a random byte (SO_LINGER 0); Redis and
#            PostgreSQL cannot be made to
#   trickle  the same servers answer 8 KiB every 10 ms
#   dns      the DNS server answers SERVFAIL for 2.5 s from the next query
#   quiet    nothing
# Others last SOAK_FAULT_S; each is followed by 2 s of calm.
# shellcheck disable=SC2034 # run.sh rotates through them
FAULTS="restart dead drop frozen rst trickle dns quiet"
SOAK_NFT=soak_faults

nft_drop() {
	nft add table inet "$SOAK_NFT" &&
	    nft add chain inet "$SOAK_NFT" out \
	    '{ type filter hook output priority 0; policy accept; }' &&
	    nft add rule inet "$SOAK_NFT" out "$@" tcp flags syn drop
}

nft_clear() {
	nft delete table inet "$SOAK_NFT" 2>/dev/null
	return 0
}

set_mode() {
	echo "$1" >"$dir/mode.tmp" && mv "$dir/mode.tmp" "$dir/mode"
}

rand_ms() {
	echo $(($1 + $(od -An -N2 -tu2 /dev/urandom) % ($2 - $1 + 1)))
}

# sleep_ms MS: in the background and waited for, so that a signal's
# trap runs at once rather than when the sleep ends.
sleep_ms() {
	sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))" &
	wait $!
}

fault_on() {
	case $1 in
	restart)
		srv_kill_all
		sleep_ms "$(rand_ms 1500 3000)"
		srv_start_all ;;
	drop)
		nft_drop tcp dport \
		    "{ $P_ECHO, $P_WEB, $P_WEB2, $P_WEBS, $P_CHAIN, $P_REDIS, $P_PG }" ;;
	frozen)
		srv_signal STOP
		sleep_ms "$(rand_ms 2000 4000)"
		srv_signal CONT ;;
	rst | trickle) set_mode "$1" ;;
	dns) kill -USR1 "$dnsd_pid" ;;
	dead) nft_drop ip daddr 127.0.0.11 ;;
	quiet) ;;
	esac
}

fault_off() {
	case $1 in
	drop | dead) nft_clear ;;
	rst | trickle) set_mode quiet ;;
	esac
}

faults_clear() {
	nft_clear
	set_mode quiet
	srv_signal CONT
}

# faults_check: prints what is left of any fault (nothing when all are
# undone) and returns 1 if something is.
faults_check() {
	left=""
	nft list table inet "$SOAK_NFT" >/dev/null 2>&1 && left="$left nft"
	[ "$(cat "$dir/mode")" = quiet ] || left="$left mode"
	for p in $(srv_pids); do
		grep -q '^State:.*stopped' "/proc/$p/status" 2>/dev/null &&
		    left="$left stopped:$p"
	done
	[ -z "$left" ] && return 0
	echo "faults left:$left"
	return 1
}
