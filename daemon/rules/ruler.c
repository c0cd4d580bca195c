#include "ruler.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "facts.h"
#include "log.h"
#include "placer.h"
#include "cgroup.h"
#include "procfs.h"
#include "util.h"

/* The journal's line for each pin: at most this many in this long, then one
 * that sums up the rest (any user can exec a program a rule names). */
#define PIN_LINES_BURST 10
#define PIN_LINES_INTERVAL_USEC (10 * 1000000ULL)

/* An exec of a program named comm goes to cpus: decided ahead. */
struct exec_pin {
	char comm[RULE_COMM_MAX + 1];
	cpu_set_t cpus;
	bool by_load;             /* the least loaded of its CCXs: decided again as the load changes */
};

struct ruler {
	const char *root;
	struct placements *placements;
	cpu_set_t online;
	const struct config *config;
	const struct topology *topology;
	struct facts_source facts;  /* root, and the command lines' readers (NULL: read at once) */
	struct log_ratelimit pin_lines, release_lines;
	char last_held_rule[64];   /* the rule of the last pin held back, for the sum */
	/* ruler_decide_ahead(): by comm, for the names a rule pins by comm alone */
	struct exec_pin *ahead;
	size_t n_ahead;
	unsigned *ahead_load;      /* the load they were decided with; NULL: decide them all again */
	bool ahead_by_load;        /* some depend on it */
};

int ruler_new(const char *root, struct placements *pl, const cpu_set_t *online, struct ruler **ret) {
	struct ruler *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->root = root;
	r->facts.root = root;
	r->placements = pl;
	r->online = *online;
	r->pin_lines = (struct log_ratelimit){ .interval_usec = PIN_LINES_INTERVAL_USEC, .burst = PIN_LINES_BURST };
	r->release_lines = r->pin_lines;
	*ret = r;
	return 0;
}

void ruler_read_cmdlines_with(struct ruler *r, struct cmdlines *c) {
	r->facts.cmdlines = c;
}

void ruler_free(struct ruler *r) {
	if (!r)
		return;
	free(r->ahead);
	free(r->ahead_load);
	free(r);
}

void ruler_use(struct ruler *r, const struct config *c, const struct topology *t) {
	r->config = c;
	r->topology = t;
	free(r->ahead_load);
	r->ahead_load = NULL;
}

bool ruler_owns(const struct placement *p) {
	return p && p->owner != PLACEMENT_AUTO;
}

static bool placed(const struct placement *p) {
	return p->state == PLACEMENT_PINNED || p->state == PLACEMENT_DRY_RUN;
}

/* What the rules placed on each CCX, but the process being decided: the
 * load that orders a rule's CCXs. A process on several CCXs (spread, or
 * pin with a list) is on none of them alone. */
static unsigned *placed_load(const struct ruler *r, pid_t except) {
	unsigned *load = calloc(r->topology->n_ccx ? r->topology->n_ccx : 1, sizeof(*load));

	for (const struct placement *p = placements_next(r->placements, NULL); load && p;
	     p = placements_next(r->placements, p)) {
		unsigned ccx[2];
		if (ruler_owns(p) && placed(p) && p->pid != except && placer_ccxs_of(r->topology, &p->cpus, ccx, 2) == 1)
			load[ccx[0]]++;
	}
	return load;
}

/* The load for rule's decision on every process but except, in *ret: NULL
 * where rule does not weigh it (ccx = 1), which spares a storm of its
 * execs a count of the whole table at each. 0, or -ENOMEM. */
static int load_for(const struct ruler *r, const struct rule *rule, pid_t except, unsigned **ret) {
	bool weighs = placer_rule_weighs_load(rule);

	*ret = weighs ? placed_load(r, except) : NULL;
	return weighs && !*ret ? -ENOMEM : 0;
}

