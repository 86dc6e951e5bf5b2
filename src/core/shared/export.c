/* SPDX-License-Identifier: MIT */
/*
 * export.c - Prometheus text exposition and JSON strings (see export.h).
 *
 * The exposition format escapes only three characters in label values
 * (backslash, double quote, line feed) and two in HELP text (backslash,
 * line feed); everything else is written as is, so validity comes down to
 * UTF-8, which is checked here byte by byte.
 */
#include "export.h"

#include <string.h>

size_t rs_export_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], need, min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n <= need)
		return 0;
	for (unsigned i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

/*
 * Writes s (up to n bytes or a NUL) with `esc` deciding each ASCII byte:
 * it returns the escape to write instead, or NULL to write the byte.
 * Invalid UTF-8 becomes `bad`.
 */
static void put_text(FILE *f, const char *s, size_t n,
    const char *(*esc)(unsigned char c, char tmp[8]), const char *bad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strnlen(s, n);
	char tmp[8];

	for (size_t i = 0; i < len; ) {
		size_t k = rs_export_utf8_len(p + i, len - i);
		const char *e;

		if (k == 0) {
			fputs(bad, f);
			i++;
		} else if (k == 1 && (e = esc(p[i], tmp))) {
			fputs(e, f);
			i++;
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
		}
	}
}

static const char *esc_label(unsigned char c, char tmp[8])
{
	(void)tmp;
	return c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" :
	    NULL;
}

static const char *esc_help(unsigned char c, char tmp[8])
{
	(void)tmp;
	return c == '\\' ? "\\\\" : c == '\n' ? "\\n" : NULL;
}

static const char *esc_json(unsigned char c, char tmp[8])
{
	if (c == '"')
		return "\\\"";
	if (c == '\\')
		return "\\\\";
	if (c >= 0x20 && c != 0x7f)
		return NULL;
	snprintf(tmp, 8, "\\u%04x", c);
	return tmp;
}

void rs_export_label(FILE *f, const char *s, size_t n)
{
	put_text(f, s, n, esc_label, "\xef\xbf\xbd");
}

void rs_export_family(FILE *f, const char *name, const char *type,
    const char *help)
{
	fprintf(f, "# HELP %s ", name);
	put_text(f, help, strlen(help), esc_help, "\xef\xbf\xbd");
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

void rs_export_sample(FILE *f, const char *name, const char *const *labels,
    size_t nlabels, uint64_t value)
{
	fputs(name, f);
	for (size_t i = 0; i < nlabels; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "{", labels[2 * i]);
		rs_export_label(f, labels[2 * i + 1], RS_EXPORT_VALUE_MAX);
		fputc('"', f);
	}
	fprintf(f, "%s %llu\n", nlabels ? "}" : "", (unsigned long long)value);
}

void rs_export_json_string(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	put_text(f, s, n, esc_json, "\\ufffd");
	fputc('"', f);
}
