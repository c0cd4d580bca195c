#include "manager.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "actuator.h"
#include "autoplace.h"
#include "control.h"
#include "cpulist.h"
#include "ledger.h"
#include "log.h"
#include "metrics.h"
#include "placer.h"
#include "probe.h"
#include "prober.h"
#include "procfs.h"
#include "watcher.h"

/* Longest command line read for cmdline = globs. */
#define CMDLINE_MAX 4096

enum trigger {
	TRIGGER_EXEC,             /* it just became a new program */
	TRIGGER_COMM,             /* it renamed itself */
	TRIGGER_SCAN,             /* found by a /proc scan */
	TRIGGER_RELOAD,           /* the rules changed */
};

/* ---- configuration ---------------------------------------------------- */

static char *strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strdupf(const char *fmt, ...) {
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

static int strv_push(char ***strv, size_t *n, char *s) {
	char **p;

	if (!s)
		return -ENOMEM;
	p = realloc(*strv, (*n + 2) * sizeof(*p));
	if (!p) {
		free(s);
		return -ENOMEM;
	}
	p[(*n)++] = s;
	p[*n] = NULL;
	*strv = p;
	return 0;
}

/* Rules name CCXs by index; only the topology can say whether they exist. */
static int check_rules_fit(const struct config *c, const struct topology *t, char ***errors) {
	size_t n = 0;

	*errors = NULL;
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *r = &c->rules[i];
		for (size_t k = 0; k < r->n_ccx; k++) {
			char *msg;
			if (r->ccx[k] < t->n_ccx && t->ccx[r->ccx[k]].usable)
				continue;
			if (r->ccx[k] < t->n_ccx)
				msg = strdupf("%s:%u: ccx %u has no online CPU", c->path, r->ccx_line, r->ccx[k]);
			else
				msg = strdupf("%s:%u: ccx %u does not exist: topology %s has %u CCX%s (0-%u)",
					      c->path, r->ccx_line, r->ccx[k], t->source, t->n_ccx,
					      t->n_ccx == 1 ? "" : "s", t->n_ccx ? t->n_ccx - 1 : 0);
			if (strv_push(errors, &n, msg) < 0)
				return -ENOMEM;
		}
	}
	return n ? -EINVAL : 0;
}

int manager_load_config(const char *path, bool explicit_path, struct config **ret_config,
			struct topology **ret_topology, char ***errors) {
	struct config *c = NULL;
	struct topology *t = NULL;
	char *error = NULL;
	int r;

	*errors = NULL;
	r = config_load(path, &c, errors);
	if (r == -ENOENT && !explicit_path) {
		config_errors_free(*errors);
		*errors = NULL;
		log_notice("%s does not exist, running with the defaults and no rules", path);
		c = config_new_default();
		if (!c)
			return -ENOMEM;
	} else if (r < 0)
		return r;

	r = topology_load(c->topology, &t, &error);
	if (r < 0) {
		size_t n = 0;
		char *msg = strdupf("%s: topology %s: %s", c->path ? c->path : path, c->topology,
				    error ? error : strerror(-r));
		free(error);
		config_free(c);
		if (strv_push(errors, &n, msg) < 0)
			return -ENOMEM;
		return -EINVAL;
	}
	r = check_rules_fit(c, t, errors);
	if (r < 0) {
		config_free(c);
		topology_free(t);
		return r;
	}
	*ret_config = c;
	*ret_topology = t;
	return 0;
}

/* ---- decisions -------------------------------------------------------- */

char *manager_ccx_list(const struct manager *m, const cpu_set_t *cpus, char *buf, size_t size) {
	cpu_set_t ccxs;
	unsigned idx[CPU_SETSIZE];
	size_t n = placer_ccxs_of(m->topology, cpus, idx, CPU_SETSIZE);

	/* A CPU list formatter formats any list of small integers. */
	CPU_ZERO(&ccxs);
	for (size_t i = 0; i < n; i++)
		CPU_SET(idx[i], &ccxs);
	return cpulist_format(&ccxs, buf, size);
}

/* What ccxd has placed on each CCX, but for the process being decided: the
 * load that ccx = auto balances. A process on several CCXs (spread, or pin
 * with a list) is on none of them alone. */
static unsigned *placed_load(const struct manager *m, pid_t except) {
	unsigned *load = calloc(m->topology->n_ccx ? m->topology->n_ccx : 1, sizeof(*load));
	struct proc **list;
	size_t n;

	if (!load)
		return NULL;
	list = proctable_list(m->procs, &n);
	for (size_t i = 0; list && i < n; i++) {
		unsigned ccx[2];
		if ((list[i]->state != PROC_PINNED && list[i]->state != PROC_DRY_RUN) || list[i]->pid == except)
			continue;
		if (placer_ccxs_of(m->topology, &list[i]->cpus, ccx, 2) == 1)
			load[ccx[0]]++;
	}
	free(list);
	return load;
}

/* The CPUs a process may have at most: its cgroup cpuset, or every online CPU. */
static int allowed_cpus(const struct manager *m, pid_t pid, cpu_set_t *ret) {
	int r = procfs_read_cpuset(m->root, pid, ret);

	if (r == -ENOENT) {
		*ret = m->online;
		return 0;
	}
	if (r < 0)
		return r;
	CPU_AND(ret, ret, &m->online);
	return 0;
}

