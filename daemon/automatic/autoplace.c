#include "autoplace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"
#include "learned.h"
#include "log.h"
#include "cgroup.h"
#include "procfs.h"
#include "reasons.h"
#include "room.h"
#include "util.h"

/* A group unseen for this many samples has ended: its members get their
 * originals back. Short gaps (a pipeline between two files) keep it, and
 * its CCX; a group whose members have all exited has ended at once. */
#define AUTOPLACE_RELEASE_AFTER 5
/* Moves started per sample, so that a burst of new groups is seated a few at
 * a time and each experiment's window is not disturbed by all the others. */
#define AUTOPLACE_MOVES_PER_CYCLE 4


struct autoplace {
	const char *root;
	struct placements *placements;   /* the members' entries are there */
	struct sampler *sampler;
	struct group_cut *cut;     /* the last sample's processes cut off by a split */
	size_t n_cut;
	struct sampler_result *sample;
	struct autoplace_group *groups;
	size_t n_groups, allocated_groups;
	struct learned *learned;   /* what won, per set of programs */
	struct autoplace_stats stats;
};

int autoplace_new(const char *root, enum sampler_reading reading, enum sampler_counting counting,
		  struct placements *placements, struct autoplace **ret) {
	struct autoplace *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->root = root;
	a->placements = placements;
	r = learned_new(NULL, &a->learned);
	if (r >= 0)
		r = sampler_new(root, reading, counting, &a->sampler);
	if (r < 0) {
		learned_free(a->learned);
		free(a);
		return r;
	}
	*ret = a;
	return 0;
}

/* ---- members: moving and putting back ----------------------------------- */

/* A member's entry, while it is still the policy's: NULL when the process
 * is gone, or a rule or a hand took it (its placement is theirs then). */
static const struct placement *member_entry(const struct autoplace *a, const struct autoplace_member *mb) {
	const struct placement *p = placements_get(a->placements, mb->pid);

	return p && p->start_time == mb->start_time && p->owner == PLACEMENT_AUTO ? p : NULL;
}

/* Every member gets its original back, and is the policy's no more. */
static void release(struct autoplace *a, struct autoplace_group *g) {
	for (size_t i = 0; i < g->n_members; i++) {
		const struct placement *p = member_entry(a, &g->members[i]);
		if (p) {
			placements_give_back(a->placements, p);
			placements_remove(a->placements, p->pid);
		}
	}
	free(g->members);
	g->members = NULL;
	g->n_members = g->allocated_members = 0;
}

static void group_clear(struct autoplace_group *g) {
	free(g->members);
	free(g->group.pids);
	free(g->group.channels);
	free(g->programs);
}

void autoplace_release_all(struct autoplace *a) {
	for (size_t i = 0; i < a->n_groups; i++) {
		release(a, &a->groups[i]);
		experiment_reset(&a->groups[i].x);
	}
}

/* Frees what the policy knows; its members stay where they are, owed in
 * the ledger (autoplace_release_all() gives them back). */
void autoplace_free(struct autoplace *a) {
	if (!a)
		return;
	for (size_t i = 0; i < a->n_groups; i++)
		group_clear(&a->groups[i]);
	free(a->groups);
	free(a->cut);
	learned_free(a->learned);
	sampler_result_free(a->sample);
	sampler_free(a->sampler);
	free(a);
}

static bool is_member(const struct autoplace_group *g, pid_t pid) {
	for (size_t k = 0; k < g->n_members; k++)
		if (g->members[k].pid == pid)
			return true;
	return false;
}

/* Takes hold of pid for g, and what its cgroup cpuset allows it. -EPERM
 * when somebody else narrowed its affinity: such a process is not ours to
 * move. */
