/* SPDX-License-Identifier: MIT */
/*
 * exe_info.c - what `resolute run` finds out about COMMAND before exec:
 * where PATH puts it, and whether the dynamic loader will preload into it.
 *
 * LD_PRELOAD is applied by the dynamic loader named in PT_INTERP: a binary
 * without one (static, including static-pie) never loads the interposer,
 * and in secure-execution mode (setuid, setgid, file capabilities) the
 * loader ignores LD_PRELOAD paths containing a slash.
 */
#include "cli.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Whether path is a regular file we may execute. */
static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/* Searches one PATH directory (empty: the current one) for name. */
static bool try_dir(const char *dir, size_t dlen, const char *name,
    char *buf, size_t len)
{
	int n = snprintf(buf, len, "%.*s%s%s", (int)dlen, dir,
	    dlen ? "/" : "", name);

	return n > 0 && (size_t)n < len && executable(buf);
}

int rs_cli_find_command(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		if (snprintf(buf, len, "%s", name) >= (int)len)
			return -ENAMETOOLONG;
		return access(name, F_OK) == 0 ? 0 : -ENOENT;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		size_t dlen = strcspn(p, ":");

		if (try_dir(p, dlen, name, buf, len))
			return 0;
		p += dlen;
		if (!*p)
			return -ENOENT;
	}
}

/* Reads n bytes at offset off; returns whether all were read. */
static bool read_at(FILE *f, long off, void *buf, size_t n)
{
	return fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

/* Whether a 64-bit ELF file has a PT_INTERP program header. */
static bool has_interp64(FILE *f)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (!read_at(f, 0, &eh, sizeof(eh)))
		return true;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (!read_at(f, (long)(eh.e_phoff + (Elf64_Off)i *
		    eh.e_phentsize), &ph, sizeof(ph)))
			return true;
		if (ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

static bool has_interp32(FILE *f)
{
	Elf32_Ehdr eh;
	Elf32_Phdr ph;

	if (!read_at(f, 0, &eh, sizeof(eh)))
		return true;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (!read_at(f, (long)(eh.e_phoff + (Elf32_Off)i *
		    eh.e_phentsize), &ph, sizeof(ph)))
			return true;
		if (ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

/*
 * Whether path is an ELF executable without a dynamic loader.  Scripts,
 * unreadable files and ELF of the other byte order give false: there is
 * nothing certain to warn about.
 */
static bool statically_linked(const char *path)
{
	unsigned char id[EI_NIDENT];
	FILE *f = fopen(path, "rb");
	bool st = false;
	union { uint16_t u; unsigned char c[2]; } order = { .u = 1 };
	int native = order.c[0] ? ELFDATA2LSB : ELFDATA2MSB;

	if (!f)
		return false;
	if (read_at(f, 0, id, sizeof(id)) &&
	    memcmp(id, ELFMAG, SELFMAG) == 0 && id[EI_DATA] == native) {
		if (id[EI_CLASS] == ELFCLASS64)
			st = !has_interp64(f);
		else if (id[EI_CLASS] == ELFCLASS32)
			st = !has_interp32(f);
	}
	fclose(f);
	return st;
}

void rs_cli_warn_unpreloadable(const char *path, const char *name)
{
	struct stat st;

	if (statically_linked(path))
		rs_cli_warn("%s is statically linked; LD_PRELOAD cannot act "
		    "on it", name);
	if (stat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
		rs_cli_warn("%s is %s; the dynamic loader ignores LD_PRELOAD "
		    "for it (secure-execution mode)", name,
		    st.st_mode & S_ISUID ? "setuid" : "setgid");
	else if (getxattr(path, "security.capability", NULL, 0) > 0)
		rs_cli_warn("%s has file capabilities; the dynamic loader "
		    "ignores LD_PRELOAD for it (secure-execution mode)", name);
}
