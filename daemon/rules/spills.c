#include "spills.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cpulist.h"
#include "log.h"
#include "placer.h"
#include "validator.h"
#include "waits.h"

/* After a program comes back, it may spill again only once it has been
 * back this many samples, doubled at each return up to the most: a program
 * crowded on and off (by whoever runs work there) moves now and then, not
 * at every turn. */
#define SPILL_QUIET_FIRST 4
#define SPILL_QUIET_MAX 600
/* Spills in one interval, over all programs: the rest wait for the next
 * (any user may start a rule's program many times over). */
#define SPILLS_PER_INTERVAL 8

/* One pinned process of a rule that may spill. */
struct spill {
	pid_t pid;
	uint64_t start_time;
	pid_t parent;             /* the program it inherited its pin from, forked; 0 if none */
	uint64_t parent_start;    /* its start time, once its entry was found: a pid alone may be
				   * another process's by then */
	bool seen;                /* in this interval's watch */
	bool spilled;
	cpu_set_t home;           /* what its rule pinned it to */
	cpu_set_t wide;           /* spilled: home and the CCX it spilled to */
	struct waits_times last;  /* its threads' times at the last watch */
	uint64_t last_usec;       /* when; 0 before the first reading */
	struct crowding_alone alone;   /* its first samples pinned, before a crowd */
	unsigned strikes;         /* crowded samples in a row */
	unsigned streak;          /* spilled: samples in a row with room at home */
	unsigned quiet;           /* samples left before it may spill again */
	unsigned next_quiet;      /* the quiet after its next return */
};

struct spills {
	const char *root;
	struct spill *v;
	size_t n, allocated;
	unsigned spilled_now;     /* spills in this interval */
	struct spills_stats stats;
};

int spills_new(const char *root, struct spills **ret) {
	struct spills *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->root = root;
	*ret = s;
	return 0;
}

void spills_free(struct spills *s) {
	if (!s)
		return;
	free(s->v);
	free(s);
}

struct spills_stats spills_stats(const struct spills *s) {
	return s->stats;
}

/* p's rule, when it may spill and p is pinned by it alone (a spread
 * process's threads take sets of their own). */
static const struct rule *spilling_rule(const struct config *c, const struct placement *p) {
	if (p->owner != PLACEMENT_RULE || p->state != PLACEMENT_PINNED || p->n_spread > 0 || !p->rule)
		return NULL;
	for (size_t i = 0; i < c->n_rules; i++)
		if (strcmp(c->rules[i].name, p->rule) == 0)
			return c->rules[i].spill ? &c->rules[i] : NULL;
	return NULL;
}

static struct spill *entry_for(struct spills *s, const struct placement *p) {
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == p->pid && s->v[i].start_time == p->start_time)
			return &s->v[i];
	if (s->n == s->allocated) {
		size_t want = s->allocated ? 2 * s->allocated : 8;
		struct spill *v = reallocarray(s->v, want, sizeof(*v));
		if (!v)
			return NULL;
		s->v = v;
		s->allocated = want;
	}
	s->v[s->n] = (struct spill){
		.pid = p->pid, .start_time = p->start_time, .parent = p->inherited_from, .home = p->cpus,
		.next_quiet = SPILL_QUIET_FIRST,
	};
	return &s->v[s->n++];
}

/* Pinned again by its rule meanwhile (a reload, a rescan): measured afresh. */
static void follow_rule(struct spill *e, const struct placement *p) {
	if (CPU_EQUAL(&p->cpus, e->spilled ? &e->wide : &e->home))
		return;
	e->home = p->cpus;
	e->spilled = false;
	e->alone.n = e->strikes = e->streak = 0;
}

/* The one CCX that holds cpus, or -1. */
static int ccx_of(const struct topology *t, const cpu_set_t *cpus) {
	int ccx = -1;

	for (unsigned k = 0; k < t->n_ccx; k++) {
		cpu_set_t in;
		CPU_AND(&in, cpus, &t->ccx[k].cpus);
		if (CPU_COUNT(&in) == 0)
			continue;
		if (ccx >= 0 || !CPU_EQUAL(&in, cpus))
			return -1;
		ccx = (int)k;
	}
	return ccx;
}

/* Each CCX as e's home sees it: its CPUs, all the work measured there, and
 * the other work, which is that less what the process itself used where it
 * ran last (the sample read that, for a process that ran). */
