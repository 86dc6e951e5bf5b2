/* SPDX-License-Identifier: MIT */
/*
 * policy_yaml.c - YAML text to a struct rs_policy, with exact diagnostics.
 *
 * Two passes: ydoc.c builds a tree of nodes that keeps every node's line
 * and column, then the top level is read here (version, defaults, hosts)
 * and each settings mapping is checked against the key tables
 * (policy_keys.c) by policy_walk.c.  Thread-safe: all state lives in one
 * load.
 */
#include "policy_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "default_policy.h"
#include "policy_inbound.h"
#include "policy_walk.h"
#include "sysio.h"
#include "ydoc.h"

/* The top-level keys, in the order they are read. */
#define NTOP 5
static const char *const top_names[NTOP] = { "version", "defaults", "hosts",
	"inbound_deadline", "inbound_deadline_max" };

static void load_defaults(struct rs_yload *l, const struct rs_ynode *key,
    const struct rs_ynode *val, struct rs_policy *p)
{
	struct rs_walk w = { .l = l, .s = &p->defaults };

	p->defaults_line = key->line;
	if (val->type != RS_YNODE_MAP) {
		rs_ydoc_err(l, val, "'defaults' must be a mapping, not a %s",
		    rs_ydoc_type_name(val));
		return;
	}
	rs_walk_settings(&w, val);
}

