/* The snapshot that status.h describes, made from the live parts: the one
 * file that reads the table of placements and the automatic policy for a
 * report, so that those who report read plain data only. */
#include "status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoplace.h"
#include "learned.h"
#include "placements.h"
#include "placer.h"
#include "ruler.h"
#include "sampler.h"
#include "seatings.h"

/* An entry of the table, as status and the replies to pin and unpin show it. */
void status_process_of(const struct topology *t, const struct placement *p, struct status_process *ret) {
	unsigned idx[CPU_SETSIZE];
	size_t n = placer_ccxs_of(t, &p->cpus, idx, CPU_SETSIZE);

	*ret = (struct status_process){
		.pid = p->pid,
		.comm = p->comm,
		.state = placement_state_to_string(p->state),
		.placed = p->state == PLACEMENT_PINNED || p->state == PLACEMENT_DRY_RUN,
		.cpus = p->cpus,
		.rule = p->rule,
		.reason = p->reason,
		.have_original = p->have_original,
		.original = p->original,
		.inherited_from = p->inherited_from,
	};
	/* A CPU set holds any set of small numbers: these are CCXs'. */
	CPU_ZERO(&ret->ccxs);
	for (size_t i = 0; i < n; i++)
		CPU_SET(idx[i], &ret->ccxs);
}

_Static_assert(_SEATING_MAX == STATUS_SEATINGS, "status.h names every seating");
_Static_assert(sizeof(((struct seatings_ranking *)0)->date) == sizeof(((struct status_ranking *)0)->date) &&
	       sizeof(((struct seatings_ranking *)0)->note) == sizeof(((struct status_ranking *)0)->note),
	       "a ranking's words fit the status whole");

static struct status_figure status_figure_of(const struct seatings_figure *f, const char *seating) {
	return (struct status_figure){
		.seating = seating,
		.measured = f->measured,
		.relation = f->measured ? probe_relation_name(f->relation) : NULL,
		.gib_s = f->gib_s,
		.min = f->min,
		.max = f->max,
	};
}

void status_ranking_of(const struct seatings_ranking *r, struct status_ranking *ret) {
	*ret = (struct status_ranking){
		.n_order = r->n_order,
		.apart = status_figure_of(&r->apart, NULL),
		.no_gain = r->no_gain,
	};
	for (size_t i = 0; i < r->n_order; i++)
		ret->order[i] = seating_to_string(r->order[i]);
	for (int s = 0; s < _SEATING_MAX; s++)
		if (r->seating[s].measured)
			ret->seatings[ret->n_seatings++] = status_figure_of(&r->seating[s], seating_to_string(s));
	snprintf(ret->date, sizeof(ret->date), "%s", r->date);
	snprintf(ret->note, sizeof(ret->note), "%s", r->note);
}

static void status_group_of(const struct autoplace_group *g, struct status_group *ret) {
	const struct experiment *x = &g->x;

	*ret = (struct status_group){
		.id = g->id,
		.pids = g->group.pids,
		.n_pids = g->group.n_pids,
		.channels = g->group.channels,
		.n_channels = g->group.n_channels,
		.programs = g->programs,
		.users = groups_users_to_string(g->users),
		.state = experiment_state_to_string(x->state),
		.reason = g->reason,
		.seen = g->seen,
		.placed = x->state == EXPERIMENT_VALIDATING || x->state == EXPERIMENT_KEPT ||
			  x->state == EXPERIMENT_DRY_RUN,
		.ccx = g->ccx,
		.cpus = g->cpus,
		.seating = seating_to_string(x->seating),
		.guard = x->state == EXPERIMENT_KEPT && x->guard,
		.bytes_per_s = g->group.bytes_per_s,
		.cpu = g->group.cpu,
		.demand = g->group.demand,
		.split = g->group.split,
		.turns = g->group.turns,
		.thinned = g->thinned,
		.waited = g->waited,
		.waited_seated = x->state == EXPERIMENT_KEPT && g->seated_alone.n ?
					 validator_median(g->seated_alone.waits, g->seated_alone.n) : -1,
		.kept_bytes_per_cpu_s = x->state == EXPERIMENT_KEPT ? x->kept_yield : 0,
		.n_trials = x->n_trials,
		.last = (long)x->n_trials - 1,
		.probe_used = g->probe_used,
	};
	for (size_t k = 0; k < x->n_trials; k++) {
		const struct experiment_trial *t = &x->trials[k];
		ret->trials[k] = (struct status_trial){
			.seating = seating_to_string(t->seating),
			.before = t->evidence.before,
			.after = t->evidence.after,
			.gain = t->evidence.gain,
			.noise = t->evidence.noise,
			.beat = t->beat,
		};
		/* A kept group's evidence is that of the seating it kept. */
		if (x->state == EXPERIMENT_KEPT && (t->beat || x->guard) && t->seating == x->seating)
			ret->last = (long)k;
	}
	if (g->probe_used)
		status_ranking_of(&g->probe, &ret->probe);
}

/* Every name that name() knows, in order: states are numbered from 0, and
 * it names any other number "unknown". */