static const struct placement *hold(struct autoplace *a, const struct topology *t, struct autoplace_group *g, pid_t pid,
			      cpu_set_t *allowed, int *ret) {
	struct autoplace_member *grown;
	struct procfs_stat st;
	const struct placement *p;
	bool fresh;
	int r;

	r = cgroup_read_cpuset(a->root, pid, allowed);
	if (r == -ENOENT)
		*allowed = t->online;
	else if (r < 0)
		goto fail;
	CPU_AND(allowed, allowed, &t->online);
	r = procfs_read_stat(a->root, pid, &st);
	if (r < 0)
		goto fail;
	p = placements_get(a->placements, pid);
	fresh = !p || p->start_time != st.start_time;
	if (!fresh && is_member(g, pid))
		return p->owner == PLACEMENT_AUTO ? p : (*ret = -EPERM, NULL);
	p = placements_track(a->placements, &st);
	if (!p) {
		r = -ESRCH;
		goto fail;
	}
	grown = util_grow(g->members, &g->allocated_members, g->n_members + 1, sizeof(*grown));
	r = grown ? placements_claim(a->placements, p, PLACEMENT_AUTO, NULL, allowed, false, NULL) : -ENOMEM;
	if (grown)
		g->members = grown;
	if (r < 0) {
		if (r == -EPERM) {
			char list[CPULIST_MAX], cpuset[CPULIST_MAX];
			cpu_set_t mask;
			placements_original_of(p, &mask);
			log_debug("%s[%d] has CPUs %s of %s: set by somebody else, not the automatic policy's to move",
				  p->comm, (int)pid, cpulist_format(&mask, list, sizeof(list)),
				  cpulist_format(allowed, cpuset, sizeof(cpuset)));
		}
		if (fresh)
			placements_remove(a->placements, pid);
		goto fail;
	}
	g->members[g->n_members++] = (struct autoplace_member){ .pid = pid, .start_time = st.start_time };
	return p;
fail:
	*ret = r;
	return NULL;
}

/* Seats g's members: member i on cpus[i], within its cgroup cpuset. */
static int move(struct autoplace *a, const struct topology *t, struct autoplace_group *g, const cpu_set_t *cpus) {
	CPU_ZERO(&g->cpus);
	for (size_t i = 0; i < g->group.n_pids; i++) {
		pid_t pid = g->group.pids[i];
		cpu_set_t allowed, target;
		int r = 0;
		const struct placement *p = hold(a, t, g, pid, &allowed, &r);

		if (r == -ESRCH || r == -ENOENT)
			continue;   /* gone meanwhile: one member less */
		if (r < 0)
			return r;
		CPU_AND(&target, &cpus[i], &allowed);
		if (CPU_COUNT(&target) == 0)
			return -EXDEV;
		r = placements_pin(a->placements, p, &target);
		if (r < 0 && r != -ESRCH)
			return r;
		CPU_OR(&g->cpus, &g->cpus, &target);
	}
	a->stats.moves++;
	return 0;
}

/* Whether pid is one of the processes some group holds or is made of: its
 * affinity is the groups' business. */
static bool in_a_group(void *userdata, pid_t pid) {
	const struct autoplace *a = userdata;

	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *g = &a->groups[i];
		if (is_member(g, pid))
			return true;
		for (size_t k = 0; k < g->group.n_pids; k++)
			if (g->group.pids[k] == pid)
				return true;
	}
	return false;
}

/* Whether a rule or a hand placed pid: rules win. */
static bool ruled(const struct autoplace *a, pid_t pid) {
	const struct placement *p = placements_get(a->placements, pid);

	return p && p->owner != PLACEMENT_AUTO;
}

/* ---- decisions --------------------------------------------------------- */

/* The seatings to try, into order (n returned): what won for these
 * programs before, first, then the configured order. */
static size_t plan_order(const struct autoplace *a, const struct autoplace_group *g,
			 const struct autoplace_options *o, enum seating *order) {
	const enum seating *allowed = o->n_seatings ? o->seatings : seatings_default;
	size_t n_allowed = o->n_seatings ? o->n_seatings : SEATINGS_DEFAULT_N, n = 0;
	enum seating first = learned_seating(a->learned, g->programs);

	/* Several users' processes: no narrower seat than their CCX, which
	 * bounds what one user's traffic can make of another's process. */
	if (g->users == GROUPS_USERS_ANSWER) {
		order[0] = SEATING_CCX;
		return 1;
	}

	for (size_t i = 0; i < n_allowed && first != _SEATING_MAX; i++)
		if (allowed[i] == first)
			order[n++] = first;   /* only if still allowed */
	for (size_t i = 0; i < n_allowed && n < _SEATING_MAX; i++)
		if (n == 0 || allowed[i] != order[0])
			order[n++] = allowed[i];
	return n;
}

