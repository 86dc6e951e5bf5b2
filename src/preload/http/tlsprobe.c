/* SPDX-License-Identifier: MIT */
/*
 * tlsprobe.c - the thread-local marks of tlsprobe.h: which socket a TLS
 * call of the library's moves records on, and the http-rule socket the
 * thread connected last.
 */
#include "tlsprobe.h"

__thread int rs_tls_probe_fd __attribute__((tls_model("initial-exec"))) = -2;
__thread int rs_tls_connect_fd __attribute__((tls_model("initial-exec"))) = -1;
__thread int rs_tls_plain_fd __attribute__((tls_model("initial-exec"))) = -1;
__thread const struct rs_tls_sink *rs_tls_sink_now
    __attribute__((tls_model("initial-exec")));
