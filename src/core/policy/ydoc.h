/* SPDX-License-Identifier: MIT */
/*
 * ydoc.h - one YAML document as a tree of nodes that know their position,
 * and the diagnostics reported against them.
 *
 * libyaml's event parser builds the tree; anchors, aliases, tags and extra
 * documents are refused on the way.  The policy checker (policy_yaml.c,
 * policy_keys.c) walks the tree.  Thread-safe: all state lives in one
 * struct rs_yload.
 */
#ifndef RS_YDOC_H
#define RS_YDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "diag.h"

enum rs_ynode_type { RS_YNODE_SCALAR, RS_YNODE_MAP, RS_YNODE_SEQ,
	RS_YNODE_IGNORED };

/* One YAML node; a mapping's kids alternate key, value. */
struct rs_ynode {
	enum rs_ynode_type type;
	unsigned line, col;		/* 1-based */
	char *value;			/* scalars only */
	bool quoted;
	struct rs_ynode **kids;
	size_t nkids;
};

/* One load: the text, where its diagnostics go, and libyaml's parser. */
struct rs_yload {
	const char *name;
	struct rs_diags *d;
	size_t first;		/* index of this load's first diagnostic */
	unsigned nerr;
	const char *buf;
	size_t len;
	yaml_parser_t parser;
};

/* Reports an error at line:col (past 100 errors, one "too many" note). */
__attribute__((format(printf, 4, 5)))
void rs_ydoc_err_at(struct rs_yload *l, unsigned line, unsigned col,
    const char *fmt, ...);

/* Reports an error at node n. */
#define rs_ydoc_err(l, n, ...) rs_ydoc_err_at(l, (n)->line, (n)->col, \
	__VA_ARGS__)

/*
 * Parses l->buf into *root (NULL for an empty stream).  Returns 0 (also
 * when errors were reported: the tree is then partial), -EINVAL when the
 * parse had to stop, or -ENOMEM.  The caller frees *root.
 */
int rs_ydoc_parse(struct rs_yload *l, struct rs_ynode **root);

void rs_ydoc_free(struct rs_ynode *n);

/* Orders this load's diagnostics by position (stable). */
void rs_ydoc_sort_diags(struct rs_yload *l);

/* Returns whether n is an unquoted null: empty, "~" or "null". */
bool rs_ydoc_is_null(const struct rs_ynode *n);

/* Returns "mapping", "list" or "value", for messages. */
const char *rs_ydoc_type_name(const struct rs_ynode *n);

/* Returns whether val is a single value; reports it otherwise. */
bool rs_ydoc_want_scalar(struct rs_yload *l, const char *key,
    const struct rs_ynode *val);

/*
 * Returns whether pair i of map has a usable key: a scalar not seen
 * earlier in the same mapping; reports it otherwise.
 */
bool rs_ydoc_check_key(struct rs_yload *l, const struct rs_ynode *map,
    size_t i);

#endif /* RS_YDOC_H */
