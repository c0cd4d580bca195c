#include "facts.h"

#include <errno.h>
#include <stdlib.h>

#include "cgroup.h"

/* Only what is read is cleared: the arrays are filled as far as they are read
 * (a scan decides every process on the machine). */
void facts_init(struct facts *f, enum ruling_trigger trigger) {
	f->id = (struct rule_identity){ .comm = NULL };
	f->trigger = trigger;
	f->pending = false;
	f->exe = f->cmdline = f->cgroup = NULL;
}

void facts_done(struct facts *f) {
	free(f->exe);
	free(f->cmdline);
	free(f->cgroup);
	for (size_t i = 0; i < f->id.n_ancestors; i++)
		free(f->exes[i]);
}

/* Kernel threads and other users' processes may refuse: an empty string then
 * matches no glob but "*". */
static void read_exe(const struct facts_source *src, pid_t pid, struct facts *f) {
	if (procfs_read_exe(src->root, pid, &f->exe) < 0)
		f->exe = NULL;
	f->id.exe = f->exe ? f->exe : "";
}

/* Through the readers off the loop where there are: a read under way
 * leaves the decision pending. Unreadable (refused, gone, or its user's
 * reads blocking) is the empty string. */
static void read_cmdline(const struct facts_source *src, const struct procfs_stat *st, struct facts *f) {
	uid_t uid;
	int e;

	if (!src->cmdlines)
		e = procfs_read_cmdline(src->root, st->pid, CMDLINES_MAX, &f->cmdline);
	else if ((e = procfs_read_uid(src->root, st->pid, &uid)) >= 0)
		e = cmdlines_get(src->cmdlines, st->pid, st->start_time, uid, (int)f->trigger, &f->cmdline);
	if (e == -EINPROGRESS) {
		f->pending = true;
		return;
	}
	if (e < 0)
		f->cmdline = NULL;
	f->id.cmdline = f->cmdline ? f->cmdline : "";
}

/* The parent alone (max 1) or every ancestor, read afresh: walked up once
 * for one decision, however many rules look at it. */
static void read_ancestors(const struct facts_source *src, const struct procfs_stat *st, size_t max, struct facts *f) {
	for (size_t i = 0; i < f->id.n_ancestors; i++) {
		free(f->exes[i]);
		f->exes[i] = NULL;
	}
	f->id.n_ancestors = procfs_read_ancestors(src->root, st, max, f->stats);
	for (size_t i = 0; i < f->id.n_ancestors; i++) {
		f->ancestors[i] = (struct rule_ancestor){ .pid = f->stats[i].pid, .comm = f->stats[i].comm };
		f->exes[i] = NULL;
	}
	f->id.ancestors = f->ancestors;
}

/* Each checked against the start time its stat gave: an ancestor that exited
 * after its stat was read may have left its pid to a process whose exe would
 * then pass for its own. (The process decided needs no such check: its pin
 * is set through a pidfd checked against its start time.) */
static void read_ancestor_exes(const struct facts_source *src, struct facts *f) {
	for (size_t i = 0; i < f->id.n_ancestors; i++) {
		if (f->exes[i])
			continue;
		if (procfs_read_exe_of(src->root, &f->stats[i], &f->exes[i]) < 0)
			f->exes[i] = NULL;
		f->ancestors[i].exe = f->exes[i];
	}
}

/* Reads what need asks for and f lacks. */
static void gather(const struct facts_source *src, const struct procfs_stat *st, unsigned need, struct facts *f) {
	unsigned read = f->id.read;

	/* The exe first: a rule whose exe glob it fails needs no command line. */
	if ((need & RULE_NEED_EXE) && !f->id.exe)
		read_exe(src, st->pid, f);
	else if ((need & RULE_NEED_CMDLINE) && !f->id.cmdline)
		read_cmdline(src, st, f);
	if ((need & RULE_NEED_ANCESTORS) && !(read & RULE_NEED_ANCESTORS)) {
		read_ancestors(src, st, RULE_ANCESTORS_MAX, f);
		read |= RULE_NEED_ANCESTORS | RULE_NEED_PARENT;
	} else if ((need & RULE_NEED_PARENT) && !(read & (RULE_NEED_PARENT | RULE_NEED_ANCESTORS))) {
		read_ancestors(src, st, 1, f);
		read |= RULE_NEED_PARENT;
	}
	/* The exes go with every ancestor read, also those read after them. */
	if ((need | read) & RULE_NEED_ANCESTOR_EXE) {
		read_ancestor_exes(src, f);
		read |= RULE_NEED_ANCESTOR_EXE;
	}
	if ((need & RULE_NEED_CGROUP) && !(read & RULE_NEED_CGROUP)) {
		if (cgroup_read_path(src->root, st->pid, &f->cgroup) < 0)
			f->cgroup = NULL;
		f->id.cgroup = f->cgroup;
		read |= RULE_NEED_CGROUP;
	}
	f->id.read = read;
}

/* Reads comm, and whatever else some rule needs: a stranger no rule names
 * costs its stat file alone. Each round reads at least one more kind of fact,
 * so there are at most as many rounds as kinds. */
const struct rule *facts_match(const struct facts_source *src, const struct rule *rules, size_t n_rules,
			       const struct procfs_stat *st, struct facts *f) {
	const struct rule *rule;
	unsigned need = 0;

	f->id.comm = st->comm;
	rule = rules_match(rules, n_rules, &f->id, &need);
	for (int round = 0; !rule && need && !f->pending && round < 7; round++) {
		gather(src, st, need, f);
		rule = rules_match(rules, n_rules, &f->id, &need);
	}
	return rule;
}

void facts_read_all(const struct facts_source *src, const struct procfs_stat *st, struct facts *f) {
	const unsigned everything = RULE_NEED_EXE | RULE_NEED_CMDLINE | RULE_NEED_ANCESTORS | RULE_NEED_ANCESTOR_EXE |
				    RULE_NEED_CGROUP;

	f->id.comm = st->comm;
	/* A kind of fact each round: the exe, then the command line. */
	for (int round = 0; round < 3; round++)
		gather(src, st, everything, f);
}
