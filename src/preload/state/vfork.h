/* SPDX-License-Identifier: MIT */
/*
 * vfork.h - whether the calling thread is a vfork child, without a system
 * call.
 *
 * A vfork child shares its parent's memory, so the descriptor table must
 * not take its close() or dup2() for the parent's (fdtable.c).  Asking
 * the kernel for the pid answers that, at one system call per change to
 * the table; the interposed vfork() (x86-64: it must be written in
 * assembly, as the child returns through the parent's stack) answers it
 * for free: it marks the calling thread's thread-local flag before the
 * system call, which the child sees as its own (it runs on the parent
 * thread's TLS) and the parent clears once it resumes, after the child's
 * exec or exit.  Other threads have their own flag.  A child made with
 * clone(CLONE_VM) by hand, or by posix_spawn (whose child makes no call
 * through the PLT in glibc), is not seen.
 */
#ifndef RS_VFORK_H
#define RS_VFORK_H

#include <stdbool.h>

#if defined(__x86_64__)
#define RS_VFORK_SEEN 1
#endif

extern __thread char rs_vfork_flag __attribute__((tls_model("initial-exec")));

/* Whether the calling thread runs as a vfork child (RS_VFORK_SEEN only). */
static inline bool rs_vfork_child(void)
{
	return rs_vfork_flag != 0;
}

#endif /* RS_VFORK_H */
