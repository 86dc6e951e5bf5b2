/* SPDX-License-Identifier: MIT */
/*
 * guard.c - storage for the thread-local re-entrancy guard (see guard.h).
 */
#include "guard.h"

__thread int rs_guard_depth __attribute__((tls_model("initial-exec")));
