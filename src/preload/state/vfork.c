/* SPDX-License-Identifier: MIT */
/*
 * vfork.c - the interposed vfork() (see vfork.h).
 *
 * As glibc's own: the return address is kept in a register across the
 * system call, because the child returns first and its calls overwrite
 * the stack slot that held it; the parent pushes it back.  Everything the
 * parent needs after the call is in registers for the same reason.
 */
#include "vfork.h"

#include <errno.h>

__thread char rs_vfork_flag __attribute__((tls_model("initial-exec")));

#ifdef RS_VFORK_SEEN
char *rs_vfork_enter(void);
long rs_vfork_failed(int err);

/* Before the system call: marks the thread and returns its flag. */
__attribute__((used)) char *rs_vfork_enter(void)
{
	rs_vfork_flag = 1;
	return &rs_vfork_flag;
}

/* The system call failed with err (the flag is clear again). */
__attribute__((used)) long rs_vfork_failed(int err)
{
	errno = err;
	return -1;
}

__asm__(
	".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	endbr64\n"
	"	sub $8, %rsp\n"
	"	call rs_vfork_enter\n"
	"	add $8, %rsp\n"
	"	mov %rax, %rdx\n"
	"	pop %rsi\n"
	"	mov $58, %eax\n"	/* SYS_vfork */
	"	syscall\n"
	"	push %rsi\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"		/* the child: keeps the flag */
	"	movb $0, (%rdx)\n"
	"	cmp $-4095, %rax\n"
	"	jae 2f\n"
	"1:	ret\n"
	"2:	neg %eax\n"
	"	mov %eax, %edi\n"
	"	jmp rs_vfork_failed\n"
	".size vfork, .-vfork\n");
#endif