/* The CPUs a process may have at most: its cgroup cpuset, or every online CPU. */
static int allowed_cpus(const struct ruler *r, pid_t pid, cpu_set_t *ret) {
	int e = cgroup_read_cpuset(r->root, pid, ret);

	if (e == -ENOENT) {
		*ret = r->online;
		return 0;
	}
	if (e < 0)
		return e;
	CPU_AND(ret, ret, &r->online);
	return 0;
}

/* What the ruling needs of st's process (p: its entry, if any). */
static int read_subject(const struct ruler *r, const struct procfs_stat *st, const struct placement *p,
			struct ruling_subject *s) {
	const struct placement_early *early = placements_early(r->placements);
	int e;

	*s = (struct ruling_subject){ .ours = ruler_owns(p) && placed(p) };
	if (early && early->pid == st->pid) {
		/* Pinned early from every online CPU: that was its original,
		 * and its cpuset holds them all. */
		s->mask = s->allowed = early->original;
		return 0;
	}
	e = allowed_cpus(r, st->pid, &s->allowed);
	if (e == -ESRCH)
		return e;
	if (e < 0)
		s->allowed = r->online;
	if (s->ours)
		return 0;
	if (p)
		return placements_original_of(p, &s->mask);
	return placements_affinity(st->pid, &s->mask);
}

/* The ruling of rule for st's process, carried out. Returns 1 when it
 * pinned a spread process. */
/* The ruling of rule for the process, its subject read. 0, or -errno when
 * the process is gone (and removed) or memory ran out (logged). */
static int decide(struct ruler *r, const struct procfs_stat *st, const struct placement *p, const struct rule *rule,
		  struct ruling_subject *s, struct ruling *ruling) {
	struct ruling_context ctx = {
		.topology = r->topology,
		.dry_run = r->config->mode == CONFIG_MODE_DRY_RUN,
		/* Dry-run on another machine's topology shows that machine's
		 * decisions: this machine's CPUs and cpusets do not bound them. */
		.bounded = !(r->config->mode == CONFIG_MODE_DRY_RUN && strcmp(r->topology->source, "system") != 0),
	};
	unsigned *load;
	int e = read_subject(r, st, p, s);

	if (e < 0) {
		placements_remove(r->placements, st->pid);
		return e;
	}
	e = load_for(r, rule, st->pid, &load);
	ctx.load = load;
	if (e >= 0)
		e = ruling_decide(rule, s, &ctx, ruling);
	free(load);
	if (e < 0)
		log_error_errno(e, "Out of memory deciding %s[%d] under rule %s", st->comm, (int)st->pid, rule->name);
	return e;
}

/* The pin a ruling asks for, set (or, pinned at exec, confirmed) and
 * logged. Returns what apply_rule() does. */
static int pin_as_ruled(struct ruler *r, const struct procfs_stat *st, const struct placement *p,
			const struct rule *rule, struct ruling *ruling, bool early, bool was_pinned) {
	struct placements *pl = r->placements;
	char list[CPULIST_MAX], ccxs[CPULIST_MAX];
	int e;

	placements_set_spread(pl, p, ruling->sets, ruling->n_sets);
	e = early && placements_confirm_early(pl, p, st, &ruling->cpus) ? 0 : placements_pin(pl, p, &ruling->cpus);
	if (e == -ESRCH)
		return placements_remove(r->placements, st->pid), 0;
	if (e < 0) {
		placements_decide(pl, p, PLACEMENT_SKIPPED, NULL);
		placements_set_reason(pl, p, "rule %s: setting the affinity failed: %s", rule->name, strerror(-e));
		return 0;
	}
	if (!was_pinned && !log_ratelimit_pass(&r->pin_lines, util_usec(CLOCK_MONOTONIC)))
		snprintf(r->last_held_rule, sizeof(r->last_held_rule), "%s", rule->name);
	else if (!was_pinned)
		log_decision(LOG_INFO,
			     &(struct log_decision){ .pid = p->pid, .comm = p->comm, .rule = rule->name, .decision = "pin",
						     .ccx = placer_ccx_list(r->topology, &ruling->cpus, ccxs, sizeof(ccxs)) },
			     "Pinned %s[%d] to CCX %s (CPUs %s): rule %s", p->comm, (int)p->pid, ccxs,
			     cpulist_format(&ruling->cpus, list, sizeof(list)), rule->name);
	return p->n_spread > 0;
}

