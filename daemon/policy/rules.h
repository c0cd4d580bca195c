/* Per-program rules from [program:NAME] sections, and which rule a process
 * matches. Matching is a pure function of what the caller read of the
 * process: its name, executable and command line, its parent and
 * ancestors, its cgroup. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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
	RULE_PREFER_FREQUENCY,    /* among CCXs, the highest clock first where the machine says; else the
				   * smallest L3 (the one that clocks higher on X3D parts) */
};

struct rule {
	char *name;               /* NAME of [program:NAME]: a glob on comm unless exe is set */
	char *exe;                /* glob on the executable path, or NULL */
	char *cmdline;            /* glob on the command line (arguments joined by spaces), or NULL */
	char *parent;             /* glob on the parent's comm, or on its exe when it holds a '/'; or NULL */
	char *ancestor;           /* the same, on any ancestor: the parent, its parent, ... up to pid 1 */
	char *unit;               /* glob on the systemd unit: rules_unit_of() the cgroup; or NULL */
	char *cgroup;             /* glob on the cgroup path (rule_identity.cgroup), or NULL */
	bool ccx_auto;            /* ccx = auto (the default) */
	unsigned *ccx;            /* ccx = 1 or ccx = 0,2: indexes, in the order given */
	size_t n_ccx;
	enum rule_policy policy;  /* default pin */
	enum rule_smt smt;        /* default allow */
	enum rule_prefer prefer;  /* default any */
	bool force;               /* default no */
	bool spill;               /* default no: a hard pin, crowded or not (spills.h) */
	const char *file;         /* the file it comes from (the config owns it); NULL: not known */
	unsigned line;            /* line of the section header in file, for messages */
	unsigned ccx_line;        /* line of the ccx key (= line when not given) */
};

/* One ancestor of a process, as the caller read it. */
struct rule_ancestor {
	pid_t pid;
	const char *comm;
	const char *exe;          /* NULL when unreadable (a kernel thread, no privilege, the
				   * pid taken by another process since): matches as "" */
};

#define RULE_NEED_EXE           (1u << 0)
#define RULE_NEED_CMDLINE       (1u << 1)
#define RULE_NEED_PARENT        (1u << 2)  /* ancestors[0], or that there is none */
#define RULE_NEED_ANCESTORS     (1u << 3)  /* every ancestor, up to pid 1 or RULE_ANCESTORS_MAX */
#define RULE_NEED_ANCESTOR_EXE  (1u << 4)  /* the ancestors' exe too */
#define RULE_NEED_CGROUP        (1u << 5)

/* How far up the tree ancestor = looks: a bound on the reads per decision
 * (real trees are a dozen deep). */
#define RULE_ANCESTORS_MAX 64

/* What the caller has read about a process. exe and cmdline may be NULL when
 * they have not been read yet; what else was read, read says, in RULE_NEED_*
 * bits: see rules_match(). */
struct rule_identity {
	const char *comm;
	const char *exe;
	const char *cmdline;
	unsigned read;            /* RULE_NEED_PARENT, _ANCESTORS, _ANCESTOR_EXE, _CGROUP: read */
	const struct rule_ancestor *ancestors; /* the parent first, then its parent, ...: one with
				   * RULE_NEED_PARENT read, all with RULE_NEED_ANCESTORS */
	size_t n_ancestors;       /* 0: it has none (pid 1, or its parent exited) */
	const char *cgroup;       /* with RULE_NEED_CGROUP read: the cgroup path, NULL when it has none */
};

/* Returns the first rule, in file order, that matches id: one whose every key
 * matches. NULL when none does. When the answer depends on a field that id
 * lacks (NULL exe or cmdline, a RULE_NEED_* bit not in id->read), returns
 * NULL and sets *need to the RULE_NEED_* flags of what to read before asking
 * again; *need is 0 otherwise. This lets the caller skip reading
 * /proc/PID/exe, cmdline, the parents and the cgroup for the common case of
 * no rule. */
const struct rule *rules_match(const struct rule *rules, size_t n_rules,
			       const struct rule_identity *id, unsigned *need);

/* TASK_COMM_LEN - 1: the kernel keeps at most this many bytes of a program's
 * name in comm. */
#define RULE_COMM_MAX 15

/* A comm that a rule can name, as the kernel shows it. */
struct rules_name {
	char comm[RULE_COMM_MAX + 1];
	bool needs_cmdline;       /* some rule that may name it has a cmdline key */
};

/* What execs can concern the rules, known from the new program's comm
 * alone: the comms that the plain names of [program:NAME] sections give
 * (cut to 15 bytes, as comm is), each once, in *ret (malloc'd, *n of
 * them). *every is set when some rule may name any comm: one matching by
 * exe, or whose name is a glob. Returns 0, or -ENOMEM. */
int rules_exec_names(const struct rule *rules, size_t n_rules, struct rules_name **ret, size_t *n, bool *every);

/* The systemd unit of a cgroup path: its last component that ends in
 * ".service" or ".scope" (a slice holds no process of its own), as a
 * pointer into cgroup and its length in *len. NULL when there is none. */
const char *rules_unit_of(const char *cgroup, size_t *len);

/* What rule, which id matched, matched on beyond the process's own name and
 * command line, for a person: "parent launcher[412], unit foo.service".
 * "" for a rule that has no parent, ancestor, unit or cgroup key. */
void rules_explain(const struct rule *rule, const struct rule_identity *id, char *buf, size_t size);

/* For a person who asks why (ccxctl explain): whether rule matches id,
 * read whole (every RULE_NEED_* in read, exe and cmdline read; a cmdline
 * still NULL is one being read), and when not, the first key of it that
 * fails, in buf: "its executable does not match exe = /usr/bin/x265*". The
 * words name the rule's patterns, never what was read of the process. */
bool rules_why_not(const struct rule *rule, const struct rule_identity *id, char *buf, size_t size);

/* What the rules make of one process, for a person who asks why
 * (ccxctl explain): what was read of it, and each rule's verdict in file
 * order (rules_why_not()). */
struct rules_explanation {
	char comm[16];
	char *exe, *cmdline, *cgroup;  /* NULL: unreadable (the command line: or being read) */
	pid_t parent;                  /* 0: none */
	char parent_comm[16];
	size_t n_rules;
	bool *matches;                 /* each rule's */
	char (*why)[192];              /* why not, for those that do not match */
};
void rules_explanation_done(struct rules_explanation *e);

/* A key of a rule that can do nothing, and why. */
struct rules_idle {
	const char *key;          /* "ccx", "smt", "prefer", "spill", "force" */
	const char *why;          /* "policy = ignore never places the program" */
};

/* The keys of r that can do nothing, at most max of them into idle:
 * placing keys under a policy that places nothing (ignore) or leaves the
 * program to the automatic policy (pair, auto), spill = yes where the
 * program is not pinned to one CCX, prefer where there is no CCX to
 * choose. Returns how many. */
size_t rules_idle_keys(const struct rule *r, struct rules_idle *idle, size_t max);

const char *rule_policy_to_string(enum rule_policy p);
const char *rule_smt_to_string(enum rule_smt s);
const char *rule_prefer_to_string(enum rule_prefer p);

void rule_done(struct rule *r);