static int add_rule(struct rs_policy *p, const struct rs_rule *r)
{
	struct rs_rule *v = realloc(p->rules, (p->nrules + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[p->nrules++] = *r;
	p->rules = v;
	return 0;
}

/* Parses the rule's `match:` value; returns 0 when it is usable. */
static int rule_match(struct rs_walk *w, const struct rs_ynode *item,
    struct rs_rule *r)
{
	const struct rs_ynode *val = w->match_val;
	const char *why = NULL;

	if (!val) {
		rs_ydoc_err(w->l, item, "host rule has no 'match' key");
		return -EINVAL;
	}
	if (!rs_ydoc_want_scalar(w->l, "match", val))
		return -EINVAL;
	if (rs_match_parse(&r->match, val->value, &why) < 0) {
		rs_ydoc_err(w->l, val, "invalid match '%s': %s", val->value,
		    why);
		return -EINVAL;
	}
	r->line = w->match_key->line;
	r->col = w->match_key->col;
	return 0;
}

static void load_rule(struct rs_yload *l, const struct rs_ynode *item,
    struct rs_policy *p)
{
	struct rs_rule r = { .settings = p->defaults };
	struct rs_walk w = { .l = l, .s = &r.settings, .host = true };

	if (item->type != RS_YNODE_MAP) {
		if (item->type != RS_YNODE_IGNORED)
			rs_ydoc_err(l, item, "a host rule must be a mapping "
			    "with a 'match' key, not a %s",
			    rs_ydoc_type_name(item));
		return;
	}
	rs_walk_settings(&w, item);
	if (rule_match(&w, item, &r) < 0)
		return;
	r.set = w.set;
	if (add_rule(p, &r) < 0) {
		rs_match_free(&r.match);
		rs_ydoc_err(l, item, "out of memory");
	}
}

static void load_hosts(struct rs_yload *l, const struct rs_ynode *val,
    struct rs_policy *p)
{
	if (val->type != RS_YNODE_SEQ) {
		rs_ydoc_err(l, val, "'hosts' must be a list of rules, not a %s",
		    rs_ydoc_type_name(val));
		return;
	}
	for (size_t i = 0; i < val->nkids; i++)
		load_rule(l, val->kids[i], p);
}

static void check_version(struct rs_yload *l, const struct rs_ynode *root,
    const struct rs_ynode *key, const struct rs_ynode *val)
{
	double v;

	if (!key)
		rs_ydoc_err(l, root, "missing 'version: 1' at the top of the "
		    "policy");
	else if (rs_ydoc_is_null(val))
		rs_ydoc_err(l, key, "'version' has no value");
	else if (rs_ydoc_want_scalar(l, "version", val) &&
	    rs_walk_integer(l, "version", val, 0, 1e9, &v) == 0 && v != 1)
		rs_ydoc_err(l, val, "unsupported policy version %s (this "
		    "resolute reads version 1)", val->value);
}

static void top_unknown(struct rs_yload *l, const struct rs_ynode *key)
{
	if (rs_walk_is_setting(key->value))
		rs_ydoc_err(l, key, "'%s' belongs under 'defaults:' or in a "
		    "host rule", key->value);
	else
		rs_walk_unknown_key(l, key, top_names, NTOP);
}

/* The top level: version first, then defaults, then the rules. */
static void check_root(struct rs_yload *l, const struct rs_ynode *root,
    struct rs_policy *p)
{
	const struct rs_ynode *k[NTOP] = { NULL }, *v[NTOP] = { NULL };

	for (size_t i = 0; i + 1 < root->nkids; i += 2) {
		size_t j = 0;

		if (!rs_ydoc_check_key(l, root, i))
			continue;
		while (j < NTOP && strcmp(root->kids[i]->value, top_names[j]))
			j++;
		if (j == NTOP) {
			top_unknown(l, root->kids[i]);
			continue;
		}
		k[j] = root->kids[i];
		v[j] = root->kids[i + 1];
	}
	check_version(l, root, k[0], v[0]);
	if (k[1] && rs_ydoc_is_null(v[1]))
		rs_ydoc_err(l, k[1], "'defaults' has no value");
	else if (k[1])
		load_defaults(l, k[1], v[1], p);
	if (k[2] && rs_ydoc_is_null(v[2]))
		rs_ydoc_err(l, k[2], "'hosts' has no value");
	else if (k[2])
		load_hosts(l, v[2], p);
	rs_policy_load_inbound(l, k + 3, v + 3, p);
}

/* Parses the text and checks the tree into p; returns 0 or -errno. */
static int load_into(struct rs_yload *l, struct rs_policy *p)
{
	struct rs_ynode *root = NULL;
	int ret = rs_ydoc_parse(l, &root);

	if (ret == 0 && root && root->type == RS_YNODE_MAP)
		check_root(l, root, p);
	else if (ret == 0 && root && rs_ydoc_is_null(root))
		rs_ydoc_err(l, root, "empty policy: expected a mapping with "
		    "'version: 1'");
	else if (ret == 0 && root && root->type != RS_YNODE_IGNORED)
		rs_ydoc_err(l, root, "a policy must be a mapping with "
		    "'version: 1', not a %s", rs_ydoc_type_name(root));
	rs_ydoc_free(root);
	return ret == -ENOMEM ? ret : 0;
}

int rs_policy_load_buffer(const char *name, const char *buf, size_t len,
    struct rs_policy **out, struct rs_diags *d)
{
	struct rs_yload l = { .name = name, .d = d, .first = d->n,
		.buf = buf, .len = len };
	struct rs_policy *p;
	int ret;

	*out = NULL;
	if (len > RS_POLICY_MAX_BYTES) {
		rs_diags_push(d, name, 0, 0,
		    "larger than 1 MiB (1048576 bytes)");
		return -EFBIG;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(name))) {
		free(p);
		return -ENOMEM;
	}
	rs_settings_init(&p->defaults);
	p->inbound_max_ms = RS_INBOUND_MAX_DEFAULT_MS;
	ret = load_into(&l, p);
	rs_ydoc_sort_diags(&l);
	if (ret == 0 && l.nerr)
		ret = -EINVAL;
	if (ret < 0) {
		rs_policy_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

int rs_policy_load_file(const char *path, struct rs_policy **out,
    struct rs_diags *d)
{
	char *buf, msg[160], ebuf[128];
	size_t len;
	int ret;

	*out = NULL;
	ret = rs_sys_read_file(path, RS_POLICY_MAX_BYTES, &buf, &len);
	if (ret < 0) {
		if (ret == -EINVAL)
			snprintf(msg, sizeof(msg), "cannot read: not a regular "
			    "file");
		else if (ret == -EFBIG)
			snprintf(msg, sizeof(msg), "cannot read: larger than "
			    "1 MiB (1048576 bytes)");
		else
			snprintf(msg, sizeof(msg), "cannot read: %s",
			    strerror_r(-ret, ebuf, sizeof(ebuf)));
		rs_diags_push(d, path, 0, 0, msg);
		return ret;
	}
	ret = rs_policy_load_buffer(path, buf, len, out, d);
	free(buf);
	return ret;
}

int rs_policy_load_default(struct rs_policy **out, struct rs_diags *d)
{
	return rs_policy_load_buffer("<built-in>", rs_default_policy,
	    (size_t)rs_default_policy_len, out, d);
}