static size_t status_state_names(const char *(*name)(int), const char **ret) {
	size_t n = 0;

	while (n < STATUS_STATES_MAX && strcmp(name((int)n), "unknown") != 0) {
		ret[n] = name((int)n);
		n++;
	}
	return n;
}

static const char *process_state_name(int s) {
	return placement_state_to_string((enum placement_state)s);
}

static const char *group_state_name(int s) {
	return experiment_state_to_string((enum experiment_state)s);
}

void status_states(struct ccxd_status *st) {
	st->n_process_states = status_state_names(process_state_name, st->process_states);
	st->n_group_states = status_state_names(group_state_name, st->group_states);
}

static int compare_process(const void *a, const void *b) {
	pid_t x = ((const struct status_process *)a)->pid, y = ((const struct status_process *)b)->pid;

	return (x > y) - (x < y);
}

int status_processes(const struct placements *pl, const struct topology *t, struct ccxd_status *st) {
	struct placements_stats ps = placements_stats(pl);

	st->placements.pins = ps.pins;
	st->placements.restores = ps.restores;
	st->placements.pin_failures = ps.pin_failures;
	st->placements.readopted = ps.readopted;
	st->processes = malloc((placements_count(pl) + 1) * sizeof(*st->processes));
	if (!st->processes)
		return -ENOMEM;
	for (const struct placement *p = placements_next(pl, NULL); p; p = placements_next(pl, p))
		if (ruler_owns(p))
			status_process_of(t, p, &st->processes[st->n_processes++]);
	qsort(st->processes, st->n_processes, sizeof(*st->processes), compare_process);
	return 0;
}

/* Each CCX's load at the last sample, as /proc/stat tells it (everything on
 * it, ccxd's groups included), where it tells of these CPUs. */
static int status_ccx_load(const struct topology *t, const struct sampler_result *sample, double **ret) {
	*ret = NULL;
	if (!sample || sample->n_cpu_load == 0 || (t->source && strncmp(t->source, "xml:", 4) == 0))
		return 0;
	*ret = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	placer_ccx_load(t, sample->cpu_load, sample->n_cpu_load, *ret);
	return 0;
}

int status_sampling(const struct autoplace *a, const struct topology *t, struct ccxd_status *st) {
	struct autoplace_stats as = autoplace_stats(a);
	const struct autoplace_group *groups = autoplace_groups(a, &st->n_groups);
	const struct group_cut *cut = autoplace_cut(a, &st->n_cut);

	st->have_sampling = true;
	st->sampling = (struct status_sampling){
		.source = as.source,
		.reading = sampler_reading_to_string(as.reading),
		.note = as.note,
		.counted = as.counted,
		.counted_note = as.counted_note,
		.cycles = as.cycles,
		.last_cycle_usec = as.last_cycle_usec,
		.last_counting_usec = as.last_counting_usec,
		.last_counts_lost = as.last_counts_lost,
		.last_scanned = as.last_scanned,
		.last_active = as.last_active,
		.moves = as.moves,
		.kept = as.kept,
		.reverted = as.reverted,
		.crowded_moves = as.crowded_moves,
		.crowded_releases = as.crowded_releases,
		.rechecks = as.rechecks,
	};
	st->sample = autoplace_sample(a);
	st->groups = calloc(st->n_groups ? st->n_groups : 1, sizeof(*st->groups));
	st->cut = calloc(st->n_cut ? st->n_cut : 1, sizeof(*st->cut));
	if (!st->groups || !st->cut)
		return -ENOMEM;
	for (size_t i = 0; i < st->n_groups; i++)
		status_group_of(&groups[i], &st->groups[i]);
	for (size_t i = 0; i < st->n_cut; i++)
		st->cut[i] = (struct status_cut){ cut[i].pid, cut[i].component, cut[i].demand };
	return status_ccx_load(t, st->sample, &st->ccx_load);
}

void status_program_names(const char *programs, char *buf, size_t size) {
	size_t len = 0;

	buf[0] = '\0';
	for (const char *p = programs; p && *p && len + 1 < size;) {
		const char *end = strchrnul(p, '|'), *slash = memrchr(p, '/', (size_t)(end - p));

		if (slash)
			p = slash + 1;
		len += (size_t)snprintf(buf + len, size - len, "%s%.*s", len ? "|" : "", (int)(end - p), p);
		p = *end ? end + 1 : end;
	}
}

int status_learned(const struct autoplace *a, struct ccxd_status *st) {
	const struct learned *l = autoplace_learned(a);

	st->n_learned = learned_count(l);
	st->learned = calloc(st->n_learned ? st->n_learned : 1, sizeof(*st->learned));
	if (!st->learned)
		return -ENOMEM;
	for (size_t i = 0; i < st->n_learned; i++) {
		enum seating seating;
		st->learned[i].programs = learned_entry(l, i, &seating);
		st->learned[i].seating = seating_to_string(seating);
	}
	return 0;
}

void status_release(struct ccxd_status *st) {
	free(st->processes);
	free(st->learned);
	st->learned = NULL;
	free(st->groups);
	free(st->cut);
	free(st->ccx_load);
	json_object_put(st->probe);
	st->processes = NULL;
	st->groups = NULL;
	st->cut = NULL;
	st->ccx_load = NULL;
	st->probe = NULL;
}