/* The probe figures a plan cites, for status. */
static void cite_probe(struct autoplace_group *g, const struct autoplace_options *o) {
	g->probe_used = o->probe != NULL;
	if (o->probe)
		g->probe = *o->probe;
}

int autoplace_set_memory(struct autoplace *a, const char *path) {
	struct learned *l;
	int r = learned_new(path, &l);

	if (r < 0)
		return r;
	learned_free(a->learned);
	a->learned = l;
	return 0;
}

/* What g's room is counted from: every group as the room sees it
 * (room_group, in *groups, to be freed). -ENOMEM without memory. */
static int room_of(const struct autoplace *a, const struct topology *t, const struct autoplace_group *g,
		   struct room_view *v, struct room_group **groups) {
	struct room_group *rg = calloc(a->n_groups ? a->n_groups : 1, sizeof(*rg));

	*groups = rg;
	if (!rg)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *o = &a->groups[i];
		enum experiment_state st = o->x.state;
		rg[i] = (struct room_group){
			.group = &o->group, .ccx = o->ccx, .cpus = o->cpus,
			.seated = st == EXPERIMENT_VALIDATING || st == EXPERIMENT_KEPT || st == EXPERIMENT_DRY_RUN,
		};
	}
	*v = (struct room_view){ t, a->sample, rg, a->n_groups, (size_t)(g - a->groups) };
	return 0;
}

/* Puts g's members in seating s on the CCX with room for it. -EXFULL when no
 * CCX has room, -ENOSPC when the CCX cannot seat them that way. */
static int seat(struct autoplace *a, const struct topology *t, struct autoplace_group *g, enum seating s) {
	struct room_view v;
	struct room_group *others;
	cpu_set_t taken, *cpus = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*cpus));
	unsigned *threads = room_of(a, t, g, &v, &others) < 0 ? NULL : room_threads(&v, &g->group);
	int r;

	if (!cpus || !threads) {
		free(cpus);
		free(threads);
		free(others);
		return -ENOMEM;
	}
	/* Every seating of an experiment goes to the CCX its first went to, so
	 * that the CCX is not measured along with the seating; unless another
	 * group took the CPUs it needs there meanwhile. */
	r = -ENOSPC;
	if (g->ccx >= 0 && (unsigned)g->ccx < t->n_ccx) {
		room_taken_on(&v, g->ccx, &taken);
		r = placer_seat(&t->ccx[g->ccx], s, g->group.n_pids, threads, &taken, cpus);
	}
	if (r == -ENOSPC) {
		g->ccx = room_choose_ccx(&v, s, threads, &taken);
		if (g->ccx < 0)
			r = -EXFULL;
		else
			r = placer_seat(&t->ccx[g->ccx], s, g->group.n_pids, threads, &taken, cpus);
	}
	free(others);
	if (r >= 0)
		r = move(a, t, g, cpus);
	free(cpus);
	free(threads);
	return r;
}

static void log_group(const struct autoplace_group *g, const char *decision, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void log_group(const struct autoplace_group *g, const char *decision, const char *fmt, ...) {
	char ccx[16], group[16], msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ccx, sizeof(ccx), "%d", g->ccx);
	snprintf(group, sizeof(group), "%d", (int)g->id);
	log_decision(LOG_INFO, &(struct log_decision){ .pid = g->id, .group = group, .ccx = ccx, .decision = decision },
		     "Group %d (%s): %s", (int)g->id, g->programs ? g->programs : "?", msg);
}

/* The end of an experiment, in the log: each seating's evidence, and the
 * verdict. */
