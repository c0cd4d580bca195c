#include "autoplace-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"
#include "log.h"
#include "reasons.h"
#include "util.h"

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

void autoplace_release_all(struct autoplace *a) {
	for (size_t i = 0; i < a->n_groups; i++) {
		autoplace_release(a, &a->groups[i]);
		experiment_reset(&a->groups[i].x);
	}
}

/* Frees what the policy knows; its members stay where they are, owed in
 * the ledger (autoplace_release_all() gives them back). */
void autoplace_free(struct autoplace *a) {
	if (!a)
		return;
	for (size_t i = 0; i < a->n_groups; i++)
		autoplace_group_clear(&a->groups[i]);
	free(a->groups);
	free(a->cut);
	learned_free(a->learned);
	sampler_result_free(a->sample);
	sampler_free(a->sampler);
	free(a);
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
			  g->x.guard ? ", as fast as before, where another layout ran clearly slower" : "");
	else
		log_group(g, "revert", "no layout beat its rate before (%.1f MiB/s): originals back",
			  g->x.n_trials ? g->x.trials[0].evidence.before / 1048576 : 0.0);
}

/* Whether a kept group is no longer the processes it was kept as. */
static bool members_changed(const struct autoplace_group *g) {
	return g->x.state == EXPERIMENT_KEPT && groups_signature(&g->group) != g->kept_pids;
}

/* ---- crowding ----------------------------------------------------------- */

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

	g->waited = autoplace_members_waited(a, g);
	if (!crowding_alone_add(&g->seated_alone, o->window, g->waited, g->group.cpu, &base, &need))
		return;
	if (from >= 0 && (unsigned)from < t->n_ccx && autoplace_room_of(a, t, g, &view, &others) == 0)
		ccx = room_around(&view);
	free(others);
	if (!ccx)
		return;
	bool crowded = crowding_sample(&g->strikes, g->waited, base, &ccx[from], need, &o->crowding);
	log_debug("Group %d: waited %.2f of the time (%.2f once placed), CCX %d has %.2f of %.0f CPUs free for %.2f%s",
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
		if (autoplace_seat(a, t, g, g->x.seating) >= 0 && g->ccx != from) {
			experiment_reseated(&g->x);
			snprintf(g->crowding, sizeof(g->crowding), "moved: waited %.0f %% of the time on CCX %d "
				 "(%.0f %% once placed); CCX %d had %.1f CPUs free", g->waited * 100, from, base * 100,
				 g->ccx, room);
			log_group(g, "move", "%s", g->crowding);
			a->stats.crowded_moves++;
			free(ccx);
			return;
		}
	}
	snprintf(g->crowding, sizeof(g->crowding), "waited %.0f %% of the time on CCX %d (%.0f %% once placed), "
		 "and no other CCX had %.1f CPUs free", g->waited * 100, from, base * 100, need);
	log_group(g, "release", "crowded: %s: originals back", g->crowding);
	experiment_crowded(&g->x);
	autoplace_release(a, g);
	g->ccx = -1;
	a->stats.crowded_releases++;
	free(ccx);
}

/* Carries out what g's experiment asks, until it asks nothing more; and
 * when that ends an experiment (validating: one was under way), its
 * verdict is counted, learnt and logged. */
static void carry_out_intents(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		      const struct experiment_input *in, struct experiment_intent i, bool validating) {
	while (i.action != EXPERIMENT_NOTHING) {
		int r = 0;
		if (i.action == EXPERIMENT_SEAT) {
			if (i.first) {
				g->ccx = -1;   /* chosen afresh for this experiment's first seating */
				validating = true;
			}
			r = autoplace_seat(a, t, g, i.seating);
			if (r < 0 && r != -EXFULL && r != -EPERM && r != -ENOSPC)
				log_debug_errno(r, "Placing group %d as %s failed, leaving it out: %m", (int)g->id,
						seating_to_string(i.seating));
		} else
			autoplace_release(a, g);
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
	carry_out_intents(a, t, g, &in, i, validating);
}

/* ---- the cycle ----------------------------------------------------------- */

static void dry_run(struct autoplace *a, const struct topology *t, struct autoplace_group *g,
		    const struct autoplace_options *o) {
	struct room_view v;
	struct room_group *others;
	cpu_set_t taken, *cpus = calloc(g->group.n_pids ? g->group.n_pids : 1, sizeof(*cpus));
	unsigned *threads = autoplace_room_of(a, t, g, &v, &others) < 0 ? NULL : room_threads(&v, &g->group);
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

	if (autoplace_any_ruled(a, &g->group))
		st = EXPERIMENT_BY_RULE;
	else if (groups_for_the_kernel(&g->group, t->llc_balancing))
		st = EXPERIMENT_BY_KERNEL;
	else if ((g->users = autoplace_users_of(a, g)) == GROUPS_WITH_ROOT || g->users == GROUPS_ONE_SIDED)
		st = EXPERIMENT_OTHER_USERS;
	else
		return false;
	autoplace_release(a, g);
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
	r = autoplace_build_groups(a, sample, &o, placer_largest_ccx(t), &fresh, &n);
	if (r < 0) {
		sampler_result_free(sample);
		return r;
	}
	sampler_result_free(a->sample);
	a->sample = sample;
	r = autoplace_merge_groups(a, fresh, n);
	free(fresh);
	placements_return_inherited(a->placements, autoplace_in_a_group, a);
	autoplace_drop_ended(a);

	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].seen)
			cycle_group(a, t, mode, &o, &a->groups[i], &moves);
	for (size_t i = 0; i < a->n_groups; i++)
		say_why(&a->groups[i], t, &o);
	autoplace_thin_settled(a);
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

const struct learned *autoplace_learned(const struct autoplace *a) {
	return a->learned;
}

int autoplace_forget(struct autoplace *a, const char *programs) {
	return learned_forget(a->learned, programs);
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
