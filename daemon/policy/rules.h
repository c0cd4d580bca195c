/* Per-program rules from [program:NAME] sections, and which rule a process
 * matches. Matching is a pure function of the process's identity. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum rule_policy {
	RULE_POLICY_PIN,          /* the process on the CPUs of the rule's CCXs */
	RULE_POLICY_COMPACT,      /* the process on one CCX, the least loaded of the rule's */
	RULE_POLICY_SPREAD,       /* its threads spread round-robin over the rule's CCXs */
	RULE_POLICY_PAIR,         /* seat it with the processes it talks to */
	RULE_POLICY_AUTO,         /* leave it to the automatic policy */
	RULE_POLICY_IGNORE,       /* never touch it */
};

enum rule_smt {
	RULE_SMT_ALLOW,           /* every PU of each core */
	RULE_SMT_AVOID,           /* one PU per core */
};

enum rule_prefer {
	RULE_PREFER_ANY,
	RULE_PREFER_CACHE,        /* among CCXs, the largest L3 first */
	RULE_PREFER_FREQUENCY,    /* among CCXs, the smallest L3 first (higher clocks on X3D parts) */
};

struct rule {
	char *name;               /* NAME of [program:NAME]: a glob on comm unless exe is set */
	char *exe;                /* glob on the executable path, or NULL */
	char *cmdline;            /* glob on the command line (arguments joined by spaces), or NULL */
	bool ccx_auto;            /* ccx = auto (the default) */
	unsigned *ccx;            /* ccx = 1 or ccx = 0,2: indexes, in the order given */
	size_t n_ccx;
	enum rule_policy policy;  /* default pin */
	enum rule_smt smt;        /* default allow */
	enum rule_prefer prefer;  /* default any */
	bool force;               /* default no */
	unsigned line;            /* line of the section header, for messages */
	unsigned ccx_line;        /* line of the ccx key (= line when not given) */
};

/* What the caller has read about a process. exe and cmdline may be NULL when
 * they have not been read yet: see rules_match(). */
struct rule_identity {
	const char *comm;
	const char *exe;
	const char *cmdline;
};

#define RULE_NEED_EXE      (1u << 0)
#define RULE_NEED_CMDLINE  (1u << 1)

/* Returns the first rule, in file order, that matches id; NULL when none does.
 * When the answer depends on a field that id lacks (NULL exe or cmdline),
 * returns NULL and sets *need to the RULE_NEED_* flags of what to read before
 * asking again; *need is 0 otherwise. This lets the caller skip reading
 * /proc/PID/exe and cmdline for the common case of no rule. */
const struct rule *rules_match(const struct rule *rules, size_t n_rules,
			       const struct rule_identity *id, unsigned *need);

const char *rule_policy_to_string(enum rule_policy p);
const char *rule_smt_to_string(enum rule_smt s);
const char *rule_prefer_to_string(enum rule_prefer p);

void rule_done(struct rule *r);
