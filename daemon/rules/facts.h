/* What is read of a process to match it against the rules: its comm
 * first, and only what some rule still asks for besides (its exe, command
 * line, ancestors, their exes, its cgroup), each read once for one
 * decision however many rules look at it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cmdlines.h"
#include "procfs.h"
#include "rules.h"
#include "ruling.h"

/* Where the facts are read: /proc under root, and command lines through
 * the readers off the loop (NULL: read at once). */
struct facts_source {
	const char *root;
	struct cmdlines *cmdlines;
};

/* What was read of a process to match it against the rules: its comm, and
 * only what some rule asked for besides. */
struct facts {
	struct rule_identity id;
	enum ruling_trigger trigger; /* what the decision is for: the tag of a command line read later */
	bool pending;             /* a command line some rule needs is being read */
	char *exe, *cmdline, *cgroup;
	struct procfs_stat stats[RULE_ANCESTORS_MAX];     /* the ancestors' */
	char *exes[RULE_ANCESTORS_MAX];                   /* with RULE_NEED_ANCESTOR_EXE */
	struct rule_ancestor ancestors[RULE_ANCESTORS_MAX];
};


void facts_init(struct facts *f, enum ruling_trigger trigger);
/* Frees what was read, but what the caller took (set to NULL). */
void facts_done(struct facts *f);

/* The first of rules that matches st's process, or NULL; what was read is
 * left in f. f->pending: a command line some rule needs is being read (the
 * decision waits for the cmdlines' ready callback). */
const struct rule *facts_match(const struct facts_source *src, const struct rule *rules, size_t n_rules,
			       const struct procfs_stat *st, struct facts *f);
/* Every fact a rule may look at, for explaining (f->pending as above). */
void facts_read_all(const struct facts_source *src, const struct procfs_stat *st, struct facts *f);