static struct crowding_ccx *ccxs_around(const struct topology *t, const struct sampler_result *sample,
					const struct spill *e, int home, double used) {
	struct crowding_ccx *c = crowding_ccxs(t, sample->cpu_load, sample->n_cpu_load);
	long at = sampler_result_index(sample, e->pid);
	int ran = at >= 0 && sample->procs[at].last_cpu >= 0 ? topology_ccx_of_cpu(t, (unsigned)sample->procs[at].last_cpu)
							     : -1;

	if (!c)
		return NULL;
	for (unsigned k = 0; k < t->n_ccx; k++) {
		c[k].distance = crowding_distance(t->ccx[home].numa_node, t->ccx[home].package, t->ccx[k].numa_node,
						  t->ccx[k].package);
		if ((int)k == ran)
			c[k].taken -= used;
		if (c[k].taken < 0)
			c[k].taken = 0;   /* clock ticks are coarse */
	}
	return c;
}

/* What e's cgroup cpuset leaves it of each CCX, as the room it may spill
 * to: a spill never widens a cpuset. */
static void within_cpuset(const char *root, const struct topology *t, const struct spill *e, struct crowding_ccx *ccx,
			  cpu_set_t *allowed) {
	if (cgroup_read_cpuset(root, e->pid, allowed) < 0)
		*allowed = t->online;
	for (unsigned k = 0; k < t->n_ccx; k++) {
		cpu_set_t in;
		CPU_AND(&in, allowed, &t->ccx[k].cpus);
		if ((double)CPU_COUNT(&in) < ccx[k].cpus)
			ccx[k].cpus = CPU_COUNT(&in);
	}
}

static void spill(struct spills *s, struct placements *pl, const struct topology *t, const struct placement *p,
		  struct spill *e, int home, struct crowding_ccx *ccx, double waited, double base, double need) {
	char list[CPULIST_MAX];
	cpu_set_t allowed, to_cpus;
	int to;

	if (e->quiet > 0 || s->spilled_now >= SPILLS_PER_INTERVAL) {
		placements_set_reason(pl, p, "rule %s: waited %.0f %% of the time on CCX %d (%.0f %% once pinned): "
				      "stays %s", p->rule, waited * 100, home, base * 100,
				      e->quiet > 0 ? "a while longer, having come back lately" : "until the next interval");
		return;
	}
	within_cpuset(s->root, t, e, ccx, &allowed);
	to = crowding_spill_target(ccx, t->n_ccx, home, need);
	if (to < 0) {
		placements_set_reason(pl, p, "rule %s: waited %.0f %% of the time on CCX %d (%.0f %% once pinned), "
				      "and no other CCX had room: stays", p->rule, waited * 100, home, base * 100);
		return;
	}
	CPU_AND(&to_cpus, &t->ccx[to].cpus, &allowed);
	CPU_OR(&e->wide, &e->home, &to_cpus);
	if (placements_pin(pl, p, &e->wide) < 0)
		return;
	e->spilled = true;
	e->streak = 0;
	s->spilled_now++;
	s->stats.spills++;
	placements_set_reason(pl, p, "rule %s: spilled to CCX %d: waited %.0f %% of the time on CCX %d "
			      "(%.0f %% once pinned); CCX %d had %.1f CPUs free", p->rule, to, waited * 100, home,
			      base * 100, to, ccx[to].cpus - ccx[to].taken);
	log_decision(LOG_INFO,
		     &(struct log_decision){ .pid = p->pid, .comm = p->comm, .rule = p->rule, .decision = "spill" },
		     "Spilled %s[%d] to CPUs %s: %s", p->comm, (int)p->pid,
		     cpulist_format(&e->wide, list, sizeof(list)), p->reason);
}

static void come_back(struct spills *s, struct placements *pl, const struct placement *p, struct spill *e,
		      int home, const struct crowding_ccx *ccx) {
	char list[CPULIST_MAX];

	if (placements_pin(pl, p, &e->home) < 0)
		return;
	e->spilled = false;
	e->strikes = 0;
	e->quiet = e->next_quiet;
	e->next_quiet = e->next_quiet * 2 > SPILL_QUIET_MAX ? SPILL_QUIET_MAX : e->next_quiet * 2;
	s->stats.returns++;
	placements_set_reason(pl, p, "rule %s: back on CCX %d alone, which has %.1f CPUs free again", p->rule, home,
			      ccx[home].cpus - ccx[home].taken);
	log_decision(LOG_INFO,
		     &(struct log_decision){ .pid = p->pid, .comm = p->comm, .rule = p->rule, .decision = "return" },
		     "Brought %s[%d] back to CPUs %s: %s", p->comm, (int)p->pid,
		     cpulist_format(&e->home, list, sizeof(list)), p->reason);
}

/* One interval of e: its share waiting and the CPU it used since the last,
 * measured alone in its first window samples, then judged. */