static void set_reason(struct proc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct proc *p, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

static int ensure_pidfd(const struct manager *m, struct proc *p) {
	int fd;

	if (p->pidfd >= 0)
		return 0;
	fd = actuator_open(m->root, p->pid, p->start_time);
	if (fd < 0)
		return fd;
	p->pidfd = fd;
	return 0;
}

/* The ledger is written at most this often: a storm of rule-matched execs
 * would otherwise write it for every one (30 us on a tmpfs, ten times that
 * on a disk). */
#define LEDGER_GAP_USEC (100 * 1000)

/* Something ccxd owes may have changed: the runtime directory's ledger is
 * brought up to date once the current event is handled, or, when it was
 * written less than LEDGER_GAP_USEC ago, that long after the last write. */
static void owe_changed(struct manager *m) {
	int enabled = SD_EVENT_OFF;
	uint64_t now, at;

	if (!m->ledger_sync || sd_event_source_get_enabled(m->ledger_sync, &enabled) < 0 || enabled != SD_EVENT_OFF)
		return;   /* a write is due already */
	if (sd_event_now(m->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	at = m->ledger_usec + LEDGER_GAP_USEC > now ? m->ledger_usec + LEDGER_GAP_USEC : now;
	sd_event_source_set_time(m->ledger_sync, at);
	sd_event_source_set_enabled(m->ledger_sync, SD_EVENT_ONESHOT);
}

/* Puts cpus into the kernel for p, or with policy = spread its CPU sets
 * thread by thread. -ESRCH means it is gone: the caller drops it. */
static int apply(struct manager *m, struct proc *p, const cpu_set_t *cpus) {
	int r = ensure_pidfd(m, p);

	if (r >= 0 && p->n_spread > 0) {
		pid_t *placed;
		size_t n_placed;
		r = actuator_apply_each(m->root, p->pid, p->pidfd, p->spread, p->n_spread, &p->spread_next, &placed,
					&n_placed);
		proc_spread_set_placed(p, placed, n_placed);
	} else if (r >= 0)
		r = actuator_apply(m->root, p->pid, p->pidfd, cpus);
	if (r == -ESRCH)
		return r;
	if (r < 0) {
		char list[CPULIST_MAX];
		m->stats.pin_failures++;
		return log_warning_errno(r, "Failed to set the affinity of %s[%d] to %s: %m", p->comm,
					 (int)p->pid, cpulist_format(cpus, list, sizeof(list)));
	}
	m->stats.pins++;
	owe_changed(m);
	return 0;
}

/* Gives back what p had before ccxd touched it. */
static int restore(struct manager *m, struct proc *p) {
	int r;

	if (p->state != PROC_PINNED || !p->have_original)
		return 0;
	r = ensure_pidfd(m, p);
	if (r >= 0)
		r = actuator_apply(m->root, p->pid, p->pidfd, &p->original);
	if (r == -ESRCH)
		return r;
	if (r < 0)
		return log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", p->comm, (int)p->pid);
	proc_set_spread(p, NULL, 0);
	m->stats.restores++;
	owe_changed(m);
	return 0;
}

/* Reads comm, and exe and cmdline only when some rule needs them. */
static const struct rule *match_rule(struct manager *m, const struct procfs_stat *st) {
	struct rule_identity id = { .comm = st->comm };
	const struct rule *rule;
	char *exe = NULL, *cmdline = NULL;
	unsigned need = 0;

	rule = rules_match(m->config->rules, m->config->n_rules, &id, &need);
	if (!rule && need) {
		/* Kernel threads and other users' processes may refuse: an empty
		 * string then matches no glob but "*". */
		if (procfs_read_exe(m->root, st->pid, &exe) < 0)
			exe = NULL;
		if (procfs_read_cmdline(m->root, st->pid, CMDLINE_MAX, &cmdline) < 0)
			cmdline = NULL;
		id.exe = exe ? exe : "";
		id.cmdline = cmdline ? cmdline : "";
		rule = rules_match(m->config->rules, m->config->n_rules, &id, &need);
	}
	free(exe);
	free(cmdline);
	return rule;
}

/* Forgets pid. Nothing is owed to a process that is gone, and an entry of
 * the ledger for it is harmless (it names a start time that no process has
 * any more): the interval's sync removes it, not a write per exit. */
static void drop(struct manager *m, pid_t pid) {
	proctable_remove(m->procs, pid);
}

static int on_process_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct proc *p = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	drop(p->owner, p->pid);
	return 0;
}

/* The entry for st's process, made on first sight with a pidfd that both
 * names the process for every later action and tells when it exits: no
 * exit events needed. NULL when it is gone already (or out of memory). */
static struct proc *get_or_add(struct manager *m, const struct procfs_stat *st) {
	struct proc *p = proctable_get(m->procs, st->pid);
	int fd;

	if (p) {
		memcpy(p->comm, st->comm, sizeof(p->comm));
		return p;
	}
	fd = actuator_open(m->root, st->pid, st->start_time);
	if (fd < 0)
		return NULL;
	p = proctable_add(m->procs, st->pid, st->start_time);
	if (!p) {
		close(fd);
		log_error("Out of memory for the process table");
		return NULL;
	}
	p->pidfd = fd;
	p->owner = m;
	memcpy(p->comm, st->comm, sizeof(p->comm));
	if (sd_event_add_io(m->event, &p->exit_watch, fd, EPOLLIN, on_process_exit, p) < 0)
		log_warning("Failed to watch %s[%d] for its exit; the interval sweep will notice", p->comm,
			    (int)p->pid);
	return p;
}

/* st's process carries parent's placement: it is ccxd's too, and gets the
 * same original to go back to. */
static struct proc *inherit(struct manager *m, const struct procfs_stat *st, const struct proc *parent) {
	struct proc *child = get_or_add(m, st);

	if (!child)
		return NULL;
	child->state = parent->state;
	child->original = parent->original;
	child->have_original = parent->have_original;
	child->cpus = parent->cpus;
	child->inherited_from = parent->pid;
	if (parent->n_spread > 0) {
		cpu_set_t *sets = malloc(parent->n_spread * sizeof(*sets));
		if (sets)
			memcpy(sets, parent->spread, parent->n_spread * sizeof(*sets));
		proc_set_spread(child, sets, parent->n_spread);
	}
	proc_set_rule(child, parent->rule);
	set_reason(child, "inherited from %s[%d]", parent->comm, (int)parent->pid);
	if (child->state == PROC_PINNED)
		owe_changed(m);
	return child;
}

/* A process no rule matches may still be ccxd's: a child of a process ccxd
 * pinned. It carries the parent's placement, or, when it was forked before
 * the parent's pin landed, the parent's original, and then gets the
 * placement now. Any other mask was chosen by somebody else. Returns true
 * when it was adopted. */
static bool adopt_if_inherited(struct manager *m, const struct procfs_stat *st) {
	struct proc *parent = proctable_get(m->procs, st->ppid), *child;
	cpu_set_t current;

	if (!parent || parent->state != PROC_PINNED || actuator_get(st->pid, &current) < 0)
		return false;
	if (!CPU_EQUAL(&current, &parent->cpus) && !(parent->have_original && CPU_EQUAL(&current, &parent->original)))
		return false;
	child = inherit(m, st, parent);
	if (!child)
		return false;
	if (!CPU_EQUAL(&current, &child->cpus) && apply(m, child, &child->cpus) == -ESRCH) {
		drop(m, st->pid);
		return false;
	}
	return true;
}

/* Process events that ccxd needs: execs and renames always; forks only while
 * a spread process must place each new thread (inheritance is found by
 * adopt_children); exits never: every entry's pidfd tells of its exit. */
static void update_subscription(struct manager *m, bool spreading) {
	uint32_t events = WATCHER_EXEC | WATCHER_COMM | (spreading ? WATCHER_FORK : 0);

	if (m->watcher && events != m->subscribed) {
		m->subscribed = events;
		watcher_subscribe(m->watcher, events);
	}
}

/* A rule matched but ccxd leaves the process alone (anything ccxd had set is
 * given back); why is in its reason. Returns false when it vanished. */
static bool leave_alone(struct manager *m, struct proc *p, bool ours) {
	if (ours && restore(m, p) == -ESRCH) {
		drop(m, p->pid);
		return false;
	}
	p->state = PROC_SKIPPED;
	proc_set_spread(p, NULL, 0);
	return true;
}

/* The rule's CPUs for the process, and for policy = spread the sets its
 * threads take in turn, within what its cgroup cpuset allows. */
static int rule_target(struct manager *m, pid_t pid, const struct rule *rule, const cpu_set_t *allowed,
		       cpu_set_t *target, cpu_set_t **sets, size_t *n_sets, unsigned *ccx) {
	/* Dry-run on another machine's topology shows that machine's decisions:
	 * this machine's CPUs and cpusets do not bound them. */
	bool bounded = !(m->config->mode == CONFIG_MODE_DRY_RUN && strcmp(m->topology->source, "system") != 0);
	unsigned *load = placed_load(m, pid);
	struct placer_context ctx = { load, m->topology->n_ccx, bounded ? allowed : NULL };
	int r;

	*sets = NULL;
	*n_sets = 0;
	if (!load)
		return -ENOMEM;
	r = placer_rule_cpus(m->topology, rule, &ctx, target, ccx);
	if (r >= 0 && rule->policy == RULE_POLICY_SPREAD) {
		*sets = calloc(m->topology->n_ccx, sizeof(**sets));
		r = *sets ? placer_spread_sets(m->topology, rule, &ctx, *sets) : -ENOMEM;
	}
	free(load);
	if (r < 0) {
		free(*sets);
		*sets = NULL;
		return r;
	}
	if (bounded) {
		CPU_AND(target, target, allowed);
		for (int i = 0; *sets && i < r; i++) {
			CPU_AND(&(*sets)[*n_sets], &(*sets)[i], allowed);
			if (CPU_COUNT(&(*sets)[*n_sets]) > 0)
				(*n_sets)++;
		}
	} else if (*sets)
		*n_sets = (size_t)r;
	return 0;
}

static void decide_with_rule(struct manager *m, const struct procfs_stat *st, struct proc *p,
			     const struct rule *rule) {
	cpu_set_t target, allowed, current, *sets;
	size_t n_sets;
	unsigned ccx = 0;
	char list[CPULIST_MAX], list2[CPULIST_MAX];
	bool ours = p != NULL && (p->state == PROC_PINNED || p->state == PROC_DRY_RUN);
	int r;

	if (rule->policy == RULE_POLICY_IGNORE) {
		if (p && restore(m, p) == -ESRCH)
			return drop(m, st->pid);
		p = get_or_add(m, st);
		if (!p)
			return;
		p->state = PROC_IGNORED;
		p->inherited_from = 0;
		proc_set_rule(p, rule->name);
		set_reason(p, "rule %s: policy = ignore", rule->name);
		return;
	}

	r = allowed_cpus(m, st->pid, &allowed);
	if (r == -ESRCH)
		return drop(m, st->pid);
	if (r < 0)
		allowed = m->online;
	r = rule_target(m, st->pid, rule, &allowed, &target, &sets, &n_sets, &ccx);
	if (r == -EOPNOTSUPP) {
		/* policy = pair or auto: the automatic policy seats it with
		 * whom it talks to, which needs it out of the rules' table. */
		if (p) {
			if (ours)
				restore(m, p);
			drop(m, st->pid);
		}
		return;
	}

	p = get_or_add(m, st);
	if (!p) {
		free(sets);
		return;
	}
	proc_set_rule(p, rule->name);
	p->inherited_from = 0;
	if (r < 0) {
		if (leave_alone(m, p, ours))
			set_reason(p, "rule %s: no usable CCX among those it names", rule->name);
		return;
	}
	if (CPU_COUNT(&target) == 0) {
		free(sets);
		if (leave_alone(m, p, ours))
			set_reason(p, "rule %s: its cgroup cpuset %s excludes CCX %u", rule->name,
				   cpulist_format(&allowed, list, sizeof(list)), ccx);
		return;
	}

	if (!ours) {
		if (actuator_get(st->pid, &current) < 0) {
			free(sets);
			return drop(m, st->pid);
		}
		/* Seated by the automatic policy: rules win, and the original it
		 * kept is the process's own. */
		if (m->autoplace)
			autoplace_forget(m->autoplace, st->pid, &current);
		/* Narrower than everything it may use: somebody chose that by hand. */
		if (!cpulist_is_subset(&allowed, &current) && !rule->force) {
			free(sets);
			if (leave_alone(m, p, false))
				set_reason(p, "rule %s: affinity %s was set by someone else (force = no)", rule->name,
					   cpulist_format(&current, list, sizeof(list)));
			return;
		}
		p->original = current;
		p->have_original = true;
	}

	p->cpus = target;
	proc_set_spread(p, sets, n_sets);
	if (m->config->mode == CONFIG_MODE_DRY_RUN) {
		p->state = PROC_DRY_RUN;
		set_reason(p, "rule %s: would pin to CCX %s", rule->name,
			   manager_ccx_list(m, &target, list2, sizeof(list2)));
		return;
	}
	r = apply(m, p, &target);
	if (r == -ESRCH)
		return drop(m, st->pid);
	if (r < 0) {
		p->state = PROC_SKIPPED;
		set_reason(p, "rule %s: setting the affinity failed: %s", rule->name, strerror(-r));
		return;
	}
	if (p->n_spread > 0)
		update_subscription(m, true);
	if (p->state != PROC_PINNED)
		log_decision(LOG_INFO,
			     &(struct log_decision) { .pid = p->pid, .comm = p->comm, .rule = rule->name, .decision = "pin",
						      .ccx = manager_ccx_list(m, &target, list2, sizeof(list2)) },
			     "Pinned %s[%d] to CCX %s (CPUs %s): rule %s", p->comm, (int)p->pid, list2,
			     cpulist_format(&target, list, sizeof(list)), rule->name);
	p->state = PROC_PINNED;
	set_reason(p, "rule %s", rule->name);
}

static void evaluate(struct manager *m, pid_t pid, enum trigger trigger) {
	struct procfs_stat st;
	const struct rule *rule;
	struct proc *p;
	int r;

	if (m->config->mode == CONFIG_MODE_OFF)
		return;
	r = procfs_read_stat(m->root, pid, &st);
	if (r < 0) {
		if (r != -ESRCH)
			log_debug_errno(r, "Failed to read /proc/%d/stat, ignoring: %m", (int)pid);
		return drop(m, pid);
	}
	if (st.flags & PROCFS_PF_KTHREAD)
		return;

	p = proctable_get(m->procs, pid);
	if (p && p->start_time != st.start_time) {
		drop(m, pid);     /* the pid was reused behind our back */
		p = NULL;
	}
	if (p && trigger == TRIGGER_SCAN && strcmp(p->comm, st.comm) == 0)
		return;           /* known, and still the same program */
	if (p && p->state == PROC_RELEASED) {
		if (trigger != TRIGGER_EXEC)
			return;   /* released until it execs again */
		drop(m, pid);
		p = NULL;
	}

	rule = match_rule(m, &st);
	if (!rule) {
		/* A placement follows the process and its descendants through
		 * exec until a rule says otherwise. */
		if (!p && (trigger == TRIGGER_SCAN || trigger == TRIGGER_EXEC))
			adopt_if_inherited(m, &st);
		return;
	}
	decide_with_rule(m, &st, p, rule);
}

/* ---- process events --------------------------------------------------- */

static void on_fork(void *userdata, pid_t parent_tgid, pid_t child_pid, pid_t child_tgid) {
	struct manager *m = userdata;
	struct procfs_stat st;
	struct proc *parent, *child;

	if (child_pid != child_tgid) {
		/* A thread inherits from the thread that made it; with policy =
		 * spread it takes the next CCX instead. */
		parent = proctable_get(m->procs, child_tgid);
		if (parent && parent->state == PROC_PINNED && parent->n_spread > 0 && parent->pidfd >= 0 &&
		    !proc_spread_placed(parent, child_pid)) {
			actuator_apply_thread(parent->pidfd, child_pid,
					      &parent->spread[parent->spread_next++ % parent->n_spread]);
			proc_spread_note(parent, child_pid);
		}
		return;
	}
	parent = proctable_get(m->procs, parent_tgid);
	if (!parent || (parent->state != PROC_PINNED && parent->state != PROC_DRY_RUN))
		return;
	if (procfs_read_stat(m->root, child_tgid, &st) < 0)
		return;
	child = inherit(m, &st, parent);
	/* The parent may have forked before its own pin landed: set it anyway. */
	if (child && child->state == PROC_PINNED && apply(m, child, &child->cpus) == -ESRCH)
		drop(m, child_tgid);
}

static void on_exec(void *userdata, pid_t tgid) {
	struct manager *m = userdata;

	/* Most programs are neither ccxd's already nor named by any rule: for
	 * them comm is all there is to read. (A child that inherited a pinned
	 * placement is adopted by the interval's sweep.) */
	if (!proctable_get(m->procs, tgid)) {
		struct rule_identity id = { .comm = NULL };
		char comm[PROCFS_COMM_MAX];
		unsigned need = 0;

		if (procfs_read_comm(m->root, tgid, comm) < 0)
			return;
		id.comm = comm;
		if (!rules_match(m->config->rules, m->config->n_rules, &id, &need) && !need)
			return;
	}
	evaluate(m, tgid, TRIGGER_EXEC);
}

static void on_comm(void *userdata, pid_t pid, pid_t tgid) {
	if (pid == tgid)
		evaluate(userdata, tgid, TRIGGER_COMM);
}

static void on_exit_event(void *userdata, pid_t pid, pid_t tgid) {
	struct manager *m = userdata;

	if (pid == tgid)
		drop(m, tgid);
}

static void scan_all(struct manager *m, enum trigger trigger) {
	pid_t *pids;
	size_t n;
	int r;

	r = procfs_list_pids(m->root, &pids, &n);
	if (r < 0) {
		log_error_errno(r, "Failed to list processes: %m");
		return;
	}
	/* Parents first (lower pids, mostly), so children can be seen as inheriting. */
	for (size_t i = 0; i < n; i++)
		evaluate(m, pids[i], trigger);
	free(pids);
	m->stats.rescans++;
}

static int on_rescan(sd_event_source *s, void *userdata) {
	struct manager *m = userdata;

	(void)s;
	m->rescan = sd_event_source_disable_unref(m->rescan);
	log_info("Rescanning /proc after lost process events");
	scan_all(m, TRIGGER_SCAN);
	return 0;
}

static void on_lost(void *userdata) {
	struct manager *m = userdata;

	/* Many overflows in one burst need one scan, after the burst is read. */
	if (!m->rescan && sd_event_add_defer(m->event, &m->rescan, on_rescan, m) >= 0)
		sd_event_source_set_priority(m->rescan, SD_EVENT_PRIORITY_IDLE);
}

static void on_unavailable(void *userdata, const char *why) {
	struct manager *m = userdata;

	m->polling = true;
	snprintf(m->watcher_note, sizeof(m->watcher_note), "%s; scanning /proc every interval instead", why);
	log_warning("No process events: %s", m->watcher_note);
}

static const struct watcher_ops watcher_ops = {
	.fork = on_fork,
	.exec = on_exec,
	.comm = on_comm,
	.exit = on_exit_event,
	.lost = on_lost,
	.unavailable = on_unavailable,
};

/* ---- the originals owed, kept across restarts ------------------------- */

/* Every process whose affinity ccxd changed and has not given back: those a
 * rule or a hand pinned, and the automatic policy's members. */
static int collect_owed(const struct manager *m, struct ledger_entry **ret, size_t *ret_n) {
	size_t n, n_groups = 0, count = 0, n_owed = 0;
	struct proc **list = proctable_list(m->procs, &n);
	const struct autoplace_group *groups = m->autoplace ? autoplace_groups(m->autoplace, &n_groups) : NULL;
	struct ledger_entry *e;

	if (!list && n > 0)
		return -ENOMEM;
	for (size_t i = 0; i < n_groups; i++)
		count += groups[i].n_members;
	e = calloc(n + count + 1, sizeof(*e));
	if (!e) {
		free(list);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct proc *p = list[i];
		struct ledger_entry *x = &e[n_owed];
		if ((p->state != PROC_PINNED && p->state != PROC_RELEASED) || !p->have_original)
			continue;
		*x = (struct ledger_entry) { .pid = p->pid, .start_time = p->start_time,
					     .owner = p->state == PROC_RELEASED ? LEDGER_RELEASED
						      : p->rule ? LEDGER_RULE : LEDGER_HAND,
					     .inherited_from = p->inherited_from, .original = p->original,
					     .cpus = p->state == PROC_RELEASED ? p->original : p->cpus };
		memcpy(x->comm, p->comm, sizeof(x->comm));
		snprintf(x->rule, sizeof(x->rule), "%s", x->owner == LEDGER_RULE ? p->rule : "");
		n_owed++;
	}
	for (size_t i = 0; i < n_groups; i++)
		for (size_t k = 0; k < groups[i].n_members; k++) {
			const struct autoplace_member *mb = &groups[i].members[k];
			struct ledger_entry *x = &e[n_owed++];
			*x = (struct ledger_entry) { .pid = mb->pid, .start_time = mb->start_time, .owner = LEDGER_AUTO,
						     .original = mb->original, .cpus = mb->cpus };
			memcpy(x->comm, mb->comm, sizeof(x->comm));
		}
	free(list);
	*ret = e;
	*ret_n = n_owed;
	return 0;
}

/* Writes what is owed when it differs from what was written; with nothing
 * owed the file goes. */
static int ledger_sync(struct manager *m) {
	struct ledger_entry *e;
	size_t n;
	char *text;
	int r = collect_owed(m, &e, &n);

	if (r >= 0) {
		r = ledger_format(e, n, &text);
		free(e);
	}
	if (r < 0)
		return log_warning_errno(r, "Failed to list the original affinities owed: %m");
	if (m->ledger_text && strcmp(text, m->ledger_text) == 0) {
		free(text);
		return 0;
	}
	r = n > 0 ? ledger_write(m->runtime_dir, text) : ledger_remove(m->runtime_dir);
	if (r < 0) {
		/* Once per kind of failure: it is retried at every change. */
		if (r != m->ledger_error)
			log_warning_errno(r, "Failed to write %s/%s; a restart after a crash would not know the "
					  "original affinities: %m", m->runtime_dir, LEDGER_FILE);
		m->ledger_error = r;
		free(text);
		return r;
	}
	if (m->ledger_error)
		log_info("Wrote %s/%s again", m->runtime_dir, LEDGER_FILE);
	m->ledger_error = 0;
	free(m->ledger_text);
	m->ledger_text = text;
	return 0;
}

static int on_ledger_sync(sd_event_source *s, uint64_t usec, void *userdata) {
	struct manager *m = userdata;

	(void)s;
	m->ledger_usec = usec;
	ledger_sync(m);
	return 0;
}

/* Puts e's process back as it was, when a restarted ccxd will not keep it. */
static void give_back(struct manager *m, const struct ledger_entry *e, const char *why) {
	char list[CPULIST_MAX];
	int fd = actuator_open(m->root, e->pid, e->start_time), r;

	if (fd < 0)
		return;
	r = actuator_apply(m->root, e->pid, fd, &e->original);
	close(fd);
	if (r < 0 && r != -ESRCH)
		log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", e->comm, (int)e->pid);
	else if (r >= 0) {
		m->stats.restores++;
		log_info("Restored %s[%d] to CPUs %s, as before ccxd last ran: %s", e->comm, (int)e->pid,
			 cpulist_format(&e->original, list, sizeof(list)), why);
	}
}

static bool rule_exists(const struct config *c, const char *name);

/* A ccxd that was killed left its ledger: each process still running as it
 * left it (same start time, affinity within what it gave) is taken back
 * with its true original, and then decided by the rules as they are now.
 * What the automatic policy had moved goes back, to be measured afresh. */
static void readopt(struct manager *m) {
	struct ledger_entry *e;
	size_t n;
	char *error = NULL;
	pid_t *decide;
	size_t n_decide = 0;
	int r = ledger_read(m->runtime_dir, &e, &n, &error);

	if (r == -ENOENT)
		return;
	if (r < 0) {
		log_warning("Ignoring %s/%s: %s", m->runtime_dir, LEDGER_FILE, error ? error : strerror(-r));
		free(error);
		owe_changed(m);   /* replaced by what is owed now */
		return;
	}
	decide = calloc(n + 1, sizeof(*decide));
	for (size_t i = 0; decide && i < n; i++) {
		struct procfs_stat st;
		cpu_set_t current;
		struct proc *p;

		if (procfs_read_stat(m->root, e[i].pid, &st) < 0 || st.start_time != e[i].start_time ||
		    actuator_get(e[i].pid, &current) < 0)
			continue;   /* gone: nothing owed */
		if (e[i].owner == LEDGER_RELEASED) {
			/* Left alone until it executes another program, restart or not. */
			p = get_or_add(m, &st);
			if (p) {
				p->state = PROC_RELEASED;
				p->original = e[i].original;
				p->have_original = true;
				set_reason(p, "released by hand; left alone until it executes a new program");
			}
			continue;
		}
		if (!cpulist_is_subset(&current, &e[i].cpus)) {
			log_info("%s[%d] was moved by somebody else since ccxd last ran; leaving it alone", e[i].comm,
				 (int)e[i].pid);
			continue;
		}
		if (e[i].owner == LEDGER_AUTO || m->config->mode != CONFIG_MODE_ENFORCE ||
		    (e[i].owner == LEDGER_RULE && !rule_exists(m->config, e[i].rule))) {
			give_back(m, &e[i], e[i].owner == LEDGER_AUTO ? "automatic placements are measured again"
				  : m->config->mode != CONFIG_MODE_ENFORCE ? "mode is not enforce" : "its rule is gone");
			continue;
		}
		p = get_or_add(m, &st);
		if (!p)
			continue;
		p->state = PROC_PINNED;
		p->original = e[i].original;
		p->have_original = true;
		p->cpus = e[i].cpus;
		p->inherited_from = e[i].inherited_from;
		proc_set_rule(p, e[i].owner == LEDGER_RULE ? e[i].rule : NULL);
		set_reason(p, e[i].owner == LEDGER_HAND ? "pinned by hand (before ccxd restarted)"
			   : "rule %s (before ccxd restarted)", e[i].rule);
		m->stats.readopted++;
		if (e[i].owner == LEDGER_RULE && !e[i].inherited_from)
			decide[n_decide++] = e[i].pid;
	}
	free(e);
	if (m->stats.readopted)
		log_info("Took back %" PRIu64 " process%s that ccxd had placed before it restarted", m->stats.readopted,
			 m->stats.readopted == 1 ? "" : "es");
	/* Under the rules as they are now: a changed rule moves it, its original stays. */
	for (size_t i = 0; i < n_decide; i++)
		evaluate(m, decide[i], TRIGGER_RELOAD);
	free(decide);
	owe_changed(m);
}

/* ---- housekeeping ----------------------------------------------------- */

static void notify_status(struct manager *m) {
	size_t n, pinned = 0;
	struct proc **list = proctable_list(m->procs, &n);

	for (size_t i = 0; list && i < n; i++)
		if (list[i]->state == PROC_PINNED)
			pinned++;
	free(list);
	sd_notifyf(0, "STATUS=%s, %zu processes pinned, mode %s", m->polling ? "Polling /proc" : "Watching process events",
		   pinned, config_mode_to_string(m->config->mode));
}

/* A child of a pinned process, not known yet: adopted if it inherited the
 * placement, and then its own children are looked at too. */
static bool adopt_child(void *userdata, pid_t pid) {
	struct manager *m = userdata;
	struct procfs_stat st;

	return !proctable_get(m->procs, pid) && procfs_read_stat(m->root, pid, &st) >= 0 && adopt_if_inherited(m, &st);
}

/* Children that inherited a pinned placement while no fork event told of
 * them (kernels that filter events send none): found through the parents'
 * children lists, grandchildren included. */
static void adopt_children(struct manager *m) {
	size_t n, n_pinned = 0;
	struct proc **list = proctable_list(m->procs, &n);
	pid_t *pinned;

	if (!list)
		return;
	pinned = malloc((n + 1) * sizeof(*pinned));
	for (size_t i = 0; pinned && i < n; i++)
		if (list[i]->state == PROC_PINNED)
			pinned[n_pinned++] = list[i]->pid;
	free(list);
	if (pinned)
		procfs_walk_children(m->root, pinned, n_pinned, adopt_child, m);
	free(pinned);
}

/* policy = spread: threads made while no fork event told of them take their
 * turn now; those that ended are forgotten. */
static void catch_up_spread(struct manager *m, struct proc *p) {
	pid_t *tasks;
	size_t n;

	if (procfs_list_tasks(m->root, p->pid, &tasks, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (!proc_spread_placed(p, tasks[i]))
			actuator_apply_thread(p->pidfd, tasks[i], &p->spread[p->spread_next++ % p->n_spread]);
	proc_spread_set_placed(p, tasks, n);
}

static void sweep(struct manager *m) {
	size_t n;
	struct proc **list;
	bool spreading = false;

	adopt_children(m);
	list = proctable_list(m->procs, &n);
	for (size_t i = 0; list && i < n; i++) {
		struct proc *p = list[i];
		if (p->state == PROC_PINNED && p->n_spread > 0) {
			catch_up_spread(m, p);
			spreading = true;
		}
	}
	free(list);
	update_subscription(m, spreading);
}

static int arm_interval(struct manager *m);

static bool placed_by_rule(void *userdata, pid_t pid) {
	const struct manager *m = userdata;

	return proctable_get(m->procs, pid) != NULL;
}

static int on_interval(sd_event_source *s, uint64_t usec, void *userdata) {
	struct manager *m = userdata;
	int r;

	(void)s;
	if (m->polling)
		scan_all(m, TRIGGER_SCAN);
	sweep(m);
	if (m->autoplace && m->config->mode != CONFIG_MODE_OFF) {
		struct autoplace_options options = {
			.min_rate = m->config->min_rate,
			.min_gain = m->config->min_gain,
			.window = m->config->window,
			.seatings = m->config->seatings,
			.n_seatings = m->config->n_seatings,
		};
		struct autoplace_probe probe;
		/* Measured costs rank the seatings where there are figures. */
		if (m->prober && prober_results(m->prober) &&
		    autoplace_probe_rank(prober_results(m->prober), m->config->seatings, m->config->n_seatings,
					 &probe) >= 0) {
			options.seatings = probe.order;
			options.n_seatings = probe.n_order;
			options.probe = &probe;
		}
		r = autoplace_cycle(m->autoplace, m->topology, m->config->mode, &options, placed_by_rule, m, usec);
		if (r < 0)
			log_warning_errno(r, "Sampling failed, trying again next interval: %m");
	}
	owe_changed(m);   /* the automatic policy's moves, and exits */
	notify_status(m);
	metrics_update_file(m);
	return arm_interval(m);
}

static int arm_interval(struct manager *m) {
	uint64_t now;
	int r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);

	if (r < 0)
		return r;
	if (m->interval_timer) {
		r = sd_event_source_set_time(m->interval_timer, now + m->config->interval_usec);
		if (r >= 0)
			r = sd_event_source_set_enabled(m->interval_timer, SD_EVENT_ONESHOT);
		return r;
	}
	/* An explicit accuracy: with 0, sd-event allows itself 250 ms of slack. */
	return sd_event_add_time(m->event, &m->interval_timer, CLOCK_MONOTONIC, now + m->config->interval_usec,
				 m->config->interval_usec / 20 + 1, on_interval, m);
}

/* ---- reload, pin, unpin ----------------------------------------------- */

static bool rule_exists(const struct config *c, const char *name) {
	for (size_t i = 0; name && i < c->n_rules; i++)
		if (strcmp(c->rules[i].name, name) == 0)
			return true;
	return false;
}

/* Gives every process ccxd pinned its original back and forgets them all.
 * At shutdown, two kinds stay for the ledger to keep until the next start:
 * the processes released by hand (still left alone then), and any whose
 * original could not be put back (still owed). */
static void restore_all(struct manager *m, bool at_exit) {
	size_t n;
	struct proc **list = proctable_list(m->procs, &n);
	pid_t *gone = calloc(n ? n : 1, sizeof(*gone));
	size_t n_gone = 0;

	for (size_t i = 0; list && gone && i < n; i++) {
		int r = restore(m, list[i]);
		if (!at_exit || r == -ESRCH || (r == 0 && list[i]->state != PROC_RELEASED))
			gone[n_gone++] = list[i]->pid;
	}
	for (size_t i = 0; i < n_gone; i++)
		drop(m, gone[i]);
	free(gone);
	free(list);
}

int manager_reload(struct manager *m, char ***errors) {
	struct config *c;
	struct topology *t;
	bool topology_changed;
	size_t n;
	struct proc **list;
	struct timespec ts;
	int r;

	/* Type=notify-reload wants the time of the reload with it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	r = manager_load_config(m->config_path, m->config_path_explicit, &c, &t, errors);
	if (r < 0) {
		m->stats.reload_failures++;
		log_error("Reload failed, keeping the running configuration:");
		for (char **e = *errors; e && *e; e++)
			log_error("%s", *e);
		sd_notify(0, "READY=1");
		return r;
	}

	topology_changed = strcmp(c->topology, m->config->topology) != 0;
	if (strcmp(c->socket, m->config->socket) != 0)
		log_notice("The socket path changes from %s to %s at the next start", m->config->socket, c->socket);
	/* CCX numbers of another topology mean other CPUs; another mode may forbid pinning. */
	if (topology_changed || c->mode != CONFIG_MODE_ENFORCE) {
		restore_all(m, false);
		if (m->autoplace)
			autoplace_release_all(m->autoplace);
	}

	if (strcmp(c->runtime_dir, m->runtime_dir) != 0)
		log_notice("The runtime directory changes from %s to %s at the next start", m->runtime_dir,
			   c->runtime_dir);
	/* The sampler loaded its BPF iterators, or did not, at the start. */
	if (c->bpf != m->config->bpf) {
		log_notice("bpf changes from %s to %s at the next start", config_bpf_to_string(m->config->bpf),
			   config_bpf_to_string(c->bpf));
		c->bpf = m->config->bpf;
	}
	/* Keep serving on the socket we have: it is bound already. */
	char *socket = strdup(m->config->socket);
	if (socket) {
		free(c->socket);
		c->socket = socket;
	}
	config_free(m->config);
	m->config = c;
	topology_free(m->topology);
	m->topology = t;
	/* The prober holds the topology: it must hear of the new one at once. */
	if (m->prober)
		prober_update(m->prober, m->topology, &m->online, c->state_dir, c->calibrate);

	/* Processes whose rule is gone get their original back; the rest are
	 * decided again under the new rules. */
	list = proctable_list(m->procs, &n);
	for (size_t i = 0; list && i < n; i++) {
		struct proc *p = list[i];
		pid_t pid = p->pid;
		if (p->state == PROC_RELEASED || (!p->rule && p->state == PROC_PINNED))
			continue;   /* decided by hand */
		if (!rule_exists(c, p->rule)) {
			restore(m, p);
			drop(m, pid);
			continue;
		}
		if (!p->inherited_from)
			evaluate(m, pid, TRIGGER_RELOAD);
	}
	free(list);
	scan_all(m, TRIGGER_SCAN);
	arm_interval(m);
	m->stats.reloads++;
	log_info("Reloaded %s: %zu rules, mode %s", c->path ? c->path : "defaults", c->n_rules,
		 config_mode_to_string(c->mode));
	sd_notify(0, "READY=1");
	notify_status(m);
	return 0;
}

int manager_pin(struct manager *m, pid_t pid, unsigned ccx, struct proc **ret) {
	struct procfs_stat st;
	cpu_set_t target, allowed, current;
	char ccxs[CPULIST_MAX];
	bool keep_original;
	struct proc *p;
	int r;

	if (m->config->mode == CONFIG_MODE_OFF)
		return -ECANCELED;
	r = procfs_read_stat(m->root, pid, &st);
	if (r < 0)
		return -ESRCH;
	if (st.flags & PROCFS_PF_KTHREAD)
		return -EPERM;
	if (ccx >= m->topology->n_ccx || !m->topology->ccx[ccx].usable)
		return -ENOENT;
	r = allowed_cpus(m, pid, &allowed);
	if (r < 0)
		return r;
	CPU_AND(&target, &m->topology->ccx[ccx].cpus, &allowed);
	if (CPU_COUNT(&target) == 0)
		return -EXDEV;

	p = proctable_get(m->procs, pid);
	if (p && p->start_time != st.start_time) {
		drop(m, pid);
		p = NULL;
	}
	/* Pinned already: what it had before ccxd is still the original. */
	keep_original = p && p->state == PROC_PINNED && p->have_original;
	if (!keep_original && actuator_get(pid, &current) < 0)
		return -ESRCH;
	if (!keep_original && m->autoplace)
		autoplace_forget(m->autoplace, pid, &current);
	p = get_or_add(m, &st);
	if (!p)
		return -ENOMEM;
	if (!keep_original) {
		p->original = current;
		p->have_original = true;
	}
	p->cpus = target;
	proc_set_rule(p, NULL);
	p->inherited_from = 0;
	if (m->config->mode == CONFIG_MODE_DRY_RUN) {
		p->state = PROC_DRY_RUN;
		set_reason(p, "pinned by hand to CCX %u (dry-run)", ccx);
	} else {
		r = apply(m, p, &target);
		if (r < 0) {
			if (r == -ESRCH)
				drop(m, pid);
			else
				p->state = PROC_SKIPPED;
			return r;
		}
		p->state = PROC_PINNED;
		set_reason(p, "pinned by hand to CCX %u", ccx);
		log_decision(LOG_INFO, &(struct log_decision) { .pid = pid, .comm = p->comm, .decision = "pin",
								 .ccx = manager_ccx_list(m, &target, ccxs, sizeof(ccxs)) },
			     "Pinned %s[%d] to CCX %u by hand", p->comm, (int)pid, ccx);
	}
	*ret = p;
	return 0;
}

int manager_unpin(struct manager *m, pid_t pid, struct proc **ret) {
	struct proc *p = proctable_get(m->procs, pid);
	int r;

	if (!p)
		return kill(pid, 0) < 0 && errno == ESRCH ? -ESRCH : -ENOTCONN;
	if (p->state != PROC_PINNED && p->state != PROC_DRY_RUN)
		return -ENOTCONN;
	r = restore(m, p);
	if (r == -ESRCH) {
		drop(m, pid);
		return r;
	}
	if (r < 0)
		return r;
	p->state = PROC_RELEASED;
	set_reason(p, "released by hand; left alone until it executes a new program");
	log_decision(LOG_INFO, &(struct log_decision) { .pid = pid, .comm = p->comm, .decision = "release" },
		     "Released %s[%d]", p->comm, (int)pid);
	*ret = p;
	return 0;
}

/* ---- life cycle ------------------------------------------------------- */

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
	struct manager *m = userdata;

	(void)s;
	if (si->ssi_signo == SIGHUP) {
		char **errors = NULL;
		manager_reload(m, &errors);
		config_errors_free(errors);
		return 0;
	}
	log_info("Received %s, shutting down", strsignal((int)si->ssi_signo));
	return sd_event_exit(m->event, 0);
}

int manager_new(const char *config_path, struct manager **ret, char ***errors) {
	struct manager *m = calloc(1, sizeof(*m));
	struct timespec ts;
	int r;

	*errors = NULL;
	if (!m)
		return -ENOMEM;
	m->root = "";
	m->config_path_explicit = config_path != NULL;
	m->config_path = strdup(config_path ? config_path : CONFIG_DEFAULT_PATH);
	m->procs = proctable_new();
	if (!m->config_path || !m->procs) {
		manager_free(m);
		return -ENOMEM;
	}
	r = manager_load_config(m->config_path, m->config_path_explicit, &m->config, &m->topology, errors);
	if (r < 0) {
		manager_free(m);
		return r;
	}
	r = procfs_read_online_cpus(m->root, &m->online);
	if (r < 0) {
		log_warning_errno(r, "Failed to read the online CPUs, using this process's affinity: %m");
		actuator_get(0, &m->online);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	m->started_usec = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	*ret = m;
	return 0;
}

int manager_start(struct manager *m) {
	sigset_t mask;
	int fd, r;

	r = sd_event_new(&m->event);
	if (r < 0)
		return log_error_errno(r, "Failed to create the event loop: %m");

	/* sd-event takes only blocked signals. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_signal(m->event, &m->sig_term, SIGTERM, on_signal, m)) < 0 ||
	    (r = sd_event_add_signal(m->event, &m->sig_int, SIGINT, on_signal, m)) < 0 ||
	    (r = sd_event_add_signal(m->event, &m->sig_hup, SIGHUP, on_signal, m)) < 0)
		return log_error_errno(r, "Failed to watch signals: %m");
	/* Sends WATCHDOG=1 by itself when systemd asks for it. */
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable the watchdog: %m");

	fd = control_listen(m->config->socket, &m->socket_activated);
	if (fd < 0)
		return log_error_errno(fd, "Failed to listen on %s: %m", m->config->socket);
	if (!m->socket_activated) {
		m->socket_path = strdup(m->config->socket);
		if (!m->socket_path) {
			close(fd);
			return -ENOMEM;
		}
	}
	r = control_new(m->event, fd, manager_methods, manager_n_methods, m, &m->control);
	if (r < 0)
		return log_error_errno(r, "Failed to serve the control socket: %m");

	r = autoplace_new(m->root, m->config->bpf, &m->autoplace);
	if (r < 0)
		log_warning_errno(r, "No automatic placement: %m");
	else {
		char path[PATH_MAX];
		/* What won before is tried first; a state_dir we cannot make only
		 * means it is not remembered across restarts. */
		if (mkdir(m->config->state_dir, 0755) < 0 && errno != EEXIST)
			log_warning_errno(-errno, "Failed to create %s: %m", m->config->state_dir);
		snprintf(path, sizeof(path), "%s/placements.json", m->config->state_dir);
		autoplace_set_memory(m->autoplace, path);
	}

	/* The originals owed go to the runtime directory; one that cannot be
	 * made only means they would not survive a crash. */
	m->runtime_dir = strdup(m->config->runtime_dir);
	if (!m->runtime_dir)
		return -ENOMEM;
	if (mkdir(m->runtime_dir, 0755) < 0 && errno != EEXIST)
		log_warning_errno(-errno, "Failed to create %s: %m", m->runtime_dir);
	r = sd_event_add_time(m->event, &m->ledger_sync, CLOCK_MONOTONIC, 0, 1000, on_ledger_sync, m);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the ledger of original affinities: %m");
	sd_event_source_set_enabled(m->ledger_sync, SD_EVENT_OFF);

	/* Watching even in mode = off: a reload may turn it on. */
	r = watcher_new(m->event, &watcher_ops, m, &m->watcher);
	if (r < 0)
		return log_error_errno(r, "Failed to watch processes: %m");
	update_subscription(m, false);
	/* Before anything else is decided: what a killed ccxd left placed is
	 * ours, with the originals it kept. */
	readopt(m);
	/* Rules apply to programs already running, too. */
	scan_all(m, TRIGGER_SCAN);
	r = arm_interval(m);
	if (r < 0)
		return log_error_errno(r, "Failed to start the interval timer: %m");

	log_info("ccxd %s started: %s, topology %s with %u CCX%s, %zu rules, mode %s, socket %s%s", CCXD_VERSION,
		 m->config->path ? m->config->path : "default configuration", m->topology->source,
		 m->topology->n_ccx, m->topology->n_ccx == 1 ? "" : "s", m->config->n_rules,
		 config_mode_to_string(m->config->mode), m->config->socket,
		 m->socket_activated ? " (socket-activated)" : "");
	sd_notify(0, "READY=1");
	notify_status(m);
	/* After READY=1: a calibration runs in a worker, and nothing waits for it. */
	r = prober_new(m->event, &m->prober);
	if (r >= 0)
		r = prober_update(m->prober, m->topology, &m->online, m->config->state_dir, m->config->calibrate);
	if (r < 0)
		log_warning_errno(r, "No probe figures: %m");
	return 0;
}

int manager_run(struct manager *m) {
	int r = sd_event_loop(m->event);

	sd_notify(0, "STOPPING=1");
	if (m->config->restore_on_exit) {
		adopt_children(m);   /* their originals are owed too */
		restore_all(m, true);
		if (m->autoplace)
			autoplace_release_all(m->autoplace);
	}
	/* What is still owed (everything, with restore_on_exit = no) stays
	 * written for the next start; with nothing owed the file goes. */
	if (m->runtime_dir)
		ledger_sync(m);
	return r;
}

void manager_free(struct manager *m) {
	if (!m)
		return;
	sd_event_source_disable_unref(m->sig_term);
	sd_event_source_disable_unref(m->sig_int);
	sd_event_source_disable_unref(m->sig_hup);
	sd_event_source_disable_unref(m->interval_timer);
	sd_event_source_disable_unref(m->rescan);
	sd_event_source_disable_unref(m->ledger_sync);
	watcher_free(m->watcher);
	autoplace_free(m->autoplace);
	control_free(m->control);
	prober_free(m->prober);
	if (m->socket_path) {
		unlink(m->socket_path);
		free(m->socket_path);
	}
	proctable_free(m->procs);
	topology_free(m->topology);
	config_free(m->config);
	free(m->config_path);
	free(m->runtime_dir);
	free(m->ledger_text);
	sd_event_unref(m->event);
	free(m);
}
