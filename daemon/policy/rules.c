#include "rules.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

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

/* parent = and ancestor = name a process by comm, or by exe when the glob
 * holds a '/': no comm has one worth matching, and every exe does. */
static bool names_by_exe(const char *pattern) {
	return strchr(pattern, '/') != NULL;
}

static bool ancestor_matches(const char *pattern, const struct rule_ancestor *a) {
	if (names_by_exe(pattern))
		return glob_matches(pattern, a->exe ? a->exe : "");
	return comm_matches(pattern, a->comm ? a->comm : "");
}

/* What matching pattern on the ancestors (what: RULE_NEED_PARENT or
 * RULE_NEED_ANCESTORS) takes that id has not read. All of them hold the
 * parent; the exes go with every ancestor read. */
static unsigned ancestors_lacking(const char *pattern, unsigned what, unsigned read) {
	unsigned lack = 0;

	if (!(read & what) && !(what == RULE_NEED_PARENT && (read & RULE_NEED_ANCESTORS)))
		lack |= what;
	if (names_by_exe(pattern) && !(read & RULE_NEED_ANCESTOR_EXE))
		lack |= RULE_NEED_ANCESTOR_EXE;
	return lack;
}

/* The first ancestor, up to limit of them, that pattern matches; NULL when none. */
static const struct rule_ancestor *first_ancestor(const char *pattern, const struct rule_identity *id, size_t limit) {
	for (size_t i = 0; i < id->n_ancestors && i < limit; i++)
		if (ancestor_matches(pattern, &id->ancestors[i]))
			return &id->ancestors[i];
	return NULL;
}

const char *rules_unit_of(const char *cgroup, size_t *len) {
	static const char *const suffixes[] = { ".service", ".scope" };
	const char *end, *start;

	if (!cgroup)
		return NULL;
	/* From the innermost component out: a service's own sub-cgroups
	 * (Delegate=yes) sit below it and belong to it. */
	for (end = cgroup + strlen(cgroup); end > cgroup; end = start) {
		size_t n;

		for (start = end; start > cgroup && start[-1] != '/'; start--)
			;
		n = (size_t)(end - start);
		for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
			size_t sl = strlen(suffixes[k]);

			if (n > sl && memcmp(end - sl, suffixes[k], sl) == 0) {
				*len = n;
				return start;
			}
		}
		if (start > cgroup)
			start--;   /* past the '/' */
	}
	return NULL;
}

/* Unit names are at most 255 bytes (UNIT_NAME_MAX); a longer component is
 * no unit's. */
#define UNIT_NAME_MAX 255

/* Copies the unit of id's cgroup into buf. Returns false when it has none. */
static bool unit_of(const struct rule_identity *id, char buf[UNIT_NAME_MAX + 1]) {
	size_t len;
	const char *u = rules_unit_of(id->cgroup, &len);

	if (!u || len > UNIT_NAME_MAX)
		return false;
	memcpy(buf, u, len);
	buf[len] = '\0';
	return true;
}

/* Whether rule's keys beyond comm, exe and cmdline match id: 1 yes, 0 no, -1
 * when that depends on what id lacks, with the RULE_NEED_* bits of it added
 * to *missing. */
static int context_matches(const struct rule *r, const struct rule_identity *id, unsigned *missing) {
	unsigned lack = 0;
	char unit[UNIT_NAME_MAX + 1];

	if (r->parent) {
		unsigned need = ancestors_lacking(r->parent, RULE_NEED_PARENT, id->read);

		if (need)
			lack |= need;
		else if (!first_ancestor(r->parent, id, 1))
			return 0;
	}
	if (r->ancestor) {
		unsigned need = ancestors_lacking(r->ancestor, RULE_NEED_ANCESTORS, id->read);

		if (need)
			lack |= need;
		else if (!first_ancestor(r->ancestor, id, RULE_ANCESTORS_MAX))
			return 0;
	}
	if (r->unit || r->cgroup) {
		if (!(id->read & RULE_NEED_CGROUP))
			lack |= RULE_NEED_CGROUP;
		/* A process in no cgroup, or in none of systemd's units,
		 * matches no glob, not even "*". */
		else if (r->cgroup && (!id->cgroup || !glob_matches(r->cgroup, id->cgroup)))
			return 0;
		else if (r->unit && (!unit_of(id, unit) || !glob_matches(r->unit, unit)))
			return 0;
	}
	*missing |= lack;
	return lack ? -1 : 1;
}