/* Gives p its original back, a rule no longer pinning it (why), and says
 * so where that changed its CPUs. Returns placements_give_back()'s. */
static int give_back(struct ruler *r, const struct placement *p, const char *why) {
	bool pinned = p->state == PLACEMENT_PINNED;
	char list[CPULIST_MAX];
	int e = placements_give_back(r->placements, p);

	if (e == 0 && pinned && log_ratelimit_pass(&r->release_lines, util_usec(CLOCK_MONOTONIC)))
		log_decision(LOG_INFO, &(struct log_decision){ .pid = p->pid, .comm = p->comm, .decision = "release" },
			     "Gave %s[%d] its CPUs %s back: %s", p->comm, (int)p->pid,
			     p->have_original ? cpulist_format(&p->original, list, sizeof(list)) : "?", why);
	return e;
}

static int apply_rule(struct ruler *r, const struct procfs_stat *st, const struct placement *p,
		     const struct rule *rule, const char *matched) {
	struct placements *pl = r->placements;
	const struct placement_early *pinned_early = placements_early(pl);
	struct ruling_subject s;
	struct ruling ruling;
	bool was_pinned = ruler_owns(p) && p->state == PLACEMENT_PINNED;
	bool early = pinned_early && pinned_early->pid == st->pid && !p;

	if (decide(r, st, p, rule, &s, &ruling) < 0)
		return 0;
	/* What ccxd set goes back, unless it pins now; a seat the automatic
	 * policy gave it too, when a rule says to leave it alone. */
	if ((s.ours && ruling.action != RULING_PIN && ruling.action != RULING_WOULD_PIN) ||
	    (p && p->owner == PLACEMENT_AUTO && (ruling.action == RULING_IGNORE || ruling.action == RULING_LEAVE_ALONE)))
		if (give_back(r, p, ruling.reason) == -ESRCH)
			return placements_remove(r->placements, st->pid), 0;
	if (ruling.action == RULING_HAND_OVER) {
		if (ruler_owns(p))
			placements_remove(r->placements, st->pid);
		return 0;
	}
	p = early ? placements_track_early(pl, st) : placements_track(pl, st);
	if (!p) {
		free(ruling.sets);
		return 0;
	}
	/* Taken with its original: what it has, or what the automatic policy
	 * kept of it (the ruling looked at that for a hand-set mask); pinned
	 * early, what it had before. */
	if ((ruling.action == RULING_PIN || ruling.action == RULING_WOULD_PIN) && !s.ours &&
	    placements_claim(pl, p, PLACEMENT_RULE, rule->name, &s.allowed, true,
			     early ? &pinned_early->original : NULL) < 0) {
		free(ruling.sets);
		return placements_remove(r->placements, st->pid), 0;
	}
	placements_rule(pl, p, rule->name);
	if (matched[0])
		placements_set_reason(pl, p, "%s (%s)", ruling.reason, matched);
	else
		placements_set_reason(pl, p, "%s", ruling.reason);
	switch (ruling.action) {
	case RULING_IGNORE:
		placements_decide(pl, p, PLACEMENT_IGNORED, NULL);
		return 0;
	case RULING_LEAVE_ALONE:
		placements_decide(pl, p, PLACEMENT_SKIPPED, NULL);
		placements_set_spread(pl, p, NULL, 0);
		return 0;
	case RULING_WOULD_PIN:
		placements_set_spread(pl, p, ruling.sets, ruling.n_sets);
		placements_decide(pl, p, PLACEMENT_DRY_RUN, &ruling.cpus);
		return 0;
	case RULING_PIN:
		break;
	case RULING_HAND_OVER:
		return 0;
	}
	return pin_as_ruled(r, st, p, rule, &ruling, early, was_pinned);
}