static void log_verdict(const struct autoplace_group *g) {
	const struct experiment_trial *kept = NULL;

	for (size_t i = 0; i < g->x.n_trials; i++) {
		const struct experiment_trial *tr = &g->x.trials[i];
		log_group(g, "trial", "%s on CCX %d: %.1f -> %.1f MiB/s (%+.0f %%)%s", seating_to_string(tr->seating),
			  g->ccx, tr->evidence.before / 1048576, tr->evidence.after / 1048576, tr->evidence.gain * 100,
			  tr->beat ? ", beats the rate before" : "");
		if (tr->seating == g->x.seating)
			kept = tr;
	}
	if (g->x.state == EXPERIMENT_KEPT && kept)
		log_group(g, "keep", "kept %s on CCX %d: %.1f -> %.1f MiB/s (%+.0f %%)%s", seating_to_string(g->x.seating),
			  g->ccx, kept->evidence.before / 1048576, kept->evidence.after / 1048576,
			  kept->evidence.gain * 100,
			  g->x.guard ? ", as fast as before, where another seating ran clearly slower" : "");
	else
		log_group(g, "revert", "no seating beat its rate before (%.1f MiB/s): originals back",
			  g->x.n_trials ? g->x.trials[0].evidence.before / 1048576 : 0.0);
}

/* Whether a kept group is no longer the processes it was kept as. */
static bool members_changed(const struct autoplace_group *g) {
	return g->x.state == EXPERIMENT_KEPT && groups_signature(&g->group) != g->kept_pids;
}

/* ---- crowding ----------------------------------------------------------- */

/* The share of the time g's members wanted a CPU, since the last sample,
 * that they spent waiting for one; -1 when not known (the first reading,
 * members that changed). Each member's reading becomes its next baseline. */
static double members_waited(struct autoplace *a, struct autoplace_group *g) {
	struct waits_times before = { 0 }, now = { 0 };

	for (size_t i = 0; i < g->n_members; i++) {
		struct autoplace_member *mb = &g->members[i];
		struct waits_times w;
		bool had = mb->have_times;

		mb->have_times = member_entry(a, mb) && waits_read(a->root, mb->pid, &w) >= 0;
		if (!mb->have_times)
			continue;
		if (had) {
			before.run_ns += mb->times.run_ns;
			before.wait_ns += mb->times.wait_ns;
			now.run_ns += w.run_ns;
			now.wait_ns += w.wait_ns;
		}
		mb->times = w;
	}
	return waits_share(&before, &now);
}

/* What it does by itself in a seat is measured afresh in each. */
static void seated(struct autoplace_group *g) {
	g->seated_alone.n = 0;
	g->strikes = 0;
}

/* A kept group whose CCX grew crowded goes where there is room, with the
 * same seating, or, with none anywhere, back to its own placement. Its
 * first window samples in a seat measure how much its members wait there
 * by themselves, and the CPU they use: what it needs, which a crowded
 * group no longer gets. */
static void watch_crowding(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
			   const struct autoplace_options *o) {
	struct room_view view;
	struct room_group *others = NULL;
	struct crowding_ccx *ccx = NULL;
	int from = g->ccx, to;
	double base, need;

	g->waited = members_waited(a, g);
	if (!crowding_alone_add(&g->seated_alone, o->window, g->waited, g->group.cpu, &base, &need))
		return;
	if (from >= 0 && (unsigned)from < t->n_ccx && room_of(a, t, g, &view, &others) == 0)
		ccx = room_around(&view);
	free(others);
	if (!ccx)
		return;
	bool crowded = crowding_sample(&g->strikes, g->waited, base, &ccx[from], need, &o->crowding);
	log_debug("Group %d: waited %.2f of the time (%.2f once seated), CCX %d has %.2f of %.0f CPUs free for %.2f%s",
		  (int)g->id, g->waited, base, from, ccx[from].cpus - ccx[from].taken, ccx[from].cpus, need,
		  g->strikes ? " (crowded)" : "");
	if (!crowded) {
		free(ccx);
		return;
	}
	seated(g);
	to = crowding_target(ccx, t->n_ccx, from, need);
	if (to >= 0) {
		double room = ccx[to].cpus - ccx[to].taken;
		g->ccx = to;
		if (seat(a, t, g, g->x.seating) >= 0 && g->ccx != from) {
			experiment_reseated(&g->x);
			snprintf(g->crowding, sizeof(g->crowding), "moved: waited %.0f %% of the time on CCX %d "
				 "(%.0f %% once seated); CCX %d had %.1f CPUs free", g->waited * 100, from, base * 100,
				 g->ccx, room);
			log_group(g, "move", "%s", g->crowding);
			a->stats.crowded_moves++;
			free(ccx);
			return;
		}
	}
	snprintf(g->crowding, sizeof(g->crowding), "waited %.0f %% of the time on CCX %d (%.0f %% once seated), "
		 "and no other CCX had %.1f CPUs free", g->waited * 100, from, base * 100, need);
	log_group(g, "release", "crowded: %s: originals back", g->crowding);
	experiment_crowded(&g->x);
	release(a, g);
	g->ccx = -1;
	a->stats.crowded_releases++;
	free(ccx);
}

