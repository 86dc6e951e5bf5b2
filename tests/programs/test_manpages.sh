#!/bin/sh
# SPDX-License-Identifier: MIT
# test_manpages.sh - the manual pages are valid mdoc (mandoc -Tlint, no
# warnings), and every subcommand and environment variable the command and
# the contract name is documented in them.
set -u
if ! command -v mandoc >/dev/null 2>&1; then
	echo "SKIPPED: mandoc not installed"
	exit 0
fi
fail=0
for page in man/resolute.1 man/resolute-policy.5; do
	if ! out=$(mandoc -Tlint -W warning "$page" 2>&1) || [ -n "$out" ]; then
		echo "mandoc objects to $page:"
		echo "$out"
		fail=1
	fi
done
for word in run check explain systemd stats suggest version RESOLUTE_POLICY \
    RESOLUTE_LOG RESOLUTE_LOG_FORMAT RESOLUTE_LOG_FILE RESOLUTE_DEADLINE \
    RESOLUTE_STRICT RESOLUTE_DISABLE; do
	if ! mandoc -Tascii man/resolute.1 | sed "s/.\x08//g" | grep -qw "$word"; then
		echo "resolute(1) does not mention $word"
		fail=1
	fi
done
for key in connect_timeout read_timeout write_timeout attempts retry_on \
    base cap multiplier jitter connect_budget retry_budget ratio \
    min_per_second window scope passthrough match http retry_on_status \
    retry_after_cap max_replay idempotency_key failover dns breaker \
    failures open_for max_open_for probes on_status auto_timeout \
    quantile samples half_life; do
	if ! mandoc -Tascii man/resolute-policy.5 | sed "s/.\x08//g" | grep -qw "$key"; then
		echo "resolute-policy(5) does not document $key"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "manual pages: lint clean, complete"
exit $fail