static void watch(struct spills *s, struct placements *pl, const struct config *c, const struct topology *t,
		  const struct sampler_result *sample, const struct placement *p, struct spill *e, unsigned window,
		  uint64_t now_usec) {
	struct crowding_options o = { .max_wait = c->crowded_wait, .samples = c->crowded_samples };
	struct waits_times now;
	struct crowding_ccx *ccx;
	double waited, used, base, need;
	int home = ccx_of(t, &e->home);

	if (waits_read(s->root, p->pid, &now) < 0)
		return;
	if (e->last_usec == 0 || now_usec <= e->last_usec) {
		e->last = now;
		e->last_usec = now_usec;
		return;
	}
	waited = waits_share(&e->last, &now);
	used = now.run_ns >= e->last.run_ns ? (double)(now.run_ns - e->last.run_ns) / 1e3 / (double)(now_usec - e->last_usec)
					     : 0;
	e->last = now;
	e->last_usec = now_usec;
	if (home < 0 || t->n_ccx < 2 || !sample || sample->n_cpu_load == 0)
		return;
	/* Spilled, it was measured alone before: the window then holds. */
	if (!crowding_alone_add(&e->alone, e->spilled ? 0 : window, waited, used, &base, &need))
		return;
	if (!e->spilled && e->quiet > 0)
		e->quiet--;
	if (!(ccx = ccxs_around(t, sample, e, home, used)))
		return;
	if (!e->spilled && crowding_sample(&e->strikes, waited, base, &ccx[home], need, &o)) {
		e->strikes = 0;
		spill(s, pl, t, p, e, home, ccx, waited, base, need);
	} else if (e->spilled && crowding_room_again(&e->streak, &ccx[home], need, &o))
		come_back(s, pl, p, e, home, ccx);
	free(ccx);
}

/* The parent e was forked from, watched still, or NULL. It is known by pid
 * and start time: the first time it is looked for, the watched program of
 * that pid counts only if it started before e (a process that took the
 * pid of a parent gone meanwhile started after). */
static const struct spill *parent_of(const struct spills *s, struct spill *e) {
	for (size_t i = 0; e->parent > 0 && i < s->n; i++) {
		const struct spill *w = &s->v[i];
		if (w->pid != e->parent || !w->seen)
			continue;
		if (!e->parent_start && w->start_time <= e->start_time)
			e->parent_start = w->start_time;
		return w->start_time == e->parent_start ? w : NULL;
	}
	return NULL;
}

/* A process a watched program forked inherited its pin, the spilled one
 * too: it follows its parent, spilled and brought back with it, rather than
 * be judged on its own as it starts. Once its parent has gone, its own
 * watch starts afresh. */
static void follow_parent(struct placements *pl, const struct placement *p, struct spill *e, const struct spill *parent) {
	const cpu_set_t *want = parent->spilled ? &parent->wide : &parent->home;
	const struct placement *from = placements_get(pl, parent->pid);
	char list[CPULIST_MAX];

	e->home = parent->home;
	e->wide = parent->wide;
	e->spilled = parent->spilled;
	e->alone.n = e->strikes = e->streak = 0;
	e->last_usec = 0;
	if (CPU_EQUAL(&p->cpus, want) || placements_pin(pl, p, want) < 0)
		return;
	placements_set_reason(pl, p, "rule %s: %s with %s[%d], which it forked from: CPUs %s", p->rule,
			      parent->spilled ? "spilled" : "back", from ? from->comm : "?", (int)parent->pid,
			      cpulist_format(want, list, sizeof(list)));
	log_debug("%s[%d]: %s", p->comm, (int)p->pid, p->reason);
}

void spills_watch(struct spills *s, struct placements *pl, const struct config *c, const struct topology *t,
		  const struct sampler_result *sample, unsigned window, uint64_t now_usec) {
	size_t kept = 0;

	s->spilled_now = 0;
	for (size_t i = 0; i < s->n; i++)
		s->v[i].seen = false;
	for (const struct placement *p = placements_next(pl, NULL); p; p = placements_next(pl, p)) {
		struct spill *e;
		if (!spilling_rule(c, p) || !(e = entry_for(s, p)))
			continue;
		e->seen = true;
		follow_rule(e, p);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct spill *e = &s->v[i];
		const struct placement *p = e->seen ? placements_get(pl, e->pid) : NULL;
		const struct spill *parent = parent_of(s, e);
		if (!p)
			continue;
		if (parent) {
			follow_parent(pl, p, e, parent);
			continue;
		}
		e->parent = 0;   /* gone: not another process that gets its pid */
		watch(s, pl, c, t, sample, p, e, window, now_usec);
	}
	/* Gone, or no longer a spilling rule's: what its rule decides now
	 * stands. */
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].seen)
			s->v[kept++] = s->v[i];
	s->n = kept;
}