/* Carries out what g's experiment asks, until it asks nothing more; and
 * when that ends an experiment (validating: one was under way), its
 * verdict is counted, learnt and logged. */
static void carry_out(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		      const struct experiment_input *in, struct experiment_intent i, bool validating) {
	while (i.action != EXPERIMENT_NOTHING) {
		int r = 0;
		if (i.action == EXPERIMENT_SEAT) {
			if (i.first) {
				g->ccx = -1;   /* chosen afresh for this experiment's first seating */
				validating = true;
			}
			r = seat(a, t, g, i.seating);
			if (r < 0 && r != -EXFULL && r != -EPERM && r != -ENOSPC)
				log_debug_errno(r, "Seating group %d %s failed, leaving it out: %m", (int)g->id,
						seating_to_string(i.seating));
		} else
			release(a, g);
		i = experiment_done(&g->x, in, r);
	}
	if (!validating || g->x.state == EXPERIMENT_VALIDATING)
		return;
	if (g->x.state == EXPERIMENT_KEPT) {
		a->stats.kept++;
		g->kept_pids = groups_signature(&g->group);
		seated(g);
		if (g->programs)
			learned_keep(a->learned, g->programs, g->x.seating);
	} else if (g->x.state == EXPERIMENT_REVERTED)
		a->stats.reverted++;
	if (g->x.state == EXPERIMENT_KEPT || g->x.state == EXPERIMENT_REVERTED)
		log_verdict(g);
}

/* Whether the probe's figures say a move gains g nothing. They are pipe
 * throughput and cache-line latency, which do not tell what a pair that
 * takes turns gains on one CPU, its wake-ups: for such a pair the
 * experiment decides. */
static bool no_gain_for(const struct autoplace_group *g, const struct autoplace_options *o) {
	return o->probe && o->probe->no_gain && !g->group.turns;
}

static void step(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		 const struct autoplace_options *o, unsigned *moves) {
	enum seating plan[_SEATING_MAX];
	struct experiment_input in = {
		.rate = g->group.bytes_per_s,
		.cpu = g->group.cpu,
		.no_gain = no_gain_for(g, o),
		.may_start = *moves < AUTOPLACE_MOVES_PER_CYCLE,
		.plan = plan,
		.n_plan = plan_order(a, g, o, plan),
		.min_gain = o->min_gain,
		.window = o->window,
		.recheck_after = o->recheck_after,
		.changed = members_changed(g),
		.crowded = g->strikes > 0,
	};
	bool validating = g->x.state == EXPERIMENT_VALIDATING;
	unsigned rechecks = g->x.rechecks;
	struct experiment_intent i = experiment_sample(&g->x, &in);

	if (g->x.rechecks != rechecks) {
		a->stats.rechecks++;
		log_group(g, "recheck", "checking %s on CCX %d against its own placement again: %s",
			  seating_to_string(g->x.seating), g->ccx,
			  in.changed ? "its members changed"
			  : in.recheck_after && g->x.kept_for >= in.recheck_after ? "kept that long"
										  : "its bytes per CPU-second moved to half or double");
	}

	if (g->x.state == EXPERIMENT_NO_GAIN)
		cite_probe(g, o);
	if (i.first) {
		(*moves)++;
		cite_probe(g, o);
		g->crowding[0] = '\0';
	}
	carry_out(a, t, g, &in, i, validating);
}

/* ---- the cycle ----------------------------------------------------------- */