/* told: pid's stat as its exec's record tells it (placements_early_stat()),
 * or NULL: read. */
static int rule_process(struct ruler *r, pid_t pid, enum ruling_trigger trigger, const struct procfs_stat *told) {
	struct facts facts;
	struct procfs_stat st;
	const struct rule *rule;
	const struct placement *p;
	int e;

	if (r->config->mode == CONFIG_MODE_OFF)
		return 0;
	if (told)
		st = *told;
	e = told ? 0 : procfs_read_stat(r->root, pid, &st);
	if (e < 0) {
		if (e != -ESRCH)
			log_debug_errno(e, "Failed to read /proc/%d/stat, ignoring: %m", (int)pid);
		placements_remove(r->placements, pid);
		return 0;
	}
	if (st.flags & PROCFS_PF_KTHREAD)
		return 0;
	p = placements_get(r->placements, pid);
	if (p && p->start_time != st.start_time) {
		placements_remove(r->placements, pid);   /* the pid was reused behind our back */
		p = NULL;
	}
	switch (ruling_look(ruler_owns(p) ? p->comm : NULL, ruler_owns(p) && p->state == PLACEMENT_RELEASED, st.comm,
			    trigger)) {
	case RULING_NOTHING:
		return 0;
	case RULING_FORGET_DECIDE:
		placements_remove(r->placements, pid);
		p = NULL;
		break;
	case RULING_DECIDE:
		break;
	}
	facts_init(&facts, trigger);
	rule = facts_match(&r->facts, r->config->rules, r->config->n_rules, &st, &facts);
	if (rule) {
		char matched[128];

		rules_explain(rule, &facts.id, matched, sizeof(matched));
		facts_done(&facts);
		return apply_rule(r, &st, p, rule, matched);
	}
	facts_done(&facts);
	/* A placement follows the process and its descendants through exec
	 * until a rule says otherwise (and while a command line is read for
	 * one: decided again once it is there). */
	if (!ruler_owns(p) && (trigger == RULING_SCAN || trigger == RULING_EXEC))
		placements_adopt_if_inherited(r->placements, &st);
	return 0;
}

int ruler_explain(struct ruler *r, pid_t pid, bool settle, struct rules_explanation *ret) {
	const struct config *c = r->config;
	struct procfs_stat st;
	struct facts f;

	*ret = (struct rules_explanation){ .n_rules = c->n_rules };
	if (procfs_read_stat(r->root, pid, &st) < 0 || (st.flags & PROCFS_PF_KTHREAD))
		return -ESRCH;
	facts_init(&f, RULING_EXPLAIN);
	facts_read_all(&r->facts, &st, &f);
	if (f.pending && !settle) {
		facts_done(&f);
		return -EINPROGRESS;
	}
	snprintf(ret->comm, sizeof(ret->comm), "%s", st.comm);
	ret->matches = calloc(c->n_rules ? c->n_rules : 1, sizeof(*ret->matches));
	ret->why = calloc(c->n_rules ? c->n_rules : 1, sizeof(*ret->why));
	if (!ret->matches || !ret->why) {
		facts_done(&f);
		rules_explanation_done(ret);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_rules; i++)
		ret->matches[i] = rules_why_not(&c->rules[i], &f.id, ret->why[i], sizeof(ret->why[i]));
	if (f.id.n_ancestors > 0) {
		ret->parent = f.ancestors[0].pid;
		snprintf(ret->parent_comm, sizeof(ret->parent_comm), "%s", f.ancestors[0].comm);
	}
	/* Handed over: facts_done() frees the rest. */
	ret->exe = f.exe;
	ret->cmdline = f.cmdline;
	ret->cgroup = f.cgroup;
	f.exe = f.cmdline = f.cgroup = NULL;
	facts_done(&f);
	return 0;
}

static int evaluate(struct ruler *r, pid_t pid, enum ruling_trigger trigger, const struct procfs_stat *told) {
	const struct placement_early *early = placements_early(r->placements);
	int e;

	if (early && early->pid != pid)
		placements_settle_early(r->placements);
	e = rule_process(r, pid, trigger, told);
	placements_settle_early(r->placements);
	return e;
}

