/* SPDX-License-Identifier: MIT */
/*
 * ydoc.c - YAML text to a tree of positioned nodes, and the diagnostics.
 *
 * libyaml's event parser drives a small recursive builder that keeps every
 * node's line and column, so that the checker can report FILE:LINE:COL for
 * any value.  Thread-safe: all state lives in one struct rs_yload.
 */
#include "ydoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this many problems a file is not worth reading further. */
#define MAX_DIAGS 100
/* Nodes nested deeper than this end the load, keeping the recursion small. */
#define MAX_DEPTH 32

void rs_ydoc_err_at(struct rs_yload *l, unsigned line, unsigned col,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (l->nerr++ > MAX_DIAGS)
		return;
	if (l->nerr > MAX_DIAGS) {
		rs_diags_push(l->d, l->name, line, col,
		    "too many errors; the rest are not reported");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rs_diags_push(l->d, l->name, line, col, msg);
}

void rs_ydoc_free(struct rs_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		rs_ydoc_free(n->kids[i]);
	free(n->kids);
	free(n->value);
	free(n);
}

static int node_add(struct rs_ynode *parent, struct rs_ynode *kid)
{
	struct rs_ynode **v = realloc(parent->kids,
	    (parent->nkids + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[parent->nkids++] = kid;
	parent->kids = v;
	return 0;
}

/* Converts a byte offset into a 1-based line and column (in characters). */
static void offset_to_pos(const char *buf, size_t len, size_t off,
    unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/* Reports libyaml's own error: bad encoding, or a syntax error. */
static void syntax_error(struct rs_yload *l)
{
	yaml_parser_t *p = &l->parser;
	const char *problem = p->problem ? p->problem : "unknown error";
	unsigned line, col;

	if (p->error == YAML_MEMORY_ERROR) {
		rs_ydoc_err_at(l, 1, 1, "out of memory");
	} else if (p->error == YAML_READER_ERROR) {
		offset_to_pos(l->buf, l->len, p->problem_offset, &line, &col);
		if (p->problem_value >= 0)
			rs_ydoc_err_at(l, line, col, "%s (byte 0x%02X)",
			    problem, (unsigned)p->problem_value & 0xff);
		else
			rs_ydoc_err_at(l, line, col, "%s", problem);
	} else if (p->context) {
		rs_ydoc_err_at(l, (unsigned)p->problem_mark.line + 1,
		    (unsigned)p->problem_mark.column + 1,
		    "YAML syntax error: %s %s (line %u)", problem, p->context,
		    (unsigned)p->context_mark.line + 1);
	} else {
		rs_ydoc_err_at(l, (unsigned)p->problem_mark.line + 1,
		    (unsigned)p->problem_mark.column + 1,
		    "YAML syntax error: %s", problem);
	}
}

static int next_event(struct rs_yload *l, yaml_event_t *ev)
{
	if (yaml_parser_parse(&l->parser, ev))
		return 0;
	syntax_error(l);
	return -EINVAL;
}

/* Anchors and tags would let a policy say things the checker cannot see. */
static void check_anchor_tag(struct rs_yload *l,
    const struct rs_ynode *n,
    const yaml_char_t *anchor, const yaml_char_t *tag, bool implicit)
{
	if (anchor)
		rs_ydoc_err(l, n, "YAML anchors are not supported ('&%s')",
		    (const char *)anchor);
	if (tag && !implicit)
		rs_ydoc_err(l, n, "YAML tags are not supported ('%s')",
		    (const char *)tag);
}

static int build(struct rs_yload *l, yaml_event_t *ev, unsigned depth,
    struct rs_ynode **out);

static int build_collection(struct rs_yload *l, struct rs_ynode *n,
    unsigned depth)
{
	yaml_event_t ev;
	struct rs_ynode *kid;

	for (;;) {
		if (next_event(l, &ev) < 0)
			return -EINVAL;
		if (ev.type == YAML_SEQUENCE_END_EVENT ||
		    ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		int ret = build(l, &ev, depth + 1, &kid);

		yaml_event_delete(&ev);
		if (ret < 0) {
			rs_ydoc_free(kid);
			return ret;
		}
		if (node_add(n, kid) < 0) {
			rs_ydoc_free(kid);
			return -ENOMEM;
		}
	}
}

static void init_scalar(struct rs_yload *l, struct rs_ynode *n,
    yaml_event_t *ev)
{
	n->type = RS_YNODE_SCALAR;
	n->value = strndup((const char *)ev->data.scalar.value,
	    ev->data.scalar.length);
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	check_anchor_tag(l, n, ev->data.scalar.anchor, ev->data.scalar.tag,
	    ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit);
}

/* Builds the node that starts with event ev (which the caller deletes). */
static int build(struct rs_yload *l, yaml_event_t *ev, unsigned depth,
    struct rs_ynode **out)
{
	struct rs_ynode *n = calloc(1, sizeof(*n));
	int ret = 0;

	*out = n;
	if (!n)
		return -ENOMEM;
	n->line = (unsigned)ev->start_mark.line + 1;
	n->col = (unsigned)ev->start_mark.column + 1;
	n->type = RS_YNODE_IGNORED;
	if (ev->type == YAML_SCALAR_EVENT) {
		init_scalar(l, n, ev);
		return n->value ? 0 : -ENOMEM;
	}
	if (ev->type == YAML_ALIAS_EVENT) {
		rs_ydoc_err(l, n, "YAML aliases are not supported ('*%s')",
		    (const char *)ev->data.alias.anchor);
		return 0;
	}
	if (ev->type == YAML_SEQUENCE_START_EVENT) {
		n->type = RS_YNODE_SEQ;
		check_anchor_tag(l, n, ev->data.sequence_start.anchor,
		    ev->data.sequence_start.tag,
		    ev->data.sequence_start.implicit);
	} else {
		n->type = RS_YNODE_MAP;
		check_anchor_tag(l, n, ev->data.mapping_start.anchor,
		    ev->data.mapping_start.tag,
		    ev->data.mapping_start.implicit);
	}
	if (depth >= MAX_DEPTH) {
		/*
		 * Stop here rather than skip the rest: libyaml checks every
		 * open flow level on each token, so reading past 100,000
		 * nested '[' takes it seconds of CPU (O(depth^2)) in every
		 * process that starts with such a policy.
		 */
		rs_ydoc_err(l, n, "nested too deeply");
		n->type = RS_YNODE_IGNORED;
		ret = -EINVAL;
	} else {
		ret = build_collection(l, n, depth);
	}
	return ret;
}

/* Reads one document's root; refuses an empty stream and extra documents. */
static int build_document(struct rs_yload *l, struct rs_ynode **root)
{
	yaml_event_t ev;
	int ret;

	*root = NULL;
	if (next_event(l, &ev) < 0)	/* STREAM-START */
		return -EINVAL;
	yaml_event_delete(&ev);
	if (next_event(l, &ev) < 0)
		return -EINVAL;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		rs_ydoc_err_at(l, 1, 1, "empty policy: expected a mapping with "
		    "'version: 1'");
		return -EINVAL;
	}
	yaml_event_delete(&ev);	/* DOCUMENT-START */
	if (next_event(l, &ev) < 0)
		return -EINVAL;
	ret = build(l, &ev, 0, root);
	yaml_event_delete(&ev);
	if (ret < 0 || next_event(l, &ev) < 0)	/* DOCUMENT-END */
		return -EINVAL;
	yaml_event_delete(&ev);
	if (next_event(l, &ev) < 0)
		return -EINVAL;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		rs_ydoc_err_at(l, (unsigned)ev.start_mark.line + 1,
		    (unsigned)ev.start_mark.column + 1,
		    "only one YAML document is allowed in a policy");
	yaml_event_delete(&ev);
	return 0;
}

int rs_ydoc_parse(struct rs_yload *l, struct rs_ynode **root)
{
	int ret;

	*root = NULL;
	if (!yaml_parser_initialize(&l->parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&l->parser,
	    (const unsigned char *)l->buf, l->len);
	ret = build_document(l, root);
	yaml_parser_delete(&l->parser);
	return ret;
}

bool rs_ydoc_is_null(const struct rs_ynode *n)
{
	return n->type == RS_YNODE_SCALAR && !n->quoted &&
	    (!n->value[0] || !strcmp(n->value, "~") ||
	     !strcmp(n->value, "null"));
}

const char *rs_ydoc_type_name(const struct rs_ynode *n)
{
	if (n->type == RS_YNODE_MAP)
		return "mapping";
	return n->type == RS_YNODE_SEQ ? "list" : "value";
}

bool rs_ydoc_want_scalar(struct rs_yload *l, const char *key,
    const struct rs_ynode *val)
{
	if (val->type == RS_YNODE_SCALAR)
		return true;
	if (val->type != RS_YNODE_IGNORED)
		rs_ydoc_err(l, val, "'%s' must be a single value, not a %s",
		    key, rs_ydoc_type_name(val));
	return false;
}

bool rs_ydoc_check_key(struct rs_yload *l, const struct rs_ynode *map,
    size_t i)
{
	const struct rs_ynode *key = map->kids[i];

	if (key->type != RS_YNODE_SCALAR) {
		if (key->type != RS_YNODE_IGNORED)
			rs_ydoc_err(l, key, "a key must be a plain name, not "
			    "a %s", rs_ydoc_type_name(key));
		return false;
	}
	for (size_t j = 0; j < i; j += 2) {
		const struct rs_ynode *k = map->kids[j];

		if (k->type == RS_YNODE_SCALAR &&
		    !strcmp(k->value, key->value)) {
			rs_ydoc_err(l, key, "duplicate key '%s' (first at line "
			    "%u)", key->value, k->line);
			return false;
		}
	}
	return true;
}

/* A stable insertion sort: errors found together stay in order. */
void rs_ydoc_sort_diags(struct rs_yload *l)
{
	struct rs_diag *v = l->d->v;

	for (size_t i = l->first + 1; i < l->d->n; i++) {
		struct rs_diag x = v[i];
		size_t j = i;

		while (j > l->first && (v[j - 1].line > x.line ||
		    (v[j - 1].line == x.line && v[j - 1].col > x.col))) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}
