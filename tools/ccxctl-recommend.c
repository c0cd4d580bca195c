/* ccxctl recommend: the groups ccxd kept, as rules a person can paste
 * into a drop-in, so that the programs are pinned together from their
 * exec on, without an experiment, also after a restart. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ccxctl-print.h"
#include "ccxctl-text.h"

static json_object *get(json_object *o, const char *key) {
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str(json_object *o, const char *key) {
	json_object *v = get(o, key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static size_t len_of(json_object *a) {
	return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* A name a rule can hold as it is: a section label, or a comm to match. */
static bool plain_name(const char *s, size_t len) {
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", s[i]))
			return false;
	return true;
}

/* A path exe = can match as it is: absolute, no glob character, nothing a
 * config line would cut or end at. */
static bool plain_path(const char *s, size_t len) {
	if (len < 2 || s[0] != '/')
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || strchr("*?[\\;#", s[i]))
			return false;
	return true;
}

/* Whether rules already holds a rule whose key is value. */
static bool holds(json_object *rules, const char *key, const char *value, size_t len) {
	for (size_t i = 0; i < len_of(rules); i++) {
		const char *v = str(json_object_array_get_idx(rules, i), key);
		if (v && strlen(v) == len && memcmp(v, value, len) == 0)
			return true;
	}
	return false;
}

/* One rule for program (len bytes of a "a|b" list: a path for root, a
 * name for others) of kept group g, or a line in left_out. */
static void add_rule(json_object *rules, json_object *left_out, json_object *g, const char *program, size_t len) {
	const char *slash = memrchr(program, '/', len), *base = slash ? slash + 1 : program;
	size_t base_len = len - (size_t)(base - program);
	json_object *r, *ccx;
	char name[64];

	if (!plain_name(base, base_len) || base_len >= sizeof(name) - 8 || (slash && !plain_path(program, len))) {
		json_object_array_add(left_out, json_object_new_string_len(program, (int)len));
		return;
	}
	/* A program twice, in one group or two: its first rule decides. */
	if (holds(rules, slash ? "exe" : "name", program, len))
		return;
	snprintf(name, sizeof(name), "%.*s", (int)base_len, base);
	for (int k = 2; holds(rules, "name", name, strlen(name)); k++)
		snprintf(name, sizeof(name), "%.*s-%d", (int)base_len, base, k);
	r = json_object_new_object();
	ccx = json_object_new_array();
	json_object_array_add(ccx, json_object_get(get(g, "ccx")));
	json_object_object_add(r, "name", json_object_new_string(name));
	json_object_object_add(r, "exe", slash ? json_object_new_string_len(program, (int)len) : NULL);
	json_object_object_add(r, "ccx", ccx);
	json_object_object_add(r, "group", json_object_get(get(g, "id")));
	json_object_object_add(r, "seating", json_object_get(get(g, "seating")));
	json_object_object_add(r, "gain", json_object_get(get(g, "gain")));
	json_object_object_add(r, "noise", json_object_get(get(g, "noise")));
	json_object_array_add(rules, r);
}

json_object *recommend_rules(json_object *status) {
	json_object *groups = get(status, "groups"), *o = json_object_new_object(), *rules = json_object_new_array(),
		    *left_out = json_object_new_array();

	for (size_t i = 0; i < len_of(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i);
		const char *programs = str(g, "programs");

		if (!programs || strcmp(str(g, "state") ? str(g, "state") : "", "kept") != 0 ||
		    !json_object_is_type(get(g, "ccx"), json_type_int))
			continue;
		for (const char *p = programs; *p;) {
			const char *end = strchr(p, '|');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			add_rule(rules, left_out, g, p, len);
			p += len + (end ? 1 : 0);
		}
	}
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "left_out", left_out);
	return o;
}

void print_recommended(FILE *f, json_object *r) {
	json_object *rules = get(r, "rules"), *left_out = get(r, "left_out");
	const char *last_group = "";

	text_escape_json(r);
	if (len_of(rules) == 0 && len_of(left_out) == 0) {
		fprintf(f, "; ccxd keeps no group now: nothing to recommend (ccxctl status shows the groups)\n");
		return;
	}
	fprintf(f, "; The groups ccxd kept, as rules: pasted into a drop-in, such as\n"
		   "; /etc/ccxd.conf.d/kept.conf, they pin each program at its exec on the CCX\n"
		   "; its group won on (ccxctl reload reads it).\n");
	for (size_t i = 0; i < len_of(rules); i++) {
		json_object *x = json_object_array_get_idx(rules, i), *gain = get(x, "gain");
		const char *group = json_object_get_string(get(x, "group")) ? json_object_get_string(get(x, "group")) : "-";

		if (strcmp(group, last_group) != 0) {
			fprintf(f, "\n; group %s: %s on CCX %s", group, str(x, "seating") ? str(x, "seating") : "-",
				json_object_get_string(json_object_array_get_idx(get(x, "ccx"), 0)));
			if (json_object_is_type(gain, json_type_double) || json_object_is_type(gain, json_type_int))
				fprintf(f, ", %+.0f%% (noise %.0f%%)", json_object_get_double(gain) * 100,
					json_object_get_double(get(x, "noise")) * 100);
			fprintf(f, "\n");
			last_group = group;
		}
		fprintf(f, "[program:%s]\n", str(x, "name"));
		if (str(x, "exe"))
			fprintf(f, "exe = %s\n", str(x, "exe"));
		fprintf(f, "ccx = %s\n", json_object_get_string(json_object_array_get_idx(get(x, "ccx"), 0)));
	}
	for (size_t i = 0; i < len_of(left_out); i++)
		fprintf(f, "%s; left out, not a plain name or path: %s\n", i ? "" : "\n",
			json_object_get_string(json_object_array_get_idx(left_out, i)));
}
