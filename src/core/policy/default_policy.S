/* SPDX-License-Identifier: MIT */
/*
 * default_policy.S - policy/default.yaml, embedded byte for byte.
 *
 * rs_default_policy[] holds the text followed by a NUL byte and
 * rs_default_policy_len its length without that byte.  Both are hidden:
 * they are not part of the library's interface.
 */
	.section .rodata
	.globl	rs_default_policy
	.hidden	rs_default_policy
	.type	rs_default_policy, @object
rs_default_policy:
	.incbin	"policy/default.yaml"
1:
	.byte	0
	.size	rs_default_policy, . - rs_default_policy

	.globl	rs_default_policy_len
	.hidden	rs_default_policy_len
	.type	rs_default_policy_len, @object
	.balign	8
rs_default_policy_len:
	.quad	1b - rs_default_policy
	.size	rs_default_policy_len, 8

	.section .note.GNU-stack,"",@progbits
