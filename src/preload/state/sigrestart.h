/* SPDX-License-Identifier: MIT */
/*
 * sigrestart.h - would the kernel restart the blocking call we replace?
 *
 * Thread-safe (sigaction queries only).
 */
#ifndef RS_SIGRESTART_H
#define RS_SIGRESTART_H

#include <stdbool.h>

/*
 * Returns whether every installed handler of an asynchronous signal has
 * SA_RESTART: then a wait the library does on the program's behalf goes
 * on after EINTR, as the kernel restarts the blocking call it replaces
 * (signal(7): connect, read, write... on a socket without its own
 * timeout).  Up to 64 sigaction queries: ask on EINTR only.
 */
bool rs_signals_restart(void);

#endif /* RS_SIGRESTART_H */
