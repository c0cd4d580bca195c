#include "rules.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* TASK_COMM_LEN - 1: the kernel keeps at most this many bytes of a program's
 * name in comm. */
#define RULE_COMM_MAX 15

static const char *const policy_names[] = {
	[RULE_POLICY_PIN] = "pin",
	[RULE_POLICY_COMPACT] = "compact",
	[RULE_POLICY_SPREAD] = "spread",
	[RULE_POLICY_PAIR] = "pair",
	[RULE_POLICY_AUTO] = "auto",
	[RULE_POLICY_IGNORE] = "ignore",
};

static const char *const smt_names[] = {
	[RULE_SMT_ALLOW] = "allow",
	[RULE_SMT_AVOID] = "avoid",
};

static const char *const prefer_names[] = {
	[RULE_PREFER_ANY] = "any",
	[RULE_PREFER_CACHE] = "cache",
	[RULE_PREFER_FREQUENCY] = "frequency",
};

#define NAME_OF(table, i) \
	((unsigned)(i) < sizeof(table) / sizeof((table)[0]) ? (table)[(unsigned)(i)] : NULL)

const char *rule_policy_to_string(enum rule_policy p) {
	return NAME_OF(policy_names, p);
}

const char *rule_smt_to_string(enum rule_smt s) {
	return NAME_OF(smt_names, s);
}

const char *rule_prefer_to_string(enum rule_prefer p) {
	return NAME_OF(prefer_names, p);
}

static bool is_glob(const char *s) {
	return strpbrk(s, "*?[\\") != NULL;
}

static bool comm_matches(const char *pattern, const char *comm) {
	if (fnmatch(pattern, comm, 0) == 0)
		return true;
	/* The kernel cuts comm to 15 bytes, so [program:x265-encoder-main]
	 * would never match its own process, which shows as "x265-encoder-ma".
	 * A plain name that long is taken to mean the program whose comm is its
	 * first 15 bytes. A glob is left alone: where it should be cut is not
	 * well defined (rules for long names can use exe instead). */
	if (is_glob(pattern) || strlen(pattern) <= RULE_COMM_MAX)
		return false;
	return strlen(comm) == RULE_COMM_MAX && strncmp(pattern, comm, RULE_COMM_MAX) == 0;
}

/* No FNM_PATHNAME: "/usr/bin/x265*" and "*x265" should match wherever a
 * '*' lands, slashes included, as people expect of a program pattern. */
static bool glob_matches(const char *pattern, const char *s) {
	return fnmatch(pattern, s, 0) == 0;
}

/* A rule is decided with what id has when one of its known parts fails
 * (the missing parts cannot make it match); only a rule that still could
 * match asks for what it lacks. That keeps the common case (no rule for this
 * comm) from reading /proc/PID/exe and cmdline at all. We stop at the first
 * such rule rather than look further: a later rule must not win over an
 * earlier one that might match once the caller has read more. */
const struct rule *rules_match(const struct rule *rules, size_t n_rules,
			       const struct rule_identity *id, unsigned *need) {
	const char *comm = id->comm ? id->comm : "";

	*need = 0;
	for (size_t i = 0; i < n_rules; i++) {
		const struct rule *r = &rules[i];
		unsigned missing = 0;

		if (r->exe) {
			if (!id->exe)
				missing |= RULE_NEED_EXE;
			else if (!glob_matches(r->exe, id->exe))
				continue;
		} else if (!comm_matches(r->name, comm))
			continue;

		if (r->cmdline) {
			if (!id->cmdline)
				missing |= RULE_NEED_CMDLINE;
			else if (!glob_matches(r->cmdline, id->cmdline))
				continue;
		}

		if (missing) {
			*need = missing;
			return NULL;
		}
		return r;
	}
	return NULL;
}

void rule_done(struct rule *r) {
	if (!r)
		return;
	free(r->name);
	free(r->exe);
	free(r->cmdline);
	free(r->ccx);
	r->name = r->exe = r->cmdline = NULL;
	r->ccx = NULL;
	r->n_ccx = 0;
}