static struct autoplace_group *find_group(struct autoplace *a, pid_t id) {
	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].id == id)
			return &a->groups[i];
	return NULL;
}

/* The groups of sample, the pairs of those seen at the previous one
 * joined more easily (GROUPS_KEEP_FACTOR), and the processes a split left
 * alone (a->cut, for status only). */
static int build_groups(struct autoplace *a, const struct sampler_result *sample, const struct autoplace_options *o,
			double capacity, struct group **ret, size_t *n) {
	struct group *previous = calloc(a->n_groups ? a->n_groups : 1, sizeof(*previous));
	struct groups_limits limits = { .min_rate = o->min_rate, .min_message_rate = o->min_message_rate };
	int r;

	if (!previous)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].seen)
			previous[limits.n_previous++] = a->groups[i].group;   /* shallow: only read */
	limits.previous = previous;
	r = groups_build(sample, &limits, capacity, ret, n);
	free(a->cut);
	a->cut = NULL;
	a->n_cut = 0;
	if (r >= 0 && groups_cut(sample, &limits, *ret, *n, &a->cut, &a->n_cut) < 0) {
		a->cut = NULL;
		a->n_cut = 0;
	}
	free(previous);
	return r;
}

static int merge_groups(struct autoplace *a, struct group *fresh, size_t n) {
	for (size_t i = 0; i < a->n_groups; i++)
		a->groups[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct autoplace_group *g = find_group(a, fresh[i].id);
		if (!g) {
			struct autoplace_group *grown =
				util_grow(a->groups, &a->allocated_groups, a->n_groups + 1, sizeof(*grown));
			if (!grown) {
				groups_free(fresh + i, n - i);
				return -ENOMEM;
			}
			a->groups = grown;
			g = &a->groups[a->n_groups++];
			memset(g, 0, sizeof(*g));
			g->id = fresh[i].id;
			g->ccx = -1;
			g->waited = -1;
			g->x.state = EXPERIMENT_MEASURING;
			g->programs = learned_programs(a->root, &fresh[i], a->sample);
		} else {
			free(g->group.pids);
			free(g->group.channels);
		}
		g->group = fresh[i];
		g->seen = true;
		g->quiet = 0;
	}
	return 0;
}

/* Whether a group seen in this sample holds one of g's members. */
static bool taken_over(const struct autoplace *a, const struct autoplace_group *g) {
	for (size_t i = 0; i < a->n_groups; i++) {
		const struct autoplace_group *o = &a->groups[i];
		if (o == g || !o->seen)
			continue;
		for (size_t k = 0; k < g->group.n_pids; k++)
			if (bsearch(&g->group.pids[k], o->group.pids, o->group.n_pids, sizeof(pid_t), util_compare_pid))
				return true;
	}
	return false;
}

/* Whether one of g's members has not exited. */
static bool any_alive(const struct autoplace *a, const struct autoplace_group *g) {
	for (size_t k = 0; k < g->group.n_pids; k++) {
		struct procfs_stat st;
		if (procfs_read_stat(a->root, g->group.pids[k], &st) == 0 && st.state != 'Z' && st.state != 'X')
			return true;
	}
	return false;
}

/* Groups that ended: their members get their originals back. A group gone
 * quiet has ended after a few samples; one whose members now belong to
 * another group (a split along another channel, a stage that joined or
 * left) has ended at once, since a process is in one group at a time; and
 * so has one whose members all exited, so that its CCX is free for the
 * next at once. */
static void drop_ended(struct autoplace *a) {
	bool *ended = calloc(a->n_groups ? a->n_groups : 1, sizeof(*ended));
	size_t k = 0;

	for (size_t i = 0; ended && i < a->n_groups; i++)
		ended[i] = !a->groups[i].seen && (taken_over(a, &a->groups[i]) || !any_alive(a, &a->groups[i]));
	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		if ((ended && ended[i]) || (!g->seen && ++g->quiet >= AUTOPLACE_RELEASE_AFTER)) {
			release(a, g);
			group_clear(g);
			continue;
		}
		a->groups[k++] = *g;
	}
	a->n_groups = k;
	free(ended);
}