int ruler_evaluate(struct ruler *r, pid_t pid, enum ruling_trigger trigger) {
	return evaluate(r, pid, trigger, NULL);
}

int ruler_evaluate_exec(struct ruler *r, pid_t pid, const struct placement_seen *seen, bool pinned_first) {
	struct procfs_stat st;

	return evaluate(r, pid, RULING_EXEC,
			placements_early_stat(r->placements, pid, seen, pinned_first, &st) == 0 ? &st : NULL);
}

/* A program that a rule names by its comm (or exe) alone, in the plain case
 * (enforce, on every online CPU, pinned to one set of CPUs) is pinned at
 * once (placements_pin_early()): the first milliseconds of a program that
 * starts computing at once are then where the rule puts it. A process on
 * fewer CPUs (a cpuset, taskset) is left to the full decision. Whether
 * rule pins such a program at its exec, with load placed, and where. */
static bool early_cpus(const struct ruler *r, const struct rule *rule, const unsigned *load, cpu_set_t *ret) {
	struct ruling_subject s = { .ours = false, .mask = r->online, .allowed = r->online };
	struct ruling_context ctx = { .topology = r->topology, .bounded = true, .load = load };
	struct ruling ruling = { .sets = NULL };
	bool pin;

	if (r->config->mode != CONFIG_MODE_ENFORCE || ruling_decide(rule, &s, &ctx, &ruling) < 0)
		return false;
	pin = ruling.action == RULING_PIN && ruling.n_sets == 0;
	if (pin)
		*ret = ruling.cpus;
	free(ruling.sets);
	return pin;
}

static void pin_early(struct ruler *r, pid_t pid, const struct rule *rule, const struct placement_seen *seen) {
	unsigned *load;
	cpu_set_t cpus;

	if (load_for(r, rule, pid, &load) >= 0 && early_cpus(r, rule, load, &cpus))
		placements_pin_early(r->placements, pid, &r->online, &cpus, seen);
	free(load);
}

static int exec_pin_cmp(const void *a, const void *b) {
	return strcmp(((const struct exec_pin *)a)->comm, ((const struct exec_pin *)b)->comm);
}

/* Every name a rule pins by comm alone, decided with load. */
static int decide_all_ahead(struct ruler *r, const unsigned *load) {
	struct rules_name *names;
	struct exec_pin *pins;
	size_t n_names, n = 0;
	bool every;

	if (rules_exec_names(r->config->rules, r->config->n_rules, &names, &n_names, &every) < 0)
		return -ENOMEM;
	pins = calloc(n_names ? n_names : 1, sizeof(*pins));
	if (!pins) {
		free(names);
		return -ENOMEM;
	}
	r->ahead_by_load = false;
	for (size_t i = 0; i < n_names; i++) {
		struct rule_identity id = { .comm = names[i].comm };
		unsigned need;
		const struct rule *rule = rules_match(r->config->rules, r->config->n_rules, &id, &need);

		if (!rule || !early_cpus(r, rule, load, &pins[n].cpus))
			continue;
		snprintf(pins[n].comm, sizeof(pins[n].comm), "%s", names[i].comm);
		pins[n].by_load = placer_rule_balances(rule);
		r->ahead_by_load |= pins[n].by_load;
		n++;
	}
	free(names);
	qsort(pins, n, sizeof(*pins), exec_pin_cmp);
	free(r->ahead);
	r->ahead = pins;
	r->n_ahead = n;
	return 0;
}

/* Those whose CCX is the least loaded, decided again with load. */
static void decide_again_by_load(struct ruler *r, const unsigned *load) {
	for (size_t i = 0; i < r->n_ahead; i++) {
		struct exec_pin *pin = &r->ahead[i];
		struct rule_identity id = { .comm = pin->comm };
		unsigned need;
		const struct rule *rule;

		if (!pin->by_load)
			continue;
		rule = rules_match(r->config->rules, r->config->n_rules, &id, &need);
		if (!rule || !early_cpus(r, rule, load, &pin->cpus))
			CPU_ZERO(&pin->cpus);   /* not pinned at its exec now: decided after */
	}
}

