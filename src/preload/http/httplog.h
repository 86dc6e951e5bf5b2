/* SPDX-License-Identifier: MIT */
/*
 * httplog.h - the log lines of the HTTP/1.x status retry engine: one per
 * retry and per give-up, text and JSON alike.  Thread-safe: reads the
 * connection's state, which the caller holds.
 */
#ifndef RS_HTTPLOG_H
#define RS_HTTPLOG_H

#include <stdint.h>

#include "fdtable.h"
#include "httpstate.h"
#include "log.h"

/*
 * Logs the judged response of h at level: a retry after wait_ms, or
 * (wait_ms < 0) a give-up; outcome ends the line.
 */
void rs_hconn_log(const struct rs_fd *e, const struct rs_hconn *h,
    enum rs_log_level level, int64_t wait_ms, const char *outcome);

#endif /* RS_HTTPLOG_H */