/* A rule is decided with what id has when one of its known parts fails
 * (the missing parts cannot make it match); only a rule that still could
 * match asks for what it lacks. That keeps the common case (no rule for this
 * comm) from reading /proc/PID/exe, cmdline, the parents and the cgroup at
 * all. We stop at the first such rule rather than look further: a later rule
 * must not win over an earlier one that might match once the caller has read
 * more. */
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

		if (context_matches(r, id, &missing) == 0)
			continue;

		if (missing) {
			*need = missing;
			return NULL;
		}
		return r;
	}
	return NULL;
}

/* The first of context's keys that fails, as words; NULL when all match. */
static const char *context_why_not(const struct rule *r, const struct rule_identity *id, char *buf, size_t size) {
	char unit[UNIT_NAME_MAX + 1];

	if (r->parent && !first_ancestor(r->parent, id, 1))
		snprintf(buf, size, "its parent does not match parent = %s", r->parent);
	else if (r->ancestor && !first_ancestor(r->ancestor, id, RULE_ANCESTORS_MAX))
		snprintf(buf, size, "no ancestor matches ancestor = %s", r->ancestor);
	else if (r->cgroup && !id->cgroup)
		snprintf(buf, size, "it is in no cgroup (cgroup = %s)", r->cgroup);
	else if (r->cgroup && !glob_matches(r->cgroup, id->cgroup))
		snprintf(buf, size, "its cgroup does not match cgroup = %s", r->cgroup);
	else if (r->unit && !unit_of(id, unit))
		snprintf(buf, size, "it is in no systemd unit (unit = %s)", r->unit);
	else if (r->unit && !glob_matches(r->unit, unit))
		snprintf(buf, size, "its unit does not match unit = %s", r->unit);
	else
		return NULL;
	return buf;
}

bool rules_why_not(const struct rule *r, const struct rule_identity *id, char *buf, size_t size) {
	const char *comm = id->comm ? id->comm : "";
	unsigned lack = 0;

	if (r->exe && !glob_matches(r->exe, id->exe ? id->exe : ""))
		snprintf(buf, size, "its executable does not match exe = %s", r->exe);
	else if (!r->exe && !comm_matches(r->name, comm))
		snprintf(buf, size, "its name does not match [program:%s]", r->name);
	else if (r->cmdline && !id->cmdline)
		snprintf(buf, size, "its command line is being read (cmdline = %s): ask again", r->cmdline);
	else if (r->cmdline && !glob_matches(r->cmdline, id->cmdline))
		snprintf(buf, size, "its command line does not match cmdline = %s", r->cmdline);
	else if (context_matches(r, id, &lack) < 0)
		snprintf(buf, size, "what it needs was not read");
	else if (!context_why_not(r, id, buf, size))
		return true;
	return false;
}

void rules_explanation_done(struct rules_explanation *e) {
	free(e->exe);
	free(e->cmdline);
	free(e->cgroup);
	free(e->matches);
	free(e->why);
	*e = (struct rules_explanation){ .n_rules = 0 };
}

/* Whether rule may name a process called comm, whatever else it is. */
static bool may_name(const struct rule *rule, const char *comm) {
	return rule->exe || comm_matches(rule->name, comm);
}

int rules_exec_names(const struct rule *rules, size_t n_rules, struct rules_name **ret, size_t *n, bool *every) {
	struct rules_name *names = calloc(n_rules ? n_rules : 1, sizeof(*names));

	*ret = NULL;
	*n = 0;
	*every = false;
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n_rules; i++) {
		struct rules_name name = { .comm = "" };
		bool seen = false;

		if (rules[i].exe || is_glob(rules[i].name)) {
			*every = true;
			continue;
		}
		memcpy(name.comm, rules[i].name, strnlen(rules[i].name, RULE_COMM_MAX));
		for (size_t k = 0; k < *n && !seen; k++)
			seen = strcmp(names[k].comm, name.comm) == 0;
		if (seen)
			continue;
		for (size_t k = 0; k < n_rules; k++)
			name.needs_cmdline |= rules[k].cmdline && may_name(&rules[k], name.comm);
		names[(*n)++] = name;
	}
	*ret = names;
	return 0;
}

