/* SPDX-License-Identifier: MIT */
/*
 * sigrestart.c - whether every signal handler asks for SA_RESTART.
 *
 * Which signal interrupted a wait is unknown (only a handler can: default
 * actions either kill or let the wait restart), hence all of them are
 * asked.  Programs relying on SA_RESTART never expect EINTR from a call
 * the kernel would have restarted.  Thread-safe.
 */
#include "sigrestart.h"

#include <signal.h>

/*
 * Fault signals are raised by the faulting thread itself and never
 * interrupt a wait; sanitizers and crash handlers install them without
 * SA_RESTART.
 */
static bool synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	    sig == SIGILL || sig == SIGTRAP || sig == SIGSYS;
}

bool rs_signals_restart(void)
{
	struct sigaction sa;

	for (int sig = 1; sig < NSIG; sig++) {
		if (synchronous(sig) || sigaction(sig, NULL, &sa) < 0 ||
		    sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		if (!(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}