/* Kept groups that make many calls have them counted one in 16: what they
 * are kept on is settled, and a re-check (not kept while it runs) counts
 * every call again. */
static void thin_settled(struct autoplace *a) {
	pid_t *pids;
	size_t n = 0, max = 0;

	for (size_t i = 0; i < a->n_groups; i++)
		max += a->groups[i].group.n_pids;
	pids = calloc(max ? max : 1, sizeof(*pids));
	if (!pids)
		return;
	for (size_t i = 0; i < a->n_groups; i++) {
		struct autoplace_group *g = &a->groups[i];
		g->thinned = g->seen && groups_thin(&g->group, a->sample, g->x.state == EXPERIMENT_KEPT, g->thinned);
		for (size_t k = 0; g->thinned && k < g->group.n_pids; k++)
			pids[n++] = g->group.pids[k];
	}
	sampler_thin(a->sampler, pids, n);
	free(pids);
}

static bool any_ruled(const struct autoplace *a, const struct group *grp) {
	for (size_t k = 0; k < grp->n_pids; k++)
		if (ruled(a, grp->pids[k]))
			return true;
	return false;
}

/* Whose processes g holds, read now: a member whose owner cannot be read
 * (it ended) counts as a user of its own. */
static enum groups_users users_of(const struct autoplace *a, const struct autoplace_group *g) {
	uid_t *uids = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*uids));
	enum groups_users u;

	if (!uids)
		return GROUPS_ONE_SIDED;
	for (size_t k = 0; k < g->group.n_pids; k++)
		if (procfs_read_uid(a->root, g->group.pids[k], &uids[k]) < 0)
			uids[k] = (uid_t)-1;
	u = groups_users(&g->group, a->sample, uids);
	free(uids);
	return u;
}

static void dry_run(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		    const struct autoplace_options *o) {
	struct room_view v;
	struct room_group *others;
	cpu_set_t taken, *cpus = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*cpus));
	unsigned *threads = room_of(a, t, g, &v, &others) < 0 ? NULL : room_threads(&v, &g->group);
	enum seating plan[_SEATING_MAX];
	size_t n_plan = plan_order(a, g, o, plan);

	g->x.state = EXPERIMENT_NO_ROOM;
	g->ccx = cpus && threads ? room_choose_ccx(&v, n_plan ? plan[0] : SEATING_CORES, threads, &taken) : -1;
	free(others);
	CPU_ZERO(&g->cpus);
	cite_probe(g, o);
	if (no_gain_for(g, o) || g->group.bytes_per_s <= 0) {
		/* What enforce would do: not move it. */
		g->x.state = no_gain_for(g, o) ? EXPERIMENT_NO_GAIN : EXPERIMENT_NO_RATE;
		g->ccx = -1;
		free(cpus);
		free(threads);
		return;
	}
	for (size_t k = 0; g->ccx >= 0 && k < n_plan; k++) {
		if (placer_seat(&t->ccx[g->ccx], plan[k], g->group.n_pids, threads, &taken, cpus) < 0)
			continue;
		for (size_t i = 0; i < g->group.n_pids; i++)
			CPU_OR(&g->cpus, &g->cpus, &cpus[i]);
		g->x.seating = plan[k];
		g->x.state = EXPERIMENT_DRY_RUN;
		break;
	}
	free(cpus);
	free(threads);
}

/* Whether g is someone else's to place: a rule's, the kernel's, or several
 * users' that must not share a CCX with root's; then ccxd lets it go. */
static bool not_ours(struct autoplace *a, const struct topology *t, struct autoplace_group *g) {
	enum experiment_state st;

	if (any_ruled(a, &g->group))
		st = EXPERIMENT_BY_RULE;
	else if (groups_for_the_kernel(&g->group, t->llc_balancing))
		st = EXPERIMENT_BY_KERNEL;
	else if ((g->users = users_of(a, g)) == GROUPS_WITH_ROOT || g->users == GROUPS_ONE_SIDED)
		st = EXPERIMENT_OTHER_USERS;
	else
		return false;
	release(a, g);
	g->x.state = st;
	g->ccx = -1;
	return true;
}