__attribute__((format(printf, 4, 5)))
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...) {
	va_list ap;
	int n;

	if (*len >= size)
		return;
	if (*len > 0) {
		n = snprintf(buf + *len, size - *len, ", ");
		*len += n > 0 ? (size_t)n : 0;
		if (*len >= size)
			return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

static void explain_ancestor(char *buf, size_t size, size_t *len, const char *key, const char *pattern,
			     const struct rule_identity *id, size_t limit) {
	const struct rule_ancestor *a = first_ancestor(pattern, id, limit);

	if (!a)
		return;
	append(buf, size, len, "%s %s[%d]", key,
	       names_by_exe(pattern) ? (a->exe ? a->exe : "") : (a->comm ? a->comm : ""), (int)a->pid);
}

void rules_explain(const struct rule *rule, const struct rule_identity *id, char *buf, size_t size) {
	char unit[UNIT_NAME_MAX + 1];
	size_t len = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	if (rule->parent)
		explain_ancestor(buf, size, &len, "parent", rule->parent, id, 1);
	if (rule->ancestor)
		explain_ancestor(buf, size, &len, "ancestor", rule->ancestor, id, RULE_ANCESTORS_MAX);
	if (rule->unit && unit_of(id, unit))
		append(buf, size, &len, "unit %s", unit);
	if (rule->cgroup && id->cgroup)
		append(buf, size, &len, "cgroup %s", id->cgroup);
}

void rule_done(struct rule *r) {
	if (!r)
		return;
	free(r->name);
	free(r->exe);
	free(r->cmdline);
	free(r->parent);
	free(r->ancestor);
	free(r->unit);
	free(r->cgroup);
	free(r->ccx);
	r->name = r->exe = r->cmdline = r->parent = r->ancestor = r->unit = r->cgroup = NULL;
	r->ccx = NULL;
	r->n_ccx = 0;
}

/* idle KEY WHY: one more, where there is room */
static void idle_add(struct rules_idle *idle, size_t max, size_t *n, const char *key, const char *why) {
	if (*n < max)
		idle[*n] = (struct rules_idle){ key, why };
	(*n)++;
}

size_t rules_idle_keys(const struct rule *r, struct rules_idle *idle, size_t max) {
	const char *placed_by = r->policy == RULE_POLICY_IGNORE ? "policy = ignore never places the program"
			      : r->policy == RULE_POLICY_PAIR  ? "policy = pair leaves the program to the automatic policy"
			      : r->policy == RULE_POLICY_AUTO  ? "policy = auto leaves the program to the automatic policy"
							       : NULL;
	size_t n = 0;

	if (placed_by) {
		if (r->n_ccx > 0)
			idle_add(idle, max, &n, "ccx", placed_by);
		if (r->smt != RULE_SMT_ALLOW)
			idle_add(idle, max, &n, "smt", placed_by);
		if (r->prefer != RULE_PREFER_ANY)
			idle_add(idle, max, &n, "prefer", placed_by);
		if (r->spill)
			idle_add(idle, max, &n, "spill", placed_by);
		if (r->force)
			idle_add(idle, max, &n, "force", placed_by);
		return n < max ? n : max;
	}
	if (r->spill && r->policy == RULE_POLICY_SPREAD)
		idle_add(idle, max, &n, "spill",
			 "policy = spread gives each thread a CCX, and only a program pinned to one CCX spills");
	else if (r->spill && r->policy == RULE_POLICY_PIN && r->n_ccx > 1)
		idle_add(idle, max, &n, "spill", "ccx lists several CCXs, and only a program pinned to one CCX spills");
	if (r->prefer != RULE_PREFER_ANY && !r->ccx_auto && (r->policy == RULE_POLICY_PIN || r->n_ccx == 1))
		idle_add(idle, max, &n, "prefer",
			 r->n_ccx == 1 ? "ccx names one CCX: there is none to choose"
				       : "policy = pin takes every CCX that ccx lists: there is none to choose");
	return n < max ? n : max;
}