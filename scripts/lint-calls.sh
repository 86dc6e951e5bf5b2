#!/bin/sh
# SPDX-License-Identifier: MIT
# lint-calls.sh - inside src/, no interposed libc name may be called
# directly: the library must reach the kernel through rs_real_*() or raw
# system calls, or it would re-enter its own wrappers.
# preload/entry/interpose*.c, which define the wrappers (execl goes through
# the execv wrapper on purpose), and preload/state/real.c, which names them
# for dlsym, are exempt.
set -u
cd "$(dirname "$0")/.." || exit 2
names='connect|socket|socketpair|accept4?|close|close_range|dup[23]?|fcntl(64)?|ioctl|getsockopt|setsockopt|read|readv|recv|recvfrom|recvmsg|recvmmsg|write|writev|send|sendto|sendmsg|sendmmsg|poll|ppoll|select|pselect|epoll_ctl|epoll_wait|epoll_pwait2?|getaddrinfo|gethostbyname2?(_r)?|exec(ve|v|vp|vpe|l|lp|le)|fexecve|posix_spawnp?|system|popen|wordexp'
bad=$(grep -nE "(^|[^A-Za-z0-9_>.])($names)[[:space:]]*\(" src/*/*/*.c |
	grep -vE '^src/preload/(entry/interpose|entry/interpose_exec|entry/interpose_io|state/real)\.c:' |
	grep -vE ':[0-9]+:[[:space:]]*(\*|/\*)' || true)
if [ -n "$bad" ]; then
	echo "lint-calls: interposed names called inside src/ (use rs_real_*):"
	echo "$bad"
	exit 1
fi
echo "lint-calls: ok"