/* One group's turn in the cycle: let go, measured, or moved and judged. */
static void cycle_group(struct autoplace *a, const struct topology *t, enum config_mode mode,
			const struct autoplace_options *o, struct autoplace_group *g, unsigned *moves) {
	if (not_ours(a, t, g))
		return;
	if (g->x.state == EXPERIMENT_BY_RULE || g->x.state == EXPERIMENT_BY_KERNEL ||
	    g->x.state == EXPERIMENT_OTHER_USERS || g->x.state == EXPERIMENT_DRY_RUN) {
		g->x.state = EXPERIMENT_MEASURING;
		g->x.n_before = 0;
	}
	/* Crowding first: a rate that fell for it is no reason for a re-check
	 * (experiment_input.crowded). */
	if (g->x.state == EXPERIMENT_KEPT && mode != CONFIG_MODE_DRY_RUN)
		watch_crowding(a, t, g, o);
	if (mode == CONFIG_MODE_DRY_RUN)
		dry_run(a, t, g, o);
	else
		step(a, t, g, o, moves);
	if (g->x.state != EXPERIMENT_KEPT) {
		g->waited = -1;
		g->strikes = 0;
	}
}

/* g's state in words, for status and the journal. */
static void say_why(struct autoplace_group *g, const struct topology *t, const struct autoplace_options *o) {
	struct reasons_group words = { .x = &g->x, .seen = g->seen, .quiet = g->quiet, .ccx = g->ccx,
				       .demand = g->group.demand,
				       .crowding = g->crowding[0] ? g->crowding : NULL, .users = g->users };

	reasons_of_group(&words, placer_largest_ccx(t), o->window, AUTOPLACE_RELEASE_AFTER, g->reason,
			 sizeof(g->reason));
}

int autoplace_cycle(struct autoplace *a, const struct topology *t, enum config_mode mode,
		    const struct autoplace_options *options, uint64_t now_usec) {
	struct autoplace_options o = *options;
	uint64_t started = util_usec(CLOCK_PROCESS_CPUTIME_ID);
	struct sampler_result *sample;
	struct group *fresh;
	unsigned moves = 0;
	size_t n;
	int r;

	if (o.window < 1)
		o.window = 1;
	if (o.window > VALIDATOR_WINDOW_MAX)
		o.window = VALIDATOR_WINDOW_MAX;
	r = sampler_sample(a->sampler, now_usec, &sample);
	if (r < 0)
		return r;
	r = build_groups(a, sample, &o, placer_largest_ccx(t), &fresh, &n);
	if (r < 0) {
		sampler_result_free(sample);
		return r;
	}
	sampler_result_free(a->sample);
	a->sample = sample;
	r = merge_groups(a, fresh, n);
	free(fresh);
	placements_return_inherited(a->placements, in_a_group, a);
	drop_ended(a);

	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].seen)
			cycle_group(a, t, mode, &o, &a->groups[i], &moves);
	for (size_t i = 0; i < a->n_groups; i++)
		say_why(&a->groups[i], t, &o);
	thin_settled(a);
	a->stats.cycles++;
	a->stats.last_scanned = sample->n_scanned;
	a->stats.last_active = sample->n_procs;
	a->stats.last_cycle_usec = util_usec(CLOCK_PROCESS_CPUTIME_ID) - started;
	return r;
}

const struct autoplace_group *autoplace_groups(const struct autoplace *a, size_t *n) {
	*n = a->n_groups;
	return a->groups;
}

const struct sampler_result *autoplace_sample(const struct autoplace *a) {
	return a->sample;
}

const struct group_cut *autoplace_cut(const struct autoplace *a, size_t *n) {
	*n = a->n_cut;
	return a->cut;
}

struct autoplace_stats autoplace_stats(const struct autoplace *a) {
	struct autoplace_stats st = a->stats;

	st.source = sampler_source(a->sampler);
	st.reading = sampler_reading(a->sampler);
	st.note = sampler_note(a->sampler);
	st.counted = sampler_counted(a->sampler);
	st.counted_note = sampler_counted_note(a->sampler);
	st.last_counting_usec = sampler_counting_usec(a->sampler);
	st.last_counts_lost = sampler_counts_lost(a->sampler);
	return st;
}