void ruler_decide_ahead(struct ruler *r) {
	unsigned *load;
	size_t n_ccx;

	if (!r->config || (r->ahead_load && !r->ahead_by_load))
		return;
	n_ccx = r->topology->n_ccx ? r->topology->n_ccx : 1;
	load = placed_load(r, 0);
	if (load && r->ahead_load && memcmp(load, r->ahead_load, n_ccx * sizeof(*load)) == 0) {
		free(load);
		return;
	}
	if (load && r->ahead_load)
		decide_again_by_load(r, load);
	else if (!load || decide_all_ahead(r, load) < 0) {
		/* No table: every exec is decided after its wake-up. */
		free(load);
		load = NULL;
		r->n_ahead = 0;
	}
	free(r->ahead_load);
	r->ahead_load = load;
}

/* comm's entry in the table: a search that touches little memory, since it
 * runs between a wake-up and the pin, where each cold page costs. */
static const struct exec_pin *decided_ahead(const struct ruler *r, const char *comm) {
	size_t lo = 0, hi = r->ahead_load && comm ? r->n_ahead : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(comm, r->ahead[mid].comm, RULE_COMM_MAX);

		if (c == 0)
			return &r->ahead[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Whether pid holds the early pin as the task seen: pinned as its execve
 * began, its decision still to come. */
static bool held_early(const struct ruler *r, pid_t pid, const struct placement_seen *seen) {
	const struct placement_early *early = placements_early(r->placements);

	return early && seen && early->pid == pid && early->start_time == seen->start_time;
}

bool ruler_exec_entering(struct ruler *r, pid_t pid, const char *comm, const struct placement_seen *seen) {
	const struct exec_pin *pin;

	if (held_early(r, pid, seen))
		return false;
	placements_settle_early(r->placements);
	if (placements_get(r->placements, pid))
		return false;   /* in the table: its exec's record decides */
	pin = decided_ahead(r, comm);
	return pin && CPU_COUNT(&pin->cpus) > 0 &&
	       placements_pin_early(r->placements, pid, &r->online, &pin->cpus, seen) == 0;
}

bool ruler_exec(struct ruler *r, pid_t pid, const char *comm, const struct placement_seen *seen, bool ahead,
		bool *pinned) {
	struct rule_identity id = { .comm = comm };
	char read[PROCFS_COMM_MAX], *exe = NULL;
	const struct exec_pin *pin = ahead ? decided_ahead(r, comm) : NULL;
	const struct rule *rule;
	unsigned need = 0;
	bool more;

	*pinned = false;
	if (held_early(r, pid, seen))
		return true;   /* pinned as its execve began: the decision follows */
	placements_settle_early(r->placements);   /* one whose decision never came */
	if (placements_get(r->placements, pid))
		return true;
	if (pin && CPU_COUNT(&pin->cpus) > 0) {
		*pinned = placements_pin_early(r->placements, pid, &r->online, &pin->cpus, seen) == 0;
		return true;   /* its rule pins it: the full decision follows */
	}
	if (!id.comm) {
		if (procfs_read_comm(r->root, pid, read) < 0)
			return false;
		id.comm = read;
	}
	rule = rules_match(r->config->rules, r->config->n_rules, &id, &need);
	/* Decided in full whenever some rule may name it: the full decision
	 * also adopts a child that inherited a placement, at once. */
	more = need != 0;
	if (!rule && need == RULE_NEED_EXE && procfs_read_exe(r->root, pid, &exe) >= 0) {
		id.exe = exe;
		rule = rules_match(r->config->rules, r->config->n_rules, &id, &need);
		free(exe);
	}
	if (rule)
		pin_early(r, pid, rule, seen);
	*pinned = placements_early(r->placements) && placements_early(r->placements)->pid == pid;
	return rule || more;
}

void ruler_fork(struct ruler *r, pid_t parent_tgid, pid_t child_pid, pid_t child_tgid) {
	struct procfs_stat st;
	const struct placement *parent, *child;

	if (child_pid != child_tgid) {
		/* A thread inherits from the thread that made it; with policy =
		 * spread it takes the next CCX instead. */
		parent = placements_get(r->placements, child_tgid);
		if (parent)
			placements_spread_thread(r->placements, parent, child_pid);
		return;
	}
	parent = placements_get(r->placements, parent_tgid);
	if (!ruler_owns(parent) || !placed(parent) || procfs_read_stat(r->root, child_tgid, &st) < 0)
		return;
	child = placements_inherit(r->placements, &st, parent);
	/* The parent may have forked before its own pin landed: set it anyway. */
	if (child && child->state == PLACEMENT_PINNED && placements_pin(r->placements, child, &child->cpus) == -ESRCH)
		placements_remove(r->placements, child_tgid);
}

/* The pins and releases not logged one by one, in a line each once their
 * interval is over. */
static void sum_up_pins(struct ruler *r) {
	uint64_t held = log_ratelimit_held(&r->pin_lines, util_usec(CLOCK_MONOTONIC)),
		 held_releases = log_ratelimit_held(&r->release_lines, util_usec(CLOCK_MONOTONIC));

	if (held_releases > 0)
		log_decision(LOG_INFO, &(struct log_decision){ .decision = "release" },
			     "Gave %llu more processes their CPUs back in %llu s, not logged one by one",
			     (unsigned long long)held_releases, (unsigned long long)(PIN_LINES_INTERVAL_USEC / 1000000));
	if (held > 0)
		log_decision(LOG_INFO, &(struct log_decision){ .rule = r->last_held_rule, .decision = "pin" },
			     "Pinned %llu more processes in %llu s, not logged one by one (the last by rule %s)",
			     (unsigned long long)held, (unsigned long long)(PIN_LINES_INTERVAL_USEC / 1000000),
			     r->last_held_rule);
}

bool ruler_sweep(struct ruler *r) {
	bool spreading = false;

	sum_up_pins(r);
	placements_adopt_children(r->placements);
	for (const struct placement *p = placements_next(r->placements, NULL); p; p = placements_next(r->placements, p))
		if (ruler_owns(p) && p->state == PLACEMENT_PINNED && p->n_spread > 0) {
			placements_spread_catch_up(r->placements, p);
			spreading = true;
		}
	return spreading;
}

static bool rule_exists(const struct config *c, const char *name) {
	for (size_t i = 0; name && i < c->n_rules; i++)
		if (strcmp(c->rules[i].name, name) == 0)
			return true;
	return false;
}

int ruler_redecide(struct ruler *r) {
	size_t n;
	pid_t *pids = placements_pids(r->placements, &n);
	int spreading = 0;

	if (!pids)
		log_error("Out of memory: the processes placed by rules are decided again at their next event");
	for (size_t i = 0; pids && i < n; i++) {
		const struct placement *p = placements_get(r->placements, pids[i]);
		if (!ruler_owns(p) || p->state == PLACEMENT_RELEASED || (!p->rule && p->state == PLACEMENT_PINNED))
			continue;   /* the automatic policy's, or decided by hand */
		if (!rule_exists(r->config, p->rule)) {
			give_back(r, p, "its rule is gone");
			placements_remove(r->placements, pids[i]);
			continue;
		}
		if (!p->inherited_from)
			spreading |= ruler_evaluate(r, pids[i], RULING_RELOAD);
	}
	free(pids);
	return spreading;
}

void ruler_restore_all(struct ruler *r, bool at_exit) {
	const struct placement *p, *next;

	for (p = placements_next(r->placements, NULL); p; p = next) {
		int e;
		next = placements_next(r->placements, p);
		if (!ruler_owns(p))
			continue;
		e = placements_give_back(r->placements, p);
		if (!at_exit || e == -ESRCH || (e == 0 && p->state != PLACEMENT_RELEASED))
			placements_remove(r->placements, p->pid);
	}
}

const char *ruler_keep_on_restart(const struct ruler *r, const struct ledger_entry *e) {
	if (e->owner == LEDGER_AUTO)
		return "automatic placements are measured again";
	if (r->config->mode != CONFIG_MODE_ENFORCE)
		return "mode is not enforce";
	if (e->owner == LEDGER_RULE && !rule_exists(r->config, e->rule))
		return "its rule is gone";
	return NULL;
}

size_t ruler_pinned(const struct ruler *r) {
	size_t n = 0;

	for (const struct placement *p = placements_next(r->placements, NULL); p; p = placements_next(r->placements, p))
		n += ruler_owns(p) && p->state == PLACEMENT_PINNED;
	return n;
}

int ruler_pin(struct ruler *r, pid_t pid, unsigned ccx, const struct placement **ret) {
	struct placements *pl = r->placements;
	struct procfs_stat st;
	cpu_set_t target, allowed;
	char ccxs[CPULIST_MAX];
	const struct placement *p;
	int e;

	if (r->config->mode == CONFIG_MODE_OFF)
		return -ECANCELED;
	if (procfs_read_stat(r->root, pid, &st) < 0)
		return -ESRCH;
	if (st.flags & PROCFS_PF_KTHREAD)
		return -EPERM;
	if (ccx >= r->topology->n_ccx || !r->topology->ccx[ccx].usable)
		return -ENOENT;
	e = allowed_cpus(r, pid, &allowed);
	if (e < 0)
		return e;
	CPU_AND(&target, &r->topology->ccx[ccx].cpus, &allowed);
	if (CPU_COUNT(&target) == 0)
		return -EXDEV;

	p = placements_track(r->placements, &st);
	if (!p)
		return -ESRCH;
	/* Pinned already, or seated by the automatic policy: what it had
	 * before ccxd is still the original. A hand may narrow anything. */
	e = placements_claim(r->placements, p, PLACEMENT_HAND, NULL, &allowed, true, NULL);
	if (e < 0)
		return e;
	placements_set_spread(pl, p, NULL, 0);
	if (r->config->mode == CONFIG_MODE_DRY_RUN) {
		placements_decide(pl, p, PLACEMENT_DRY_RUN, &target);
		placements_set_reason(pl, p, "pinned by hand to CCX %u (dry-run)", ccx);
		*ret = p;
		return 0;
	}
	e = placements_pin(r->placements, p, &target);
	if (e < 0) {
		if (e == -ESRCH)
			placements_remove(r->placements, pid);
		else
			placements_decide(pl, p, PLACEMENT_SKIPPED, NULL);
		return e;
	}
	placements_set_reason(pl, p, "pinned by hand to CCX %u", ccx);
	log_decision(LOG_INFO, &(struct log_decision){ .pid = pid, .comm = p->comm, .decision = "pin",
						       .ccx = placer_ccx_list(r->topology, &target, ccxs, sizeof(ccxs)) },
		     "Pinned %s[%d] to CCX %u by hand", p->comm, (int)pid, ccx);
	*ret = p;
	return 0;
}

int ruler_unpin(struct ruler *r, pid_t pid, const struct placement **ret) {
	const struct placement *p = placements_get(r->placements, pid);
	int e;

	if (!ruler_owns(p))
		return kill(pid, 0) < 0 && errno == ESRCH ? -ESRCH : -ENOTCONN;
	if (!placed(p))
		return -ENOTCONN;
	e = placements_release(r->placements, p);
	if (e == -ESRCH) {
		placements_remove(r->placements, pid);
		return e;
	}
	if (e < 0)
		return e;
	log_decision(LOG_INFO, &(struct log_decision){ .pid = pid, .comm = p->comm, .decision = "release" },
		     "Released %s[%d]", p->comm, (int)pid);
	*ret = p;
	return 0;
}
